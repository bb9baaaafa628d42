/* The incoherence rotation x' = Q x, Q = (Q_odd kron H_m) D, that every
 * projection applies to its input (weights are stored in the rotated basis).
 *
 * Index convention (docs/rotation.md): n = k*m, m the largest power of two
 * dividing n, k = n/m odd. x is viewed as a k x m matrix X, row-major
 * (element i = r*m + c is row r, column c). Then
 *     X' = Q_odd * (H_m applied to each row of (D x))
 * i.e. apply the signs D, then the orthonormal Walsh-Hadamard transform
 * (Sylvester order, entry (-1)^popcount(c&c') / sqrt(m)) to each of the k rows,
 * then mix the rows with Q_odd: X'[r][c] = sum_r' Q_odd[r][r'] Z[r'][c].
 *
 * Generation from a 64-bit seed (util/rng.h, xoshiro256** seeded by
 * SplitMix64): one u64 per 64 signs (bit b of draw c -> element 64c+b, set =
 * -1), then, for k > 1, k*k Gaussians row-major into G and Q_odd = the Q of
 * G's QR factorisation by modified Gram-Schmidt on the columns (twice, f64),
 * so R has a positive diagonal. k = 1: Q_odd = [1], no Gaussians drawn.
 *
 * Host code here is f64 and needs no GPU; GPU paths (plans, specs, device
 * state, the fused GEMV) are declared below and live in rotation_gpu.c. */
#ifndef LR_ROTATION_H
#define LR_ROTATION_H
#include "jit/spec.h"
#include "kernels/kernels.h"
#include "rt/call.h"

#include <stdint.h>

#define LR_ROT_MAX_K 31      /* largest odd factor served */
#define LR_ROT_MIN_M 4       /* rows are handled as float4 */
#define LR_ROT_MAX_M 32768

/* ---- host reference (f64) ---- */
typedef struct lr_rot {
    int n, m, k;     /* m, k: the factors of block */
    int block;       /* n (the whole vector) or the width of each diagonal block */
    uint64_t seed;
    uint32_t *dbits; /* ceil(n/32) words: bit i of word w set = element 32w+i negated */
    double *qodd;    /* k*k, row-major, orthogonal */
} lr_rot;

/* m = largest power of two dividing n, k = n/m. LR_EUNSUPPORTED outside
 * k <= LR_ROT_MAX_K, LR_ROT_MIN_M <= m <= LR_ROT_MAX_M. */
int lr_rot_factor(int n, int *m, int *k);
/* The rotation seed of every projection whose input has `width` columns in a
 * model made from `model_seed`: one seed per input width, so projections that
 * share an input (q|k|v, gate|up) share one rotation and can be fused. */
uint64_t lr_rot_seed_for_width(uint64_t model_seed, uint64_t width);
int lr_rot_init(lr_rot *r, int n, uint64_t seed);
/* The per-head rotation (artifact rotation kind 2): Q = (I_{n/block} kron
 * (Q_odd kron H_m)) D, block = k*m. D is drawn over all n exactly as
 * lr_rot_init draws it (so the signs are kind 1's for the same seed and n),
 * then Q_odd for block's k. Every block is mixed only within itself, so a
 * kernel that holds one attention head can apply it (op_rope_attention).
 * lr_rot_apply, _apply_t and _dense serve both; lr_rot_qtable gives the
 * block's table. LR_EINVAL unless block divides n; block's factors as
 * lr_rot_factor. */
int lr_rot_init_blocks(lr_rot *r, int n, int block, uint64_t seed);
void lr_rot_free(lr_rot *r);
/* -1 or +1 for element i. */
static inline int lr_rot_sign(const lr_rot *r, int i) { return (r->dbits[i >> 5] >> (i & 31)) & 1 ? -1 : 1; }
/* y = Q x and y = Q^T x (the quantizer's inverse); x and y may alias. */
int lr_rot_apply(const lr_rot *r, const double *x, double *y);
int lr_rot_apply_t(const lr_rot *r, const double *x, double *y);
/* In-place unnormalised Walsh-Hadamard transform (Sylvester order) of v[m]. */
void lr_fwht(double *v, int m);
/* Dense n x n Q, row-major (tests, small n). */
int lr_rot_dense(const lr_rot *r, double *q);
/* Tables the kernels take: Q_odd / sqrt(m) as f32, k*k row-major. */
void lr_rot_qtable(const lr_rot *r, float *q);

/* ---- kernels: descriptors and their f64 host references ----
 * rotate: y[b] = (q kron Hu_m) D x[b] for b < batch, with Hu_m the
 * unnormalised Hadamard (q already carries 1/sqrt(m)); x, y f32 [batch][n]. */
extern const lr_kernel_desc lr_rotate_desc;
void lr_rotate_host(const float *x, float *y, const uint32_t *dbits, const float *q, int32_t n, int32_t batch);
/* Error scale of output i: sqrt(sum_j (Q_ij x_j)^2), the l2 size of the terms. */
void lr_rotate_host_mag(const float *x, float *y, const uint32_t *dbits, const float *q, int32_t n, int32_t batch);

/* One row on the kernels' tables, f64 in and out: out = (q kron Hu_m) D x, or
 * with mag the l2 size of the terms, sqrt(sum_j (Q_ij x_j)^2). */
void lr_rotate_row_f64(const double *x, double *out, const uint32_t *dbits, const float *q, int n, int mag);

/* gemv_f16_rot: y = W (Q x), W f16 [rows][cols], cols = n of the rotation. */
extern const lr_kernel_desc lr_gemv_f16_rot_desc;
void lr_gemv_f16_rot_host(const uint16_t *W, const float *x, float *y, const uint32_t *dbits, const float *q,
                          int32_t rows, int32_t cols);
void lr_gemv_f16_rot_host_mag(const uint16_t *W, const float *x, float *y, const uint32_t *dbits, const float *q,
                              int32_t rows, int32_t cols);

/* ---- the rotation with its input made at the gather (rotation_xform.c) ----
 * rotate_slab.cu's LR_XFORM: the op before a rotated projection runs inside
 * the rotation kernel instead of as its own launch.
 *   LR_ROT_X_NORM (residual add + RMSNorm, before q|k|v and gate|up):
 *     v = x + add (add may be null: v = x) is written to xsum, and
 *     y = Q (v * w) * rsqrt(mean(v^2) + eps). xsum must not be x (every CTA
 *     reads all of x while some write xsum); each element of xsum is written
 *     by exactly one CTA. x, add, xsum, y [batch][n]; w [n]. */
enum { LR_ROT_X_PLAIN = 0, LR_ROT_X_NORM = 1, LR_ROT_NX };
extern const lr_kernel_desc lr_rotate_norm_desc;
void lr_rotate_norm_host(const float *x, const float *add, const float *w, float *xsum, float *y,
                         const uint32_t *dbits, const float *q, int32_t n, int32_t batch, float eps);
/* xsum: |v|; y: the l2 size of the terms of Q applied to the normed input. */
void lr_rotate_norm_host_mag(const float *x, const float *add, const float *w, float *xsum, float *y,
                             const uint32_t *dbits, const float *q, int32_t n, int32_t batch, float eps);

/* ---- launch planning (no GPU needed) ----
 * single: one CTA per row of the batch holds the whole f32 vector in shared
 *   memory (n*4 + k*k*4 bytes must fit the budget).
 * slab: m/s CTAs per row; CTA j computes output columns [j*s, (j+1)*s) of
 *   every one of the k rows. It reads all of x (from L2), folds the top
 *   log2(m/s) Hadamard bits into a signed sum, transforms s columns, mixes
 *   the k rows. Shared memory k*s*4 + k*k*4 bytes: fits any budget >= ~4.4 KB. */
enum { LR_ROT_AUTO = 0, LR_ROT_SINGLE = 1, LR_ROT_SLAB = 2 };
typedef struct lr_rot_plan {
    int n, m, k;
    int mode;      /* LR_ROT_SINGLE or LR_ROT_SLAB */
    int s;         /* columns per CTA (s == m for single) */
    int ctas;      /* m / s CTAs per batch row */
    int threads;   /* per CTA */
    int unroll;    /* 16-byte loads in flight per thread in the gather */
    unsigned smem; /* dynamic shared memory bytes */
} lr_rot_plan;
const char *lr_rot_mode_name(int mode);
/* The most 16-byte loads in flight per thread in a slab gather (its CTAs,
 * m/s, at most): 16 by default (every load of a 16-CTA slab, 25600 or 27648, in flight at
 * once: the 14B engine's 17408 rotations cost 168 against 189-192 us per
 * token at 8, h200_engine_variants.csv, 342cfc7); the engine reads
 * LEECHRT_ROT_UNROLL (1..16)
 * through lr_rot_unroll_set (garbage refused, naming what; unset keeps it).
 * Process-wide, read by lr_rot_plan_make. */
extern int lr_rot_unroll_max;
int lr_rot_unroll_set(const char *what, const char *s);
/* Slab widths per vector width ahead of the default plan, for measuring them
 * inside the engine's step: "WIDTH:SLAB[;WIDTH:SLAB...]" (the engine reads
 * LEECHRT_ROT_SLAB; ';' as in LEECHRT_TUNE, so bench_engine --env can list
 * values), at most LR_ROT_SLAB_MAX distinct widths, SLAB a power of
 * two; whether it suits the width is lr_rot_plan_make's to say. Garbage is
 * refused naming what; NULL (unset) clears the list. lr_rot_slab_for: the
 * width's slab, 0 (the default plan) where the list has none. */
#define LR_ROT_SLAB_MAX 8
int lr_rot_slab_set(const char *what, const char *s);
int lr_rot_slab_for(int n);
/* mode AUTO picks slab (see docs/rotation.md); s, threads 0 = default.
 * LR_ERANGE when the requested mode cannot fit the budget. */
int lr_rot_plan_make(int n, int smem_budget, int mode, int s, int threads, lr_rot_plan *p);
int lr_rot_plan_spec(const lr_rot_plan *p, lr_jit_spec *s);
lr_launch_geom lr_rot_plan_geom(const lr_rot_plan *p, int batch);
/* The same plan with input transform xform (LR_ROT_X_*): the spec adds
 * xform (none for LR_ROT_X_PLAIN: the plain kernel keeps its name), the
 * shared memory 32 floats for LR_ROT_X_NORM's reduction. */
int lr_rot_plan_spec_xform(const lr_rot_plan *p, int xform, lr_jit_spec *s);
unsigned lr_rot_xform_smem(const lr_rot_plan *p, int xform);
lr_launch_geom lr_rot_xform_geom(const lr_rot_plan *p, int xform, int batch);
/* Dynamic shared memory a fused GEMV needs (0 when n is not served). */
unsigned lr_gemv_f16_rot_smem(int cols);
/* The fused GEMV (rotation prologue in every CTA, then the FP16 GEMV over a
 * grid-stride loop of row groups). LR_ERANGE when the vector does not fit
 * the budget: callers fall back to rotate + gemv_f16. Uses geom's threads,
 * rpw, unroll, ksplit (x is always in shared memory: tile/xsmem ignored).
 * ctas 0 = 2 per SM of a 132-SM card. */
int lr_gemv_f16_rot_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, lr_gemv_geom geom, int smem_budget,
                         int ctas);

/* ---- device state: what the engine holds per rotation ---- */
typedef struct lr_rot_dev {
    lr_rot_plan plan;
    CUdeviceptr dbits, q; /* the kernels' tables */
    CUfunction fn;
    CUfunction fx[LR_ROT_NX]; /* input-transform variants, once enabled (fx[0] unused) */
} lr_rot_dev;
/* r's tables on the device as the kernels take them: dbits (its sign words)
 * and q (lr_rot_qtable, k*k floats); freed with lr_cu_free. For the
 * per-head rotation the attention kernels apply (no kernel plan serves
 * blocks), and for lr_rot_dev_create. */
int lr_rot_dev_tables(const lr_rot *r, CUdeviceptr *dbits, CUdeviceptr *q);
/* Uploads r's tables and gets the kernel for the current device under the
 * current lr_cu_smem_budget(). */
int lr_rot_dev_create(lr_rot_dev *d, const lr_rot *r, int mode, int s, int threads);
/* y = Q x for `batch` rows of n floats (graph-capturable). x != y, both
 * 16-byte aligned (rows are read and written as float4). */
int lr_rot_dev_launch(const lr_rot_dev *d, CUdeviceptr x, CUdeviceptr y, int batch, CUstream st);
/* Gets the kernel of input transform xform (LR_ROT_X_NORM) on the
 * same plan and tables; LR_ERANGE when its shared memory exceeds the budget
 * (the separate launches still run). Idempotent. */
int lr_rot_dev_enable(lr_rot_dev *d, int xform);
/* y = Q (rmsnorm(x + add) * w), x + add into xsum (LR_ROT_X_NORM above;
 * add 0 = none). Same alignment rules; xsum distinct from x, add and y. */
int lr_rot_dev_launch_norm(const lr_rot_dev *d, CUdeviceptr x, CUdeviceptr add, CUdeviceptr w, CUdeviceptr xsum,
                           float eps, CUdeviceptr y, int batch, CUstream st);
void lr_rot_dev_destroy(lr_rot_dev *d);
/* lr_call_verify of the kernel on fresh random x (seeded), then the GPU
 * output against lr_rot_apply from the seed (f64). Worst error in *err. */
int lr_rot_dev_verify(const lr_rot_dev *d, const lr_rot *r, int batch, uint64_t seed, double tol, double *err);

/* ---- projections fed by one rotation: the two ways to time ----
 * A group is the row-concatenation of the matrices that read the same input
 * (q|k|v or gate|up): one rotation launch + one GEMV (separate), or one
 * gemv_f16_rot launch (fused). Arms "rot+gemv" and "gemv_rot". */
typedef struct lr_rot_proj {
    int fused, rows, cols, copies;
    lr_rot_dev rot;       /* separate: the rotation */
    CUfunction gemv;      /* gemv_f16 (separate) or gemv_f16_rot (fused) */
    lr_launch_geom g;
    CUdeviceptr w, xr;    /* copies x rows x cols f16; rotated x scratch */
    uint16_t *host_w;
} lr_rot_proj;
int lr_rot_proj_create(lr_rot_proj *p, const lr_rot *r, int rows, int copies, int fused, uint64_t seed);
int lr_rot_proj_launch(const lr_rot_proj *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st);
/* Verifies copy 0 on fresh x against the f64 reference (rotation + GEMV). */
int lr_rot_proj_verify(const lr_rot_proj *p, const lr_rot *r, uint64_t seed, double *err);
void lr_rot_proj_destroy(lr_rot_proj *p);

#endif
