#include "jit/jit.h"
#include "jit/embedded.h"
#include "jit/nvrtc.h"
#include "jit/timeline.h"
#include "util/err.h"
#include "util/progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static lr_cache g_cache;
static int g_cache_open;
static char g_cache_dir[4096];
static lr_jit_stats g_stats;

/* spec: how it was asked for, its strings the entry's own (lr_jit_lookup) */
typedef struct { lr_key key; CUmodule mod; CUfunction fn; lr_jit_spec spec; } loaded;
static loaded *g_loaded;
static int g_nloaded, g_caploaded;

void lr_jit_set_cache_dir(const char *dir)
{
    pthread_mutex_lock(&g_lock);
    snprintf(g_cache_dir, sizeof g_cache_dir, "%s", dir ? dir : "");
    g_cache_open = 0;
    pthread_mutex_unlock(&g_lock);
}

static lr_cache *cache_locked(void)
{
    if (!g_cache_open) {
        lr_cache_open(&g_cache, g_cache_dir[0] ? g_cache_dir : NULL);
        g_cache_open = 1;
    }
    return &g_cache;
}

lr_cache *lr_jit_cache(void)
{
    pthread_mutex_lock(&g_lock);
    lr_cache *c = cache_locked();
    pthread_mutex_unlock(&g_lock);
    return c;
}

/* The NVRTC version is part of every key. Without NVRTC (an appliance with a
 * pre-warmed cache) it comes from the manifest the warming process wrote. */
static int nvrtc_version_for_key(lr_nvrtc_version *v)
{
    lr_cache *c = lr_jit_cache();
    char path[4200];
    snprintf(path, sizeof path, "%s/nvrtc-version", c->dir);
    if (lr_nvrtc_available()) {
        int rc = lr_nvrtc_version_get(v);
        if (rc) return rc;
        if (!c->disabled && !c->readonly) {
            FILE *f = lr_cache_fopen_regular(path, NULL);
            lr_nvrtc_version old = { 0, 0, 0 };
            int have = f && fscanf(f, "%d.%d.%d", &old.major, &old.minor, &old.build) == 3;
            if (f) fclose(f);
            if (!have || memcmp(&old, v, sizeof old)) {
                char buf[64];
                int n = snprintf(buf, sizeof buf, "%d.%d.%d\n", v->major, v->minor, v->build);
                char tmp[4300];
                snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
                FILE *w = fopen(tmp, "w");
                if (w && fwrite(buf, 1, (size_t)n, w) == (size_t)n && fclose(w) == 0) rename(tmp, path);
                else { if (w) fclose(w); remove(tmp); }
            }
        }
        return LR_OK;
    }
    /* cubins compiled into the binary carry their NVRTC version */
    if (lr_embedded_cubin_count > 0 &&
        sscanf(lr_embedded_nvrtc_version, "%d.%d.%d", &v->major, &v->minor, &v->build) == 3)
        return LR_OK;
    FILE *f = lr_cache_fopen_regular(path, NULL);
    int ok = f && fscanf(f, "%d.%d.%d", &v->major, &v->minor, &v->build) == 3;
    if (f) fclose(f);
    if (!ok) return LR_FAIL(LR_ENVRTC, "NVRTC is not available and the cache %s was not warmed (no nvrtc-version)", c->dir);
    return LR_OK;
}

static int headers(const char **hv, int max)
{
    int n = 0;
    for (int i = 0; i < lr_template_count() && 2 * n + 1 < max; i++) {
        const char *nm = lr_template_name(i);
        size_t l = strlen(nm);
        if (l > 4 && !strcmp(nm + l - 4, ".cuh")) {
            hv[2 * n] = nm;
            hv[2 * n + 1] = lr_template_get(nm, NULL);
            n++;
        }
    }
    return n;
}

/* the key under NVRTC version v */
static void key_with(const lr_jit_spec *s, const char *src, const char *arch, int drv, const lr_nvrtc_version *v,
                     lr_key *key)
{
    const char *hv[128], *opts[LR_JIT_MAX_OPTS + 8];
    char archbuf[64];
    int nh = headers(hv, 128);
    int no = lr_nvrtc_base_options(arch, opts, 8, archbuf, sizeof archbuf);
    for (int i = 0; i < s->nopts; i++) opts[no++] = s->opts[i];
    lr_key_inputs in = { src, hv, nh, opts, no, v->major, v->minor, v->build, arch, drv };
    *key = lr_key_compute(&in);
}

static int key_of(const lr_jit_spec *s, const char *src, const char *arch, int drv, lr_key *key)
{
    lr_nvrtc_version v;
    int rc = nvrtc_version_for_key(&v);
    if (rc) return rc;
    key_with(s, src, arch, drv, &v, key);
    return LR_OK;
}

/* The cubin compiled into the binary for this spec, under the NVRTC version
 * that compiled the table (not the host's: an appliance on a host whose NVRTC
 * is another version, or broken, still runs its own kernels). 1 when found.
 * *tv gets the table's version (major 0: no table) and *key the key under it,
 * so a miss on a host of the same version need not hash the sources again. */
static int embedded_cubin(const lr_jit_spec *s, const char *src, const char *arch, int drv, lr_nvrtc_version *tv,
                          lr_key *key, void **cubin, size_t *n)
{
    lr_nvrtc_version v;
    memset(tv, 0, sizeof *tv);
    if (lr_embedded_cubin_count <= 0 ||
        sscanf(lr_embedded_nvrtc_version, "%d.%d.%d", &v.major, &v.minor, &v.build) != 3)
        return 0;
    lr_key k;
    key_with(s, src, arch, drv, &v, &k);
    *tv = v, *key = k;
    for (int i = 0; i < lr_embedded_cubin_count; i++)
        if (!memcmp(lr_embedded_cubin_table[i].key, k.b, 16)) {
            const lr_embedded_cubin *e = &lr_embedded_cubin_table[i];
            if (!(*cubin = malloc(e->len))) return -1;
            memcpy(*cubin, e->data, e->len); /* the cache entry's payload: the cubin */
            *n = e->len;
            *key = k;
            return 1;
        }
    return 0;
}

int lr_jit_key(const lr_jit_spec *s, const char *arch, int drv, lr_key *key)
{
    char *src;
    int rc = lr_jit_source(s, &src);
    if (rc) return rc;
    rc = key_of(s, src, arch, drv, key);
    free(src);
    return rc;
}

static int cubin_for(const lr_jit_spec *s, const char *arch, int drv, lr_key *key, void **cubin, size_t *n, int *hit)
{
    char *src, name[1024];
    int rc = lr_jit_source(s, &src);
    if (rc) return rc;
    if ((rc = lr_jit_kernel_name(s, name, sizeof name))) {
        free(src);
        return rc;
    }
    lr_nvrtc_version tv, hv;
    const int emb = embedded_cubin(s, src, arch, drv, &tv, key, cubin, n);
    if (emb) {
        free(src);
        if (emb < 0) return LR_FAIL(LR_ENOMEM, "out of memory");
        if (hit) *hit = 1;
        __atomic_add_fetch(&g_stats.disk_hits, 1, __ATOMIC_RELAXED);
        return LR_OK;
    }
    /* the key under the host's version: the table's key when the versions agree */
    if ((rc = nvrtc_version_for_key(&hv))) {
        free(src);
        return rc;
    }
    if (!tv.major || memcmp(&tv, &hv, sizeof hv)) key_with(s, src, arch, drv, &hv, key);
    lr_cache *c = lr_jit_cache();
    if (lr_cache_get(c, key, cubin, n) == LR_OK) {
        free(src);
        if (hit) *hit = 1;
        __atomic_add_fetch(&g_stats.disk_hits, 1, __ATOMIC_RELAXED);
        return LR_OK;
    }
    if (hit) *hit = 0;
    double t0 = lr_now();
    rc = lr_nvrtc_compile(s->tmpl, src, arch, s->opts, s->nopts, cubin, n);
    free(src);
    if (rc) return lr_wrap(rc, "compiling %s", name);
    pthread_mutex_lock(&g_lock);
    g_stats.compiles++;
    g_stats.compile_ms += 1e3 * (lr_now() - t0);
    pthread_mutex_unlock(&g_lock);
    if (lr_cache_put(c, key, *cubin, *n) != LR_OK) lr_clear_error(); /* a cache we cannot write is not fatal */
    /* the size cap, once a process has added to the cache (an unreadable folder: not fatal either) */
    pthread_mutex_lock(&g_lock);
    if (lr_cache_cap(c, NULL) != LR_OK) lr_clear_error();
    pthread_mutex_unlock(&g_lock);
    return LR_OK;
}

int lr_jit_cubin(const lr_jit_spec *s, const char *arch, int drv, void **cubin, size_t *n, int *hit)
{
    lr_key k;
    return cubin_for(s, arch, drv, &k, cubin, n, hit);
}

int lr_jit_get(const lr_jit_spec *s, CUfunction *f)
{
    *f = NULL;
    const lr_device_info *d = lr_cu_device();
    if (!d) return LR_FAIL(LR_ENODEV, "no CUDA device initialized");
    const char *arch = s->arch ? s->arch : d->arch;
    lr_key key;
    int rc = lr_jit_key(s, arch, d->driver_version, &key);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nloaded; i++)
        if (!memcmp(&g_loaded[i].key, &key, sizeof key)) {
            *f = g_loaded[i].fn;
            g_stats.mem_hits++;
            pthread_mutex_unlock(&g_lock);
            return LR_OK;
        }
    pthread_mutex_unlock(&g_lock);

    void *cubin;
    size_t n;
    if ((rc = cubin_for(s, arch, d->driver_version, &key, &cubin, &n, NULL))) return rc;
    char name[1024];
    lr_jit_kernel_name(s, name, sizeof name);
    double t0 = lr_now();
    CUmodule m;
    rc = lr_cu_module_load(&m, cubin);
    free(cubin);
    if (rc) return lr_wrap(rc, "loading %s", name);
    CUfunction fn;
    if ((rc = lr_cu_module_function(&fn, m, name))) {
        lr_cu_module_unload(m);
        return rc;
    }
    pthread_mutex_lock(&g_lock);
    g_stats.loads++;
    g_stats.load_ms += 1e3 * (lr_now() - t0);
    /* Another thread may have loaded it meanwhile: keep the first. */
    for (int i = 0; i < g_nloaded; i++)
        if (!memcmp(&g_loaded[i].key, &key, sizeof key)) {
            *f = g_loaded[i].fn;
            pthread_mutex_unlock(&g_lock);
            lr_cu_module_unload(m);
            return LR_OK;
        }
    if (g_nloaded == g_caploaded) {
        int cap = g_caploaded ? 2 * g_caploaded : 64;
        loaded *nl = realloc(g_loaded, sizeof *nl * (size_t)cap);
        if (!nl) {
            pthread_mutex_unlock(&g_lock);
            lr_cu_module_unload(m);
            return LR_FAIL(LR_ENOMEM, "out of memory");
        }
        g_loaded = nl;
        g_caploaded = cap;
    }
    loaded *e = &g_loaded[g_nloaded++];
    *e = (loaded){ key, m, fn, *s };
    e->spec.tmpl = strdup(s->tmpl), e->spec.kernel = strdup(s->kernel);
    e->spec.arch = s->arch ? strdup(s->arch) : NULL;
    e->spec.nopts = 0; /* (the options' strings are the caller's; lr_jit_lookup says so) */
    if (s->nopts) e->spec.nopts = -1;
    *f = fn;
    pthread_mutex_unlock(&g_lock);
    return LR_OK;
}

void lr_jit_stats_get(lr_jit_stats *st)
{
    pthread_mutex_lock(&g_lock);
    *st = g_stats;
    pthread_mutex_unlock(&g_lock);
}

void lr_jit_unload_all(void)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nloaded; i++) {
        lr_cu_module_unload(g_loaded[i].mod);
        free((char *)g_loaded[i].spec.tmpl), free((char *)g_loaded[i].spec.kernel), free((char *)g_loaded[i].spec.arch);
    }
    g_nloaded = 0;
    pthread_mutex_unlock(&g_lock);
    lr_jit_timeline_reset(); /* its twins were among them, and their originals */
}

int lr_jit_lookup(CUfunction f, lr_jit_spec *spec, CUmodule *mod)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nloaded; i++)
        if (g_loaded[i].fn == f) {
            const loaded e = g_loaded[i];
            pthread_mutex_unlock(&g_lock);
            if (e.spec.nopts < 0) return LR_FAIL(LR_EUNSUPPORTED, "kernel %s was compiled with NVRTC options", e.spec.kernel);
            if (spec) *spec = e.spec;
            if (mod) *mod = e.mod;
            return LR_OK;
        }
    pthread_mutex_unlock(&g_lock);
    return LR_FAIL(LR_EINVAL, "not a kernel the JIT loaded");
}
