// Leech I8x GEMV, batch 1: y = W x over the int8 tensor-core layout of
// layouts/leech_vram/i8.h (docs/layouts.md, "I8x"). Per block of 24 columns
// one mma.m16n8k32.s8 with 16 rows of W as A (four PRMTs from the class
// table give 16 signed int8 weights per lane; 3-bit selectors from the
// packed codes with one LOP or SHF each, two spare selectors per three words
// with seven) and x as B: x scaled per 192 columns by a power of two to
// 16-bit integers (|xi| <= 32639) and split in two int8 digits, hi in the even columns of B, lo in the odd,
// so each lane gets c0 = row . hi, c1 = row . lo and the exact integer dot
// c0 * 256 + c1. Per block one I2F + FFMA by the block's f32 scale (class
// table), per super-chunk one FFMA by the x scale. Exceptions (five-valued
// classes) and the dense f16 tail are added per row in the final reduction
// (templates/gemv_rows_epilogue.cuh, every row of the CTA at once). A CTA owns LR_RG row groups of 16 rows; its warps split
// the 192-column super-chunks (each warp quantizes the x of its own
// super-chunks) and reduce through shared memory. Integer products are
// exact; the f32 epilogue is the only rounding besides x's quantization.
// With LR_XQ=1 x arrives already quantized (xq: the 64-byte digit records
// of every block, then the f32 scales: templates/gemv_leech_i8_xq.cu, or
// the producer of x) and each warp only copies its super-chunks' records.
// Specialization: LR_ROWS, LR_COLS, LR_THREADS, LR_RG, LR_NTAB, LR_PREFETCH,
// LR_XQ.
// @spec gemv_leech_i8 rows=5120 cols=17408 threads=256 rg=1 ntab=603 prefetch=1 xq=0
// @spec gemv_leech_i8 rows=77 cols=1001 threads=128 rg=2 ntab=603 prefetch=0 xq=1
#include "gemv_leech_i8.cuh"
#include "gemv_rows_epilogue.cuh"

#ifndef LR_PREFETCH
#define LR_PREFETCH 1
#endif
#ifndef LR_XQ
#define LR_XQ 0 // 1: x arrives quantized (xq, from gemv_leech_i8_xq) instead of being quantized per CTA
#endif
#define WARPS (LR_THREADS / 32)
#define TAIL (LR_COLS % 24)
#define RGN ((LR_ROWS + 15) / 16)
#define SEG 1344

// Shared memory: class table | x digits (64 bytes per block: hi then lo,
// 8 bytes per q: k 4q..4q+3 and 16+4q..16+4q+3) | x scales | reduction.
#define TAB_BYTES (LR_NTAB * 16)
#define XD_BYTES (SC * 8 * 64)
#define XS_BYTES (SC * 4)

struct seg_regs {
    uint2 h[3]; // the 16 headers of rows g, g + 8
    uint4 w[3]; // code words w0..w11
};

LR_DEV uint2 ld_stream8(const void *p)
{
    uint2 v;
    asm volatile("ld.global.cs.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

LR_DEV void load_seg(seg_regs &s, const u8 *seg, int lane)
{
    const int g = lane >> 2, q = lane & 3;
    const u8 *hp = seg + 24 * g;
    s.h[0] = ld_stream8(hp);
    s.h[1] = ld_stream8(hp + 8);
    s.h[2] = ld_stream8(hp + 16);
    s.w[0] = lr_ld_stream16(seg + 192 + 16 * lane);
    s.w[1] = lr_ld_stream16(seg + 704 + 48 * g + (q < 2 ? 16 * q : 32));
    s.w[2] = lr_ld_stream16(seg + 1088 + 32 * g + 16 * (q & 1));
    if (q == 3) s.w[1].x = s.w[1].z, s.w[1].y = s.w[1].w; // the q = 2 / 3 pair shares 16 bytes
}

LR_DEV u32 wd(const seg_regs &s, int i)
{
    const uint4 &v = s.w[i >> 2];
    return (i & 3) == 0 ? v.x : (i & 3) == 1 ? v.y : (i & 3) == 2 ? v.z : v.w;
}
LR_DEV u32 hd(const seg_regs &s, int i) { return (i & 1) ? s.h[i >> 1].y : s.h[i >> 1].x; }

// a & m in an asm statement, so the compiler keeps one masked word for both
// halves instead of re-deriving each half with its own mask and shift.
LR_DEV u32 and_keep(u32 a, u32 m)
{
    u32 d;
    asm("lop3.b32 %0, %1, %2, 0, 0xC0;" : "=r"(d) : "r"(a), "r"(m));
    return d;
}

// (a & m) | b, one LOP3.
LR_DEV u32 and_or(u32 a, u32 m, u32 b)
{
    u32 d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(m), "r"(b));
    return d;
}

// Selector s (0..7) of group G: PRMT reads bits 0..15 only.
LR_DEV u32 selector(const seg_regs &s, int G, int k)
{
    const u32 A = wd(s, 3 * G), B = wd(s, 3 * G + 1), C = wd(s, 3 * G + 2);
    if (k < 6) {
        const u32 m = and_keep(k < 2 ? A : k < 4 ? B : C, 0x77777777u);
        return (k & 1) ? m >> 16 : m;
    }
    // bit j of each nibble from word j's bit 3 of that nibble
    const u32 t = and_or(C >> 1, 0x44444444u, and_or(B >> 2, 0x22222222u, and_keep(A >> 3, 0x11111111u)));
    return k == 6 ? t : t >> 16;
}

// Byte offset of the class-table entry of header j (= h * 8 + b).
LR_DEV u32 header(const seg_regs &s, int j)
{
    if (j < 6) return hd(s, j) & 0xfff0u;
    if (j < 12) return (hd(s, j - 6) >> 16) & 0xfff0u;
    const int w = j >= 14 ? 3 : 0;
    const u32 t = and_or(hd(s, w + 2) << 12, 0xf000f000u,
                         and_or(hd(s, w + 1) << 8, 0x0f000f00u, and_keep(hd(s, w) << 4, 0x00f000f0u)));
    return (j & 1) ? t >> 16 : t & 0xffffu;
}

// D = A B (s32), m16n8k32, s8 inputs, zero accumulator.
LR_DEV void mma_s8(int (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%10,%10,%10};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
}

#ifndef LR_MINB
#define LR_MINB 1
#endif
extern "C" __global__ void __launch_bounds__(LR_THREADS, LR_MINB)
LR_KERNEL(const u8 *__restrict__ W, const u8 *__restrict__ gtab, const float *__restrict__ row_scale,
          const u16 *__restrict__ tail, const u32 *__restrict__ exc_ptr, const u32 *__restrict__ exc_col,
          const float *__restrict__ exc_dw, const float *__restrict__ x, const u8 *__restrict__ xq, float *__restrict__ y,
          int rows_, int cols_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    // Inputs come from the previous kernel; dependents launch when this
    // grid ends (a big grid's waiting dependents would take its SMs).
    lr_pdl_wait();
    extern __shared__ __align__(16) u8 smem[];
    u8 *tab = smem;
    u8 *xd = smem + TAB_BYTES;
    float *xsc = (float *)(smem + TAB_BYTES + XD_BYTES);
    float *red = (float *)(smem + TAB_BYTES + XD_BYTES + XS_BYTES);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    const int rg0 = blockIdx.x * LR_RG;

    // The first segments are requested before the prologue (class table, x), so
    // their DRAM latency overlaps it.
    seg_regs cur[LR_RG];
    int sc = warp;
    auto load_all = [&](seg_regs (&dst)[LR_RG], int k) {
        k = min(k, SC - 1);
#pragma unroll
        for (int r = 0; r < LR_RG; r++) load_seg(dst[r], W + ((size_t)min(rg0 + r, RGN - 1) * SC + k) * SEG, lane);
    };
    if (sc < SC) load_all(cur, sc);
    for (int i = threadIdx.x; i < LR_NTAB; i += LR_THREADS) ((uint4 *)tab)[i] = ((const uint4 *)gtab)[i];
#if LR_XQ
    for (int k = warp; k < SC; k += WARPS) {
        ((uint4 *)(xd + k * 512))[lane] = ((const uint4 *)(xq + k * 512))[lane];
        if (lane == 0) xsc[k] = ((const float *)(xq + SC * 512))[k];
    }
#else
    for (int k = warp; k < SC; k += WARPS) lr_i8_prep_x(x, xd, xsc, k, lane);
#endif
    __syncthreads();

    float acc[LR_RG][2];
#pragma unroll
    for (int r = 0; r < LR_RG; r++) acc[r][0] = acc[r][1] = 0.f;

    const int dsel = (g & 1) * 32 + 8 * q; // this lane's B column: hi (even g) or lo (odd g)
    for (; sc < SC; sc += WARPS) {
#if LR_PREFETCH
        seg_regs nxt[LR_RG];
        load_all(nxt, sc + WARPS);
#endif
        float part[LR_RG][2];
#pragma unroll
        for (int r = 0; r < LR_RG; r++) part[r][0] = part[r][1] = 0.f;
        const u8 *xb = xd + sc * 8 * 64 + dsel;
#pragma unroll
        for (int b = 0; b < 8; b++) {
            const uint2 bf = *(const uint2 *)(xb + b * 64);
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                const uint4 e0 = *(const uint4 *)(tab + header(cur[r], b));
                const uint4 e1 = *(const uint4 *)(tab + header(cur[r], 8 + b));
                const int i01 = 2 * b, i23 = 16 + 2 * b;
                const u32 a0 = lr_i8_prmt(e0.x, e0.y, selector(cur[r], i01 >> 3, i01 & 7));
                const u32 a1 = lr_i8_prmt(e1.x, e1.y, selector(cur[r], i01 >> 3, (i01 & 7) + 1));
                const u32 a2 = lr_i8_prmt(e0.x, e0.y, selector(cur[r], i23 >> 3, i23 & 7));
                const u32 a3 = lr_i8_prmt(e1.x, e1.y, selector(cur[r], i23 >> 3, (i23 & 7) + 1));
                int d[4];
                mma_s8(d, a0, a1, a2, a3, bf.x, bf.y);
                part[r][0] = fmaf(__int_as_float((int)e0.z), (float)(d[0] * 256 + d[1]), part[r][0]);
                part[r][1] = fmaf(__int_as_float((int)e1.z), (float)(d[2] * 256 + d[3]), part[r][1]);
            }
        }
        const float xs = xsc[sc];
#pragma unroll
        for (int r = 0; r < LR_RG; r++) {
            acc[r][0] = fmaf(xs, part[r][0], acc[r][0]);
            acc[r][1] = fmaf(xs, part[r][1], acc[r][1]);
        }
#if LR_PREFETCH
#pragma unroll
        for (int r = 0; r < LR_RG; r++) cur[r] = nxt[r];
#else
        load_all(cur, sc + WARPS);
#endif
    }

    if (q == 0)
#pragma unroll
        for (int r = 0; r < LR_RG; r++) {
            red[(warp * LR_RG + r) * 16 + g] = acc[r][0];
            red[(warp * LR_RG + r) * 16 + g + 8] = acc[r][1];
        }
    __syncthreads();
    // The CTA's rows: partial sums, exceptions, row scale, tail (all rows at once).
    lr_rows_epilogue<LR_THREADS, LR_RG * 16, WARPS, TAIL>(red, rg0 * 16, LR_ROWS, exc_ptr, exc_col, exc_dw, tail, x,
                                                          NBLK * 24, row_scale, y);
}
