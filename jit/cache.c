#include "jit/cache.h"
#include "util/err.h"
#include "util/setting.h"
#include "util/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

static int mkdir_p(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
    return 0;
}

void lr_cache_open(lr_cache *c, const char *dir)
{
    memset(c, 0, sizeof *c);
    const char *env = getenv("LEECHRT_CACHE_DIR");
    const char *home = getenv("HOME");
    if (dir && *dir) snprintf(c->dir, sizeof c->dir, "%s", dir);
    else if (env && *env) snprintf(c->dir, sizeof c->dir, "%s", env);
    else snprintf(c->dir, sizeof c->dir, "%s/.cache/leechrt", home && *home ? home : "/tmp");
    /* the LRU cap in MB; garbage is not fatal for a cache: warn, keep the default */
    const char *mb = getenv("LEECHRT_CACHE_MAX_MB");
    int cap = 2048;
    if (mb && *mb && lr_setting_int("LEECHRT_CACHE_MAX_MB", mb, 1, 1 << 30, &cap)) {
        lr_warn("%s: the cubin cache keeps its default cap, 2048 MB", lr_errmsg());
        lr_clear_error();
        cap = 2048;
    }
    c->max_bytes = (uint64_t)cap << 20;
    struct stat st;
    if (stat(c->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        lr_warn("cubin cache %s is not a folder: compiling in memory", c->dir);
        c->disabled = 1;
        return;
    }
    if (mkdir_p(c->dir) != 0 && access(c->dir, R_OK) != 0) {
        lr_warn("cubin cache %s unusable (%s): compiling in memory", c->dir, strerror(errno));
        c->disabled = 1;
        return;
    }
    if (access(c->dir, W_OK | X_OK) != 0) {
        lr_warn("cubin cache %s is read-only: new kernels are compiled in memory", c->dir);
        c->readonly = 1;
    }
}

static void path_of(const lr_cache *c, const lr_key *k, char *out, size_t n)
{
    char hex[33];
    lr_key_hex(k, hex);
    snprintf(out, n, "%s/%s.cubin", c->dir, hex);
}

static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get_u32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get_u64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

FILE *lr_cache_fopen_regular(const char *path, long long *size)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fcntl(fd, F_SETFL, 0) == 0) f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    if (size) *size = (long long)st.st_size;
    return f;
}

/* Reads and validates; on success *payload is malloc'd. LR_EIO: no such file;
 * LR_EINVAL: something else than a file is there; LR_EFORMAT: not a valid
 * entry. */
static int read_entry(const char *path, const lr_key *expect, void **payload, size_t *n)
{
    *payload = NULL;
    *n = 0;
    long long size;
    FILE *f = lr_cache_fopen_regular(path, &size);
    if (!f) return errno == EINVAL ? LR_EINVAL : LR_EIO;
    uint8_t h[LR_CACHE_HEADER];
    int rc = LR_EFORMAT;
    if (fread(h, 1, sizeof h, f) != sizeof h) goto out;
    if (memcmp(h, LR_CACHE_MAGIC, 8) || get_u32(h + 8) != LR_CACHE_FORMAT_VERSION) goto out;
    if (expect && memcmp(h + 16, expect->b, 16)) goto out;
    uint64_t len = get_u64(h + 32);
    /* the header's length must be the file's: no allocation a short file cannot fill */
    if (len == 0 || len > (1u << 30) || (long long)len != size - LR_CACHE_HEADER) goto out;
    uint8_t *buf = malloc(len);
    if (!buf) { rc = LR_ENOMEM; goto out; }
    if (fread(buf, 1, len, f) != len || fgetc(f) != EOF || XXH3_64bits(buf, len) != get_u64(h + 40)) {
        free(buf);
        goto out;
    }
    *payload = buf;
    *n = len;
    rc = LR_OK;
out:
    fclose(f);
    return rc;
}

int lr_cache_read_file(const char *path, const lr_key *expect, void **payload, size_t *n)
{
    return read_entry(path, expect, payload, n);
}

int lr_cache_check_file(const char *path, const lr_key *expect)
{
    void *p;
    size_t n;
    int rc = read_entry(path, expect, &p, &n);
    free(p);
    return rc;
}

int lr_cache_get(const lr_cache *c, const lr_key *k, void **payload, size_t *n)
{
    *payload = NULL;
    if (c->disabled) return LR_EIO;
    char path[4200];
    path_of(c, k, path, sizeof path);
    int rc = read_entry(path, k, payload, n);
    if (rc == LR_EINVAL) {
        lr_warn("%s is not a file; the kernel is compiled instead", path);
        return LR_EIO;
    }
    if (rc == LR_EFORMAT && !c->readonly) {
        lr_warn("removing corrupt cache file %s", path);
        unlink(path);
    }
    if (rc == LR_OK && !c->readonly) utimensat(AT_FDCWD, path, NULL, 0); /* LRU: bump mtime on hit */
    return rc;
}

int lr_cache_put(const lr_cache *c, const lr_key *k, const void *payload, size_t n)
{
    if (c->disabled || c->readonly) return LR_OK;
    char path[4200], tmp[4300];
    path_of(c, k, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) return LR_FAIL(LR_EIO, "%s: %s", tmp, strerror(errno));
    uint8_t h[LR_CACHE_HEADER] = { 0 };
    memcpy(h, LR_CACHE_MAGIC, 8);
    put_u32(h + 8, LR_CACHE_FORMAT_VERSION);
    memcpy(h + 16, k->b, 16);
    put_u64(h + 32, n);
    put_u64(h + 40, XXH3_64bits(payload, n));
    int ok = write(fd, h, sizeof h) == (ssize_t)sizeof h && write(fd, payload, n) == (ssize_t)n;
    fchmod(fd, 0644);
    if (close(fd) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return LR_FAIL(LR_EIO, "cannot write cache file %s: %s", path, strerror(e));
    }
    return LR_OK;
}

static int is_entry_name(const char *n)
{
    size_t l = strlen(n);
    return l == 38 && !strcmp(n + 32, ".cubin");
}

/* A writer's temp file ("<entry>.tmp.XXXXXX", "nvrtc-version.tmp.<pid>")
 * left by a process that died before its rename: never renamed, never
 * counted, never removed otherwise. One an hour old has no live writer. */
static void sweep_if_stale_tmp(const lr_cache *c, const char *name, time_t now)
{
    const char *t = strstr(name, ".tmp.");
    if (!t) return;
    char base[256];
    snprintf(base, sizeof base, "%.*s", (int)(t - name), name);
    if (!is_entry_name(base) && strcmp(base, "nvrtc-version")) return;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > 3600) unlink(path);
}

/* The entries' names, sizes and times; with check, also whether each file
 * checks out (reads it whole); with sweep, stale temp files are removed on
 * the way (one pass over the folder: the trim once listed it twice, once to
 * sweep and once for the entries). */
static int scan(const lr_cache *c, int check, int sweep, lr_cache_entry **out, int *count)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(c->dir);
    if (!d) return LR_FAIL(LR_EIO, "%s: %s", c->dir, strerror(errno));
    const time_t now = time(NULL);
    int cap = 64, n = 0;
    lr_cache_entry *v = malloc(sizeof *v * (size_t)cap);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        if (!is_entry_name(e->d_name)) {
            if (sweep) sweep_if_stale_tmp(c, e->d_name, now);
            continue;
        }
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", c->dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (n == cap) {
            lr_cache_entry *nv = realloc(v, sizeof *v * (size_t)(cap *= 2));
            if (!nv) break;
            v = nv;
        }
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        v[n].bytes = (uint64_t)st.st_size;
        v[n].mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        lr_key k;
        v[n].valid = !check || (lr_key_parse(e->d_name, &k) == 0 && lr_cache_check_file(path, &k) == LR_OK);
        n++;
    }
    closedir(d);
    if (!v) return LR_FAIL(LR_ENOMEM, "out of memory");
    *out = v;
    *count = n;
    return LR_OK;
}

int lr_cache_list(const lr_cache *c, lr_cache_entry **out, int *count) { return scan(c, 1, 0, out, count); }

static int by_mtime(const void *a, const void *b)
{
    int64_t x = ((const lr_cache_entry *)a)->mtime, y = ((const lr_cache_entry *)b)->mtime;
    return (x > y) - (x < y);
}

int lr_cache_trim(const lr_cache *c, uint64_t max_bytes, int *removed)
{
    lr_cache_entry *v;
    int n, rm = 0;
    int rc = scan(c, 0, 1, &v, &n); /* (the order needs no file read) */
    if (rc) return rc;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += v[i].bytes;
    qsort(v, (size_t)n, sizeof *v, by_mtime);
    for (int i = 0; i < n && total > max_bytes; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", c->dir, v[i].name);
        if (unlink(path) == 0) {
            total -= v[i].bytes;
            rm++;
        }
    }
    free(v);
    if (removed) *removed = rm;
    return LR_OK;
}

int lr_cache_cap(lr_cache *c, int *removed)
{
    if (removed) *removed = 0;
    if (c->capped || c->disabled || c->readonly) return LR_OK;
    c->capped = 1;
    return lr_cache_trim(c, c->max_bytes, removed);
}

int lr_cache_clear(const lr_cache *c, int *removed)
{
    return lr_cache_trim(c, 0, removed);
}
