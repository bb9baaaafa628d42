// Leech Planes14 GEMV, batch 1: y = W x over the fragment-ordered layout of
// layouts/leech_vram/p14.h. Tensor cores do the multiply-adds: each warp
// runs mma.m16n8k16 with 16 rows of W as A (decoded in registers: per pair
// of weights one SHF, one LOP3, one PRMT from the class-table entry, one
// HFMA2 for the scale, one SHF+LOP3 for the signs) and x as B (f16,
// replicated in the 8 columns, read from shared memory in fragment order);
// f32 accumulation. A CTA takes batches of LR_RG row groups of 16 rows
// (batch blockIdx.x, then every gridDim.x-th: a grid smaller than the batch
// count is persistent, staging the class table and x once for many
// batches); its warps split the 192-column super-chunks and reduce through
// shared memory. Each warp's next segment is in flight while it decodes the
// current one, across batch boundaries too. Row scales and the dense f16
// tail (cols % 24) are applied per row in f32.
// Specialization: LR_ROWS, LR_COLS, LR_THREADS, LR_RG (row groups per CTA),
// LR_NTAB (class-table entries), LR_PREFETCH: 0 = load a segment when it is
// needed, 1 = the next one into registers before decoding this one, k >= 2 =
// a ring of k segments per warp in shared memory filled by cp.async, so k
// segments are in flight without holding registers (DRAM latency, not
// issue, limits the register version: each warp has one segment in flight).
// LR_MINB: CTAs per SM the registers must allow (what shared memory allows).
// LR_TABG: 1 = the class table is read from global memory through L1 instead
// of being staged in shared memory (less shared-memory traffic per CTA).
// LR_NACC: independent accumulator chains per row group (tile t feeds chain
// t % LR_NACC), so consecutive mma do not wait on each other's result.
// @spec gemv_leech_p14 rows=5120 cols=17408 threads=256 rg=1 ntab=603 prefetch=1
// @spec gemv_leech_p14 rows=77 cols=1001 threads=128 rg=2 ntab=603 prefetch=0
// @spec gemv_leech_p14 rows=17408 cols=5120 threads=256 rg=1 ntab=603 prefetch=3
// @spec gemv_leech_p14 rows=77 cols=1001 threads=128 rg=2 ntab=603 prefetch=2
// @spec gemv_leech_p14 rows=17408 cols=5120 threads=256 rg=1 ntab=603 prefetch=1 tabg=1
// @spec gemv_leech_p14 rows=17408 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=2
// @spec gemv_leech_p14 rows=77 cols=1001 threads=128 rg=2 ntab=603 prefetch=2 nacc=3
#include "gemv_leech.cuh"

#ifndef LR_PREFETCH
#define LR_PREFETCH 1
#endif
#define WARPS (LR_THREADS / 32)
#define NBLK (LR_COLS / 24)
#define TAIL (LR_COLS % 24)
#define RGN ((LR_ROWS + 15) / 16)
#define SC ((NBLK + 7) / 8)
#define SEG 1792

#define NRGB ((RGN + LR_RG - 1) / LR_RG)
#define RING (LR_PREFETCH >= 2)
#ifndef LR_TABG
#define LR_TABG 0
#endif
#ifndef LR_NACC
#define LR_NACC 1
#endif
// Shared memory: class table (unless LR_TABG) | x in fragment order (SC * 384 bytes) |
// reduction, double-buffered so one barrier per batch suffices | the
// per-warp segment rings (RING: LR_PREFETCH stages of LR_RG segments).
#define RED_BYTES (2 * WARPS * LR_RG * 16 * 4)
#define STAGE_BYTES (LR_RG * SEG)
#define TAB_BYTES (LR_TABG ? 0 : LR_NTAB * 16)
#define XS_BYTES (SC * 384)

struct seg_regs {
    uint4 h[2];  // headers: row g (h[0]) and row g + 8 (h[1]), blocks 0..7
    uint4 w[3];  // 12 fragment words
};

LR_DEV void load_seg(seg_regs &s, const u8 *seg, int lane)
{
    const u8 *hp = seg + (lane >> 2) * 32;
    s.h[0] = lr_ld_stream16(hp);
    s.h[1] = lr_ld_stream16(hp + 16);
#pragma unroll
    for (int j = 0; j < 3; j++) s.w[j] = lr_ld_stream16(seg + 256 + 512 * j + 16 * lane);
}

// The same registers from a segment staged in shared memory.
LR_DEV void load_seg_smem(seg_regs &s, const u8 *seg, int lane)
{
    const u8 *hp = seg + (lane >> 2) * 32;
    s.h[0] = *(const uint4 *)hp;
    s.h[1] = *(const uint4 *)(hp + 16);
#pragma unroll
    for (int j = 0; j < 3; j++) s.w[j] = *(const uint4 *)(seg + 256 + 512 * j + 16 * lane);
}


// A warp copies one segment (SEG bytes) global -> shared, 16 bytes a lane at
// a time, bypassing L1.
LR_DEV void copy_seg(u8 *dst, const u8 *src, int lane)
{
    const u32 d = lr_smem_u32(dst);
#pragma unroll
    for (int c = lane; c < SEG / 16; c += 32)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d + 16 * c), "l"(src + 16 * c) : "memory");
}

LR_DEV void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int N> LR_DEV void cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

LR_DEV u32 word_of(const uint4 &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// Class-table entry of block b (0..7) for row half hh.
LR_DEV uint4 entry(const seg_regs &s, int hh, int b, const u8 *tab)
{
    const u32 hw = word_of(s.h[hh], b >> 1);
    const u32 off = (b & 1) ? (hw >> 16) : (hw & 0xffffu);
#if LR_TABG
    uint4 v;
    asm("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(tab + off));
    return v;
#else
    return *(const uint4 *)(tab + off);
#endif
}

#ifndef LR_MINB
#define LR_MINB 1
#endif
extern "C" __global__ void __launch_bounds__(LR_THREADS, LR_MINB)
LR_KERNEL(const u8 *__restrict__ W, const u8 *__restrict__ gtab, const float *__restrict__ row_scale,
          const u16 *__restrict__ tail, const float *__restrict__ x, float *__restrict__ y, int rows_, int cols_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    extern __shared__ __align__(16) u8 smem[];
#if LR_TABG
    const u8 *tab = gtab;
#else
    u8 *tab = smem;
#endif
    u32 *xs = (u32 *)(smem + TAB_BYTES);
    float *red = (float *)(smem + TAB_BYTES + XS_BYTES);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = lane & 3;
#if RING
    u8 *ring = smem + TAB_BYTES + XS_BYTES + RED_BYTES + warp * (LR_PREFETCH * STAGE_BYTES);
#endif
    const u32 m0707 = lr_opaque(0x0707u), m7070 = lr_opaque(0x7070u);

    // Out-of-range row groups and super-chunks load a valid segment (clamped)
    // whose results are never stored: no branches, no zeroing in the loop.
    auto load_all = [&](seg_regs (&dst)[LR_RG], int b, int k) {
        k = min(k, SC - 1);
        b = min(b, NRGB - 1);
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
            load_seg(dst[r], W + ((size_t)min(b * LR_RG + r, RGN - 1) * SC + k) * SEG, lane);
    };
    // The first segments are requested before the prologue (class table, x),
    // so their DRAM latency overlaps it.
    seg_regs cur[LR_RG];
    int b = blockIdx.x, sc = warp;
#if RING
    // Producer side of the ring: (fb, fsc) is the next segment to fetch, in
    // the order this warp consumes them; past the end, empty groups keep the
    // group count (and so cp.async.wait_group) uniform.
    int fb = b, fsc = warp, slot = 0;
    auto fetch = [&](int st) {
        if (fb < NRGB && fsc < SC)
#pragma unroll
            for (int r = 0; r < LR_RG; r++)
                copy_seg(ring + st * STAGE_BYTES + r * SEG, W + ((size_t)min(fb * LR_RG + r, RGN - 1) * SC + fsc) * SEG,
                         lane);
        cp_commit();
        fsc += WARPS;
        if (fsc >= SC) fsc = warp, fb += gridDim.x;
    };
#pragma unroll
    for (int st = 0; st < LR_PREFETCH; st++) fetch(st);
#else
    load_all(cur, b, sc);
#endif
#if !LR_TABG
    for (int i = threadIdx.x; i < LR_NTAB; i += LR_THREADS) ((uint4 *)tab)[i] = ((const uint4 *)gtab)[i];
#endif
    // Weights and the class table are immutable: fetched above while the
    // previous kernel (which writes x) may still run.
    lr_pdl_wait();
    x = lr_after_wait(x); // no load of x above the wait (lr_common.cuh)
    // x -> f16 pairs in fragment order: u32 index ((tp * 4 + q) * 4 + s),
    // s = 0/1: tile 2 tp, cols 2q and 2q + 8; s = 2/3: tile 2 tp + 1.
    for (int i = threadIdx.x; i < SC * 96; i += LR_THREADS) {
        const int s = i & 3, qq = (i >> 2) & 3, tp = i >> 4;
        const int c = (tp * 2 + (s >> 1)) * 16 + 2 * qq + 8 * (s & 1);
        const float a = c < NBLK * 24 ? x[c] : 0.f, bb = c + 1 < NBLK * 24 ? x[c + 1] : 0.f;
        xs[i] = lr_pack_h2(a, bb);
    }
    __syncthreads();

    for (int par = 0; b < NRGB; b += gridDim.x, par ^= 1) {
        float acc[LR_RG][LR_NACC][4];
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
#pragma unroll
            for (int a = 0; a < LR_NACC; a++) acc[r][a][0] = acc[r][a][1] = acc[r][a][2] = acc[r][a][3] = 0.f;

        for (; sc < SC; sc += WARPS) {
            // the segment after this one: same batch, or this warp's first of the next
            const int nb = sc + WARPS < SC ? b : b + (int)gridDim.x, nsc = sc + WARPS < SC ? sc + WARPS : warp;
#if RING
            cp_wait<LR_PREFETCH - 1>(); // this segment's group has landed
            __syncwarp();
#pragma unroll
            for (int r = 0; r < LR_RG; r++) load_seg_smem(cur[r], ring + slot * STAGE_BYTES + r * SEG, lane);
            __syncwarp(); // every lane has read the stage before it is refilled
            fetch(slot);
            slot = slot + 1 == LR_PREFETCH ? 0 : slot + 1;
#elif LR_PREFETCH
            seg_regs nxt[LR_RG];
            load_all(nxt, nb, nsc);
#endif
            const uint4 *xv = (const uint4 *)(xs + sc * 96) + q;
#pragma unroll
            for (int tp = 0; tp < 6; tp++) {
                const uint4 xb = xv[tp * 4];
#pragma unroll
                for (int tt = 0; tt < 2; tt++) {
                    const int t = tp * 2 + tt;
                    const int bA = (16 * t) / 24, bB = (16 * t + 8) / 24;
                    const u32 b0 = tt ? xb.z : xb.x, b1 = tt ? xb.w : xb.y;
#pragma unroll
                    for (int r = 0; r < LR_RG; r++) {
                        const u32 w = word_of(cur[r].w[t >> 2], t & 3);
                        const u32 a0 = lr_leech_pair<0, 0>(w, entry(cur[r], 0, bA, tab), m0707, m7070);
                        const u32 a1 = lr_leech_pair<4, 4>(w, entry(cur[r], 1, bA, tab), m0707, m7070);
                        const u32 a2 = lr_leech_pair<16, 8>(w, entry(cur[r], 0, bB, tab), m0707, m7070);
                        const u32 a3 = lr_leech_pair<20, 12>(w, entry(cur[r], 1, bB, tab), m0707, m7070);
                        lr_mma16816(acc[r][t % LR_NACC], a0, a1, a2, a3, b0, b1);
                    }
                }
            }
#if RING
            (void)nb, (void)nsc;
#elif LR_PREFETCH
#pragma unroll
            for (int r = 0; r < LR_RG; r++) cur[r] = nxt[r];
#else
            load_all(cur, nb, nsc);
#endif
        }
        sc = warp;
        // This CTA's last batch is read: let the next kernel start its prologue
        // (triggered earlier, its waiting CTAs would hold SMs this grid needs).
        if (b + (int)gridDim.x >= NRGB) lr_pdl_launch_dependents();

        // c0 = row g, c2 = row g + 8 (every column n holds the same dot product).
        float *rb = red + par * (WARPS * LR_RG * 16);
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
#pragma unroll
            for (int a = 1; a < LR_NACC; a++) acc[r][0][0] += acc[r][a][0], acc[r][0][2] += acc[r][a][2];
        if (q == 0)
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                rb[(warp * LR_RG + r) * 16 + (lane >> 2)] = acc[r][0][0];
                rb[(warp * LR_RG + r) * 16 + (lane >> 2) + 8] = acc[r][0][2];
            }
        __syncthreads();
        for (int i = threadIdx.x; i < LR_RG * 16; i += LR_THREADS) {
            const int row = b * LR_RG * 16 + i;
            if (row >= LR_ROWS) continue;
            float s = 0.f;
            for (int w = 0; w < WARPS; w++) s += rb[w * LR_RG * 16 + i];
            s *= row_scale[row];
#if TAIL
            for (int j = 0; j < TAIL; j++) s = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[NBLK * 24 + j], s);
#endif
            y[row] = s;
        }
    }
}
