/* GPTQ with the Leech shape-gain quantizer (the published recipe's error
 * feedback, docs/import.md "GPTQ"). For a linear layer y = W x whose inputs
 * have the second moment H = E[x x^T], GPTQ picks the quantized W~ to make
 * tr((W - W~) H (W - W~)^T) small: it quantizes the 24-column blocks of a
 * row left to right and, after each block, moves the remaining columns to
 * compensate that block's error (the optimal correction given H).
 *
 * With H^-1 = U^T U (U upper triangular, the Cholesky factor of H^-1) and
 * V = U^-1, after block S = [j, j+24) with error e = w_S - q_S (a row
 * vector) the remaining columns R = [j+24, cols) become
 *     w_R -= (e V_SS) U_SR
 * (for one column this is GPTQ's w_R -= e / U_jj * U_jR). V comes from the
 * Cholesky factor of H with rows and columns reversed (V V^T = H) and U by
 * inverting it: no explicit H^-1.
 *
 * The block quantizer is the plain one's (layouts/leech/shapegain.h): the
 * angular nearest ball point of the (updated) block, then the gain centroid
 * nearest to <b,u>/s. Row scales s (RMS block norm) and the gain centroids
 * are fixed beforehand from the unquantized W, so with H = I (no feedback)
 * the result is plain quantization's. Everything in f64. */
#ifndef LR_IMPORT_GPTQ_H
#define LR_IMPORT_GPTQ_H
#include "layouts/leech/shapegain.h"

#define LR_GPTQ_DAMP 1e-2 /* damping: this times the mean of diag(H) added to the diagonal */
/* The teacher's target (lr_gptq_asym_target) is damped harder than GPTQ's
 * feedback: its correction is a least-squares fit to the calibration text's
 * drift; on SmolLM2 0.01 fitted that text's noise, 0.3 did best (docs/import.md). */
#define LR_GPTQ_TARGET_DAMP 3e-1

struct lr_progress;

/* The factors for H (n x n, symmetric positive semi-definite, row-major
 * f64): Hd = H + damp * mean(diag H) * I (H = I when diag H is all zero);
 * U (n x n upper, H_d^-1 = U^T U) and V = U^-1 (upper). U and V are
 * malloc'd n*n arrays (free them); V may be NULL (not made). LR_EINVAL
 * when Hd is not positive definite (non-finite input). */
int lr_gptq_factor(const double *H, int n, double damp, double **U, double **V);

/* Quantizes W (rows x cols f32, already in the rotated basis) with GPTQ
 * against H (cols x cols, the same basis): gain_bits 0..2, max shell 12,
 * nthreads (0 = all cores), progress may be NULL. The last cols % 24
 * columns are stored f16 after their error feedback. The result is an
 * lr_leech_matrix like lr_leech_quantize's. */
int lr_gptq_leech(const float *W, int rows, int cols, const double *H, double damp, int gain_bits, int nthreads,
                  struct lr_progress *progress, lr_leech_matrix *out);

/* Asymmetric calibration (GPTAQ's objective; calib.h, the teacher): the
 * projection's input in the quantized model, x, has drifted from the source
 * model's, x_t. Aiming each row at the source's output, sum over tokens of
 * (w~ . x - w . x_t)^2, is the GPTQ objective against H = E[x x^T] for the
 * target w* = H^-1 M w, M = E[x x_t^T]; written w* = w + H^-1 (M - H) w, so
 * that damping (Hd = H + damp * mean(diag H) * I, as lr_gptq_factor) shrinks
 * the correction, not w (M = H gives w* = w exactly). W (rows x cols f32) is
 * moved to W* in place; H, M in W's basis. LR_EINVAL for non-finite input
 * or a non-finite target. */
int lr_gptq_asym_target(float *W, int rows, int cols, const double *H, const double *M, double damp, int nthreads);

/* After quantization: each row's scale set to the least-squares optimum
 * under H (its blocks' shapes and gains kept): with q the row's block part
 * (proportional to the scale) and t its f16 tail, s *= q^T H (w - t) /
 * q^T H q. The row's term of tr((W - W~) H (W - W~)^T) can only go down
 * (up to f32 rounding); rows whose optimum is not a positive finite factor
 * keep their scale. H is the undamped second moment (the objective). */
int lr_gptq_refit_row_scales(const float *W, const double *H, int nthreads, lr_leech_matrix *m);
/* The matrix's gain centroids c set to their joint least-squares optimum
 * under H (every block's shape, gain index and row scale kept): with u_rg
 * the row's unit shapes of the blocks of gain g, solve A c = b, A_gh =
 * sum_r s_r^2 u_rg^T H u_rh, b_g = sum_r s_r u_rg^T H (w_r - t_r). The
 * objective can only go down; a singular or non-finite system, or a
 * solution with a non-positive centroid, keeps the old centroids. */
int lr_gptq_refit_centroids(const float *W, const double *H, int nthreads, lr_leech_matrix *m);
/* Alternates the two refits `rounds` times (centroids, then row scales). */
int lr_gptq_refit(const float *W, const double *H, int nthreads, int rounds, lr_leech_matrix *m);

/* tr((W - R) H (W - R)^T) for rows x cols W and R (f32), H cols x cols. */
double lr_gptq_objective(const float *W, const float *R, int rows, int cols, const double *H);

#endif
