// Incoherence rotation y = (Q_odd kron H_m) D x, batch rows of N floats
// (docs/rotation.md). Grid (M/S, batch): CTA j writes output columns
// [j*S, (j+1)*S) of each of the K rows (rotate_block.cuh explains the
// split). S == M is the single-CTA plan: the whole vector in shared memory.
// Shared memory: K*S + K*K floats, dynamic (+ 32 for LR_XFORM 1).
// Specialization: LR_N (width; M and K derive from it), LR_S (columns per
// CTA, a power of two in [4, M]), LR_THREADS, LR_UNROLL (16-byte loads in
// flight per thread while gathering, at most the CTAs: kernels/rotation.h), LR_XFORM (the input transform fused
// into the gather, absent = 0):
//   0: the input is x.
//   1: residual add + RMSNorm, the op before q|k|v and gate|up:
//      v = x + add (add may be null), written to xsum (never x: other CTAs
//      of the grid still read x; each element is written by one CTA), and
//      y = Q (v * w) * rsqrt(mean(v^2) + eps). The rotation is linear, so
//      the scalar goes into the row-mix table; every CTA sums v^2 over the
//      whole row itself while gathering (its gather reads every element).
// (SwiGLU before down, fused the same way, measured slower on the H200 than
// op_silu_mul and the plain rotation, and was removed: docs/rotation.md.)
// @spec rotate n=25600 s=64 threads=416 unroll=8
// @spec rotate n=25600 s=64 threads=416 unroll=16
// @spec rotate n=17408 s=1024 threads=1024 unroll=1
// @spec rotate n=17408 s=64 threads=288 unroll=16
// @spec rotate n=17408 s=128 threads=544 unroll=8
// @spec rotate n=32768 s=2048 threads=512 unroll=8
// @spec rotate n=12 s=4 threads=32 unroll=1
// @spec rotate n=5120 s=256 threads=320 unroll=4 xform=1
// @spec rotate n=2560 s=512 threads=640 unroll=1 xform=1
// @spec rotate n=12 s=4 threads=32 unroll=1 xform=1
// @spec rotate n=5120 s=256 threads=320 unroll=4 timeline=1
// @spec rotate n=5120 s=256 threads=320 unroll=4 xform=1 timeline=1
// @spec rotate n=5120 s=256 threads=320 unroll=4 xform=1 trig=1
// @spec rotate n=17408 s=128 threads=544 unroll=8 trig=1
#include "rotate_block.cuh"

// LR_TRIG 1 (experiment, LEECHRT_ROT_TRIG): the kernel after this one (a
// GEMV) may launch only once this CTA's gather is back, not at entry, so its
// CTAs' pre-wait loads do not compete with the gather (the timeline probe
// saw the rotations run 2.1-2.6 us past their wait with them, 4.0 when they
// came in earlier still).
#ifndef LR_TRIG
#define LR_TRIG 0
#endif
#if LR_TRIG
#define LR_ROT_ENTER() lr_pdl_wait()
#define LR_ROT_GATHERED() lr_pdl_launch_dependents()
#else
#define LR_ROT_ENTER() lr_pdl_enter()
#define LR_ROT_GATHERED() ((void)0)
#endif
#define RM (LR_N & -LR_N)
#define RK (LR_N / RM)
#ifndef LR_XFORM
#define LR_XFORM 0
#endif

#if LR_XFORM == 0

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ x, float *__restrict__ y, const u32 *__restrict__ dbits,
          const float *__restrict__ q, int n_, int batch_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    extern __shared__ float4 smem4[];
    float *zs = (float *)smem4, *qs = zs + RK * LR_S;
    for (int i = threadIdx.x; i < RK * RK; i += LR_THREADS) qs[i] = q[i];
    LR_ROT_ENTER(); // q is immutable; x comes from the previous kernel
    x = lr_after_wait(x); // no load of x above the wait (lr_common.cuh)
    const int j = blockIdx.x;
    const u64 row = (u64)blockIdx.y * LR_N;
    lr_rot_gather<RK, RM, LR_S, LR_THREADS, LR_UNROLL>(zs, x + row, dbits, j);
    LR_ROT_GATHERED();
    lr_rot_passes<RK, LR_S, LR_THREADS, 5>(zs);
    __syncthreads();
    lr_rot_mix_out<RK, RM, LR_S, LR_THREADS>(zs, qs, y + row, j);
}

#elif LR_XFORM == 1
#include "engine_ops.cuh"

// v = x + add, v*w into the rotation; v^2 summed by live items, v stored by
// the CTA whose slab index e falls in.
struct lr_rot_src_norm {
    const float *__restrict__ x, *__restrict__ add, *__restrict__ w;
    float *__restrict__ xsum;
    float ss;
    struct raw { float4 x, a, w; };
    __device__ __forceinline__ raw load(int e) const
    {
        raw r;
        r.x = __ldg((const float4 *)(x + e));
        r.a = add ? __ldg((const float4 *)(add + e)) : make_float4(0.f, 0.f, 0.f, 0.f);
        r.w = __ldg((const float4 *)(w + e));
        return r;
    }
    __device__ __forceinline__ float4 value(const raw &r, int e, bool live, bool mine)
    {
        float4 v = r.x;
        if (add) {
            v.x += r.a.x;
            v.y += r.a.y;
            v.z += r.a.z;
            v.w += r.a.w;
        }
        if (live) {
            ss += v.x * v.x;
            ss += v.y * v.y;
            ss += v.z * v.z;
            ss += v.w * v.w;
            if (mine) *(float4 *)(xsum + e) = v;
        }
        return make_float4(v.x * r.w.x, v.y * r.w.y, v.z * r.w.z, v.w * r.w.w);
    }
};

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ x, const float *__restrict__ add, const float *__restrict__ w,
          float *__restrict__ xsum, float *__restrict__ y, const u32 *__restrict__ dbits,
          const float *__restrict__ q, int n_, int batch_, float eps)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    extern __shared__ float4 smem4[];
    float *zs = (float *)smem4, *qs = zs + RK * LR_S, *red = qs + RK * RK;
    for (int i = threadIdx.x; i < RK * RK; i += LR_THREADS) qs[i] = q[i];
    LR_ROT_ENTER(); // q, w are immutable; x and add come from earlier kernels
    x = lr_after_wait(x), add = lr_after_wait(add);
    const int j = blockIdx.x;
    const u64 row = (u64)blockIdx.y * LR_N;
    lr_rot_src_norm src{ x + row, add ? add + row : nullptr, w, xsum + row, 0.f };
    lr_rot_gather_src<RK, RM, LR_S, LR_THREADS, LR_UNROLL>(zs, src, dbits, j);
    LR_ROT_GATHERED();
    const float r = rsqrtf(lr_block_sum(src.ss, red) / LR_N + eps);
    for (int i = threadIdx.x; i < RK * RK; i += LR_THREADS) qs[i] *= r; // the entries this thread loaded
    lr_rot_passes<RK, LR_S, LR_THREADS, 5>(zs);
    __syncthreads();
    lr_rot_mix_out<RK, RM, LR_S, LR_THREADS>(zs, qs, y + row, j);
}

#else
#error "LR_XFORM: 0 (plain) or 1 (add + RMSNorm)"
#endif
