/* Fused Leech GEMV kernels: descriptors, host references, specializations
 * and benchmark arms, one file per VRAM layout (kernels/gemv_leech_*.c). */
#ifndef LR_GEMV_LEECH_H
#define LR_GEMV_LEECH_H
#include "jit/spec.h"
#include "kernels/gemv_arm.h"
#include "layouts/leech_vram/p14.h"
#include "rt/call.h"

#include <stdint.h>

typedef struct lr_leech_geom {
    int threads;  /* per CTA */
    int rg;       /* row groups of 16 rows per CTA (B-fragment reuse) */
    int prefetch; /* 1: next super-chunk's loads issued before decoding this one */
} lr_leech_geom;

/* ---- Planes14, fragment order (templates/gemv_leech_p14.cu) ----
 * y[r] = row_scale[r] * sum_c w16[r][c] * x16[c] + sum_j tail[r][j] x[24 nblk + j]
 * where w16 = f16(|v| * s) signed (the class table's f16 scale s) and
 * x16 = f16(x): the reference emulates the kernel's two roundings and
 * accumulates in f64, so verify can hold a tight tolerance. */
extern const lr_kernel_desc lr_gemv_leech_p14_desc;
void lr_gemv_leech_p14_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                            const float *x, float *y, int32_t rows, int32_t cols);
void lr_gemv_leech_p14_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const float *x, float *y, int32_t rows, int32_t cols);
/* The weight the kernel multiplies at (row, col < 24 nblk), before the row
 * scale, decoded from the raw layout bytes exactly as the kernel does. */
float lr_gemv_leech_p14_weight(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int col);
lr_leech_geom lr_gemv_leech_p14_default_geom(int rows, int cols);
int lr_gemv_leech_p14_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                           int smem_budget);
/* Verify tolerance (relative to sum |w x| of the row). */
#define LR_GEMV_LEECH_TOL 2e-4

extern const lr_gemv_arm lr_arm_leech_p14;

#endif
