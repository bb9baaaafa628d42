/* Host f64 reference of the incoherence rotation: generation from the seed,
 * Q x, Q^T x, the dense matrix. Conventions in kernels/rotation.h and
 * docs/rotation.md. */
#include "kernels/rotation.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int lr_rot_factor(int n, int *m, int *k)
{
    if (n <= 0) return LR_FAIL(LR_EINVAL, "rotation width %d", n);
    int mm = n & -n, kk = n / mm;
    if (m) *m = mm;
    if (k) *k = kk;
    if (kk > LR_ROT_MAX_K || mm < LR_ROT_MIN_M || mm > LR_ROT_MAX_M)
        return LR_FAIL(LR_EUNSUPPORTED, "rotation width %d = %d x %d: need an odd factor <= %d and a power of two in [%d, %d]",
                       n, kk, mm, LR_ROT_MAX_K, LR_ROT_MIN_M, LR_ROT_MAX_M);
    return LR_OK;
}

/* Q of the QR factorisation of g (k x k, row-major) by modified Gram-Schmidt
 * on the columns, each column orthogonalised twice (one pass loses
 * orthogonality in proportion to the condition number). */
static int gram_schmidt(double *g, int k)
{
    for (int j = 0; j < k; j++) {
        for (int pass = 0; pass < 2; pass++)
            for (int p = 0; p < j; p++) {
                double d = 0;
                for (int i = 0; i < k; i++) d += g[i * k + p] * g[i * k + j];
                for (int i = 0; i < k; i++) g[i * k + j] -= d * g[i * k + p];
            }
        double nn = 0;
        for (int i = 0; i < k; i++) nn += g[i * k + j] * g[i * k + j];
        nn = sqrt(nn);
        if (!(nn > 1e-8)) return LR_FAIL(LR_EINVAL, "rotation: degenerate Gaussian matrix");
        for (int i = 0; i < k; i++) g[i * k + j] /= nn;
    }
    return LR_OK;
}

int lr_rot_init(lr_rot *r, int n, uint64_t seed) { return lr_rot_init_blocks(r, n, n, seed); }

int lr_rot_init_blocks(lr_rot *r, int n, int block, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    if (block <= 0 || n <= 0 || n % block)
        return LR_FAIL(LR_EINVAL, "rotation: block %d does not divide width %d", block, n);
    int rc = lr_rot_factor(block, &r->m, &r->k);
    if (rc) return rc;
    r->n = n;
    r->block = block;
    r->seed = seed;
    size_t words = ((size_t)n + 63) / 64 * 2;
    r->dbits = calloc(words, 4);
    r->qodd = malloc(sizeof(double) * (size_t)r->k * r->k);
    if (!r->dbits || !r->qodd) { lr_rot_free(r); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    lr_rng g;
    lr_rng_seed(&g, seed);
    for (size_t c = 0; c < words / 2; c++) {
        uint64_t v = lr_rng_u64(&g);
        r->dbits[2 * c] = (uint32_t)v;
        r->dbits[2 * c + 1] = (uint32_t)(v >> 32);
    }
    /* Bits past n stay: kernels never read them, but keep them clear anyway. */
    for (size_t i = (size_t)n; i < words * 32; i++) r->dbits[i >> 5] &= ~(1u << (i & 31));
    if (r->k == 1) {
        r->qodd[0] = 1.0;
        return LR_OK;
    }
    for (int i = 0; i < r->k * r->k; i++) r->qodd[i] = lr_rng_gauss(&g);
    rc = gram_schmidt(r->qodd, r->k);
    if (rc) lr_rot_free(r);
    return rc;
}

void lr_rot_free(lr_rot *r)
{
    free(r->dbits);
    free(r->qodd);
    memset(r, 0, sizeof *r);
}

void lr_fwht(double *v, int m)
{
    for (int h = 1; h < m; h <<= 1)
        for (int i = 0; i < m; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                double a = v[j], b = v[j + h];
                v[j] = a + b;
                v[j + h] = a - b;
            }
}

/* Mixes the k rows of t (k x m) with q or q^T into y. */
static void mix_rows(const double *q, int k, int m, int transpose, const double *t, double *y)
{
    for (int r = 0; r < k; r++)
        for (int c = 0; c < m; c++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += (transpose ? q[p * k + r] : q[r * k + p]) * t[(size_t)p * m + c];
            y[(size_t)r * m + c] = s;
        }
}

int lr_rot_apply(const lr_rot *r, const double *x, double *y)
{
    double *t = malloc(sizeof(double) * (size_t)r->block);
    if (!t) return LR_FAIL(LR_ENOMEM, "out of memory");
    double sc = 1.0 / sqrt((double)r->m);
    for (int b0 = 0; b0 < r->n; b0 += r->block) { /* one diagonal block (the whole vector for kind 1) */
        for (int i = 0; i < r->block; i++) t[i] = lr_rot_sign(r, b0 + i) * x[b0 + i];
        for (int row = 0; row < r->k; row++) {
            lr_fwht(t + (size_t)row * r->m, r->m);
            for (int c = 0; c < r->m; c++) t[(size_t)row * r->m + c] *= sc;
        }
        mix_rows(r->qodd, r->k, r->m, 0, t, y + b0);
    }
    free(t);
    return LR_OK;
}

int lr_rot_apply_t(const lr_rot *r, const double *x, double *y)
{
    double *t = malloc(sizeof(double) * (size_t)r->block);
    if (!t) return LR_FAIL(LR_ENOMEM, "out of memory");
    double sc = 1.0 / sqrt((double)r->m);
    for (int b0 = 0; b0 < r->n; b0 += r->block) {
        mix_rows(r->qodd, r->k, r->m, 1, x + b0, t);
        for (int row = 0; row < r->k; row++) lr_fwht(t + (size_t)row * r->m, r->m);
        for (int i = 0; i < r->block; i++) y[b0 + i] = lr_rot_sign(r, b0 + i) * t[i] * sc;
    }
    free(t);
    return LR_OK;
}

int lr_rot_dense(const lr_rot *r, double *q)
{
    int n = r->n, m = r->m, bl = r->block;
    double sc = 1.0 / sqrt((double)m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i / bl != j / bl) { q[(size_t)i * n + j] = 0.0; continue; }
            int ri = i % bl / m, ci = i % m, rj = j % bl / m, cj = j % m;
            double h = (__builtin_popcount((unsigned)(ci & cj)) & 1) ? -sc : sc;
            q[(size_t)i * n + j] = r->qodd[ri * r->k + rj] * h * lr_rot_sign(r, j);
        }
    return LR_OK;
}

void lr_rot_qtable(const lr_rot *r, float *q)
{
    double sc = 1.0 / sqrt((double)r->m);
    for (int i = 0; i < r->k * r->k; i++) q[i] = (float)(r->qodd[i] * sc);
}

/* ---- host references of the kernels: f64 on the tables the kernel gets ---- */

void lr_rotate_row_f64(const double *x, double *out, const uint32_t *dbits, const float *q, int n, int mag)
{
    int m = n & -n, k = n / m;
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!t) { for (int i = 0; i < n; i++) out[i] = NAN; return; }
    if (mag) {
        /* |Q_ij| = |q[r][r']| for every j in row r' (Hadamard entries are +-1). */
        for (int rp = 0; rp < k; rp++) {
            double ss = 0;
            for (int c = 0; c < m; c++) ss += x[rp * m + c] * x[rp * m + c];
            t[rp] = ss;
        }
        for (int r = 0; r < k; r++) {
            double s = 0;
            for (int rp = 0; rp < k; rp++) s += (double)q[r * k + rp] * q[r * k + rp] * t[rp];
            for (int c = 0; c < m; c++) out[r * m + c] = sqrt(s);
        }
        free(t);
        return;
    }
    for (int i = 0; i < n; i++) t[i] = ((dbits[i >> 5] >> (i & 31)) & 1) ? -x[i] : x[i];
    for (int r = 0; r < k; r++) lr_fwht(t + (size_t)r * m, m);
    for (int r = 0; r < k; r++)
        for (int c = 0; c < m; c++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += (double)q[r * k + p] * t[(size_t)p * m + c];
            out[(size_t)r * m + c] = s;
        }
    free(t);
}

/* One f32 row through lr_rotate_row_f64. */
static void rotate_row(const float *x, double *out, const uint32_t *dbits, const float *q, int n, int mag)
{
    double *xd = malloc(sizeof(double) * (size_t)n);
    if (!xd) { for (int i = 0; i < n; i++) out[i] = NAN; return; }
    for (int i = 0; i < n; i++) xd[i] = x[i];
    lr_rotate_row_f64(xd, out, dbits, q, n, mag);
    free(xd);
}

static void rotate_rows(const float *x, float *y, const uint32_t *dbits, const float *q, int n, int batch, int mag)
{
    double *o = malloc(sizeof(double) * (size_t)n);
    for (int b = 0; b < batch; b++) {
        if (!o) { for (int i = 0; i < n; i++) y[(size_t)b * n + i] = NAN; continue; }
        rotate_row(x + (size_t)b * n, o, dbits, q, n, mag);
        for (int i = 0; i < n; i++) y[(size_t)b * n + i] = (float)o[i];
    }
    free(o);
}

void lr_rotate_host(const float *x, float *y, const uint32_t *dbits, const float *q, int32_t n, int32_t batch)
{
    rotate_rows(x, y, dbits, q, n, batch, 0);
}

void lr_rotate_host_mag(const float *x, float *y, const uint32_t *dbits, const float *q, int32_t n, int32_t batch)
{
    rotate_rows(x, y, dbits, q, n, batch, 1);
}

static void gemv_rot(const uint16_t *W, const float *x, float *y, const uint32_t *dbits, const float *q, int rows,
                     int cols, int mag);

void lr_gemv_f16_rot_host(const uint16_t *W, const float *x, float *y, const uint32_t *dbits, const float *q,
                          int32_t rows, int32_t cols)
{
    gemv_rot(W, x, y, dbits, q, rows, cols, 0);
}

void lr_gemv_f16_rot_host_mag(const uint16_t *W, const float *x, float *y, const uint32_t *dbits, const float *q,
                              int32_t rows, int32_t cols)
{
    gemv_rot(W, x, y, dbits, q, rows, cols, 1);
}

/* f64: x' = rotation (exact, not rounded to f32), then y = W x' or sum |W x'|. */
static void gemv_rot(const uint16_t *W, const float *x, float *y, const uint32_t *dbits, const float *q, int rows,
                     int cols, int mag)
{
    double *xr = malloc(sizeof(double) * (size_t)cols);
    if (!xr) { for (int r = 0; r < rows; r++) y[r] = NAN; return; }
    rotate_row(x, xr, dbits, q, cols, 0);
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < cols; c++) {
            double t = lr_half_to_float(W[(size_t)r * cols + c]) * xr[c];
            s += mag ? fabs(t) : t;
        }
        y[r] = (float)s;
    }
    free(xr);
}

uint64_t lr_rot_seed_for_width(uint64_t model_seed, uint64_t width)
{
    uint64_t x = model_seed ^ (width * 0x9e3779b97f4a7c15ull);
    return lr_splitmix64(&x);
}
