/* The published Leech GEMVs (Planes14 record, Planes12x, Slot32): the host
 * reference against a dense f64 reconstruction from the codec, the ffi path
 * against a direct call, the specialization's bounds; on a GPU,
 * lr_call_verify on every Qwen3 projection shape, odd shapes, two
 * geometries and the arms. */
#include "jit/jit.h"
#include "kernels/gemv_leech_rec.h"
#include "kernels/kernels.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/random.h"
#include "rt/call.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>

static const char *NAME[3] = { "planes14", "planes12x", "slot32" };

static int make(int kind, int rows, int cols, uint64_t seed, lr_rec *L)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(rows, cols, 12, 1, 0, seed, &m));
    int rc = kind == LR_REC_P14 ? lr_rec14_unfold(&m, 0, L) : kind == LR_REC_P12X ? lr_p12x_unfold(&m, 0, L)
                                                                                   : lr_slot32_unfold(&m, 0, L);
    lr_leech_random_free(&m);
    T_OK(rc);
    return T_PASS;
}

static int test_reference_vs_dense(void)
{
    int shapes[][2] = { { 37, 24 * 13 + 7 }, { 16, 24 * 40 }, { 5, 24 * 30 + 23 } };
    for (int kind = 0; kind < 3; kind++)
        for (int s = 0; s < 3; s++) {
            int rows = shapes[s][0], cols = shapes[s][1];
            lr_rec L;
            if (make(kind, rows, cols, 100 + s, &L)) return T_FAIL;
            float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *mag = malloc(sizeof(float) * rows);
            lr_rng r;
            lr_rng_seed(&r, 7 + s);
            lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1.0);
            lr_arg a[13];
            lr_gemv_leech_rec_args(&L, x, y, a);
            lr_gemv_leech_rec_host(kind, 0, a[0].host, a[1].host, a[2].host, a[3].host, a[4].host, L.tab, L.gscale,
                                   L.row_scale, a[8].host, x, y, rows, cols);
            lr_gemv_leech_rec_host(kind, 1, a[0].host, a[1].host, a[2].host, a[3].host, a[4].host, L.tab, L.gscale,
                                   L.row_scale, a[8].host, x, mag, rows, cols);
            double worst = 0;
            for (int i = 0; i < rows; i++) {
                double d = 0;
                for (int b = 0; b < L.nblk; b++) {
                    double w[24];
                    T_OK(lr_rec_get_f64(&L, i, b, w));
                    for (int k = 0; k < 24; k++) d += w[k] * x[24 * b + k];
                }
                for (int j = 0; j < L.tail; j++)
                    d += (double)lr_half_to_float(L.tail_f16[(size_t)i * L.tail + j]) * x[24 * L.nblk + j];
                double e = fabs(d - y[i]) / mag[i];
                if (e > worst) worst = e;
                /* f32 table values (one rounding each) and the f32 result */
                T_ASSERT(e < 1e-6, "%s %dx%d row %d: reference %g, dense %g (rel %g)", NAME[kind], rows, cols, i, y[i], d, e);
            }
            printf("    %s %dx%d: reference vs dense max rel %.2e\n", NAME[kind], rows, cols, worst);
            free(x), free(y), free(mag);
            lr_rec_free(&L);
        }
    return T_PASS;
}

static int test_ffi_matches_direct(void)
{
    for (int kind = 0; kind < 3; kind++) {
        lr_rec L;
        if (make(kind, 21, 24 * 11 + 3, 5, &L)) return T_FAIL;
        float x[267], y1[21], y2[21];
        lr_rng r;
        lr_rng_seed(&r, 11);
        lr_fill_random(LR_E_F32, x, 267, &r, 1.0);
        lr_arg a[13];
        lr_gemv_leech_rec_args(&L, x, y1, a);
        T_OK(lr_call_host(&lr_gemv_leech_rec_desc[kind], a));
        lr_gemv_leech_rec_host(kind, 0, a[0].host, a[1].host, a[2].host, a[3].host, a[4].host, L.tab, L.gscale,
                               L.row_scale, a[8].host, x, y2, 21, 267);
        T_ASSERT(!memcmp(y1, y2, sizeof y1), "%s: ffi and direct calls differ", NAME[kind]);
        lr_rec_free(&L);
    }
    return T_PASS;
}

static int test_spec_bounds(void)
{
    lr_jit_spec s;
    lr_launch_geom g;
    lr_rec_geom geom = lr_gemv_leech_rec_default_geom();
    T_OK(lr_gemv_leech_rec_spec(&s, &g, LR_REC_P12X, 5121, 5120, geom));
    T_ASSERT(g.grid.x == 641 && g.block.x == 256 && g.smem == 0, "grid %u block %u", g.grid.x, g.block.x);
    geom.tile = 513;
    T_ASSERT(lr_gemv_leech_rec_spec(&s, &g, 0, 64, 240, geom) == LR_EINVAL, "tile past 48 KB accepted");
    geom.tile = 128, geom.threads = 48;
    T_ASSERT(lr_gemv_leech_rec_spec(&s, &g, 0, 64, 240, geom) == LR_EINVAL, "bad geometry accepted");
    geom.threads = 256;
    T_ASSERT(lr_gemv_leech_rec_spec(&s, &g, 3, 64, 240, geom) == LR_EINVAL, "kind 3 accepted");
    lr_clear_error();
    int n;
    const lr_gemv_arm *const *arms = lr_gemv_arms(&n);
    (void)arms;
    T_ASSERT(lr_gemv_arm_find("leech_p14rec") && lr_gemv_arm_find("leech_p12x") && lr_gemv_arm_find("leech_slot32"),
             "arms not registered");
    return T_PASS;
}

/* ---- GPU ---- */

static int verify_shape(int kind, int rows, int cols, lr_rec_geom geom, uint64_t seed)
{
    lr_rec L;
    if (make(kind, rows, cols, seed, &L)) return T_FAIL;
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_rec_spec(&spec, &g, kind, rows, cols, geom));
    T_OK(lr_jit_get(&spec, &fn));
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows);
    lr_rng r;
    lr_rng_seed(&r, seed * 3 + 1);
    lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1.0);
    lr_arg a[13];
    lr_gemv_leech_rec_args(&L, x, y, a);
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_rec_desc[kind], fn, a, g, LR_GEMV_LEECH_REC_TOL, &rep);
    printf("    %s %5d x %5d threads=%d tile=%d (%u exceptions): max rel err %.2e\n", NAME[kind], rows, cols, geom.threads,
           geom.tile, L.nexc, rep.max_rel_err);
    free(x), free(y);
    lr_rec_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int test_gpu_qwen3_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    for (int kind = 0; kind < 3; kind++)
        for (int i = 0; i < lr_qwen3_nshapes; i++) {
            const lr_shape *s = &lr_qwen3_shapes[i];
            if (verify_shape(kind, s->rows, s->cols, lr_gemv_leech_rec_default_geom(), 1000 + i)) {
                fprintf(stderr, "    at %s %s %s\n", NAME[kind], s->model, s->matrix);
                return T_FAIL;
            }
        }
    return T_PASS;
}

static int test_gpu_odd_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    /* rows not a multiple of 8, cols not a multiple of 24, fewer blocks than
     * a warp, more than one x tile with a partial last one */
    int shapes[][2] = { { 1, 24 }, { 7, 25 }, { 77, 1001 }, { 129, 24 * 7 }, { 1000, 24 * 130 + 23 }, { 5121, 17408 + 5 } };
    lr_rec_geom geoms[] = { { 256, 128 }, { 128, 32 }, { 1024, 7 } };
    for (int kind = 0; kind < 3; kind++)
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < (i == 4 ? 3 : 1); k++)
                if (verify_shape(kind, shapes[i][0], shapes[i][1], geoms[k], 2000 + i)) return T_FAIL;
    return T_PASS;
}

static int test_gpu_arms(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const lr_gemv_arm *arms[3] = { &lr_arm_leech_p14rec, &lr_arm_leech_p12x, &lr_arm_leech_slot32 };
    for (int k = 0; k < 3; k++) {
        void *st;
        T_OK(arms[k]->prepare(1024, 5120, 2, 42, NULL, &st));
        double err;
        T_OK(arms[k]->verify(st, 43, &err, NULL));
        size_t want = (size_t)(1024.0 * 5120 * 4.0 / 8);
        T_ASSERT(arms[k]->bytes(st) > want, "%s: bytes %zu", arms[k]->name, arms[k]->bytes(st));
        CUdeviceptr x, y;
        T_OK(lr_cu_alloc(&x, 5120 * 4));
        T_OK(lr_cu_alloc(&y, 1024 * 4));
        T_OK(arms[k]->launch(st, 1, x, y, NULL));
        T_OK(lr_cu_sync());
        lr_cu_free(x), lr_cu_free(y);
        printf("    %s: verify %.2e, %zu bytes\n", arms[k]->name, err, arms[k]->bytes(st));
        arms[k]->destroy(st);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_reference_vs_dense), T_CASE(test_ffi_matches_direct), T_CASE(test_spec_bounds),
       T_CASE(test_gpu_qwen3_shapes), T_CASE(test_gpu_odd_shapes), T_CASE(test_gpu_arms))
