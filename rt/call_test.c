/* The ffi half of the kernel-call path, without a GPU: host references called
 * through libffi equal direct calls; the comparison catches unwritten,
 * wrong and NaN outputs; half conversions are exact; no-GPU is one clear error. */
#include "kernels/kernels.h"
#include "rt/call.h"
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>

static int test_ffi_matches_direct_call(void)
{
    lr_rng r;
    lr_rng_seed(&r, 42);
    for (int trial = 0; trial < 5; trial++) {
        int rows = 1 + (int)lr_rng_below(&r, 70), cols = 1 + (int)lr_rng_below(&r, 300);
        uint16_t *W = malloc(2u * rows * cols);
        float *x = malloc(4u * cols), *y1 = malloc(4u * rows), *y2 = malloc(4u * rows);
        lr_fill_random(LR_E_F16, W, (size_t)rows * cols, &r, 1);
        lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1);
        lr_arg a[5] = { 0 };
        a[0].host = W, a[0].count = (size_t)rows * cols;
        a[1].host = x, a[1].count = (size_t)cols;
        a[2].host = y1, a[2].count = (size_t)rows;
        a[3].v.i32 = rows, a[4].v.i32 = cols;
        T_OK(lr_call_host(&lr_gemv_f16_desc, a));
        lr_gemv_f16_host(W, x, y2, rows, cols);
        T_ASSERT(!memcmp(y1, y2, 4u * rows), "ffi result differs from direct call (%dx%d)", rows, cols);
        /* and against an independent f64 sum */
        for (int i = 0; i < rows; i++) {
            double s = 0;
            for (int c = 0; c < cols; c++) s += (double)lr_half_to_float(W[(size_t)i * cols + c]) * x[c];
            T_ASSERT(fabs(s - y1[i]) <= 1e-6 * (1 + fabs(s)), "row %d: %g vs %g", i, y1[i], s);
        }
        free(W); free(x); free(y1); free(y2);
    }
    return T_PASS;
}

static int test_probe_reference_via_ffi(void)
{
    uint32_t buf[4 * 50];
    for (int i = 0; i < 200; i++) buf[i] = (uint32_t)(i * 2654435761u);
    uint32_t out[3], direct[3] = { 0, 0, 0 };
    lr_arg a[5] = { 0 };
    a[0].host = buf, a[0].count = 200;
    a[1].v.u64 = 50;
    a[2].host = out, a[2].count = 3;
    a[3].v.u32 = 3, a[4].v.u32 = 4;
    T_OK(lr_call_host(&lr_probe_desc, a));
    /* independent: word i (16-byte unit) belongs to block (i % 12) / 4 */
    for (int i = 0; i < 50; i++)
        direct[(i % 12) / 4] += buf[4 * i] + buf[4 * i + 1] + buf[4 * i + 2] + buf[4 * i + 3];
    T_ASSERT(!memcmp(out, direct, sizeof out), "probe reference disagrees");
    return T_PASS;
}

static int test_compare_catches_errors(void)
{
    float got[4] = { 1, 2, 3, 4 }, ref[4] = { 1, 2, 3, 4 }, scale[4] = { 1, 1, 1, 1 };
    float x[1] = { 1 };
    uint16_t W[1] = { 0x3c00 };
    lr_arg a[5] = { 0 };
    a[0].host = W, a[0].count = 1;
    a[1].host = x, a[1].count = 1;
    a[2].host = got, a[2].count = 4;
    void *g[] = { got }, *rf[] = { ref }, *sc[] = { scale };
    lr_verify_report rep;
    T_OK(lr_call_compare_outputs(&lr_gemv_f16_desc, a, g, rf, sc, 1e-6, &rep));
    T_ASSERT(rep.checked == 4 && rep.bad == 0, "clean compare");
    got[2] = 3.001f;
    T_ASSERT(lr_call_compare_outputs(&lr_gemv_f16_desc, a, g, rf, sc, 1e-6, &rep) == LR_EVERIFY && rep.bad == 1 &&
             rep.worst == 2, "mismatch not caught");
    got[2] = 3;
    memset(&got[1], 0xff, 4); /* poison = unwritten */
    T_ASSERT(lr_call_compare_outputs(&lr_gemv_f16_desc, a, g, rf, sc, 1e-6, &rep) == LR_EVERIFY && rep.unwritten == 1,
             "unwritten output not caught");
    got[1] = NAN;
    T_ASSERT(lr_call_compare_outputs(&lr_gemv_f16_desc, a, g, rf, sc, 1e-6, &rep) == LR_EVERIFY, "NaN not caught");
    T_ASSERT(strstr(lr_errmsg(), "y[1]"), "message names the element: %s", lr_errmsg());
    /* an output neither the kernel nor the reference wrote (both still poison) */
    got[1] = 2;
    memset(&got[3], 0xff, 4), memset(&ref[3], 0xff, 4);
    T_ASSERT(lr_call_compare_outputs(&lr_gemv_f16_desc, a, g, rf, sc, 1e-6, &rep) == LR_EVERIFY && rep.unwritten == 1 &&
                 rep.bad == 1,
             "an output written by neither side passed");
    return T_PASS;
}

/* An integer output equal to the 0xff poison (a u32 of all ones) passes the compare; the
   second launch over 0x00 is what catches it unwritten. */
static int test_repoison_catches_unwritten_ints(void)
{
    uint32_t buf[4] = { 1, 2, 3, 4 };
    uint32_t ff[3] = { 0xffffffffu, 7, 0xffffffffu }, zz[3] = { 0xffffffffu, 7, 0 };
    lr_arg a[5] = { 0 };
    a[0].host = buf, a[0].count = 4;
    a[2].host = ff, a[2].count = 3;
    void *g[] = { ff }, *g0[] = { zz };
    lr_verify_report rep = { 0 };
    char msg[300] = "";
    T_ASSERT(lr_call_count_repoisoned(&lr_probe_desc, a, g, g0, &rep, msg, sizeof msg) == 1, "one unwritten");
    T_ASSERT(rep.unwritten == 1 && rep.bad == 1 && strstr(msg, "out[2]"), "report: %zu %zu '%s'", rep.unwritten,
             rep.bad, msg);
    zz[2] = 0xffffffffu; /* written as all ones in both launches: a value, not poison */
    T_ASSERT(lr_call_count_repoisoned(&lr_probe_desc, a, g, g0, NULL, NULL, 0) == 0, "a written all-ones flagged");
    return T_PASS;
}

static int test_fill_random_never_zero(void)
{
    lr_rng r;
    lr_rng_seed(&r, 7);
    static uint16_t h[100000];
    static float f[100000];
    lr_fill_random(LR_E_F16, h, 100000, &r, 1e-6); /* tiny amplitude: would round to zero */
    lr_fill_random(LR_E_F32, f, 100000, &r, 1);
    for (int i = 0; i < 100000; i++) {
        T_ASSERT((h[i] & 0x7fff) != 0, "zero half at %d", i);
        T_ASSERT(f[i] != 0, "zero float at %d", i);
    }
    return T_PASS;
}

static int test_half_conversions_exact(void)
{
    /* every finite half survives half -> float -> half */
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00) continue;
        uint16_t back = lr_float_to_half(lr_half_to_float((uint16_t)h));
        T_ASSERT(back == h, "half %04x -> %04x", h, back);
    }
    /* rounding: nearest, ties to even, against a double computation */
    lr_rng r;
    lr_rng_seed(&r, 3);
    for (int i = 0; i < 200000; i++) {
        float v = (float)(lr_rng_signed(&r) * ldexp(1.0, (int)lr_rng_below(&r, 40) - 26));
        uint16_t h = lr_float_to_half(v);
        double hv = lr_half_to_float(h), err = fabs(hv - v);
        /* neighbours must not be closer */
        double up = lr_half_to_float((uint16_t)(h + 1)), dn = (h & 0x7fff) ? lr_half_to_float((uint16_t)(h - 1)) : hv;
        T_ASSERT(err <= fabs(up - v) && err <= fabs(dn - v), "%.10g -> %.10g not nearest", v, hv);
    }
    T_ASSERT(lr_float_to_half(65520.f) == 0x7c00 && lr_float_to_half(65519.f) == 0x7bff, "overflow rounding");
    T_ASSERT(lr_float_to_bf16(1.00390625f) == 0x3f80 && lr_float_to_bf16(1.01171875f) == 0x3f82, "bf16 ties to even");
    /* NaN of either sign and any payload: the canonical 0x7fff, as cvt.rn gives on the GPU */
    T_ASSERT(lr_float_to_half(NAN) == 0x7fff && lr_float_to_half(-NAN) == 0x7fff &&
                 lr_float_to_half(lr_bits_f32(0xff800001u)) == 0x7fff && lr_float_to_bf16(-NAN) == 0x7fff &&
                 lr_float_to_half(-INFINITY) == 0xfc00 && lr_float_to_bf16(INFINITY) == 0x7f80,
             "NaN / inf conversions");
    return T_PASS;
}

static int test_no_gpu_is_one_clear_error(void)
{
    int rc = lr_cu_init(0);
    T_SKIP_IF(rc == LR_OK, "a GPU is present");
    T_ASSERT(rc == LR_ENODEV, "expected LR_ENODEV, got %d (%s)", rc, lr_errmsg());
    T_ASSERT(strstr(lr_errmsg(), "driver") || strstr(lr_errmsg(), "GPU") || strstr(lr_errmsg(), "device"),
             "unclear message: %s", lr_errmsg());
    T_ASSERT(!strchr(lr_errmsg(), '\n'), "message is not one line");
    return T_PASS;
}

T_MAIN(T_CASE(test_ffi_matches_direct_call), T_CASE(test_probe_reference_via_ffi), T_CASE(test_compare_catches_errors), T_CASE(test_repoison_catches_unwritten_ints),
       T_CASE(test_fill_random_never_zero), T_CASE(test_half_conversions_exact), T_CASE(test_no_gpu_is_one_clear_error))
