// Small decode-step ops shared by the engine templates: block reductions.
#pragma once
#include "lr_common.cuh"

// Sum over the block; every thread gets the result. `red` holds 32 floats.
LR_DEV float lr_block_sum(float v, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = lr_warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float s = lane < nw ? red[lane] : 0.f;
    return lr_warp_sum(s);
}

LR_DEV float lr_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Rotary embedding of element i of a head (Hugging Face rotate_half pairs
// (i, i + d/2)) at position pos; v is element i, partner element i +- d/2.
// Angles in f64 so long positions keep their accuracy.
// Split in two so a kernel can take the angle (a long f64 dependency chain)
// before it waits for its inputs.
LR_DEV void lr_rope_angle(int i, int head_dim, int pos, float theta, double *cs, double *sn)
{
    const int half = head_dim / 2, j = i < half ? i : i - half;
    const double inv = pow((double)theta, -2.0 * j / head_dim);
    sincos((double)pos * inv, sn, cs);
}
LR_DEV float lr_rope_apply(float v, float partner_v, int i, int head_dim, double cs, double sn)
{
    const float partner = i < head_dim / 2 ? -partner_v : partner_v;
    return (float)(v * cs + partner * sn);
}
LR_DEV float lr_rope(float v, float partner_v, int i, int head_dim, int pos, float theta)
{
    double cs, sn;
    lr_rope_angle(i, head_dim, pos, theta, &cs, &sn);
    return lr_rope_apply(v, partner_v, i, head_dim, cs, sn);
}

// The element of a head that a lane holds as its e-th of HD/32: with HD a
// multiple of 64, neighbour pairs (2 lane, 2 lane + 1) every 64 elements, so
// a lane reads its halves of a cached k or v row as HD/64 32-bit words (half
// the loads, and half the registers for lr_kv_pre, of one 16-bit load per
// element); else element lane + 32 e, one 16-bit load each.
template <int HD> struct lr_att_map {
    static constexpr bool PAIR = HD % 64 == 0;
    static constexpr int NW = PAIR ? HD / 64 : HD / 32; // cache words a lane reads per row
    static constexpr int PER = PAIR ? 2 : 1;             // elements per word
    static __device__ __forceinline__ int elem(int lane, int e)
    {
        return PAIR ? 64 * (e >> 1) + 2 * lane + (e & 1) : lane + 32 * e;
    }
    // word w of this lane in the cache row starting at element base
    static __device__ __forceinline__ u32 load(const u16 *__restrict__ cache, u64 base, int lane, int w)
    {
        return PAIR ? ((const u32 *)cache)[base / 2 + lane + 32 * w] : (u32)cache[base + lane + 32 * w];
    }
};
template <int HD> LR_DEV int lr_att_elem(int lane, int e) { return lr_att_map<HD>::elem(lane, e); }

// A warp's first step of lr_attend_range loaded ahead (lr_attend_preload):
// the cached rows of the positions it takes first, as lr_att_map words.
template <int HD, int U> struct lr_kv_pre {
    u32 k[U][lr_att_map<HD>::NW], v[U][lr_att_map<HD>::NW];
};

// Loads this warp's first U positions of tb..te-1 for lr_attend_range,
// except T-1 (this step's row, written by the kernel itself). Why: a kernel
// may call it before its PDL wait. The cache rows below T-1 were written by
// earlier steps, whose kernels all finished before the kernel before this
// one passed its own wait, so the step's one cache round trip overlaps the
// kernel before (the q|k|v GEMV) instead of following it.
template <int HD, int THREADS, int U>
LR_DEV void lr_attend_preload(lr_kv_pre<HD, U> &p, const u16 *__restrict__ kcache, const u16 *__restrict__ vcache,
                              int kvh, int n_kv, int tb, int te, int T)
{
    using A = lr_att_map<HD>;
    const int lane = threadIdx.x & 31, t0 = tb + (threadIdx.x >> 5) * U;
#pragma unroll
    for (int j = 0; j < U; j++) {
        const int t = min(t0 + j, te - 1);
        const bool ok = t0 < te && t < T - 1;
        const u64 base = (u64)t * n_kv * HD + (u64)kvh * HD;
#pragma unroll
        for (int w = 0; w < A::NW; w++) {
            p.k[j][w] = ok ? A::load(kcache, base, lane, w) : 0u;
            p.v[j][w] = ok ? A::load(vcache, base, lane, w) : 0u;
        }
    }
}

// Decode attention of one q head (one CTA of THREADS threads) over positions
// tb..te-1 of the f16 KV cache, kv head kvh; qv = this lane's HD/32 elements (lr_att_elem)
// of q, already scaled. Each warp walks U consecutive positions per step with
// their k and v loads issued together (one load latency per step instead of
// U: at short contexts the kernel is that chain, not bytes), an online
// softmax per warp, warps combined through shared memory. Threads t < HD
// get the range's max score M, its sum L of e^(s - M) and element t of the
// unnormalised output o (the same M and L in every thread). cur_k/cur_v
// (shared memory, or null): position T-1's k and v, read there instead of
// from the cache (the fused RoPE kernel has them).
// pre (or null): this warp's first step, loaded by lr_attend_preload with the
// same tb, te and T.
template <int HD, int THREADS, int U>
LR_DEV void lr_attend_range(const float (&qv)[HD / 32], const u16 *__restrict__ kcache, const u16 *__restrict__ vcache,
                            int kvh, int n_kv, int tb, int te, int T, const float *cur_k, const float *cur_v, float &M,
                            float &L, float &o, const lr_kv_pre<HD, U> *pre = nullptr)
{
    constexpr int EPL = HD / 32, WARPS = THREADS / 32;
    static_assert(HD <= THREADS, "one thread per element combines the warps");
    using A = lr_att_map<HD>;
    __shared__ float m_s[WARPS], l_s[WARPS], o_s[WARPS][HD];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float acc[EPL];
#pragma unroll
    for (int e = 0; e < EPL; e++) acc[e] = 0.f;
    float m = -INFINITY, l = 0.f;
    for (int t0 = tb + warp * U; t0 < te; t0 += WARPS * U) {
        float kv[U][EPL], vv[U][EPL], sc[U];
        const bool first = pre && t0 == tb + warp * U;
#pragma unroll
        for (int j = 0; j < U; j++) {
            const int t = min(t0 + j, te - 1); // past the end: a valid row, weight 0 below
            const u64 base = (u64)t * n_kv * HD + (u64)kvh * HD;
            const bool cur = cur_k && t == T - 1;
#pragma unroll
            for (int w = 0; w < A::NW; w++) {
                const u32 kw = first ? pre->k[j][w] : A::load(kcache, base, lane, w);
                const u32 vw = first ? pre->v[j][w] : A::load(vcache, base, lane, w);
#pragma unroll
                for (int b = 0; b < A::PER; b++) {
                    const int e = A::PER * w + b, c = A::elem(lane, e);
                    kv[j][e] = cur ? cur_k[c] : lr_h2f((u16)(kw >> (16 * b)));
                    vv[j][e] = cur ? cur_v[c] : lr_h2f((u16)(vw >> (16 * b)));
                }
            }
        }
#pragma unroll
        for (int j = 0; j < U; j++) {
            float s = 0.f;
#pragma unroll
            for (int e = 0; e < EPL; e++) s += qv[e] * kv[j][e];
            sc[j] = s;
        }
#pragma unroll
        for (int j = 0; j < U; j++) sc[j] = lr_warp_sum(sc[j]);
        float mn = m;
#pragma unroll
        for (int j = 0; j < U; j++)
            if (t0 + j < te) mn = fmaxf(mn, sc[j]);
        const float c = __expf(m - mn);
        l *= c;
#pragma unroll
        for (int e = 0; e < EPL; e++) acc[e] *= c;
#pragma unroll
        for (int j = 0; j < U; j++) {
            const float p = t0 + j < te ? __expf(sc[j] - mn) : 0.f;
            l += p;
#pragma unroll
            for (int e = 0; e < EPL; e++) acc[e] += p * vv[j][e];
        }
        m = mn;
    }
    if (lane == 0) m_s[warp] = m, l_s[warp] = l;
#pragma unroll
    for (int e = 0; e < EPL; e++) o_s[warp][A::elem(lane, e)] = acc[e];
    __syncthreads();
    // one thread per element (HD of them; the same operations in the same
    // order as one warp walking EPL elements per lane, which was 4x the
    // chain at head_dim 128 and 32 warps)
    M = -INFINITY, L = 0.f, o = 0.f;
    if (threadIdx.x < HD) {
        const int t = threadIdx.x;
        for (int w = 0; w < WARPS; w++) M = fmaxf(M, m_s[w]);
        for (int w = 0; w < WARPS; w++) {
            if (m_s[w] == -INFINITY) continue; // a warp that saw no position
            const float c = __expf(m_s[w] - M);
            L += l_s[w] * c;
            o += o_s[w][t] * c;
        }
    }
}


// Rotation kind 2 on one head (the rotation before o, per head): y = (q kron
// Hu_m) D v over the head's HD = K*M elements, thread i < HD holding element
// i (dbits: the head's signs, bit i; q: the K x K table with 1/sqrt(M) in it,
// kernels/rotation.h's lr_rot_qtable). Every thread of the CTA calls it (it
// has barriers); buf: HD floats of shared memory nothing else uses across
// the call. Returns element i of y (threads i >= HD: 0).
template <int HD> LR_DEV float lr_head_rotate(float v, const u32 *__restrict__ dbits, const float *__restrict__ q, float *buf)
{
    constexpr int M = HD & -HD, K = HD / M, LB = M < 32 ? M : 32;
    const int i = threadIdx.x;
    const bool act = i < HD; // (HD is a multiple of 32: warps are wholly in or out)
    if (act && ((dbits[i >> 5] >> (i & 31)) & 1)) v = -v;
    // the Hadamard's low bits inside the warp (i % 32 is the lane)
#pragma unroll
    for (int b = 1; b < LB; b <<= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, b);
        v = (i & b) ? o - v : v + o;
    }
    if (M > 32) { // its bits 5.. over the row's M / 32 warps, through shared memory
        if (act) buf[i] = v;
        __syncthreads();
        if (act) {
            const int c = i % M, base = i - c, hi = c >> 5, lo = c & 31;
            float s = 0.f;
#pragma unroll
            for (int a = 0; a < M / 32; a++) {
                const float t = buf[base + (a << 5) + lo];
                s += (__popc(a & hi) & 1) ? -t : t;
            }
            v = s;
        }
        __syncthreads();
    }
    if (K == 1) return act ? v * q[0] : 0.f;
    if (act) buf[i] = v; // the K rows mixed by q
    __syncthreads();
    float s = 0.f;
    if (act) {
        const int r = i / M, c = i % M;
#pragma unroll
        for (int p = 0; p < K; p++) s += q[r * K + p] * buf[p * M + c];
    }
    return s;
}
