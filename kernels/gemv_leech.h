/* Fused Leech GEMV kernels: descriptors, host references, specializations
 * and benchmark arms, one file per VRAM layout (kernels/gemv_leech_*.c). */
#ifndef LR_GEMV_LEECH_H
#define LR_GEMV_LEECH_H
#include "jit/spec.h"
#include "kernels/gemv_arm.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/i8.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14.h"
#include "loader/model.h"
#include "rt/call.h"

#include <stdint.h>

/* The end of a row in the f64 host references with exception lists
 * (Planes14S, I8x): s (the row's block sum) plus its exceptions
 * sum_e dw_e x[col_e], times row_scale[r], plus the f16 tail term
 * sum_k tail[r][k] x[tail_col0 + k] (nt columns); with mag, every term's
 * magnitude (the verify tolerance's scale). */
float lr_leech_ref_row_end(double s, int r, const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                           const uint16_t *tail, int nt, const float *x, int tail_col0, const float *row_scale,
                           int mag);

/* A Planes14S GEMV's ends, chosen per upload (zero: the plain GEMV).
 * trig: 1, with the split over segments (bal), its dependents launch after
 * its main loop instead of at exit (spec `trig`), so the op after it is
 * resident by the time its last rows are summed; 2, at its entry (spec
 * `trige`, any geometry: meant for a grid that leaves SMs free, whose
 * dependents' CTAs then wait there and take the rest as its CTAs leave, with
 * no launch in between). norm_eps > 0: it takes x un-normed
 * and scales each output by rsqrt(mean(x^2) + eps) (spec `norm`: y = W
 * rmsnorm(x) with unit gain); res: it adds its output into y (spec `res`: y
 * += W x, the residual add). The last two are the rotated residual's
 * (docs/format.md, docs/engine.md). l2w > 0 (with early): before its PDL wait,
 * while the small op before it runs and the DRAM idles, each CTA asks L2 for up
 * to l2w KB of its own share past its first segments (spec `l2w`; immutable
 * weights, so nothing waits on it; LEECHRT_GEMV_L2W), and at most l2wp % of
 * that share (spec `l2wp` for 1-99; 0 and 100 set no such cap;
 * LEECHRT_GEMV_L2W_SHARE). */
typedef struct lr_leech_ends {
    int trig;
    int res;
    float norm_eps;
    int l2w;
    int l2wp;
} lr_leech_ends;

typedef struct lr_leech_geom {
    int threads;  /* per CTA */
    int rg;       /* row groups of 16 rows per CTA (B-fragment reuse) */
    int prefetch; /* 0: none; 1: the next super-chunk's loads issued into registers before
                     decoding this one; k >= 2 (Planes14): a k-stage cp.async ring per warp
                     in shared memory; Planes14S: 2 = two segments ahead in registers */
    int xq;       /* I8x only: 1 = x arrives quantized (gemv_leech_i8_xq first) */
    int tabg;     /* Planes14 only: 1 = class table read from global memory through L1,
                     0 = staged in shared memory */
    int nacc;     /* Planes14: independent mma accumulator chains (1..4; 0 = 1) */
    int persist;  /* Planes14: CTAs per SM of a persistent grid (each loops over
                     row-group batches); 0 = one CTA per batch */
    int minb;     /* CTAs per SM the register allocation must allow (the compiler
                     caps registers per thread, spilling if it must); 0 = the
                     template's rule */
    int xw;       /* Planes14S: 1 = x staged per warp at first use instead of a
                     CTA-wide prologue (register prefetch modes only) */
    int epf;      /* Planes14S: 1 = the row epilogue's scale, exception range and tail
                     loaded before the main loop, its exception lists prefetched into L2
                     (templates/gemv_rows_epilogue.cuh lr_rows_ahead) */
    int groups;   /* Planes14S: independent warp groups per CTA, each on its own
                     row-group batches (0 or 1 = the CTA is one group; more: x staged
                     once per CTA in the prologue, no xw; epf per group) */
    int shr;      /* Planes14S: 1 = the code words' right shifts by IMAD.HI (FMA pipe)
                     instead of SHF (ALU) */
    int bal;      /* Planes14S: 1 = balanced split, one CTA per SM (persist 1): each CTA
                     a contiguous range of row groups, each warp an equal contiguous run
                     of its segments (rg 1, prefetch 1, no groups, no xw); 2 = the same
                     over segments: a row group may be split between two neighbouring
                     CTAs, finished by whichever ends second (every SM the same work) */
    int ilv;      /* Planes14S with bal: 1 = the CTA's segments dealt round-robin to its
                     warps (adjacent segments read together) instead of contiguous runs */
    int pro;      /* Planes14S: 1 = the prologue's x loads (up to 16 per thread in flight)
                     issued before the class-table loop and stored after it */
    int early;    /* Planes14S: 1 = the first segments and the class table loaded before
                     the PDL wait (immutable data), only x after it: the GEMV's CTAs are
                     resident while the small op before them runs (not a tuning knob:
                     a sweep has no predecessor); 2 = the same with the table copied by
                     cp.async, waited for after x's loads (not yet run on a GPU) */
    int side;     /* Planes14S: 1-4 = that many more warps per CTA load and sum the row
                     end's exceptions, tail and row scales while the others run the main loop
                     (templates/gemv_rows_epilogue.cuh, lr_rows_side) */
    int i8;       /* Planes14S: 1 = the int8 tensor-core mode over the layout's int8 form
                     (lr_p14s_i8_form; x as 16-bit integers per super-chunk) */
    int c3;       /* Planes14S with i8: 1 = over the 3-bit form instead (lr_p14s_c3_form,
                     layouts/leech_vram/p14s_c3.h: 1,344-byte segments, 12-bit headers) */
    lr_leech_ends ends; /* Planes14S: what the GEMV does at its end and when it lets the next
                     kernel launch (not tuning knobs: its uploader's, lr_leech_dev_upload) */
} lr_leech_geom;

/* The grid of a Leech GEMV that loops over `batches` row-group batches:
 * one CTA per batch, or with persist > 0 at most persist CTAs per SM of the
 * current device (132 SMs without one); any grid is correct. */
unsigned lr_leech_batch_grid(int batches, int persist);

/* ---- Planes14, fragment order (templates/gemv_leech_p14.cu) ----
 * y[r] = row_scale[r] * sum_c w16[r][c] * x16[c] + sum_j tail[r][j] x[24 nblk + j]
 * where w16 = f16(|v| * s) signed (the class table's f16 scale s) and
 * x16 = f16(x): the reference emulates the kernel's two roundings and
 * accumulates in f64, so verify can hold a tight tolerance. */
extern const lr_kernel_desc lr_gemv_leech_p14_desc;
void lr_gemv_leech_p14_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                            const float *x, float *y, int32_t rows, int32_t cols);
void lr_gemv_leech_p14_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const float *x, float *y, int32_t rows, int32_t cols);
/* The weight the kernel multiplies at (row, col < 24 nblk), before the row
 * scale, decoded from the raw layout bytes exactly as the kernel does. */
float lr_gemv_leech_p14_weight(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int col);
/* The tuning table's entry for arm "leech_p14" (knobs threads, rpw = row
 * groups per CTA, extra0 = prefetch: -1 off, 0 default, 1 registers, k >= 2
 * ring stages; extra1 = persist CTAs per SM, -1/0 off), else 256 threads,
 * 1 row group, register prefetch. */
lr_leech_geom lr_gemv_leech_p14_default_geom(int rows, int cols);
int lr_gemv_leech_p14_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                           int smem_budget);
/* Verify tolerance (relative to sum |w x| of the row). One term of a row is
 * about 1 / cols of that sum, so 2e-4 (the first value) let a dropped
 * exception or a zeroed weight pass on 5120 x 17408; the measured errors are
 * 1e-8 to 9e-7 (every committed bench CSV), and the I8x and record kernels
 * already held 2e-5. */
#define LR_GEMV_LEECH_TOL 2e-5

extern const lr_gemv_arm lr_arm_leech_p14;

/* ---- I8x, int8 tensor cores (templates/gemv_leech_i8.cu) ----
 * y[r] = row_scale[r] * (sum_sc xs_sc sum_b s_b dot_b + sum_e dw_e x[col_e])
 *        + sum_j tail[r][j] x[24 nblk + j]
 * with dot_b the exact integer dot of the block's int8 weights and x's
 * 16-bit integers xi = rint(x * 2^k_sc), |xi| <= 32639: k_sc the power of two
 * putting m_sc = max |x| over the 192 columns of super-chunk sc into
 * (16319, 32639] (k in [-126, 126]), xs_sc = 2^-k_sc (0 when m_sc = 0). x
 * must be 16-byte aligned. The reference mirrors the quantization exactly and
 * accumulates in f64: the kernel differs by its f32 epilogue only. */
extern const lr_kernel_desc lr_gemv_leech_i8_desc;
void lr_gemv_leech_i8_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                           const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                           const uint8_t *xq, float *y, int32_t rows, int32_t cols);
void lr_gemv_leech_i8_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                               const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                               const uint8_t *xq, float *y, int32_t rows, int32_t cols);
/* The x quantizer of the LR_XQ=1 form (templates/gemv_leech_i8_xq.cu):
 * xq = per block the 64-byte int8 digit record (hi digits of k 0..31 then
 * lo, 8 bytes per lane quad q: k 4q..4q+3, 16+4q..16+4q+3; k >= 24 zero),
 * SC * 512 bytes, then the SC f32 scales 2^-k_sc. The GEMV's xq argument
 * (ignored by the references, which quantize x themselves, and by the
 * LR_XQ=0 kernel). */
extern const lr_kernel_desc lr_gemv_leech_i8_xq_desc;
void lr_gemv_leech_i8_xq_host(const float *x, uint8_t *xq, int32_t cols);
size_t lr_gemv_leech_i8_xq_bytes(int cols);
int lr_gemv_leech_i8_xq_spec(lr_jit_spec *s, lr_launch_geom *g, int cols, int threads);
/* x as the kernel quantizes it: xi[24 nblk rounded up to 192] and xs[sc]. */
void lr_gemv_leech_i8_quantize_x(const float *x, int cols, int32_t *xi, float *xs);
/* Tuning table "leech_i8" (threads, rpw = row groups per CTA, extra0 =
 * prefetch -1/0/1, extra1 = xq 0/1), else 256 threads, prefetch, x
 * quantized per CTA, 2 row groups per CTA from 8,448 rows (1 below). */
lr_leech_geom lr_gemv_leech_i8_default_geom(int rows, int cols);
int lr_gemv_leech_i8_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                          int smem_budget);
/* Verify tolerance relative to sum |w x| (f32 epilogue only). */
#define LR_GEMV_LEECH_I8_TOL 2e-5
/* Against exact dense f64 weights and exact x, for x uniform in [-1, 1]:
 * x's 15-16-bit quantization per 192 columns. For any x the bound is
 * 1e-6 sum |w x| + sum_c |w_c| xs_sc / 2 (half a step per element; a
 * super-chunk mixing 1e3 and 1e-6 reaches ~1e-4 of sum |w x|). */
#define LR_GEMV_LEECH_I8_DENSE_TOL 1e-4

/* Arguments for lr_call_* over a layout (exception arrays never empty; xq
 * NULL: a one-byte dummy, for the LR_XQ=0 kernel). */
void lr_gemv_leech_i8_args(lr_i8 *L, float *x, uint8_t *xq, float *y, lr_arg a[12]);

extern const lr_gemv_arm lr_arm_leech_i8;

/* ---- Planes14S, signed class table, permuted k (templates/gemv_leech_p14s.cu) ----
 * y[r] = row_scale[r] (sum_c w[r][c] f16(x_c) + sum_e dw_e x[col_e])
 *        + sum_j tail[r][j] x[24 nblk + j]
 * with w = v s exactly, v the pool value, s the entry's f32 block scale
 * (lr_p14s_kernel_block); the reference accumulates in f64, so verify
 * holds LR_GEMV_LEECH_TOL. */
/* Its kernel arguments (the GEMV, its controls and the SwiGLU end share them). */
/* (the 11 arguments; kernels with more, the rotated one, list them after) */
#define LR_P14S_PARAM_LIST                                                                                            \
    { "W", LR_T_PTR, LR_E_U8, LR_IN }, { "tab", LR_T_PTR, LR_E_U8, LR_IN }, { "row_scale", LR_T_PTR, LR_E_F32, LR_IN }, \
        { "tail", LR_T_PTR, LR_E_F16, LR_IN }, { "exc_ptr", LR_T_PTR, LR_E_U32, LR_IN },                              \
        { "exc_col", LR_T_PTR, LR_E_U32, LR_IN }, { "exc_dw", LR_T_PTR, LR_E_F32, LR_IN },                            \
        { "x", LR_T_PTR, LR_E_F32, LR_IN }, { "y", LR_T_PTR, LR_E_F32, LR_OUT }, { "rows", LR_T_I32, 0, 0 },           \
        { "cols", LR_T_I32, 0, 0 }
#define LR_P14S_PARAMS .nparams = 11, .params = { LR_P14S_PARAM_LIST }
extern const lr_kernel_desc lr_gemv_leech_p14s_desc;
void lr_gemv_leech_p14s_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                             const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                             float *y, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                 const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                 float *y, int32_t rows, int32_t cols);
/* The same GEMV over the int8 form (lr_p14s_i8_form, geometry i8): its
 * weights read through lr_p14s_i8_kernel_block, x quantized per super-chunk
 * as the kernel does (lr_gemv_leech_i8_quantize_x), f64 sums. */
extern const lr_kernel_desc lr_gemv_leech_p14s_i8_desc;
void lr_gemv_leech_p14s_i8_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                float *y, int32_t rows, int32_t cols);
/* The same over the 3-bit form (lr_p14s_c3_form, geometry c3): weights through
 * lr_p14s_c3_kernel_block, the form's own exception lists. */
extern const lr_kernel_desc lr_gemv_leech_p14s_c3_desc;
void lr_gemv_leech_p14s_c3_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                float *y, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_c3_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                    const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                                    const float *x, float *y, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_i8_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                    const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                                    const float *x, float *y, int32_t rows, int32_t cols);
/* Tuning table "leech_p14s" (threads, rpw = row groups per CTA, tile =
 * accumulator chains, extra0 = prefetch -1/1, minb), else 128 threads, one
 * row group, prefetch. */
lr_leech_geom lr_gemv_leech_p14s_default_geom(int rows, int cols);
/* The SwiGLU gate|up kernel's: tuning row "leech_p14s_swiglu" where the
 * table has one (its knobs over the defaults), else default_geom's. */
lr_leech_geom lr_gemv_leech_p14s_default_geom_swiglu(int rows, int cols);
/* The 3-bit form's (geometry c3): tuning rows "leech_p14s3" and
 * "leech_p14s3_swiglu" where the table has them, else the two above; c3 and
 * i8 set. */
lr_leech_geom lr_gemv_leech_p14s3_default_geom(int rows, int cols);
lr_leech_geom lr_gemv_leech_p14s3_default_geom_swiglu(int rows, int cols);
/* default_geom's early (see lr_leech_geom): 1 unless set by
 * lr_gemv_p14s_early_set (LEECHRT_GEMV_EARLY, 0, 1 or 2; garbage refused,
 * naming what), the engine's and bench_gemv's comparison switch. */
extern int lr_gemv_p14s_early;
int lr_gemv_p14s_early_set(const char *what, const char *s);
/* default_geom's side (see lr_leech_geom) where the tuning table does not
 * set it: 0 unless set by lr_gemv_p14s_side_set (LEECHRT_GEMV_SIDE, 0-4;
 * garbage refused, NULL or "" leaves it). */
extern int lr_gemv_p14s_side;
int lr_gemv_p14s_side_set(const char *what, const char *s);
/* With the split over segments (bal 2) the grid's last late_n CTAs (0: as
 * many as the rotation of the GEMV's input width has) get late % (25-100)
 * of another CTA's share, where every CTA keeps at least a row group's
 * segments (else equal shares). Why: in the engine's step the rotation
 * before each GEMV holds that many SMs when the GEMV launches under PDL,
 * so its last CTAs (blockIdx order) start after the others have their
 * class table and first segments. 100 here (equal shares: a GEMV after
 * a GEMV, as bench_gemv chains them); the GPU engine sets
 * LR_ENGINE_GEMV_LATE unless LEECHRT_GEMV_LATE / LEECHRT_GEMV_LATE_N say. */
extern int lr_gemv_p14s_late, lr_gemv_p14s_late_n;
#define LR_ENGINE_GEMV_LATE 70
int lr_gemv_p14s_late_set(const char *what, const char *s);
int lr_gemv_p14s_late_n_set(const char *what, const char *s);
/* The GPU engine's ends for each Leech projection (one place, so that
 * `cache warm` plans the kernels the engine opens): trig from the bit of
 * trig_mask the projection has (LR_ENGINE_GEMV_TRIGGER: bit 0 q|k|v, 1
 * gate|up, 2 down after the main loop; bit 3 o at its entry); with rres (a
 * rotated-residual model whose
 * GEMVs take its ends) the readers (q|k|v, gate|up) the norm with eps where
 * their norm's gains are all 1 (unit), the writers (o, down) the add. */
enum { LR_PROJ_QKV, LR_PROJ_O, LR_PROJ_GATEUP, LR_PROJ_DOWN, LR_PROJ_N };
/* LEECHRT_GEMV_TRIGGER's default: q|k|v and down let the op after them
 * launch after their main loop; gate|up at exit (its rotation then shares SMs
 * with its last CTAs and runs slower). 14B graph 2815-2826 against 2848-2856
 * us per token, 8B unchanged; 7 (gate|up too) 2871 (h200_engine_variants.csv). */
#define LR_ENGINE_GEMV_TRIGGER 5
/* ... and a rotated-residual model's: o too, at its entry (bit 3). There gate|up follows o
 * directly (no norm launch between them that launches it early), so it launched only when o's
 * last CTA left: 2.1 us from then to its first CTA past the wait, against 0.8 in the plain step
 * (timeline probe, 14B, 5253d54). With o's 107 CTAs on 132 SMs, gate|up's CTAs wait on the free
 * SMs and take the others as o's CTAs leave: 14B graph 2701-2702 against 2730-2738 us, 376.1-376.8
 * against 370.9-373.2 tok/s; 8B 1839 against 1881 us, 553.9 against 543.1 (one process each,
 * h200_engine_variants.csv, ba2c2b7). 4B and 32B ran with it at be4b44c (668.5 and 170.6
 * tok/s, h200_engine.csv), not timed against 5 in one process.
 * The plain step gains nothing from it (2829 against 2819). */
#define LR_ENGINE_GEMV_TRIGGER_RRES 13
/* the default mask for a model whose GEMVs take the rotated residual's ends (1) or not (0: a
 * plain model, or a rotated one under LEECHRT_RRES_ENDS=0 or LEECHRT_FUSE=0) */
#define LR_ENGINE_GEMV_TRIGGER_FOR(rres) ((rres) ? LR_ENGINE_GEMV_TRIGGER_RRES : LR_ENGINE_GEMV_TRIGGER)
lr_leech_ends lr_leech_engine_ends(int proj, int trig_mask, int rres, int unit, float eps);
/* LEECHRT_GEMV_L2W (KB per CTA, 0-4096, 0 = off, the default) and
 * LEECHRT_GEMV_L2W_MASK (the projections, bits as the trigger mask's; default
 * 4: down, the GEMV after the rotation, whose 8 CTAs leave the DRAM idle while
 * down's CTAs wait): lr_leech_engine_ends gives those projections ends.l2w.
 * Off by default (LR_ENGINE_GEMV_L2W) save where lr_gemv_p14s_l2w_device_defaults
 * below turns it on with a share cap. Why mask 4: on the H100 down's phase
 * gained (699 -> 668-677 us per token on 14B, 2fb4201) where o's and q|k|v's
 * lost (o 272 -> 324-353 us, e95e767; at the 40 % cap 258-260 -> 262, 7ea306e;
 * q|k|v 337 -> 349, 52234d9). Every run, per model and session, is in
 * docs/engine.md (from the forty-eighth session, "part of a GEMV's share asked
 * into L2 before its PDL wait") and h100_engine_variants.csv. Not yet run on
 * an H200.
 * Garbage refused. */
extern int lr_gemv_p14s_l2w, lr_gemv_p14s_l2w_mask;
#define LR_ENGINE_GEMV_L2W 0
#define LR_ENGINE_GEMV_L2W_MASK 4
int lr_gemv_p14s_l2w_set(const char *what, const char *s);
int lr_gemv_p14s_l2w_mask_set(const char *what, const char *s);
/* LEECHRT_GEMV_L2W_SHARE (1-100 %, default 100: no limit but the KB): the
 * same prefetch capped at that part of each CTA's share, so one setting
 * scales with the model. Why: on the H100 (19f7640, one process per model)
 * down's best KB were about 40 % of its CTAs' share in every model (4B: ~84
 * KB a CTA, 16 / 32 / 40 KB trimmed down 284 -> 275-278 us per token, 24 KB
 * 283, where 64 and 128 lengthened it to 296 and 311; 8B: ~171 KB, 64 best,
 * 419 -> 403-405; 14B: ~297 KB, 128 best, 714 -> 698), where a fixed KB
 * helps one model and hurts another. */
extern int lr_gemv_p14s_l2w_share;
#define LR_ENGINE_GEMV_L2W_SHARE 100
int lr_gemv_p14s_l2w_share_set(const char *what, const char *s);
/* The two as a device gets them before its environment is read (the engine
 * at each open, cache warm for its --device): on the devices where the
 * prefetch was measured to pay, on (no KB cap, 40 % of the share); else off
 * (LR_ENGINE_GEMV_L2W, LR_ENGINE_GEMV_L2W_SHARE). On: the H100 SXM ("NVIDIA
 * H100 80GB HBM3"), where 40 % ran 4B 611.7 / 619.9 tok/s against 607.3 /
 * 608.7 off, 8B 495.7 / 496.0 against 488.3 / 488.7, 14B 320.5 against 317.6
 * (fdfb23b, alternating in one process per model, h100_engine_variants.csv;
 * down's phase 285 -> 280, 419 -> 402, 715 -> 692 us per token); the default
 * at open against off on another H100 SXM (de1a77a, f4b1027): 14B 329.1 /
 * 328.1 against 326.9 / 326.1, 8B 504.5 / 504.6 against 496.9 / 496.8, 32B
 * 154.7 / 154.6 against 154.4 / 154.4, 4B within its repeats' spread. Not the
 * H200: measured there in the sixty-seventh session (c0e49d2, 14B, alternating
 * in one process, h200_engine_variants.csv) it slowed down's phase (582.5 /
 * 583.3 -> 592.6 / 595.3 us per token; 378.71 / 378.91 against 377.82 / 378.83
 * tok/s), and given to o or q|k|v instead it slowed those. device_name NULL: off. */
void lr_gemv_p14s_l2w_device_defaults(const char *device_name, int *kb, int *share);
/* The norm end's references (kernels/gemv_leech_p14s_resid.c) take their eps
 * from here (a host reference has only the kernel's arguments; the kernel
 * has eps in its spec): set it to the spec's before calling them. */
extern float lr_gemv_p14s_ref_norm_eps;
/* Their references: norm, res (y read and written), SwiGLU with the norm;
 * per form: f16, _i8, _c3. */
extern const lr_kernel_desc lr_gemv_leech_p14s_norm_desc, lr_gemv_leech_p14s_norm_i8_desc,
    lr_gemv_leech_p14s_norm_c3_desc, lr_gemv_leech_p14s_res_desc, lr_gemv_leech_p14s_res_i8_desc,
    lr_gemv_leech_p14s_res_c3_desc, lr_gemv_leech_p14s_swiglu_norm_desc, lr_gemv_leech_p14s_swiglu_norm_i8_desc,
    lr_gemv_leech_p14s_swiglu_norm_c3_desc;
/* 1 / sqrt(mean(x^2) + eps) in f64 */
double lr_gemv_p14s_norm_scale_ref(const float *x, int cols, double eps);
/* The SwiGLU reference of form 0 (f16), 1 (int8), 2 (3-bit): gate and up times
 * ns, then silu(g) u (mag 1: its error scale). */
void lr_gemv_leech_p14s_swiglu_ref(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                   const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                                   const float *x, float *h, int rows, int cols, int mag, int form, double ns);
/* default_geom's i8 (see lr_leech_geom) where the tuning table does not set
 * it: 0 unless set by lr_gemv_p14s_i8_set (LEECHRT_GEMV_I8, 0 or 1; garbage
 * refused, NULL or "" leaves it). */
extern int lr_gemv_p14s_i8;
int lr_gemv_p14s_i8_set(const char *what, const char *s);
/* The same for the 3-bit form (geometry c3, which implies i8):
 * LEECHRT_GEMV_C3 through lr_gemv_p14s_c3_set (0 or 1). */
extern int lr_gemv_p14s_c3;
int lr_gemv_p14s_c3_set(const char *what, const char *s);
/* A tuning row's or sweep candidate's knobs onto g (kernels/gemv_leech_p14s.c
 * says which knob is which). */
void lr_gemv_leech_p14s_apply_knobs(lr_leech_geom *g, const int k[LR_TUNE_KNOBS]);
int lr_gemv_leech_p14s_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                            int smem_budget);
/* The spec for *geom (swiglu: lr_gemv_leech_p14s_spec_swiglu's), or where a
 * tuned geometry needs more shared memory than smem_budget (a tuning row
 * measured under a larger budget, e.g. LEECHRT_SMEM_BUDGET on an H200), the
 * untuned default geometry in the same form (i8, c3) with the same ends;
 * *geom becomes what the spec was made for. lr_leech_dev_upload and `cache
 * warm` both choose through it. */
int lr_gemv_leech_p14s_spec_fit(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom *geom,
                                int smem_budget, int swiglu);
/* Arguments for lr_call_* over a layout (exception arrays never empty). */
void lr_gemv_leech_p14s_args(lr_p14s *L, float *x, float *y, lr_arg a[11]);
/* The gate|up GEMV ending in SwiGLU (kernels/gemv_leech_p14s_swiglu.c) over a
 * pair layout (lr_p14s.pair): h[i] = silu(y[2i]) y[2i + 1], rows / 2 outputs
 * (arguments as above, y -> h of rows / 2). The spec is the GEMV's with
 * swiglu=1; LR_EUNSUPPORTED when the geometry gives a row's end more than 16
 * threads, LR_EINVAL for odd rows. */
extern const lr_kernel_desc lr_gemv_leech_p14s_swiglu_desc;
extern const lr_kernel_desc lr_gemv_leech_p14s_swiglu_i8_desc; /* over the int8 form (geometry i8) */
extern const lr_kernel_desc lr_gemv_leech_p14s_swiglu_c3_desc; /* over the 3-bit form (geometry c3) */
void lr_gemv_leech_p14s_swiglu_c3_host(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                       const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                       const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_swiglu_c3_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                           const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                           const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_swiglu_i8_host(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                       const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                       const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_swiglu_i8_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                           const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                           const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_swiglu_host(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                    const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                    const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols);
void lr_gemv_leech_p14s_swiglu_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                        const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                        const float *exc_dw, const float *x, float *h, int32_t rows, int32_t cols);
int lr_gemv_leech_p14s_spec_swiglu(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab,
                                   lr_leech_geom geom, int smem_budget);
/* The GEMV with its input's incoherence rotation in the prologue
 * (kernels/gemv_leech_p14s_rot.c, template knob xrot): y = W (Q x), Q =
 * (Q_odd kron H_m) D from the rotation's tables (lr_rot.dbits and
 * lr_rot_qtable), so the engine needs no rotation launch before o and down.
 * Arguments: the GEMV's, then dbits and q. The spec is the GEMV's (x staged
 * in the prologue: xw becomes pro) with the f32 vector and the table added
 * to its shared memory; LR_EUNSUPPORTED when cols is no width the rotation
 * serves (lr_rot_factor), LR_ERANGE over the budget. */
extern const lr_kernel_desc lr_gemv_leech_p14s_rot_desc;
void lr_gemv_leech_p14s_rot_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                 const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                 float *y, int32_t rows, int32_t cols, const uint32_t *dbits, const float *q);
void lr_gemv_leech_p14s_rot_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale,
                                     const uint16_t *tail, const uint32_t *exc_ptr, const uint32_t *exc_col,
                                     const float *exc_dw, const float *x, float *y, int32_t rows, int32_t cols,
                                     const uint32_t *dbits, const float *q);
int lr_gemv_leech_p14s_spec_rot(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                                int smem_budget);
extern const lr_gemv_arm lr_arm_leech_p14s;
/* Benchmark control (template knob loadonly): the same segment loads and
 * geometry, no decode; y[r] = set bits of row r's row group. */
extern const lr_kernel_desc lr_gemv_leech_p14s_loads_desc;
extern const lr_gemv_arm lr_arm_leech_p14s_loads;
/* The other control (template knob decodeonly): the whole GEMV, every row
 * group reading row group 0's segments (L2-resident), verified as the GEMV
 * of a layout whose row groups all hold those codes. */
extern const lr_gemv_arm lr_arm_leech_p14s_decode;
/* the 3-bit form's arms (GEMV, loads-only and decode-only controls, SwiGLU gate|up) */
extern const lr_gemv_arm lr_arm_leech_p14s3, lr_arm_leech_p14s3_loads, lr_arm_leech_p14s3_decode, lr_arm_leech_p14s3_swiglu;
extern const lr_gemv_arm lr_arm_leech_p14s3_loads_nox, lr_arm_leech_p14s3_loads_nopro;
/* and the shared-memory control (template knob decodeonly 2): the weights
 * read from a per-warp copy in shared memory, over a layout whose segments
 * are all the same */
extern const lr_gemv_arm lr_arm_leech_p14s3_smem;
/* The row end's control (LR_NOEPI): the whole GEMV, its end without the
 * exceptions', tail's and row scales' loads, over a layout that has none. */
extern const lr_gemv_arm lr_arm_leech_p14s_noepi;
/* The engine's gate|up: the pair layout's GEMV ending in SwiGLU (rows =
 * gate + up rows, y = rows / 2 values), verified against the SwiGLU
 * reference; tuning rows "leech_p14s_swiglu". */
extern const lr_gemv_arm lr_arm_leech_p14s_swiglu;

/* ---- Engine API: Leech tensors of the artifact as one device matrix ----
 * lr_leech_dev_upload unfolds one or more Leech tensor views with the same
 * columns, ball and gain width (q|k|v, gate|up: rows concatenated in order,
 * any row counts; each keeps its own gain centroids, see
 * layouts/leech_vram/p14.h and p14s.h) into `layout` (LR_LEECH_DEV_*;
 * DEFAULT: lr_leech_dev_default_layout) with nthreads threads (0 = all
 * cores), uploads it in one copy (rt/cu.h) and gets the kernel for the
 * current device (geometry from the tuning table, arm "leech_p14s" or
 * "leech_p14").
 * LR_EINVAL naming the tensors for mismatched gain widths, columns, balls
 * or codecs. Input rotations are the engine's business (applied to x
 * before the call): lr_leech_dev_rotation says whether one x can feed all
 * parts.
 * lr_leech_dev_gemv enqueues y = W x on s: x f32 [cols], y f32 [rows] (the
 * parts' outputs back to back), device pointers; no allocation, no sync:
 * graph-capturable. Concurrent launches on distinct streams are fine. */
typedef struct lr_leech_dev lr_leech_dev;
/* P14S3: Planes14S's 3-bit form (layouts/leech_vram/p14s_c3.h), the same
 * blocks in ~3.6 bits per weight, read by the GEMV's int8 mode. */
enum { LR_LEECH_DEV_DEFAULT = 0, LR_LEECH_DEV_P14 = 1, LR_LEECH_DEV_P14S = 2, LR_LEECH_DEV_P14S3 = 3 };
/* The layout DEFAULT means for a (fused) shape: the 3-bit form where the
 * tuning table has a "leech_p14s3" row for it on the current device (the
 * 14B engine: 315 against 307 tok/s, 6.8 against 8.7 GB per token),
 * Planes14S where it has a "leech_p14s" row (the 14B engine ran 8% faster
 * on it than on Planes14), Planes14 elsewhere (on the untuned 4B and 8B
 * shapes Planes14S ran 3-4% slower inside the step). */
int lr_leech_dev_default_layout(int rows, int cols);
/* "planes14", "planes14s", "planes14s3"; NULL for anything else. */
const char *lr_leech_dev_layout_name(int layout);
/* ends: the GEMV's (lr_leech_ends; NULL: the plain end). A layout without
 * them (Planes14) ignores them, and trig needs a split geometry:
 * lr_leech_dev_trig and lr_leech_dev_mode say what the upload got. */
int lr_leech_dev_upload(const lr_tensor_view *const *parts, int nparts, int nthreads, int layout,
                        const lr_leech_ends *ends, lr_leech_dev **out);
int lr_leech_dev_layout(const lr_leech_dev *m);
/* 1: its GEMV lets its dependents launch after its main loop (spec `trig`:
 * ends.trig on a split geometry). */
int lr_leech_dev_trig(const lr_leech_dev *m);
/* Its GEMV's end: bit 0 the norm (spec `norm`), bit 1 the residual add (spec
 * `res`); 0 for the plain end and for layouts without them (Planes14). */
int lr_leech_dev_mode(const lr_leech_dev *m);
/* gate and up (equal rows) as one Planes14S pair (lr_p14s.pair) whose GEMV
 * writes h = silu(gate x) (up x), rows / 2 values: the engine's SwiGLU
 * without a launch of its own (kernels/gemv_leech_p14s_swiglu.c), in layout
 * P14S or P14S3 (DEFAULT: lr_leech_dev_default_layout; LR_EINVAL for P14).
 * LR_EUNSUPPORTED when the shape's tuned geometry gives a row's end more
 * than 16 threads (then upload the two as usual). */
int lr_leech_dev_upload_swiglu(const lr_tensor_view *const gate_up[2], int nthreads, int layout,
                               const lr_leech_ends *ends, lr_leech_dev **out);
int lr_leech_dev_gemv(const lr_leech_dev *m, CUdeviceptr x, CUdeviceptr y, CUstream s);
/* The GEMV with its input's rotation in the prologue (Planes14S, not a
 * SwiGLU pair: lr_gemv_leech_p14s_spec_rot): enable gets its kernel
 * (LR_EUNSUPPORTED for another layout or a width the rotation does not
 * serve, LR_ERANGE over the shared-memory budget: then rotate separately);
 * gemv_rot enqueues y = W (Q x) with Q's device tables (lr_rot_dev.dbits,
 * .q). Idempotent. */
int lr_leech_dev_enable_rot(lr_leech_dev *m);
int lr_leech_dev_gemv_rot(const lr_leech_dev *m, CUdeviceptr x, CUdeviceptr y, CUdeviceptr dbits, CUdeviceptr q,
                          CUstream s);
/* Device bytes held (the whole image: records, class tables, scales, tail). */
size_t lr_leech_dev_bytes(const lr_leech_dev *m);
int lr_leech_dev_rows(const lr_leech_dev *m);
int lr_leech_dev_cols(const lr_leech_dev *m);
/* Row where part i starts (i = nparts: total rows). */
int lr_leech_dev_part_row(const lr_leech_dev *m, int i);
/* The parts' shared input rotation; LR_EINVAL (naming two tensors) when
 * they differ, i.e. when the concatenation cannot be fed one x. */
int lr_leech_dev_rotation(const lr_leech_dev *m, int *kind, uint64_t *seed);
/* The launch geometry in use. */
lr_leech_geom lr_leech_dev_geom(const lr_leech_dev *m);
void lr_leech_dev_free(lr_leech_dev *m);

#endif
