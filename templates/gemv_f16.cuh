// The FP16 GEMV's inner product, shared by the control (gemv_f16.cu) and its
// rotation-prologue variant (gemv_f16_rot.cu): LR_RPW rows (rowc, clamped to
// valid rows) times the activation tile xp = x[t0 .. t0 + tn), a warp's share
// of 16-byte chunks (warp kw of LR_KSPLIT), LR_UNROLL loads per row in flight,
// f32 accumulation. LR_NOWEIGHTS reads no weights (each taken as 1).
#pragma once
#include "lr_common.cuh"

#ifndef LR_NOWEIGHTS
#define LR_NOWEIGHTS 0
#endif
#ifndef LR_KSPLIT
#define LR_KSPLIT 1
#endif
#define VEC ((LR_COLS % 8) == 0)

LR_DEV uint4 load_w(const u16 *W, int row, int col)
{
#if LR_NOWEIGHTS
    return make_uint4(0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u);
#else
    return lr_ld_stream16(W + (u64)row * LR_COLS + col);
#endif
}

LR_DEV void fma8(float &acc, uint4 w, float4 xa, float4 xb)
{
    float a, b;
    lr_h2x2f(w.x, a, b); acc = fmaf(a, xa.x, acc); acc = fmaf(b, xa.y, acc);
    lr_h2x2f(w.y, a, b); acc = fmaf(a, xa.z, acc); acc = fmaf(b, xa.w, acc);
    lr_h2x2f(w.z, a, b); acc = fmaf(a, xb.x, acc); acc = fmaf(b, xb.y, acc);
    lr_h2x2f(w.w, a, b); acc = fmaf(a, xb.z, acc); acc = fmaf(b, xb.w, acc);
}

LR_DEV void f16_dot_tile(float (&acc)[LR_RPW], const u16 *W, const int (&rowc)[LR_RPW], const float *xp, int t0, int tn,
                         int kw, int lane)
{
    if (VEC) {
        const int nch = tn / 8, step = 32 * LR_KSPLIT;
        int ch = kw * 32 + lane;
        for (; ch + step * (LR_UNROLL - 1) < nch; ch += step * LR_UNROLL) {
            uint4 w[LR_RPW][LR_UNROLL];
#pragma unroll
            for (int r = 0; r < LR_RPW; r++)
#pragma unroll
                for (int u = 0; u < LR_UNROLL; u++) w[r][u] = load_w(W, rowc[r], t0 + (ch + step * u) * 8);
#pragma unroll
            for (int u = 0; u < LR_UNROLL; u++) {
                const float4 xa = *(const float4 *)&xp[(ch + step * u) * 8];
                const float4 xb = *(const float4 *)&xp[(ch + step * u) * 8 + 4];
#pragma unroll
                for (int r = 0; r < LR_RPW; r++) fma8(acc[r], w[r][u], xa, xb);
            }
        }
        for (; ch < nch; ch += step) {
            const float4 xa = *(const float4 *)&xp[ch * 8];
            const float4 xb = *(const float4 *)&xp[ch * 8 + 4];
#pragma unroll
            for (int r = 0; r < LR_RPW; r++) fma8(acc[r], load_w(W, rowc[r], t0 + ch * 8), xa, xb);
        }
    } else {
        for (int c = kw * 32 + lane; c < tn; c += 32 * LR_KSPLIT)
#pragma unroll
            for (int r = 0; r < LR_RPW; r++) {
#if LR_NOWEIGHTS
                float w = 1.f;
#else
                float w = lr_h2f(W[(u64)rowc[r] * LR_COLS + t0 + c]);
#endif
                acc[r] = fmaf(w, xp[c], acc[r]);
            }
    }
}
