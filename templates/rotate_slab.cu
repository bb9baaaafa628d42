// Incoherence rotation y = (Q_odd kron H_m) D x, batch rows of N floats
// (docs/rotation.md). Grid (M/S, batch): CTA j writes output columns
// [j*S, (j+1)*S) of each of the K rows (rotate_block.cuh explains the
// split). S == M is the single-CTA plan: the whole vector in shared memory.
// Shared memory: K*S + K*K floats, dynamic.
// Specialization: LR_N (width; M and K derive from it), LR_S (columns per
// CTA, a power of two in [4, M]), LR_THREADS, LR_UNROLL (16-byte loads in
// flight per thread while gathering).
// @spec rotate n=25600 s=64 threads=416 unroll=8
// @spec rotate n=17408 s=1024 threads=1024 unroll=1
// @spec rotate n=32768 s=2048 threads=512 unroll=8
// @spec rotate n=12 s=4 threads=32 unroll=1
#include "rotate_block.cuh"

#define RM (LR_N & -LR_N)
#define RK (LR_N / RM)

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ x, float *__restrict__ y, const u32 *__restrict__ dbits,
          const float *__restrict__ q, int n_, int batch_)
{
    extern __shared__ float4 smem4[];
    float *zs = (float *)smem4, *qs = zs + RK * LR_S;
    for (int i = threadIdx.x; i < RK * RK; i += LR_THREADS) qs[i] = q[i];
    lr_pdl_enter(); // q is immutable; x comes from the previous kernel
    const int j = blockIdx.x;
    const u64 row = (u64)blockIdx.y * LR_N;
    lr_rot_gather<RK, RM, LR_S, LR_THREADS, LR_UNROLL>(zs, x + row, dbits, j);
    lr_rot_passes<RK, LR_S, LR_THREADS, 5>(zs);
    __syncthreads();
    lr_rot_mix_out<RK, RM, LR_S, LR_THREADS>(zs, qs, y + row, j);
}
