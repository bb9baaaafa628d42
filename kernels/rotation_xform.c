/* The rotation with its input made at the gather (rotate_slab.cu's
 * LR_XFORM): residual add + RMSNorm fused into the rotation that follows it
 * in a decode step. Descriptors, f64 host references (the
 * transformed input in f64, then lr_rotate_row_f64 on the kernels' tables)
 * and the specialisations. No GPU needed. */
#include "kernels/rotation.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>

const lr_kernel_desc lr_rotate_norm_desc = {
    .name = "rotate_norm",
    .nparams = 10,
    .params = { { "x", LR_T_PTR, LR_E_F32, LR_IN }, { "add", LR_T_PTR, LR_E_F32, LR_IN },
                { "w", LR_T_PTR, LR_E_F32, LR_IN }, { "xsum", LR_T_PTR, LR_E_F32, LR_OUT },
                { "y", LR_T_PTR, LR_E_F32, LR_OUT }, { "dbits", LR_T_PTR, LR_E_U32, LR_IN },
                { "q", LR_T_PTR, LR_E_F32, LR_IN }, { "n", LR_T_I32, 0, 0 }, { "batch", LR_T_I32, 0, 0 },
                { "eps", LR_T_F32, 0, 0 } },
    .host = (lr_host_fn)lr_rotate_norm_host,
    .host_mag = (lr_host_fn)lr_rotate_norm_host_mag,
};

/* v = x + add in f32 (the kernel's one rounding, so xsum compares exactly);
 * the norm and the product with w in f64. */
static void norm_rows(const float *x, const float *add, const float *w, float *xsum, float *y, const uint32_t *dbits,
                      const float *q, int n, int batch, float eps, int mag)
{
    double *t = malloc(sizeof(double) * (size_t)n), *o = malloc(sizeof(double) * (size_t)n);
    for (int b = 0; b < batch; b++) {
        size_t row = (size_t)b * n;
        if (!t || !o) {
            for (int i = 0; i < n; i++) xsum[row + i] = y[row + i] = NAN;
            continue;
        }
        double ss = 0;
        for (int i = 0; i < n; i++) {
            float v = add ? x[row + i] + add[row + i] : x[row + i];
            xsum[row + i] = mag ? fabsf(v) : v;
            ss += (double)v * v;
            t[i] = v;
        }
        double r = 1.0 / sqrt(ss / n + (double)eps);
        for (int i = 0; i < n; i++) t[i] = t[i] * w[i] * r;
        lr_rotate_row_f64(t, o, dbits, q, n, mag);
        for (int i = 0; i < n; i++) y[row + i] = (float)o[i];
    }
    free(t);
    free(o);
}

void lr_rotate_norm_host(const float *x, const float *add, const float *w, float *xsum, float *y,
                         const uint32_t *dbits, const float *q, int32_t n, int32_t batch, float eps)
{
    norm_rows(x, add, w, xsum, y, dbits, q, n, batch, eps, 0);
}

void lr_rotate_norm_host_mag(const float *x, const float *add, const float *w, float *xsum, float *y,
                             const uint32_t *dbits, const float *q, int32_t n, int32_t batch, float eps)
{
    norm_rows(x, add, w, xsum, y, dbits, q, n, batch, eps, 1);
}

int lr_rot_plan_spec_xform(const lr_rot_plan *p, int xform, lr_jit_spec *s)
{
    if (xform < LR_ROT_X_PLAIN || xform >= LR_ROT_NX) return LR_FAIL(LR_EINVAL, "rotation input transform %d", xform);
    int rc = lr_rot_plan_spec(p, s);
    if (!rc && xform != LR_ROT_X_PLAIN) rc = lr_jit_spec_set(s, "xform", xform);
    return rc;
}

unsigned lr_rot_xform_smem(const lr_rot_plan *p, int xform)
{
    return p->smem + (xform == LR_ROT_X_NORM ? 32u * 4u : 0u); /* lr_block_sum's partials */
}

lr_launch_geom lr_rot_xform_geom(const lr_rot_plan *p, int xform, int batch)
{
    lr_launch_geom g = lr_rot_plan_geom(p, batch);
    g.smem = lr_rot_xform_smem(p, xform);
    return g;
}
