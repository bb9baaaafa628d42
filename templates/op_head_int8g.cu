// Output head read in place from the int8 table (no transposed copy):
// logits[r] = sum_i (q[r][i] * s + b) * x[i] with per-group (64) f16 scale and
// bias, computed as s * sum(q x) + b * sum(x) per group. A warp per row (or
// LR_RPW rows); each lane loads 16 int8 weights at a time, LR_UNROLL column
// steps' worth before using any (1: the first version; more: more bytes in
// flight; the head runs at 66% of its bytes' bound with 1, and 4 measured
// slower in the 14B engine: 313 against 260 us). The int8 -> f32 conversion is
// a byte permute and a subtraction, not I2F (see the loop; the head took the
// same time either way: 258 us of the 14B step).
// Not kept (5433dfc): lane l taking 4-byte words at columns 4l + 128k so x
// is read coalesced. Nsight Compute on the 4B head put L1/TEX at 97.6% busy
// with this version (39% of sectors excessive, from each lane's 64-byte x
// run); that version halved L1/TEX (46%) but took more instructions per
// weight (issue-bound, 74% SM throughput) and ran slower: 133 against 125 us
// on the 4B head, 261 against 258 us in the 14B step.
// @spec op_head_int8g threads=256 rpw=2 group=64
// @spec op_head_int8g threads=256 rpw=2 group=64 unroll=4
#include "lr_common.cuh"

#ifndef LR_UNROLL
#define LR_UNROLL 1
#endif
#define WARPS (LR_THREADS / 32)

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const i8 *__restrict__ q, const u16 *__restrict__ sb, const float *__restrict__ x, float *__restrict__ logits,
          int vocab, int hidden)
{
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
                // q + 128 as the low byte of 2^23's mantissa, one byte permute
                // per weight: the float 2^23 + 128 + q, and q exactly after
                // subtracting 2^23 + 128. Why not (float)(i8): I2F issues at a
                // quarter of the FP32 rate (16 per clock per SM on sm_90), which
                // bounded this kernel (32 I2F per loop pass of 2 rows x 16
                // weights); the result is the same float, so y is bit-identical.
                const u32 ws[4] = { w[u][r].x ^ 0x80808080u, w[u][r].y ^ 0x80808080u, w[u][r].z ^ 0x80808080u,
                                    w[u][r].w ^ 0x80808080u };
                float d = 0.f;
#pragma unroll
                for (int k = 0; k < 16; k++)
                    d += (__uint_as_float(__byte_perm(ws[k >> 2], 0x4B000000u, 0x7440u | (k & 3))) - 8388736.f) * xs[k];
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
