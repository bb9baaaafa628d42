// (The engine's default head is op_head_int8g_mma.cu on tensor cores since the
// thirteenth session; this scalar one stays for LEECHRT_HEAD_MMA=0.)
// Output head read in place from the int8 table (no transposed copy):
// logits[r] = sum_i (q[r][i] * s + b) * x[i] with per-group (64) f16 scale and
// bias, computed as s * sum(q x) + b * sum(x) per group. A warp per row (or
// LR_RPW rows); each lane loads 16 int8 weights at a time, LR_UNROLL column
// steps' worth before using any (1: the first version; more: more bytes in
// flight; the head runs at 66% of its bytes' bound with 1, and 4 measured
// slower in the 14B engine: 313 against 260 us).
// Tried and not kept (measured in the 14B engine; read this before trying
// them again): int8 -> f32 by PRMT + FADD instead of I2F, three times (twice
// in earlier sessions, h200_engine_variants.csv, and 92666d5: 258 against
// 258 us);
// 4 / 8 / 16 rows per warp (254 / 270 / 313 against 258, twice); lane l
// taking the 4-byte words at columns 4l + 128k so x is read coalesced
// (5433dfc: Nsight Compute's L1/TEX busy 97.6% -> 46%, but issue-bound and
// slower, 133 against 125 us on the 4B head, 261 against 258 us at 14B;
// bench/results/h200_ncu_head_o.csv).
// @spec op_head_int8g threads=256 rpw=2 group=64
// @spec op_head_int8g threads=256 rpw=2 group=64 unroll=4
// @spec op_head_int8g threads=256 rpw=2 group=64 timeline=1
#include "lr_common.cuh"

#ifndef LR_UNROLL
#define LR_UNROLL 1
#endif
#define WARPS (LR_THREADS / 32)

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const i8 *__restrict__ q, const u16 *__restrict__ sb, const float *__restrict__ x, float *__restrict__ logits,
          int vocab, int hidden)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    // Inputs come from the previous kernel; dependents launch when this
    // grid ends (a big grid's waiting dependents would take its SMs).
    lr_pdl_wait();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * WARPS + warp) * LR_RPW, ng = hidden / LR_GROUP;
    float acc[LR_RPW];
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) acc[r] = 0.f;
    // LR_UNROLL column steps per pass: their weight and scale loads all go out
    // before any is used (LR_UNROLL x LR_RPW x 16 bytes in flight per lane).
    for (int c0 = lane * 16; c0 < hidden; c0 += 32 * 16 * LR_UNROLL) {
        uint4 w[LR_UNROLL][LR_RPW];
        u32 p[LR_UNROLL][LR_RPW];
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++) {
            const int c = min(c0 + u * 32 * 16, hidden - 16); // past the end: a valid column, never used
#pragma unroll
            for (int r = 0; r < LR_RPW; r++) {
                const int row = min(row0 + r, vocab - 1);
                w[u][r] = lr_ld_stream16(q + (u64)row * hidden + c);
                p[u][r] = *(const u32 *)(sb + ((u64)row * ng + c / LR_GROUP) * 2);
            }
        }
#pragma unroll
        for (int u = 0; u < LR_UNROLL; u++) {
            const int c = c0 + u * 32 * 16;
            if (c >= hidden) break;
            const float4 *xp = (const float4 *)(x + c);
            const float4 x0 = xp[0], x1 = xp[1], x2 = xp[2], x3 = xp[3];
            const float xs[16] = { x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w,
                                   x2.x, x2.y, x2.z, x2.w, x3.x, x3.y, x3.z, x3.w };
            float xsum = 0.f;
#pragma unroll
            for (int k = 0; k < 16; k++) xsum += xs[k];
#pragma unroll
            for (int r = 0; r < LR_RPW; r++) {
                const u32 ws[4] = { w[u][r].x, w[u][r].y, w[u][r].z, w[u][r].w };
                float d = 0.f;
#pragma unroll
                for (int k = 0; k < 16; k++) d += (float)(i8)(ws[k >> 2] >> (8 * (k & 3))) * xs[k];
                acc[r] += lr_h2f((u16)(p[u][r] & 0xffff)) * d + lr_h2f((u16)(p[u][r] >> 16)) * xsum;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < LR_RPW; r++) {
        const float s = lr_warp_sum(acc[r]);
        if (lane == 0 && row0 + r < vocab) logits[row0 + r] = s;
    }
}
