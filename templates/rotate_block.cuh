// Device pieces of the incoherence rotation x' = (Q_odd kron H_m) D x
// (docs/rotation.md), shared by the standalone kernel (rotate_slab.cu) and the
// fused GEMV prologue (gemv_f16_rot.cu). x is a K x M row-major matrix.
// The gather may make its input from other buffers (a source, lr_rot_src_x
// below; rotate_slab.cu's fused input transforms).
//
// A CTA computes one slab: output columns [j*S, (j+1)*S) of all K rows.
// Splitting a column index c = a*S + b (a < P = M/S, b < S), the Hadamard
// factors as H_M[c][c'] = H_P[a][a'] * H_S[b][b'], so slab j needs
//   u[r][b] = sum_a' (-1)^popcount(j & a') * (D x)[r][a'*S + b]   (gather)
//   z[r]    = H_S u[r]                                           (in-slab FWHT)
//   y[r][j*S + b] = sum_r' q[r][r'] z[r'][b]                       (row mix)
// with q = Q_odd / sqrt(M) (the whole normalisation). S == M is the
// single-CTA rotation (P = 1). Every thread works on float4 items: item
// (r, v) covers columns 4v..4v+3 of row r of the slab.
//
// FWHT bits of the slab column b: bits 0-1 inside the float4, bits 2..6 by
// warp shuffles (lanes of a warp hold consecutive v of one row), higher bits
// by radix-8 passes over shared memory.
#pragma once
#include "lr_common.cuh"

static constexpr __host__ __device__ int lr_ilog2(int v) { return v <= 1 ? 0 : 1 + lr_ilog2(v >> 1); }

LR_DEV float lr_flip(float v, u32 bit) { return __int_as_float(__float_as_int(v) ^ (int)(bit << 31)); }

LR_DEV void lr_bfly(float &a, float &b)
{
    const float s = a + b, d = a - b;
    a = s;
    b = d;
}

LR_DEV void lr_bfly4(float4 &a, float4 &b)
{
    lr_bfly(a.x, b.x);
    lr_bfly(a.y, b.y);
    lr_bfly(a.z, b.z);
    lr_bfly(a.w, b.w);
}

// One shuffle stage: the lane with the bit set keeps partner - own.
LR_DEV float lr_shfl_bfly(float v, int mask, bool upper)
{
    const float o = __shfl_xor_sync(0xffffffffu, v, mask);
    return upper ? o - v : v + o;
}

// The signs of four consecutive elements (bits 0-3 of nib set = negate).
LR_DEV void lr_flip4(float4 &a, u32 nib)
{
    a.x = lr_flip(a.x, nib & 1);
    a.y = lr_flip(a.y, (nib >> 1) & 1);
    a.z = lr_flip(a.z, (nib >> 2) & 1);
    a.w = lr_flip(a.w, (nib >> 3) & 1);
}

// FWHT bits 0-1 inside an item's float4, then bits 2..LV+1 by warp
// shuffles (the lanes of a warp hold consecutive items of one row).
template <int LV> LR_DEV void lr_fwht_item(float4 &a, int lane)
{
    lr_bfly(a.x, a.y);
    lr_bfly(a.z, a.w);
    lr_bfly(a.x, a.z);
    lr_bfly(a.y, a.w);
#pragma unroll
    for (int q = 0; q < LV; q++) {
        const bool up = (lane >> q) & 1;
        a.x = lr_shfl_bfly(a.x, 1 << q, up);
        a.y = lr_shfl_bfly(a.y, 1 << q, up);
        a.z = lr_shfl_bfly(a.z, 1 << q, up);
        a.w = lr_shfl_bfly(a.w, 1 << q, up);
    }
}

// Where the gather's input comes from. load(e) issues the reads of the four
// elements e..e+3 (a chunk's loads are all in flight before any is used);
// value() makes the input float4 from them. live: not a clamped copy (lanes
// past the last item recompute one); mine: the slab index of e is this CTA's
// j, so exactly one CTA of the grid sees each element as mine.
struct lr_rot_src_x {
    const float *__restrict__ x;
    typedef float4 raw;
    __device__ __forceinline__ raw load(int e) const { return __ldg((const float4 *)(x + e)); }
    __device__ __forceinline__ float4 value(const raw &v, int, bool, bool) { return v; }
};

// Gather + the slab's FWHT bits 0..6, written to zs[K][S] (float4 items).
// Loop bounds are warp-uniform so every lane joins the shuffles; lanes past
// the last item compute on a clamped copy and store nothing.
template <int K, int M, int S, int T, int U, class Src>
LR_DEV void lr_rot_gather_src(float *zs, Src &src, const u32 *__restrict__ dbits, int j)
{
    constexpr int V = S / 4, P = M / S, ITEMS = K * V;
    constexpr int UU = U < P ? U : P;
    constexpr int LV = lr_ilog2(V) < 5 ? lr_ilog2(V) : 5;
    static_assert(S >= 4 && M % S == 0 && P % UU == 0, "bad slab");
    const int lane = threadIdx.x & 31;
    for (int base = threadIdx.x - lane; base < ITEMS; base += T) {
        const int i = base + lane;
        const int ii = i < ITEMS ? i : ITEMS - 1;
        const int r = ii / V, v = ii - r * V;
        const int e0 = r * M + 4 * v;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int a0 = 0; a0 < P; a0 += UU) {
            typename Src::raw xr[UU];
            float4 xv[UU];
            u32 w[UU];
#pragma unroll
            for (int u = 0; u < UU; u++) {
                const int e = e0 + (a0 + u) * S;
                xr[u] = src.load(e);
                w[u] = __ldg(dbits + (e >> 5));
            }
#pragma unroll
            for (int u = 0; u < UU; u++) {
                const int e = e0 + (a0 + u) * S;
                xv[u] = src.value(xr[u], e, i < ITEMS, a0 + u == j);
                const u32 nib = (w[u] >> (e & 31)) ^ ((__popc(j & (a0 + u)) & 1) ? 15u : 0u);
                lr_flip4(xv[u], nib);
            }
            // Pairwise within the chunk: the f32 error then grows with P/UU,
            // not P (kernels/rotation_test.c emulates this order).
#pragma unroll
            for (int h = 1; h < UU; h <<= 1)
#pragma unroll
                for (int u = 0; u + h < UU; u += 2 * h) {
                    xv[u].x += xv[u + h].x;
                    xv[u].y += xv[u + h].y;
                    xv[u].z += xv[u + h].z;
                    xv[u].w += xv[u + h].w;
                }
            acc.x += xv[0].x;
            acc.y += xv[0].y;
            acc.z += xv[0].z;
            acc.w += xv[0].w;
        }
        lr_fwht_item<LV>(acc, lane);
        if (i < ITEMS) ((float4 *)zs)[ii] = acc;
    }
}

// The gather of x itself.
template <int K, int M, int S, int T, int U>
LR_DEV void lr_rot_gather(float *zs, const float *__restrict__ x, const u32 *__restrict__ dbits, int j)
{
    lr_rot_src_x src{ x };
    lr_rot_gather_src<K, M, S, T, U>(zs, src, dbits, j);
}

// Slab FWHT bits above the shuffled ones (item bits B.. of v), up to 3 per
// pass: a thread loads the 2^R float4 that differ in those bits (stride L
// items, consecutive threads on consecutive items: no bank conflicts).
// BAR >= 0: the passes' barrier is bar.sync BAR over the T threads (a
// block whose other warps do not take part), else __syncthreads.
template <int K, int S, int T, int B, int BAR = -1>
LR_DEV void lr_rot_passes(float *zs)
{
    constexpr int V = S / 4, LVT = lr_ilog2(V);
    if constexpr (B < LVT) {
        constexpr int R = (LVT - B) < 3 ? (LVT - B) : 3;
        constexpr int L = 1 << B, G = 1 << R, HI = V / (L * G), NG = K * V / G;
        if constexpr (BAR >= 0) asm volatile("bar.sync %0, %1;" ::"n"(BAR), "n"(T) : "memory");
        else __syncthreads();
        for (int g = threadIdx.x; g < NG; g += T) {
            const int lo = g % L, rest = g / L;
            const int hi = rest % HI, r = rest / HI;
            float4 *p = (float4 *)zs + r * V + hi * L * G + lo;
            float4 a[G];
#pragma unroll
            for (int e = 0; e < G; e++) a[e] = p[e * L];
#pragma unroll
            for (int h = 1; h < G; h <<= 1)
#pragma unroll
                for (int e = 0; e < G; e++)
                    if (!(e & h)) lr_bfly4(a[e], a[e + h]);
#pragma unroll
            for (int e = 0; e < G; e++) p[e * L] = a[e];
        }
        lr_rot_passes<K, S, T, B + R, BAR>(zs);
    }
}

// Row mix of the slab into global memory: y[r][j*S + 4v..] for every item.
template <int K, int M, int S, int T>
LR_DEV void lr_rot_mix_out(const float *zs, const float *qs, float *__restrict__ y, int j)
{
    constexpr int V = S / 4;
    for (int i = threadIdx.x; i < K * V; i += T) {
        const int r = i / V, v = i - r * V;
        float4 o[4];
#pragma unroll
        for (int c = 0; c < 4; c++) o[c] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int p = 0; p < K; p++) {
            const float qv = qs[r * K + p]; // K odd: rows in a warp hit distinct banks
            const float4 z = ((const float4 *)zs)[p * V + v];
            o[p & 3].x = fmaf(qv, z.x, o[p & 3].x);
            o[p & 3].y = fmaf(qv, z.y, o[p & 3].y);
            o[p & 3].z = fmaf(qv, z.z, o[p & 3].z);
            o[p & 3].w = fmaf(qv, z.w, o[p & 3].w);
        }
        // four chains, then pairwise: half the error of one chain of K
        float4 out;
        out.x = (o[0].x + o[1].x) + (o[2].x + o[3].x);
        out.y = (o[0].y + o[1].y) + (o[2].y + o[3].y);
        out.z = (o[0].z + o[1].z) + (o[2].z + o[3].z);
        out.w = (o[0].w + o[1].w) + (o[2].w + o[3].w);
        *(float4 *)(y + r * M + j * S + 4 * v) = out;
    }
}

// Row mix in place over the whole vector (S == M): a thread owns a column,
// holds its K values in registers, overwrites them with the mixed ones.
template <int K, int M, int T>
LR_DEV void lr_rot_mix_inplace(float *zs, const float *qs)
{
    for (int c = threadIdx.x; c < M; c += T) {
        float z[K];
#pragma unroll
        for (int p = 0; p < K; p++) z[p] = zs[p * M + c];
#pragma unroll
        for (int r = 0; r < K; r++) {
            float o[4] = { 0.f, 0.f, 0.f, 0.f };
#pragma unroll
            for (int p = 0; p < K; p++) o[p & 3] = fmaf(qs[r * K + p], z[p], o[p & 3]);
            zs[r * M + c] = (o[0] + o[1]) + (o[2] + o[3]);
        }
    }
}

// The whole rotation of x into zs[N] (N = K*M floats of shared memory) by a
// CTA of T threads; qs must hold the K*K table. Ends synchronised.
template <int K, int M, int T>
LR_DEV void lr_rot_block(float *zs, const float *qs, const float *__restrict__ x, const u32 *__restrict__ dbits)
{
    lr_rot_gather<K, M, M, T, 1>(zs, x, dbits, 0);
    lr_rot_passes<K, M, T, 5>(zs);
    __syncthreads();
    lr_rot_mix_inplace<K, M, T>(zs, qs);
    __syncthreads();
}
