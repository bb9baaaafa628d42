// Shared by every leechrt template: fixed-width types, fp16/bf16 through bit
// operations and PTX (no toolkit headers, so NVRTC compiles fast and the
// same on every version), warp reductions, read-only loads.
#pragma once

typedef unsigned char u8;
typedef signed char i8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

#define LR_DEV static __device__ __forceinline__
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

LR_DEV float lr_h2f(u16 h)
{
    float f;
    asm("{ .reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "h"(h));
    return f;
}

LR_DEV u16 lr_f2h(float f)
{
    u16 h;
    asm("{ .reg .b16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t; }" : "=h"(h) : "f"(f));
    return h;
}

LR_DEV float lr_bf2f(u16 b) { return __uint_as_float((u32)b << 16); }

// Two halves packed in a u32 -> two floats.
LR_DEV void lr_h2x2f(u32 v, float &lo, float &hi)
{
    lo = lr_h2f((u16)(v & 0xffff));
    hi = lr_h2f((u16)(v >> 16));
}

LR_DEV float lr_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

LR_DEV u32 lr_warp_sum_u32(u32 v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// 16-byte streaming load through the read-only path, not kept in L1: weights
// are read once per token.
LR_DEV uint4 lr_ld_stream16(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

LR_DEV u32 lr_ld_stream4(const void *p)
{
    u32 v;
    asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// Programmatic dependent launch (sm_90+). A kernel launched with the
// programmatic-serialization attribute may start while its predecessor in the
// stream still runs. lr_pdl_wait() returns once every predecessor grid has
// finished and its writes are visible; so every kernel calls it before it
// reads anything an earlier kernel writes, and writes nothing before it
// (only immutable data, weights and tables, may be read before it).
// lr_pdl_launch_dependents() lets the next kernel start its own prologue.
// Both are no-ops below sm_90 and for kernels launched normally.
// The timeline probe (spec `timeline=1`, rt/timeline.h; never in the
// kernels the engine runs normally, where LR_TL_SCOPE is empty): thread 0 of
// each CTA notes the global timer at entry, after the PDL wait and at its
// exit, and appends one record (4 u64; rt/timeline.h's lr_tl_unpack reads
// it) to the buffer the host puts in lr_tl. The entry and wait times wait in shared
// memory, not registers, so the main loops compile as without the probe
// (taking the slot at entry instead kept it in a register: +8 instructions
// in a GEMV's loop, and the step no faster, 3057 against 3037-3047 us on
// 14B). Thread 0's exit stands for the CTA's. The probe's step runs ~7%
// longer than the real one (~0.6 us per launch): read its times as the
// shape of the chain, not as the real durations.
#ifdef LR_TIMELINE
struct lr_tl_cfg {
    u32 *count;   // records appended so far (may pass cap: the rest are dropped)
    u64 *recs;    // 4 u64 per record
    u32 cap, mod; // capacity; this module's id (the host's twin table)
};
__constant__ lr_tl_cfg lr_tl; // (constant: cached, no round trip at entry after the first)
LR_DEV u64 lr_tl_now()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
LR_DEV u64 *lr_tl_slots()
{
    __shared__ u64 s[2]; // entry, after the wait (0: no wait)
    return s;
}
LR_DEV bool lr_tl_thread0() { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }
struct lr_tl_scope {
    __device__ lr_tl_scope()
    {
        if (lr_tl_thread0()) lr_tl_slots()[0] = lr_tl_now(), lr_tl_slots()[1] = 0;
    }
    __device__ ~lr_tl_scope()
    {
        if (!lr_tl_thread0() || !lr_tl.recs) return;
        u32 smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const u64 t2 = lr_tl_now(), t0 = lr_tl_slots()[0], t1 = lr_tl_slots()[1];
        const u32 i = atomicAdd(lr_tl.count, 1u);
        if (i >= lr_tl.cap) return;
        u64 *r = lr_tl.recs + 4 * (u64)i;
        r[0] = t0;
        r[1] = (u64)(u32)(t1 ? t1 - t0 : 0xffffffffull) | (u64)(u32)(t2 - t0) << 32;
        r[2] = (u64)lr_tl.mod | (u64)smid << 32;
        r[3] = (u64)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) |
               (u64)(gridDim.x * gridDim.y * gridDim.z) << 32;
    }
};
#define LR_TL_SCOPE() lr_tl_scope lr_tl_scope_
#define LR_TL_WAITED()                                                                             \
    do {                                                                                           \
        if (lr_tl_thread0() && !lr_tl_slots()[1]) lr_tl_slots()[1] = lr_tl_now();                  \
    } while (0)
#else
#define LR_TL_SCOPE() ((void)0)
#define LR_TL_WAITED() ((void)0)
#endif

LR_DEV void lr_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    LR_TL_WAITED();
}

LR_DEV void lr_pdl_launch_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Both, for kernels with nothing to do before their inputs are ready.
LR_DEV void lr_pdl_enter()
{
    lr_pdl_launch_dependents();
    lr_pdl_wait();
}

// p, as a value the compiler cannot know before this point. A kernel that
// loads anything before lr_pdl_wait reads what an earlier kernel wrote
// through lr_after_wait(p) called after the wait: the wait's "memory"
// clobber does not stop NVVM from hoisting a load through a
// const __restrict__ pointer above it (seen in the SASS of Planes14S with
// its first loads before the wait, 5693b47: one x load ahead of ACQBULK,
// a stale x in the engine's 4B down GEMV, layer 0 off by 0.30). The asm is
// on the pointer itself: an opaque zero offset added to it instead was
// folded by ptxas, which then hoisted x loads above ACQBULK again
// (tools/sass_count --pdl-check caught it). The cost: the compiler no
// longer knows p is global, so its loads are generic (LD.E, not LDG).
template <class T> LR_DEV T *lr_after_wait(T *p)
{
    asm volatile("mov.b64 %0, %0;" : "+l"(p));
#if defined(LR_AWG) && LR_AWG
    __builtin_assume(__isGlobal(p)); // global again: LDG, not generic LD
#endif
    return p;
}

// A shared-memory pointer as the 32-bit address cp.async takes.
LR_DEV u32 lr_smem_u32(const void *p)
{
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// Warms L2 with a line of immutable data (weights) before lr_pdl_wait.
LR_DEV void lr_prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
// n bytes (a multiple of 16, 16-byte aligned) into L2: one bulk prefetch on
// sm_90, a line at a time before it.
LR_DEV void lr_prefetch_l2_range(const void *p, unsigned n)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
#else
    for (unsigned i = 0; i < n; i += 128) lr_prefetch_l2((const char *)p + i);
#endif
}
// N bytes (a multiple of 128, 16-byte aligned) into L2: one bulk prefetch on
// sm_90, a line at a time before it.
template <int N> LR_DEV void lr_prefetch_l2_bytes(const void *p)
{
    static_assert(N % 128 == 0, "lr_prefetch_l2_bytes: whole lines");
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "n"(N) : "memory");
#else
#pragma unroll
    for (int i = 0; i < N; i += 128) lr_prefetch_l2((const char *)p + i);
#endif
}
