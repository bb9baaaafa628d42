/* cache: the cubin cache tool. list / verify / clear / trim the on-disk
 * cache, and warm it: compile every kernel the GPU engine and the benchmarks
 * need for a set of Qwen3 shapes and a named architecture, on a machine
 * without a GPU, so an appliance starts with no compile at all. */
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "kernels/gemv_leech.h"
#include "kernels/gemv_leech_rec.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/rotation.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "loader/parallel.h"
#include "util/args.h"
#include "util/err.h"
#include "util/strlist.h"
#include "util/progress.h"
#include "util/program.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: cache [--dir DIR] COMMAND [options]\n"
               "  list                     entries with size, age and validity\n"
               "  verify                   check every entry (header, key, payload hash); exit 1 if any is bad\n"
               "  clear                    remove every entry\n"
               "  trim MB                  remove least-recently-used entries down to MB megabytes\n"
               "  warm [options]           compile the kernels a model set needs (no GPU needed)\n"
               "     --arch sm_90          target architecture (default: sm_90)\n"
               "     --driver N            driver version the cubins will run under (default: this\n"
               "                           machine's driver, else 13000)\n"
               "     --device NAME         device name for the tuning table (default \"NVIDIA H200\")\n"
               "     --models LIST         Qwen3 sizes (default 4B,8B,14B,32B)\n"
               "     --smem-budget B       shared-memory budget the kernels are planned for (default 232448)\n"
               "     --threads N           parallel compiles (default: all cores)\n"
               "     --dry-run             print the kernels' names and compile nothing\n"
               "  --dir DIR                cache folder (default $LEECHRT_CACHE_DIR or ~/.cache/leechrt)\n"
               "  -h, --help\n");
}

#define MAXSPEC 1024
static lr_jit_spec g_specs[MAXSPEC];
static int g_nspecs, g_next, g_fail, g_hits;
static const char *g_arch;
static int g_driver;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static lr_progress g_prog;

static void add(const lr_jit_spec *s)
{
    char a[1024], b[1024];
    lr_jit_kernel_name(s, a, sizeof a);
    for (int i = 0; i < g_nspecs; i++) {
        lr_jit_kernel_name(&g_specs[i], b, sizeof b);
        if (!strcmp(a, b) && !strcmp(s->tmpl, g_specs[i].tmpl)) return;
    }
    if (g_nspecs < MAXSPEC) g_specs[g_nspecs++] = *s;
    else if (!g_fail++) fprintf(stderr, "cache warm: more than %d kernels; %s and later ones not planned\n", MAXSPEC, a);
}

/* The JIT does not fail a compile whose cubin it could not store (a cache is
 * an optimisation there); storing is what warming is for, so a cubin that is
 * not on disk, whole, after its compile is a failure, with the store's own
 * reason (one more try to learn it). */
static int stored(const lr_jit_spec *s, const void *cubin, size_t n)
{
    lr_key k;
    char hex[33], path[4200], name[256];
    int rc = lr_jit_key(s, g_arch, g_driver, &k);
    if (rc) return rc;
    lr_key_hex(&k, hex);
    snprintf(path, sizeof path, "%s/%s.cubin", lr_jit_cache()->dir, hex);
    if (lr_cache_check_file(path, &k) == LR_OK) return LR_OK;
    lr_jit_kernel_name(s, name, sizeof name);
    if (lr_jit_cache()->disabled || lr_jit_cache()->readonly)
        return LR_FAIL(LR_EIO, "%s: compiled, not stored: the cache folder %s cannot be written", name, lr_jit_cache()->dir);
    rc = lr_cache_put(lr_jit_cache(), &k, cubin, n);
    return rc ? lr_wrap(rc, "%s: compiled, not stored", name) : LR_OK;
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_mu);
        int i = g_next++;
        pthread_mutex_unlock(&g_mu);
        if (i >= g_nspecs) return NULL;
        void *cubin = NULL; /* a failure before the JIT touches it leaves it so */
        size_t n;
        int hit = 0;
        int rc = lr_jit_cubin(&g_specs[i], g_arch, g_driver, &cubin, &n, &hit);
        if (rc == LR_OK && !hit) rc = stored(&g_specs[i], cubin, n);
        pthread_mutex_lock(&g_mu);
        if (rc) {
            g_fail++;
            fprintf(stderr, "cache: %s\n", lr_errmsg());
        } else {
            g_hits += hit;
        }
        free(cubin);
        pthread_mutex_unlock(&g_mu);
        lr_progress_add(&g_prog, 1);
    }
}

/* The engine's Leech GEMVs (Planes14 and Planes14S, and Planes14S's 3-bit
 * form where it is the shape's default layout on the device) of one shape:
 * their class-table size is a compile-time constant, lr_ctab_entries per
 * distinct gain-centroid vector among the fused parts (a real model's q, k
 * and v each have their own), for 1 and 2 gain bits: every count from one
 * table to one per part; xrot: also with the rotation in the prologue (o,
 * down). Each with the geometry lr_leech_dev_upload gives it, and with the
 * ends it gets as projection proj (LR_PROJ_*, -1: none) of a plain and of a
 * rotated-residual model (lr_leech_engine_ends, Qwen3's eps), beside the
 * plain end the benchmarks use. */
static int plan_leech_engine_at(int rows, int cols, int nparts, int xrot, lr_leech_ends ends, int budget);

/* (with the split's late weighting the engine sets: kernels/gemv_leech.h) */
static int plan_leech_engine(int rows, int cols, int nparts, int xrot, int proj, int budget)
{
    const int late = lr_gemv_p14s_late;
    lr_gemv_p14s_late = LR_ENGINE_GEMV_LATE;
    const lr_leech_ends plain = { 0, 0, 0.f, 0, 0 };
    int rc = plan_leech_engine_at(rows, cols, nparts, xrot, plain, budget);
    for (int rres = 0; rres <= 1 && !rc && proj >= 0; rres++)
        rc = plan_leech_engine_at(rows, cols, nparts, 0,
                                  lr_leech_engine_ends(proj, LR_ENGINE_GEMV_TRIGGER_FOR(rres), rres, 1,
                                                       (float)LR_QWEN3_NORM_EPS),
                                  budget);
    lr_gemv_p14s_late = late;
    return rc;
}

static int plan_leech_engine_at(int rows, int cols, int nparts, int xrot, lr_leech_ends ends, int budget)
{
    const int c3 = lr_leech_dev_default_layout(rows, cols) == LR_LEECH_DEV_P14S3;
    lr_leech_geom g14s = lr_gemv_leech_p14s_default_geom(rows, cols), g14s3 = lr_gemv_leech_p14s3_default_geom(rows, cols),
                  g14s_sw = lr_gemv_leech_p14s_default_geom_swiglu(rows, cols),
                  g14s3_sw = lr_gemv_leech_p14s3_default_geom_swiglu(rows, cols);
    g14s.ends = g14s3.ends = g14s_sw.ends = g14s3_sw.ends = ends;
    for (int gb = 1; gb <= 2; gb++) {
        int nent1, rc = lr_ctab_entries(12, gb, &nent1);
        if (rc) return rc;
        for (int t = 1; t <= nparts; t++) {
            lr_jit_spec s;
            lr_launch_geom g;
            if ((rc = lr_gemv_leech_p14_spec(&s, &g, rows, cols, t * nent1, lr_gemv_leech_p14_default_geom(rows, cols),
                                             budget)))
                return rc;
            add(&s);
            lr_leech_geom gm = g14s;
            if ((rc = lr_gemv_leech_p14s_spec_fit(&s, &g, rows, cols, t * nent1, &gm, budget, 0))) return rc;
            add(&s);
            /* (the 3-bit form's table: the same entries and their mirrors) */
            int ntab3 = 0;
            if (c3 && (rc = lr_p14s_c3_entries(12, gb, t * nent1, t, &ntab3))) return rc;
            if (c3) {
                gm = g14s3;
                if ((rc = lr_gemv_leech_p14s_spec_fit(&s, &g, rows, cols, ntab3, &gm, budget, 0))) return rc;
                add(&s);
            }
            /* gate|up (two parts) as a pair ending in SwiGLU, where the geometry allows it */
            for (int form = 0; nparts == 2 && form <= c3; form++) {
                gm = form ? g14s3_sw : g14s_sw;
                rc = lr_gemv_leech_p14s_spec_fit(&s, &g, rows, cols, form ? ntab3 : t * nent1, &gm, budget, 1);
                if (!rc) add(&s);
                else if (rc == LR_EUNSUPPORTED) lr_clear_error();
                else return rc;
            }
            /* o and down (one part) with the rotation in the prologue (LEECHRT_XROT) */
            if (xrot) {
                rc = lr_gemv_leech_p14s_spec_rot(&s, &g, rows, cols, t * nent1,
                                                 lr_gemv_leech_p14s_default_geom(rows, cols), budget);
                if (!rc) add(&s);
                else if (rc == LR_EUNSUPPORTED || rc == LR_ERANGE) lr_clear_error();
                else return rc;
            }
        }
    }
    return LR_OK;
}

/* Every kernel one model size needs: GEMVs for the 7 projections and the
 * fused q|k|v and gate|up, in the served formats (f16, Planes14, Planes14S
 * with every table count an imported model can need, I8x) and the published
 * record layouts the benchmark times beside them; rotations of every input
 * width; the decode-step ops. */
static int plan_model(int si, int budget)
{
    int R[LR_LAYER_MATRICES], C[LR_LAYER_MATRICES];
    lr_qwen3_layer_shapes(si, R, C);
    int ntab, rc = lr_ctab_entries(12, 1, &ntab);
    if (rc) return rc;
    for (int k = 0; k < 9; k++) {
        lr_jit_spec s;
        lr_launch_geom g;
        if ((rc = lr_gemv_f16_spec(&s, &g, R[k], C[k], lr_gemv_f16_default_geom(R[k], C[k]), budget, 0))) return rc;
        add(&s);
        /* q|k|v fuses three parts, gate|up two */
        const char *name = lr_layer_matrix_names[k];
        const int proj = k == 7 ? LR_PROJ_QKV : k == 8 ? LR_PROJ_GATEUP : !strcmp(name, "o") ? LR_PROJ_O
                         : !strcmp(name, "down")   ? LR_PROJ_DOWN : -1;
        if ((rc = plan_leech_engine(R[k], C[k], k == 7 ? 3 : k == 8 ? 2 : 1, proj == LR_PROJ_O || proj == LR_PROJ_DOWN,
                                    proj, budget)))
            return rc;
        if ((rc = lr_gemv_leech_i8_spec(&s, &g, R[k], C[k], ntab, lr_gemv_leech_i8_default_geom(R[k], C[k]), budget)))
            return rc;
        add(&s);
        if ((rc = lr_gemv_leech_i8_xq_spec(&s, &g, C[k], 256))) return rc;
        add(&s);
        /* the published record kernels (benchmark baselines) */
        for (int kind = 0; kind < 3; kind++) {
            if ((rc = lr_gemv_leech_rec_spec(&s, &g, kind, R[k], C[k], lr_gemv_leech_rec_default_geom()))) return rc;
            add(&s);
        }
        lr_rot_plan p;
        if ((rc = lr_rot_plan_make(C[k], budget, LR_ROT_AUTO, 0, 0, &p)) || (rc = lr_rot_plan_spec(&p, &s))) return rc;
        add(&s);
        /* the engine's rotations with the add + RMSNorm before them fused in
           (a variant over the budget is not used, so not warmed) */
        if (!lr_rot_plan_spec_xform(&p, LR_ROT_X_NORM, &s)) add(&s);
        else lr_clear_error();
    }
    static const char *ops[] = { "op_embed_int8g", "op_add_rmsnorm", "op_rope_kv", "op_attention", "op_rope_attention",
                                 "op_silu_mul", "op_head_int8g", "op_argmax" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        lr_jit_spec s;
        lr_op_spec(&s, ops[i], 128);
        add(&s);
    }
    /* the tensor-core head is specialized on the hidden width (q's columns) */
    lr_jit_spec s;
    lr_op_spec(&s, "op_head_int8g_mma", C[0]);
    add(&s);
    /* the long-context attention the engine switches to (LEECHRT_ATT_LONG) */
    lr_op_rope_attention_long_spec(&s, 128);
    add(&s);
    return LR_OK;
}

static int warm(int argc, char **argv)
{
    const char *models = "4B,8B,14B,32B", *device = "NVIDIA H200";
    int budget = 232448, threads = lr_cpu_count(), cc = 0, dry = 0;
    g_arch = "sm_90";
    g_driver = lr_cu_driver_version();
    if (!g_driver) g_driver = 13000;
    lr_clear_error();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--dry-run")) { dry = 1; continue; }
        if (!v) { fprintf(stderr, "cache warm: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--arch")) g_arch = v;
        else if (!strcmp(a, "--driver")) { if (lr_arg_int("cache warm", a, v, 1000, 1000000, &g_driver)) return 2; }
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--models")) models = v;
        else if (!strcmp(a, "--smem-budget")) { if (lr_arg_int("cache warm", a, v, 1024, 16777216, &budget)) return 2; }
        else if (!strcmp(a, "--threads")) { if (lr_arg_int("cache warm", a, v, 0, 4096, &threads)) return 2; }
        else { fprintf(stderr, "cache warm: unknown option %s\n", a); return 2; }
    }
    if (sscanf(g_arch, "sm_%d", &cc) != 1) { fprintf(stderr, "cache warm: bad --arch %s\n", g_arch); return 2; }
    /* every name in --models must be one of the shapes' (a typo, "14b" or "14B, 32B", once planned
       nothing for it and reported success: an appliance that compiles at first start) */
    const char *names[64];
    int nn = 0;
    for (int si = 0; si < lr_qwen3_nshapes && nn < 63; si += 7) names[nn++] = lr_qwen3_shapes[si].model;
    names[nn++] = "none";
    size_t len;
    const char *bad = lr_list_unknown(models, names, nn, &len);
    if (bad) {
        fprintf(stderr, "cache warm: --models: unknown model '%.*s' (names:", (int)len, bad);
        for (int k = 0; k + 1 < nn; k++) fprintf(stderr, " %s", names[k]);
        fprintf(stderr, ", or none)\n");
        return 2;
    }
    if (!dry && (lr_jit_cache()->disabled || lr_jit_cache()->readonly)) {
        fprintf(stderr, "cache warm: the cache %s is not writable: nothing would be kept\n", lr_jit_cache()->dir);
        return 1;
    }
    if (!dry && !lr_nvrtc_available()) { fprintf(stderr, "cache warm: NVRTC is needed to warm a cache\n"); return 1; }
    lr_tuning_set_target(device, cc);
    /* the down prefetch as the engine sets it on that device (kernels/gemv_leech.h) */
    lr_gemv_p14s_l2w_device_defaults(device, &lr_gemv_p14s_l2w, &lr_gemv_p14s_l2w_share);
    lr_jit_spec s;
    lr_probe_spec(&s, 512, 8);
    add(&s);
    for (int si = 0; si < lr_qwen3_nshapes; si += 7)
        if (lr_list_has(models, lr_qwen3_shapes[si].model) && plan_model(si, budget)) {
            fprintf(stderr, "cache warm: %s\n", lr_errmsg());
            return 1;
        }
    if (dry) {
        for (int i = 0; i < g_nspecs; i++) {
            char name[512];
            if (lr_jit_kernel_name(&g_specs[i], name, sizeof name)) { fprintf(stderr, "cache warm: %s\n", lr_errmsg()); return 1; }
            printf("%s\n", name);
        }
        return g_fail ? 1 : 0;
    }
    if (threads < 1) threads = lr_cpu_count(); /* 0: all cores, as elsewhere */
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    printf("warming %d kernels for %s (driver %d, %s, budget %d B) into %s\n", g_nspecs, g_arch, g_driver, device,
           budget, lr_jit_cache()->dir);
    lr_progress_start(&g_prog, "compiling", (uint64_t)g_nspecs);
    pthread_t t[64];
    int started = 0;
    while (started < threads && pthread_create(&t[started], NULL, worker, NULL) == 0) started++;
    if (!started) worker(NULL); /* no thread could start: compile here */
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    lr_progress_finish(&g_prog);
    printf("%d kernels: %d already cached, %d compiled, %d failed\n", g_nspecs, g_hits, g_nspecs - g_hits - g_fail, g_fail);
    return g_fail ? 1 : 0;
}

int main(int argc, char **argv)
{
    lr_program_init("cache");
    int i = 1;
    const char *dir = NULL;
    if (argc == 2 && !strcmp(argv[1], "--dir")) {
        fprintf(stderr, "cache: --dir needs a folder\n");
        return 2;
    }
    if (argc > 2 && !strcmp(argv[1], "--dir")) dir = argv[2], i = 3;
    if (i >= argc || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
        usage(i >= argc ? stderr : stdout);
        return i >= argc ? 2 : 0;
    }
    const char *cmd = argv[i];
    const int reads = !strcmp(cmd, "list") || !strcmp(cmd, "verify") || !strcmp(cmd, "clear");
    if ((reads && i + 1 < argc) || (!strcmp(cmd, "trim") && i + 2 < argc)) {
        fprintf(stderr, "cache %s: unexpected argument %s (see --help)\n", cmd, argv[argc - 1]);
        return 2;
    }
    struct stat st;
    if (dir && (reads || !strcmp(cmd, "trim")) && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        /* opening the cache would create it: a typo'd folder would list as empty */
        fprintf(stderr, "cache: %s: %s\n", dir, stat(dir, &st) != 0 ? "no such folder (no cache there)" : "not a folder");
        return 1;
    }
    lr_jit_set_cache_dir(dir);
    lr_cache *c = lr_jit_cache();
    if (!strcmp(cmd, "warm")) return warm(argc - i - 1, argv + i + 1);
    if (c->disabled) { fprintf(stderr, "cache: %s is not usable\n", c->dir); return 1; }
    if (!strcmp(cmd, "list") || !strcmp(cmd, "verify")) {
        lr_cache_entry *v;
        int n, bad = 0;
        uint64_t total = 0;
        if (lr_cache_list(c, &v, &n)) { fprintf(stderr, "cache: %s\n", lr_errmsg()); return 1; }
        for (int k = 0; k < n; k++) {
            total += v[k].bytes;
            bad += !v[k].valid;
            if (!strcmp(cmd, "list") || !v[k].valid)
                printf("%s %9llu B %s\n", v[k].name, (unsigned long long)v[k].bytes, v[k].valid ? "ok" : "CORRUPT");
        }
        printf("%d entries, %.1f MB, %d corrupt, in %s\n", n, total / 1e6, bad, c->dir);
        free(v);
        return bad && !strcmp(cmd, "verify") ? 1 : 0;
    }
    if (!strcmp(cmd, "clear") || !strcmp(cmd, "trim")) {
        int removed;
        uint64_t cap = 0;
        if (!strcmp(cmd, "trim")) {
            /* a bad number once read as 0 MB and emptied the cache */
            unsigned long long mb;
            if (i + 1 >= argc || lr_parse_u64(argv[i + 1], &mb) || mb > (UINT64_MAX >> 20)) {
                fprintf(stderr, "cache trim: needs a size in MB (a whole number), got '%s'\n",
                        i + 1 < argc ? argv[i + 1] : "");
                return 2;
            }
            cap = (uint64_t)mb << 20;
        }
        if (lr_cache_trim(c, cap, &removed)) { fprintf(stderr, "cache: %s\n", lr_errmsg()); return 1; }
        printf("removed %d entries from %s\n", removed, c->dir);
        return 0;
    }
    fprintf(stderr, "cache: unknown command %s\n", cmd);
    usage(stderr);
    return 2;
}
