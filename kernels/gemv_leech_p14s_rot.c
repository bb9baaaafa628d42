/* Planes14S GEMV with its input's incoherence rotation in the prologue
 * (templates/gemv_leech_p14s.cu LR_XROT): y = W (Q x) in one launch, so the
 * engine's o and down need no rotation launch of their own. Its host
 * references: the rotation (kernels/rotation.c, f64 over the same f32
 * tables, rounded to f32 as the kernel keeps x'), then the GEMV's. */
#include "kernels/gemv_leech.h"
#include "kernels/rotation.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>

const lr_kernel_desc lr_gemv_leech_p14s_rot_desc = {
    .name = "gemv_leech_p14s_rot",
    .nparams = 13, /* Planes14S's, then the rotation's sign bits and Q_odd table */
    .params = { LR_P14S_PARAM_LIST, { "dbits", LR_T_PTR, LR_E_U32, LR_IN }, { "q", LR_T_PTR, LR_E_F32, LR_IN } },
    .host = (lr_host_fn)lr_gemv_leech_p14s_rot_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_rot_host_mag,
};

static void gemv_rot(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                     const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x, float *y,
                     int rows, int cols, const uint32_t *dbits, const float *q, int mag)
{
    float *xr = malloc(sizeof(float) * (size_t)cols);
    if (!xr) { /* the comparison then fails */
        for (int r = 0; r < rows; r++) y[r] = NAN;
        return;
    }
    lr_rotate_host(x, xr, dbits, q, cols, 1);
    if (mag) lr_gemv_leech_p14s_host_mag(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, xr, y, rows, cols);
    else lr_gemv_leech_p14s_host(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, xr, y, rows, cols);
    free(xr);
}

void lr_gemv_leech_p14s_rot_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                 const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                 float *y, int32_t rows, int32_t cols, const uint32_t *dbits, const float *q)
{
    gemv_rot(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, dbits, q, 0);
}

void lr_gemv_leech_p14s_rot_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                     const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                     const float *exc_dw, const float *x, float *y, int32_t rows, int32_t cols,
                                     const uint32_t *dbits, const float *q)
{
    gemv_rot(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, dbits, q, 1);
}

int lr_gemv_leech_p14s_spec_rot(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                                int smem_budget)
{
    int m, k;
    if (lr_rot_factor(cols, &m, &k)) {
        lr_clear_error();
        return LR_FAIL(LR_EUNSUPPORTED, "gemv_leech_p14s with the rotation: width %d is not served by the rotation",
                       cols);
    }
    if (geom.xw) geom.xw = 0, geom.pro = 1; /* x' is made in the prologue */
    geom.side = 0; /* the template's rule: the side warp does not rotate */
    geom.i8 = 0;   /* the int8 mode quantizes x itself; it has no rotating prologue */
    geom.ends = (lr_leech_ends){ 0, 0, 0.f, 0, 0, 0 }; /* the plain end, launching its dependents at exit */
    int rc = lr_gemv_leech_p14s_spec(s, g, rows, cols, ntab, geom, smem_budget);
    if (rc) return rc;
    /* after the GEMV's own shared memory: x' (cols f32), then Q_odd's table */
    const size_t off = ((size_t)g->smem + 15) / 16 * 16, need = off + 4 * (size_t)cols + 4 * (size_t)k * k;
    if (need > (size_t)smem_budget)
        return LR_FAIL(LR_ERANGE, "gemv_leech_p14s %dx%d with the rotation needs %zu bytes of shared memory (budget %d)",
                       rows, cols, need, smem_budget);
    lr_jit_spec_set(s, "xrot", (long long)off);
    g->smem = (unsigned)need;
    return LR_OK;
}
