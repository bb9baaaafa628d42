// Output head on tensor cores, read in place from the int8 table (no copy):
// logits[r] = sum_G (s_rG sum_{i in G} q[r][i] f16(x_i) + b_rG sum_{i in G} x_i)
// over groups G of 64 columns with their f16 scale s and bias b. Why: the
// scalar head (op_head_int8g.cu) reads 64 bytes of f32 x per 16 weight bytes
// of a row pair through L1 (Nsight Compute: L1/TEX 97.6% busy, 66-69% of its
// bytes' bound); here a warp takes 16 rows and x enters as the mma's B
// fragment, 32 bytes of f16 per lane per 512 columns, 1/8 of the weights'.
// A CTA takes 16 rows; its warps split the groups (warp w: groups
// [w GPW, (w + 1) GPW), GPW = ceil(NG / warps)) in chunks of up to 8 and add
// their partial rows through shared memory in warp order (the same logits
// every run). Why so small a unit: with whole rows per warp (80 KB at 14B)
// the last of ~4.5 units per warp set the kernel's end (246 us against the
// scalar head's 258 in the 14B engine at 1239509). Lane (g, q) loads 16 bytes of rows g and g + 8 at
// columns 64 G + 16 q of each group G: the mma's k order inside a k-tile is
// free as long as A and B agree, so k-tile t of group n is lane q's bytes
// 4t .. 4t + 3 (A: a0/a2 = row g's two half2, a1/a3 = row g + 8's) and B's
// k slots hold the same columns of x. int8 -> f16 exactly: q ^ 0x80 under
// exponent byte 0x64 is 1152 + q (PRMT), minus 1152 (HADD2). B column n is
// the chunk's group n: lanes with g == n supply x (their own 16 columns of
// it, read from global memory and rounded to f16; their f32 sum, over the
// quad, is the group's bias factor), the others zero, so C[row][n] is the
// row's unscaled dot over group n, and lane (g, q) scales its groups 2q,
// 2q + 1 of rows g, g + 8 once per chunk.
// LR_RB row blocks of 16 per CTA (default 1): a warp's x fragment and group
// sums of a chunk serve all of them.
// Specialization: LR_THREADS (whole warps; 8 the default, one per 512-column
// chunk where all of a warp's groups are in flight at once: kernels/ops.h
// lr_op_head_warps), LR_HIDDEN (columns, a multiple of 64), LR_RB.
// @spec op_head_int8g_mma threads=256 hidden=5120
// @spec op_head_int8g_mma threads=320 hidden=5120
// @spec op_head_int8g_mma threads=160 hidden=2560
// @spec op_head_int8g_mma threads=256 hidden=2624 rb=2
// @spec op_head_int8g_mma threads=256 hidden=192 rb=3
#include "gemv_leech.cuh"

#define NG (LR_HIDDEN / 64)
#ifndef LR_RB
#define LR_RB 1
#endif
#define WARPS (LR_THREADS / 32)
#define GPW ((NG + WARPS - 1) / WARPS) // groups per warp
#define NCW ((GPW + 7) / 8)            // chunks per warp
#if LR_HIDDEN % 64 || LR_THREADS % 32 || LR_THREADS > 1024
#error "op_head_int8g_mma: hidden a multiple of 64, whole warps"
#endif

// Four int8 weights (one word) as two half2 of the exact values.
LR_DEV void i8x4_to_h2(u32 w, u32 &lo, u32 &hi)
{
    const u32 u = w ^ 0x80808080u, m = 0x64646464u, off = 0x64806480u; // half2(1152, 1152)
    lo = lr_prmt(u, m, 0x5140u), hi = lr_prmt(u, m, 0x5342u);
    asm("sub.rn.f16x2 %0, %0, %1;" : "+r"(lo) : "r"(off));
    asm("sub.rn.f16x2 %0, %0, %1;" : "+r"(hi) : "r"(off));
}

LR_DEV u32 word(const uint4 &v, int t) { return t == 0 ? v.x : t == 1 ? v.y : t == 2 ? v.z : v.w; }

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const i8 *__restrict__ q, const u16 *__restrict__ sb, const float *__restrict__ x, float *__restrict__ logits,
          int vocab, int hidden_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    __shared__ float part[WARPS][16 * LR_RB];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, qd = lane & 3;
    const int row0 = blockIdx.x * 16 * LR_RB;
    // this warp's groups [G0, G0 + ng)
    const int G0 = warp * GPW, ng = min(GPW, NG - G0);
    uint4 w[2][8];
    u32 s[2][2];
    // chunk j's weights (groups G0 + 8j + n) and scale pairs (its groups
    // 2qd, 2qd + 1) of row block b: rows g and g + 8 of it (past the end: the
    // last row, never stored)
    auto load = [&](int j, int b) {
        const int r0 = min(row0 + 16 * b + g, vocab - 1), r1 = min(row0 + 16 * b + g + 8, vocab - 1);
        const i8 *wr[2] = { q + (u64)r0 * LR_HIDDEN, q + (u64)r1 * LR_HIDDEN };
        const u16 *sr[2] = { sb + (u64)r0 * NG * 2, sb + (u64)r1 * NG * 2 };
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
            for (int n = 0; n < 8; n++) {
                const int G = G0 + 8 * j + n;
                w[h][n] = 8 * j + n < ng ? lr_ld_stream16(wr[h] + 64 * G + 16 * qd) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int k = 0; k < 2; k++) {
                const int G = G0 + 8 * j + 2 * qd + k;
                s[h][k] = 8 * j + 2 * qd + k < ng ? *(const u32 *)(sr[h] + 2 * G) : 0u;
            }
        }
    };
    // The weights are immutable, so the first chunk could be in flight before
    // the wait; in the SASS it is not: ptxas schedules the wait (which depends
    // on nothing) at the kernel's top. Keeping the loads above it (branch
    // headpre, d847e34) measured slower on the H100 SXM (docs/engine.md).
    load(0, 0);
    lr_pdl_wait(); // x comes from the previous kernel
    float acc[LR_RB][2] = {};
    for (int j = 0; j < NCW; j++) {
        // B: this lane's 16 columns of the chunk's group g, as f16; their f32
        // sum over the quad is group g's sum, which lanes (2qd, *) and
        // (2qd + 1, *) hand to lane (g, qd) for its two groups
        u32 xb[8];
        float xs = 0.f;
        if (8 * j + g < ng) {
            const float4 *xp = (const float4 *)(x + 64 * (G0 + 8 * j + g) + 16 * qd);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const float4 v = xp[k];
                xb[2 * k] = lr_pack_h2(v.x, v.y), xb[2 * k + 1] = lr_pack_h2(v.z, v.w);
                xs += (v.x + v.y) + (v.z + v.w);
            }
        } else {
#pragma unroll
            for (int k = 0; k < 8; k++) xb[k] = 0u;
        }
        xs += __shfl_xor_sync(0xffffffffu, xs, 1);
        xs += __shfl_xor_sync(0xffffffffu, xs, 2);
        const float X0 = __shfl_sync(0xffffffffu, xs, 8 * qd), X1 = __shfl_sync(0xffffffffu, xs, 8 * qd + 4);
#pragma unroll
        for (int b = 0; b < LR_RB; b++) {
            float d[4] = { 0.f, 0.f, 0.f, 0.f };
#pragma unroll
            for (int n = 0; n < 8; n++) {
                if (8 * j + n >= ng) break; // the warp's last chunk may be partial (warp-uniform)
                const bool mine = g == n;
#pragma unroll
                for (int t = 0; t < 4; t++) {
                    u32 a0, a1, a2, a3;
                    i8x4_to_h2(word(w[0][n], t), a0, a2);
                    i8x4_to_h2(word(w[1][n], t), a1, a3);
                    lr_mma16816(d, a0, a1, a2, a3, mine ? xb[2 * t] : 0u, mine ? xb[2 * t + 1] : 0u);
                }
            }
            // d = (rows g, g + 8) x (groups 2qd, 2qd + 1) of the chunk
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float sa, ba, sc, bc;
                lr_h2x2f(s[h][0], sa, ba);
                lr_h2x2f(s[h][1], sc, bc);
                acc[b][h] += sa * d[2 * h] + ba * X0 + sc * d[2 * h + 1] + bc * X1;
            }
            // the next row block's weights, or the next chunk's first
            if (b + 1 < LR_RB) load(j, b + 1);
            else if (j + 1 < NCW) load(j + 1, 0);
        }
    }
    // rows g and g + 8 of each block: the sum over the quad's four lanes, then over the warps
#pragma unroll
    for (int b = 0; b < LR_RB; b++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            acc[b][h] += __shfl_xor_sync(0xffffffffu, acc[b][h], 1);
            acc[b][h] += __shfl_xor_sync(0xffffffffu, acc[b][h], 2);
        }
        if (qd == 0) part[warp][16 * b + g] = acc[b][0], part[warp][16 * b + g + 8] = acc[b][1];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 16 * LR_RB; i += LR_THREADS)
        if (row0 + i < vocab) {
            float t = 0.f;
#pragma unroll
            for (int k = 0; k < WARPS; k++) t += part[k][i];
            logits[row0 + i] = t;
        }
}
