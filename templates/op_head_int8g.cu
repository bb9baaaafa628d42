// Output head read in place from the int8 table (no transposed copy):
// logits[r] = sum_i (q[r][i] * s + b) * x[i] with per-group (64) f16 scale and
// bias, computed as s * sum(q x) + b * sum(x) per 4 columns. A warp per row
// (or LR_RPW rows). A column step is 512 columns: lane l takes the 4-byte
// words at columns 4l + 128k (k < 4), so its x is 4 float4 loads each of
// which the warp reads as 512 contiguous bytes. Why: with 16 contiguous bytes
// per lane (the first version) a lane's x was 64 contiguous bytes, each
// float4 load a 2 KB span per warp, and Nsight Compute put L1/TEX at 97.6%
// busy, DRAM at 69%, 39% of the sectors excessive (4B head, 92666d5).
// LR_UNROLL column steps' loads go out before any is used (the head ran at
// 66% of its bytes' bound with 1, and 4 measured slower in the 14B engine
// with the first version: 313 against 260 us). int8 -> f32 is a byte permute
// and a subtraction, not I2F (see the loop).
// @spec op_head_int8g threads=256 rpw=2 group=64
// @spec op_head_int8g threads=256 rpw=2 group=64 unroll=4
#include "lr_common.cuh"

#ifndef LR_UNROLL
#define LR_UNROLL 1
#endif
#define WARPS (LR_THREADS / 32)

// One row's column step: its 4 weight words (columns c, c + 128, c + 256,
// c + 384) and their 4 scale/bias pairs.
LR_DEV void ld_step(u32 (&w)[4], u32 (&p)[4], const i8 *q, const u16 *sb)
{
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%8];\n\t"
                 "ld.global.nc.L1::no_allocate.u32 %1, [%8+128];\n\t"
                 "ld.global.nc.L1::no_allocate.u32 %2, [%8+256];\n\t"
                 "ld.global.nc.L1::no_allocate.u32 %3, [%8+384];\n\t"
                 "ld.global.nc.u32 %4, [%9];\n\t"
                 "ld.global.nc.u32 %5, [%9+8];\n\t"
                 "ld.global.nc.u32 %6, [%9+16];\n\t"
                 "ld.global.nc.u32 %7, [%9+24];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(p[0]), "=r"(p[1]), "=r"(p[2]), "=r"(p[3])
                 : "l"(q), "l"(sb));
}

// A step's arithmetic: the 4 x float4 of columns cb + 128k + 4 lane (k < 4)
// against each row's 4 words; words at or past `lim` count nothing (computed
// on a valid column and dropped: a branch here made the compiler sink the
// loads into it).
LR_DEV void dot_step(float (&acc)[LR_RPW], const u32 (&w)[LR_RPW][4], const u32 (&p)[LR_RPW][4], const float *x, int cb,
                     int lim, int hidden, int lane)
{
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int c = cb + 128 * k + 4 * lane;
        const bool in = c < lim;
        const float4 xv = *(const float4 *)(x + min(c, hidden - 4));
        const float xs[4] = { xv.x, xv.y, xv.z, xv.w }, xsum = (xv.x + xv.y) + (xv.z + xv.w);
#pragma unroll
        for (int r = 0; r < LR_RPW; r++) {
            // q + 128 as the low byte of 2^23's mantissa, one byte permute per
            // weight: the float 2^23 + 128 + q, and q exactly after
            // subtracting 2^23 + 128. Why not (float)(i8): I2F issues at a
            // quarter of the FP32 rate (16 per clock per SM on sm_90).
            const u32 wx = w[r][k] ^ 0x80808080u;
            float d = 0.f;
#pragma unroll
            for (int j = 0; j < 4; j++)
                d += (__uint_as_float(__byte_perm(wx, 0x4B000000u, 0x7440u | j)) - 8388736.f) * xs[j];
            const float t = lr_h2f((u16)(p[r][k] & 0xffff)) * d + lr_h2f((u16)(p[r][k] >> 16)) * xsum;
            acc[r] += in ? t : 0.f;
        }
    }
}

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const i8 *__restrict__ q, const u16 *__restrict__ sb, const float *__restrict__ x, float *__restrict__ logits,
          int vocab, int hidden)
{
    // Inputs come from the previous kernel; dependents launch when this
    // grid ends (a big grid's waiting dependents would take its SMs).
    lr_pdl_wait();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * WARPS + warp) * LR_RPW, ng = hidden / LR_GROUP;
    // hidden is a multiple of the group (64), so a lane's 4 columns are all in
    // range or all past it, and in one group; `full` columns make whole steps
    const int full = hidden / 512 * 512;
    float acc[LR_RPW];
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) acc[r] = 0.f;
    // One pass = LR_UNROLL column steps; the next pass's loads are issued
    // before this pass's arithmetic. Why: the compiler places each word's
    // loads after the previous word's arithmetic (one load latency per word
    // when loads and their use share a pass), whatever the source order.
    u32 w[LR_UNROLL][LR_RPW][4], p[LR_UNROLL][LR_RPW][4];
    auto load_pass = [&](int c0) {
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++) {
            const int c = min(c0 + u * 512, full - 512) + 4 * lane; // past the end: the last step, never used
#pragma unroll
            for (int r = 0; r < LR_RPW; r++) {
                const int row = min(row0 + r, vocab - 1);
                ld_step(w[u][r], p[u][r], q + (u64)row * hidden + c, sb + ((u64)row * ng + c / LR_GROUP) * 2);
            }
        }
    };
    if (full) load_pass(0);
    for (int c0 = 0; c0 < full; c0 += 512 * LR_UNROLL) {
        u32 cw[LR_UNROLL][LR_RPW][4], cp[LR_UNROLL][LR_RPW][4];
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++)
#pragma unroll
            for (int r = 0; r < LR_RPW; r++)
#pragma unroll
                for (int k = 0; k < 4; k++) cw[u][r][k] = w[u][r][k], cp[u][r][k] = p[u][r][k];
        load_pass(min(c0 + 512 * LR_UNROLL, full - 512)); // after the last pass: loaded again, never used
        __syncwarp(); // keeps those loads above the arithmetic (ptxas otherwise sinks them below it)
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++) dot_step(acc, cw[u], cp[u], x, c0 + u * 512, full, hidden, lane);
    }
    if (full < hidden) { // the last, partial step: word by word, clamped
        u32 w[LR_RPW][4], p[LR_RPW][4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const int c = min(full + 128 * k + 4 * lane, hidden - 4);
#pragma unroll
            for (int r = 0; r < LR_RPW; r++) {
                const int row = min(row0 + r, vocab - 1);
                w[r][k] = *(const u32 *)(q + (u64)row * hidden + c);
                p[r][k] = *(const u32 *)(sb + ((u64)row * ng + c / LR_GROUP) * 2);
            }
        }
        dot_step(acc, w, p, x, full, hidden, hidden, lane);
    }
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) {
        const float s = lr_warp_sum(acc[r]);
        if (lane == 0 && row0 + r < vocab) logits[row0 + r] = s;
    }
}
