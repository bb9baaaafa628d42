/* JIT tests that need no GPU: every template compiles for sm_80, sm_89 and
 * sm_90 through NVRTC; the cache key is sensitive to everything it should be;
 * the disk cache survives corruption, truncation, concurrent writers, trim
 * and read-only folders. */
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "jit/spec_examples.h"
#include "kernels/ops.h"
#include "test/t.h"
#include "util/err.h"
#include "util/log.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[256];

/* the previous case's folder goes first (each case once left one behind) */
static void remove_dir(void)
{
    if (!g_dir[0]) return;
    char cmd[300];
    chmod(g_dir, 0755);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd)) { /* (a leftover temp folder is not a failure) */ }
    g_dir[0] = 0;
}

static void fresh_dir(void)
{
    remove_dir();
    snprintf(g_dir, sizeof g_dir, "/tmp/lrjit.XXXXXX");
    if (!mkdtemp(g_dir)) abort();
    lr_jit_set_cache_dir(g_dir);
}

/* How often the cache folder is opened for listing: this program's opendir
 * stands in for the C library's (which it calls), so the library's calls
 * are counted too. */
static int g_opendirs;
DIR *opendir(const char *name)
{
    static DIR *(*real)(const char *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "opendir");
    if (g_dir[0] && !strcmp(name, g_dir)) g_opendirs++;
    return real ? real(name) : NULL;
}

static int count_files(const char *dir)
{
    lr_cache c;
    lr_cache_open(&c, dir);
    lr_cache_entry *v;
    int n = 0;
    if (lr_cache_list(&c, &v, &n)) return -1;
    free(v);
    return n;
}

static int test_every_template_compiles(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    static const char *archs[] = { "sm_80", "sm_89", "sm_90" };
    int templates = 0, compiled = 0;
    for (int i = 0; i < lr_template_count(); i++) {
        const char *name = lr_template_name(i);
        size_t l = strlen(name);
        if (l < 3 || strcmp(name + l - 3, ".cu")) continue;
        templates++;
        lr_jit_spec specs[96];
        int n = lr_spec_examples(name, specs, 96);
        T_ASSERT(n > 0, "template %s declares no `// @spec` example (%s)", name, n < 0 ? lr_errmsg() : "none");
        /* lr_spec_examples stops at the array's size: a template with more
           examples than that would have its last ones go uncompiled */
        T_ASSERT(n < 96, "template %s: 96 or more @spec examples, raise the array", name);
        const char *src = lr_template_get(name, NULL);
        const char *only = strstr(src, "// @arch ");
        for (int k = 0; k < n; k++)
            for (int a = 0; a < 3; a++) {
                char arch[16];
                if (only) {
                    if (a != 2) continue; /* Hopper-only templates: one arch */
                    sscanf(only + 9, "%15s", arch);
                } else snprintf(arch, sizeof arch, "%s", archs[a]);
                void *cubin;
                size_t len;
                int hit;
                T_OK(lr_jit_cubin(&specs[k], arch, 13000, &cubin, &len, &hit));
                T_ASSERT(len > 64 && !memcmp(cubin, "\177ELF", 4), "%s: not an ELF cubin", name);
                free(cubin);
                compiled++;
            }
    }
    printf("    %d templates, %d cubins\n", templates, compiled);
    T_ASSERT(templates >= 2, "only %d templates embedded", templates);
    return T_PASS;
}

static int test_compile_error_names_template(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    lr_jit_spec s;
    /* gemv without its parameters cannot compile: the error must say where. */
    lr_jit_spec_init(&s, "gemv_f16.cu", "gemv_f16");
    lr_jit_spec_set(&s, "rows", 8);
    void *cubin;
    size_t n;
    int rc = lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, NULL);
    T_ASSERT(rc == LR_ENVRTC, "expected NVRTC error, got %d", rc);
    T_ASSERT(strstr(lr_errmsg(), "gemv_f16__rows_8") && strstr(lr_errmsg(), "gemv_f16.cu"), "message: %s", lr_errmsg());
    return T_PASS;
}

static int test_key_sensitivity(void)
{
    const char *h[] = { "a.cuh", "x" }, *o1[] = { "-a", "-b" }, *o2[] = { "-b", "-a" };
    lr_key_inputs base = { "src", h, 1, o1, 2, 13, 0, 88, "sm_90", 13000 };
    lr_key k0 = lr_key_compute(&base), k;
    lr_key_inputs v = base;
    v.source = "srd"; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "source");
    v = base; v.opts = o2; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "option order");
    v = base; v.nvrtc_build = 89; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "nvrtc build");
    v = base; v.nvrtc_minor = 1; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "nvrtc minor");
    v = base; v.arch = "sm_89"; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "arch");
    v = base; v.driver_version = 12080; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "driver");
    const char *h2[] = { "a.cuh", "y" };
    v = base; v.headers = h2; k = lr_key_compute(&v); T_ASSERT(memcmp(&k, &k0, 16), "header");
    /* length prefixes: moving a byte between fields changes the key */
    const char *oa[] = { "-ab", "" }, *ob[] = { "-a", "b" };
    v = base; v.opts = oa; lr_key ka = lr_key_compute(&v);
    v.opts = ob; lr_key kb = lr_key_compute(&v);
    T_ASSERT(memcmp(&ka, &kb, 16), "length prefix");
    k = lr_key_compute(&base);
    T_ASSERT(!memcmp(&k, &k0, 16), "deterministic");
    return T_PASS;
}

static void probe_spec(lr_jit_spec *s, int unroll)
{
    lr_jit_spec_init(s, "probe.cu", "probe");
    lr_jit_spec_set(s, "threads", 128);
    lr_jit_spec_set(s, "unroll", unroll);
}

static int test_cache_hit_miss(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    lr_jit_spec s;
    probe_spec(&s, 3);
    void *a, *b;
    size_t na, nb;
    int hit;
    lr_jit_stats st0, st1;
    lr_jit_stats_get(&st0);
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &a, &na, &hit));
    T_ASSERT(!hit, "first compile was a hit");
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &b, &nb, &hit));
    T_ASSERT(hit, "second lookup missed");
    T_ASSERT(na == nb && !memcmp(a, b, na), "cached payload differs");
    lr_jit_stats_get(&st1);
    T_ASSERT(st1.compiles == st0.compiles + 1 && st1.disk_hits == st0.disk_hits + 1, "stats");
    free(a);
    free(b);
    /* a different driver version is a different key: a miss */
    T_OK(lr_jit_cubin(&s, "sm_90", 12080, &a, &na, &hit));
    T_ASSERT(!hit, "driver version not in key");
    free(a);
    T_ASSERT(count_files(g_dir) == 2, "expected 2 cache files, found %d", count_files(g_dir));
    return T_PASS;
}

/* Damages the single cache file with `how`, then checks a lookup recompiles
 * and leaves a valid file. */
static int damage_and_recover(int how)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    lr_jit_spec s;
    probe_spec(&s, 5);
    lr_key k;
    T_OK(lr_jit_key(&s, "sm_90", 13000, &k));
    void *a;
    size_t n;
    int hit;
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &a, &n, &hit));
    free(a);
    char hex[33], path[512];
    lr_key_hex(&k, hex);
    snprintf(path, sizeof path, "%s/%s.cubin", g_dir, hex);
    struct stat st;
    T_ASSERT(stat(path, &st) == 0, "no cache file %s", path);
    if (how == 0) T_ASSERT(truncate(path, st.st_size / 2) == 0, "truncate");
    else if (how == 1) { /* flip a payload byte */
        FILE *f = fopen(path, "r+b");
        fseek(f, st.st_size - 10, SEEK_SET);
        int c = fgetc(f);
        fseek(f, st.st_size - 10, SEEK_SET);
        fputc(c ^ 0x55, f);
        fclose(f);
    } else { /* a foreign file under the right name */
        FILE *f = fopen(path, "wb");
        fputs("this is not a cubin", f);
        fclose(f);
    }
    lr_set_warn_handler(NULL);
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &a, &n, &hit));
    lr_set_warn_handler(NULL);
    T_ASSERT(!hit, "damaged file served as a hit");
    T_ASSERT(!memcmp(a, "\177ELF", 4), "recompiled output is not a cubin");
    free(a);
    T_ASSERT(lr_cache_check_file(path, &k) == LR_OK, "file not repaired");
    return T_PASS;
}
static int test_cache_truncated(void) { return damage_and_recover(0); }
static int test_cache_corrupted(void) { return damage_and_recover(1); }
static int test_cache_foreign(void) { return damage_and_recover(2); }

static int test_cache_concurrent_writers(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    enum { P = 4 };
    pid_t pids[P];
    for (int i = 0; i < P; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            lr_jit_spec s;
            probe_spec(&s, 7);
            void *a;
            size_t n;
            int ok = lr_jit_cubin(&s, "sm_90", 13000, &a, &n, NULL) == LR_OK && !memcmp(a, "\177ELF", 4);
            _exit(ok ? 0 : 1);
        }
    }
    for (int i = 0; i < P; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed", i);
    }
    lr_cache c;
    lr_cache_open(&c, g_dir);
    lr_cache_entry *v;
    int n;
    T_OK(lr_cache_list(&c, &v, &n));
    int valid = n == 1 && v[0].valid;
    free(v);
    T_ASSERT(valid, "expected one valid entry, got %d", n);
    /* no temp files left behind */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp", g_dir);
    FILE *p = popen(cmd, "r");
    int tmps = -1;
    if (p) { if (fscanf(p, "%d", &tmps) != 1) tmps = -1; pclose(p); }
    T_ASSERT(tmps == 0, "%d temp files left", tmps);
    return T_PASS;
}

/* An entry under the key of bytes `fill`, its file's times set to second sec
 * (the trim's order). */
static int put_aged(lr_cache *c, int fill, const void *payload, size_t n, long sec)
{
    lr_key k;
    memset(&k, fill, sizeof k);
    int rc = lr_cache_put(c, &k, payload, n);
    if (rc) return rc;
    char hex[33], path[512];
    lr_key_hex(&k, hex);
    snprintf(path, sizeof path, "%s/%s.cubin", g_dir, hex);
    struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
    return utimensat(AT_FDCWD, path, ts, 0) ? LR_FAIL(LR_EIO, "utimensat %s", path) : LR_OK;
}

/* LEECHRT_CACHE_MAX_MB: a size in MB sets the cap; garbage keeps the
 * default 2048 (with a warning: a cache setting is not worth refusing to run). */
static int test_cache_cap_setting(void)
{
    fresh_dir();
    static const struct { const char *v; uint64_t mb; } t[] = { { NULL, 2048 }, { "16", 16 }, { "12abc", 2048 },
                                                                { "-5", 2048 }, { "0", 2048 }, { "", 2048 } };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (t[i].v) setenv("LEECHRT_CACHE_MAX_MB", t[i].v, 1);
        else unsetenv("LEECHRT_CACHE_MAX_MB");
        lr_cache c;
        lr_cache_open(&c, g_dir);
        T_ASSERT(c.max_bytes == t[i].mb << 20, "LEECHRT_CACHE_MAX_MB=%s: cap %llu bytes", t[i].v ? t[i].v : "(unset)",
                 (unsigned long long)c.max_bytes);
    }
    unsetenv("LEECHRT_CACHE_MAX_MB");
    return T_PASS;
}

/* The JIT keeps the cache under LEECHRT_CACHE_MAX_MB: after the first new
 * entry of a process, the least recently used go until the folder fits. */
static int test_jit_keeps_cache_under_cap(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    /* three old 600 KB entries: 1.8 MB against a 1 MB cap */
    lr_cache c;
    lr_cache_open(&c, g_dir);
    static uint8_t payload[600 * 1024];
    memset(payload, 3, sizeof payload);
    for (int i = 0; i < 3; i++) T_OK(put_aged(&c, 0x40 + i, payload, sizeof payload, 1000 + i));
    setenv("LEECHRT_CACHE_MAX_MB", "1", 1);
    lr_jit_set_cache_dir(g_dir); /* (reopened: reads the cap) */
    lr_jit_spec s;
    lr_op_spec(&s, "op_argmax", 0);
    void *cubin;
    size_t len;
    int hit = 1;
    const int rc = lr_jit_cubin(&s, "sm_90", 13000, &cubin, &len, &hit);
    unsetenv("LEECHRT_CACHE_MAX_MB");
    T_OK(rc);
    free(cubin);
    T_ASSERT(!hit, "the kernel was already cached");
    lr_cache_entry *v;
    int n;
    T_OK(lr_cache_list(&c, &v, &n));
    uint64_t total = 0;
    int old = 0;
    for (int i = 0; i < n; i++) total += v[i].bytes, old += v[i].bytes > sizeof payload;
    free(v);
    T_ASSERT(total <= (1u << 20) && old <= 1 && n >= 1, "%d entries, %llu bytes (%d old) against a 1 MB cap", n,
             (unsigned long long)total, old);
    /* the new kernel stayed: a second lookup hits */
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &cubin, &len, &hit));
    free(cubin);
    T_ASSERT(hit, "the new entry was trimmed");
    return T_PASS;
}

static int test_cache_trim(void)
{
    fresh_dir();
    lr_cache c;
    lr_cache_open(&c, g_dir);
    uint8_t payload[1000];
    memset(payload, 7, sizeof payload);
    /* distinct mtimes: the oldest go first */
    for (int i = 0; i < 5; i++) T_OK(put_aged(&c, i + 1, payload, sizeof payload, 1000 + i));
    /* a hit bumps the oldest entry to newest */
    lr_key k1;
    memset(&k1, 1, sizeof k1);
    void *p;
    size_t n;
    T_OK(lr_cache_get(&c, &k1, &p, &n));
    free(p);
    int removed;
    T_OK(lr_cache_trim(&c, 2 * (1000 + LR_CACHE_HEADER), &removed));
    T_ASSERT(removed == 3, "removed %d", removed);
    T_ASSERT(lr_cache_get(&c, &k1, &p, &n) == LR_OK, "recently used entry was trimmed");
    free(p);
    lr_key k5;
    memset(&k5, 5, sizeof k5);
    T_ASSERT(lr_cache_get(&c, &k5, &p, &n) == LR_OK, "newest entry was trimmed");
    free(p);
    lr_key k2;
    memset(&k2, 2, sizeof k2);
    T_ASSERT(lr_cache_get(&c, &k2, &p, &n) != LR_OK, "oldest entry survived");
    /* a dead writer's temp file goes once it is an hour old; a live one's stays */
    char old[4200], young[4200], other[4200];
    snprintf(old, sizeof old, "%s/%s.cubin.tmp.AbC123", g_dir, "0123456789abcdef0123456789abcdef");
    snprintf(young, sizeof young, "%s/%s.cubin.tmp.XyZ789", g_dir, "0123456789abcdef0123456789abcdef");
    snprintf(other, sizeof other, "%s/notes.tmp.old", g_dir); /* not the cache's: left alone */
    const char *const files[] = { old, young, other };
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(files[i], "w");
        T_ASSERT(f && fputs("partial", f) >= 0 && fclose(f) == 0, "write %s", files[i]);
    }
    struct timespec t2[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
    T_ASSERT(utimensat(AT_FDCWD, old, t2, 0) == 0 && utimensat(AT_FDCWD, other, t2, 0) == 0, "utimensat");
    g_opendirs = 0;
    T_OK(lr_cache_trim(&c, 1u << 30, &removed));
    T_ASSERT(access(old, F_OK) != 0, "a stale temp file was kept");
    /* one pass over the folder sweeps and lists (`cache trim` once read it twice) */
    T_ASSERT(g_opendirs == 1, "the trim listed the folder %d times", g_opendirs);
    T_ASSERT(access(young, F_OK) == 0 && access(other, F_OK) == 0, "a young temp file or a foreign file was removed");
    unlink(young), unlink(other);
    return T_PASS;
}

static int warned;
static void count_warn(const char *m) { (void)m; warned++; }

/* the cubins in a cache folder */
static int cubins(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const size_t l = strlen(e->d_name);
        n += l > 6 && !strcmp(e->d_name + l - 6, ".cubin");
    }
    if (d) closedir(d);
    return n;
}

static int test_cache_readonly_and_missing(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    fresh_dir();
    /* warm one entry, then make the folder read-only */
    lr_jit_spec s, s2;
    probe_spec(&s, 9);
    probe_spec(&s2, 10);
    void *a;
    size_t n;
    int hit;
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &a, &n, &hit));
    free(a);
    chmod(g_dir, 0555);
    int root_can_write = access(g_dir, W_OK) == 0; /* root ignores modes */
    const int before = cubins(g_dir);
    warned = 0;
    lr_set_warn_handler(count_warn);
    lr_jit_set_cache_dir(g_dir);
    /* as root the mode does not stop a write, so the test sets the state the
       check would have set (otherwise this case tested nothing under root) */
    if (root_can_write) lr_jit_cache()->readonly = 1;
    T_OK(lr_jit_cubin(&s, "sm_90", 13000, &a, &n, &hit));
    free(a);
    T_ASSERT(hit, "read-only cache not read");
    T_OK(lr_jit_cubin(&s2, "sm_90", 13000, &a, &n, &hit));
    free(a);
    T_ASSERT(!hit && cubins(g_dir) == before, "a read-only cache was written (%d cubins, %d before)", cubins(g_dir),
             before);
    T_ASSERT(warned == (root_can_write ? 0 : 1), "expected %d warning, got %d", root_can_write ? 0 : 1, warned);
    chmod(g_dir, 0755);
    /* a folder that cannot be created: compile in memory, one warning */
    lr_jit_set_cache_dir("/proc/leechrt-no-such-dir/cache");
    warned = 0;
    T_OK(lr_jit_cubin(&s2, "sm_90", 13000, &a, &n, &hit));
    free(a);
    T_ASSERT(!hit && warned == 1, "missing folder: hit=%d warnings=%d", hit, warned);
    lr_set_warn_handler(NULL);
    return T_PASS;
}

static int test_nvrtc_version(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    lr_nvrtc_version v;
    T_OK(lr_nvrtc_version_get(&v));
    printf("    NVRTC %d.%d build %d\n", v.major, v.minor, v.build);
    T_ASSERT(v.major >= 12 && v.build > 0, "implausible version");
    return T_PASS;
}

static int test_spec_names(void)
{
    lr_jit_spec s;
    lr_jit_spec_init(&s, "probe.cu", "probe");
    T_OK(lr_jit_spec_set(&s, "threads", 256));
    T_OK(lr_jit_spec_set(&s, "off", -3));
    T_OK(lr_jit_spec_set(&s, "threads", 128));
    T_ASSERT(lr_jit_spec_set(&s, "bad name", 1) == LR_EINVAL, "accepted a bad name");
    /* one macro LR_THREADS for both: refused, the value kept */
    T_ASSERT(lr_jit_spec_set(&s, "THREADS", 64) == LR_EINVAL && lr_jit_spec_get(&s, "threads", 0) == 128,
             "a name differing only in case accepted");
    char name[256];
    T_OK(lr_jit_kernel_name(&s, name, sizeof name));
    T_ASSERT(!strcmp(name, "probe__threads_128__off_m3"), "name %s", name);
    char *src;
    T_OK(lr_jit_source(&s, &src));
    T_ASSERT(strstr(src, "#define LR_THREADS 128") && strstr(src, "#define LR_OFF -3") &&
             strstr(src, "#define LR_KERNEL probe__threads_128__off_m3"), "prelude:\n%.300s", src);
    free(src);
    /* the most negative value names a kernel without overflow */
    lr_jit_spec_init(&s, "probe.cu", "probe");
    T_OK(lr_jit_spec_set(&s, "off", -9223372036854775807LL - 1));
    T_OK(lr_jit_kernel_name(&s, name, sizeof name));
    T_ASSERT(!strcmp(name, "probe__off_m9223372036854775808"), "name %s", name);
    lr_jit_spec_init(&s, "no_such.cu", "x");
    T_ASSERT(lr_jit_source(&s, &src) == LR_EINVAL, "missing template accepted");
    return T_PASS;
}

static int cleanup(void)
{
    remove_dir();
    return T_PASS;
}

/* Something else than an entry under an entry's name: a FIFO is passed over
 * at once (opening it to read would wait for a writer) and a header whose
 * length is not the file's is refused before anything is allocated for it. */
static int test_cache_not_a_file(void)
{
    fresh_dir();
    lr_cache c;
    lr_cache_open(&c, g_dir);
    T_ASSERT(!c.disabled, "cache folder %s", g_dir);
    lr_key k;
    memset(&k, 0x5a, sizeof k);
    static const char payload[] = "not really a cubin, but a payload";
    T_OK(lr_cache_put(&c, &k, payload, sizeof payload));
    void *p;
    size_t n;
    T_OK(lr_cache_get(&c, &k, &p, &n));
    T_ASSERT(n == sizeof payload && !memcmp(p, payload, n), "payload back");
    free(p);
    char hex[64], path[4300];
    lr_key_hex(&k, hex);
    snprintf(path, sizeof path, "%s/%s.cubin", g_dir, hex);
    /* the header says 1 GiB, the file holds 34 bytes */
    FILE *f = fopen(path, "r+b");
    T_ASSERT(f && fseek(f, 32, SEEK_SET) == 0, "open %s", path);
    const uint8_t big[8] = { 0, 0, 0, 0x40, 0, 0, 0, 0 };
    T_ASSERT(fwrite(big, 1, 8, f) == 8 && fclose(f) == 0, "patch");
    T_ASSERT(lr_cache_check_file(path, &k) == LR_EFORMAT, "a length past the file accepted");
    T_ASSERT(unlink(path) == 0 && mkfifo(path, 0600) == 0, "fifo %s", path);
    alarm(10); /* a hang fails the test instead of CI */
    lr_set_warn_handler(NULL);
    int rc = lr_cache_get(&c, &k, &p, &n);
    T_ASSERT(rc == LR_EIO, "a FIFO as an entry: %d", rc);
    T_ASSERT(lr_cache_check_file(path, &k) != LR_OK, "a FIFO checked as valid");
    alarm(0);
    unlink(path);
    return T_PASS;
}

T_MAIN(T_CASE(test_cache_not_a_file), T_CASE(test_spec_names), T_CASE(test_key_sensitivity), T_CASE(test_nvrtc_version),
       T_CASE(test_every_template_compiles), T_CASE(test_compile_error_names_template),
       T_CASE(test_cache_hit_miss), T_CASE(test_cache_truncated), T_CASE(test_cache_corrupted),
       T_CASE(test_cache_foreign), T_CASE(test_cache_concurrent_writers), T_CASE(test_cache_cap_setting), T_CASE(test_jit_keeps_cache_under_cap), T_CASE(test_cache_trim),
       T_CASE(test_cache_readonly_and_missing), T_CASE(cleanup))
