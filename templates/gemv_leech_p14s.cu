// Leech Planes14S GEMV, batch 1: y = W x over layouts/leech_vram/p14s.h.
// Tensor cores do the multiply-adds (mma.m16n8k16, W as A decoded in
// registers, x as B, f32 accumulation). Per two pairs of weights: one LOP3
// builds the PRMT selectors (8, cA, 8, cB) of both (PRMT reads the low 16
// bits; the second pair's is sel >> 16), and per pair one PRMT picks the
// two signed f16 high bytes from the class-table entry's pool: about 0.85
// ALU-pipe instructions per weight, the resource that limits Planes14. The block scales are not applied per
// weight: B's eight columns are the eight block slots of the super-chunk
// (lane (g, q) supplies its x in column g only where g is its block, zeros
// elsewhere), so C[row][slot] is the row's unscaled dot over one block, and
// one FFMA per (row, block) applies the entry's f32 scale once per segment.
// Measured: 276 -> 245 instructions per segment and lane (the 48 HMUL2 of
// per-pair scaling gone), and exact v s products instead of f16(v s); then
// 245 -> 221 with the shared selectors (one LOP3 per two pairs instead of
// one per pair): 14B layer 85.1 -> 82.7 us on the H200.
// The layout permutes k inside a 192-column super-chunk so lane q owns
// blocks 2q and 2q+1: a lane reads 4 class-table entries per segment, and
// its B fragment is 8 consecutive columns of x (f16, natural order, shared
// memory). A CTA takes batches of LR_RG row groups of 16 rows (batch
// blockIdx.x, then every gridDim.x-th: a grid smaller than the batch count
// is persistent and stages the class table and x once for many batches);
// its warps split the super-chunks and reduce through shared memory; then
// all rows of the batch at once (templates/gemv_rows_epilogue.cuh) add
// their exceptions (values the pool cannot hold exactly), the row scale and
// the dense f16 tail.
// Specialization: LR_ROWS, LR_COLS, LR_THREADS, LR_RG, LR_NTAB,
// LR_PREFETCH (0 = load a segment when needed, k = 1 or 2: the segments k
// steps ahead are in flight in registers while this one decodes; k >= 3: a
// ring of k segment stages per warp in shared memory filled by 16-byte
// cp.async.cg: k - 1 segments in flight per warp without holding registers.
// Measured on the H200 with the header copied by the 8-byte (L1-allocating)
// form: slower at every depth and shape, worse the deeper (14B gate|up 38.7
// us with registers, 51.5 / 57.6 / 75.6 with 3 / 4 / 8 stages; the earlier
// bulk-copy ring lost the same way), the loads-only control too; the
// all-16-byte form too: 14B gate|up 53.1 / 59.5 us at 3 / 4 stages against
// 38.0; a sweep candidate), LR_NACC (accumulator chains),
// LR_MINB (CTAs per SM the registers must allow), LR_SHR (1 = the right
// shifts of the code words as IMAD.HI on the FMA pipe instead of SHF on
// the ALU pipe), LR_L2PF (d > 0: each warp also prefetches into L2 the
// segment d steps ahead of the one it decodes: more bytes in flight without
// registers; Planes14S waits on DRAM latency, long_scoreboard), LR_XW (1 =
// x staged per warp at the first visit of each super-chunk, its loads
// issued with the segment's: no CTA-wide prologue pass over all of x and
// no barrier on it; register modes only), LR_XH (1 = x's f16 copy read from
// global memory, `xh`: SC * 192 halves, x's first NBLK * 24 columns rounded
// to nearest, zeros after; written by the op before the GEMV. No staging
// at all: the B fragments are LDG.128 through L1 instead of LDS.128 after a
// staging pass; SASS main loop 210 -> 192 on the gate|up specialization,
// 221 -> 204 on down with x staged per warp. Verified on the H200 and not
// faster: 14B gate|up 39.7 us against 36.7 staged, down within the spread).
// LR_SPLIT (s > 1): the super-chunks of a batch are split over s CTAs
// (consecutive blockIdx.x): rank k takes super-chunks k * WARPS + warp,
// stepping by s * WARPS, for the matrices with few row groups and long rows
// (down, o) that one CTA per batch leaves short of warps and unevenly
// spread (320 CTAs on 132 SMs: 2 or 3 per SM). Each rank writes its row
// sums to global scratch (module globals, zero at load) and counts itself
// in with an atomic; the last to arrive adds the s partials in rank order
// (deterministic) and runs the row epilogue, then resets the counter. No
// CTA waits for another. The first version met in a thread-block cluster
// (rank 0 reading the others' shared memory, cluster barriers) and measured
// slower on every Qwen3 shape (bench/results/h200_tune_leech_p14s.csv,
// extra4: 14B down 25.7 us -> 31.3 split 2, 35.2 split 4); this form is
// faster than that but still slower than no split (down 24.1 -> 26.2 at 2,
// o 9.9 -> 11.9). Launches are serial on a stream (one scratch per kernel).
// LR_EPF = 1: the row epilogue's scale, exception range and tail term are
// loaded (and its exception lists prefetched into L2) before the main loop
// (lr_rows_ahead) instead of after it, so a CTA does not end on three
// dependent memory latencies; needs THREADS >= 16 RG (else off).
// (LR_PREL2, each warp prefetching its first segments into L2 before the
// PDL wait, measured slower in the 14B engine at every depth tried, 2-16:
// 226.7 -> 226.2 ... 209.6 tok/s, and was removed.)
// LR_LOADONLY = 1 is a benchmark control, not a GEMV: the same loads,
// geometry, staging and reduction, but no decode, no mma and no row
// epilogue; y[row] = the number of set bits in its row group's segments
// (exact in f32). Its time is what this access pattern costs without the
// decode (kernels/gemv_leech_p14s.c, arm leech_p14s_loads).
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=0
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=256 rg=1 ntab=1205 prefetch=1 minb=3
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=4 nacc=3 shr=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=256 rg=2 ntab=603 prefetch=3
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 l2pf=3 xw=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=2 l2pf=2 xw=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 loadonly=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 split=4
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=0 split=2
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=1 ntab=603 prefetch=3 split=3
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=128 rg=1 ntab=603 prefetch=1 xw=1 split=4 loadonly=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=256 rg=1 ntab=603 prefetch=1 nacc=2 shr=1 xw=1 epf=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=4 epf=1 split=2
// @spec gemv_leech_p14s rows=77 cols=1001 threads=32 rg=3 ntab=603 prefetch=0 epf=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 xw=1 epf=1 pdlt=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=1 split=2 pdlt=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 xh=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=256 rg=1 ntab=603 prefetch=1 nacc=2 shr=1 epf=1 xh=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=3 ntab=603 prefetch=4 split=2 xh=1
#include "gemv_leech.cuh"
#include "gemv_rows_epilogue.cuh"

#ifndef LR_PREFETCH
#define LR_PREFETCH 1
#endif
#ifndef LR_NACC
#define LR_NACC 1
#endif
#ifndef LR_MINB
#define LR_MINB 1
#endif
#ifndef LR_SHR
#define LR_SHR 0
#endif
#ifndef LR_L2PF
#define LR_L2PF 0
#endif
#ifndef LR_XW
#define LR_XW 0
#endif
#ifndef LR_XH
#define LR_XH 0
#endif
#ifndef LR_LOADONLY
#define LR_LOADONLY 0
#endif
#ifndef LR_SPLIT
#define LR_SPLIT 1
#endif
#ifndef LR_EPF
#define LR_EPF 0
#endif
// Where the kernel meets programmatic dependent launch: 3 (default) waits
// for its predecessor before anything, the trigger implicit at exit; 0 loads
// its first segments and the class table first and triggers after its main
// loop. Measured on the H200 (bench/results/h200_p14s_pdl_placement.csv):
// with 0 the fused 14B layer takes 103 us under PDL, with 3 89 us; the early
// loads compete with the predecessor's tail (a trigger at entry was slower
// still in the 14B engine: 6.27 against 5.78 ms per token). 1 waits first
// like 3 and triggers after the main loop like 0: in the engine the next
// kernel is a small op (rotation, attention, SwiGLU) whose launch and
// prologue then overlap this grid's last row epilogues (the engine's
// LEECHRT_GEMV_TRIGGER, lr_leech_geom.trigger).
#ifndef LR_PDLT
#define LR_PDLT 3
#endif
#define WARPS (LR_THREADS / 32)
#define NBLK (LR_COLS / 24)
#define TAIL (LR_COLS % 24)
#define RGN ((LR_ROWS + 15) / 16)
#define SC ((NBLK + 7) / 8)
#define SEG 1792
#define NRGB ((RGN + LR_RG - 1) / LR_RG)
#define NSPL LR_SPLIT
#define WS (WARPS * NSPL) // warps sharing one batch's super-chunks
// cp.async is sm_80: before Ampere a ring request runs as register
// prefetch 2 (its shared memory stays unused).
#if LR_PREFETCH >= 3 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define RING 1
#else
#define RING 0
#endif
#define XH LR_XH
#define XW (LR_XW && !XH) // xh needs no staging
// the row epilogue's loads fetched ahead (one row per thread needed)
#define EPF (LR_EPF && !LR_LOADONLY && LR_THREADS >= LR_RG * 16)

// Shared memory: class table | x as f16, natural order, SC * 192 columns
// (zero past the blocks) | reduction (per warp, row group, 16 rows),
// double-buffered so one barrier per batch suffices.
#define TAB_BYTES (LR_NTAB * 16)
#define XS_BYTES (XH ? 0 : SC * 384)
#define RW (WARPS > NSPL ? WARPS : NSPL) // partials per row in the reduction buffer
#define RED_BYTES (2 * RW * LR_RG * 16 * 4)
// 48 zero bytes (64 reserved): the B fragment of lanes outside their block slot
#define ZB_BYTES 64
// LR_EPF: the row epilogue's values fetched ahead, LR_AHEAD_WORDS per thread
#define AH_BYTES (EPF ? LR_AHEAD_WORDS * 4 * LR_THREADS : 0)

struct seg_regs {
    uint2 h;    // headers: (row g: blocks 2q, 2q+1), (row g+8: blocks 2q, 2q+1)
    uint4 w[3]; // code words of tiles 0..11
};

LR_DEV uint2 ld_stream8(const void *p)
{
    uint2 v;
    asm volatile("ld.global.cs.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

LR_DEV void load_seg(seg_regs &s, const u8 *seg, int lane)
{
    s.h = ld_stream8(seg + 8 * lane);
#pragma unroll
    for (int j = 0; j < 3; j++) s.w[j] = lr_ld_stream16(seg + 256 + 512 * j + 16 * lane);
}

// The same registers from a segment staged in shared memory.
LR_DEV void load_seg_smem(seg_regs &s, const u8 *seg, int lane)
{
    s.h = *(const uint2 *)(seg + 8 * lane);
#pragma unroll
    for (int j = 0; j < 3; j++) s.w[j] = *(const uint4 *)(seg + 256 + 512 * j + 16 * lane);
}

LR_DEV u32 smem_addr(const void *p)
{
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// cp.async of 16 bytes global -> shared, L2 only (.cg); the group helpers.
template <int N> LR_DEV void cp_async(void *dst, const void *src)
{
    static_assert(N == 16, "cp.async.cg copies 16 bytes");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
LR_DEV void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> LR_DEV void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

#if NSPL > 1
// The split's meeting place: NSPL partials per row of every batch, and how
// many ranks of each batch have written theirs.
__device__ u32 g_part[NRGB * NSPL * LR_RG * 16];
__device__ u32 g_count[NRGB];

// Rank `rank` of batch b publishes its n words mine[i] (row sums, or bit
// counts); true in the last rank to arrive, whose out[k * n + i] then holds
// rank k's word i for every rank. All threads of the CTA call it.
LR_DEV bool split_meet(const u32 *mine, u32 *out, int n, int b, int rank, bool *flag)
{
    for (int i = threadIdx.x; i < n; i += LR_THREADS) g_part[((size_t)b * NSPL + rank) * n + i] = mine[i];
    __threadfence(); // the partials before the count
    __syncthreads();
    if (threadIdx.x == 0) *flag = atomicAdd(&g_count[b], 1u) == NSPL - 1;
    __syncthreads();
    if (!*flag) return false;
    __threadfence(); // the count before the others' partials
    for (int i = threadIdx.x; i < NSPL * n; i += LR_THREADS)
        out[i] = __ldcg(&g_part[(size_t)b * NSPL * n + i]); // L2: L1 may hold stale lines
    if (threadIdx.x == 0) g_count[b] = 0; // for the next launch
    __syncthreads();
    return true;
}
#endif

// Lane l's six columns of super-chunk sc, zero past the blocks (the pad
// blocks' codes are zero, and 0 times whatever lies past x could be NaN).
LR_DEV void load_xpiece(float (&v)[6], const float *__restrict__ x, int sc, int lane)
{
    const int c = sc * 192 + 6 * lane; // 24 | NBLK * 24: a lane's six are all in or all out
    if (c < NBLK * 24) { // c even: three 8-byte loads (x is at least 8-byte aligned)
#pragma unroll
        for (int j = 0; j < 3; j++) {
            const float2 t = *(const float2 *)(x + c + 2 * j);
            v[2 * j] = t.x, v[2 * j + 1] = t.y;
        }
    } else {
#pragma unroll
        for (int j = 0; j < 6; j++) v[j] = 0.f;
    }
}

#if XH
// The B fragment of the block slots a lane does not own: zeros, in global
// memory beside xh (a select between two global pointers, no generic loads).
__device__ uint4 g_xzero[4];
#endif

LR_DEV u32 word_of(const uint4 &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// w >> n: SHF (ALU pipe), or with LR_SHR the high word of w * 2^(32 - n)
// by IMAD.HI (FMA pipe; the multiplier in a register, so ptxas cannot turn
// it back into a shift).
template <int N> LR_DEV u32 shr(u32 w, u32 mul)
{
#if LR_SHR
    return __umulhi(w, mul);
#else
    (void)mul;
    return w >> N;
#endif
}

// Selectors (8, cA, 8, cB) for two pairs at once: the word (shifted so
// the codes sit in nibbles 1, 3, 5, 7) masked and or'ed in one LOP3; PRMT
// reads only the low 16 bits, so the low pair selects from sel and the high
// pair from sel >> 16 (one LOP3 per two pairs instead of one per pair).
LR_DEV u32 sels(u32 ws, u32 mF0) { return lr_and_or(ws, mF0, 0x08080808u); }
// One pair from the pool (unscaled values) by a selector.
LR_DEV u32 pair(u32 sel, const uint4 &e) { return lr_prmt(e.x, e.y, sel); }

// d = A B with a zero accumulator (ptxas reads RZ for C: no register moves).
LR_DEV void mma_z(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%10,%10,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.f));
}

extern "C" __global__ void __launch_bounds__(LR_THREADS, LR_MINB)
LR_KERNEL(const u8 *__restrict__ W, const u8 *__restrict__ gtab, const float *__restrict__ row_scale,
          const u16 *__restrict__ tail, const u32 *__restrict__ exc_ptr, const u32 *__restrict__ exc_col,
          const float *__restrict__ exc_dw, const float *__restrict__ x, const u32 *__restrict__ xh, float *__restrict__ y,
          int rows_, int cols_)
{
    extern __shared__ __align__(16) u8 smem[];
    u8 *tab = smem;
    u32 *xs = (u32 *)(smem + TAB_BYTES);
    float *red = (float *)(smem + TAB_BYTES + XS_BYTES);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = lane & 3, g = lane >> 2;
    const u32 mF0 = lr_opaque(0xF0F0F0F0u), m16 = lr_opaque(1u << 16);
    // split rank, the CTA's first batch and the batch stride (groups of
    // LR_SPLIT consecutive CTAs share a batch)
    const int rank = blockIdx.x % LR_SPLIT, cid = blockIdx.x / LR_SPLIT, ncl = gridDim.x / LR_SPLIT;
    const int sc0 = rank * WARPS + warp; // this warp's first super-chunk of a batch
#if NSPL > 1
    __shared__ bool split_flag;
#endif

    // Out-of-range batches and row groups load a valid (clamped) segment
    // whose results are never stored: no branches in the loop.
    auto load_all = [&](seg_regs (&dst)[LR_RG], int b, int k) {
        k = min(k, SC - 1);
        b = min(b, NRGB - 1);
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
            load_seg(dst[r], W + ((size_t)min(b * LR_RG + r, RGN - 1) * SC + k) * SEG, lane);
    };
    // this warp's segments in order: super-chunks sc0, sc0 + WS, ... of
    // batch b, then of batch b + ncl
    auto advance = [&](int &b, int &k) {
        k += WS;
        if (k >= SC) k = sc0, b += ncl;
    };
    // With LR_PDLT 0 the weights and the class table (immutable) are fetched
    // while the previous kernel (which writes x) may still run; 1 and 3 wait here.
#if LR_PDLT != 0
    lr_pdl_wait();
#endif
    int b = cid, sc = sc0;
    seg_regs cur[LR_RG];
#if RING
    // Each lane copies its 48 bytes of code words and lanes 0-15 the 256-byte
    // header, all as 16-byte cp.async.cg (the first version copied each
    // lane's 8 header bytes with the 8-byte form, which allocates in L1, and
    // measured slower than registers at every depth; so does this form);
    // stage st of this warp at ring + st * LR_RG * SEG; one commit
    // group per stage, empty past the warp's last segment so wait_group
    // counts stay uniform. (pb, psc) = the next position to issue.
    u8 *ring = smem + TAB_BYTES + XS_BYTES + RED_BYTES + ZB_BYTES + AH_BYTES + warp * (LR_PREFETCH * LR_RG * SEG);
    int pb = b, psc = sc, it = 0;
    auto issue = [&](int st) {
        if (pb < NRGB && psc < SC) {
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                const u8 *src = W + ((size_t)min(pb * LR_RG + r, RGN - 1) * SC + psc) * SEG;
                u8 *dst = ring + (st * LR_RG + r) * SEG;
                if (lane < 16) cp_async<16>(dst + 16 * lane, src + 16 * lane); // the 256-byte header
#pragma unroll
                for (int j = 0; j < 3; j++) cp_async<16>(dst + 256 + 512 * j + 16 * lane, src + 256 + 512 * j + 16 * lane);
            }
        }
        cp_async_commit();
        advance(pb, psc);
    };
    (void)load_all;
    for (int st = 0; st < LR_PREFETCH; st++) issue(st);
#else
    load_all(cur, b, sc);
#endif
#if !RING && LR_PREFETCH >= 2
    seg_regs n1[LR_RG];
    int pb = b, psc = sc; // the position of the segment loaded last
    advance(pb, psc);
    load_all(n1, pb, psc);
#endif
#if LR_L2PF
    // (fb, fsc): the last position prefetched into L2; 14 lines per segment.
    int fb = b, fsc = sc;
    auto l2pf = [&]() {
        advance(fb, fsc);
        if (fb < NRGB)
            for (int i = lane; i < 14 * LR_RG; i += 32)
                lr_prefetch_l2(W + ((size_t)min(fb * LR_RG + i / 14, RGN - 1) * SC + fsc) * SEG + 128 * (i % 14));
    };
#pragma unroll 1
    for (int d = 0; d < LR_L2PF; d++) l2pf();
#endif
    for (int i = threadIdx.x; i < LR_NTAB; i += LR_THREADS) ((uint4 *)tab)[i] = ((const uint4 *)gtab)[i];
    const uint4 *xz = (const uint4 *)(smem + TAB_BYTES + XS_BYTES + RED_BYTES);
    if (threadIdx.x < 4) ((uint4 *)xz)[threadIdx.x] = make_uint4(0u, 0u, 0u, 0u);
    // B column n = block slot of the super-chunk: lane (g, q) supplies its
    // x only where g is its block, 2q (tiles 0-5) or 2q + 1 (tiles 6-11).
    const bool act0 = g == 2 * q, act1 = g == 2 * q + 1;
    float yacc[LR_RG][2];
    lr_pdl_wait();
#if EPF
    // x is valid: the first batch's epilogue values load while the first
    // segment and the class table are in flight
    const lr_rows_ahead<LR_THREADS, LR_RG * 16, TAIL> ahead = { (u32 *)(smem + TAB_BYTES + XS_BYTES + RED_BYTES + ZB_BYTES) };
    if (cid < NRGB) ahead.start(cid * LR_RG * 16, LR_ROWS, exc_ptr, exc_col, exc_dw, tail, x, NBLK * 24, row_scale);
#endif
#if XH
    (void)xs;
#elif XW
    float xr[6]; // the x piece of the next super-chunk this warp stages
    if (sc < SC) load_xpiece(xr, x, sc, lane);
#else
    for (int i = threadIdx.x; i < SC * 96; i += LR_THREADS) {
        const int c = 2 * i;
        xs[i] = lr_pack_h2(c < NBLK * 24 ? x[c] : 0.f, c + 1 < NBLK * 24 ? x[c + 1] : 0.f);
    }
#endif
    __syncthreads();

    for (int par = 0; b < NRGB; b += ncl, par ^= 1) {
#if EPF
        // the first batch's values were fetched before the class table; a
        // later one's wait here (persistent grids only)
        if (b != cid) ahead.start(b * LR_RG * 16, LR_ROWS, exc_ptr, exc_col, exc_dw, tail, x, NBLK * 24, row_scale);
#endif
#if LR_LOADONLY
        u32 bits[LR_RG];
#pragma unroll
        for (int r = 0; r < LR_RG; r++) bits[r] = 0;
#endif
        float acc[LR_RG][LR_NACC][4];
#pragma unroll
        for (int r = 0; r < LR_RG; r++) yacc[r][0] = yacc[r][1] = 0.f;

        for (; sc < SC; sc += WS) {
#if XW
            // The first batch of this CTA stages x for its super-chunks; the
            // next piece's loads go out before this segment decodes.
            if (b == cid) {
#pragma unroll
                for (int j = 0; j < 3; j++) xs[sc * 96 + 3 * lane + j] = lr_pack_h2(xr[2 * j], xr[2 * j + 1]);
                if (sc + WS < SC) load_xpiece(xr, x, sc + WS, lane);
                __syncwarp();
            }
#endif
#if LR_L2PF
            l2pf();
#endif
#if RING
            // this lane's copies of the segment are in (at most PREFETCH - 1 newer groups pending)
            cp_async_wait<LR_PREFETCH - 1>();
            __syncwarp(); // a lane reads header bytes another lane copied
#pragma unroll
            for (int r = 0; r < LR_RG; r++) load_seg_smem(cur[r], ring + ((it % LR_PREFETCH) * LR_RG + r) * SEG, lane);
#elif LR_PREFETCH >= 2
            seg_regs nxt[LR_RG];
            advance(pb, psc);
            load_all(nxt, pb, psc);
#elif LR_PREFETCH
            seg_regs nxt[LR_RG];
            int nb = b, nsc = sc;
            advance(nb, nsc);
            load_all(nxt, nb, nsc);
#endif
#if LR_LOADONLY
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                bits[r] += __popc(cur[r].h.x) + __popc(cur[r].h.y);
#pragma unroll
                for (int j = 0; j < 3; j++)
                    bits[r] += __popc(cur[r].w[j].x) + __popc(cur[r].w[j].y) + __popc(cur[r].w[j].z) + __popc(cur[r].w[j].w);
            }
#else
            // this lane's x: blocks 2q (tiles 0-5) and 2q + 1 (tiles 6-11), 8 columns per tile pair
#if XH
            const uint4 *xv = (const uint4 *)(xh + sc * 96 + 24 * q);
            const uint4 *xv0 = act0 ? xv : g_xzero, *xv1 = act1 ? xv : g_xzero - 3;
#else
            const uint4 *xv = (const uint4 *)(xs + sc * 96 + 24 * q);
            const uint4 *xv0 = act0 ? xv : xz, *xv1 = act1 ? xv : xz - 3;
#endif
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                uint4 e[2][2]; // [row half][block 2q + j]
                e[0][0] = *(const uint4 *)(tab + (cur[r].h.x & 0xffffu));
                e[0][1] = *(const uint4 *)(tab + (cur[r].h.x >> 16));
                e[1][0] = *(const uint4 *)(tab + (cur[r].h.y & 0xffffu));
                e[1][1] = *(const uint4 *)(tab + (cur[r].h.y >> 16));
#pragma unroll
                for (int tp = 0; tp < 6; tp++) {
#if XH
                    const uint4 xb = __ldg(tp < 3 ? xv0 + tp : xv1 + tp);
#else
                    const uint4 xb = tp < 3 ? xv0[tp] : xv1[tp];
#endif
#pragma unroll
                    for (int tt = 0; tt < 2; tt++) {
                        const int t = 2 * tp + tt, j = t >= 6;
                        const u32 w = word_of(cur[r].w[t >> 2], t & 3);
                        // codes in nibbles 1, 3 | 5, 7 (rows g | g + 8 of one tile
                        // half) and 0, 2 | 4, 6 (the other): a0 | a2, a1 | a3
                        const u32 s02 = sels(w, mF0), s13 = sels(w << 4, mF0);
                        const u32 a0 = pair(s02, e[0][j]);
                        const u32 a1 = pair(s13, e[1][j]);
                        const u32 a2 = pair(shr<16>(s02, m16), e[0][j]);
                        const u32 a3 = pair(shr<16>(s13, m16), e[1][j]);
                        if (t < LR_NACC)
                            mma_z(acc[r][t % LR_NACC], a0, a1, a2, a3, tt ? xb.z : xb.x, tt ? xb.w : xb.y);
                        else
                            lr_mma16816(acc[r][t % LR_NACC], a0, a1, a2, a3, tt ? xb.z : xb.x, tt ? xb.w : xb.y);
                    }
                }
                // C[m][n] = row m's unscaled dot over block slot n: lane (g, q)
                // holds rows g, g + 8 x slots 2q, 2q + 1, the blocks of its
                // four entries; each gets its f32 scale (entry bytes 12..15).
#pragma unroll
                for (int a = 1; a < LR_NACC; a++)
#pragma unroll
                    for (int i = 0; i < 4; i++) acc[r][0][i] += acc[r][a][i];
                yacc[r][0] += acc[r][0][0] * __uint_as_float(e[0][0].w) + acc[r][0][1] * __uint_as_float(e[0][1].w);
                yacc[r][1] += acc[r][0][2] * __uint_as_float(e[1][0].w) + acc[r][0][3] * __uint_as_float(e[1][1].w);
            }
#endif
#if RING
            // cur is consumed: the stage's next segment may overwrite it (every
            // lane has read the header bytes that lanes 0-15 overwrite)
            __syncwarp();
            issue(it % LR_PREFETCH);
            it++;
#elif LR_PREFETCH >= 2
#pragma unroll
            for (int r = 0; r < LR_RG; r++) cur[r] = n1[r], n1[r] = nxt[r];
#elif LR_PREFETCH
#pragma unroll
            for (int r = 0; r < LR_RG; r++) cur[r] = nxt[r];
#else
            {
                int nb = b, nsc = sc;
                advance(nb, nsc);
                load_all(cur, nb, nsc);
            }
#endif
        }
        sc = sc0;
#if LR_PDLT <= 1
        // This CTA's weights are read: the next kernel may start its prologue.
        if (b + ncl >= NRGB) lr_pdl_launch_dependents();
#endif
        const int rg0 = b * LR_RG;
        float *rb = red + par * (RW * LR_RG * 16);
#if LR_LOADONLY
        {
            u32 *rbu = (u32 *)rb;
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                const u32 t = lr_warp_sum_u32(bits[r]);
                if (lane == 0) rbu[warp * LR_RG + r] = t;
            }
            __syncthreads();
            int nw = WARPS; // partials per row group in rbu
#if NSPL > 1
            {
                // this rank's count per row group into the other half's
                // first words (free until the next batch's barrier)
                u32 *mine = (u32 *)(red + (par ^ 1) * (RW * LR_RG * 16));
                for (int r = threadIdx.x; r < LR_RG; r += LR_THREADS) {
                    u32 t = 0;
                    for (int w = 0; w < WARPS; w++) t += rbu[w * LR_RG + r];
                    mine[r] = t;
                }
                __syncthreads();
                if (!split_meet(mine, rbu, LR_RG, b, rank, &split_flag)) continue;
                nw = NSPL;
            }
#endif
            for (int i = threadIdx.x; i < LR_RG * 16; i += LR_THREADS) {
                u32 t = 0;
                for (int w = 0; w < nw; w++) t += rbu[w * LR_RG + i / 16];
                if (rg0 * 16 + i < LR_ROWS) y[rg0 * 16 + i] = (float)t;
            }
            continue;
        }
#endif
        // rows g and g + 8: the sum over the four lanes q of the row
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float v = yacc[r][h];
                v += __shfl_xor_sync(0xffffffffu, v, 1);
                v += __shfl_xor_sync(0xffffffffu, v, 2);
                acc[r][0][2 * h] = v;
            }
        if (q == 0)
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                rb[(warp * LR_RG + r) * 16 + g] = acc[r][0][0];
                rb[(warp * LR_RG + r) * 16 + g + 8] = acc[r][0][2];
            }
        __syncthreads();
#if NSPL > 1
        {
            // this rank's row sums (its warps' partials added in warp order)
            // into the other half of the buffer, then the meeting: the last
            // rank gets every rank's sums in rb, rank-major, and finishes
            float *mine = red + (par ^ 1) * (RW * LR_RG * 16);
            for (int i = threadIdx.x; i < LR_RG * 16; i += LR_THREADS) {
                float t = 0.f;
                for (int w = 0; w < WARPS; w++) t += rb[w * LR_RG * 16 + i];
                mine[i] = t;
            }
            __syncthreads();
            if (!split_meet((const u32 *)mine, (u32 *)rb, LR_RG * 16, b, rank, &split_flag)) continue;
        }
#endif
        // The rows of the batch: partial sums (of the warps, or of the split's
        // ranks), exceptions, row scale, tail.
#if EPF
        ahead.template finish<(NSPL > 1 ? NSPL : WARPS)>(rb, rg0 * 16, LR_ROWS, exc_col, exc_dw, x, y);
#else
        lr_rows_epilogue<LR_THREADS, LR_RG * 16, (NSPL > 1 ? NSPL : WARPS), TAIL>(
            rb, rg0 * 16, LR_ROWS, exc_ptr, exc_col, exc_dw, tail, x, NBLK * 24, row_scale, y);
#endif
    }
}
