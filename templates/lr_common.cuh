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
// exp36 LR_WEV: the weights marked evict-first in L2 too, so the small data
// read every token (tables, row scales, KV cache) stays there. 1: .cs
// (LDG.E.EF, no extra instruction); 2: an L2 cache-policy descriptor
// (createpolicy evict_first) on the L1::no_allocate load.
#ifndef LR_WEV
#define LR_WEV 0
#endif
LR_DEV uint4 lr_ld_stream16(const void *p)
{
    uint4 v;
#if LR_WEV == 1
    asm volatile("ld.global.cs.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#elif LR_WEV == 2
    u64 pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
#else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#endif
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
LR_DEV void lr_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
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
