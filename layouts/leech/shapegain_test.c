/* Shape-gain quantization (shapegain.c): every block's stored shape is the
 * angular nearest point, its gain the nearest centroid to its optimal gain,
 * the centroids a weighted Lloyd-Max fixed point; the reconstruction and its
 * error are what the stored points imply; tail columns are exact f16; rows
 * split over any number of threads give the same bytes; bad inputs fail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/shapegain.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

static float *gaussian(int rows, int cols, uint64_t seed)
{
    float *w = malloc((size_t)rows * (size_t)cols * sizeof *w);
    lr_rng r;
    lr_rng_seed(&r, seed);
    for (int i = 0; i < rows * cols; i++) w[i] = (float)lr_rng_gauss(&r);
    /* Rows at different scales, so that the per-row scale matters. */
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < cols; c++) w[(size_t)i * cols + c] *= 0.25f + 0.1f * (float)(i % 7);
    return w;
}

static double sqerr(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return s;
}

/* Re-derives everything from the archive and W, independently of
 * lr_leech_reconstruct; returns the squared error the stored points imply. */
static int check_matrix(const float *W, const lr_leech_matrix *m, double *implied)
{
    int k = 1 << m->gain_bits;
    size_t nb = (size_t)m->rows * (size_t)m->nblk;
    uint64_t *idx = malloc((nb + 1) * sizeof *idx);
    uint8_t *gain = malloc(nb + 1);
    float *R = malloc((size_t)m->rows * (size_t)m->cols * sizeof *R);
    T_OK(lr_leech_archive_unpack(m->archive, m->archive_bytes, nb, m->gain_bits, idx, gain));
    T_OK(lr_leech_reconstruct(m, R));
    for (int j = 1; j < k; j++) T_ASSERT(m->centroid[j] >= m->centroid[j - 1], "centroids not ascending");
    double err = 0, num[4] = { 0 }, den[4] = { 0 };
    for (int r = 0; r < m->rows; r++) {
        const float *w = W + (size_t)r * m->cols;
        double ss = 0;
        for (int i = 0; i < 24 * m->nblk; i++) ss += (double)w[i] * w[i];
        double s = m->nblk ? sqrt(ss / m->nblk) : 0;
        T_ASSERT(fabs(s - m->row_scale[r]) <= 1e-6 * s, "row %d: scale %g, RMS block norm %g", r,
                 (double)m->row_scale[r], s);
        for (int b = 0; b < m->nblk; b++) {
            size_t at = (size_t)r * m->nblk + b;
            int8_t p[24], want[24];
            T_OK(lr_leech_unrank(idx[at], 12, p));
            T_OK(lr_leech_nearest_angular(w + 24 * b, 12, want));
            T_ASSERT(memcmp(p, want, 24) == 0, "row %d block %d: stored shape is not the angular nearest point", r, b);
            double len = sqrt((double)lr_leech_norm(p)), ip = 0, bb = 0;
            for (int i = 0; i < 24; i++) ip += (double)w[24 * b + i] * p[i], bb += (double)w[24 * b + i] * w[24 * b + i];
            double sr = m->row_scale[r], t = sr > 0 ? ip / (len * sr) : 0;
            int g = gain[at];
            for (int j = 0; j < k; j++)
                T_ASSERT(fabs(t - m->centroid[g]) <= fabs(t - m->centroid[j]) + 1e-12,
                         "row %d block %d: gain %d is not the nearest centroid", r, b, g);
            num[g] += sr * sr * t, den[g] += sr * sr;
            double c = m->centroid[g];
            err += bb - 2 * c * sr * ip / len + c * c * sr * sr;
            for (int i = 0; i < 24; i++) {
                double v = p[i] / len * c * sr, got = R[(size_t)r * m->cols + 24 * b + i];
                T_ASSERT(fabs(got - v) <= 1e-6 * (fabs(v) + 1e-6), "row %d col %d: %g, points say %g", r, 24 * b + i, got,
                         v);
            }
        }
        for (int i = 24 * m->nblk; i < m->cols; i++) {
            float v = w[i], got = R[(size_t)r * m->cols + i];
            T_ASSERT(got == lr_half_to_float(lr_float_to_half(v)), "row %d tail col %d: %g, f16 of %g", r, i, (double)got,
                     (double)v);
            err += ((double)got - v) * ((double)got - v);
        }
    }
    /* Lloyd-Max fixed point: each used centroid is the weighted mean of its cell. */
    for (int j = 0; j < k; j++)
        if (den[j] > 0)
            T_ASSERT(fabs(num[j] / den[j] - m->centroid[j]) <= 1e-5 * (1 + fabs(m->centroid[j])),
                     "centroid %d = %g, its cell's mean %g", j, (double)m->centroid[j], num[j] / den[j]);
    double direct = sqerr(W, R, (size_t)m->rows * m->cols);
    T_ASSERT(fabs(direct - err) <= 1e-5 * (1 + direct), "reconstruction error %.9g, the points imply %.9g", direct, err);
    *implied = err;
    free(idx), free(gain), free(R);
    return T_PASS;
}

static int test_points_gains_and_error(void)
{
    const int rows = 23, cols = 24 * 9 + 7;
    float *W = gaussian(rows, cols, 1);
    double e[3];
    for (int g = 0; g <= 2; g++) {
        lr_leech_matrix m;
        T_OK(lr_leech_quantize(W, rows, cols, g, 12, 2, NULL, &m));
        T_ASSERT(m.nblk == 9 && m.tail == 7 && m.gain_bits == g, "header");
        T_ASSERT(m.archive_bytes == lr_leech_archive_bytes((uint64_t)rows * 9, g), "archive size");
        int rc = check_matrix(W, &m, &e[g]);
        lr_leech_matrix_free(&m);
        if (rc != T_PASS) return rc;
    }
    T_ASSERT(e[2] <= e[1] + 1e-9 && e[1] <= e[0] + 1e-9, "more gain bits, more error: %g %g %g", e[0], e[1], e[2]);
    free(W);
    return T_PASS;
}

static int test_threads_give_the_same_bytes(void)
{
    const int rows = 19, cols = 24 * 5 + 1;
    float *W = gaussian(rows, cols, 2);
    lr_leech_matrix a, b;
    T_OK(lr_leech_quantize(W, rows, cols, 1, 12, 1, NULL, &a));
    for (int nt = 0; nt <= 5; nt += 5) {
        T_OK(lr_leech_quantize(W, rows, cols, 1, 12, nt, NULL, &b));
        T_ASSERT(a.archive_bytes == b.archive_bytes && !memcmp(a.archive, b.archive, a.archive_bytes),
                 "%d threads: other archive", nt);
        T_ASSERT(!memcmp(a.row_scale, b.row_scale, rows * sizeof(float)) && !memcmp(a.centroid, b.centroid, 8),
                 "%d threads: other scales", nt);
        T_ASSERT(!memcmp(a.tail_f16, b.tail_f16, rows * sizeof(uint16_t)), "%d threads: other tail", nt);
        lr_leech_matrix_free(&b);
    }
    lr_leech_matrix_free(&a);
    free(W);
    return T_PASS;
}

/* Narrow and degenerate matrices: tail only, no tail, one row, a zero row. */
static int test_shapes_and_zero_rows(void)
{
    int shapes[][2] = { { 3, 5 }, { 1, 24 }, { 4, 48 }, { 2, 23 } };
    for (int s = 0; s < 4; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        float *W = gaussian(rows, cols, 3 + (uint64_t)s);
        if (rows > 1)
            for (int c = 0; c < cols; c++) W[cols + c] = 0; /* row 1 all zero */
        lr_leech_matrix m;
        T_OK(lr_leech_quantize(W, rows, cols, 1, 12, 0, NULL, &m));
        double e;
        int rc = check_matrix(W, &m, &e);
        if (rc != T_PASS) return rc;
        float *R = malloc((size_t)rows * cols * sizeof *R);
        T_OK(lr_leech_reconstruct(&m, R));
        if (rows > 1)
            for (int c = 0; c < cols; c++) T_ASSERT(R[cols + c] == 0, "zero row: col %d = %g", c, (double)R[cols + c]);
        free(R);
        lr_leech_matrix_free(&m);
        free(W);
    }
    return T_PASS;
}

/* Unit Gaussian: MSE per weight near the published figures (L24(12) with 1
 * gain bit: 0.078), far below scalar 2-bit Lloyd-Max (0.118), above the
 * Shannon bound at 2 bits (0.0625). A small matrix: loose brackets. */
static int test_gaussian_mse(void)
{
    const int rows = 64, cols = 24 * 16;
    float *W = malloc((size_t)rows * cols * sizeof *W);
    lr_rng r;
    lr_rng_seed(&r, 11);
    for (int i = 0; i < rows * cols; i++) W[i] = (float)lr_rng_gauss(&r);
    float *R = malloc((size_t)rows * cols * sizeof *R);
    double mse[3];
    for (int g = 0; g <= 2; g++) {
        lr_leech_matrix m;
        T_OK(lr_leech_quantize(W, rows, cols, g, 12, 0, NULL, &m));
        T_OK(lr_leech_reconstruct(&m, R));
        mse[g] = sqerr(W, R, (size_t)rows * cols) / (rows * cols);
        lr_leech_matrix_free(&m);
        T_ASSERT(mse[g] > 0.0625 * 0.8 && mse[g] < 0.1, "gain bits %d: MSE %.4f", g, mse[g]);
    }
    T_ASSERT(mse[1] < mse[0] && mse[2] < mse[1], "MSE %.4f %.4f %.4f", mse[0], mse[1], mse[2]);
    free(W), free(R);
    return T_PASS;
}

static int test_bad_inputs(void)
{
    float W[48] = { 1 };
    lr_leech_matrix m;
    T_ASSERT(lr_leech_quantize(W, 0, 48, 1, 12, 1, NULL, &m) == LR_EINVAL, "rows 0");
    T_ASSERT(lr_leech_quantize(W, -1, 48, 1, 12, 1, NULL, &m) == LR_EINVAL, "rows -1");
    T_ASSERT(lr_leech_quantize(W, 1, 0, 1, 12, 1, NULL, &m) == LR_EINVAL, "cols 0");
    T_ASSERT(lr_leech_quantize(W, 1, 48, 3, 12, 1, NULL, &m) == LR_EINVAL, "gain_bits 3");
    T_ASSERT(lr_leech_quantize(W, 1, 48, -1, 12, 1, NULL, &m) == LR_EINVAL, "gain_bits -1");
    T_ASSERT(lr_leech_quantize(NULL, 1, 48, 1, 12, 1, NULL, &m) == LR_EINVAL, "NULL W");
    T_ASSERT(lr_leech_quantize(W, 1, 48, 1, 13, 1, NULL, &m) != LR_OK, "max_shell 13 (no 47-bit archive)");
    W[30] = NAN;
    T_ASSERT(lr_leech_quantize(W, 1, 48, 1, 12, 1, NULL, &m) == LR_EINVAL, "NaN weight");
    T_ASSERT(m.archive == NULL && m.row_scale == NULL, "failed quantize leaves a clean output");
    float T[30] = { 1 };
    T[27] = INFINITY; /* in the dense tail */
    T_ASSERT(lr_leech_quantize(T, 1, 30, 1, 12, 1, NULL, &m) == LR_EINVAL, "inf in the tail");
    T_ASSERT(lr_leech_reconstruct(NULL, W) == LR_EINVAL, "NULL matrix");
    return T_PASS;
}

T_MAIN(T_CASE(test_bad_inputs), T_CASE(test_points_gains_and_error), T_CASE(test_threads_give_the_same_bytes),
       T_CASE(test_shapes_and_zero_rows), T_CASE(test_gaussian_mse))
