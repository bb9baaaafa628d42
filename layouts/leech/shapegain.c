/* Shape-gain quantization of a matrix with the Leech ball L24(12)
 * (shapegain.h). Per row: scale s = RMS of the 24-column block norms. Per
 * block b: shape p = the exact angular nearest ball point (the best unit
 * direction u = p/|p| whatever the gain, since the error for gain c,
 *   |b - c s u|^2 = |b|^2 - s^2 t^2 + s^2 (c - t)^2  with  t = <b,u>/s,
 * decreases with t for every c > 0), then the gain index of the centroid
 * nearest to t. The centroids (1, 2 or 4) are Lloyd-Max on the t of the
 * whole matrix weighted by s^2, which is exactly the squared error above
 * (unweighted when rows share a scale). The last cols % 24 columns are kept
 * in f16.
 *
 * progress (may be NULL; zeroed or with a label set by the caller) is
 * started here with one unit per row and finished at the end.
 *
 * Threads work on rows (dynamic, a few rows at a time); the Lloyd-Max step
 * is one sort of the t values and prefix sums, then iterations that cost a
 * binary search per centroid. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/shapegain.h"
#include "util/err.h"
#include "util/half.h"
#include "util/progress.h"

#define MAX_SHELL 12     /* the archive holds 47-bit indices of L24(12) */
#define ROWS_PER_TAKE 4
#define LLOYD_ITERS 300

typedef struct {
    const float *W;
    int rows, cols, nblk, tail;
    float *row_scale;
    uint64_t *idx; /* rows * nblk */
    double *t;     /* rows * nblk: <b,u> / s */
    uint16_t *tail_f16;
    lr_progress *progress;
    int next_row;  /* atomic */
    int rc;        /* first error, guarded by mu */
    char err[512];
    pthread_mutex_t mu;
} job;

static void fail(job *j, int rc)
{
    pthread_mutex_lock(&j->mu);
    if (!j->rc) {
        snprintf(j->err, sizeof j->err, "%s", lr_errmsg());
        __atomic_store_n(&j->rc, rc, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&j->mu);
}

static int quantize_row(job *j, int r)
{
    const float *w = j->W + (size_t)r * (size_t)j->cols;
    double ss = 0;
    for (int i = 0; i < 24 * j->nblk; i++) ss += (double)w[i] * w[i];
    float s = j->nblk ? (float)sqrt(ss / j->nblk) : 0.0f;
    j->row_scale[r] = s;
    for (int b = 0; b < j->nblk; b++) {
        const float *blk = w + 24 * b;
        int8_t p[24];
        int rc = lr_leech_nearest_angular(blk, MAX_SHELL, p);
        if (rc) return lr_wrap(rc, "leech quantize: row %d block %d", r, b);
        size_t at = (size_t)r * (size_t)j->nblk + (size_t)b;
        rc = lr_leech_rank(p, MAX_SHELL, &j->idx[at]);
        if (rc) return lr_wrap(rc, "leech quantize: row %d block %d", r, b);
        double ip = 0;
        for (int i = 0; i < 24; i++) ip += (double)blk[i] * p[i];
        j->t[at] = s > 0 ? ip / (sqrt((double)lr_leech_norm(p)) * s) : 0.0;
    }
    for (int i = 0; i < j->tail; i++) {
        float v = w[24 * j->nblk + i];
        if (!isfinite(v)) return LR_FAIL(LR_EINVAL, "leech quantize: row %d column %d is not finite", r, 24 * j->nblk + i);
        j->tail_f16[(size_t)r * (size_t)j->tail + (size_t)i] = lr_float_to_half(v);
    }
    return LR_OK;
}

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        int r0 = __atomic_fetch_add(&j->next_row, ROWS_PER_TAKE, __ATOMIC_RELAXED);
        if (r0 >= j->rows || __atomic_load_n(&j->rc, __ATOMIC_RELAXED)) break;
        int r1 = r0 + ROWS_PER_TAKE < j->rows ? r0 + ROWS_PER_TAKE : j->rows;
        for (int r = r0; r < r1; r++) {
            int rc = quantize_row(j, r);
            if (rc) {
                fail(j, rc);
                return NULL;
            }
        }
        if (j->progress) lr_progress_add(j->progress, (uint64_t)(r1 - r0));
    }
    return NULL;
}

/* ---- weighted 1-D Lloyd-Max ---- */

typedef struct { double t, w; } sample;

static int by_t(const void *pa, const void *pb)
{
    double a = ((const sample *)pa)->t, b = ((const sample *)pb)->t;
    return a < b ? -1 : a > b;
}

/* First index in sorted x[0..n) with x.t >= v. */
static size_t lower_bound(const sample *x, size_t n, double v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x[mid].t < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Centroids c[0..k) ascending minimizing sum w (t - c_nearest)^2, from the
 * weighted quantile bins, iterated to a fixed point. */
static int lloyd_max(const double *t, const float *row_scale, int rows, int nblk, int k, float *c)
{
    size_t n = (size_t)rows * (size_t)nblk;
    for (int i = 0; i < 4; i++) c[i] = 0;
    if (!n) return LR_OK;
    sample *x = malloc(n * sizeof *x);
    double *cw = malloc((n + 1) * sizeof *cw), *cwt = malloc((n + 1) * sizeof *cwt);
    if (!x || !cw || !cwt) {
        free(x), free(cw), free(cwt);
        return LR_FAIL(LR_ENOMEM, "leech quantize: Lloyd-Max over %zu blocks", n);
    }
    double wsum = 0;
    for (int r = 0; r < rows; r++) wsum += (double)row_scale[r] * row_scale[r];
    for (size_t i = 0; i < n; i++) {
        double s = row_scale[i / (size_t)nblk];
        x[i] = (sample){ t[i], wsum > 0 ? s * s : 1.0 };
    }
    qsort(x, n, sizeof *x, by_t);
    cw[0] = cwt[0] = 0;
    for (size_t i = 0; i < n; i++) {
        cw[i + 1] = cw[i] + x[i].w;
        cwt[i + 1] = cwt[i] + x[i].w * x[i].t;
    }
    double total = cw[n], cen[4];
    /* Start: the means of k bins of equal weight. */
    size_t edge[5];
    edge[0] = 0, edge[k] = n;
    for (int j = 1; j < k; j++) {
        double target = total * j / k;
        size_t lo = 0, hi = n; /* first i with cw[i] >= target */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cw[mid] < target) lo = mid + 1;
            else hi = mid;
        }
        edge[j] = lo;
    }
    for (int j = 0; j < k; j++) {
        double wj = cw[edge[j + 1]] - cw[edge[j]];
        cen[j] = wj > 0 ? (cwt[edge[j + 1]] - cwt[edge[j]]) / wj : x[edge[j] < n ? edge[j] : n - 1].t;
    }
    for (int it = 0; it < LLOYD_ITERS && k > 1; it++) {
        edge[0] = 0, edge[k] = n;
        for (int j = 1; j < k; j++) edge[j] = lower_bound(x, n, 0.5 * (cen[j - 1] + cen[j]));
        double moved = 0;
        for (int j = 0; j < k; j++) {
            double wj = cw[edge[j + 1]] - cw[edge[j]];
            if (!(wj > 0)) continue; /* an empty cell keeps its centroid */
            double v = (cwt[edge[j + 1]] - cwt[edge[j]]) / wj;
            moved = fmax(moved, fabs(v - cen[j]));
            cen[j] = v;
        }
        if (moved <= 1e-12 * (1 + fabs(cen[k - 1]))) break;
    }
    for (int j = 0; j < k; j++) c[j] = (float)cen[j];
    free(x), free(cw), free(cwt);
    return LR_OK;
}

static uint8_t nearest_centroid(const float *c, int k, double t)
{
    int g = 0;
    for (int j = 1; j < k; j++)
        if (fabs(t - c[j]) < fabs(t - c[g])) g = j;
    return (uint8_t)g;
}

void lr_leech_matrix_free(lr_leech_matrix *m)
{
    if (!m) return;
    free(m->row_scale);
    free(m->archive);
    free(m->tail_f16);
    memset(m, 0, sizeof *m);
}

int lr_leech_quantize(const float *W, int rows, int cols, int gain_bits, int max_shell, int nthreads,
                      struct lr_progress *progress, lr_leech_matrix *out)
{
    if (!out) return LR_FAIL(LR_EINVAL, "leech quantize: NULL output");
    memset(out, 0, sizeof *out);
    if (!W) return LR_FAIL(LR_EINVAL, "leech quantize: NULL matrix");
    if (rows <= 0 || cols <= 0) return LR_FAIL(LR_EINVAL, "leech quantize: %d x %d matrix", rows, cols);
    if (gain_bits < 0 || gain_bits > 2) return LR_FAIL(LR_EINVAL, "leech quantize: gain_bits %d (0, 1 or 2)", gain_bits);
    if (max_shell != MAX_SHELL)
        return LR_FAIL(LR_EUNSUPPORTED, "leech quantize: max_shell %d (the archive holds L24(12) indices)", max_shell);
    if (nthreads < 0) return LR_FAIL(LR_EINVAL, "leech quantize: nthreads %d", nthreads);
    if (nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    if (nthreads > rows) nthreads = rows;

    lr_leech_matrix m = { 0 };
    m.rows = rows, m.cols = cols, m.nblk = cols / 24, m.tail = cols % 24;
    m.max_shell = max_shell, m.gain_bits = gain_bits;
    size_t nb = (size_t)rows * (size_t)m.nblk;
    m.archive_bytes = lr_leech_archive_bytes(nb, gain_bits);
    job j = { 0 };
    j.W = W, j.rows = rows, j.cols = cols, j.nblk = m.nblk, j.tail = m.tail;
    m.row_scale = j.row_scale = calloc((size_t)rows, sizeof *m.row_scale);
    j.idx = malloc((nb ? nb : 1) * sizeof *j.idx);
    j.t = malloc((nb ? nb : 1) * sizeof *j.t);
    uint8_t *gain = malloc(nb ? nb : 1);
    m.archive = malloc(m.archive_bytes ? m.archive_bytes : 1);
    if (m.tail) m.tail_f16 = j.tail_f16 = malloc((size_t)rows * (size_t)m.tail * sizeof *m.tail_f16);
    int rc = LR_OK;
    if (!m.row_scale || !j.idx || !j.t || !gain || !m.archive || (m.tail && !m.tail_f16) || (nb && !m.archive_bytes)) {
        rc = LR_FAIL(LR_ENOMEM, "leech quantize: %d x %d matrix", rows, cols);
        goto done;
    }

    if (progress) lr_progress_start(progress, progress->label ? progress->label : "leech quantize", (uint64_t)rows);
    j.progress = progress;
    pthread_mutex_init(&j.mu, NULL);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    int started = 0;
    if (th)
        for (; started < nthreads - 1; started++)
            if (pthread_create(&th[started], NULL, worker, &j)) break;
    worker(&j); /* this thread works too (and alone if threads are short) */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&j.mu);
    if (progress) lr_progress_finish(progress);
    if (j.rc) {
        rc = LR_FAIL(j.rc, "%s", j.err);
        goto done;
    }

    int k = 1 << gain_bits;
    rc = lloyd_max(j.t, m.row_scale, rows, m.nblk, k, m.centroid);
    if (rc) goto done;
    for (size_t i = 0; i < nb; i++) gain[i] = nearest_centroid(m.centroid, k, j.t[i]);
    rc = lr_leech_archive_pack(j.idx, gain, nb, gain_bits, m.archive, m.archive_bytes);

done:
    free(j.idx);
    free(j.t);
    free(gain);
    if (rc) lr_leech_matrix_free(&m);
    else *out = m;
    return rc;
}

int lr_leech_reconstruct(const lr_leech_matrix *m, float *W)
{
    if (!m || !W) return LR_FAIL(LR_EINVAL, "leech reconstruct: NULL argument");
    if (m->rows <= 0 || m->cols <= 0 || m->nblk != m->cols / 24 || m->tail != m->cols % 24 || m->gain_bits < 0 ||
        m->gain_bits > 2 || m->max_shell != MAX_SHELL)
        return LR_FAIL(LR_EINVAL, "leech reconstruct: inconsistent matrix header (%d x %d, %d gain bits, L24(%d))",
                       m->rows, m->cols, m->gain_bits, m->max_shell);
    size_t nb = (size_t)m->rows * (size_t)m->nblk;
    uint64_t *idx = malloc((nb ? nb : 1) * sizeof *idx);
    uint8_t *gain = malloc(nb ? nb : 1);
    if (!idx || !gain) {
        free(idx), free(gain);
        return LR_FAIL(LR_ENOMEM, "leech reconstruct: %zu blocks", nb);
    }
    int rc = lr_leech_archive_unpack(m->archive, m->archive_bytes, nb, m->gain_bits, idx, gain);
    for (int r = 0; r < m->rows && !rc; r++) {
        float *w = W + (size_t)r * (size_t)m->cols;
        for (int b = 0; b < m->nblk && !rc; b++) {
            size_t at = (size_t)r * (size_t)m->nblk + (size_t)b;
            int8_t p[24];
            rc = lr_leech_unrank(idx[at], MAX_SHELL, p);
            if (rc) {
                rc = lr_wrap(rc, "leech reconstruct: row %d block %d", r, b);
                break;
            }
            int norm = lr_leech_norm(p);
            /* The origin (never written by the quantizer) decodes to zeros. */
            float f = norm ? (float)((double)m->centroid[gain[at]] * m->row_scale[r] / sqrt((double)norm)) : 0.0f;
            for (int i = 0; i < 24; i++) w[24 * b + i] = (float)p[i] * f;
        }
        for (int i = 0; i < m->tail; i++)
            w[24 * m->nblk + i] = lr_half_to_float(m->tail_f16[(size_t)r * (size_t)m->tail + (size_t)i]);
    }
    free(idx);
    free(gain);
    return rc;
}
