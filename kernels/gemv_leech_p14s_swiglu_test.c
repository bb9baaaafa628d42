/* The gate|up GEMV ending in SwiGLU (kernels/gemv_leech_p14s_swiglu.c): its
 * host reference over a pair layout equals SwiGLU of the plain GEMV's
 * reference over the concatenated one; the spec refuses odd rows and
 * geometries whose row end spans more than 16 threads; on a GPU,
 * lr_call_verify (every output against the f64 reference, outputs poisoned)
 * under the tuned gate|up geometries (the split with its pair exchange, warp
 * groups, one row group per CTA, the row end fetched ahead), repeated
 * launches of the split bit-identical (its slots reset). */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/gemv_arm.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/random.h"
#include "loader/synthetic.h"
#include "rt/call.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gate and up (R rows each, distinct centroids: two class tables) as the
 * pair layout P and the concatenated layout C (C may be NULL). */
static int make_pair(int R, int cols, uint64_t seed, lr_p14s *P, lr_p14s *C)
{
    lr_leech_matrix m[2];
    for (int p = 0; p < 2; p++) T_OK(lr_leech_random_matrix(R, cols, 12, 1, p, seed + (uint64_t)p, &m[p]));
    m[1].centroid[0] *= 1.25f;
    const lr_leech_matrix *pp[2] = { &m[0], &m[1] };
    int rc = lr_p14s_unfold_pair(pp, 0, P);
    if (!rc && C) rc = lr_p14s_unfold_parts(pp, 2, 0, C);
    for (int p = 0; p < 2; p++) lr_leech_random_free(&m[p]);
    T_OK(rc);
    return T_PASS;
}

static int test_reference(void)
{
    const int R = 45, cols = 24 * 11 + 7;
    lr_p14s P, C;
    if (make_pair(R, cols, 300, &P, &C)) return T_FAIL;
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * 2 * R), *h = malloc(sizeof(float) * R),
          *m = malloc(sizeof(float) * R);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, 301, 1.0);
    lr_gemv_leech_p14s_host(C.data, C.tab, C.row_scale, C.tail_f16, C.exc_ptr, C.exc_col, C.exc_dw, x, y, 2 * R, cols);
    lr_gemv_leech_p14s_swiglu_host(P.data, P.tab, P.row_scale, P.tail_f16, P.exc_ptr, P.exc_col, P.exc_dw, x, h, 2 * R,
                                   cols);
    lr_gemv_leech_p14s_swiglu_host_mag(P.data, P.tab, P.row_scale, P.tail_f16, P.exc_ptr, P.exc_col, P.exc_dw, x, m,
                                       2 * R, cols);
    int nonzero = 0;
    for (int i = 0; i < R; i++) {
        const double g = y[i], u = y[R + i], want = g / (1.0 + exp(-g)) * u;
        T_ASSERT(h[i] == (float)want, "row %d: %.9g, want %.9g", i, h[i], want);
        T_ASSERT(m[i] >= fabsf(h[i]) * 0.999f && isfinite(m[i]), "row %d: magnitude %g below |h| %g", i, m[i], h[i]);
        nonzero += h[i] != 0.f;
    }
    T_ASSERT(nonzero > R / 2, "only %d of %d outputs nonzero", nonzero, R);
    free(x), free(y), free(h), free(m);
    lr_p14s_free(&P), lr_p14s_free(&C);
    return T_PASS;
}

static int test_spec(void)
{
    lr_jit_spec s;
    lr_launch_geom g;
    const lr_leech_geom plain = { .threads = 128, .rg = 1, .prefetch = 1 };
    T_OK(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 7168, 5120, 1206, plain, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "swiglu", 0) == 1, "no swiglu key");
    T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 7167, 5120, 1206, plain, 232448) == LR_EINVAL &&
                 strstr(lr_errmsg(), "7167"),
             "odd rows: %s", lr_errmsg());
    /* 768 threads over one row group: 32 threads per row, a pair spans two warps */
    const lr_leech_geom wide = { .threads = 768, .rg = 1, .prefetch = 1 };
    T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 7168, 5120, 1206, wide, 232448) == LR_EUNSUPPORTED &&
                 strstr(lr_errmsg(), "16"),
             "32 threads per row: %s", lr_errmsg());
    lr_clear_error();
    /* the tuned gate|up shapes of every Qwen3 size take it */
    lr_tuning_set_target("NVIDIA H200", 90);
    const int shapes[][2] = { { 19456, 2560 }, { 24576, 4096 }, { 34816, 5120 }, { 51200, 5120 } };
    for (int i = 0; i < 4; i++)
        T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, shapes[i][0], shapes[i][1], 1206,
                                                lr_gemv_leech_p14s_default_geom(shapes[i][0], shapes[i][1]),
                                                232448) == LR_OK,
                 "%dx%d: %s", shapes[i][0], shapes[i][1], lr_errmsg());
    lr_tuning_set_target("", 0);
    /* the GPU arm test's split geometries (test_gpu_arm), as the arm applies its knobs */
    const int k0[LR_TUNE_KNOBS] = { 736, 1, 2, 1, 1, 1, 0, 0, 68608, 0 }, k1[LR_TUNE_KNOBS] = { 768, 1, 2, 1, 1, 1, 0, 0, 265216, 0 };
    lr_leech_geom a0 = plain, a1 = plain;
    lr_gemv_leech_p14s_apply_knobs(&a0, k0), lr_gemv_leech_p14s_apply_knobs(&a1, k1);
    T_ASSERT(a0.side == 1 && a0.bal == 2 && a1.side == 4, "knobs: side %d bal %d, side %d", a0.side, a0.bal, a1.side);
    T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 4400, 1000, 1206, a0, 232448) == LR_OK, "4400 x 1000, 736 + 1: %s", lr_errmsg());
    T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 4400, 1024, 1206, a1, 232448) == LR_OK, "4400 x 1024, 768 + 4: %s", lr_errmsg());
    T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 2000, 1000, 1206, a0, 232448) == LR_EUNSUPPORTED, "2000 rows at 736: one row group per CTA, 32 threads a row");
    lr_clear_error();
    return T_PASS;
}

/* The SwiGLU kernel's geometry: its own tuning row where there is one,
 * else the plain GEMV's (here both given by LEECHRT_TUNE's override, which
 * the lookup reads ahead of the table). */
static int test_default_geom_swiglu(void)
{
    T_OK(lr_tuning_override_set("test", "leech_p14s:2000x960=256/1/2/1/1/1/0/0/1/0"));
    lr_leech_geom g = lr_gemv_leech_p14s_default_geom_swiglu(2000, 960);
    T_ASSERT(g.threads == 256 && g.xw == 1 && g.side == 0, "fallback: threads %d xw %d side %d", g.threads, g.xw, g.side);
    T_OK(lr_tuning_override_set("test", "leech_p14s:2000x960=256/1/2/1/1/1/0/0/1/0;"
                                        "leech_p14s_swiglu:2000x960=736/1/2/1/1/1/0/0/68608/0"));
    g = lr_gemv_leech_p14s_default_geom_swiglu(2000, 960);
    T_ASSERT(g.threads == 736 && g.side == 1 && g.bal == 2 && g.xw == 0, "own row: threads %d side %d bal %d xw %d",
             g.threads, g.side, g.bal, g.xw);
    g = lr_gemv_leech_p14s_default_geom(2000, 960);
    T_ASSERT(g.threads == 256, "the plain GEMV took the SwiGLU row (threads %d)", g.threads);
    T_OK(lr_tuning_override_set("test", ""));
    return T_PASS;
}

/* ---- GPU ---- */

static int verify(int R, int cols, lr_leech_geom geom, uint64_t seed, int launches)
{
    lr_p14s P;
    if (make_pair(R, cols, seed, &P, NULL)) return T_FAIL;
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_p14s_spec_swiglu(&spec, &g, 2 * R, cols, P.nentries, geom, lr_cu_smem_budget()));
    T_OK(lr_jit_get(&spec, &fn));
    float *x = malloc(sizeof(float) * cols), *h = malloc(sizeof(float) * R), *h0 = malloc(sizeof(float) * R);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, seed * 5 + 1, 1.0);
    lr_arg a[11];
    lr_gemv_leech_p14s_args(&P, x, h, a);
    a[8].count = (size_t)R; /* h: one value per gate/up pair */
    int rc = LR_OK, same = 1;
    double worst = 0;
    for (int l = 0; l < launches && !rc; l++) {
        lr_verify_report rep;
        rc = lr_call_verify(&lr_gemv_leech_p14s_swiglu_desc, fn, a, g, LR_GEMV_LEECH_TOL, &rep);
        if (rep.max_rel_err > worst) worst = rep.max_rel_err;
        if (!rc && l == 0) memcpy(h0, h, sizeof(float) * R);
        else if (!rc) same &= !memcmp(h0, h, sizeof(float) * R);
    }
    printf("    %5d x %5d threads=%d groups=%d bal=%d epf=%d grid %u: %d launches, max rel err %.2e%s\n", 2 * R, cols,
           geom.threads, geom.groups, (int)lr_jit_spec_get(&spec, "bal", 0), geom.epf, g.grid.x, launches, worst,
           launches > 1 ? (same ? ", bit-identical" : ", DIFFER") : "");
    free(x), free(h), free(h0);
    lr_p14s_free(&P);
    T_OK(rc);
    T_ASSERT(same, "repeated launches differ");
    return T_PASS;
}

static int test_gpu_geometries(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_cu_set_smem_budget(0);
    const lr_leech_geom split = { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1,
                                  .bal = 2, .ilv = 1, .pro = 1, .early = 1 };
    const lr_leech_geom split_epf = { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1,
                                      .shr = 1, .bal = 2, .early = 1 };
    const lr_leech_geom bal1 = { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1,
                                 .bal = 1, .ilv = 1, .pro = 1, .early = 1 };
    const lr_leech_geom groups = { .threads = 192, .rg = 2, .prefetch = 2, .nacc = 1, .persist = 1, .epf = 1, .groups = 3 };
    const lr_leech_geom plain = { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .xw = 1, .shr = 1, .early = 1 };
    if (verify(17408, 5120, split, 500, 3)) return T_FAIL; /* 14B gate|up, its tuned geometry */
    if (verify(17408, 5120, split_epf, 501, 2)) return T_FAIL;
    if (verify(9728, 2560, bal1, 502, 2)) return T_FAIL; /* 4B's: whole row groups per CTA */
    if (verify(45, 1001, groups, 503, 1)) return T_FAIL;  /* odd columns, rows past the last group */
    if (verify(1000, 600, plain, 504, 1)) return T_FAIL;
    if (verify(1, 24, plain, 505, 1)) return T_FAIL;
    return T_PASS;
}

/* The benchmark and tuning arm leech_p14s_swiglu: prepare (gate and up drawn
 * over the ball or class-uniform, a pair layout) and verify every output
 * against the SwiGLU reference, at a side-warp split geometry and a plain one. */
static int test_gpu_arm(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_cu_set_smem_budget(0);
    /* 4400 rows give the split 2+ row groups per CTA, so a row's end has at
     * most 16 threads (test_spec checks these geometries on the CPU) */
    const struct { int rows, cols; lr_gemv_arm_opts o; } c[3] = {
        { 4400, 1000, { 736, 1, 2, 1, { 1, 1, 0, 68608, 0 }, 0, 1, NULL } },  /* split + ilv, 1 side warp, ball */
        { 4400, 1024, { 768, 1, 2, 1, { 1, 1, 0, 265216, 0 }, 0, 0, NULL } }, /* 4 side warps, class-uniform */
        { 2032, 1048, { 128, 1, 2, 1, { 1, -1, -1, 1, 0 }, 0, 1, NULL } },   /* one row group per CTA, x per warp */
    };
    for (int i = 0; i < 3; i++) {
        void *st = NULL;
        double err = -1;
        int rc = lr_arm_leech_p14s_swiglu.prepare(c[i].rows, c[i].cols, 1, 900 + (uint64_t)i, &c[i].o, &st);
        lr_gemv_arm_io io = { 0 };
        if (!rc) rc = lr_arm_leech_p14s_swiglu.verify(st, 901 + (uint64_t)i, &err, &io);
        /* the arm's own launch (the timed path) on the verify's x, into poisoned outputs:
           the verified rows / 2 values bit for bit (a "finite, mostly nonzero" check passed
           a launch that wrote nothing over a reused verified buffer) */
        const int n = c[i].rows / 2;
        CUdeviceptr dx = 0, dh = 0;
        int checked = 0;
        if (!rc && io.ny != (size_t)n) rc = LR_FAIL(LR_EVERIFY, "the arm hands over %zu outputs, not %d", io.ny, n);
        if (!rc) rc = lr_cu_alloc(&dx, sizeof(float) * (size_t)c[i].cols);
        if (!rc) rc = lr_cu_alloc(&dh, sizeof(float) * (size_t)n);
        if (!rc) rc = lr_gemv_arm_check_launch(&lr_arm_leech_p14s_swiglu, st, 1, &io, dx, dh, &checked);
        if (dx) lr_cu_free(dx);
        if (dh) lr_cu_free(dh);
        lr_gemv_arm_io_free(&io);
        if (st) lr_arm_leech_p14s_swiglu.destroy(st);
        printf("    arm case %d: %d x %d, max rel err %.2e, its launch's %d outputs equal to the verified ones\n", i,
               c[i].rows, c[i].cols, err, n);
        T_OK(rc);
        T_ASSERT(checked == 1, "case %d: the launch was not compared", i);
    }
    void *st = NULL;
    T_ASSERT(lr_arm_leech_p14s_swiglu.prepare(2001, 960, 1, 9, &c[2].o, &st) == LR_EINVAL && !st && strstr(lr_errmsg(), "2001"),
             "odd rows: %s", lr_errmsg());
    lr_clear_error();
    return T_PASS;
}

/* The arms on a model's weights (tune_gemv --model): a synthetic model's
 * layer-0 gate|up pair through the SwiGLU arm and its q|k|v through the
 * plain one, each verified against the f64 reference; the sweep geometry
 * of 1 and of 4 side warps. */
static int test_gpu_arm_model(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    char dir[] = "/tmp/lr-swiglu-model.XXXXXX", path[64];
    T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/m.lrt", dir);
    lr_model_config cfg;
    T_OK(lr_synth_config("0.6B", &cfg)); /* gate|up 6144 x 1024: the sweep geometries fit (tiny's 1536 rows do not) */
    lr_synth_opts so = { .seed = 11, .gain_bits = 1 };
    T_OK(lr_synth_write(path, &cfg, &so));
    const int ff2 = 2 * (int)cfg.intermediate, h = (int)cfg.hidden, qkv = (int)((cfg.n_heads + 2 * cfg.n_kv_heads) * cfg.head_dim);
    const struct { const lr_gemv_arm *arm; int rows, cols, extra3; } c[] = {
        { &lr_arm_leech_p14s_swiglu, ff2, h, 68608 }, { &lr_arm_leech_p14s_swiglu, ff2, h, 265216 },
        { &lr_arm_leech_p14s, qkv, h, 65537 },
    };
    int rc = LR_OK;
    for (size_t i = 0; i < sizeof c / sizeof c[0] && !rc; i++) {
        lr_gemv_arm_opts o = { 768, 1, 2, 1, { 1, 1, 0, c[i].extra3, 0 }, 0, 0, path };
        if (c[i].arm == &lr_arm_leech_p14s) o.threads = 128, o.extra[1] = -1;
        void *st = NULL;
        double err = -1;
        rc = c[i].arm->prepare(c[i].rows, c[i].cols, 2, 1, &o, &st);
        if (!rc) rc = c[i].arm->verify(st, 3, &err, NULL);
        if (st) c[i].arm->destroy(st);
        printf("    %s on %s's layer 0: %d x %d, extra3 %d, max rel err %.2e\n", c[i].arm->name, cfg.name, c[i].rows,
               c[i].cols, c[i].extra3, err);
    }
    unlink(path), rmdir(dir);
    T_OK(rc);
    return T_PASS;
}

T_MAIN(T_CASE(test_reference), T_CASE(test_spec), T_CASE(test_default_geom_swiglu), T_CASE(test_gpu_geometries),
       T_CASE(test_gpu_arm), T_CASE(test_gpu_arm_model))
