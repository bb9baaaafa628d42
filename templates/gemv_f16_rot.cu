// FP16 GEMV with the incoherence rotation fused as a prologue, batch 1:
// y = W (Q x), Q = (Q_odd kron H_m) D (docs/rotation.md), W row-major f16
// [rows][cols] stored in the rotated basis, x and y f32. Each CTA rotates the
// whole activation into shared memory (cols + K*K floats), then runs the FP16
// control's inner loop (gemv_f16.cu: groups of LR_KSPLIT warps own LR_RPW
// rows) over row groups in a grid-stride loop, so a grid of ~2 CTAs per SM
// pays the rotation once per CTA rather than once per row group. Used for
// q|k|v and gate|up row-concatenated.
// Specialization: LR_ROWS, LR_COLS, LR_THREADS, LR_RPW, LR_UNROLL, LR_KSPLIT.
// @spec gemv_f16_rot rows=6144 cols=5120 threads=256 rpw=2 unroll=4 ksplit=1
// @spec gemv_f16_rot rows=77 cols=12 threads=128 rpw=1 unroll=2 ksplit=2
#include "gemv_f16.cuh"
#include "rotate_block.cuh"

#define WARPS (LR_THREADS / 32)
#define GROUPS (WARPS / LR_KSPLIT)
#define RM (LR_COLS & -LR_COLS)
#define RK (LR_COLS / RM)
#define ROWS_PER_CTA (GROUPS * LR_RPW)
#define ROW_GROUPS ((LR_ROWS + ROWS_PER_CTA - 1) / ROWS_PER_CTA)

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const u16 *__restrict__ W, const float *__restrict__ x, float *__restrict__ y,
          const u32 *__restrict__ dbits, const float *__restrict__ q, int rows_, int cols_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    // Inputs come from the previous kernel; dependents launch when this
    // grid ends (a big grid's waiting dependents would take its SMs).
    lr_pdl_wait();
    extern __shared__ float4 smem4[];
    float *xs = (float *)smem4, *qs = xs + LR_COLS;
    for (int i = threadIdx.x; i < RK * RK; i += LR_THREADS) qs[i] = q[i];
    lr_rot_block<RK, RM, LR_THREADS>(xs, qs, x, dbits);

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int group = warp / LR_KSPLIT, kw = warp % LR_KSPLIT;
#if LR_KSPLIT > 1
    __shared__ float part[WARPS][LR_RPW];
#endif
    // Uniform trip count across the CTA (it depends on blockIdx only), so the
    // barriers inside are safe.
    for (int rg = blockIdx.x; rg < ROW_GROUPS; rg += gridDim.x) {
        const int row0 = (rg * GROUPS + group) * LR_RPW;
        float acc[LR_RPW];
        int rowc[LR_RPW];
#pragma unroll
        for (int r = 0; r < LR_RPW; r++) acc[r] = 0.f, rowc[r] = min(row0 + r, LR_ROWS - 1);
        f16_dot_tile(acc, W, rowc, xs, 0, LR_COLS, kw, lane);
#pragma unroll
        for (int r = 0; r < LR_RPW; r++) acc[r] = lr_warp_sum(acc[r]);
#if LR_KSPLIT > 1
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
        __syncthreads(); // part[] is reused by the next row group
#else
        if (lane == 0)
#pragma unroll
            for (int r = 0; r < LR_RPW; r++)
                if (row0 + r < LR_ROWS) y[row0 + r] = acc[r];
#endif
    }
}
