/* Planes14S gate|up GEMV ending in SwiGLU (templates/gemv_leech_p14s.cu
 * LR_SWIGLU): over a pair layout (lr_p14s.pair, rows 2i and 2i + 1 = gate
 * and up row i) it writes h[i] = silu(g_i) u_i, rows / 2 values, so the
 * engine needs no op_silu_mul launch. Its host references: the GEMV's,
 * then SwiGLU in f64. */
#include "kernels/gemv_leech.h"
#include "rt/cu.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>

const lr_kernel_desc lr_gemv_leech_p14s_swiglu_desc = {
    .name = "gemv_leech_p14s_swiglu",
    LR_P14S_PARAMS, /* y: h, rows / 2 values */
    .host = (lr_host_fn)lr_gemv_leech_p14s_swiglu_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_swiglu_host_mag,
};

const lr_kernel_desc lr_gemv_leech_p14s_swiglu_c3_desc = {
    .name = "gemv_leech_p14s_swiglu",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)lr_gemv_leech_p14s_swiglu_c3_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_swiglu_c3_host_mag,
};

const lr_kernel_desc lr_gemv_leech_p14s_swiglu_i8_desc = {
    .name = "gemv_leech_p14s_swiglu",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)lr_gemv_leech_p14s_swiglu_i8_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_swiglu_i8_host_mag,
};

static double silu(double g) { return g / (1.0 + exp(-g)); }

/* mag 0: h = silu(g) u; 1: the error scale |silu'(g)| |u| m_g + |silu(g)| m_u
 * from the GEMV's magnitudes m (first-order propagation of each row's); g
 * and u (and their magnitudes) times ns first (the norm end: lr_norm_scale). */
void lr_gemv_leech_p14s_swiglu_ref(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                   const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                                   const float *x, float *h, int rows, int cols, int mag, int form, double ns)
{
    /* form: 0 the f16 form, 1 the int8 form, 2 the 3-bit form */
    typedef void (*host)(const uint8_t *, const uint8_t *, const float *, const uint16_t *, const uint32_t *,
                         const uint32_t *, const float *, const float *, float *, int32_t, int32_t);
    static const host val[3] = { lr_gemv_leech_p14s_host, lr_gemv_leech_p14s_i8_host, lr_gemv_leech_p14s_c3_host };
    static const host mg[3] = { lr_gemv_leech_p14s_host_mag, lr_gemv_leech_p14s_i8_host_mag,
                                lr_gemv_leech_p14s_c3_host_mag };
    float *y = malloc(sizeof(float) * (size_t)rows), *m = mag ? malloc(sizeof(float) * (size_t)rows) : NULL;
    if (!y || (mag && !m)) { /* the comparison then fails on the poisoned h */
        free(y), free(m);
        return;
    }
    val[form](W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols);
    if (mag) mg[form](W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, m, rows, cols);
    for (int i = 0; i < rows / 2; i++) {
        const double g = ns * y[2 * i], u = ns * y[2 * i + 1], sg = 1.0 / (1.0 + exp(-g));
        if (!mag) h[i] = (float)(silu(g) * u);
        else h[i] = (float)(ns * (fabs(sg * (1.0 + g * (1.0 - sg)) * u) * m[2 * i] + fabs(silu(g)) * m[2 * i + 1]));
    }
    free(y), free(m);
}

void lr_gemv_leech_p14s_swiglu_host(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                    const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                    const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols)
{
    lr_gemv_leech_p14s_swiglu_ref(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, h, rows, cols, 0, 0, 1.0);
}

void lr_gemv_leech_p14s_swiglu_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                        const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                        const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols)
{
    lr_gemv_leech_p14s_swiglu_ref(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, h, rows, cols, 1, 0, 1.0);
}

int lr_gemv_leech_p14s_spec_swiglu(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab,
                                   lr_leech_geom geom, int smem_budget)
{
    if (rows % 2) return LR_FAIL(LR_EINVAL, "gemv_leech_p14s SwiGLU: %d rows, not gate/up pairs", rows);
    if (geom.ends.brot) return LR_FAIL(LR_EINVAL, "gemv_leech_p14s SwiGLU: no block rotation in its prologue (down's)");
    int rc = lr_gemv_leech_p14s_spec(s, g, rows, cols, ntab, geom, smem_budget);
    if (rc) return rc;
    /* the rows' end (templates/gemv_rows_epilogue.cuh) gives a row
     * min(32, threads / rows) threads (a power of two): a pair's two rows
     * share one warp unless that is 32 */
    const int bal_rg = (int)lr_jit_spec_get(s, "bal", 0), groups = geom.groups > 1 ? geom.groups : 1;
    const int nr = 16 * (bal_rg ? bal_rg : geom.rg), t = geom.threads / (bal_rg ? 1 : groups);
    const lr_device_info *d = lr_cu_device();
    if (geom.bal == 2 && d && d->cc_major < 9)
        return LR_FAIL(LR_EUNSUPPORTED, "gemv_leech_p14s SwiGLU with the split: needs sm_90 (128-bit atomic exchange)");
    if (t / nr >= 32)
        return LR_FAIL(LR_EUNSUPPORTED,
                       "gemv_leech_p14s SwiGLU %dx%d: 32 threads per output row (at most 16: a gate/up pair in one warp)",
                       rows, cols);
    lr_jit_spec_set(s, "swiglu", 1);
    return LR_OK;
}

void lr_gemv_leech_p14s_swiglu_i8_host(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                       const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                       const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols)
{
    lr_gemv_leech_p14s_swiglu_ref(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, h, rows, cols, 0, 1, 1.0);
}

void lr_gemv_leech_p14s_swiglu_i8_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                           const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                           const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols)
{
    lr_gemv_leech_p14s_swiglu_ref(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, h, rows, cols, 1, 1, 1.0);
}

void lr_gemv_leech_p14s_swiglu_c3_host(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                       const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                       const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols)
{
    lr_gemv_leech_p14s_swiglu_ref(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, h, rows, cols, 0, 2, 1.0);
}

void lr_gemv_leech_p14s_swiglu_c3_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                           const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                           const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols)
{
    lr_gemv_leech_p14s_swiglu_ref(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, h, rows, cols, 1, 2, 1.0);
}
