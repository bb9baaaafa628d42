/* Descriptors, host references and specializations of the generic kernels:
 * the read-bandwidth probe, the FP16 GEMV control and the no-weights control.
 * Layout-specific GEMVs live with their layouts. */
#ifndef LR_KERNELS_H
#define LR_KERNELS_H
#include "jit/spec.h"
#include "rt/call.h"

#include <stdint.h>

/* ---- probe: out[b] = wrapping u32 sum of the words block b reads ---- */
extern const lr_kernel_desc lr_probe_desc;
void lr_probe_host(const void *buf, uint64_t n16, uint32_t *out, uint32_t nblocks, uint32_t threads);
void lr_probe_spec(lr_jit_spec *s, int threads, int unroll);
/* the same sums with block b reading its own contiguous range of the buffer */
extern const lr_kernel_desc lr_probe_ranges_desc;
void lr_probe_ranges_host(const void *buf, uint64_t n16, uint32_t *out, uint32_t nblocks, uint32_t threads);
void lr_probe_ranges_spec(lr_jit_spec *s, int threads, int unroll);

/* ---- FP16 GEMV and the no-weights control ---- */
typedef struct lr_gemv_geom {
    int threads;  /* per CTA */
    int rpw;      /* rows per warp */
    int unroll;   /* 16-byte loads in flight per row and lane */
    int tile;     /* activation columns staged per pass (0 = as many as the budget allows) */
    int ksplit;   /* warps sharing one row group, splitting its columns (0 = 1) */
    int xsmem;    /* 1: stage x in shared memory; 0: read x through L1 */
} lr_gemv_geom;

extern const lr_kernel_desc lr_gemv_f16_desc;
extern const lr_kernel_desc lr_gemv_noweights_desc;
void lr_gemv_f16_host(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols);
void lr_gemv_f16_host_mag(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols);
void lr_gemv_noweights_host(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols);
void lr_gemv_noweights_host_mag(const uint16_t *W, const float *x, float *y, int32_t rows, int32_t cols);
/* The tuning table's entry for this device and shape, else a rule of thumb. */
lr_gemv_geom lr_gemv_f16_default_geom(int rows, int cols);
/* Fills spec and launch geometry for a shape under a shared-memory budget. */
int lr_gemv_f16_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, lr_gemv_geom geom, int smem_budget,
                     int noweights);

/* Qwen3 projection shapes (rows = output features, cols = input features). */
typedef struct lr_shape { const char *model, *matrix; int rows, cols; } lr_shape;
extern const lr_shape lr_qwen3_shapes[];
/* Qwen3's RMSNorm eps (config.json rms_norm_eps), the synthetic models' too */
#define LR_QWEN3_NORM_EPS 1e-6
extern const int lr_qwen3_nshapes;

/* One decoder layer's GEMV shapes starting at lr_qwen3_shapes[si]: the 7
 * projections, then fused q|k|v and gate|up (names in lr_layer_matrix_names). */
#define LR_LAYER_MATRICES 9
extern const char *const lr_layer_matrix_names[LR_LAYER_MATRICES];
void lr_qwen3_layer_shapes(int si, int rows[LR_LAYER_MATRICES], int cols[LR_LAYER_MATRICES]);
/* Distinct weight copies a timing loop needs so one pass reads >= 4x the L2
 * (bits_per_weight 0 counts as 16), and at least LR_BENCH_MIN_COPIES, at
 * most 64 and LR_BENCH_MAX_BYTES of weights (never fewer than 2). Why at
 * least 40, about the layers an engine rotates through (Qwen3: 36-64): the
 * Planes14S kernels stream their weights evict-first, so a matrix's small
 * side arrays (exception lists, row scales, tails: normal loads) stayed in
 * the L2 across 2-4 copies, where in the engine 160 or more matrices pass
 * between two uses of them. With 2 copies the 14B gate|up sweep ranked 736
 * threads + 1 side warp first (32.9 us against 33.6 with 4 side warps); with
 * 40, as the engine does, last (35.6 against 32.7; twentieth session).
 * The cap of 64 wins over the 4x for the smallest matrices: a pass over the
 * 4B k or v at 3.6 b/w reads 1.2-1.4x the L2, still more than it holds. */
#define LR_BENCH_MIN_COPIES 40
#define LR_BENCH_MAX_BYTES 16e9
int lr_bench_copies(int rows, int cols, double bits_per_weight, int l2_bytes);

#endif
