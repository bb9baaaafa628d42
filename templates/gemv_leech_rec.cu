// The published Leech GEMVs, batch 1, as baselines: y = W x over the record
// layouts of layouts/leech_vram/rec.h in the published structure (one warp
// per row, 8 rows per 256-thread CTA, x staged in shared memory in tiles of
// LR_TILE blocks, lane j takes blocks j, j + 32, ...; per block the record's
// fields, the class's f32 values from the table, a select tree per weight,
// four FMA chains, the gain centroid; warp shuffle reduction, row scale and
// the dense f16 tail by lane 0). Correctness first, no tuning.
// LR_KIND: 0 Planes14 (14-byte records), 1 Planes12x (12-byte records; the
// row's exceptions corrected by its own warp after the reduction, no
// atomics), 2 Slot32 (one-hot masks, stride groups of 32 blocks).
// Specialization: LR_KIND, LR_ROWS, LR_COLS, LR_THREADS, LR_TILE.
// @spec gemv_leech_rec kind=0 rows=5120 cols=17408 threads=256 tile=128
// @spec gemv_leech_rec kind=1 rows=5120 cols=17408 threads=256 tile=128
// @spec gemv_leech_rec kind=2 rows=5120 cols=17408 threads=256 tile=128
// @spec gemv_leech_rec kind=1 rows=77 cols=1001 threads=128 tile=32
#include "lr_common.cuh"

#define WARPS (LR_THREADS / 32)
#define NBLK (LR_COLS / 24)
#define TAIL (LR_COLS % 24)
#define TAB_STRIDE 8 // floats per class-table entry: vals[5], len, 0, 0

// A record's fields. Planes: m[0..2] = p0, p1, p2; Slot32: m[1..4] = the
// level masks (m[0] unused).
struct rec_fields {
    u32 id, gain, sign, m[5];
};

// 24 bits at bit k of the funnel-shifted window r (k a constant after unrolling).
template <int K>
LR_DEV u32 field24(const u32 (&r)[5])
{
    const u32 lo = r[K / 32] >> (K % 32);
    const u32 v = (K % 32) + 24 <= 32 ? lo : __funnelshift_r(r[K / 32], r[K / 32 + 1], K % 32);
    return v & 0xffffffu;
}

// NW words from the word holding byte `at`, shifted so bit 0 = the record's bit 0.
template <int NW>
LR_DEV void window(const u8 *base, size_t at, u32 (&r)[5])
{
    const u32 *w = (const u32 *)(base + (at & ~(size_t)3));
    const u32 sh = (u32)(at & 3) * 8;
    u32 v[6];
#pragma unroll
    for (int i = 0; i < 6; i++) v[i] = i < NW ? __ldg(w + i) : 0u;
#pragma unroll
    for (int i = 0; i < 5; i++) r[i] = __funnelshift_r(v[i], v[i + 1], sh);
}

LR_DEV void header(const u32 (&r)[5], rec_fields &f)
{
    f.id = r[0] & 0x1ffu;
    f.gain = (r[0] >> 9) & 1u;
    f.sign = field24<10>(r);
}

// Planes14 record at byte `at` (14 b: shift 0 or 16, four words hold 112 + 16 bits).
LR_DEV rec_fields fields14(const u8 *base, size_t at)
{
    u32 r[5];
    window<4>(base, at, r);
    rec_fields f;
    header(r, f);
    f.m[0] = field24<34>(r), f.m[1] = field24<58>(r), f.m[2] = field24<82>(r), f.m[3] = f.m[4] = 0;
    return f;
}

// Planes12x main record of block b (12 b: aligned, three words).
LR_DEV rec_fields fields12(const u8 *base, size_t b)
{
    u32 r[5];
    window<3>(base, 12 * b, r);
    rec_fields f;
    header(r, f);
    f.m[0] = field24<34>(r), f.m[1] = field24<58>(r), f.m[2] = f.m[3] = f.m[4] = 0;
    return f;
}

// Slot32 record of block b: shift <= 24 plus <= 130 bits fit five words;
// masks past the class's levels belong to the next record and read as 0.
LR_DEV rec_fields fields_slot(const u8 *base, const u32 *__restrict__ bases, const float *__restrict__ tab, size_t b)
{
    const u32 g0 = __ldg(bases + b / 32), g1 = __ldg(bases + b / 32 + 1);
    const size_t at = g0 + (size_t)(b % 32) * ((g1 - g0) / 32);
    u32 r[5];
    window<5>(base, at, r);
    rec_fields f;
    header(r, f);
    const u32 len = __float_as_uint(__ldg(tab + f.id * TAB_STRIDE + 5));
    f.m[0] = 0;
    f.m[1] = len > 1 ? field24<34>(r) : 0u;
    f.m[2] = len > 2 ? field24<58>(r) : 0u;
    f.m[3] = len > 3 ? field24<82>(r) : 0u;
    f.m[4] = len > 4 ? field24<106>(r) : 0u;
    return f;
}

// The select tree of one weight (kind decides the tree), signed.
template <int KIND>
LR_DEV float select(const rec_fields &f, const float (&v)[5], int j)
{
    const u32 bj = 1u << j;
    float a;
    if (KIND == 2) {
        a = (f.m[1] & bj) ? v[1] : (f.m[2] & bj) ? v[2] : (f.m[3] & bj) ? v[3] : (f.m[4] & bj) ? v[4] : v[0];
    } else {
        const float lo = (f.m[1] & bj) ? ((f.m[0] & bj) ? v[3] : v[2]) : ((f.m[0] & bj) ? v[1] : v[0]);
        a = (KIND == 0 && (f.m[2] & bj)) ? v[4] : lo;
    }
    return (f.sign & bj) ? -a : a;
}

LR_DEV void values(const float *__restrict__ tab, u32 id, float (&v)[5])
{
#pragma unroll
    for (int l = 0; l < 5; l++) v[l] = __ldg(tab + id * TAB_STRIDE + l);
}

// One block's dot with xb (shared or global), four FMA chains.
template <int KIND>
LR_DEV float block_dot(const rec_fields &f, const float *__restrict__ tab, const float *__restrict__ gscale,
                       const float *xb)
{
    float v[5];
    values(tab, f.id, v);
    float d[4] = { 0.f, 0.f, 0.f, 0.f };
#pragma unroll
    for (int j = 0; j < 24; j++) d[j & 3] = fmaf(select<KIND>(f, v, j), xb[j], d[j & 3]);
    return ((d[0] + d[1]) + (d[2] + d[3])) * __ldg(gscale + f.gain);
}

LR_DEV rec_fields fields_of(const u8 *W, const u32 *bases, const float *tab, size_t b)
{
#if LR_KIND == 0
    (void)bases, (void)tab;
    return fields14(W, 14 * b);
#elif LR_KIND == 1
    (void)bases, (void)tab;
    return fields12(W, b);
#else
    return fields_slot(W, bases, tab, b);
#endif
}

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const u8 *__restrict__ W, const u32 *__restrict__ bases, const u32 *__restrict__ exc_ptr,
          const u32 *__restrict__ exc_idx, const u8 *__restrict__ exc_rec, const float *__restrict__ tab,
          const float *__restrict__ gscale, const float *__restrict__ row_scale, const u16 *__restrict__ tail,
          const float *__restrict__ x, float *__restrict__ y, int rows_, int cols_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    // Inputs come from the previous kernel; dependents launch when this
    // grid ends (a big grid's waiting dependents would take its SMs).
    lr_pdl_wait();
    __shared__ float xs[LR_TILE * 24];
    const int lane = threadIdx.x & 31, row = blockIdx.x * WARPS + (threadIdx.x >> 5);
    // Rows past the end decode the last row (no return before a barrier) and store nothing.
    const int rowc = row < LR_ROWS ? row : LR_ROWS - 1;
    const size_t b0 = (size_t)rowc * NBLK;
    float acc = 0.f;
    for (int t0 = 0; t0 < NBLK; t0 += LR_TILE) {
        const int t1 = min(t0 + LR_TILE, NBLK);
        __syncthreads();
        for (int i = threadIdx.x; i < (t1 - t0) * 24; i += LR_THREADS) xs[i] = x[t0 * 24 + i];
        __syncthreads();
        for (int j = t0 + lane; j < t1; j += 32)
            acc += block_dot<LR_KIND == 2 ? 2 : LR_KIND == 1 ? 1 : 0>(fields_of(W, bases, tab, b0 + j), tab, gscale,
                                                                        xs + (j - t0) * 24);
    }
    acc = lr_warp_sum(acc);
#if LR_KIND == 1
    // The row's exceptions: lane j < 24 takes coordinate j of the exact
    // (14-byte) and approximate (main) records; exact - approx cancels what
    // the row pass added. rowc is warp-uniform, so the loop and shuffles are.
    for (u32 e = __ldg(exc_ptr + rowc); e < __ldg(exc_ptr + rowc + 1); e++) {
        const size_t b = __ldg(exc_idx + e);
        const rec_fields fe = fields14(exc_rec, 14 * (size_t)e), fa = fields12(W, b);
        float d = 0.f;
        if (lane < 24) {
            float ve[5], va[5];
            values(tab, fe.id, ve);
            values(tab, fa.id, va);
            const float xv = x[(b - b0) * 24 + lane];
            d = select<0>(fe, ve, lane) * xv * __ldg(gscale + fe.gain) - select<1>(fa, va, lane) * xv * __ldg(gscale + fa.gain);
        }
        acc += lr_warp_sum(d);
    }
#else
    (void)exc_ptr, (void)exc_idx, (void)exc_rec;
#endif
    if (lane == 0 && row < LR_ROWS) {
        float s = acc * row_scale[row];
#if TAIL
        for (int j = 0; j < TAIL; j++) s = fmaf(lr_h2f(tail[(size_t)row * TAIL + j]), x[NBLK * 24 + j], s);
#endif
        y[row] = s;
    }
}
