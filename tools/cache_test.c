/* The cache tool and the appliance path: `cache warm` on a machine without a
 * GPU fills a cache that a process with no NVRTC at all can use. */
#include "jit/cache.h"
#include "jit/embedded.h"
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "kernels/gemv_leech.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "test/t.h"
#include "util/err.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_bin[1024], g_dir[256], g_self[1024];

static int sh(const char *fmt, const char *arg)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, g_bin, g_dir, arg);
    return system(cmd);
}

static int test_warm_then_run_without_nvrtc(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    snprintf(g_dir, sizeof g_dir, "/tmp/lrcache.XXXXXX");
    T_ASSERT(mkdtemp(g_dir), "mkdtemp");
    T_ASSERT(sh("%s --dir %s warm --models %s >/dev/null", "4B") == 0, "warm failed");
    T_ASSERT(sh("%s --dir %s verify >/dev/null%s", "") == 0, "verify failed after warm");
    T_ASSERT(sh("%s --dir %s warm --bogus %s >/dev/null 2>&1", "1") != 0, "bad flag accepted");
    /* A child with NVRTC disabled must find the warmed kernels and fail
     * clearly on one that was never warmed. */
    char cmd0[2048];
    snprintf(cmd0, sizeof cmd0, "LEECHRT_NVRTC=none %s --appliance-child %s", g_self, g_dir);
    int st = system(cmd0);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "appliance child exit %d", WEXITSTATUS(st));
    /* corrupt one entry: verify must notice, clear must empty it */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "f=$(ls %s/*.cubin | head -1); printf garbage >> $f", g_dir);
    T_ASSERT(system(cmd) == 0, "corrupt");
    T_ASSERT(sh("%s --dir %s verify >/dev/null%s", "") != 0, "verify missed a corrupt entry");
    T_ASSERT(sh("%s --dir %s clear >/dev/null%s", "") == 0, "clear failed");
    T_ASSERT(sh("%s --dir %s verify | grep -q '^0 entries'%s", "") == 0, "cache not empty after clear");
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    T_ASSERT(system(cmd) == 0, "cleanup");
    return T_PASS;
}

/* The build folder: the one above the cache tool's bin/. */
static void build_dir(char *out, size_t n)
{
    snprintf(out, n, "%s", g_bin);
    *strrchr(out, '/') = 0; /* .../bin */
    *strrchr(out, '/') = 0;
}

/* The i-th fake entry of test_embed_cache: a key and a payload (4 to 8
 * bytes, the first 4 i itself) unlike every other's. */
static void fake_entry(int i, lr_key *k, uint8_t *p, size_t *n)
{
    for (int j = 0; j < 16; j++) k->b[j] = (uint8_t)(i >> (8 * (j % 4)) ^ j * 37);
    *n = 4 + (size_t)(i % 5);
    for (size_t j = 0; j < *n; j++) p[j] = (uint8_t)(j < 4 ? i >> (8 * j) : i * 7 + (int)j);
}

/* The cases of test_embed_cache, in g_dir, with the embed_cache at embed. */
static int embed_cache_cases(const char *embed)
{
    char cmd[8192], path[600];
    snprintf(path, sizeof path, "%s/c", g_dir);
    lr_cache c;
    lr_cache_open(&c, path);
    enum { N = 4096 + 37 };
    for (int i = 0; i < N; i++) {
        lr_key k;
        uint8_t p[8];
        size_t n;
        fake_entry(i, &k, p, &n);
        T_OK(lr_cache_put(&c, &k, p, n));
    }
    snprintf(cmd, sizeof cmd, "echo 12.4.131 > %s/c/nvrtc-version && %s %s/c %s/emb.c 2>/dev/null && "
             "cc -std=c11 -shared -fPIC -I. -o %s/emb.so %s/emb.c", g_dir, embed, g_dir, g_dir, g_dir, g_dir);
    T_ASSERT(system(cmd) == 0, "embed_cache or compiling its output failed");
    snprintf(path, sizeof path, "%s/emb.so", g_dir);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    T_ASSERT(h, "dlopen: %s", dlerror());
    const lr_embedded_cubin *tab = dlsym(h, "lr_embedded_cubin_table");
    const int *count = dlsym(h, "lr_embedded_cubin_count");
    int bad = -1;
    char seen[N] = { 0 };
    for (int i = 0; tab && count && i < *count && bad < 0; i++) {
        /* which entry it is: its payload's first bytes name it */
        const int e = tab[i].len >= 4 ? (int)(tab[i].data[0] | tab[i].data[1] << 8 | tab[i].data[2] << 16) : -1;
        lr_key k;
        uint8_t p[8];
        size_t n;
        if (e >= 0 && e < N) fake_entry(e, &k, p, &n);
        if (e < 0 || e >= N || seen[e]++ || tab[i].len != n || memcmp(tab[i].data, p, n) || memcmp(tab[i].key, k.b, 16)) bad = i;
    }
    T_ASSERT(tab && count && *count == N && bad < 0, "table of %d entries (want %d), entry %d wrong", count ? *count : -1, N, bad);
    dlclose(h);
    /* one payload byte changed (length and header intact), a file renamed
       to another key, a name that is not hex, a version the runtime cannot
       read: each refused by file name (in a
       copy of three entries: creating files is slow on some file systems) */
    static const char *const spoil[] = {
        "printf x | dd of=$f bs=1 seek=49 conv=notrunc 2>/dev/null",
        "mv $f $c/00000000000000000000000000000000.cubin",
        "mv $f $c/-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1.cubin",
        "echo 12.4 > $c/nvrtc-version", /* the runtime would never serve the table */
    };
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd,
                 "set -e; d=%s; c=$d/c2; rm -rf $c $d/emb2.c; mkdir $c; cp $d/c/nvrtc-version $(ls $d/c/*.cubin | head -3) $c; "
                 "f=$(ls $c/*.cubin | head -1); %s; "
                 "if %s $c $d/emb2.c 2>$d/err; then exit 1; fi; grep -q \"$c/\" $d/err; test ! -e $d/emb2.c; test ! -e $d/emb2.c.tmp",
                 g_dir, spoil[i], embed);
        T_ASSERT(system(cmd) == 0, "embed_cache took a spoiled folder: %s", spoil[i]);
    }
    return T_PASS;
}

/* embed_cache on a folder of fake entries (NVRTC-free): every one of more
 * than 4096 entries embedded, checked by loading the generated table; and a
 * corrupt entry, a wrong-key one, a misnamed one or an unreadable NVRTC
 * version stops it, naming the file, with no output left. */
static int test_embed_cache(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    T_SKIP_IF(access("jit/embedded.h", R_OK) != 0, "not run from the repository root");
    char build[1024], embed[1100], cmd[600];
    build_dir(build, sizeof build);
    snprintf(embed, sizeof embed, "%s/gen/embed_cache", build);
    T_SKIP_IF(access(embed, X_OK) != 0, "embed_cache not built");
    snprintf(g_dir, sizeof g_dir, "/tmp/lremb.XXXXXX");
    T_ASSERT(mkdtemp(g_dir), "mkdtemp");
    const int r = embed_cache_cases(embed);
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir); /* (failed or not: thousands of files) */
    T_ASSERT(system(cmd) == 0, "cleanup");
    return r;
}

/* An appliance binary: the warmed kernels compiled in, no NVRTC, no cache. */
static int test_appliance_embeds_kernels(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    T_SKIP_IF(access("tools/build/appliance_check.c", R_OK) != 0, "not run from the repository root");
    char build[1024], cmd[8192];
    build_dir(build, sizeof build);
    snprintf(g_dir, sizeof g_dir, "/tmp/lrapp.XXXXXX");
    T_ASSERT(mkdtemp(g_dir), "mkdtemp");
    snprintf(cmd, sizeof cmd,
             "set -e; d=%s; b=%s; $b/bin/cache --dir $d/c warm --models 4B >/dev/null; "
             "$b/gen/embed_cache $d/c $d/emb.c 2>/dev/null; "
             "cc -std=c11 -D_GNU_SOURCE -I. -I%s/include ${DEPINC:-} -o $d/check tools/build/appliance_check.c $d/emb.c $b/libleechrt.a "
             "${LDFLAGS:-} -lffi -lxxhash -ljansson -lz -ldl -lm -lpthread; mkdir $d/empty; "
             "LEECHRT_NVRTC=none $d/check $d/empty >/dev/null",
             g_dir, build, getenv("CUDA") ? getenv("CUDA") : "/usr/local/cuda");
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    T_ASSERT(system(cmd) == 0, "cleanup");
    T_ASSERT(rc == 0, "appliance check failed (exit %d)", rc);
    return T_PASS;
}

/* One line of `cmd`'s output equals `want`. */
static int output_has(const char *cmd, const char *want)
{
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        found |= !strcmp(line, want);
    }
    pclose(f);
    return found;
}

/* `cache warm --dry-run` plans the engine's kernels in the layout the
 * engine picks per shape: on the H200's 14B shapes the 3-bit form (its
 * q|k|v with three class tables, its gate|up as the SwiGLU pair, with the
 * geometries lr_leech_dev_upload gives them, the split's last 4 CTAs at
 * the engine's 70 %, and the ends the engine gives them: q|k|v's trigger
 * after its main loop, and on a rotated-residual model its norm too and o's
 * trigger at its entry), none
 * of it for 4B, whose shapes keep Planes14S. Compiles nothing (no NVRTC
 * needed). appliance_gpu_test opens the engine from such a cache on a GPU. */
static int test_dry_run_plans_default_layouts(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    lr_tuning_set_target("NVIDIA H200", 90);
    int nent1, n3, n2, n1;
    T_OK(lr_ctab_entries(12, 1, &nent1));
    /* the form's tables: the layout's entries and their mirrors */
    T_OK(lr_p14s_c3_entries(12, 1, 3 * nent1, 3, &n3));
    T_OK(lr_p14s_c3_entries(12, 1, 2 * nent1, 2, &n2));
    T_OK(lr_p14s_c3_entries(12, 1, nent1, 1, &n1));
    T_ASSERT(n3 == 3 * (nent1 + 30) && n2 == 2 * (nent1 + 30), "3-bit form entries %d, %d (nent1 %d)", n3, n2, nent1);
    lr_jit_spec s;
    lr_launch_geom g;
    char qkv[2][512], gu[2][512], o[2][512], cmd[1200];
    /* (with the engine's late weighting of the split, as it opens them; the
       ends of a plain [0] and a rotated-residual [1] model) */
    const int late = lr_gemv_p14s_late;
    lr_gemv_p14s_late = LR_ENGINE_GEMV_LATE;
    lr_leech_geom gq = lr_gemv_leech_p14s3_default_geom(7168, 5120),
                  gg = lr_gemv_leech_p14s3_default_geom_swiglu(34816, 5120),
                  go = lr_gemv_leech_p14s3_default_geom(5120, 5120);
    for (int r = 0; r < 2; r++) {
        gq.ends = lr_leech_engine_ends(LR_PROJ_QKV, LR_ENGINE_GEMV_TRIGGER_FOR(r), r, 1, 1e-6f);
        gg.ends = lr_leech_engine_ends(LR_PROJ_GATEUP, LR_ENGINE_GEMV_TRIGGER_FOR(r), r, 1, 1e-6f);
        go.ends = lr_leech_engine_ends(LR_PROJ_O, LR_ENGINE_GEMV_TRIGGER_FOR(r), r, 1, 1e-6f);
        T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, n1, go, 232448));
        T_OK(lr_jit_kernel_name(&s, o[r], sizeof o[r]));
        T_OK(lr_gemv_leech_p14s_spec(&s, &g, 7168, 5120, n3, gq, 232448));
        T_OK(lr_jit_kernel_name(&s, qkv[r], sizeof qkv[r]));
        T_OK(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 34816, 5120, n2, gg, 232448));
        T_OK(lr_jit_kernel_name(&s, gu[r], sizeof gu[r]));
    }
    lr_gemv_p14s_late = late;
    lr_tuning_set_target(NULL, 0);
    T_ASSERT(strstr(qkv[0], "c3_1") && strstr(gu[0], "c3_1") && strstr(gu[0], "swiglu_1") &&
                 strstr(qkv[0], "late_4__latew_70") && strstr(gu[0], "late_4__latew_70") && strstr(qkv[0], "trig_1") &&
                 !strstr(gu[0], "trig_1"),
             "names %s, %s", qkv[0], gu[0]);
    T_ASSERT(strstr(qkv[1], "trig_1") && strstr(qkv[1], "norm_") && strstr(gu[1], "norm_"), "rotated names %s, %s", qkv[1],
             gu[1]);
    /* o lets gate|up launch at its entry on a rotated-residual model only */
    T_ASSERT(!strstr(o[0], "trige_1") && strstr(o[1], "trige_1") && strstr(o[1], "res_1"), "o's names %s, %s", o[0], o[1]);
    snprintf(cmd, sizeof cmd, "%s warm --models 14B --dry-run", g_bin);
    for (int r = 0; r < 2; r++) {
        T_ASSERT(output_has(cmd, qkv[r]), "14B plan lacks %s", qkv[r]);
        T_ASSERT(output_has(cmd, gu[r]), "14B plan lacks %s", gu[r]);
        T_ASSERT(output_has(cmd, o[r]), "14B plan lacks %s", o[r]);
    }
    snprintf(cmd, sizeof cmd, "%s warm --models 4B --dry-run | grep -c c3_1", g_bin);
    T_ASSERT(output_has(cmd, "0"), "the 4B plan has 3-bit kernels");
    /* the down prefetch as the engine sets it per device: on for the H100 SXM
       (40 % of each share, no KB cap), on down only; off for the H200 */
    snprintf(cmd, sizeof cmd, "%s warm --models 14B --dry-run | grep -c l2w_", g_bin);
    T_ASSERT(output_has(cmd, "0"), "the H200's 14B plan has prefetching kernels");
    snprintf(cmd, sizeof cmd,
             "%s warm --models 14B --device 'NVIDIA H100 80GB HBM3' --dry-run | grep l2w_4096__l2wp_40 | grep -c rows_5120__cols_17408",
             g_bin);
    T_ASSERT(!output_has(cmd, "0"), "the H100's 14B plan lacks down with the prefetch");
    snprintf(cmd, sizeof cmd, "%s warm --models 14B --device 'NVIDIA H100 80GB HBM3' --dry-run | grep l2w_ | grep -vc cols_17408",
             g_bin);
    T_ASSERT(output_has(cmd, "0"), "the H100's 14B plan prefetches outside down");
    return T_PASS;
}

static int test_help(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    T_ASSERT(sh("%s --help >/dev/null%s%s", "") == 0, "--help failed");
    T_ASSERT(sh("%s nonsense >/dev/null 2>&1%s%s", "") != 0, "unknown command accepted");
    /* a LEECHRT_NVRTC that cannot be loaded leaves the process without NVRTC and says so (it
       fell back to the system's NVRTC without a word) */
    char cmd[2200];
    snprintf(cmd, sizeof cmd,
             "LEECHRT_NVRTC=/nonexistent/libnvrtc.so '%s' warm --models none 2>&1 | "
             "grep -q 'LEECHRT_NVRTC=/nonexistent/libnvrtc.so cannot be loaded'",
             g_bin);
    T_ASSERT(system(cmd) == 0, "a bad LEECHRT_NVRTC was not reported: %s", cmd);
    /* a --dir that does not exist is named and not created (a typo listed as an empty cache);
       an extra argument and a --dir without a value are refused */
    snprintf(cmd, sizeof cmd, "'%s' --dir '%s/no/such' list 2>&1 | grep -q 'no such folder' && test ! -e '%s/no'", g_bin,
             g_dir, g_dir);
    T_ASSERT(system(cmd) == 0, "a missing --dir: %s", cmd);
    snprintf(cmd, sizeof cmd, "'%s' --dir '%s' list extra 2>/dev/null", g_bin, g_dir);
    int st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2, "an extra argument: status %d", st);
    snprintf(cmd, sizeof cmd, "'%s' --dir 2>/dev/null", g_bin);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--dir alone: status %d", st);
    /* a file as the cache folder is named as not a folder (it was called read-only) */
    snprintf(cmd, sizeof cmd, "'%s' --dir '%s' warm --models none 2>&1 | grep -q 'cache: warning: cubin cache .* is not a folder'",
             g_bin, g_self);
    T_ASSERT(system(cmd) == 0, "a file as the cache folder: %s", cmd);
    return T_PASS;
}

/* A compiled kernel that could not be stored is a failed warm (it was
 * counted as compiled, exit 0, with nothing on disk): here a folder sits
 * where each entry's file would go, as a full disk or a blocked rename. */
static int test_warm_store_failure(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    T_SKIP_IF(access(g_bin, X_OK) != 0, "cache tool not built");
    char a[256] = "/tmp/lrwarm.XXXXXX", cmd[4096];
    T_ASSERT(mkdtemp(a), "mkdtemp");
    snprintf(cmd, sizeof cmd,
             "set -e; cd '%s'; '%s' --dir ok warm --models none >/dev/null; n=0; mkdir blocked; "
             "for f in ok/*.cubin; do mkdir \"blocked/${f#ok/}\"; n=$((n+1)); done; test $n -ge 1; "
             "if '%s' --dir blocked warm --models none >out 2>err; then exit 3; fi; "
             "grep -q 'compiled, not stored' err; grep -q ' 1 failed' out",
             a, g_bin, g_bin);
    int st = system(cmd);
    snprintf(cmd, sizeof cmd, "cat '%s/out' '%s/err' >&2; rm -rf '%s'", a, a, a);
    if (st) { if (system(cmd)) {} }
    else { snprintf(cmd, sizeof cmd, "rm -rf '%s'", a); if (system(cmd)) {} }
    T_ASSERT(st == 0, "a warm that stored nothing: status %d", st);
    return T_PASS;
}

/* Runs in a fresh process with NVRTC disabled: the warmed kernels must load
 * from the cache, and one never warmed must fail clearly. */
static int appliance_child(const char *dir)
{
    lr_jit_set_cache_dir(dir);
    if (lr_nvrtc_available()) return 10;
    lr_jit_spec s;
    lr_op_spec(&s, "op_attention", 128);
    void *cubin;
    size_t n;
    int hit = 0;
    if (lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, &hit) != LR_OK || !hit) return 11;
    free(cubin);
    /* The engine's fused 4B q|k|v (three parts, each its own gain
     * centroids: three class tables) and gate|up (two), 1 and 2 gain bits,
     * in both Leech layouts, exactly as lr_leech_dev_upload specializes them. */
    lr_tuning_set_target("NVIDIA H200", 90);
    int si = 0;
    while (si < lr_qwen3_nshapes && strcmp(lr_qwen3_shapes[si].model, "4B")) si++;
    int R[LR_LAYER_MATRICES], C[LR_LAYER_MATRICES];
    lr_qwen3_layer_shapes(si, R, C);
    for (int gb = 1; gb <= 2; gb++)
        for (int k = 7; k <= 8; k++) {
            int nent1, ntab, code = 20 + 4 * (gb - 1) + 2 * (k - 7);
            lr_launch_geom g;
            if (lr_ctab_entries(12, gb, &nent1)) return code;
            ntab = (k == 7 ? 3 : 2) * nent1;
            if (lr_gemv_leech_p14s_spec(&s, &g, R[k], C[k], ntab, lr_gemv_leech_p14s_default_geom(R[k], C[k]), 232448) ||
                lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, &hit) != LR_OK || !hit)
                return code;
            free(cubin);
            if (lr_gemv_leech_p14_spec(&s, &g, R[k], C[k], ntab, lr_gemv_leech_p14_default_geom(R[k], C[k]), 232448) ||
                lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, &hit) != LR_OK || !hit)
                return code + 1;
            free(cubin);
        }
    lr_op_spec(&s, "op_attention", 96); /* never warmed */
    int rc = lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, &hit);
    return rc == LR_ENVRTC && strstr(lr_errmsg(), "NVRTC") ? 0 : 12;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--appliance-child")) return appliance_child(argv[2]);
    snprintf(g_self, sizeof g_self, "%s", argv[0]);
    char dir[1000];
    if (t_bin_dir(dir, sizeof dir)) snprintf(g_bin, sizeof g_bin, "%s/cache", dir);
    static const t_case cases[] = { T_CASE(test_help), T_CASE(test_warm_store_failure), T_CASE(test_warm_then_run_without_nvrtc),
                                    T_CASE(test_appliance_embeds_kernels), T_CASE(test_embed_cache),
                                    T_CASE(test_dry_run_plans_default_layouts) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
