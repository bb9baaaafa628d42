/* Planes14S GEMV: descriptor, host references (the raw layout bytes decoded
 * the way the kernel decodes them, layouts/leech_vram/p14s_view.c; f64
 * accumulation), specialization and the benchmark arm. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "util/setting.h"
#include "kernels/leech_arm_img.h"
#include "kernels/leech_arm_model.h"
#include "kernels/rotation.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech_vram/random.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const lr_kernel_desc lr_gemv_leech_p14s_desc = {
    .name = "gemv_leech_p14s",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)lr_gemv_leech_p14s_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_host_mag,
};

typedef struct {
    const uint8_t *W, *tab;
    const float *row_scale, *exc_dw, *x;
    const uint16_t *tail;
    const uint32_t *exc_ptr, *exc_col;
    float *y;
    int rows, cols, mag;
    const int32_t *xi; /* the int8 mode: x as the kernel quantizes it, */
    const float *xs;   /* and its scale per super-chunk; NULL: the f16 form */
    int c3;            /* the int8 mode over the 3-bit form (else the int8 form) */
} ref_job;

/* y[r] = row_scale[r] (sum_c w_c f16(x_c) + sum_e dw_e x[col_e]) + tail . x,
 * w = the kernel's exact v s (lr_p14s_kernel_block), in f64 (|terms| for the
 * magnitude form). */
static int ref_rows(void *ctx, int r0, int r1)
{
    const ref_job *j = ctx;
    int nblk = j->cols / 24, nt = j->cols % 24, mag = j->mag;
    for (int r = r0; r < r1; r++) {
        double s = 0;
        for (int b = 0; b < nblk; b++) {
            float w[24];
            if (j->xi) {
                (j->c3 ? lr_p14s_c3_kernel_block : lr_p14s_i8_kernel_block)(j->W, j->tab, j->rows, j->cols, r, b, w);
                for (int k = 0; k < 24; k++) {
                    double v = (double)w[k] * j->xi[24 * b + k] * j->xs[b / 8];
                    s += mag ? fabs(v) : v;
                }
                continue;
            }
            lr_p14s_kernel_block(j->W, j->tab, j->rows, j->cols, r, b, w);
            for (int k = 0; k < 24; k++) {
                double v = (double)w[k] * lr_half_to_float(lr_float_to_half(j->x[24 * b + k]));
                s += mag ? fabs(v) : v;
            }
        }
        j->y[r] = lr_leech_ref_row_end(s, r, j->exc_ptr, j->exc_col, j->exc_dw, j->tail, nt, j->x, 24 * nblk,
                                       j->row_scale, mag);
    }
    return 0;
}

static void gemv(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                 const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x, float *y,
                 int rows, int cols, int mag)
{
    ref_job j = { W, tab, row_scale, exc_dw, x, tail, exc_ptr, exc_col, y, rows, cols, mag, NULL, NULL, 0 };
    lr_parallel_ranges(rows, 64, ref_rows, &j);
}

static void gemv_i8(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                    const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x, float *y,
                    int rows, int cols, int mag, int c3)
{
    const size_t sc_n = (size_t)(cols / 24 + 7) / 8;
    int32_t *xi = malloc(sizeof(int32_t) * sc_n * 192);
    float *xs = malloc(sizeof(float) * sc_n);
    if (!xi || !xs) { /* no output: the comparison reports the rows unwritten */
        free(xi), free(xs);
        return;
    }
    lr_gemv_leech_i8_quantize_x(x, cols, xi, xs);
    ref_job j = { W, tab, row_scale, exc_dw, x, tail, exc_ptr, exc_col, y, rows, cols, mag, xi, xs, c3 };
    lr_parallel_ranges(rows, 64, ref_rows, &j);
    free(xi), free(xs);
}

void lr_gemv_leech_p14s_i8_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                float *y, int32_t rows, int32_t cols)
{
    gemv_i8(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 0, 0);
}

void lr_gemv_leech_p14s_i8_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                    const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                                    const float *x, float *y, int32_t rows, int32_t cols)
{
    gemv_i8(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 1, 0);
}

const lr_kernel_desc lr_gemv_leech_p14s_i8_desc = {
    .name = "gemv_leech_p14s",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)lr_gemv_leech_p14s_i8_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_i8_host_mag,
};

void lr_gemv_leech_p14s_c3_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                float *y, int32_t rows, int32_t cols)
{
    gemv_i8(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 0, 1);
}

void lr_gemv_leech_p14s_c3_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                    const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                                    const float *x, float *y, int32_t rows, int32_t cols)
{
    gemv_i8(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 1, 1);
}

const lr_kernel_desc lr_gemv_leech_p14s_c3_desc = {
    .name = "gemv_leech_p14s",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)lr_gemv_leech_p14s_c3_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14s_c3_host_mag,
};

void lr_gemv_leech_p14s_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                             const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                             float *y, int32_t rows, int32_t cols)
{
    gemv(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 0);
}

void lr_gemv_leech_p14s_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                 const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                                 float *y, int32_t rows, int32_t cols)
{
    gemv(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 1);
}

/* ---- the loads-only control (LR_LOADONLY): y[r] = set bits of row r's
 * row group (its SC segments, headers and code words) ---- */

static void set_bits(const uint8_t *W, float *y, int32_t rows, int32_t cols, size_t seg)
{
    size_t per = (size_t)((cols / 24 + 7) / 8) * seg;
    for (int g = 0; g < (rows + 15) / 16; g++) {
        uint64_t bits = 0;
        for (size_t i = 0; i < per; i++) bits += (uint64_t)__builtin_popcount(W[(size_t)g * per + i]);
        for (int r = 16 * g; r < rows && r < 16 * g + 16; r++) y[r] = (float)bits;
    }
}

static void loads_ref(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                      const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                      float *y, int32_t rows, int32_t cols)
{
    (void)tab, (void)row_scale, (void)tail, (void)exc_ptr, (void)exc_col, (void)exc_dw, (void)x;
    set_bits(W, y, rows, cols, LR_P14S_SEG);
}

static void loads_ref_c3(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                         const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                         float *y, int32_t rows, int32_t cols)
{
    (void)tab, (void)row_scale, (void)tail, (void)exc_ptr, (void)exc_col, (void)exc_dw, (void)x;
    set_bits(W, y, rows, cols, LR_P14S_C3_SEG);
}

const lr_kernel_desc lr_gemv_leech_p14s_loads_desc = {
    .name = "gemv_leech_p14s_loads",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)loads_ref,
    .host_mag = (lr_host_fn)loads_ref,
};

static const lr_kernel_desc loads_c3_desc = {
    .name = "gemv_leech_p14s_loads",
    LR_P14S_PARAMS,
    .host = (lr_host_fn)loads_ref_c3,
    .host_mag = (lr_host_fn)loads_ref_c3,
};

/* The knobs of a tuning-table row or a sweep candidate onto a geometry, in
 * the table's order {threads, rpw = row groups, unroll (2 = right shifts by
 * IMAD.HI), tile = accumulator chains, extra0 = prefetch, extra1 = persist,
 * minb, extra2 = (unused), extra3 = bit 0: x staged per warp, bit 1: the
 * row epilogue fetched ahead (1 xw, 2 epf, 3 both), bits 3-6: warp groups
 * per CTA (e.g. 48 = 6 groups), bit 9: the balanced split (bal 1), bit 10:
 * the same with row groups split between neighbouring CTAs (bal 2), bit 11:
 * with either, segments dealt round-robin to the warps (ilv), bit 12: the
 * prologue's x loads batched ahead of the table loop (pro), bits 16-18:
 * side warps (side, 0-4), bit 19: the int8 mode (i8), bit 20: the int8
 * mode over the 3-bit form (c3, sets i8 too), extra4 = (unused)}: 0
 * keeps the geometry's value, a negative extra turns its feature off.
 * (extra2, extra3 bits 2, 7, 8, 13, 14, 15 and 24 and extra4 were the L2
 * prefetch distance, x's f16 copy from global memory, the class table's
 * lane copies, the ping-pong segment registers, batches handed out by a
 * counter (02db962), the round-robin walk started at a point of its own per
 * CTA (ilv 2, f851ed0), the segments stored in the warp groups' walk order
 * (433b397), two round-robin walks per warp (af28064) and the split over
 * CTAs: measured slower or no faster and
 * removed; lr_tuning_engine_runs keeps their sweep rows out of the table.) */
void lr_gemv_leech_p14s_apply_knobs(lr_leech_geom *g, const int k[LR_TUNE_KNOBS])
{
    if (k[0]) g->threads = k[0];
    if (k[1]) g->rg = k[1];
    if (k[2]) g->shr = k[2] == 2;
    if (k[3]) g->nacc = k[3];
    if (k[4]) g->prefetch = k[4] > 0 ? k[4] : 0;
    if (k[5]) g->persist = k[5] > 0 ? k[5] : 0;
    if (k[6]) g->minb = k[6];
    if (k[8]) {
        g->xw = k[8] > 0 && (k[8] & 1), g->epf = k[8] > 0 && (k[8] & 2);
        g->groups = k[8] > 0 ? (k[8] >> 3) & 15 : 0;
        g->bal = k[8] > 0 ? ((k[8] & 1024) ? 2 : (k[8] & 512) ? 1 : 0) : 0;
        g->ilv = k[8] > 0 && (k[8] & 2048);
        g->pro = k[8] > 0 && (k[8] & 4096);
        /* (no i8 bit: the default, LEECHRT_GEMV_I8, stays) */
        if (k[8] < 0) g->i8 = g->c3 = 0;
        else if (k[8] & 1048576) g->i8 = g->c3 = 1;
        else if (k[8] & 524288) g->i8 = 1;
        /* (no side bits: the default, LEECHRT_GEMV_SIDE, stays) */
        if (k[8] < 0) g->side = 0;
        else if ((k[8] >> 16) & 7) g->side = (k[8] >> 16) & 7;
    }
}

int lr_gemv_p14s_early = 1;

int lr_gemv_p14s_early_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 2, &lr_gemv_p14s_early); }

int lr_gemv_p14s_side = 0;

int lr_gemv_p14s_side_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 4, &lr_gemv_p14s_side); }

int lr_gemv_p14s_late = 100, lr_gemv_p14s_late_n = 0;
float lr_gemv_p14s_ref_norm_eps = 0.f;

lr_leech_ends lr_leech_engine_ends(int proj, int trig_mask, int rres, int unit, float eps)
{
    lr_leech_ends e = { 0, 0, 0.f, 0, 100 };
    const int bit = proj == LR_PROJ_QKV ? 1 : proj == LR_PROJ_GATEUP ? 2 : proj == LR_PROJ_DOWN ? 4 : 8;
    e.trig = !(trig_mask & bit) ? 0 : proj == LR_PROJ_O ? 2 : 1;
    const int reader = proj == LR_PROJ_QKV || proj == LR_PROJ_GATEUP;
    if (rres && reader && unit) e.norm_eps = eps;
    if (rres && !reader) e.res = 1;
    if (lr_gemv_p14s_l2w_mask & bit) e.l2w = lr_gemv_p14s_l2w, e.l2wp = lr_gemv_p14s_l2w_share;
    return e;
}

int lr_gemv_p14s_l2w = LR_ENGINE_GEMV_L2W, lr_gemv_p14s_l2w_mask = LR_ENGINE_GEMV_L2W_MASK;

int lr_gemv_p14s_l2w_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 4096, &lr_gemv_p14s_l2w); }

int lr_gemv_p14s_l2w_mask_set(const char *what, const char *s)
{
    return lr_setting_int(what, s, 0, 15, &lr_gemv_p14s_l2w_mask);
}

int lr_gemv_p14s_l2w_share = LR_ENGINE_GEMV_L2W_SHARE;

int lr_gemv_p14s_l2w_share_set(const char *what, const char *s)
{
    return lr_setting_int(what, s, 1, 100, &lr_gemv_p14s_l2w_share);
}

void lr_gemv_p14s_l2w_device_defaults(const char *device_name, int *kb, int *share)
{
    /* a name prefix, as the tuning table's: the SXM card only (the PCIe one, "NVIDIA H100 PCIe",
       has about 60% of its bandwidth and was not measured) */
    static const char on[] = "NVIDIA H100 80GB HBM3";
    const int yes = device_name && !strncmp(device_name, on, sizeof on - 1);
    *kb = yes ? 4096 : LR_ENGINE_GEMV_L2W;
    *share = yes ? 40 : LR_ENGINE_GEMV_L2W_SHARE;
}

int lr_gemv_p14s_late_set(const char *what, const char *s) { return lr_setting_int(what, s, 25, 100, &lr_gemv_p14s_late); }

int lr_gemv_p14s_late_n_set(const char *what, const char *s)
{
    return lr_setting_int(what, s, 0, 64, &lr_gemv_p14s_late_n);
}

/* The split's CTA c share start under the late weighting (the template's
 * split_start): the last late_n of G CTAs weigh pct % of the others. */
static long long split_start(int c, int G, int late_n, int pct, long long T)
{
    const int e = G - late_n;
    const long long w = c <= e ? 100LL * c : 100LL * e + (long long)pct * (c - e);
    return T * w / (100LL * e + (long long)pct * late_n);
}

int lr_gemv_p14s_i8 = 0;

int lr_gemv_p14s_i8_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 1, &lr_gemv_p14s_i8); }

int lr_gemv_p14s_c3 = 0;

int lr_gemv_p14s_c3_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 1, &lr_gemv_p14s_c3); }

/* The geometry without a tuning row (the process-wide settings' early, side, i8, c3). */
static lr_leech_geom base_geom(void)
{
    const lr_leech_geom base = { .threads = 128, .rg = 1, .prefetch = 1, .early = lr_gemv_p14s_early, .side = lr_gemv_p14s_side,
                                .i8 = lr_gemv_p14s_i8 || lr_gemv_p14s_c3, .c3 = lr_gemv_p14s_c3 };
    return base;
}

/* The defaults under arm's tuning row; 0 when the table has none. */
static int geom_of(const char *arm, int rows, int cols, lr_leech_geom *g)
{
    int t[LR_TUNE_KNOBS];
    *g = base_geom();
    if (!lr_tuning_lookup(arm, rows, cols, t)) return 0;
    lr_gemv_leech_p14s_apply_knobs(g, t);
    if (g->c3) g->i8 = 1; /* (a row with bit 19 clear keeps the default's) */
    return 1;
}

lr_leech_geom lr_gemv_leech_p14s_default_geom(int rows, int cols)
{
    lr_leech_geom g;
    geom_of("leech_p14s", rows, cols, &g);
    return g;
}

/* Why a row of its own: the SwiGLU end (pair layout, the split's pair
 * exchange) may change which geometry is best. (It did not explain the one
 * misranking found: in the 14B engine gate|up at 736 threads + 1 side warp
 * took 39.3 us per layer against 30.9 at 768 + 4, and the sweeps of this
 * kernel had it ahead too; docs/layouts.md, "Tuning on ball-drawn blocks".) */
lr_leech_geom lr_gemv_leech_p14s_default_geom_swiglu(int rows, int cols)
{
    lr_leech_geom g;
    if (!geom_of("leech_p14s_swiglu", rows, cols, &g)) geom_of("leech_p14s", rows, cols, &g);
    return g;
}

/* Why rows of their own: the 3-bit form's decode and bytes differ, so its
 * best geometry may (o keeps the int8 form's; the others gained side warps
 * and the split, h200_tune_leech_p14s3.csv). */
lr_leech_geom lr_gemv_leech_p14s3_default_geom(int rows, int cols)
{
    lr_leech_geom g;
    if (!geom_of("leech_p14s3", rows, cols, &g)) g = lr_gemv_leech_p14s_default_geom(rows, cols);
    g.i8 = g.c3 = 1;
    return g;
}

lr_leech_geom lr_gemv_leech_p14s3_default_geom_swiglu(int rows, int cols)
{
    lr_leech_geom g;
    if (!geom_of("leech_p14s3_swiglu", rows, cols, &g)) g = lr_gemv_leech_p14s_default_geom_swiglu(rows, cols);
    g.i8 = g.c3 = 1;
    return g;
}

int lr_gemv_leech_p14s_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                            int smem_budget)
{
    if (rows <= 0 || cols < 24 || ntab <= 0 || ntab > 4096)
        return LR_FAIL(LR_EINVAL, "gemv_leech_p14s shape %dx%d, %d entries", rows, cols, ntab);
    if (geom.threads % 32 || geom.threads < 32 || geom.threads > 1024 || geom.rg < 1 || geom.rg > 8)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s geometry threads=%d rg=%d", geom.threads, geom.rg);
    if (geom.nacc < 0 || geom.nacc > 4) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s nacc=%d", geom.nacc);
    if (geom.minb < 0 || geom.minb > 2048 / geom.threads)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s minb=%d for %d threads", geom.minb, geom.threads);
    int sc = (cols / 24 + 7) / 8, rgn = (rows + 15) / 16;
    if (geom.persist < 0 || geom.persist > 32) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s persist=%d", geom.persist);
    if (geom.prefetch < 0 || geom.prefetch > 2)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s prefetch=%d (0, 1 or 2 segments ahead)", geom.prefetch);
    if (geom.xw < 0 || geom.xw > 1) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s xw=%d", geom.xw);
    if (geom.epf < 0 || geom.epf > 1) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s epf=%d", geom.epf);
    if (geom.tabg) return LR_FAIL(LR_EINVAL, "gemv_leech_p14s: tabg is Planes14's (its right shifts are shr)");
    if (geom.shr < 0 || geom.shr > 1) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s shr=%d", geom.shr);
    const int groups = geom.groups > 1 ? geom.groups : 1;
    if (geom.groups < 0 || groups > 15 || geom.threads % (32 * groups))
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s groups=%d for %d threads", geom.groups,
                       geom.threads);
    /* groups stage x in the prologue (the template's rule) */
    if (groups > 1) geom.xw = 0;
    if (geom.bal < 0 || geom.bal > 2) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s bal=%d", geom.bal);
    if (geom.bal && (groups > 1 || geom.rg != 1 || geom.prefetch != 1))
        return LR_FAIL(LR_EINVAL, "gemv_leech_p14s bal needs rg 1, prefetch 1 and no groups (rg=%d prefetch=%d groups=%d)",
                       geom.rg, geom.prefetch, geom.groups);
    if (geom.ilv < 0 || geom.ilv > 1 || (geom.ilv && !geom.bal))
        return LR_FAIL(LR_EINVAL, "gemv_leech_p14s ilv=%d needs bal (bal=%d)", geom.ilv, geom.bal);
    if (geom.pro < 0 || geom.pro > 1) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s pro=%d", geom.pro);
    if (geom.early < 0 || geom.early > 2)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s early=%d (0, 1, or 2 for the class table by cp.async)", geom.early);
    if (geom.side < 0 || geom.side > 4) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s side=%d (0-4 warps)", geom.side);
    if (geom.i8 < 0 || geom.i8 > 1) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s i8=%d", geom.i8);
    if (geom.c3 < 0 || geom.c3 > 1 || (geom.c3 && !geom.i8))
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14s c3=%d (the 3-bit form is read in the int8 mode, i8=%d)", geom.c3,
                       geom.i8);
    /* the side warps replace the end fetched ahead; they need warps of the
     * 1024 and named barriers 8 + group (at most 6 groups) */
    if (geom.side && (geom.threads + 32 * geom.side > 1024 || groups > 6))
        return LR_FAIL(LR_EINVAL, "gemv_leech_p14s side=%d needs %d threads in all and at most 6 groups (threads=%d groups=%d)",
                       geom.side, geom.threads + 32 * geom.side, geom.threads, groups);
    if (geom.side) geom.epf = 0;
    /* the balanced split stages x in the prologue */
    if (geom.bal) geom.xw = 0;
    /* bal: one CTA per SM (at most one per row group); bal_rg = the most row
     * groups a CTA gets; a warp's run of at most btw segments touches at most
     * kmax row groups (one partial each), then the CTA's row sums (the
     * template's BTW, KMAX, RED_BYTES). Otherwise a partial per warp and row
     * group, double-buffered. */
    const int warps = geom.threads / 32;
    unsigned bal_grid = 0;
    int bal_rg = 0, late_n = 0;
    size_t red = 2 * (size_t)warps * geom.rg * 16 * 4;
    if (geom.bal) {
        bal_grid = lr_leech_batch_grid(rgn, 1);
        bal_rg = (rgn + (int)bal_grid - 1) / (int)bal_grid;
        /* bal 2 (split): CTA c takes segments [c T / G, (c + 1) T / G) of
         * T = rgn sc; G <= rgn gives every CTA at least sc of them, so a row
         * group spans at most two CTAs. bal_rg = the most it touches. */
        if (geom.bal == 2) {
            const long long T = (long long)rgn * sc;
            /* the late weighting (lr_gemv_p14s_late): its CTA count is the
             * rotation's at this width unless set */
            if (lr_gemv_p14s_late < 100) {
                late_n = lr_gemv_p14s_late_n;
                lr_rot_plan p;
                if (!late_n && !lr_rot_plan_make(cols, smem_budget, LR_ROT_AUTO, 0, 0, &p))
                    late_n = (int)lr_rot_plan_geom(&p, 1).grid.x;
                if (late_n >= (int)bal_grid) late_n = 0;
            }
            /* every CTA keeps at least a row group's segments (a row group
             * spans at most two CTAs), else equal shares */
            for (unsigned c = 0; late_n && c < bal_grid; c++)
                if (split_start((int)c + 1, (int)bal_grid, late_n, lr_gemv_p14s_late, T) -
                        split_start((int)c, (int)bal_grid, late_n, lr_gemv_p14s_late, T) < sc)
                    late_n = 0;
            const int pct = late_n ? lr_gemv_p14s_late : 100;
            bal_rg = 0;
            for (unsigned c = 0; c < bal_grid; c++) {
                const long long tA = split_start((int)c, (int)bal_grid, late_n, pct, T),
                                tB = split_start((int)c + 1, (int)bal_grid, late_n, pct, T);
                const int n = (int)((tB - 1) / sc + 1 - tA / sc);
                if (n > bal_rg) bal_rg = n;
            }
        }
        const int btw = (bal_rg * sc + warps - 1) / warps;
        const int kmax = geom.ilv ? bal_rg : (btw + sc - 2) / sc + 1; /* ilv: a slot per row group */
        red = (size_t)(warps * kmax + bal_rg) * 16 * 4 + (geom.bal == 2 ? (size_t)bal_rg * 16 : 0);
    }
    /* class table | x | reduction | 64 zero bytes (templates/gemv_leech_p14s.cu) */
    size_t smem = (size_t)ntab * 16 + (size_t)sc * 384 + red + 64;
    if (geom.i8) smem += ((size_t)sc * 4 + 15) / 16 * 16; /* x's scales */
    /* the template fetches ahead only with one epilogue row per thread (of
     * a batch, of a group's batch with groups, or of the CTA's rows with bal) */
    const int epf = geom.epf && geom.threads / groups >= 16 * (geom.bal ? bal_rg : geom.rg);
    if (epf) smem += (size_t)4 * 4 * geom.threads; /* LR_AHEAD_WORDS per thread */
    /* side: 3 values per row of the CTA (with groups, of each group's first
     * batch) and 1024 exception products per side warp (the template's
     * SIDE_NR, SIDE_PCAP) */
    if (geom.side) smem += (size_t)4 * (3 * 16 * (geom.bal ? bal_rg : groups * geom.rg) + 1024 * geom.side);
    /* (the norm's 32 warp sums are static shared memory, beside the dynamic) */
    const size_t stat = geom.ends.norm_eps > 0 ? 128 : 0;
    if (smem + stat > (size_t)smem_budget)
        return LR_FAIL(LR_ERANGE, "gemv_leech_p14s %dx%d needs %zu bytes of shared memory (budget %d)", rows, cols,
                       smem + stat, smem_budget);
    lr_jit_spec_init(s, "gemv_leech_p14s.cu", "gemv_leech_p14s");
    lr_jit_spec_set(s, "rows", rows);
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", geom.threads);
    lr_jit_spec_set(s, "rg", geom.rg);
    lr_jit_spec_set(s, "ntab", ntab);
    lr_jit_spec_set(s, "prefetch", geom.prefetch);
    if (geom.nacc > 1) lr_jit_spec_set(s, "nacc", geom.nacc);
    if (geom.minb > 1) lr_jit_spec_set(s, "minb", geom.minb);
    if (geom.shr) lr_jit_spec_set(s, "shr", 1);
    if (geom.xw) lr_jit_spec_set(s, "xw", 1);
    if (epf) lr_jit_spec_set(s, "epf", 1);
    if (groups > 1) lr_jit_spec_set(s, "groups", groups);
    if (geom.bal) lr_jit_spec_set(s, "bal", bal_rg);
    if (geom.bal == 2) lr_jit_spec_set(s, "split", 1);
    if (late_n) lr_jit_spec_set(s, "late", late_n), lr_jit_spec_set(s, "latew", lr_gemv_p14s_late);
    if (geom.bal && geom.ends.trig == 1) lr_jit_spec_set(s, "trig", 1);
    if (geom.ends.trig == 2) lr_jit_spec_set(s, "trige", 1);
    if (geom.ilv) lr_jit_spec_set(s, "ilv", geom.ilv);
    if (geom.pro) lr_jit_spec_set(s, "pro", 1);
    if (geom.early) lr_jit_spec_set(s, "early", geom.early);
    if (geom.side) lr_jit_spec_set(s, "side", geom.side);
    if (geom.i8) lr_jit_spec_set(s, "i8", 1);
    if (geom.c3) lr_jit_spec_set(s, "c3", 1);
    if (geom.ends.norm_eps > 0) {
        /* the eps as its f32 bits: the template takes __int_as_float of it */
        uint32_t b;
        memcpy(&b, &geom.ends.norm_eps, 4);
        lr_jit_spec_set(s, "norm", (long long)b);
    }
    if (geom.ends.res) lr_jit_spec_set(s, "res", 1);
    if (geom.early && geom.ends.l2w > 0) {
        lr_jit_spec_set(s, "l2w", geom.ends.l2w);
        if (geom.ends.l2wp > 0 && geom.ends.l2wp < 100) lr_jit_spec_set(s, "l2wp", geom.ends.l2wp);
    }
    const int batches = (rgn + geom.rg - 1) / geom.rg;
    g->grid = (lr_dim3){ geom.bal ? bal_grid : lr_leech_batch_grid((batches + groups - 1) / groups, geom.persist), 1, 1 };
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->block = (lr_dim3){ (unsigned)(geom.threads + 32 * geom.side), 1, 1 };
    g->smem = (unsigned)smem;
    return LR_OK;
}

int lr_gemv_leech_p14s_spec_fit(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom *geom,
                                int smem_budget, int swiglu)
{
    int rc = swiglu ? lr_gemv_leech_p14s_spec_swiglu(s, g, rows, cols, ntab, *geom, smem_budget)
                    : lr_gemv_leech_p14s_spec(s, g, rows, cols, ntab, *geom, smem_budget);
    if (rc != LR_ERANGE) return rc;
    /* a tuning row measured under a larger budget (LEECHRT_SMEM_BUDGET on its
       device): the untuned geometry, same form and ends */
    lr_leech_geom b = base_geom();
    b.i8 = geom->i8, b.c3 = geom->c3, b.ends = geom->ends;
    lr_clear_error();
    rc = swiglu ? lr_gemv_leech_p14s_spec_swiglu(s, g, rows, cols, ntab, b, smem_budget)
                : lr_gemv_leech_p14s_spec(s, g, rows, cols, ntab, b, smem_budget);
    if (!rc) *geom = b;
    return rc;
}

void lr_gemv_leech_p14s_args(lr_p14s *L, float *x, float *y, lr_arg a[11])
{
    static uint16_t one_h;
    memset(a, 0, 11 * sizeof *a);
    a[0].host = L->data, a[0].count = L->bytes;
    a[1].host = L->tab, a[1].count = (size_t)L->nentries * 16;
    a[2].host = L->row_scale, a[2].count = (size_t)L->rows;
    a[3].host = L->tail ? (void *)L->tail_f16 : &one_h, a[3].count = L->tail ? (size_t)L->rows * L->tail : 1;
    a[4].host = L->exc_ptr, a[4].count = (size_t)L->rows + 1;
    a[5].host = L->exc_col, a[5].count = L->nexc ? L->nexc : 1;
    a[6].host = L->exc_dw, a[6].count = L->nexc ? L->nexc : 1;
    a[7].host = x, a[7].count = (size_t)L->cols;
    a[8].host = y, a[8].count = (size_t)L->rows;
    a[9].v.i32 = L->rows;
    a[10].v.i32 = L->cols;
}

/* ---- benchmark arm ---- */

typedef struct {
    int rows, cols;
    lr_p14s L;
    lr_leech_arm_img img;
    CUfunction fn;
    lr_launch_geom g;
    int mode; /* CTL_GEMV, CTL_SWIGLU, or the control arms leech_p14s_loads / _decode / _noepi */
    uint8_t *data8, *tab8; /* geometry i8: the layout's int8 form (what is uploaded), else NULL */
    int c3;                /* the 3-bit arms: F is what is uploaded */
    lr_p14s_c3 F;
} p14s_state;

static void p14s_destroy(void *p)
{
    p14s_state *s = p;
    if (!s) return;
    lr_leech_arm_img_free(&s->img);
    lr_p14s_free(&s->L);
    lr_p14s_c3_free(&s->F);
    free(s->data8), free(s->tab8);
    free(s);
}

enum { CTL_GEMV, CTL_LOADS, CTL_DECODE, CTL_NOEPI, CTL_SWIGLU, CTL_SMEM, CTL_LOADS_NOX, CTL_LOADS_NOPRO };
/* the loads-only controls (the template's loadonly 1, 2, 3) */
#define IS_LOADS(m) ((m) == CTL_LOADS || (m) == CTL_LOADS_NOX || (m) == CTL_LOADS_NOPRO)

/* The SwiGLU arm's matrix: gate and up (rows / 2 each, their own centroids,
 * so two class tables as in the engine) as a pair layout. */
static int random_pair(int rows, int cols, int dist, uint64_t seed, lr_p14s *L)
{
    if (rows % 2) return LR_FAIL(LR_EINVAL, "leech_p14s_swiglu: %d rows, not gate/up pairs", rows);
    lr_leech_matrix m[2];
    int rc = lr_leech_random_matrix(rows / 2, cols, 12, 1, dist, seed, &m[0]);
    if (!rc) rc = lr_leech_random_matrix(rows / 2, cols, 12, 1, dist, seed + 1, &m[1]);
    else memset(&m[1], 0, sizeof m[1]);
    if (!rc) {
        m[1].centroid[0] *= 1.25f;
        const lr_leech_matrix *pp[2] = { &m[0], &m[1] };
        rc = lr_p14s_unfold_pair(pp, 0, L);
    }
    lr_leech_random_free(&m[0]), lr_leech_random_free(&m[1]);
    return rc;
}

static int prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, int mode, int c3,
                   void **out)
{
    *out = NULL;
    p14s_state *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    s->mode = mode, s->c3 = c3;
    s->rows = rows, s->cols = cols;
    lr_leech_geom geom = mode == CTL_SWIGLU ? (c3 ? lr_gemv_leech_p14s3_default_geom_swiglu(rows, cols)
                                                  : lr_gemv_leech_p14s_default_geom_swiglu(rows, cols))
                         : c3 ? lr_gemv_leech_p14s3_default_geom(rows, cols)
                              : lr_gemv_leech_p14s_default_geom(rows, cols);
    if (o) {
        const int k[LR_TUNE_KNOBS] = { o->threads, o->rpw,    o->unroll,   o->tile,    o->extra[0],
                                       o->extra[1], o->minb, o->extra[2], o->extra[3], o->extra[4] };
        lr_gemv_leech_p14s_apply_knobs(&geom, k);
    }
    if (c3) geom.i8 = geom.c3 = 1;
    /* the loads-only control has no row end, so no side warps to make it
     * (its template refuses them; the table sets them on most shapes) */
    if (IS_LOADS(mode)) geom.side = 0;
    /* without the prologue's staging: only where the prologue stages x (with
     * pro or after the table), not warps (xw) nor early 2's cp.async table
     * (the template's rule for loadonly 2 / 3, refused here by name). Unsupported, not
     * invalid: the control does not exist for such a shape's geometry, so bench_gemv skips
     * it there (the 4B's and 14B's k, whose rows put x in warps) instead of failing */
    if ((mode == CTL_LOADS_NOX || mode == CTL_LOADS_NOPRO) && (geom.xw || geom.early == 2)) {
        free(s);
        return LR_FAIL(LR_EUNSUPPORTED, "%s: x staged in the prologue only (xw=%d early=%d)",
                       mode == CTL_LOADS_NOX ? "leech_p14s3_loads_nox" : "leech_p14s3_loads_nopro", geom.xw, geom.early);
    }
    /* the shared-memory control's template takes one segment ahead
     * (prefetch 1) of one row group per batch, then reads its copy */
    if (mode == CTL_SMEM) geom.prefetch = 1, geom.rg = 1;
    const int dist = o && o->ball ? LR_RANDOM_BALL : LR_RANDOM_CLASSES;
    int rc;
    if (o && o->model) {
        rc = lr_leech_arm_model_p14s(o->model, rows, cols, mode == CTL_SWIGLU, &s->L);
    } else if (mode == CTL_SWIGLU) {
        rc = random_pair(rows, cols, dist, seed, &s->L);
    } else {
        lr_leech_matrix m;
        rc = lr_leech_random_matrix(rows, cols, 12, 1, dist, seed, &m);
        if (!rc) rc = lr_p14s_unfold(&m, 0, &s->L);
        lr_leech_random_free(&m);
    }
    /* decode-only: every row group holds row group 0's codes (the kernel
     * reads only those), so the GEMV reference checks it as it is (the
     * 3-bit form's are copied after its conversion, below) */
    const size_t per = (size_t)s->L.sc * LR_P14S_SEG;
    if (!rc && mode == CTL_DECODE && !c3)
        for (int g = 1; g < s->L.rg; g++) memcpy(s->L.data + (size_t)g * per, s->L.data, per);
    /* no-end control: a layout with no exceptions, no tail and row scales 1,
     * which the kernel's end (compiled without its loads) computes exactly */
    if (!rc && mode == CTL_NOEPI) {
        memset(s->L.exc_ptr, 0, sizeof(uint32_t) * ((size_t)rows + 1));
        for (int i = 0; i < rows; i++) s->L.row_scale[i] = 1.f;
        if (s->L.tail) memset(s->L.tail_f16, 0, sizeof(uint16_t) * (size_t)rows * s->L.tail);
    }
    /* the int8 mode reads the int8 form (the loads-only control reads bytes
     * only, any form) */
    if (!rc && c3) rc = lr_p14s_c3_form(&s->L, 0, &s->F);
    if (!rc && c3 && mode == CTL_DECODE) {
        /* (the GEMV of these bytes and the form's exception lists is still
         * well defined: the reference reads the same) */
        const size_t per3 = (size_t)s->L.sc * LR_P14S_C3_SEG;
        for (int g = 1; g < s->L.rg; g++) memcpy(s->F.data + (size_t)g * per3, s->F.data, per3);
    }
    else if (!rc && c3 && mode == CTL_SMEM) {
        /* the shared-memory control decodes each warp's first segment at
         * every step: a layout whose segments all hold segment 0's codes */
        const size_t n3 = (size_t)s->L.rg * s->L.sc;
        for (size_t i = 1; i < n3; i++) memcpy(s->F.data + i * LR_P14S_C3_SEG, s->F.data, LR_P14S_C3_SEG);
    }
    else if (!rc && geom.i8) {
        s->data8 = malloc(s->L.bytes), s->tab8 = malloc((size_t)s->L.nentries * 16);
        rc = !s->data8 || !s->tab8 ? LR_FAIL(LR_ENOMEM, "out of memory") : lr_p14s_i8_form(&s->L, s->data8, s->tab8);
    }
    lr_jit_spec spec;
    const int ntab = c3 ? s->F.nentries : s->L.nentries; /* (the 3-bit form's table has the mirrors too) */
    if (!rc)
        rc = mode == CTL_SWIGLU ? lr_gemv_leech_p14s_spec_swiglu(&spec, &s->g, rows, cols, ntab, geom, lr_cu_smem_budget())
                                : lr_gemv_leech_p14s_spec(&spec, &s->g, rows, cols, ntab, geom, lr_cu_smem_budget());
    if (!rc && IS_LOADS(mode))
        lr_jit_spec_set(&spec, "loadonly", mode == CTL_LOADS_NOPRO ? 3 : mode == CTL_LOADS_NOX ? 2 : 1);
    if (!rc && mode == CTL_DECODE) lr_jit_spec_set(&spec, "decodeonly", 1);
    if (!rc && mode == CTL_SMEM) {
        /* each warp's segment copy after the kernel's own shared memory */
        lr_jit_spec_set(&spec, "decodeonly", 2);
        lr_jit_spec_set(&spec, "segsm", (long long)s->g.smem);
        s->g.smem += s->g.block.x / 32 * LR_P14S_C3_SEG;
        if (s->g.smem > (unsigned)lr_cu_smem_budget())
            rc = LR_FAIL(LR_EINVAL, "leech_p14s3_smem: %u bytes of shared memory over the budget", s->g.smem);
    }
    if (!rc && mode == CTL_NOEPI) lr_jit_spec_set(&spec, "noepi", 1);
    if (!rc) rc = lr_jit_get(&spec, &s->fn);
    lr_leech_arm_src src = { .data = s->data8 ? s->data8 : s->L.data, .bytes = s->L.bytes, .rows = rows,
                             .exc_ptr = s->L.exc_ptr, .exc_col = s->L.exc_col,     .exc_dw = s->L.exc_dw,
                             .nexc = s->L.nexc,       .tab = s->tab8 ? s->tab8 : s->L.tab, .nentries = s->L.nentries,
                             .row_scale = s->L.row_scale, .tail_f16 = s->L.tail_f16, .tail = s->L.tail };
    if (c3) {
        src.data = s->F.data, src.bytes = s->F.bytes, src.tab = s->F.tab, src.nentries = s->F.nentries;
        src.exc_ptr = s->F.exc_ptr, src.exc_col = s->F.exc_col, src.exc_dw = s->F.exc_dw, src.nexc = s->F.nexc;
    }
    if (!rc) rc = lr_leech_arm_img_upload(&s->img, &src, copies);
    if (rc) { p14s_destroy(s); return rc; }
    *out = s;
    return LR_OK;
}

static int p14s_verify(void *p, uint64_t seed, double *err, lr_gemv_arm_io *io)
{
    p14s_state *s = p;
    float *x = malloc(sizeof(float) * (size_t)s->cols), *y = malloc(sizeof(float) * (size_t)s->rows);
    if (!x || !y) { free(x), free(y); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    lr_rng r;
    lr_rng_seed(&r, seed ^ 0x5eed);
    lr_fill_random(LR_E_F32, x, (size_t)s->cols, &r, 1.0);
    lr_arg a[11];
    lr_gemv_leech_p14s_args(&s->L, x, y, a);
    if (s->mode == CTL_SWIGLU) a[8].count = (size_t)s->rows / 2; /* h: one value per gate/up pair */
    if (s->data8) a[0].host = s->data8, a[1].host = s->tab8;
    if (s->c3) {
        a[0].host = s->F.data, a[0].count = s->F.bytes, a[1].host = s->F.tab, a[1].count = (size_t)s->F.nentries * 16;
        a[4].host = s->F.exc_ptr, a[5].host = s->F.exc_col, a[6].host = s->F.exc_dw;
        a[5].count = a[6].count = s->F.nexc ? s->F.nexc : 1;
    }
    lr_verify_report rep;
    const int i8 = s->data8 != NULL;
    const lr_kernel_desc *desc =
        s->c3 ? (IS_LOADS(s->mode) ? &loads_c3_desc : s->mode == CTL_SWIGLU ? &lr_gemv_leech_p14s_swiglu_c3_desc : &lr_gemv_leech_p14s_c3_desc)
        : s->mode == CTL_LOADS  ? &lr_gemv_leech_p14s_loads_desc
        : s->mode == CTL_SWIGLU ? (i8 ? &lr_gemv_leech_p14s_swiglu_i8_desc : &lr_gemv_leech_p14s_swiglu_desc)
                                : (i8 ? &lr_gemv_leech_p14s_i8_desc : &lr_gemv_leech_p14s_desc);
    /* the loads-only controls' outputs are set-bit counts (integers below 2^24 in a float):
       exact, so no tolerance (2e-5 of a count let ~4 bits of 193k pass) */
    int rc = lr_call_verify(desc, s->fn, a, s->g, IS_LOADS(s->mode) ? 0 : LR_GEMV_LEECH_TOL, &rep);
    *err = rep.max_rel_err;
    if (!rc) lr_gemv_arm_io_keep(io, &x, (size_t)s->cols, &y, a[8].count);
    free(x), free(y);
    return rc;
}

static int p14s_launch(void *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    p14s_state *s = p;
    lr_leech_arm_ptrs c = lr_leech_arm_img_copy(&s->img, copy);
    int rows = s->rows, cols = s->cols;
    void *args[] = { &c.w, &c.tab, &c.scale, &c.tail, &c.exc_ptr, &c.exc_col, &c.exc_dw, &x, &y, &rows, &cols };
    return lr_cu_launch_ex(s->fn, s->g.grid, s->g.block, s->g.cluster, s->g.smem, st, args);
}

static size_t p14s_bytes(void *p)
{
    p14s_state *s = p;
    /* segments + exceptions + row pointers + row scales + tail */
    return (s->c3 ? s->F.bytes + 8 * (size_t)s->F.nexc : s->L.bytes + 8 * (size_t)s->L.nexc) + 4 * ((size_t)s->rows + 1) + sizeof(float) * (size_t)s->rows +
           (size_t)s->rows * s->L.tail * 2;
}

/* The loads-only controls read the segments and nothing of the row ends (no exceptions, row
 * pointers, scales or tail: the template has no epilogue under LR_LOADONLY). Until the
 * sixty-seventh session they counted p14s_bytes, the GEMV's, which put their % of the read
 * bound 1.6% (4.8 b/w, ball), 0.9% (3-bit, ball) and 6.6% (class-uniform) too high. */
static size_t loads_bytes(void *p)
{
    p14s_state *s = p;
    return s->c3 ? s->F.bytes : s->L.bytes;
}

static int p14s_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_GEMV, 0, out);
}

/* The control: Planes14S's segment stream at the same geometry (the
 * tuning table's "leech_p14s" entry), without the decode. */
static int loads_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_LOADS, 0, out);
}

/* The other control: the whole GEMV at the same geometry, its weight stream
 * served from L2 (every row group reads row group 0's segments; bytes()
 * still counts the GEMV's, so GB/s reads as the rate the decode alone
 * would allow). */
static int decode_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_DECODE, 0, out);
}

/* The end's control: the whole GEMV at the same geometry, its row end
 * without global loads (no exceptions, tail or row scales: a layout that
 * has none, so it still verifies); beside the GEMV it times those loads. */
static int noepi_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_NOEPI, 0, out);
}

/* The engine's gate|up kernel: the GEMV over a pair layout ending in SwiGLU
 * (rows = gate + up, rows / 2 outputs), at its own tuning rows
 * ("leech_p14s_swiglu", else "leech_p14s"'s). */
static int swiglu_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_SWIGLU, 0, out);
}

const lr_gemv_arm lr_arm_leech_p14s = { "leech_p14s", 4.8, p14s_prepare, p14s_verify, p14s_launch, p14s_bytes,
                                        p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s_loads = { "leech_p14s_loads", 4.8, loads_prepare, p14s_verify, p14s_launch,
                                              loads_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s_decode = { "leech_p14s_decode", 4.8, decode_prepare, p14s_verify, p14s_launch,
                                               p14s_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s_noepi = { "leech_p14s_noepi", 4.8, noepi_prepare, p14s_verify, p14s_launch,
                                              p14s_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s_swiglu = { "leech_p14s_swiglu", 4.8, swiglu_prepare, p14s_verify, p14s_launch,
                                               p14s_bytes, p14s_destroy };

/* The 3-bit form (layouts/leech_vram/p14s_c3.h) in the int8 mode: the same
 * matrices converted at upload; geometry from the tuning rows "leech_p14s3"
 * (or "_swiglu"), else the f16 form's. */
static int c3_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_GEMV, 1, out);
}

static int c3_loads_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_LOADS, 1, out);
}

static int c3_decode_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_DECODE, 1, out);
}

/* The loads-only control without its prologue's x staging (nox), and
 * without the class table's either (nopro): beside leech_p14s3_loads they
 * say what staging x and the table costs a GEMV before its loop (neither is
 * read by the control, so the same popcounts verify). */
static int c3_loads_nox_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_LOADS_NOX, 1, out);
}

static int c3_loads_nopro_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o,
                                  void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_LOADS_NOPRO, 1, out);
}

/* The third control: the GEMV with its weights at shared-memory latency
 * (each warp decodes its first segment at every step from a copy in shared
 * memory, over a layout whose segments are all the same, so it still
 * verifies); beside the decode-only control (weights from L2) it says how
 * much of the decode's time is waiting for its loads. */
static int c3_smem_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_SMEM, 1, out);
}

static int c3_swiglu_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare(rows, cols, copies, seed, o, CTL_SWIGLU, 1, out);
}

const lr_gemv_arm lr_arm_leech_p14s3 = { "leech_p14s3", 3.6, c3_prepare, p14s_verify, p14s_launch, p14s_bytes,
                                         p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s3_loads = { "leech_p14s3_loads", 3.6, c3_loads_prepare, p14s_verify, p14s_launch,
                                               loads_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s3_loads_nox = { "leech_p14s3_loads_nox", 3.6, c3_loads_nox_prepare, p14s_verify,
                                                   p14s_launch, loads_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s3_loads_nopro = { "leech_p14s3_loads_nopro", 3.6, c3_loads_nopro_prepare,
                                                     p14s_verify, p14s_launch, loads_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s3_decode = { "leech_p14s3_decode", 3.6, c3_decode_prepare, p14s_verify, p14s_launch,
                                                p14s_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s3_smem = { "leech_p14s3_smem", 3.6, c3_smem_prepare, p14s_verify, p14s_launch,
                                              p14s_bytes, p14s_destroy };
const lr_gemv_arm lr_arm_leech_p14s3_swiglu = { "leech_p14s3_swiglu", 3.6, c3_swiglu_prepare, p14s_verify, p14s_launch,
                                                p14s_bytes, p14s_destroy };
