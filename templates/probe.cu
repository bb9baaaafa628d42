// Read-bandwidth probe: a read-only reduction over a large buffer, so every
// benchmark can state its % of the DRAM read bound measured in the same
// process (nblocks_/threads_ mirror the launch for the host reference). Each block writes the wrapping u32 sum of the words it read, which
// the host reference reproduces exactly (the result does not depend on order).
// Specialization: LR_THREADS, LR_UNROLL, LR_RANGES (1: block b reads the
// contiguous words [b n16 / B, (b + 1) n16 / B), its threads side by side,
// as the balanced split deals a matrix out to one CTA per SM; 0: the grid
// strides over the whole buffer).
// @spec probe threads=256 unroll=8
// @spec probe threads=768 unroll=8 ranges=1
#include "lr_common.cuh"

#ifndef LR_RANGES
#define LR_RANGES 0
#endif

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const uint4 *__restrict__ buf, u64 n16, u32 *__restrict__ out, u32 nblocks_, u32 threads_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
#if LR_RANGES
    const u64 stride = LR_THREADS, end = (u64)(blockIdx.x + 1) * n16 / gridDim.x;
    u64 i = (u64)blockIdx.x * n16 / gridDim.x + threadIdx.x;
#else
    const u64 stride = (u64)gridDim.x * LR_THREADS, end = n16;
    u64 i = (u64)blockIdx.x * LR_THREADS + threadIdx.x;
#endif
    u32 acc = 0;
    for (; i + (LR_UNROLL - 1) * stride < end; i += LR_UNROLL * stride) {
        uint4 v[LR_UNROLL];
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++) v[u] = lr_ld_stream16(buf + i + u * stride);
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    for (; i < end; i += stride) {
        uint4 v = lr_ld_stream16(buf + i);
        acc += v.x + v.y + v.z + v.w;
    }
    acc = lr_warp_sum_u32(acc);
    __shared__ u32 part[LR_THREADS / 32];
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 s = 0;
        for (int w = 0; w < LR_THREADS / 32; w++) s += part[w];
        out[blockIdx.x] = s;
    }
}
