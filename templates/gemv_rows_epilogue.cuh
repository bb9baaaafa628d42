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

// LR_NOEPI = 1 (a benchmark control, Planes14S arm leech_p14s_noepi): the
// end without its global loads (no exceptions, no tail, row scale 1), so
// its time beside the GEMV's is what the end's dependent loads cost.
#ifndef LR_NOEPI
#define LR_NOEPI 0
#endif

// LR_NORM (nonzero: the f32 bits of eps) and LR_RES, the rotated residual's
// ends (kernels/gemv_leech.h lr_gemv_p14s_norm_eps, lr_gemv_p14s_res): every
// row's value times rsqrt(mean(x^2) + eps), the GEMV's x being the
// un-normed residual; or added into y (the residual add, in place).
#ifndef LR_NORM
#define LR_NORM 0
#endif
#ifndef LR_RES
#define LR_RES 0
#endif
#if LR_NORM
// rsqrt(mean(x^2) + eps), the same in every thread of every CTA (defined by
// the template that includes this: its warps' sums are its own)
LR_DEV float lr_norm_scale();
#endif

template <int THREADS, int NR>
struct lr_rows_geom {
    static constexpr int q = THREADS / NR;
    static constexpr int TPR = q >= 32 ? 32 : q >= 16 ? 16 : q >= 8 ? 8 : q >= 4 ? 4 : q >= 2 ? 2 : 1;
};

// Row i of the batch (row `row`, `ok` when it exists) from its TPR threads:
// each adds its share of the exceptions e0..e1, then takes its share of the
// tail term (tail_t(), after the exceptions' loads are out: the longest
// chain first), then its share of the WARPS partial sums red[w * NR + i];
// the group reduces both and its first thread writes y[row] = s rs + t.
// Shared by both ends below, so they stay bit-identical.
// SWIGLU: rows 2i, 2i + 1 are gate and up of output i (lr_p14s.pair, the
// rows of a pair on neighbouring thread groups of one warp: TPR <= 16, and
// both rows present, skipped or past the end together): the gate row's
// first thread writes y[row / 2] = silu(g) u, as op_silu_mul computes it.
// s0: a start for the thread's sum (lr_rows_epilogue_side: the row's
// exception sum, made by the side warp).
template <int TPR, int NR, int WARPS, bool SWIGLU = false, class TailT>
LR_DEV void lr_row_finish(bool ok, int i, int row, u32 e0, u32 e1, float rs, TailT tail_t, const float *red,
                          const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                          const float *__restrict__ x, float *__restrict__ y, float s0 = 0.f)
{
    const int sub = threadIdx.x % TPR, lane = threadIdx.x & 31;
#if LR_NORM
    const float ns = lr_norm_scale();
#endif
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
    if constexpr (SWIGLU) {
        static_assert(TPR <= 16, "SwiGLU: a row pair's threads in one warp");
        const u32 pmask = 2 * TPR == 32 ? 0xffffffffu : ((1u << (2 * TPR)) - 1) << (lane & ~(2 * TPR - 1));
#if LR_NORM
        const float v = fmaf(s, rs, t) * ns, u = __shfl_xor_sync(pmask, v, TPR);
#else
        const float v = fmaf(s, rs, t), u = __shfl_xor_sync(pmask, v, TPR);
#endif
        if (ok && sub == 0 && !(row & 1)) y[row >> 1] = v / (1.f + __expf(-v)) * u;
    } else if (ok && sub == 0) {
#if LR_NORM
        const float v = fmaf(s, rs, t) * ns;
#else
        const float v = fmaf(s, rs, t);
#endif
#if LR_RES
        y[row] += v;
#else
        y[row] = v;
#endif
    }
}

// red[w * NR + i]: warp w's partial sum of row row0 + i (WARPS warps);
// rows at or past `rows` are skipped, and rows i with skip[i] set (another
// CTA finishes them: the Planes14S split); tail [rows][TAIL] f16 multiplies
// x[tail_col0 ..]. All threads of the CTA call it (no early exit); with
// GROUP, all THREADS threads of one group of consecutive whole warps.
// The batch's NR rows dealt to groups of TPR threads: f(i, row, ok, sub)
// for every row i this thread's group takes (ok: the row exists and is not
// skipped; sub: the thread's index in its group). THREADS threads call it,
// with GROUP the threads of one warp group (threadIdx.x % THREADS).
template <int THREADS, int NR, bool GROUP, class F>
LR_DEV void lr_rows_each(int row0, int rows, const u8 *skip, F f)
{
    constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR, GROUPS = THREADS / TPR;
    // (unsigned, as threadIdx.x: a signed index cost the Planes14S gate|up
    // main loop 7 instructions and a register, nvcc 13.0)
    const unsigned tid = GROUP ? threadIdx.x % THREADS : threadIdx.x;
    const int sub = tid % TPR;
    for (int i = tid / TPR; i < NR; i += GROUPS) {
        const int row = row0 + i;
        f(i, row, row < rows && !(skip && skip[i]), sub);
    }
}

template <int THREADS, int NR, int WARPS, int TAIL, bool GROUP = false, bool SWIGLU = false>
LR_DEV void lr_rows_epilogue(const float *red, int row0, int rows, const u32 *__restrict__ exc_ptr,
                             const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                             const u16 *__restrict__ tail, const float *__restrict__ x, int tail_col0,
                             const float *__restrict__ row_scale, float *__restrict__ y,
                             const u8 *skip = nullptr)
{
    constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR;
    lr_rows_each<THREADS, NR, GROUP>(row0, rows, skip, [&](int i, int row, bool ok, int sub) {
        float rs = 0.f;
        u32 e0 = 0, e1 = 0;
        if (ok && LR_NOEPI) rs = 1.f;
        else if (ok) rs = row_scale[row], e0 = exc_ptr[row], e1 = exc_ptr[row + 1];
        auto tail_t = [&]() {
            float t = 0.f;
            for (int j = sub; j < (LR_NOEPI ? 0 : TAIL); j += TPR) t = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[tail_col0 + j], t);
            return t;
        };
        lr_row_finish<TPR, NR, WARPS, SWIGLU>(ok, i, row, e0, e1, rs, tail_t, red, exc_col, exc_dw, x, y);
    });
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
// THREADS threads call it, t the caller's index among them (threadIdx.x, or
// the thread's index in its warp group, ah then that group's words).
#define LR_AHEAD_WORDS 4
template <int THREADS, int NR, int TAIL> struct lr_rows_ahead {
    static constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR;
    static_assert(THREADS >= NR, "lr_rows_ahead: one row per thread");
    u32 *ah;    // [LR_AHEAD_WORDS][THREADS]: rs, t, e0, e1 (e0 = e1 = 0 on rows past the end)
    unsigned t; // this thread's index in 0..THREADS-1

    __device__ __forceinline__ int sub() const { return t % TPR; }
    __device__ __forceinline__ void start(int row0, int rows, const u32 *__restrict__ exc_ptr,
                                          const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                                          const u16 *__restrict__ tail, const float *__restrict__ x, int tail_col0,
                                          const float *__restrict__ row_scale) const
    {
        const int i = t / TPR, row = row0 + i;
        float rs = 0.f, tt = 0.f;
        u32 e0 = 0, e1 = 0;
        if (i < NR && row < rows) {
            rs = row_scale[row];
            e0 = exc_ptr[row], e1 = exc_ptr[row + 1];
            for (int j = sub(); j < TAIL; j += TPR) tt = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[tail_col0 + j], tt);
        }
        ah[t] = __float_as_uint(rs);
        ah[THREADS + t] = __float_as_uint(tt);
        ah[2 * THREADS + t] = e0;
        ah[3 * THREADS + t] = e1;
        // every 128-byte line of the row's two exception lists into L2, spread over its TPR threads
#pragma unroll 1
        for (u32 a = (e0 & ~31u) + 32 * sub(); a < e1; a += 32 * TPR) {
            lr_prefetch_l2(exc_col + a);
            lr_prefetch_l2(exc_dw + a);
        }
    }
    template <int WARPS, bool SWIGLU = false>
    __device__ __forceinline__ void finish(const float *red, int row0, int rows, const u32 *__restrict__ exc_col,
                                           const float *__restrict__ exc_dw, const float *__restrict__ x,
                                           float *__restrict__ y, const u8 *skip = nullptr) const
    {
        const int i = t / TPR;
        const bool ok = i < NR && row0 + i < rows && !(skip && skip[i]);
        auto tail_t = [&]() { return __uint_as_float(ah[THREADS + t]); };
        lr_row_finish<TPR, NR, WARPS, SWIGLU>(ok, i, row0 + i, ah[2 * THREADS + t], ah[3 * THREADS + t],
                                      __uint_as_float(ah[t]), tail_t, red, exc_col, exc_dw, x, y);
    }
};

// The side warp (Planes14S LR_SIDE): one extra warp per CTA makes what the
// row end loads from global memory while the other warps run the main loop,
// so a CTA no longer ends on that chain of dependent loads (row range ->
// exceptions -> x at their columns; the tail and the row scale beside it).
// Measured before it existed (leech_p14s_noepi, the end without those
// loads): 14B layer 74.65 -> 65.78 us, 12% (class-uniform blocks), 68.75 ->
// 65.40 over the ball. For rows [r0, r1) (at most SNR): sd[i] = the row
// scale, sd[SNR + i] = the tail term, sd[2 SNR + i] = sum_e dw_e x[col_e]
// (each product rounded, then summed in the row's order: deterministic).
// One side warp takes rows [r0, r1) of those (i = row - rb); several split
// the CTA's rows. Lane l owns rows r0 + l + 32k (k < KR): their scales,
// tail terms and exception ranges are loaded RU rows per lane at a time,
// all in flight together (tail rows as 16-byte vectors when TAIL is a
// multiple of 8), and the ranges stay in registers for the sums. Its rows'
// exceptions are one CSR range; the warp takes PCAP of them at a time, U per
// lane in flight, products into P, then each lane sums its rows' products.
// Why the loads are batched: one row per lane per round trip (and the
// row ranges loaded again for the sums) kept a side warp with ~290 rows
// (1 side warp, 14B gate|up) on ~20 dependent memory latencies, longer
// than the main loop once its data comes from DRAM, as in the engine
// (kernels/kernels.h, lr_bench_copies: why the sweeps had it in L2). In
// the 14B engine (one process each, h200_engine_variants.csv), gate|up at
// 768 threads + 1 side warp took 1524 us per token inside the graph
// before, 1373 after (4 side warps: 1242, 1250).
// Everything loads after the PDL wait (the rows' data is immutable, but a
// narrow global load ahead of the wait is what sass_count --pdl-check
// refuses).
template <int SNR, int TAIL, int PCAP, int U = 16, int RU = 3>
LR_DEV void lr_rows_side(float *sd, float *P, int rb, int r0, int r1, const u32 *__restrict__ exc_ptr,
                         const u32 *__restrict__ exc_col, const float *__restrict__ exc_dw,
                         const u16 *__restrict__ tail, const float *x, int tail_col0,
                         const float *__restrict__ row_scale)
{
    constexpr int KR = (SNR + 31) / 32; // rows per lane at most
    constexpr bool VT = TAIL > 0 && TAIL % 8 == 0;
    const int lane = threadIdx.x & 31, n = r1 - r0;
    sd += r0 - rb;
    lr_pdl_wait();
    x = lr_after_wait(x);
    if (n <= 0) return;
    const u32 E0 = exc_ptr[r0], E1 = exc_ptr[r1];
    float xt[TAIL > 0 ? TAIL : 1];
#pragma unroll
    for (int j = 0; j < TAIL; j++) xt[j] = x[tail_col0 + j];
    u32 ea[KR], ez[KR]; // row lane + 32k: exceptions [ea, ez)
#pragma unroll
    for (int k0 = 0; k0 < KR; k0 += RU) {
        float rs[RU];
        uint4 tv[RU][VT ? TAIL / 8 : 1];
        u16 ts[RU][!VT && TAIL > 0 ? TAIL : 1];
#pragma unroll
        for (int u = 0; u < RU; u++) {
            const int k = k0 + u, i = lane + 32 * k;
            if (k >= KR) break;
            const bool ok = i < n;
            const int row = ok ? r0 + i : r0;
            rs[u] = ok ? row_scale[row] : 0.f;
            ea[k] = ok ? exc_ptr[row] : 0u;
            ez[k] = ok ? exc_ptr[row + 1] : 0u;
            if constexpr (VT) {
                const uint4 *tr = (const uint4 *)(tail + (size_t)row * TAIL);
#pragma unroll
                for (int j = 0; j < TAIL / 8; j++) tv[u][j] = ok ? tr[j] : make_uint4(0, 0, 0, 0);
            } else {
#pragma unroll
                for (int j = 0; j < TAIL; j++) ts[u][j] = ok ? tail[(size_t)row * TAIL + j] : (u16)0;
            }
        }
#pragma unroll
        for (int u = 0; u < RU; u++) {
            const int k = k0 + u, i = lane + 32 * k;
            if (k >= KR) break;
            if (i >= n) continue;
            float t = 0.f;
            if constexpr (VT) {
#pragma unroll
                for (int j = 0; j < TAIL / 8; j++) {
                    const u32 w[4] = { tv[u][j].x, tv[u][j].y, tv[u][j].z, tv[u][j].w };
#pragma unroll
                    for (int h = 0; h < 8; h++)
                        t = fmaf(lr_h2f((u16)(w[h / 2] >> (16 * (h & 1)))), xt[8 * j + h], t);
                }
            } else {
#pragma unroll
                for (int j = 0; j < TAIL; j++) t = fmaf(lr_h2f(ts[u][j]), xt[j], t);
            }
            sd[i] = rs[u];
            sd[SNR + i] = t;
            sd[2 * SNR + i] = 0.f;
        }
    }
    for (u32 c0 = E0; c0 < E1; c0 += PCAP) {
        const u32 c1 = min(E1, c0 + PCAP);
        for (u32 e = c0 + lane; e < c1; e += 32 * U) {
            u32 col[U];
            float dw[U];
#pragma unroll
            for (int k = 0; k < U; k++) {
                const u32 ee = e + 32 * k;
                col[k] = ee < c1 ? exc_col[ee] : 0u;
                dw[k] = ee < c1 ? exc_dw[ee] : 0.f;
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                const u32 ee = e + 32 * k;
                if (ee < c1) P[ee - c0] = dw[k] * x[col[k]];
            }
        }
        __syncwarp();
#pragma unroll
        for (int k = 0; k < KR; k++) {
            const int i = lane + 32 * k;
            if (i >= n) break;
            const u32 a = max(ea[k], c0), z = min(ez[k], c1);
            float s = sd[2 * SNR + i];
            for (u32 e = a; e < z; e++) s += P[e - c0];
            sd[2 * SNR + i] = s;
        }
        __syncwarp();
    }
}

// lr_rows_epilogue with the side warp's values: row i of the batch is row
// i0 + i of sd (SNR stride); no global loads but y.
template <int THREADS, int NR, int WARPS, int SNR, bool GROUP = false, bool SWIGLU = false>
LR_DEV void lr_rows_epilogue_side(const float *red, int row0, int rows, const float *sd, int i0,
                                  float *__restrict__ y, const u8 *skip = nullptr)
{
    constexpr int TPR = lr_rows_geom<THREADS, NR>::TPR;
    lr_rows_each<THREADS, NR, GROUP>(row0, rows, skip, [&](int i, int row, bool ok, int sub) {
        const float rs = ok ? sd[i0 + i] : 0.f;
        const float s0 = ok && sub == 0 ? sd[2 * SNR + i0 + i] : 0.f, t0 = ok && sub == 0 ? sd[SNR + i0 + i] : 0.f;
        auto tail_t = [&]() { return t0; };
        lr_row_finish<TPR, NR, WARPS, SWIGLU>(ok, i, row, 0u, 0u, rs, tail_t, red, nullptr, nullptr, nullptr, y, s0);
    });
}

// Named barriers (PTX bar.sync / bar.arrive): the side warp arrives, the
// warps that read its values sync; n counts both.
LR_DEV void lr_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
LR_DEV void lr_bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }
