// Output head on tensor cores, read in place from the int8 table (no copy):
// logits[r] = sum_G (s_rG sum_{i in G} q[r][i] f16(x_i) + b_rG sum_{i in G} x_i)
// over groups G of 64 columns with their f16 scale s and bias b. Why: the
// scalar head (op_head_int8g.cu) reads 64 bytes of f32 x per 16 weight bytes
// of a row pair through L1 (Nsight Compute: L1/TEX 97.6% busy, 66-69% of its
// bytes' bound); here a warp takes 16 rows and x enters as the mma's B
// fragment, 32 bytes of f16 per lane per 512 columns, 1/8 of the weights'.
// Warp w of a CTA: rows 16 (blockIdx.x * 8 + w) .. + 15, columns in chunks
// of 8 groups (512). Lane (g, q) loads 16 bytes of rows g and g + 8 at
// columns 64 n + 16 q of each group n: the mma's k order inside a k-tile is
// free as long as A and B agree, so k-tile t of group n is lane q's bytes
// 4t .. 4t + 3 (A: a0/a2 = row g's two half2, a1/a3 = row g + 8's) and B's
// k slots hold the same columns of x. int8 -> f16 exactly: q ^ 0x80 under
// exponent byte 0x64 is 1152 + q (PRMT), minus 1152 (HADD2). B column n is
// group n: lanes with g == n supply x, the others zero, so C[row][n] is the
// row's unscaled dot over group n of the chunk, and lane (g, q) scales its
// groups 2q, 2q + 1 of rows g, g + 8 once per chunk.
// Specialization: LR_THREADS (8 warps), LR_HIDDEN (columns, a multiple of 64).
// @spec op_head_int8g_mma threads=256 hidden=5120
// @spec op_head_int8g_mma threads=256 hidden=2624
// @spec op_head_int8g_mma threads=256 hidden=192
#include "gemv_leech.cuh"

#define NG (LR_HIDDEN / 64)
#define NCH ((NG + 7) / 8) // chunks of 8 groups
#define WARPS (LR_THREADS / 32)
#if LR_HIDDEN % 64 || LR_THREADS % 32
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

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const i8 *__restrict__ q, const u16 *__restrict__ sb, const float *__restrict__ x, float *__restrict__ logits,
          int vocab, int hidden_)
{
    __shared__ __align__(16) u16 xh[NCH * 512]; // f16 x, zero past the columns
    __shared__ float xsum[NCH * 8];             // per group: sum of f32 x (the bias term)
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, qd = lane & 3;
    const int row0 = (blockIdx.x * WARPS + warp) * 16;
    // rows g and g + 8 of the warp's 16 (past the end: the last row, never stored)
    const i8 *wr[2] = { q + (u64)min(row0 + g, vocab - 1) * LR_HIDDEN, q + (u64)min(row0 + g + 8, vocab - 1) * LR_HIDDEN };
    const u16 *sr[2] = { sb + (u64)min(row0 + g, vocab - 1) * NG * 2, sb + (u64)min(row0 + g + 8, vocab - 1) * NG * 2 };
    uint4 w[2][8];
    u32 s[2][2];
    // a chunk's weights and its scale pairs (groups 2qd, 2qd + 1 of the chunk)
    auto load = [&](int c) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
            for (int n = 0; n < 8; n++)
                w[h][n] = 8 * c + n < NG ? lr_ld_stream16(wr[h] + 512 * c + 64 * n + 16 * qd) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
            for (int j = 0; j < 2; j++) s[h][j] = 8 * c + 2 * qd + j < NG ? *(const u32 *)(sr[h] + (8 * c + 2 * qd + j) * 2) : 0u;
        }
    };
    // the weights are immutable: the first chunk is in flight before the wait
    load(0);
    lr_pdl_wait(); // x comes from the previous kernel
    for (int i = threadIdx.x; i < NCH * 512; i += LR_THREADS) xh[i] = lr_f2h(i < LR_HIDDEN ? x[i] : 0.f);
    for (int G = warp; G < NCH * 8; G += WARPS) {
        const float v = G < NG ? x[64 * G + lane] + x[64 * G + 32 + lane] : 0.f;
        const float t = lr_warp_sum(v);
        if (lane == 0) xsum[G] = t;
    }
    __syncthreads();
    float acc[2] = { 0.f, 0.f };
    for (int c = 0; c < NCH; c++) {
        // B: this lane's 16 columns of its group g (x zero past the end)
        const uint4 *xp = (const uint4 *)(xh + 512 * c + 64 * g + 16 * qd);
        const uint4 x0 = xp[0], x1 = xp[1];
        const u32 xb[8] = { x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w };
        float d[4] = { 0.f, 0.f, 0.f, 0.f };
#pragma unroll
        for (int n = 0; n < 8; n++) {
            const bool mine = g == n;
#pragma unroll
            for (int t = 0; t < 4; t++) {
                const u32 w0 = t == 0 ? w[0][n].x : t == 1 ? w[0][n].y : t == 2 ? w[0][n].z : w[0][n].w;
                const u32 w1 = t == 0 ? w[1][n].x : t == 1 ? w[1][n].y : t == 2 ? w[1][n].z : w[1][n].w;
                u32 a0, a1, a2, a3;
                i8x4_to_h2(w0, a0, a2);
                i8x4_to_h2(w1, a1, a3);
                lr_mma16816(d, a0, a1, a2, a3, mine ? xb[2 * t] : 0u, mine ? xb[2 * t + 1] : 0u);
            }
        }
        // d = (rows g, g + 8) x (groups 2qd, 2qd + 1) of the chunk
        const float X0 = xsum[8 * c + 2 * qd], X1 = xsum[8 * c + 2 * qd + 1];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float sa, ba, sc, bc;
            lr_h2x2f(s[h][0], sa, ba);
            lr_h2x2f(s[h][1], sc, bc);
            acc[h] += sa * d[2 * h] + ba * X0 + sc * d[2 * h + 1] + bc * X1;
        }
        if (c + 1 < NCH) load(c + 1);
    }
    // rows g and g + 8: the sum over the quad's four lanes
#pragma unroll
    for (int h = 0; h < 2; h++) {
        acc[h] += __shfl_xor_sync(0xffffffffu, acc[h], 1);
        acc[h] += __shfl_xor_sync(0xffffffffu, acc[h], 2);
    }
    if (qd == 0) {
        if (row0 + g < vocab) logits[row0 + g] = acc[0];
        if (row0 + g + 8 < vocab) logits[row0 + g + 8] = acc[1];
    }
}
