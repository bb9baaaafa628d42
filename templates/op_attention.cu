// Decode attention for one query token over the f16 KV cache, grouped-query:
// q head h reads kv head h / (n_heads / n_kv). One CTA per q head; each warp
// walks a strided subset of positions with an online softmax (running max and
// sum), U positions per step with their loads in flight together; lanes hold
// head_dim/32 elements of q and of the output; warps combine through shared
// memory. Positions 0..*pos inclusive.
// @spec op_attention threads=256 head_dim=128
#include "engine_ops.cuh"

#define EPL (LR_HEAD_DIM / 32) // elements per lane
#define WARPS (LR_THREADS / 32)
#define U 4 // positions per warp step

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ q, const u16 *__restrict__ kcache, const u16 *__restrict__ vcache,
          float *__restrict__ out, const int *__restrict__ pos_p, int n_heads, int n_kv, float scale)
{
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    __shared__ float m_s[WARPS], l_s[WARPS], o_s[WARPS][LR_HEAD_DIM];
    const int h = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int kvh = h / (n_heads / n_kv), T = pos_p[0] + 1;
    float qv[EPL], acc[EPL];
#pragma unroll
    for (int e = 0; e < EPL; e++) {
        qv[e] = q[(u64)h * LR_HEAD_DIM + lane + 32 * e] * scale;
        acc[e] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    // U consecutive positions per warp step, their k and v loads issued
    // together: a step costs one load latency instead of U (at short
    // contexts the kernel is that latency chain, not bytes).
    for (int t0 = warp * U; t0 < T; t0 += WARPS * U) {
        float kv[U][EPL], vv[U][EPL], sc[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            const int t = min(t0 + j, T - 1); // past the end: a valid row, weight 0 below
            const u64 base = (u64)t * n_kv * LR_HEAD_DIM + (u64)kvh * LR_HEAD_DIM;
#pragma unroll
            for (int e = 0; e < EPL; e++) {
                kv[j][e] = lr_h2f(kcache[base + lane + 32 * e]);
                vv[j][e] = lr_h2f(vcache[base + lane + 32 * e]);
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
            if (t0 + j < T) mn = fmaxf(mn, sc[j]);
        const float c = __expf(m - mn);
        l *= c;
#pragma unroll
        for (int e = 0; e < EPL; e++) acc[e] *= c;
#pragma unroll
        for (int j = 0; j < U; j++) {
            const float p = t0 + j < T ? __expf(sc[j] - mn) : 0.f;
            l += p;
#pragma unroll
            for (int e = 0; e < EPL; e++) acc[e] += p * vv[j][e];
        }
        m = mn;
    }
    if (lane == 0) m_s[warp] = m, l_s[warp] = l;
#pragma unroll
    for (int e = 0; e < EPL; e++) o_s[warp][lane + 32 * e] = acc[e];
    __syncthreads();
    if (warp == 0) {
        float M = -INFINITY;
        for (int w = 0; w < WARPS; w++) M = fmaxf(M, m_s[w]);
        float L = 0.f, o[EPL];
#pragma unroll
        for (int e = 0; e < EPL; e++) o[e] = 0.f;
        for (int w = 0; w < WARPS; w++) {
            if (m_s[w] == -INFINITY) continue; // a warp that saw no position
            const float c = __expf(m_s[w] - M);
            L += l_s[w] * c;
#pragma unroll
            for (int e = 0; e < EPL; e++) o[e] += o_s[w][lane + 32 * e] * c;
        }
#pragma unroll
        for (int e = 0; e < EPL; e++) out[(u64)h * LR_HEAD_DIM + lane + 32 * e] = o[e] / L;
    }
}
