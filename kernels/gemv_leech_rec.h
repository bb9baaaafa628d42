/* The published Leech GEMVs (templates/gemv_leech_rec.cu) over the record
 * layouts of layouts/leech_vram/rec.h: descriptors, host references,
 * specialization and benchmark arms "leech_p14rec", "leech_p12x" and
 * "leech_slot32" (baselines; kernels/gemv_arms.c lists them).
 *
 * y[r] = row_scale[r] * sum_b gscale[g_b] * sum_i v_bi x[24 b + i]
 *        (+ for Planes12x, per exception e of row r: gscale[g_e] (exact_e . x)
 *         - gscale[g_a] (approx_e . x))
 *        + sum_j tail[r][j] x[24 nblk + j]
 * with v the class table's f32 values chosen by the record (the kernel's
 * select tree, lr_rec_view_block). The reference accumulates in f64; the
 * kernel in f32 FMA chains, so verify holds a tight tolerance. */
#ifndef LR_GEMV_LEECH_REC_H
#define LR_GEMV_LEECH_REC_H
#include "jit/spec.h"
#include "kernels/gemv_arm.h"
#include "layouts/leech_vram/rec.h"
#include "rt/call.h"

#include <stdint.h>

/* One descriptor per kind (lr_rec_kind), the same 13 parameters: W, bases,
 * exc_ptr, exc_idx, exc_rec, tab, gscale, row_scale, tail, x, y, rows, cols
 * (arrays a kind does not use: any one element). */
extern const lr_kernel_desc lr_gemv_leech_rec_desc[3];
void lr_gemv_leech_rec_host(int kind, int mag, const uint8_t *W, const uint32_t *bases, const uint32_t *exc_ptr,
                            const uint32_t *exc_idx, const uint8_t *exc_rec, const float *tab, const float *gscale,
                            const float *row_scale, const uint16_t *tail, const float *x, float *y, int32_t rows,
                            int32_t cols);

typedef struct lr_rec_geom {
    int threads; /* per CTA, one warp per row */
    int tile;    /* blocks of x staged in shared memory per pass (<= 512) */
} lr_rec_geom;

/* 256 threads, 128-block tiles (the published geometry). */
lr_rec_geom lr_gemv_leech_rec_default_geom(void);
int lr_gemv_leech_rec_spec(lr_jit_spec *s, lr_launch_geom *g, int kind, int rows, int cols, lr_rec_geom geom);
/* lr_call arguments over a layout (a one-word dummy for unused arrays). */
void lr_gemv_leech_rec_args(const lr_rec *L, float *x, float *y, lr_arg a[13]);

/* Verify tolerance relative to sum |w x| of the row (f32 chains only). */
#define LR_GEMV_LEECH_REC_TOL 2e-5

extern const lr_gemv_arm lr_arm_leech_p14rec, lr_arm_leech_p12x, lr_arm_leech_slot32;

#endif
