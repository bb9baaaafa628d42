// The per-row end of the Leech GEMVs with exception lists (Planes14S, I8x):
// y[row] = row_scale[row] * (sum of the warps' partial sums + sum_e dw_e *
// x[col_e]) + tail . x, for the NR rows of one batch, every row at once.
// Why: Nsight Compute's source counters put half of the Planes14S gate|up
// kernel's stall samples in its former one-warp-per-row loop (four rows one
// after another per warp, each waiting on exc_ptr -> exc_col -> x[col]);
// here TPR = THREADS / NR threads (a power of two, <= 32) share a row, so
// the dependent loads of all rows are in flight together.
#pragma once
#include "lr_common.cuh"

template <int THREADS, int NR>
struct lr_rows_geom {
    static constexpr int q = THREADS / NR;
    static constexpr int TPR = q >= 32 ? 32 : q >= 16 ? 16 : q >= 8 ? 8 : q >= 4 ? 4 : q >= 2 ? 2 : 1;
};

// red[w * NR + i]: warp w's partial sum of row row0 + i (WARPS warps);
// rows at or past `rows` are skipped; tail [rows][TAIL] f16 multiplies
// x[tail_col0 ..]. All threads of the CTA call it (no early exit).
template <int THREADS, int NR, int WARPS, int TAIL>
LR_DEV void lr_rows_epilogue(const float *red, int row0, int rows, const u32 *__restrict__ exc_ptr,
                             const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                             const u16 *__restrict__ tail, const float *__restrict__ x, int tail_col0,
                             const float *__restrict__ row_scale, float *__restrict__ y)
{
    constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR, GROUPS = THREADS / TPR;
    const int sub = threadIdx.x % TPR, lane = threadIdx.x & 31;
    // the lanes of this thread's row group (TPR consecutive lanes of one warp)
    const u32 gmask = TPR == 32 ? 0xffffffffu : ((1u << TPR) - 1) << (lane & ~(TPR - 1));
    for (int i = threadIdx.x / TPR; i < NR; i += GROUPS) {
        const int row = row0 + i;
        const bool ok = row < rows;
        float s = 0.f, t = 0.f, rs = 0.f;
        if (ok) {
            rs = row_scale[row];
            const u32 e0 = exc_ptr[row], e1 = exc_ptr[row + 1];
            for (u32 e = e0 + sub; e < e1; e += TPR) s = fmaf(exc_dw[e], x[exc_col[e]], s);
            for (int j = sub; j < TAIL; j += TPR) t = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[tail_col0 + j], t);
            for (int w = sub; w < WARPS; w += TPR) s += red[w * NR + i];
        }
#pragma unroll
        for (int o = TPR / 2; o > 0; o >>= 1) {
            s += __shfl_xor_sync(gmask, s, o);
            t += __shfl_xor_sync(gmask, t, o);
        }
        if (ok && sub == 0) y[row] = fmaf(s, rs, t);
    }
}
