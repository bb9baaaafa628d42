// Weights into L2 ahead of the GEMV that reads them, from a side branch of
// the step's graph (rt/engine_gpu.c, LEECHRT_L2PF): the branch forks after a
// GEMV, so this kernel runs beside the small ops that follow it (RoPE +
// attention, the rotation), while the DRAM would otherwise idle; the next
// GEMV then finds its first bytes in L2. It reads and writes nothing itself:
// a prefetch is only a hint, so the step's results do not depend on it.
// Bytes [base, base + total) are nparts equal parts (the GEMV's CTAs, each of
// which walks its own contiguous share from its start); warp p takes part p
// and prefetches its first part_bytes (all of it when part_bytes >= the
// part), 4 KB per instruction, lanes taking turns. On sm_90 one
// cp.async.bulk.prefetch.L2 covers 4 KB; elsewhere a prefetch.global.L2 per
// 128-byte line. No PDL wait: the weights are immutable, and the branch
// starts only once the GEMV it forks after has finished.
// @spec op_l2_prefetch threads=128
#include "lr_common.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const u8 *__restrict__ base, u64 total, unsigned nparts, u64 part_bytes)
{
    const unsigned p = blockIdx.x * (LR_THREADS / 32) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (p >= nparts) return;
    // 16-byte aligned bounds (the bulk prefetch's unit), inside [0, total)
    const u64 b0 = ((u64)p * total / nparts) & ~15ull;
    const u64 b1 = p + 1 == nparts ? total : (((u64)(p + 1) * total / nparts) & ~15ull);
    const u64 end = min(b1, b0 + part_bytes);
    for (u64 o = b0 + (u64)lane * 4096; o < end; o += 32 * 4096) {
        const u64 n = min((u64)4096, end - o);
#if __CUDA_ARCH__ >= 900
        const unsigned n16 = (unsigned)(n & ~15ull);
        if (n16)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(base + o), "r"(n16) : "memory");
#else
        for (u64 k = 0; k < n; k += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(base + o + k) : "memory");
#endif
    }
}
