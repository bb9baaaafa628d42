// Greedy sampling on the device: the index of the largest logit (the lowest
// index among ties), written where the next step's embedding reads its token.
// One CTA. Same result as lr_argmax (rt/sampler.c): the first index of the
// largest non-NaN value, 0 when all are NaN; logits 16-byte aligned.
// @spec op_argmax threads=1024
#include "lr_common.cuh"

#define NONE 0x7fffffff

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ logits, int n, int *__restrict__ tok)
{
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    __shared__ float bv[32];
    __shared__ int bi[32];
    float v = -INFINITY;
    int idx = NONE;
    // Each thread's indices ascend (float4 steps, then the tail), so a later
    // equal value never replaces an earlier one; -INFINITY is taken when
    // nothing is yet (all -inf: index 0, as lr_argmax), NaN never.
    const int n4 = n >> 2;
#pragma unroll 4
    for (int i = threadIdx.x; i < n4; i += LR_THREADS) {
        const float4 x = ((const float4 *)logits)[i];
        if (x.x > v || (x.x == v && idx == NONE)) v = x.x, idx = 4 * i;
        if (x.y > v || (x.y == v && idx == NONE)) v = x.y, idx = 4 * i + 1;
        if (x.z > v || (x.z == v && idx == NONE)) v = x.z, idx = 4 * i + 2;
        if (x.w > v || (x.w == v && idx == NONE)) v = x.w, idx = 4 * i + 3;
    }
    for (int i = 4 * n4 + threadIdx.x; i < n; i += LR_THREADS) {
        const float x = logits[i];
        if (x > v || (x == v && idx == NONE)) v = x, idx = i;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, o);
        const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
        if (ov > v || (ov == v && oi < idx)) v = ov, idx = oi;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) bv[warp] = v, bi[warp] = idx;
    __syncthreads();
    if (warp == 0) {
        v = lane < LR_THREADS / 32 ? bv[lane] : -INFINITY;
        idx = lane < LR_THREADS / 32 ? bi[lane] : NONE;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float ov = __shfl_xor_sync(0xffffffffu, v, o);
            const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
            if (ov > v || (ov == v && oi < idx)) v = ov, idx = oi;
        }
        if (lane == 0) tok[0] = idx == NONE ? 0 : idx; // all NaN: 0, as lr_argmax
    }
}
