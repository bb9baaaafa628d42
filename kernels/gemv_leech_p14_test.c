/* Planes14 GEMV: the host reference against a dense f64 reconstruction from
 * the codec, the ffi path against a direct call, the specialization's
 * bounds; on a GPU, lr_call_verify on every Qwen3 projection shape, odd
 * shapes and row-concatenated (fused q/k/v, gate/up) shapes. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/kernels.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/p14.h"
#include "layouts/leech_vram/random.h"
#include "rt/call.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>

static int make(int rows, int cols, uint64_t seed, lr_p14 *L, lr_leech_matrix *m)
{
    T_OK(lr_leech_random_matrix(rows, cols, 12, 1, 0, seed, m));
    T_OK(lr_p14_unfold(m, 0, L));
    return T_PASS;
}

static void args_for(lr_p14 *L, float *x, float *y, uint16_t *one, lr_arg a[8])
{
    memset(a, 0, 8 * sizeof *a);
    a[0].host = L->data, a[0].count = L->bytes;
    a[1].host = L->tab, a[1].count = (size_t)L->nentries * 16;
    a[2].host = L->row_scale, a[2].count = (size_t)L->rows;
    a[3].host = L->tail ? (void *)L->tail_f16 : one, a[3].count = L->tail ? (size_t)L->rows * L->tail : 1;
    a[4].host = x, a[4].count = (size_t)L->cols;
    a[5].host = y, a[5].count = (size_t)L->rows;
    a[6].v.i32 = L->rows;
    a[7].v.i32 = L->cols;
}

static int test_reference_vs_dense(void)
{
    int shapes[][2] = { { 37, 24 * 13 + 7 }, { 16, 24 * 8 }, { 5, 24 * 30 + 23 } };
    for (int s = 0; s < 3; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        lr_p14 L;
        lr_leech_matrix m;
        if (make(rows, cols, 100 + s, &L, &m)) return T_FAIL;
        float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *mag = malloc(sizeof(float) * rows);
        lr_rng r;
        lr_rng_seed(&r, 7 + s);
        lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1.0);
        lr_gemv_leech_p14_host(L.data, L.tab, L.row_scale, L.tail_f16, x, y, rows, cols);
        lr_gemv_leech_p14_host_mag(L.data, L.tab, L.row_scale, L.tail_f16, x, mag, rows, cols);
        double worst = 0;
        for (int i = 0; i < rows; i++) {
            double d = 0;
            for (int b = 0; b < L.nblk; b++) {
                double w[24];
                T_OK(lr_p14_get_f64(&L, m.centroid, i, b, w));
                for (int k = 0; k < 24; k++) d += w[k] * x[24 * b + k];
            }
            for (int j = 0; j < L.tail; j++) d += (double)lr_half_to_float(m.tail_f16[(size_t)i * L.tail + j]) * x[24 * L.nblk + j];
            double e = fabs(d - y[i]) / mag[i];
            if (e > worst) worst = e;
            /* f16 weights and activations: at most ~2^-11 each, relative to sum |w x| */
            T_ASSERT(e < 1.5e-3, "shape %dx%d row %d: reference %g, dense %g (rel %g)", rows, cols, i, y[i], d, e);
        }
        printf("    %dx%d: reference vs dense max rel %.2e\n", rows, cols, worst);
        free(x), free(y), free(mag);
        lr_p14_free(&L);
        lr_leech_random_free(&m);
    }
    return T_PASS;
}

static int test_ffi_matches_direct(void)
{
    lr_p14 L;
    lr_leech_matrix m;
    if (make(21, 24 * 11 + 3, 5, &L, &m)) return T_FAIL;
    float x[267], y1[21], y2[21];
    uint16_t one = 0;
    lr_rng r;
    lr_rng_seed(&r, 11);
    lr_fill_random(LR_E_F32, x, 267, &r, 1.0);
    lr_arg a[8];
    args_for(&L, x, y1, &one, a);
    T_OK(lr_call_host(&lr_gemv_leech_p14_desc, a));
    lr_gemv_leech_p14_host(L.data, L.tab, L.row_scale, L.tail_f16, x, y2, 21, 267);
    T_ASSERT(!memcmp(y1, y2, sizeof y1), "ffi and direct calls differ");
    lr_p14_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

static int test_spec_bounds(void)
{
    lr_jit_spec s;
    lr_launch_geom g;
    lr_leech_geom geom = lr_gemv_leech_p14_default_geom(5120, 5120);
    T_OK(lr_gemv_leech_p14_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 && g.block.x == 256, "grid %u block %u", g.grid.x, g.block.x);
    T_ASSERT(lr_gemv_leech_p14_spec(&s, &g, 5120, 25600, 603, geom, 20000) == LR_ERANGE, "budget ignored");
    geom.threads = 48;
    T_ASSERT(lr_gemv_leech_p14_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bad geometry accepted");
    /* the cp.async rings count against the budget: 32 warps x 8 stages x 1792 B */
    lr_leech_geom ring = { .threads = 1024, .rg = 1, .prefetch = 8 };
    T_ASSERT(lr_gemv_leech_p14_spec(&s, &g, 5120, 5120, 603, ring, 232448) == LR_ERANGE, "ring over budget accepted");
    ring.threads = 256, ring.prefetch = 3;
    T_OK(lr_gemv_leech_p14_spec(&s, &g, 5120, 5120, 603, ring, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 8 * 16 * 4 + 8 * 3 * 1792, "ring smem %u", g.smem);
    ring.prefetch = 1, ring.nacc = 5;
    T_ASSERT(lr_gemv_leech_p14_spec(&s, &g, 5120, 5120, 603, ring, 232448) == LR_EINVAL, "nacc 5 accepted");
    ring.nacc = 0, ring.prefetch = 9;
    T_ASSERT(lr_gemv_leech_p14_spec(&s, &g, 5120, 5120, 603, ring, 232448) == LR_EINVAL, "prefetch 9 accepted");
    ring.prefetch = 1, ring.persist = 2;
    T_OK(lr_gemv_leech_p14_spec(&s, &g, 34816, 5120, 603, ring, 232448));
    T_ASSERT(g.grid.x <= 2176 && g.grid.x >= 2, "persistent grid %u", g.grid.x);
    lr_clear_error();
    return T_PASS;
}

/* ---- GPU ---- */

/* grid > 0 caps the grid (the kernel loops over row-group batches, so any
 * grid must give the same result). */
static int verify_grid(int rows, int cols, lr_leech_geom geom, uint64_t seed, unsigned grid)
{
    lr_p14 L;
    lr_leech_matrix m;
    if (make(rows, cols, seed, &L, &m)) return T_FAIL;
    lr_leech_random_free(&m);
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_p14_spec(&spec, &g, rows, cols, L.nentries, geom, lr_cu_smem_budget()));
    T_OK(lr_jit_get(&spec, &fn));
    if (grid && g.grid.x > grid) g.grid.x = grid;
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows);
    uint16_t one = 0;
    lr_rng r;
    lr_rng_seed(&r, seed * 3 + 1);
    lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1.0);
    lr_arg a[8];
    args_for(&L, x, y, &one, a);
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_p14_desc, fn, a, g, LR_GEMV_LEECH_TOL, &rep);
    printf("    %5d x %5d threads=%d rg=%d persist=%d grid=%u: max rel err %.2e\n", rows, cols, geom.threads, geom.rg,
           geom.persist, g.grid.x, rep.max_rel_err);
    free(x), free(y);
    lr_p14_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int verify_shape(int rows, int cols, lr_leech_geom geom, uint64_t seed)
{
    return verify_grid(rows, cols, geom, seed, 0);
}

static int test_gpu_qwen3_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    for (int i = 0; i < lr_qwen3_nshapes; i++) {
        const lr_shape *s = &lr_qwen3_shapes[i];
        if (verify_shape(s->rows, s->cols, lr_gemv_leech_p14_default_geom(s->rows, s->cols), 1000 + i)) {
            fprintf(stderr, "    at %s %s\n", s->model, s->matrix);
            return T_FAIL;
        }
    }
    return T_PASS;
}

static int test_gpu_odd_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    /* rows not a multiple of 8 or 16, cols not a multiple of 24, fewer
     * blocks than one super-chunk, fused q/k/v (7168 = 5120 + 2 x 1024) and
     * gate/up (34816) row concatenations */
    int shapes[][2] = { { 1, 24 }, { 7, 25 }, { 77, 1001 }, { 129, 24 * 7 }, { 1000, 24 * 8 * 3 + 23 },
                        { 7168, 5120 }, { 34816, 5120 }, { 5121, 17408 + 5 } };
    for (int i = 0; i < 8; i++)
        if (verify_shape(shapes[i][0], shapes[i][1], lr_gemv_leech_p14_default_geom(shapes[i][0], shapes[i][1]), 2000 + i))
            return T_FAIL;
    return T_PASS;
}

static int test_gpu_geometries(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    /* prefetch 0 (none), 1 (registers), 2..4 (cp.async ring stages) */
    lr_leech_geom gs[] = { { .threads = 128, .rg = 1 },
                           { .threads = 256, .rg = 2, .prefetch = 1 },
                           { .threads = 512, .rg = 1, .prefetch = 1 },
                           { .threads = 64, .rg = 4, .prefetch = 1 },
                           { .threads = 256, .rg = 3 },
                           { .threads = 256, .rg = 1, .prefetch = 2 },
                           { .threads = 256, .rg = 1, .prefetch = 3 },
                           { .threads = 128, .rg = 2, .prefetch = 4 },
                           { .threads = 512, .rg = 3, .prefetch = 2 },
                           { .threads = 256, .rg = 1, .prefetch = 1, .tabg = 1 },
                           { .threads = 128, .rg = 2, .tabg = 1 },
                           { .threads = 256, .rg = 1, .prefetch = 3, .tabg = 1 }, /* the three before: class table via L1 */
                           { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 2 },
                           { .threads = 256, .rg = 2, .prefetch = 1, .nacc = 3 },
                           { .threads = 256, .rg = 1, .prefetch = 3, .nacc = 4 },
                           { .threads = 128, .rg = 1, .tabg = 1, .nacc = 2 }, /* the last four: 2-4 accumulator chains */
                           { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .minb = 8 },
                           { .threads = 256, .rg = 2, .prefetch = 1, .minb = 4 } }; /* registers capped (spills) */
    for (int i = 0; i < 18; i++)
        if (verify_shape(1000, 5120 + 24 * 3 + 1, gs[i], 3000 + i)) return T_FAIL;
    return T_PASS;
}

/* Persistent grids: CTAs looping over several row-group batches, the
 * double-buffered reduction and the prefetch across batch boundaries. */
static int test_gpu_persistent(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    struct { int rows, cols; lr_leech_geom g; unsigned grid; } c[] = {
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rg = 1, .prefetch = 1, .persist = 1 }, 7 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 2, .persist = 1 }, 3 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rg = 3, .prefetch = 1, .persist = 2 }, 5 },
        { 333, 1001, { .threads = 512, .rg = 1, .prefetch = 1, .persist = 1 }, 1 },   /* one CTA does everything */
        { 77, 48, { .threads = 1024, .rg = 1, .prefetch = 1, .persist = 1 }, 2 },     /* more warps than super-chunks */
        { 34816, 5120, { .threads = 256, .rg = 1, .prefetch = 1, .persist = 2 }, 0 }, /* the fused gate|up, 2 CTAs per SM */
        { 5121, 17413, { .threads = 256, .rg = 1, .prefetch = 1, .persist = 3 }, 0 },
        /* rings refilled across batch boundaries */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rg = 1, .prefetch = 3, .persist = 1 }, 7 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 2, .prefetch = 2, .persist = 1 }, 3 },
        { 333, 1001, { .threads = 512, .rg = 1, .prefetch = 4, .persist = 1 }, 1 },
        { 77, 48, { .threads = 256, .rg = 1, .prefetch = 3, .persist = 1 }, 2 },
        { 34816, 5120, { .threads = 256, .rg = 1, .prefetch = 3, .persist = 3 }, 0 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rg = 1, .prefetch = 1, .tabg = 1, .persist = 1 }, 7 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 2, .prefetch = 1, .nacc = 2, .persist = 1 }, 5 },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (verify_grid(c[i].rows, c[i].cols, c[i].g, 4000 + i, c[i].grid)) return T_FAIL;
    return T_PASS;
}

static int test_gpu_arm(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    void *st;
    T_OK(lr_arm_leech_p14.prepare(1024, 5120, 2, 42, NULL, &st));
    double err;
    T_OK(lr_arm_leech_p14.verify(st, 43, &err, NULL));
    T_ASSERT(lr_arm_leech_p14.bytes(st) > (size_t)1024 * 5120 * 4.6 / 8, "bytes %zu", lr_arm_leech_p14.bytes(st));
    lr_arm_leech_p14.destroy(st);
    return T_PASS;
}

T_MAIN(T_CASE(test_reference_vs_dense), T_CASE(test_ffi_matches_direct), T_CASE(test_spec_bounds),
       T_CASE(test_gpu_qwen3_shapes), T_CASE(test_gpu_odd_shapes), T_CASE(test_gpu_geometries), T_CASE(test_gpu_persistent),
       T_CASE(test_gpu_arm))
