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
