// Greedy sampling on the device: the index of the largest logit (the lowest
// index among ties), written where the next step's embedding reads its token.
// One CTA.
// @spec op_argmax threads=1024
#include "lr_common.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ logits, int n, int *__restrict__ tok)
{
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    __shared__ float bv[32];
    __shared__ int bi[32];
    float v = -INFINITY;
    int idx = 0x7fffffff;
    for (int i = threadIdx.x; i < n; i += LR_THREADS) {
        const float x = logits[i];
        if (x > v) v = x, idx = i; // strided ascending: first max kept per thread
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
        idx = lane < LR_THREADS / 32 ? bi[lane] : 0x7fffffff;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float ov = __shfl_xor_sync(0xffffffffu, v, o);
            const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
            if (ov > v || (ov == v && oi < idx)) v = ov, idx = oi;
        }
        if (lane == 0) tok[0] = idx;
    }
}
