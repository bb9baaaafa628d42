/* Device side of the rotation: uploaded tables + the specialised kernel
 * (what the engine keeps per rotation), verification against the f64
 * reference, and the two ways to feed a row-concatenated FP16 GEMV
 * (separate rotation launch, or the fused prologue). */
#include "jit/jit.h"
#include "kernels/rotation.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t dbit_words(int n) { return ((size_t)n + 63) / 64 * 2; }

int lr_rot_dev_tables(const lr_rot *r, CUdeviceptr *dbits, CUdeviceptr *q)
{
    *dbits = *q = 0;
    float qt[LR_ROT_MAX_K * LR_ROT_MAX_K];
    lr_rot_qtable(r, qt);
    size_t qb = sizeof(float) * (size_t)r->k * r->k, db = 4 * dbit_words(r->n);
    int rc = lr_cu_alloc(q, qb);
    if (!rc) rc = lr_cu_alloc(dbits, db);
    if (!rc) rc = lr_cu_h2d(*q, qt, qb);
    if (!rc) rc = lr_cu_h2d(*dbits, r->dbits, db);
    if (rc) lr_cu_free(*q), lr_cu_free(*dbits), *dbits = *q = 0;
    return rc;
}

int lr_rot_dev_create(lr_rot_dev *d, const lr_rot *r, int mode, int s, int threads)
{
    memset(d, 0, sizeof *d);
    if (r->block != r->n) /* the per-head rotation runs inside the attention kernels (lr_rot_dev_tables) */
        return LR_FAIL(LR_EUNSUPPORTED, "rotation kernel: width %d in blocks of %d", r->n, r->block);
    int rc = lr_rot_plan_make(r->n, lr_cu_smem_budget(), mode, s, threads, &d->plan);
    if (rc) return rc;
    lr_jit_spec spec;
    lr_rot_plan_spec(&d->plan, &spec);
    if ((rc = lr_jit_get(&spec, &d->fn))) return rc;
    rc = lr_rot_dev_tables(r, &d->dbits, &d->q);
    if (rc) lr_rot_dev_destroy(d);
    return rc;
}

int lr_rot_dev_launch(const lr_rot_dev *d, CUdeviceptr x, CUdeviceptr y, int batch, CUstream st)
{
    lr_launch_geom g = lr_rot_plan_geom(&d->plan, batch);
    int n = d->plan.n;
    CUdeviceptr db = d->dbits, q = d->q;
    void *args[] = { &x, &y, &db, &q, &n, &batch };
    return lr_cu_launch(d->fn, g.grid, g.block, g.smem, st, args);
}

int lr_rot_dev_enable(lr_rot_dev *d, int xform)
{
    if (xform != LR_ROT_X_NORM)
        return LR_FAIL(LR_EINVAL, "rotation %d: input transform %d", d->plan.n, xform);
    if (d->fx[xform]) return LR_OK;
    unsigned smem = lr_rot_xform_smem(&d->plan, xform);
    if ((long)smem > lr_cu_smem_budget())
        return LR_FAIL(LR_ERANGE, "rotation %d with input transform %d needs %u B of shared memory, budget %d B",
                       d->plan.n, xform, smem, lr_cu_smem_budget());
    lr_jit_spec spec;
    int rc = lr_rot_plan_spec_xform(&d->plan, xform, &spec);
    return rc ? rc : lr_jit_get(&spec, &d->fx[xform]);
}

int lr_rot_dev_launch_norm(const lr_rot_dev *d, CUdeviceptr x, CUdeviceptr add, CUdeviceptr w, CUdeviceptr xsum,
                           float eps, CUdeviceptr y, int batch, CUstream st)
{
    if (!d->fx[LR_ROT_X_NORM]) return LR_FAIL(LR_EINVAL, "rotation %d: add + RMSNorm variant not enabled", d->plan.n);
    if (xsum == x || xsum == add || xsum == y)
        return LR_FAIL(LR_EINVAL, "rotation %d: xsum aliases an input", d->plan.n);
    lr_launch_geom g = lr_rot_xform_geom(&d->plan, LR_ROT_X_NORM, batch);
    int n = d->plan.n;
    CUdeviceptr db = d->dbits, q = d->q;
    void *args[] = { &x, &add, &w, &xsum, &y, &db, &q, &n, &batch, &eps };
    return lr_cu_launch(d->fx[LR_ROT_X_NORM], g.grid, g.block, g.smem, st, args);
}

void lr_rot_dev_destroy(lr_rot_dev *d)
{
    lr_cu_free(d->q);
    lr_cu_free(d->dbits);
    memset(d, 0, sizeof *d);
}

/* got vs the f64 rotation from the seed, judged against the descriptor's
 * magnitude: the second, independent half of verification. */
static int check_vs_seed(const lr_rot *r, const float *x, const float *got, const float *mag, int batch, double tol,
                         double *err)
{
    size_t n = (size_t)r->n;
    double *xd = malloc(sizeof(double) * n), *yd = malloc(sizeof(double) * n);
    if (!xd || !yd) { free(xd); free(yd); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    int rc = LR_OK;
    size_t bad = 0, worst = 0;
    for (int b = 0; b < batch && !rc; b++) {
        for (size_t i = 0; i < n; i++) xd[i] = x[b * n + i];
        rc = lr_rot_apply(r, xd, yd);
        for (size_t i = 0; i < n && !rc; i++) {
            double e = fabs(got[b * n + i] - yd[i]) / fmax(mag[b * n + i], 1e-30);
            if (!(e <= tol)) bad++;
            if (!(e <= *err)) *err = e, worst = b * n + i;
        }
    }
    free(xd);
    free(yd);
    if (!rc && bad)
        rc = LR_FAIL(LR_EVERIFY, "rotate %d: %zu outputs off the seed's f64 rotation, worst [%zu] rel err %.3g", r->n, bad,
                     worst, *err);
    return rc;
}

int lr_rot_dev_verify(const lr_rot_dev *d, const lr_rot *r, int batch, uint64_t seed, double tol, double *err)
{
    *err = 0;
    size_t n = (size_t)r->n * batch;
    float *x = malloc(4 * n), *y = malloc(4 * n), *mag = malloc(4 * n), q[LR_ROT_MAX_K * LR_ROT_MAX_K];
    int rc = (!x || !y || !mag) ? LR_FAIL(LR_ENOMEM, "out of memory") : LR_OK;
    if (!rc) {
        lr_rng g;
        lr_rng_seed(&g, seed);
        lr_fill_random(LR_E_F32, x, n, &g, 1.0);
        lr_rot_qtable(r, q);
        lr_arg a[6] = { 0 };
        a[0].host = x, a[0].count = n;
        a[1].host = y, a[1].count = n;
        a[2].host = r->dbits, a[2].count = dbit_words(r->n);
        a[3].host = q, a[3].count = (size_t)r->k * r->k;
        a[4].v.i32 = r->n;
        a[5].v.i32 = batch;
        lr_verify_report rep;
        rc = lr_call_verify(&lr_rotate_desc, d->fn, a, lr_rot_plan_geom(&d->plan, batch), tol, &rep);
        *err = rep.max_rel_err;
        if (!rc) {
            lr_rotate_host_mag(x, mag, r->dbits, q, r->n, batch);
            rc = check_vs_seed(r, x, y, mag, batch, tol, err);
        }
    }
    free(x);
    free(y);
    free(mag);
    return rc;
}

/* ---- rotation feeding a row-concatenated FP16 GEMV ---- */

int lr_rot_proj_create(lr_rot_proj *p, const lr_rot *r, int rows, int copies, int fused, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->fused = fused, p->rows = rows, p->cols = r->n, p->copies = copies < 1 ? 1 : copies;
    int rc = lr_rot_dev_create(&p->rot, r, LR_ROT_AUTO, 0, 0);
    if (rc) return rc;
    lr_jit_spec spec;
    lr_gemv_geom geom = lr_gemv_f16_default_geom(rows, p->cols);
    const lr_device_info *dev = lr_cu_device();
    if (fused) rc = lr_gemv_f16_rot_spec(&spec, &p->g, rows, p->cols, geom, lr_cu_smem_budget(), 2 * (dev ? dev->sm_count : 132));
    else rc = lr_gemv_f16_spec(&spec, &p->g, rows, p->cols, geom, lr_cu_smem_budget(), 0);
    if (!rc) rc = lr_jit_get(&spec, &p->gemv);
    size_t nw = (size_t)rows * p->cols;
    if (!rc && !(p->host_w = malloc(nw * 2))) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    if (!rc) rc = lr_cu_alloc(&p->w, nw * 2 * (size_t)p->copies);
    if (!rc) rc = lr_cu_alloc(&p->xr, 4 * (size_t)p->cols);
    if (!rc) {
        lr_rng g;
        lr_rng_seed(&g, seed);
        lr_fill_random(LR_E_F16, p->host_w, nw, &g, 1.0);
    }
    for (int c = 0; c < p->copies && !rc; c++) rc = lr_cu_h2d(p->w + (size_t)c * nw * 2, p->host_w, nw * 2);
    if (rc) lr_rot_proj_destroy(p);
    return rc;
}

int lr_rot_proj_launch(const lr_rot_proj *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    CUdeviceptr w = p->w + (size_t)(copy % p->copies) * p->rows * p->cols * 2;
    int rows = p->rows, cols = p->cols;
    if (p->fused) {
        CUdeviceptr db = p->rot.dbits, q = p->rot.q;
        void *args[] = { &w, &x, &y, &db, &q, &rows, &cols };
        return lr_cu_launch(p->gemv, p->g.grid, p->g.block, p->g.smem, st, args);
    }
    int rc = lr_rot_dev_launch(&p->rot, x, p->xr, 1, st);
    if (rc) return rc;
    CUdeviceptr xr = p->xr;
    void *args[] = { &w, &xr, &y, &rows, &cols };
    return lr_cu_launch(p->gemv, p->g.grid, p->g.block, p->g.smem, st, args);
}

int lr_rot_proj_verify(const lr_rot_proj *p, const lr_rot *r, uint64_t seed, double *err)
{
    *err = 0;
    const double tol = 1e-5;
    float *x = malloc(4 * (size_t)p->cols), *y = malloc(4 * (size_t)p->rows), *ref = malloc(4 * (size_t)p->rows),
          *mag = malloc(4 * (size_t)p->rows), q[LR_ROT_MAX_K * LR_ROT_MAX_K];
    int rc = (!x || !y || !ref || !mag) ? LR_FAIL(LR_ENOMEM, "out of memory") : LR_OK;
    lr_rng g;
    lr_rng_seed(&g, seed);
    if (!rc) lr_fill_random(LR_E_F32, x, (size_t)p->cols, &g, 1.0);
    lr_rot_qtable(r, q);
    lr_arg a[7] = { 0 };
    a[0].host = p->host_w, a[0].count = (size_t)p->rows * p->cols;
    a[1].host = x, a[1].count = (size_t)p->cols;
    a[2].host = y, a[2].count = (size_t)p->rows;
    a[3].host = r->dbits, a[3].count = dbit_words(r->n);
    a[4].host = q, a[4].count = (size_t)r->k * r->k;
    a[5].v.i32 = p->rows;
    a[6].v.i32 = p->cols;
    lr_verify_report rep;
    if (!rc && p->fused) {
        rc = lr_call_verify(&lr_gemv_f16_rot_desc, p->gemv, a, p->g, tol, &rep);
        *err = rep.max_rel_err;
    } else if (!rc) {
        /* Two launches: run the chain, then compare like lr_call_verify does. */
        CUdeviceptr dx = 0, dy = 0;
        rc = lr_cu_alloc(&dx, 4 * (size_t)p->cols);
        if (!rc) rc = lr_cu_alloc(&dy, 4 * (size_t)p->rows);
        if (!rc) rc = lr_cu_h2d(dx, x, 4 * (size_t)p->cols);
        if (!rc) rc = lr_cu_memset8(dy, 0xff, 4 * (size_t)p->rows);
        if (!rc) rc = lr_rot_proj_launch(p, 0, dx, dy, NULL);
        if (!rc) rc = lr_cu_sync();
        if (!rc) rc = lr_cu_d2h(y, dy, 4 * (size_t)p->rows);
        lr_cu_free(dx);
        lr_cu_free(dy);
        if (!rc) {
            lr_gemv_f16_rot_host(p->host_w, x, ref, r->dbits, q, p->rows, p->cols);
            lr_gemv_f16_rot_host_mag(p->host_w, x, mag, r->dbits, q, p->rows, p->cols);
            void *got[1] = { y }, *rf[1] = { ref }, *sc[1] = { mag };
            rc = lr_call_compare_outputs(&lr_gemv_f16_rot_desc, a, got, rf, sc, tol, &rep);
            *err = rep.max_rel_err;
        }
    }
    free(x);
    free(y);
    free(ref);
    free(mag);
    return rc;
}

void lr_rot_proj_destroy(lr_rot_proj *p)
{
    lr_rot_dev_destroy(&p->rot);
    lr_cu_free(p->w);
    lr_cu_free(p->xr);
    free(p->host_w);
    memset(p, 0, sizeof *p);
}
