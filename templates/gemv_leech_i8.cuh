// x quantization shared by the I8x GEMV (templates/gemv_leech_i8.cu) and the
// stand-alone x quantizer (templates/gemv_leech_i8_xq.cu): per super-chunk of
// 192 columns a power-of-two scale and the 64-byte int8 digit record of each
// block (hi digits k 0..31 then lo digits, 8 bytes per lane quad q: k
// 4q..4q+3 and 16+4q..16+4q+3; k 24..31 zero). Needs LR_COLS.
#pragma once
#include "lr_common.cuh"

#define NBLK (LR_COLS / 24)
#define SC ((NBLK + 7) / 8)
#define XR 32639 // 127 * 256 + 127

LR_DEV u32 lr_i8_prmt(u32 a, u32 b, u32 sel)
{
    u32 d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

LR_DEV float lr_i8_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// x's scale for a super-chunk with max |x| = m: the power of two 2^k with
// m 2^k in (16319, 32639] (k in [-126, 126]; m = 0: scale 0), so scaling is
// exact and needs no division; the host mirrors it bit for bit.
LR_DEV int lr_i8_x_exp(float m)
{
    const int e = ((__float_as_int(m) >> 23) & 255) - 127;
    int k = min(max(14 - e, -126), 126);
    if (__fmul_rn(m, __int_as_float((k + 127) << 23)) > (float)XR) k--;
    return k;
}

// Quantizes super-chunk sc of x into shared memory (one warp): 48 groups of
// 4 columns, lanes < 24 take two. x must be 16-byte aligned. The int8 digits
// of xi are bytes: lo = byte 0 of xi (xi - 256 hi, in [-128, 127]), hi =
// byte 1 of xi + 128.
LR_DEV void lr_i8_prep_x(const float *__restrict__ x, u8 *xd, float *xsc, int sc, int lane)
{
    float4 v[2];
    float m = 0.f;
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const int c = sc * 192 + 4 * (lane + 24 * t);
        v[t] = lane < 24 && c < NBLK * 24 ? *(const float4 *)(x + c) : make_float4(0.f, 0.f, 0.f, 0.f);
        m = fmaxf(m, fmaxf(fmaxf(fabsf(v[t].x), fabsf(v[t].y)), fmaxf(fabsf(v[t].z), fabsf(v[t].w))));
    }
    m = lr_i8_warp_max(m);
    const int k = lr_i8_x_exp(m);
    const float inv = m > 0.f ? __int_as_float((k + 127) << 23) : 0.f;
    if (lane == 0) xsc[sc] = m > 0.f ? __int_as_float((127 - k) << 23) : 0.f;
    u8 *base = xd + sc * 8 * 64;
    if (lane < 24)
#pragma unroll
        for (int t = 0; t < 2; t++) {
            const int grp = lane + 24 * t, b = grp / 6, p = grp % 6; // block, 4-column group in it
            const int x0 = __float2int_rn(__fmul_rn(v[t].x, inv)), x1 = __float2int_rn(__fmul_rn(v[t].y, inv));
            const int x2 = __float2int_rn(__fmul_rn(v[t].z, inv)), x3 = __float2int_rn(__fmul_rn(v[t].w, inv));
            const u32 lo = lr_i8_prmt(lr_i8_prmt(x0, x1, 0x0040u), lr_i8_prmt(x2, x3, 0x0040u), 0x5410u);
            const u32 hi = lr_i8_prmt(lr_i8_prmt(x0 + 128, x1 + 128, 0x0051u), lr_i8_prmt(x2 + 128, x3 + 128, 0x0051u), 0x5410u);
            u8 *o = base + b * 64 + 8 * (p & 3) + 4 * (p >> 2);
            *(u32 *)o = hi;
            *(u32 *)(o + 32) = lo;
        }
    // k 24..31 (q = 2, 3, second word) are zero in both digits
    const int b = lane >> 2, d = (lane >> 1) & 1, qq = 2 + (lane & 1);
    *(u32 *)(base + b * 64 + d * 32 + 8 * qq + 4) = 0u;
}

