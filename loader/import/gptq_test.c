/* GPTQ (gptq.c): the factors satisfy U^T U = (H + damp)^-1 and V = U^-1;
 * on a random problem with correlated inputs GPTQ's objective
 * tr((W - W~) H (W - W~)^T) is well below plain quantization's; with H = I
 * (no feedback) it writes exactly the plain quantizer's bytes; the
 * reconstruction is what lr_leech_reconstruct decodes. */
#include "loader/import/gptq.h"
#include "layouts/leech/shapegain.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *gaussian(int rows, int cols, uint64_t seed)
{
    float *w = malloc((size_t)rows * cols * sizeof *w);
    lr_rng r;
    lr_rng_seed(&r, seed);
    for (int i = 0; i < rows * cols; i++) w[i] = (float)lr_rng_gauss(&r);
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < cols; c++) w[(size_t)i * cols + c] *= 0.5f + 0.1f * (float)(i % 5);
    return w;
}

/* H = A^T A / N for N samples x = M z (z Gaussian, M random with a decaying
 * spectrum): strongly correlated inputs like a real layer's. */
static double *hessian(int n, int N, uint64_t seed)
{
    lr_rng r;
    lr_rng_seed(&r, seed);
    double *M = malloc((size_t)n * n * sizeof *M), *H = calloc((size_t)n * n, sizeof *H), *x = malloc(n * sizeof *x),
           *z = malloc(n * sizeof *z);
    for (int i = 0; i < n * n; i++) M[i] = lr_rng_gauss(&r) / (1 + (i % n) * 0.2);
    for (int s = 0; s < N; s++) {
        for (int i = 0; i < n; i++) z[i] = lr_rng_gauss(&r);
        for (int i = 0; i < n; i++) {
            double a = 0;
            for (int k = 0; k < n; k++) a += M[(size_t)i * n + k] * z[k];
            x[i] = a;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) H[(size_t)i * n + j] += x[i] * x[j] / N;
    }
    free(M), free(x), free(z);
    return H;
}

static int test_factor(void)
{
    int n = 53;
    double *H = hessian(n, 40, 7), *U, *V; /* rank 40 < 53: only the damping makes it definite */
    double damp = LR_GPTQ_DAMP, mean = 0;
    for (int i = 0; i < n; i++) mean += H[i * n + i] / n;
    T_OK(lr_gptq_factor(H, n, damp, &U, &V));
    double worst = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (j < i) T_ASSERT(U[i * n + j] == 0 && V[i * n + j] == 0, "not upper at %d,%d", i, j);
            /* (U^T U) Hd = I and V U = I */
            double a = 0, b = 0;
            for (int k = 0; k < n; k++) {
                double uu = 0;
                for (int l = 0; l < n; l++) uu += U[l * n + i] * U[l * n + k];
                a += uu * (H[k * n + j] + (k == j ? damp * mean : 0));
                b += V[i * n + k] * U[k * n + j];
            }
            worst = fmax(worst, fmax(fabs(a - (i == j)), fabs(b - (i == j))));
        }
    T_ASSERT(worst < 1e-8, "factor residual %g", worst);
    /* without V (lr_gptq_asym_target's call): the same U, bit for bit */
    double *U2 = NULL;
    T_OK(lr_gptq_factor(H, n, damp, &U2, NULL));
    T_ASSERT(!memcmp(U, U2, sizeof *U * (size_t)n * n), "U differs when V is not asked for");
    free(U2);
    free(U), free(V);
    /* a non-finite entry is refused before the factorization */
    H[0] = NAN;
    T_ASSERT(lr_gptq_factor(H, n, damp, &U, &V) == LR_EINVAL && strstr(lr_errmsg(), "not finite"), "NaN: %s",
             lr_errmsg());
    free(H);
    /* finite but indefinite even with damping ([[1, 2], [2, 1]]: eigenvalues 3 and -1): the
       Cholesky's pivot check refuses it (the NaN case above never reached that check) */
    const double ind[4] = { 1, 2, 2, 1 };
    T_ASSERT(lr_gptq_factor(ind, 2, 0.01, &U, &V) == LR_EINVAL && strstr(lr_errmsg(), "not positive definite") && !U,
             "indefinite: %s", lr_errmsg());
    return T_PASS;
}

static int test_lower_objective(void)
{
    int rows = 48, cols = 24 * 8 + 7;
    float *W = gaussian(rows, cols, 11), *Rp = malloc((size_t)rows * cols * 4), *Rg = malloc((size_t)rows * cols * 4);
    double *H = hessian(cols, 600, 12);
    lr_leech_matrix p, g;
    T_OK(lr_leech_quantize(W, rows, cols, 1, 12, 2, NULL, &p));
    T_OK(lr_gptq_leech(W, rows, cols, H, LR_GPTQ_DAMP, 1, 2, NULL, &g));
    T_OK(lr_leech_reconstruct(&p, Rp));
    T_OK(lr_leech_reconstruct(&g, Rg));
    double op = lr_gptq_objective(W, Rp, rows, cols, H), og = lr_gptq_objective(W, Rg, rows, cols, H);
    double ref = 0, ep = 0, eg = 0;
    for (int i = 0; i < rows * cols; i++) {
        ref += (double)W[i] * W[i];
        ep += ((double)W[i] - Rp[i]) * ((double)W[i] - Rp[i]);
        eg += ((double)W[i] - Rg[i]) * ((double)W[i] - Rg[i]);
    }
    printf("    objective plain %.4g, gptq %.4g (ratio %.3f); plain |dW|^2/|W|^2 %.4f, gptq %.4f\n", op, og, og / op,
           ep / ref, eg / ref);
    T_ASSERT(og < 0.8 * op, "gptq objective %g not below plain %g", og, op);
    /* Same scales and centroids as the plain quantizer (rows <= 256: all sampled). */
    T_ASSERT(!memcmp(p.row_scale, g.row_scale, rows * sizeof *p.row_scale), "row scales");
    T_ASSERT(!memcmp(p.centroid, g.centroid, sizeof p.centroid), "centroids");
    lr_leech_matrix_free(&p), lr_leech_matrix_free(&g);
    free(W), free(Rp), free(Rg), free(H);
    return T_PASS;
}

/* The asymmetric target: W* minimises sum over samples (w* . x - w . x_t)^2
 * (its gradient H w* - M w vanishes), M = H leaves W exactly, damping
 * shrinks the correction, garbage is refused. */
static int test_asym_target(void)
{
    enum { n = 37, rows = 9, N = 400 };
    lr_rng r;
    lr_rng_seed(&r, 21);
    double *X = malloc(sizeof(double) * N * n), *Xt = malloc(sizeof(double) * N * n);
    double *H = calloc(n * n, sizeof *H), *M = calloc(n * n, sizeof *M);
    for (int s = 0; s < N; s++) {
        double common = lr_rng_gauss(&r);
        for (int i = 0; i < n; i++) {
            Xt[s * n + i] = lr_rng_gauss(&r) + 0.5 * common;
            /* the drifted input: scaled, mixed with a neighbour, noisy */
            X[s * n + i] = 0.9 * Xt[s * n + i] + 0.2 * (i ? Xt[s * n + i - 1] : 0) + 0.1 * lr_rng_gauss(&r);
        }
    }
    for (int s = 0; s < N; s++)
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                H[a * n + b] += X[s * n + a] * X[s * n + b] / N;
                M[a * n + b] += X[s * n + a] * Xt[s * n + b] / N;
            }
    float *W = gaussian(rows, n, 5), *T = malloc(sizeof(float) * rows * n), *Td = malloc(sizeof(float) * rows * n);
    memcpy(T, W, sizeof(float) * rows * n);
    T_OK(lr_gptq_asym_target(T, rows, n, H, M, 1e-12, 2));
    double worst = 0, obj_w = 0, obj_t = 0, moved = 0;
    for (int q = 0; q < rows; q++) {
        const float *w = W + q * n, *t = T + q * n;
        for (int a = 0; a < n; a++) { /* (H t - M w)_a against |M w|_a's scale */
            double g = 0, mw = 0;
            for (int b = 0; b < n; b++) g += H[a * n + b] * t[b] - M[a * n + b] * w[b], mw += fabs(M[a * n + b] * w[b]);
            worst = fmax(worst, fabs(g) / mw);
        }
        for (int s = 0; s < N; s++) {
            double yw = 0, yt = 0, y = 0;
            for (int b = 0; b < n; b++) yw += w[b] * X[s * n + b], yt += t[b] * X[s * n + b], y += w[b] * Xt[s * n + b];
            obj_w += (yw - y) * (yw - y), obj_t += (yt - y) * (yt - y);
        }
        for (int b = 0; b < n; b++) moved += ((double)t[b] - w[b]) * ((double)t[b] - w[b]);
    }
    printf("    asymmetric target: gradient %.2g of |M w|, objective %.4g -> %.4g\n", worst, obj_w, obj_t);
    T_ASSERT(worst < 1e-5, "the target is not the least-squares optimum (gradient %g)", worst);
    T_ASSERT(obj_t < 0.5 * obj_w, "objective %g -> %g", obj_w, obj_t);
    /* damping shrinks the move towards 0 */
    memcpy(Td, W, sizeof(float) * rows * n);
    T_OK(lr_gptq_asym_target(Td, rows, n, H, M, 1.0, 2));
    double moved_d = 0;
    for (int i = 0; i < rows * n; i++) moved_d += ((double)Td[i] - W[i]) * ((double)Td[i] - W[i]);
    T_ASSERT(moved_d > 0 && moved_d < moved, "damped move %g, undamped %g", moved_d, moved);
    /* M = H: W stays, bit for bit */
    memcpy(T, W, sizeof(float) * rows * n);
    T_OK(lr_gptq_asym_target(T, rows, n, H, H, LR_GPTQ_DAMP, 2));
    T_ASSERT(!memcmp(T, W, sizeof(float) * rows * n), "M = H moved W");
    M[5] = NAN;
    T_ASSERT(lr_gptq_asym_target(T, rows, n, H, M, LR_GPTQ_DAMP, 2) == LR_EINVAL, "NaN in M accepted");
    T_ASSERT(lr_gptq_asym_target(T, rows, n, NULL, H, LR_GPTQ_DAMP, 2) == LR_EINVAL, "NULL H accepted");
    free(X), free(Xt), free(H), free(M), free(W), free(T), free(Td);
    return T_PASS;
}

/* The row-scale refit lowers the objective (and never raises a row's term). */
static int test_refit_row_scales(void)
{
    int rows = 48, cols = 24 * 8 + 7;
    float *W = gaussian(rows, cols, 31), *R0 = malloc((size_t)rows * cols * 4), *R1 = malloc((size_t)rows * cols * 4);
    double *H = hessian(cols, 600, 32);
    lr_leech_matrix g;
    T_OK(lr_gptq_leech(W, rows, cols, H, LR_GPTQ_DAMP, 1, 2, NULL, &g));
    T_OK(lr_leech_reconstruct(&g, R0));
    float *s0 = malloc(rows * sizeof *s0);
    memcpy(s0, g.row_scale, rows * sizeof *s0);
    T_OK(lr_gptq_refit_row_scales(W, H, 2, &g));
    T_OK(lr_leech_reconstruct(&g, R1));
    double o0 = lr_gptq_objective(W, R0, rows, cols, H), o1 = lr_gptq_objective(W, R1, rows, cols, H);
    int changed = 0;
    for (int r = 0; r < rows; r++) {
        double a = lr_gptq_objective(W + (size_t)r * cols, R0 + (size_t)r * cols, 1, cols, H);
        double b = lr_gptq_objective(W + (size_t)r * cols, R1 + (size_t)r * cols, 1, cols, H);
        T_ASSERT(b <= a * (1 + 1e-6) + 1e-12, "row %d: objective %g -> %g", r, a, b);
        changed += g.row_scale[r] != s0[r];
    }
    printf("    refit row scales: objective %.5g -> %.5g (%.2f%%), %d of %d scales changed\n", o0, o1,
           100 * (o1 - o0) / o0, changed, rows);
    T_ASSERT(o1 < o0 && changed > rows / 2, "refit changed nothing (%g -> %g, %d rows)", o0, o1, changed);
    lr_leech_matrix_free(&g);
    free(W), free(R0), free(R1), free(H), free(s0);
    return T_PASS;
}

/* Centroids and row scales refit in turn: the objective falls every step. */
static int test_refit_alternating(void)
{
    int rows = 64, cols = 24 * 8 + 5;
    float *W = gaussian(rows, cols, 41), *R = malloc((size_t)rows * cols * 4);
    double *H = hessian(cols, 600, 42);
    for (int gb = 0; gb <= 2; gb++) {
        lr_leech_matrix g;
        T_OK(lr_gptq_leech(W, rows, cols, H, LR_GPTQ_DAMP, gb, 2, NULL, &g));
        T_OK(lr_leech_reconstruct(&g, R));
        double o = lr_gptq_objective(W, R, rows, cols, H), o0 = o;
        for (int step = 0; step < 4; step++) {
            if (step & 1) T_OK(lr_gptq_refit_row_scales(W, H, 2, &g));
            else T_OK(lr_gptq_refit_centroids(W, H, 2, &g));
            T_OK(lr_leech_reconstruct(&g, R));
            double on = lr_gptq_objective(W, R, rows, cols, H);
            T_ASSERT(on <= o * (1 + 1e-6), "%d gain bits, step %d: objective %g -> %g", gb, step, o, on);
            o = on;
        }
        printf("    %d gain bits: refit centroids + scales, 2 rounds: objective %.5g -> %.5g (%.2f%%)\n", gb, o0, o,
               100 * (o - o0) / o0);
        T_ASSERT(o < o0, "%d gain bits: nothing gained", gb);
        lr_leech_matrix_free(&g);
    }
    free(W), free(R), free(H);
    return T_PASS;
}

static int test_identity_is_plain(void)
{
    int rows = 40, cols = 24 * 5 + 3;
    float *W = gaussian(rows, cols, 21);
    double *H = calloc((size_t)cols * cols, sizeof *H);
    for (int i = 0; i < cols; i++) H[i * cols + i] = 1;
    lr_leech_matrix p, g;
    for (int gb = 0; gb <= 2; gb++) {
        T_OK(lr_leech_quantize(W, rows, cols, gb, 12, 1, NULL, &p));
        T_OK(lr_gptq_leech(W, rows, cols, H, LR_GPTQ_DAMP, gb, 2, NULL, &g));
        T_ASSERT(p.archive_bytes == g.archive_bytes && !memcmp(p.archive, g.archive, p.archive_bytes), "archive, %d gain bits", gb);
        T_ASSERT(!memcmp(p.row_scale, g.row_scale, rows * sizeof *p.row_scale), "row scales");
        T_ASSERT(!memcmp(p.centroid, g.centroid, sizeof p.centroid), "centroids");
        T_ASSERT(!memcmp(p.tail_f16, g.tail_f16, (size_t)rows * 3 * 2), "tail");
        lr_leech_matrix_free(&p), lr_leech_matrix_free(&g);
    }
    free(W), free(H);
    return T_PASS;
}

static int test_bad_input(void)
{
    float W[48] = { 1 };
    double H[4] = { 1, 0, 0, 1 };
    lr_leech_matrix m;
    T_ASSERT(lr_gptq_leech(W, 2, 2, H, LR_GPTQ_DAMP, 1, 1, NULL, &m) == LR_EINVAL, "2 columns");
    T_ASSERT(lr_gptq_leech(W, 2, 24, NULL, LR_GPTQ_DAMP, 1, 1, NULL, &m) == LR_EINVAL, "NULL H");
    T_ASSERT(lr_gptq_leech(W, 2, 24, H, LR_GPTQ_DAMP, 3, 1, NULL, &m) == LR_EINVAL, "3 gain bits");
    return T_PASS;
}

T_MAIN(T_CASE(test_factor), T_CASE(test_lower_objective), T_CASE(test_asym_target), T_CASE(test_refit_row_scales), T_CASE(test_refit_alternating), T_CASE(test_identity_is_plain), T_CASE(test_bad_input))
