/* The Planes14S GEMV that applies rotation kind 3 (blocks of 512, ffn_down)
 * in its prologue (templates/gemv_leech_p14s.cu LR_BROT, lr_leech_ends.brot):
 * y = W (Q x) with Q = (I kron H_512) D, or y += W (Q x) with the residual
 * add. Its host references: each 512-block rotated by the rotation's host
 * reference (lr_rotate_host: f64 over the kernel's f32 tables, rounded to
 * f32 as the kernel keeps x'), then the int8 or 3-bit form's GEMV. */
#include "kernels/gemv_leech.h"
#include "kernels/rotation.h"

#include <math.h>
#include <stdlib.h>

typedef void (*p14s_host)(const uint8_t *, const uint8_t *, const float *, const uint16_t *, const uint32_t *,
                          const uint32_t *, const float *, const float *, float *, int32_t, int32_t);

#define ARGS                                                                                                     \
    const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail, const uint32_t *exc_ptr, \
        const uint32_t *exc_col, const float *exc_dw, const float *x, float *y, int32_t rows, int32_t cols,       \
        const uint32_t *dbits, const float *q

int lr_brot_host(const float *x, float *xr, const uint32_t *dbits, const float *q, int cols)
{
    if (cols % LR_ROT_BLOCK_W) return -1;
    for (int b = 0; b < cols / LR_ROT_BLOCK_W; b++)
        lr_rotate_host(x + (size_t)b * LR_ROT_BLOCK_W, xr + (size_t)b * LR_ROT_BLOCK_W,
                       dbits + (size_t)b * (LR_ROT_BLOCK_W / 32), q, LR_ROT_BLOCK_W, 1);
    return 0;
}

/* x rotated, then the form's value or magnitude; res: y + that (the
 * magnitude adds |y|, the sum's rounding) */
static void brot_end(p14s_host f, int res, int mag, ARGS)
{
    float *xr = malloc(sizeof(float) * (size_t)cols), *v = malloc(sizeof(float) * (size_t)rows);
    if (!xr || !v || lr_brot_host(x, xr, dbits, q, cols)) { /* the comparison then fails */
        for (int r = 0; r < rows; r++) y[r] = NAN;
        free(xr), free(v);
        return;
    }
    f(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, xr, v, rows, cols);
    for (int r = 0; r < rows; r++) y[r] = !res ? v[r] : mag ? v[r] + fabsf(y[r]) : (float)((double)y[r] + v[r]);
    free(xr), free(v);
}

#define PASS W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, dbits, q
#define HOSTS(fn, val, magf, res)                                                                                \
    static void fn##_host(ARGS) { brot_end(val, res, 0, PASS); }                                                \
    static void fn##_host_mag(ARGS) { brot_end(magf, res, 1, PASS); }
HOSTS(brot_i8, lr_gemv_leech_p14s_i8_host, lr_gemv_leech_p14s_i8_host_mag, 0)
HOSTS(brot_c3, lr_gemv_leech_p14s_c3_host, lr_gemv_leech_p14s_c3_host_mag, 0)
HOSTS(brot_res_i8, lr_gemv_leech_p14s_i8_host, lr_gemv_leech_p14s_i8_host_mag, 1)
HOSTS(brot_res_c3, lr_gemv_leech_p14s_c3_host, lr_gemv_leech_p14s_c3_host_mag, 1)

#define PARAMS(ydir)                                                                                                  \
    .nparams = 13,                                                                                                    \
    .params = { { "W", LR_T_PTR, LR_E_U8, LR_IN }, { "tab", LR_T_PTR, LR_E_U8, LR_IN },                               \
                { "row_scale", LR_T_PTR, LR_E_F32, LR_IN }, { "tail", LR_T_PTR, LR_E_F16, LR_IN },                    \
                { "exc_ptr", LR_T_PTR, LR_E_U32, LR_IN }, { "exc_col", LR_T_PTR, LR_E_U32, LR_IN },                   \
                { "exc_dw", LR_T_PTR, LR_E_F32, LR_IN }, { "x", LR_T_PTR, LR_E_F32, LR_IN },                          \
                { "y", LR_T_PTR, LR_E_F32, ydir }, { "rows", LR_T_I32, 0, 0 }, { "cols", LR_T_I32, 0, 0 },          \
                { "dbits", LR_T_PTR, LR_E_U32, LR_IN }, { "q", LR_T_PTR, LR_E_F32, LR_IN } }
#define DESC(fn, ydir)                                                                                        \
    const lr_kernel_desc lr_gemv_leech_p14s_##fn##_desc = {                                                   \
        .name = "gemv_leech_p14s", PARAMS(ydir), .host = (lr_host_fn)fn##_host, .host_mag = (lr_host_fn)fn##_host_mag \
    };
DESC(brot_i8, LR_OUT)
DESC(brot_c3, LR_OUT)
DESC(brot_res_i8, LR_INOUT)
DESC(brot_res_c3, LR_INOUT)
