/* The JIT front door: spec -> CUfunction. An in-process table of loaded
 * modules (a kernel is compiled and loaded at most once per context), behind
 * it the disk cache, behind that NVRTC. */
#ifndef LR_JIT_H
#define LR_JIT_H
#include "jit/cache.h"
#include "jit/key.h"
#include "jit/spec.h"
#include "rt/cu.h"

#include <stdint.h>

typedef struct lr_jit_stats {
    uint64_t mem_hits;    /* found loaded in this process */
    uint64_t disk_hits;   /* cubin read from the disk cache */
    uint64_t compiles;    /* NVRTC runs */
    uint64_t loads;       /* cuModuleLoadData calls */
    double compile_ms, load_ms;
} lr_jit_stats;

/* Optional: pick the cache folder before first use (NULL = default). */
void lr_jit_set_cache_dir(const char *dir);
lr_cache *lr_jit_cache(void);

/* The key of spec for (arch, driver_version); needs NVRTC or a manifest in
 * the cache folder naming the NVRTC version the cache was warmed with. */
int lr_jit_key(const lr_jit_spec *s, const char *arch, int driver_version, lr_key *key);
/* Cubin for spec on arch, from the disk cache or compiled (and stored). No
 * GPU needed. *hit says which. */
int lr_jit_cubin(const lr_jit_spec *s, const char *arch, int driver_version, void **cubin, size_t *n, int *hit);
/* Loaded function on the current device (spec->arch or the device's). */
int lr_jit_get(const lr_jit_spec *s, CUfunction *f);

/* The spec a loaded function was asked for (its strings live until
 * lr_jit_unload_all) and its module; an error for a function the JIT did
 * not load or one compiled with NVRTC options. */
int lr_jit_lookup(CUfunction f, lr_jit_spec *spec, CUmodule *mod);

void lr_jit_stats_get(lr_jit_stats *st);
/* Drops every loaded module (tests; before the context goes away). */
void lr_jit_unload_all(void);

#endif
