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

// Row i of the batch (row `row`, `ok` when it exists) from its TPR threads:
// each adds its share of the exceptions e0..e1 to s0 (0, or the product of
// an exception before e0 already taken, lr_rows_pipe), then takes its share of the
// tail term (tail_t(), after the exceptions' loads are out: the longest
// chain first), then its share of the WARPS partial sums red[w * NR + i];
// the group reduces both and its first thread writes y[row] = s rs + t.
// Shared by both ends below, so they stay bit-identical.
template <int TPR, int NR, int WARPS, class TailT>
LR_DEV void lr_row_finish(bool ok, int i, int row, u32 e0, u32 e1, float s0, float rs, TailT tail_t,
                          const float *red, const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                          const float *__restrict__ x, float *__restrict__ y)
{
    const int sub = threadIdx.x % TPR, lane = threadIdx.x & 31;
    // the lanes of this thread's row group (TPR consecutive lanes of one warp)
    const u32 gmask = TPR == 32 ? 0xffffffffu : ((1u << TPR) - 1) << (lane & ~(TPR - 1));
    float s = s0, t = 0.f;
    if (ok) {
        for (u32 e = e0 + sub; e < e1; e += TPR) s = fmaf(exc_dw[e], x[exc_col[e]], s);
        t = tail_t();
        for (int w = sub; w < WARPS; w += TPR) s += red[w * NR + i];
    }
#pragma unroll
    for (int o = TPR / 2; o > 0; o >>= 1) {
        s += __shfl_xor_sync(gmask, s, o);
        t += __shfl_xor_sync(gmask, t, o);
    }
    if (ok && sub == 0) y[row] = fmaf(s, rs, t);
}

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
    const int sub = threadIdx.x % TPR;
    for (int i = threadIdx.x / TPR; i < NR; i += GROUPS) {
        const int row = row0 + i;
        const bool ok = row < rows;
        float rs = 0.f;
        u32 e0 = 0, e1 = 0;
        if (ok) rs = row_scale[row], e0 = exc_ptr[row], e1 = exc_ptr[row + 1];
        auto tail_t = [&]() {
            float t = 0.f;
            for (int j = sub; j < TAIL; j += TPR) t = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[tail_col0 + j], t);
            return t;
        };
        lr_row_finish<TPR, NR, WARPS>(ok, i, row, e0, e1, 0.f, rs, tail_t, red, exc_col, exc_dw, x, y);
    }
}

// The same end with its global loads fetched ahead (Planes14S LR_EPF=1).
// lr_rows_epilogue ends every CTA on a chain of dependent loads (row scale
// and exception range, then the exceptions, then x at their columns; the
// f16 tail beside them), about three memory latencies after its last
// segment, while the CTA streams nothing. Here start() runs before the main
// loop (its loads wait beside the first segment's): the row's scale,
// exception range and tail term go to shared memory (LR_AHEAD_WORDS words
// per thread at ah, no registers held across the loop) and the row's
// exception lists are prefetched into L2; finish() is lr_rows_epilogue on
// those values, its remaining loads L2 hits. Nothing in the main loop (a
// prefetch issued after the first segment cost 17 registers there). One row
// per thread: THREADS >= NR. Same arithmetic, same order: bit-identical y.
#define LR_AHEAD_WORDS 4
template <int THREADS, int NR, int TAIL> struct lr_rows_ahead {
    static constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR;
    static_assert(THREADS >= NR, "lr_rows_ahead: one row per thread");
    u32 *ah; // [LR_AHEAD_WORDS][THREADS]: rs, t, e0, e1 (e0 = e1 = 0 on rows past the end)

    __device__ __forceinline__ int sub() const { return threadIdx.x % TPR; }
    __device__ __forceinline__ void start(int row0, int rows, const u32 *__restrict__ exc_ptr,
                                          const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                                          const u16 *__restrict__ tail, const float *__restrict__ x, int tail_col0,
                                          const float *__restrict__ row_scale) const
    {
        const int i = threadIdx.x / TPR, row = row0 + i;
        float rs = 0.f, t = 0.f;
        u32 e0 = 0, e1 = 0;
        if (i < NR && row < rows) {
            rs = row_scale[row];
            e0 = exc_ptr[row], e1 = exc_ptr[row + 1];
            for (int j = sub(); j < TAIL; j += TPR) t = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[tail_col0 + j], t);
        }
        ah[threadIdx.x] = __float_as_uint(rs);
        ah[THREADS + threadIdx.x] = __float_as_uint(t);
        ah[2 * THREADS + threadIdx.x] = e0;
        ah[3 * THREADS + threadIdx.x] = e1;
        // every 128-byte line of the row's two exception lists into L2, spread over its TPR threads
#pragma unroll 1
        for (u32 a = (e0 & ~31u) + 32 * sub(); a < e1; a += 32 * TPR) {
            lr_prefetch_l2(exc_col + a);
            lr_prefetch_l2(exc_dw + a);
        }
    }
    template <int WARPS>
    __device__ __forceinline__ void finish(const float *red, int row0, int rows, const u32 *__restrict__ exc_col,
                                           const float *__restrict__ exc_dw, const float *__restrict__ x,
                                           float *__restrict__ y) const
    {
        const int i = threadIdx.x / TPR;
        const bool ok = i < NR && row0 + i < rows;
        auto tail_t = [&]() { return __uint_as_float(ah[THREADS + threadIdx.x]); };
        lr_row_finish<TPR, NR, WARPS>(ok, i, row0 + i, ah[2 * THREADS + threadIdx.x], ah[3 * THREADS + threadIdx.x],
                                      0.f, __uint_as_float(ah[threadIdx.x]), tail_t, red, exc_col, exc_dw, x, y);
    }
};

// The same end pipelined through the main loop (Planes14S LR_EPF=2): its
// three dependent fetches go out one per loop iteration, by cp.async into
// shared memory (no register held across a segment's decode), so the CTA
// ends on shared-memory reads only. Why: Nsight Compute's source counters
// on the 14B gate|up (decode-only control, h200 at 03c9ec5) put a third of
// the warps' stall samples in the row end, three memory latencies after
// the last segment (row scale and exception range, the exception, x at its
// column; the tail beside them), while the CTA holds its registers and
// shared memory and streams nothing.
//   start()  before the main loop: row scale, exception range, tail words
//            and their x;
//   step1()  after the first segment: the thread's first exception (column,
//            dw), the range being in shared memory by then;
//   step2()  after the second: x at that column;
//   finish() after the loop and the partial sums' barrier: the rest of the
//            exceptions (a row with more than TPR of them; rare on real
//            weights), in lr_row_finish's order, so y is bit-identical.
// Steps a short loop did not reach run before finish(), each waiting on
// the last. Words per thread: rs, e0, e1, col, dw, x[col], then per tail
// element (NT = ceil(TAIL / TPR)) the 4-byte word holding its f16 and its x.
template <int THREADS, int NR, int TAIL> struct lr_rows_pipe {
    static constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR;
    static constexpr int NT = (TAIL + TPR - 1) / TPR;
    static constexpr int WORDS = 6 + 2 * NT;
    static_assert(THREADS >= NR, "lr_rows_pipe: one row per thread");
    u32 *ah; // [WORDS][THREADS]

    __device__ __forceinline__ u32 *w(int k) const { return ah + k * THREADS + threadIdx.x; }
    __device__ __forceinline__ void start(int row0, int rows, const u32 *__restrict__ exc_ptr,
                                          const u16 *__restrict__ tail, const float *__restrict__ x, int tail_col0,
                                          const float *__restrict__ row_scale) const
    {
        const int i = threadIdx.x / TPR, sub = threadIdx.x % TPR, row = row0 + i;
        if (i < NR && row < rows) {
            lr_cp4(w(0), row_scale + row);
            lr_cp4(w(1), exc_ptr + row);
            lr_cp4(w(2), exc_ptr + row + 1);
#pragma unroll
            for (int n = 0; n < NT; n++) {
                const int j = sub + n * TPR;
                if (j < TAIL) {
                    const size_t k = (size_t)row * TAIL + j;
                    // the aligned word holding f16 k; the array's last
                    // element, when it starts a word, is read alone (its
                    // word would end past the array)
                    if ((k & 1) == 0 && k + 1 == (size_t)rows * TAIL) *w(6 + 2 * n) = tail[k];
                    else lr_cp4(w(6 + 2 * n), tail + (k & ~(size_t)1));
                    lr_cp4(w(7 + 2 * n), x + tail_col0 + j);
                }
            }
        } else {
            *w(1) = 0, *w(2) = 0; // no exceptions
        }
        lr_cp_commit();
    }
    __device__ __forceinline__ void step1(const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw) const
    {
        lr_cp_wait_all();
        const u32 e = *w(1) + threadIdx.x % TPR;
        if (e < *w(2)) lr_cp4(w(3), exc_col + e), lr_cp4(w(4), exc_dw + e);
        lr_cp_commit();
    }
    __device__ __forceinline__ void step2(const float *__restrict__ x) const
    {
        lr_cp_wait_all();
        const u32 e = *w(1) + threadIdx.x % TPR;
        if (e < *w(2)) lr_cp4(w(5), x + *w(3));
        lr_cp_commit();
    }
    template <int WARPS>
    __device__ __forceinline__ void finish(const float *red, int row0, int rows, const u32 *__restrict__ exc_col,
                                           const float *__restrict__ exc_dw, const float *__restrict__ x,
                                           float *__restrict__ y) const
    {
        lr_cp_wait_all();
        const int i = threadIdx.x / TPR, sub = threadIdx.x % TPR, row = row0 + i;
        const bool ok = i < NR && row < rows;
        const u32 e0 = *w(1), e1 = *w(2);
        const float s0 = e0 + sub < e1 ? fmaf(__uint_as_float(*w(4)), __uint_as_float(*w(5)), 0.f) : 0.f;
        auto tail_t = [&]() {
            float t = 0.f;
#pragma unroll
            for (int n = 0; n < NT; n++) {
                const int j = sub + n * TPR;
                if (j < TAIL) {
                    const size_t k = (size_t)row * TAIL + j;
                    const u32 v = *w(6 + 2 * n);
                    t = fmaf(lr_h2f((u16)(k & 1 ? v >> 16 : v)), __uint_as_float(*w(7 + 2 * n)), t);
                }
            }
            return t;
        };
        lr_row_finish<TPR, NR, WARPS>(ok, i, row, e0 + TPR, e1, s0, __uint_as_float(*w(0)), tail_t, red, exc_col,
                                      exc_dw, x, y);
    }
};
