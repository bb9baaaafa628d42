/* The on-disk cubin cache: one file per key, <dir>/<hex key>.cubin, with a
 * header (magic, format version, key, payload length, XXH3-64 of payload).
 * Readers take no lock; writers write a temp file in the same folder and
 * rename, so two processes compiling the same kernel both end with a whole
 * file. A torn, corrupted or foreign file is a miss: removed, recompiled. */
#ifndef LR_JIT_CACHE_H
#define LR_JIT_CACHE_H
#include "jit/key.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define LR_CACHE_MAGIC "LRCUBIN\0"
#define LR_CACHE_HEADER 48

typedef struct lr_cache {
    char dir[4096];
    int disabled;           /* folder missing/unwritable: compile in memory */
    int readonly;           /* readable but not writable */
    uint64_t max_bytes;     /* LRU trim cap (LEECHRT_CACHE_MAX_MB, default 2048) */
    int capped;             /* lr_cache_cap has run since the open */
} lr_cache;

/* dir NULL: $LEECHRT_CACHE_DIR, else ~/.cache/leechrt. Never fails: an
 * unusable folder disables the disk cache with one warning. */
void lr_cache_open(lr_cache *c, const char *dir);
/* LR_OK and a malloc'd payload on a hit; LR_EIO (no message needed) on a miss. */
int lr_cache_get(const lr_cache *c, const lr_key *k, void **payload, size_t *n);
int lr_cache_put(const lr_cache *c, const lr_key *k, const void *payload, size_t n);
/* Removes least-recently-used files until the total is <= max_bytes. */
int lr_cache_trim(const lr_cache *c, uint64_t max_bytes, int *removed);
/* Trims to c->max_bytes the first time it is called after the open (the JIT
 * calls it after a process's first new entry: one folder scan per process,
 * so a cache that only grows stays under its cap); later calls do nothing. */
int lr_cache_cap(lr_cache *c, int *removed);

typedef struct lr_cache_entry {
    char name[64];
    uint64_t bytes;
    int64_t mtime;
    int valid;      /* header and payload hash check out */
} lr_cache_entry;
/* Lists entries (malloc'd array). */
int lr_cache_list(const lr_cache *c, lr_cache_entry **out, int *n);
int lr_cache_clear(const lr_cache *c, int *removed);
/* Checks one file; LR_OK if valid. */
int lr_cache_check_file(const char *path, const lr_key *expect);
/* Opens path for reading when it is a regular file, without waiting on a FIFO;
 * NULL otherwise (errno EINVAL: something else than a file is there). *size
 * (may be NULL) gets the file's size. */
FILE *lr_cache_fopen_regular(const char *path, long long *size);
/* Reads one file checked as lr_cache_get checks it (magic, format version,
 * the key expect when not NULL, length, hash), never removing or touching
 * it: LR_OK and a malloc'd payload, else LR_EIO (cannot open), LR_EINVAL (not a
 * regular file), LR_ENOMEM or
 * LR_EFORMAT, with no message. For tools that read a cache folder they must
 * not change (tools/build/embed_cache.c). */
int lr_cache_read_file(const char *path, const lr_key *expect, void **payload, size_t *n);

#endif
