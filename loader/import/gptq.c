/* GPTQ with the Leech shape-gain block quantizer (gptq.h). Rows are
 * independent once H is factored, so threads take groups of rows; a group
 * walks the blocks left to right and shares each row of U it reads. */
#include "loader/import/gptq.h"
#include "layouts/leech/leech.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/half.h"
#include "util/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHELL 12
#define GROUP_ROWS 8        /* rows a job walks together (U rows reused) */
#define CENTROID_ROWS 256   /* rows sampled for the gain centroids */

int lr_gptq_factor(const double *H, int n, double damp, double **Uo, double **Vo)
{
    *Uo = NULL;
    if (Vo) *Vo = NULL;
    if (!H || n <= 0) return LR_FAIL(LR_EINVAL, "gptq: %d x %d Hessian", n, n);
    size_t nn = (size_t)n * (size_t)n;
    /* (V only when asked for: at the 14B down's 17,408 columns each factor is 2.4 GB) */
    double *L = malloc(nn * sizeof *L), *U = calloc(nn, sizeof *U), *V = Vo ? calloc(nn, sizeof *V) : NULL;
    if (!L || !U || (Vo && !V)) {
        free(L), free(U), free(V);
        return LR_FAIL(LR_ENOMEM, "gptq: %d x %d factors", n, n);
    }
    for (size_t i = 0; i < nn; i++)
        if (!isfinite(H[i])) {
            free(L), free(U), free(V);
            return LR_FAIL(LR_EINVAL, "gptq: Hessian entry [%zu][%zu] is not finite", i / (size_t)n, i % (size_t)n);
        }
    double mean = 0;
    for (int i = 0; i < n; i++) mean += H[(size_t)i * n + i];
    mean /= n;
    int ident = !(mean > 0);
    /* A = J Hd J (rows and columns reversed), lower-triangular part only. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            size_t a = (size_t)(n - 1 - i) * n + (size_t)(n - 1 - j);
            double v = ident ? (i == j) : H[a];
            if (i == j) v += ident ? damp : damp * mean;
            L[(size_t)i * n + j] = v;
        }
    int rc = LR_OK;
    /* Cholesky A = L L^T, row by row (dot products of contiguous rows). */
    for (int i = 0; i < n && !rc; i++) {
        double *li = L + (size_t)i * n;
        for (int j = 0; j <= i; j++) {
            const double *lj = L + (size_t)j * n;
            double s = li[j];
            for (int k = 0; k < j; k++) s -= li[k] * lj[k];
            if (j < i) {
                li[j] = s / lj[j];
            } else if (!(s > 0) || !isfinite(s)) {
                rc = LR_FAIL(LR_EINVAL, "gptq: damped Hessian is not positive definite (pivot %d: %g)", n - 1 - i, s);
            } else {
                li[i] = sqrt(s);
            }
        }
    }
    if (!rc) {
        /* V = J L J (upper, V V^T = Hd): V_ik = L[n-1-i][n-1-k], which row n-1-i of L holds
           backwards from its last column. */
        if (V)
            for (int i = 0; i < n; i++)
                for (int j = i; j < n; j++) V[(size_t)i * n + j] = L[(size_t)(n - 1 - i) * n + (size_t)(n - 1 - j)];
        /* U = V^-1 (upper), rows from the bottom: U_i = (e_i - sum_{k>i} V_ik U_k) / V_ii. */
        for (int i = n - 1; i >= 0; i--) {
            double *ui = U + (size_t)i * n;
            const double *vrev = L + (size_t)(n - 1 - i) * n + (size_t)(n - 1); /* vrev[-k] = V_ik */
            ui[i] = 1.0;
            for (int k = i + 1; k < n; k++) {
                double f = vrev[-k];
                const double *uk = U + (size_t)k * n;
                for (int j = k; j < n; j++) ui[j] -= f * uk[j];
            }
            double d = 1.0 / vrev[-i];
            for (int j = i; j < n; j++) ui[j] *= d;
        }
    }
    free(L);
    if (rc) {
        free(U), free(V);
        return rc;
    }
    *Uo = U;
    if (Vo) *Vo = V;
    return LR_OK;
}

typedef struct {
    const float *W;
    int rows, cols, nblk, tail, k;
    const double *U, *V;
    const float *centroid;
    const float *row_scale;
    uint64_t *idx;
    uint8_t *gain;
    uint16_t *tail_f16;
    lr_progress *progress;
} gjob;

static int gptq_group(void *ctx, int job)
{
    gjob *j = ctx;
    int r0 = job * GROUP_ROWS, nr = j->rows - r0 < GROUP_ROWS ? j->rows - r0 : GROUP_ROWS, cols = j->cols;
    double *w = malloc((size_t)nr * (size_t)cols * sizeof *w);
    if (!w) return LR_FAIL(LR_ENOMEM, "gptq: out of memory");
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < cols; c++) w[(size_t)r * cols + c] = j->W[(size_t)(r0 + r) * cols + c];
    double ep[GROUP_ROWS][24];
    int rc = LR_OK;
    for (int b = 0; b < j->nblk && !rc; b++) {
        int c0 = 24 * b;
        for (int r = 0; r < nr && !rc; r++) {
            double *wr = w + (size_t)r * cols + c0, s = j->row_scale[r0 + r];
            float blk[24];
            for (int i = 0; i < 24; i++) blk[i] = (float)wr[i];
            int8_t p[24];
            size_t at = (size_t)(r0 + r) * (size_t)j->nblk + (size_t)b;
            if ((rc = lr_leech_nearest_angular(blk, MAX_SHELL, p)) || (rc = lr_leech_rank(p, MAX_SHELL, &j->idx[at]))) {
                rc = lr_wrap(rc, "gptq: row %d block %d", r0 + r, b);
                break;
            }
            double ip = 0, pn = sqrt((double)lr_leech_norm(p));
            for (int i = 0; i < 24; i++) ip += (double)blk[i] * p[i];
            double t = s > 0 ? ip / (pn * s) : 0.0;
            int g = 0;
            for (int q = 1; q < j->k; q++)
                if (fabs(t - j->centroid[q]) < fabs(t - j->centroid[g])) g = q;
            j->gain[at] = (uint8_t)g;
            /* The decoder's value: p_i * (centroid * s / |p|) rounded to f32. */
            float f = (float)((double)j->centroid[g] * s / pn);
            double e[24];
            for (int i = 0; i < 24; i++) e[i] = wr[i] - (double)((float)p[i] * f);
            /* e V_SS (V upper): ep_k = sum_{i <= k} e_i V[c0+i][c0+k]. */
            for (int k = 0; k < 24; k++) {
                double a = 0;
                for (int i = 0; i <= k; i++) a += e[i] * j->V[(size_t)(c0 + i) * cols + (size_t)(c0 + k)];
                ep[r][k] = a;
            }
        }
        if (rc) break;
        /* w_R -= ep U_SR for the columns after the block. */
        int cr = c0 + 24;
        for (int i = 0; i < 24 && cr < cols; i++) {
            const double *u = j->U + (size_t)(c0 + i) * cols;
            for (int r = 0; r < nr; r++) {
                double f = ep[r][i], *wr = w + (size_t)r * cols;
                for (int c = cr; c < cols; c++) wr[c] -= f * u[c];
            }
        }
    }
    for (int r = 0; r < nr && !rc; r++)
        for (int i = 0; i < j->tail; i++) {
            double v = w[(size_t)r * cols + (size_t)(24 * j->nblk + i)];
            if (!isfinite(v) || fabs(v) > 65504.0) {
                rc = LR_FAIL(LR_EINVAL, "gptq: row %d tail column %d: %g after error feedback", r0 + r, i, v);
                break;
            }
            j->tail_f16[(size_t)(r0 + r) * (size_t)j->tail + (size_t)i] = lr_float_to_half((float)v);
        }
    free(w);
    if (!rc && j->progress) lr_progress_add(j->progress, (uint64_t)nr);
    return rc;
}

/* Row scales (shapegain.c's formula) and gain centroids from the plain
 * quantizer on up to CENTROID_ROWS evenly spaced rows. */
static int scales_and_centroids(const float *W, int rows, int cols, int gain_bits, int nthreads, float *scale,
                                float *centroid)
{
    int nblk = cols / 24;
    for (int r = 0; r < rows; r++) {
        const float *w = W + (size_t)r * cols;
        double ss = 0;
        for (int i = 0; i < 24 * nblk; i++) ss += (double)w[i] * w[i];
        scale[r] = nblk ? (float)sqrt(ss / nblk) : 0.0f;
    }
    int take = rows < CENTROID_ROWS ? rows : CENTROID_ROWS;
    const float *S = W;
    float *sub = NULL;
    if (take < rows) {
        if (!(sub = malloc((size_t)take * cols * sizeof *sub))) return LR_FAIL(LR_ENOMEM, "gptq: out of memory");
        for (int k = 0; k < take; k++)
            memcpy(sub + (size_t)k * cols, W + (size_t)((long)k * rows / take) * cols, (size_t)cols * sizeof *sub);
        S = sub;
    }
    lr_leech_matrix m;
    int rc = lr_leech_quantize(S, take, cols, gain_bits, MAX_SHELL, nthreads, NULL, &m);
    if (!rc) memcpy(centroid, m.centroid, sizeof m.centroid);
    lr_leech_matrix_free(&m);
    free(sub);
    return rc;
}

int lr_gptq_leech(const float *W, int rows, int cols, const double *H, double damp, int gain_bits, int nthreads,
                  struct lr_progress *progress, lr_leech_matrix *out)
{
    if (!out) return LR_FAIL(LR_EINVAL, "gptq: NULL output");
    memset(out, 0, sizeof *out);
    if (!W || !H || rows <= 0 || cols <= 0) return LR_FAIL(LR_EINVAL, "gptq: %d x %d matrix", rows, cols);
    if (gain_bits < 0 || gain_bits > 2) return LR_FAIL(LR_EINVAL, "gptq: gain_bits %d", gain_bits);
    if (cols < 24) return LR_FAIL(LR_EINVAL, "gptq: %d columns (at least one 24-column block)", cols);
    lr_leech_matrix m = { 0 };
    m.rows = rows, m.cols = cols, m.nblk = cols / 24, m.tail = cols % 24, m.max_shell = MAX_SHELL;
    m.gain_bits = gain_bits;
    size_t nb = (size_t)rows * (size_t)m.nblk;
    m.archive_bytes = lr_leech_archive_bytes(nb, gain_bits);
    m.row_scale = malloc((size_t)rows * sizeof *m.row_scale);
    m.archive = malloc(m.archive_bytes);
    if (m.tail) m.tail_f16 = malloc((size_t)rows * (size_t)m.tail * sizeof *m.tail_f16);
    uint64_t *idx = malloc(nb * sizeof *idx);
    uint8_t *gain = malloc(nb);
    double *U = NULL, *V = NULL;
    int rc = LR_OK;
    if (!m.row_scale || !m.archive || (m.tail && !m.tail_f16) || !idx || !gain)
        rc = LR_FAIL(LR_ENOMEM, "gptq: %d x %d matrix", rows, cols);
    if (!rc) rc = scales_and_centroids(W, rows, cols, gain_bits, nthreads, m.row_scale, m.centroid);
    if (!rc) rc = lr_gptq_factor(H, cols, damp, &U, &V);
    if (!rc) {
        if (progress) lr_progress_start(progress, progress->label ? progress->label : "gptq", (uint64_t)rows);
        gjob j = { W, rows, cols, m.nblk, m.tail, 1 << gain_bits, U, V, m.centroid, m.row_scale, idx, gain,
                   m.tail_f16, progress };
        rc = lr_parallel_for(nthreads, (rows + GROUP_ROWS - 1) / GROUP_ROWS, gptq_group, &j);
        if (progress) lr_progress_finish(progress);
    }
    if (!rc) rc = lr_leech_archive_pack(idx, gain, nb, gain_bits, m.archive, m.archive_bytes);
    free(U), free(V), free(idx), free(gain);
    if (rc) lr_leech_matrix_free(&m);
    else *out = m;
    return rc;
}

typedef struct {
    float *W;
    int rows, cols;
    const double *H, *M, *U;
} asym_job;

#define ASYM_ROWS 16 /* rows per job of the target */

/* w += Hd^-1 (M - H) w, Hd^-1 = U^T U, for the job's rows. */
static int asym_rows(void *ctx, int job)
{
    asym_job *j = ctx;
    int n = j->cols, r0 = job * ASYM_ROWS, r1 = r0 + ASYM_ROWS < j->rows ? r0 + ASYM_ROWS : j->rows;
    double *w = malloc((size_t)n * sizeof *w), *d = malloc((size_t)n * sizeof *d), *e = malloc((size_t)n * sizeof *e);
    if (!w || !d || !e) {
        free(w), free(d), free(e);
        return LR_FAIL(LR_ENOMEM, "gptq: out of memory");
    }
    int rc = LR_OK;
    for (int r = r0; r < r1 && !rc; r++) {
        float *wr = j->W + (size_t)r * n;
        for (int i = 0; i < n; i++) w[i] = wr[i];
        for (int a = 0; a < n; a++) { /* d = (M - H) w */
            const double *m = j->M + (size_t)a * n, *h = j->H + (size_t)a * n;
            double s = 0;
            for (int b = 0; b < n; b++) s += (m[b] - h[b]) * w[b];
            d[a] = s;
        }
        for (int a = 0; a < n; a++) { /* e = U d (U upper) */
            const double *u = j->U + (size_t)a * n;
            double s = 0;
            for (int b = a; b < n; b++) s += u[b] * d[b];
            e[a] = s;
        }
        for (int b = 0; b < n; b++) d[b] = 0; /* d = U^T e */
        for (int a = 0; a < n; a++) {
            const double *u = j->U + (size_t)a * n, f = e[a];
            for (int b = a; b < n; b++) d[b] += u[b] * f;
        }
        for (int i = 0; i < n && !rc; i++) {
            double v = w[i] + d[i];
            if (!isfinite(v) || fabs(v) > 3.0e38) rc = LR_FAIL(LR_EINVAL, "gptq: row %d column %d of the target is %g", r, i, v);
            else wr[i] = (float)v;
        }
    }
    free(w), free(d), free(e);
    return rc;
}

int lr_gptq_asym_target(float *W, int rows, int cols, const double *H, const double *M, double damp, int nthreads)
{
    if (!W || !H || !M || rows <= 0 || cols <= 0) return LR_FAIL(LR_EINVAL, "gptq: %d x %d target", rows, cols);
    for (size_t i = 0; i < (size_t)cols * cols; i++)
        if (!isfinite(M[i])) return LR_FAIL(LR_EINVAL, "gptq: cross moment entry [%zu][%zu] is not finite", i / (size_t)cols, i % (size_t)cols);
    double *U = NULL;
    int rc = lr_gptq_factor(H, cols, damp, &U, NULL);
    if (rc) return rc;
    asym_job j = { W, rows, cols, H, M, U };
    rc = lr_parallel_for(nthreads, (rows + ASYM_ROWS - 1) / ASYM_ROWS, asym_rows, &j);
    free(U);
    return rc;
}

#define REFIT_CHUNK 16 /* rows per job of the refits */

typedef struct {
    const float *W, *R;
    const double *H;
    lr_leech_matrix *m;
} refit_job;

static int refit_rows(void *ctx, int job)
{
    refit_job *j = ctx;
    int r0 = job * REFIT_CHUNK, r1 = r0 + REFIT_CHUNK < j->m->rows ? r0 + REFIT_CHUNK : j->m->rows;
    int cols = j->m->cols, nb = 24 * j->m->nblk;
    double *q = malloc((size_t)cols * 2 * sizeof *q);
    if (!q) return LR_FAIL(LR_ENOMEM, "gptq refit: out of memory");
    double *hq = q + cols;
    for (int r = r0; r < r1; r++) {
        const float *w = j->W + (size_t)r * cols, *rec = j->R + (size_t)r * cols;
        for (int c = 0; c < cols; c++) q[c] = c < nb ? rec[c] : 0.0; /* the tail does not scale */
        double num = 0, den = 0;
        for (int a = 0; a < cols; a++) {
            const double *h = j->H + (size_t)a * cols;
            double s = 0;
            for (int c = 0; c < nb; c++) s += h[c] * q[c];
            hq[a] = s;
        }
        for (int a = 0; a < cols; a++) {
            double t = a < nb ? 0.0 : rec[a];
            num += hq[a] * ((double)w[a] - t);
            den += hq[a] * q[a];
        }
        double f = den > 0 ? num / den : 0.0;
        float ns = (float)(j->m->row_scale[r] * f);
        if (f > 0 && isfinite(f) && isfinite(ns) && ns > 0) j->m->row_scale[r] = ns;
    }
    free(q);
    return LR_OK;
}

int lr_gptq_refit_row_scales(const float *W, const double *H, int nthreads, lr_leech_matrix *m)
{
    if (!W || !H || !m || m->rows <= 0) return LR_FAIL(LR_EINVAL, "gptq refit: bad arguments");
    float *R = malloc((size_t)m->rows * m->cols * sizeof *R);
    if (!R) return LR_FAIL(LR_ENOMEM, "gptq refit: %d x %d", m->rows, m->cols);
    int rc = lr_leech_reconstruct(m, R);
    if (!rc) {
        refit_job j = { W, R, H, m };
        rc = lr_parallel_for(nthreads, (m->rows + REFIT_CHUNK - 1) / REFIT_CHUNK, refit_rows, &j);
    }
    free(R);
    return rc;
}

typedef struct {
    const float *W;
    const double *H;
    const lr_leech_matrix *m;
    const uint64_t *idx;
    const uint8_t *gain;
    double *acc; /* per chunk: A (4 x 4) then b (4) */
} cref_job;

static int cref_rows(void *ctx, int job)
{
    cref_job *j = ctx;
    const lr_leech_matrix *m = j->m;
    int r0 = job * REFIT_CHUNK, r1 = r0 + REFIT_CHUNK < m->rows ? r0 + REFIT_CHUNK : m->rows;
    int cols = m->cols, nb = 24 * m->nblk, k = 1 << m->gain_bits;
    double *u = calloc((size_t)cols * 8, sizeof *u); /* u_g (4 x cols), H u_g (4 x cols) */
    if (!u) return LR_FAIL(LR_ENOMEM, "gptq refit: out of memory");
    double *hu = u + (size_t)4 * cols, *acc = j->acc + (size_t)job * 20;
    int rc = LR_OK;
    for (int r = r0; r < r1 && !rc; r++) {
        memset(u, 0, (size_t)cols * 4 * sizeof *u);
        for (int b = 0; b < m->nblk; b++) {
            size_t at = (size_t)r * m->nblk + b;
            int8_t p[24];
            if ((rc = lr_leech_unrank(j->idx[at], m->max_shell, p))) break;
            int n2 = lr_leech_norm(p);
            if (!n2) continue;
            double inv = 1.0 / sqrt((double)n2);
            for (int i = 0; i < 24; i++) u[(size_t)j->gain[at] * cols + 24 * b + i] = p[i] * inv;
        }
        for (int g = 0; g < k; g++)
            for (int a = 0; a < cols; a++) {
                const double *h = j->H + (size_t)a * cols, *ug = u + (size_t)g * cols;
                double t = 0;
                for (int c = 0; c < nb; c++) t += h[c] * ug[c];
                hu[(size_t)g * cols + a] = t;
            }
        double s = m->row_scale[r];
        const float *w = j->W + (size_t)r * cols;
        for (int g = 0; g < k; g++) {
            const double *hg = hu + (size_t)g * cols;
            for (int h2 = 0; h2 < k; h2++) {
                const double *uh = u + (size_t)h2 * cols;
                double t = 0;
                for (int c = 0; c < nb; c++) t += hg[c] * uh[c];
                acc[4 * g + h2] += s * s * t;
            }
            double t = 0;
            for (int a = 0; a < cols; a++) {
                double tail = a < nb ? 0.0 : lr_half_to_float(m->tail_f16[(size_t)r * m->tail + (a - nb)]);
                t += hg[a] * ((double)w[a] - tail);
            }
            acc[16 + g] += s * t;
        }
    }
    free(u);
    return rc;
}

/* Solves the k x k system A x = b (k <= 4) by Gaussian elimination with
 * partial pivoting; 0 when singular. */
static int solve_small(double A[4][4], double b[4], int k, double x[4])
{
    for (int i = 0; i < k; i++) {
        int p = i;
        for (int r = i + 1; r < k; r++)
            if (fabs(A[r][i]) > fabs(A[p][i])) p = r;
        if (!(fabs(A[p][i]) > 1e-300)) return 0;
        for (int c = 0; c < k; c++) {
            double t = A[i][c];
            A[i][c] = A[p][c], A[p][c] = t;
        }
        double t = b[i];
        b[i] = b[p], b[p] = t;
        for (int r = i + 1; r < k; r++) {
            double f = A[r][i] / A[i][i];
            for (int c = i; c < k; c++) A[r][c] -= f * A[i][c];
            b[r] -= f * b[i];
        }
    }
    for (int i = k - 1; i >= 0; i--) {
        double t = b[i];
        for (int c = i + 1; c < k; c++) t -= A[i][c] * x[c];
        x[i] = t / A[i][i];
    }
    return 1;
}

int lr_gptq_refit_centroids(const float *W, const double *H, int nthreads, lr_leech_matrix *m)
{
    if (!W || !H || !m || m->rows <= 0) return LR_FAIL(LR_EINVAL, "gptq refit: bad arguments");
    size_t nb = (size_t)m->rows * m->nblk;
    int k = 1 << m->gain_bits, nchunks = (m->rows + REFIT_CHUNK - 1) / REFIT_CHUNK;
    uint64_t *idx = malloc((nb ? nb : 1) * sizeof *idx);
    uint8_t *gain = malloc(nb ? nb : 1);
    double *acc = calloc((size_t)nchunks * 20, sizeof *acc);
    int rc = !idx || !gain || !acc ? LR_FAIL(LR_ENOMEM, "gptq refit: out of memory") : LR_OK;
    if (!rc) rc = lr_leech_archive_unpack(m->archive, m->archive_bytes, nb, m->gain_bits, idx, gain);
    if (!rc) {
        cref_job j = { W, H, m, idx, gain, acc };
        rc = lr_parallel_for(nthreads, nchunks, cref_rows, &j);
    }
    if (!rc) {
        double A[4][4] = { { 0 } }, b[4] = { 0 }, c[4];
        for (int ch = 0; ch < nchunks; ch++) /* chunk order: the same sums on any thread count */
            for (int g = 0; g < k; g++) {
                for (int h = 0; h < k; h++) A[g][h] += acc[(size_t)ch * 20 + 4 * g + h];
                b[g] += acc[(size_t)ch * 20 + 16 + g];
            }
        int ok = solve_small(A, b, k, c);
        for (int g = 0; ok && g < k; g++) ok = isfinite(c[g]) && c[g] > 0 && isfinite((float)c[g]);
        for (int g = 0; ok && g < k; g++) m->centroid[g] = (float)c[g];
    }
    free(idx), free(gain), free(acc);
    return rc;
}

int lr_gptq_refit(const float *W, const double *H, int nthreads, int rounds, lr_leech_matrix *m)
{
    int rc = LR_OK;
    for (int i = 0; i < rounds && !rc; i++) {
        rc = lr_gptq_refit_centroids(W, H, nthreads, m);
        if (!rc) rc = lr_gptq_refit_row_scales(W, H, nthreads, m);
    }
    return rc;
}

double lr_gptq_objective(const float *W, const float *R, int rows, int cols, const double *H)
{
    double *d = malloc((size_t)cols * sizeof *d), sum = 0;
    if (!d) return NAN;
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) d[c] = (double)W[(size_t)r * cols + c] - R[(size_t)r * cols + c];
        for (int a = 0; a < cols; a++) {
            double s = 0;
            const double *h = H + (size_t)a * cols;
            for (int b = 0; b < cols; b++) s += h[b] * d[b];
            sum += d[a] * s;
        }
    }
    free(d);
    return sum;
}
