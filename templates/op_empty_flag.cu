// The launch floor with a flag handoff (rt/engine_gpu.c
// lr_engine_gpu_graph_floor_flag_us): the same stand-in as op_empty_pdl, but
// a CTA waits for its predecessors by a counter in memory instead of
// griddepcontrol.wait: thread 0 polls until `target` CTAs (every CTA of the
// launches before this one) have counted themselves, then the CTA counts
// itself (release) and only then waits for the previous grid's end (so a
// grid's end still implies its predecessors' end, as in the PDL chain).
// This is what a persistent kernel or a flag-chained step would pay per
// handoff, measured against what the PDL chain pays (op_empty_pdl).
// A poll that outlasts ~2^22 rounds (seconds) sets bit 0 of the word after
// the counter and goes on: a broken target shows as a flag, not a hang.
// @spec op_empty_flag threads=1024
#include "lr_common.cuh"

extern "C" __global__ void __launch_bounds__(1024) LR_KERNEL(u32 *ctr, u32 target)
{
    LR_TL_SCOPE();
    lr_pdl_launch_dependents();
    if (threadIdx.x == 0) {
        u32 v, ns = 8;
        for (u32 round = 0;; round++) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(ctr) : "memory");
            if (v >= target) break;
            if (round == (1u << 22)) { // (a broken target: say so and go on)
                atomicOr(ctr + 1, 1u);
                break;
            }
            __nanosleep(ns);
            if (ns < 64) ns *= 2;
        }
    }
    __syncthreads();
    // (no work: the CTA's writes would be ordered before the count by the
    // barrier and thread 0's release)
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(ctr) : "memory");
    lr_pdl_wait();
}
