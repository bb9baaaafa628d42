// Greedy sampling on the device: the index of the largest logit, the lowest
// index among ties, NaN never (lr_argmax's contract, rt/sampler.c), folded
// into a 64-bit slot by atomicMax of the key
//   (order-preserving bits of the value) << 32 | ~index,
// so the largest value wins and, among equal values, the lowest index;
// max is order-free, so the result does not depend on which CTA comes first.
// The slot starts at 0, below every key (the engine's copy-in zeroes it);
// 0 afterwards means every logit was NaN (token 0, as lr_argmax).
// One float4 per thread: a grid of n / (4 * threads) CTAs reads the 608 KB
// of a 152K vocab in one round trip (one CTA looping took 15 us of the 14B
// step, bench_engine at 8ab327f). logits 16-byte aligned.
// @spec op_argmax threads=256
// @spec op_argmax threads=256 timeline=1
#include "lr_common.cuh"

LR_DEV u64 argmax_key(float x, int i)
{
    if (x != x) return 0ull; // NaN: never chosen
    const u32 b = x == 0.f ? 0u : __float_as_uint(x); // -0 == +0, as the host compares
    const u32 ord = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return ((u64)ord << 32) | (u32)~(u32)i;
}

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ logits, int n, u64 *__restrict__ best)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    __shared__ u64 red[LR_THREADS / 32];
    const int i4 = blockIdx.x * LR_THREADS + threadIdx.x, i = 4 * i4;
    u64 k = 0ull;
    if (i + 3 < n) {
        const float4 x = ((const float4 *)logits)[i4];
        k = max(max(argmax_key(x.x, i), argmax_key(x.y, i + 1)), max(argmax_key(x.z, i + 2), argmax_key(x.w, i + 3)));
    } else {
        for (int j = i; j < n; j++) k = max(k, argmax_key(logits[j], j));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) k = max(k, __shfl_xor_sync(0xffffffffu, k, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) red[warp] = k;
    __syncthreads();
    if (warp == 0) {
        k = lane < LR_THREADS / 32 ? red[lane] : 0ull;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) k = max(k, __shfl_xor_sync(0xffffffffu, k, o));
        if (lane == 0 && k) atomicMax((unsigned long long *)best, (unsigned long long)k);
    }
}
