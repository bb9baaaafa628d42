/* The rotated residual's Planes14S GEMV ends (templates/gemv_rows_epilogue.cuh
 * LR_NORM, LR_RES; docs/format.md "Rotated residual"): their host references.
 *
 *   norm: y = ns W x with ns = 1 / sqrt(mean(x^2) + eps), eps =
 *         lr_gemv_p14s_ref_norm_eps (the GEMV reads the un-normed residual; unit gain);
 *         with SwiGLU, gate and up are scaled before silu(g) u
 *   res:  y = y + W x (the residual add, in place: y is read and written)
 *
 * Each is the plain reference of the layout's form (f16, int8, 3-bit) with
 * the end applied in f64, so the verify tolerance is the plain GEMV's. */
#include "kernels/gemv_leech.h"

#include <math.h>
#include <stdlib.h>

typedef void (*p14s_host)(const uint8_t *, const uint8_t *, const float *, const uint16_t *, const uint32_t *,
                          const uint32_t *, const float *, const float *, float *, int32_t, int32_t);

enum { FORM_F16, FORM_I8, FORM_C3 };
static const p14s_host k_val[3] = { lr_gemv_leech_p14s_host, lr_gemv_leech_p14s_i8_host, lr_gemv_leech_p14s_c3_host };
static const p14s_host k_mag[3] = { lr_gemv_leech_p14s_host_mag, lr_gemv_leech_p14s_i8_host_mag,
                                    lr_gemv_leech_p14s_c3_host_mag };

double lr_gemv_p14s_norm_scale_ref(const float *x, int cols, double eps)
{
    double s = 0;
    for (int i = 0; i < cols; i++) s += (double)x[i] * x[i];
    return 1.0 / sqrt(s / cols + eps);
}

#define ARGS                                                                                                     \
    const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail, const uint32_t *exc_ptr, \
        const uint32_t *exc_col, const float *exc_dw, const float *x, float *y, int32_t rows, int32_t cols
#define PASS W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x

/* norm: the plain value (or magnitude) times ns */
static void norm_end(int form, int mag, ARGS)
{
    (mag ? k_mag : k_val)[form](PASS, y, rows, cols);
    const double ns = lr_gemv_p14s_norm_scale_ref(x, cols, lr_gemv_p14s_ref_norm_eps);
    for (int r = 0; r < rows; r++) y[r] = (float)(ns * y[r]);
}

/* res: y + the plain value; the magnitude adds |y| (the sum's rounding) */
static void res_end(int form, int mag, ARGS)
{
    float *v = malloc(sizeof(float) * (size_t)rows);
    if (!v) { /* the comparison then fails on y as it came in */
        return;
    }
    (mag ? k_mag : k_val)[form](PASS, v, rows, cols);
    for (int r = 0; r < rows; r++) y[r] = mag ? v[r] + fabsf(y[r]) : (float)((double)y[r] + v[r]);
    free(v);
}

static void swiglu_norm_end(int form, int mag, ARGS)
{
    const double ns = lr_gemv_p14s_norm_scale_ref(x, cols, lr_gemv_p14s_ref_norm_eps);
    lr_gemv_leech_p14s_swiglu_ref(PASS, y, rows, cols, mag, form, ns);
}

#define HOSTS(fn, end, form)                                                                                     \
    static void fn##_host(ARGS) { end(form, 0, PASS, y, rows, cols); }                                          \
    static void fn##_host_mag(ARGS) { end(form, 1, PASS, y, rows, cols); }
HOSTS(norm, norm_end, FORM_F16)
HOSTS(norm_i8, norm_end, FORM_I8)
HOSTS(norm_c3, norm_end, FORM_C3)
HOSTS(res, res_end, FORM_F16)
HOSTS(res_i8, res_end, FORM_I8)
HOSTS(res_c3, res_end, FORM_C3)
HOSTS(swiglu_norm, swiglu_norm_end, FORM_F16)
HOSTS(swiglu_norm_i8, swiglu_norm_end, FORM_I8)
HOSTS(swiglu_norm_c3, swiglu_norm_end, FORM_C3)

/* res: the 11 arguments with y read as well as written */
#define RES_PARAMS                                                                                                    \
    .nparams = 11,                                                                                                    \
    .params = { { "W", LR_T_PTR, LR_E_U8, LR_IN }, { "tab", LR_T_PTR, LR_E_U8, LR_IN },                               \
                { "row_scale", LR_T_PTR, LR_E_F32, LR_IN }, { "tail", LR_T_PTR, LR_E_F16, LR_IN },                    \
                { "exc_ptr", LR_T_PTR, LR_E_U32, LR_IN }, { "exc_col", LR_T_PTR, LR_E_U32, LR_IN },                   \
                { "exc_dw", LR_T_PTR, LR_E_F32, LR_IN }, { "x", LR_T_PTR, LR_E_F32, LR_IN },                          \
                { "y", LR_T_PTR, LR_E_F32, LR_INOUT }, { "rows", LR_T_I32, 0, 0 }, { "cols", LR_T_I32, 0, 0 } }

#define DESC(var, fn, params)                                                                                 \
    const lr_kernel_desc lr_gemv_leech_p14s_##var##_desc = {                                                  \
        .name = "gemv_leech_p14s", params, .host = (lr_host_fn)fn##_host, .host_mag = (lr_host_fn)fn##_host_mag \
    };
DESC(norm, norm, LR_P14S_PARAMS)
DESC(norm_i8, norm_i8, LR_P14S_PARAMS)
DESC(norm_c3, norm_c3, LR_P14S_PARAMS)
DESC(res, res, RES_PARAMS)
DESC(res_i8, res_i8, RES_PARAMS)
DESC(res_c3, res_c3, RES_PARAMS)
DESC(swiglu_norm, swiglu_norm, LR_P14S_PARAMS)
DESC(swiglu_norm_i8, swiglu_norm_i8, LR_P14S_PARAMS)
DESC(swiglu_norm_c3, swiglu_norm_c3, LR_P14S_PARAMS)
