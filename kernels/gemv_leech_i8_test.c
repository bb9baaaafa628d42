/* I8x GEMV: x's quantization, the host reference against exact dense f64
 * weights (LR_GEMV_LEECH_I8_DENSE_TOL), the ffi path against a direct call,
 * the xq records, the specialization's bounds; on a GPU, lr_call_verify at
 * LR_GEMV_LEECH_I8_TOL on every Qwen3 projection shape, odd shapes, fused
 * (row-concatenated) shapes, x with all-zero and wide-range super-chunks,
 * several launch geometries, the stand-alone x quantizer (bit-exact) and the
 * LR_XQ=1 form, and the benchmark arm in both forms. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/kernels.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/i8.h"
#include "layouts/leech_vram/random.h"
#include "rt/call.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>

static int make(int rows, int cols, uint64_t seed, lr_i8 *L, lr_leech_matrix *m)
{
    T_OK(lr_leech_random_matrix(rows, cols, 12, 1, 0, seed, m));
    T_OK(lr_i8_unfold(m, 0, L));
    return T_PASS;
}

/* x patterns: 0 uniform [-1, 1]; 1 with an all-zero super-chunk and a
 * super-chunk spanning 1e-6 .. 1e3 */
static void fill_x(float *x, int cols, uint64_t seed, int pattern)
{
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, seed, 1.0);
    if (pattern == 1) {
        for (int c = 0; c < cols && c < 192; c++) x[c] = 0;
        for (int c = 192; c < cols && c < 384; c++) x[c] *= (float)pow(10.0, -6 + 9 * ((c * 37) % 192) / 191.0);
    }
}

static int test_quantize_x(void)
{
    int cols = 24 * 8 * 3 + 24 * 5 + 7; /* a partial last super-chunk and a tail */
    float x[24 * 29 + 7];
    int32_t xi[192 * 4];
    float xs[4];
    fill_x(x, cols, 3, 1);
    lr_gemv_leech_i8_quantize_x(x, cols, xi, xs);
    int nblk = cols / 24;
    T_ASSERT(xs[0] == 0, "all-zero super-chunk scale %g", xs[0]);
    for (int sc = 0; sc < 4; sc++) {
        int top = 0;
        for (int c = sc * 192; c < sc * 192 + 192; c++) {
            if (c >= 24 * nblk) { T_ASSERT(xi[c] == 0, "pad column %d", c); continue; }
            T_ASSERT(abs(xi[c]) <= LR_I8_X_RANGE, "range");
            if (abs(xi[c]) > top) top = abs(xi[c]);
            /* the two int8 digits the kernel forms */
            int hi = (xi[c] + 128) >> 8, lo = xi[c] - 256 * hi;
            T_ASSERT(hi >= -128 && hi <= 127 && lo >= -128 && lo <= 127, "digits %d %d", hi, lo);
            double err = fabs((double)xi[c] * xs[sc] - x[c]);
            T_ASSERT(err <= 0.5000001 * xs[sc] + 1e-30, "column %d: error %g > half step %g", c, err, xs[sc] / 2);
        }
        /* a power-of-two scale puts the largest |xi| in (16319, 32639] */
        T_ASSERT(sc == 0 || (top > 16319 && top <= LR_I8_X_RANGE), "super-chunk %d: max |xi| %d", sc, top);
        T_ASSERT(sc == 0 || xs[sc] == ldexpf(1.0f, ilogbf(xs[sc])), "scale %g is not a power of two", xs[sc]);
    }
    return T_PASS;
}

static int test_reference_vs_dense(void)
{
    int shapes[][2] = { { 37, 24 * 13 + 7 }, { 16, 24 * 8 }, { 5, 24 * 30 + 23 }, { 20, 24 * 17 } };
    for (int s = 0; s < 4; s++)
        for (int pat = 0; pat < 2; pat++) {
            int rows = shapes[s][0], cols = shapes[s][1];
            lr_i8 L;
            lr_leech_matrix m;
            if (make(rows, cols, 100 + s, &L, &m)) return T_FAIL;
            float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *mag = malloc(sizeof(float) * rows);
            fill_x(x, cols, 7 + s, pat);
            lr_gemv_leech_i8_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, NULL, y, rows,
                                  cols);
            lr_gemv_leech_i8_host_mag(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, NULL, mag,
                                      rows, cols);
            double worst = 0;
            int32_t *xi = malloc(sizeof(int32_t) * (size_t)(L.sc * 192 + 1));
            float *xs = malloc(sizeof(float) * (size_t)(L.sc + 1));
            lr_gemv_leech_i8_quantize_x(x, cols, xi, xs);
            for (int i = 0; i < rows; i++) {
                double d = 0, dm = 0, qb = 0;
                for (int b = 0; b < L.nblk; b++) {
                    double w[24];
                    T_OK(lr_i8_get_f64(&L, m.centroid, i, b, w));
                    for (int k = 0; k < 24; k++) {
                        d += w[k] * x[24 * b + k], dm += fabs(w[k] * x[24 * b + k]);
                        qb += fabs(w[k]) * xs[b / 8] / 2; /* x's quantization: half a step per element */
                    }
                }
                for (int j = 0; j < L.tail; j++) {
                    double v = (double)lr_half_to_float(m.tail_f16[(size_t)i * L.tail + j]) * x[24 * L.nblk + j];
                    d += v, dm += fabs(v);
                }
                double e = fabs(d - y[i]) / dm;
                if (e > worst) worst = e;
                /* uniform x: a fixed relative tolerance; any x: the quantization bound */
                T_ASSERT(pat || e < LR_GEMV_LEECH_I8_DENSE_TOL, "shape %dx%d row %d: reference %g, dense %g (rel %g)", rows,
                         cols, i, y[i], d, e);
                T_ASSERT(fabs(d - y[i]) <= 1e-6 * dm + qb, "row %d: |%g - %g| over the quantization bound %g", i, y[i], d, qb);
                T_ASSERT(fabs(mag[i] - dm) <= 1e-3 * dm, "row %d: magnitude %g vs %g", i, mag[i], dm);
            }
            printf("    %dx%d x pattern %d: reference vs exact dense max rel %.2e (%s)\n", rows, cols, pat, worst,
                   pat ? "within the quantization bound" : "tolerance 1e-4");
            free(x), free(y), free(mag), free(xi), free(xs);
            lr_i8_free(&L);
            lr_leech_random_free(&m);
        }
    return T_PASS;
}

static int test_ffi_matches_direct(void)
{
    lr_i8 L;
    lr_leech_matrix m;
    if (make(21, 24 * 11 + 3, 5, &L, &m)) return T_FAIL;
    float x[267], y1[21], y2[21];
    fill_x(x, 267, 11, 0);
    lr_arg a[12];
    lr_gemv_leech_i8_args(&L, x, NULL, y1, a);
    T_OK(lr_call_host(&lr_gemv_leech_i8_desc, a));
    lr_gemv_leech_i8_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, NULL, y2, 21, 267);
    T_ASSERT(!memcmp(y1, y2, sizeof y1), "ffi and direct calls differ");
    lr_i8_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* The xq records hold the digits of quantize_x where the kernel's B
 * fragments read them, zeros at k >= 24, and the scales after. */
static int test_xq_records(void)
{
    int cols = 24 * 8 * 2 + 24 * 3 + 5;
    float x[24 * 19 + 5];
    int32_t xi[192 * 3];
    float xs[3];
    fill_x(x, cols, 5, 1);
    lr_gemv_leech_i8_quantize_x(x, cols, xi, xs);
    size_t n = lr_gemv_leech_i8_xq_bytes(cols);
    T_ASSERT(n == 3 * 512 + 3 * 4, "xq bytes %zu", n);
    uint8_t *xq = malloc(n);
    lr_gemv_leech_i8_xq_host(x, xq, cols);
    for (int sc = 0; sc < 3; sc++)
        for (int b = 0; b < 8; b++)
            for (int q = 0; q < 4; q++)
                for (int h = 0; h < 2; h++)
                    for (int j = 0; j < 4; j++) {
                        int k = 16 * h + 4 * q + j, off = sc * 512 + b * 64 + 8 * q + 4 * h + j;
                        int hi = (int8_t)xq[off], lo = (int8_t)xq[off + 32];
                        int want = k < 24 ? xi[sc * 192 + b * 24 + k] : 0;
                        T_ASSERT(256 * hi + lo == want, "sc %d block %d k %d: digits %d %d, xi %d", sc, b, k, hi, lo, want);
                    }
    T_ASSERT(!memcmp(xq + 3 * 512, xs, sizeof xs), "scales");
    free(xq);
    return T_PASS;
}

static int test_spec_bounds(void)
{
    lr_jit_spec s;
    lr_launch_geom g;
    lr_leech_geom geom = lr_gemv_leech_i8_default_geom(5120, 5120);
    T_OK(lr_gemv_leech_i8_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 && g.block.x == 256, "grid %u block %u", g.grid.x, g.block.x);
    T_ASSERT(lr_gemv_leech_i8_spec(&s, &g, 5120, 25600, 603, geom, 20000) == LR_ERANGE, "budget ignored");
    T_ASSERT(lr_gemv_leech_i8_spec(&s, &g, 5120, 5120, 5000, geom, 232448) == LR_EINVAL, "13-bit table accepted");
    geom.threads = 48;
    T_ASSERT(lr_gemv_leech_i8_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bad geometry accepted");
    lr_clear_error();
    return T_PASS;
}

/* ---- GPU ---- */

static int verify_shape(int rows, int cols, lr_leech_geom geom, uint64_t seed, int pattern)
{
    lr_i8 L;
    lr_leech_matrix m;
    if (make(rows, cols, seed, &L, &m)) return T_FAIL;
    lr_leech_random_free(&m);
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_i8_spec(&spec, &g, rows, cols, L.nentries, geom, lr_cu_smem_budget()));
    T_OK(lr_jit_get(&spec, &fn));
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows);
    fill_x(x, cols, seed * 3 + 1, pattern);
    uint8_t *xq = NULL;
    if (geom.xq) {
        xq = malloc(lr_gemv_leech_i8_xq_bytes(cols));
        lr_gemv_leech_i8_xq_host(x, xq, cols);
    }
    lr_arg a[12];
    lr_gemv_leech_i8_args(&L, x, xq, y, a);
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_i8_desc, fn, a, g, LR_GEMV_LEECH_I8_TOL, &rep);
    printf("    %5d x %5d threads=%d rg=%d prefetch=%d xq=%d x%d: max rel err %.2e, %u exceptions\n", rows, cols,
           geom.threads, geom.rg, geom.prefetch, geom.xq, pattern, rep.max_rel_err, L.nexc);
    free(x), free(y), free(xq);
    lr_i8_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int test_gpu_qwen3_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    for (int i = 0; i < lr_qwen3_nshapes; i++) {
        const lr_shape *s = &lr_qwen3_shapes[i];
        if (verify_shape(s->rows, s->cols, lr_gemv_leech_i8_default_geom(s->rows, s->cols), 1000 + i, 0)) {
            fprintf(stderr, "    at %s %s\n", s->model, s->matrix);
            return T_FAIL;
        }
    }
    return T_PASS;
}

static int test_gpu_odd_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    /* rows not a multiple of 8 or 16, cols not a multiple of 24 or 192,
     * fewer blocks than one super-chunk; fused q/k/v (7168) and gate/up
     * (34816) concatenations; x with a zero and a wide-range super-chunk */
    int shapes[][3] = { { 1, 24, 0 },         { 7, 25, 1 },       { 77, 1001, 1 },      { 129, 24 * 7, 0 },
                        { 1000, 24 * 8 * 3 + 23, 1 }, { 7168, 5120, 0 }, { 34816, 5120, 1 }, { 5121, 17408 + 5, 1 },
                        { 12288 + 2048, 4096, 0 } };
    for (int i = 0; i < 9; i++)
        if (verify_shape(shapes[i][0], shapes[i][1], lr_gemv_leech_i8_default_geom(shapes[i][0], shapes[i][1]), 2000 + i,
                         shapes[i][2]))
            return T_FAIL;
    return T_PASS;
}

static int test_gpu_geometries(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_leech_geom gs[] = { { .threads = 128, .rg = 1 },
                           { .threads = 256, .rg = 2, .prefetch = 1 },
                           { .threads = 512, .rg = 1, .prefetch = 1, .xq = 1 },
                           { .threads = 64, .rg = 4, .prefetch = 1 },
                           { .threads = 256, .rg = 3, .xq = 1 },
                           { .threads = 1024, .rg = 1, .prefetch = 1 },
                           { .threads = 256, .rg = 2, .prefetch = 1, .xq = 1 },
                           { .threads = 128, .rg = 1, .prefetch = 1, .xq = 1, .minb = 8 },
                           { .threads = 256, .rg = 2, .prefetch = 1, .minb = 4 } }; /* the last two: registers capped */
    for (int i = 0; i < 9; i++)
        if (verify_shape(1000, 5120 + 24 * 3 + 1, gs[i], 3000 + i, i & 1)) return T_FAIL;
    return T_PASS;
}

/* The stand-alone quantizer is bit-exact, and the LR_XQ=1 GEMV on odd and
 * fused shapes. */
static int test_gpu_xq(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    int cols[] = { 24, 25, 1001, 5120, 17408 + 5, 25600 };
    for (int i = 0; i < 6; i++) {
        lr_jit_spec spec;
        lr_launch_geom g;
        CUfunction fn;
        T_OK(lr_gemv_leech_i8_xq_spec(&spec, &g, cols[i], i & 1 ? 64 : 256));
        T_OK(lr_jit_get(&spec, &fn));
        float *x = malloc(sizeof(float) * cols[i]);
        uint8_t *xq = malloc(lr_gemv_leech_i8_xq_bytes(cols[i]));
        fill_x(x, cols[i], 50 + i, i & 1);
        lr_arg a[3] = { 0 };
        a[0].host = x, a[0].count = (size_t)cols[i];
        a[1].host = xq, a[1].count = lr_gemv_leech_i8_xq_bytes(cols[i]);
        a[2].v.i32 = cols[i];
        lr_verify_report rep;
        int rc = lr_call_verify(&lr_gemv_leech_i8_xq_desc, fn, a, g, 0, &rep);
        free(x), free(xq);
        T_OK(rc);
    }
    int shapes[][2] = { { 77, 1001 }, { 7168, 5120 }, { 5121, 17408 + 5 }, { 1, 24 } };
    for (int i = 0; i < 4; i++) {
        lr_leech_geom geom = lr_gemv_leech_i8_default_geom(shapes[i][0], shapes[i][1]);
        geom.xq = 1;
        if (verify_shape(shapes[i][0], shapes[i][1], geom, 4000 + i, i & 1)) return T_FAIL;
    }
    return T_PASS;
}

static int test_gpu_arm(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    void *st;
    T_OK(lr_arm_leech_i8.prepare(1024, 5120, 2, 42, NULL, &st));
    double err;
    T_OK(lr_arm_leech_i8.verify(st, 43, &err, NULL));
    size_t b = lr_arm_leech_i8.bytes(st);
    T_ASSERT(b > (size_t)1024 * 5120 * 3.5 / 8 && b < (size_t)1024 * 5120 * 3.8 / 8, "bytes %zu", b);
    printf("    arm leech_i8 1024 x 5120: verify %.2e, %.3f b/w read\n", err, 8.0 * b / (1024.0 * 5120));
    lr_arm_leech_i8.destroy(st);
    lr_gemv_arm_opts o = { .threads = 128, .rpw = 2, .extra = { -1 } };
    T_OK(lr_arm_leech_i8.prepare(500, 2560, 1, 44, &o, &st));
    T_OK(lr_arm_leech_i8.verify(st, 45, &err, NULL));
    lr_arm_leech_i8.destroy(st);
    /* x quantized by its own launch first (extra1 = 1): both verified, then
     * one launch pair through the arm's launch on a stream */
    lr_gemv_arm_opts o2 = { .extra = { 0, 1 } };
    T_OK(lr_arm_leech_i8.prepare(1000, 5120 + 24, 2, 46, &o2, &st));
    T_OK(lr_arm_leech_i8.verify(st, 47, &err, NULL));
    CUdeviceptr dx, dy;
    CUstream sm;
    T_OK(lr_cu_stream_create(&sm));
    T_OK(lr_cu_alloc(&dx, sizeof(float) * (5120 + 24)));
    T_OK(lr_cu_alloc(&dy, sizeof(float) * 1000));
    T_OK(lr_cu_memset8(dx, 0, sizeof(float) * (5120 + 24)));
    T_OK(lr_arm_leech_i8.launch(st, 1, dx, dy, sm));
    T_OK(lr_cu_stream_sync(sm));
    float yb[1000];
    T_OK(lr_cu_d2h(yb, dy, sizeof yb));
    for (int i = 0; i < 1000; i++) T_ASSERT(yb[i] == 0, "zero x gives y[%d] = %g", i, yb[i]);
    lr_cu_free(dx), lr_cu_free(dy);
    lr_cu_stream_destroy(sm);
    lr_arm_leech_i8.destroy(st);
    return T_PASS;
}

T_MAIN(T_CASE(test_quantize_x), T_CASE(test_reference_vs_dense), T_CASE(test_ffi_matches_direct),
       T_CASE(test_xq_records), T_CASE(test_spec_bounds), T_CASE(test_gpu_qwen3_shapes), T_CASE(test_gpu_odd_shapes),
       T_CASE(test_gpu_geometries), T_CASE(test_gpu_xq), T_CASE(test_gpu_arm))
