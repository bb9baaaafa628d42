// FP16 GEMV control, batch 1: y = W x, W row-major f16 [rows][cols], x and y
// f32, f32 accumulation. A group of LR_KSPLIT warps owns LR_RPW rows; each
// warp streams its share of the row's 16-byte chunks with LR_UNROLL loads per
// row in flight. x is read through L1 (LR_XSMEM=0) or staged in shared memory
// in tiles of LR_TILE columns (LR_XSMEM=1; the budget decides the tile).
// LR_NOWEIGHTS=1 builds the no-weights control: same grid, activation path and
// reduction, but it reads no weight bytes (every weight is taken as 1).
// Specialization: LR_ROWS, LR_COLS, LR_THREADS, LR_RPW, LR_UNROLL, LR_TILE,
// LR_KSPLIT, LR_XSMEM, LR_NOWEIGHTS.
// @spec gemv_f16 rows=5120 cols=17408 threads=256 rpw=2 unroll=4 tile=17408 ksplit=1 xsmem=1
// @spec gemv_f16 rows=77 cols=1001 threads=128 rpw=1 unroll=2 tile=512 ksplit=2 xsmem=1
// @spec gemv_f16 rows=1024 cols=5120 threads=256 rpw=2 unroll=4 tile=5120 ksplit=4 xsmem=0
// @spec gemv_noweights rows=1024 cols=5120 threads=256 rpw=1 unroll=4 tile=5120 ksplit=1 xsmem=0 noweights=1
#include "gemv_f16.cuh"

#ifndef LR_XSMEM
#define LR_XSMEM 1
#endif
#define WARPS (LR_THREADS / 32)
#define GROUPS (WARPS / LR_KSPLIT)

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const u16 *__restrict__ W, const float *__restrict__ x, float *__restrict__ y, int rows_, int cols_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    extern __shared__ float xs_dyn[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int group = warp / LR_KSPLIT, kw = warp % LR_KSPLIT;
    const int row0 = (blockIdx.x * GROUPS + group) * LR_RPW;
    float acc[LR_RPW];
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) acc[r] = 0.f;
    int rowc[LR_RPW];
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) rowc[r] = min(row0 + r, LR_ROWS - 1); // clamp: tail rows read a valid row, never store
#if !LR_NOWEIGHTS
    // The first weight lines go to L2 while the previous kernel finishes.
#pragma unroll
    for (int r = 0; r < LR_RPW; r++)
        if ((kw * 32 + lane) * 8 < LR_COLS) lr_prefetch_l2(W + (u64)rowc[r] * LR_COLS + (kw * 32 + lane) * 8);
#endif
    lr_pdl_wait();

    const int tile = LR_XSMEM ? LR_TILE : LR_COLS;
    for (int t0 = 0; t0 < LR_COLS; t0 += tile) {
        const int tn = min(tile, LR_COLS - t0);
        const float *xp;
        if (LR_XSMEM) {
            __syncthreads();
            for (int c = threadIdx.x; c < tn; c += LR_THREADS) xs_dyn[c] = x[t0 + c];
            __syncthreads();
            xp = xs_dyn;
        } else {
            xp = x + t0;
        }
        f16_dot_tile(acc, W, rowc, xp, t0, tn, kw, lane);
    }
    // The weights are read: the next kernel may start its own prologue (its
    // CTAs wait for this grid; triggered earlier they would hold SMs this
    // grid's later CTAs need).
    lr_pdl_launch_dependents();
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) acc[r] = lr_warp_sum(acc[r]);
#if LR_KSPLIT > 1
    __shared__ float part[WARPS][LR_RPW];
    if (lane == 0)
#pragma unroll
        for (int r = 0; r < LR_RPW; r++) part[warp][r] = acc[r];
    __syncthreads();
    if (kw == 0 && lane < LR_RPW) {
        float s = 0.f;
#pragma unroll
        for (int k = 0; k < LR_KSPLIT; k++) s += part[group * LR_KSPLIT + k][lane];
        if (row0 + lane < LR_ROWS) y[row0 + lane] = s;
    }
#else
    if (lane == 0)
#pragma unroll
        for (int r = 0; r < LR_RPW; r++)
            if (row0 + r < LR_ROWS) y[row0 + r] = acc[r];
#endif
}
