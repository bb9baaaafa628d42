/* The rotated residual's Planes14S GEMV ends (kernels/gemv_leech_p14s_resid.c):
 * on the CPU, the references against the plain ones (the norm's scale, the
 * residual add, SwiGLU with the norm: a wrong end fails here) and the
 * specialization's keys; on a GPU, lr_call_verify of each end (every row
 * against the f64 reference, outputs poisoned or, for the add, started from
 * random values) at the 14B engine's shapes and tuned geometries, f16 and
 * int8 forms. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/random.h"
#include "rt/call.h"
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int make(int rows, int cols, uint64_t seed, lr_p14s *L)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(rows, cols, 12, 1, 0, seed, &m));
    int rc = lr_p14s_unfold(&m, 0, L);
    lr_leech_random_free(&m);
    T_OK(rc);
    return T_PASS;
}

static int make_pair(int R, int cols, uint64_t seed, lr_p14s *P)
{
    lr_leech_matrix m[2];
    for (int p = 0; p < 2; p++) T_OK(lr_leech_random_matrix(R, cols, 12, 1, p, seed + (uint64_t)p, &m[p]));
    const lr_leech_matrix *pp[2] = { &m[0], &m[1] };
    int rc = lr_p14s_unfold_pair(pp, 0, P);
    for (int p = 0; p < 2; p++) lr_leech_random_free(&m[p]);
    T_OK(rc);
    return T_PASS;
}

static double rel(double a, double b) { return fabs(a - b) / (fabs(b) > 1e-30 ? fabs(b) : 1e-30); }

/* The references through the ffi path against the plain ones: norm = ns x
 * plain with ns from x (x scaled by 3 so ns is far from 1), res = y0 + plain,
 * SwiGLU-norm = silu(ns g) (ns u). */
static int test_references(void)
{
    const int rows = 40, cols = 24 * 9 + 5;
    lr_p14s L;
    if (make(rows, cols, 71, &L)) return T_FAIL;
    float *x = malloc(sizeof(float) * cols), *p = malloc(sizeof(float) * rows), *y = malloc(sizeof(float) * rows),
          *y0 = malloc(sizeof(float) * rows);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, 72, 3.0);
    lr_fill_random_seed(LR_E_F32, y0, (size_t)rows, 73, 1.0);
    lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, p, rows, cols);
    lr_gemv_p14s_ref_norm_eps = 1e-6f;
    double ss = 0;
    for (int i = 0; i < cols; i++) ss += (double)x[i] * x[i];
    const double ns = 1.0 / sqrt(ss / cols + 1e-6);
    T_ASSERT(ns < 0.7, "x scaled by 3 should give ns well below 1 (%g)", ns);
    lr_arg a[11];
    lr_gemv_leech_p14s_args(&L, x, y, a);
    T_OK(lr_call_host(&lr_gemv_leech_p14s_norm_desc, a));
    for (int r = 0; r < rows; r++) T_ASSERT(rel(y[r], ns * p[r]) < 1e-6, "norm row %d: %g against %g", r, y[r], ns * p[r]);
    memcpy(y, y0, sizeof(float) * rows);
    T_OK(lr_call_host(&lr_gemv_leech_p14s_res_desc, a));
    for (int r = 0; r < rows; r++)
        T_ASSERT(fabs(y[r] - ((double)y0[r] + p[r])) < 1e-6 * (fabs(y0[r]) + fabs(p[r])), "res row %d", r);
    lr_p14s_free(&L);
    /* SwiGLU with the norm: the pair's rows are gate and up */
    lr_p14s P;
    if (make_pair(rows / 2, cols, 74, &P)) return T_FAIL;
    lr_gemv_leech_p14s_host(P.data, P.tab, P.row_scale, P.tail_f16, P.exc_ptr, P.exc_col, P.exc_dw, x, p, rows, cols);
    lr_gemv_leech_p14s_args(&P, x, y, a);
    a[8].count = (size_t)rows / 2;
    T_OK(lr_call_host(&lr_gemv_leech_p14s_swiglu_norm_desc, a));
    for (int i = 0; i < rows / 2; i++) {
        const double g = ns * p[2 * i], u = ns * p[2 * i + 1], want = g / (1 + exp(-g)) * u;
        T_ASSERT(rel(y[i], want) < 1e-5 || fabs(y[i] - want) < 1e-9, "swiglu-norm %d: %g against %g", i, y[i], want);
    }
    lr_p14s_free(&P);
    lr_gemv_p14s_ref_norm_eps = 0;
    free(x), free(p), free(y), free(y0);
    return T_PASS;
}

/* The spec carries the ends as keys (so the cache keeps them apart) and a
 * plain spec has neither. */
static int test_spec_keys(void)
{
    lr_leech_geom g = { .threads = 128, .rg = 1, .prefetch = 1, .xw = 1 };
    lr_jit_spec s;
    lr_launch_geom lg;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(!lr_jit_spec_get(&s, "norm", 0) && !lr_jit_spec_get(&s, "res", 0), "plain spec has an end key");
    g.ends.norm_eps = 1e-6f;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    g.ends.norm_eps = 0;
    float eps;
    const uint32_t b = (uint32_t)lr_jit_spec_get(&s, "norm", 0);
    memcpy(&eps, &b, 4);
    T_ASSERT(eps == 1e-6f, "norm key %g", eps);
    g.ends.res = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "res", 0) == 1 && !lr_jit_spec_get(&s, "norm", 0), "res key missing (or norm there)");
    /* trig only on a split geometry (bal) */
    g.ends.trig = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(!lr_jit_spec_get(&s, "trig", 0), "trig in a spec without bal");
    /* trig 2, at entry: any geometry */
    g.ends.trig = 2;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "trige", 0) == 1 && !lr_jit_spec_get(&s, "trig", 0), "trige key missing (or trig there)");
    /* the engine's choice per projection: trig by the mask's bit, norm on the
       readers with unit gains, the add on the writers; nothing on a plain model;
       o at its entry by bit 3 (the rotated residual's default mask has it) */
    const lr_leech_ends q = lr_leech_engine_ends(LR_PROJ_QKV, LR_ENGINE_GEMV_TRIGGER, 1, 1, 1e-6f),
                        qn = lr_leech_engine_ends(LR_PROJ_QKV, 0, 1, 0, 1e-6f),
                        o = lr_leech_engine_ends(LR_PROJ_O, 7, 1, 1, 1e-6f),
                        oe = lr_leech_engine_ends(LR_PROJ_O, LR_ENGINE_GEMV_TRIGGER_FOR(1), 1, 1, 1e-6f),
                        op = lr_leech_engine_ends(LR_PROJ_O, LR_ENGINE_GEMV_TRIGGER_FOR(0), 0, 1, 1e-6f),
                        gu = lr_leech_engine_ends(LR_PROJ_GATEUP, 2, 1, 1, 1e-5f),
                        d = lr_leech_engine_ends(LR_PROJ_DOWN, LR_ENGINE_GEMV_TRIGGER, 1, 1, 1e-6f),
                        dp = lr_leech_engine_ends(LR_PROJ_DOWN, 0, 0, 1, 1e-6f);
    T_ASSERT(q.trig == 1 && q.norm_eps == 1e-6f && !q.res, "q|k|v ends %d %g %d", q.trig, q.norm_eps, q.res);
    T_ASSERT(!qn.trig && qn.norm_eps == 0 && !qn.res, "q|k|v without unit gains: %d %g %d", qn.trig, qn.norm_eps, qn.res);
    T_ASSERT(!o.trig && o.norm_eps == 0 && o.res, "o ends %d %g %d", o.trig, o.norm_eps, o.res);
    T_ASSERT(oe.trig == 2 && oe.res && !op.trig && !op.res, "o's default ends: rotated %d %d, plain %d %d", oe.trig, oe.res,
             op.trig, op.res);
    T_ASSERT(gu.trig && gu.norm_eps == 1e-5f && !gu.res, "gate|up ends %d %g %d", gu.trig, gu.norm_eps, gu.res);
    T_ASSERT(d.trig && d.norm_eps == 0 && d.res, "down ends %d %g %d", d.trig, d.norm_eps, d.res);
    T_ASSERT(!dp.trig && dp.norm_eps == 0 && !dp.res, "a plain down without the mask %d %g %d", dp.trig, dp.norm_eps, dp.res);
    T_ASSERT(!q.l2w && !o.l2w && d.l2w == LR_ENGINE_GEMV_L2W, "l2w by default: %d %d %d", q.l2w, o.l2w, d.l2w);
    /* LEECHRT_GEMV_L2W: the KB go to the mask's projections (default down),
       the spec key only with early; garbage refused, values kept */
    T_OK(lr_gemv_p14s_l2w_set("LEECHRT_GEMV_L2W", "160"));
    T_OK(lr_gemv_p14s_l2w_mask_set("LEECHRT_GEMV_L2W_MASK", "12"));
    lr_leech_ends lq = lr_leech_engine_ends(LR_PROJ_QKV, 0, 1, 1, 1e-6f), lo = lr_leech_engine_ends(LR_PROJ_O, 0, 1, 1, 1e-6f),
                  lgu = lr_leech_engine_ends(LR_PROJ_GATEUP, 0, 1, 1, 1e-6f), ld = lr_leech_engine_ends(LR_PROJ_DOWN, 0, 1, 1, 1e-6f);
    T_ASSERT(!lq.l2w && lo.l2w == 160 && !lgu.l2w && ld.l2w == 160, "mask 12: l2w %d %d %d %d", lq.l2w, lo.l2w, lgu.l2w,
             ld.l2w);
    T_OK(lr_gemv_p14s_l2w_mask_set("LEECHRT_GEMV_L2W_MASK", "3"));
    lq = lr_leech_engine_ends(LR_PROJ_QKV, 0, 1, 1, 1e-6f), lgu = lr_leech_engine_ends(LR_PROJ_GATEUP, 0, 1, 1, 1e-6f);
    ld = lr_leech_engine_ends(LR_PROJ_DOWN, 0, 1, 1, 1e-6f);
    T_ASSERT(lq.l2w == 160 && lgu.l2w == 160 && !ld.l2w, "mask 3: l2w %d %d %d", lq.l2w, lgu.l2w, ld.l2w);
    const int bad = lr_gemv_p14s_l2w_set("LEECHRT_GEMV_L2W", "4097") == LR_OK ||
                    lr_gemv_p14s_l2w_set("LEECHRT_GEMV_L2W", "1k") == LR_OK ||
                    lr_gemv_p14s_l2w_mask_set("LEECHRT_GEMV_L2W_MASK", "16") == LR_OK ||
                    !strstr(lr_errmsg(), "LEECHRT_GEMV_L2W_MASK");
    lr_clear_error();
    T_ASSERT(!bad && lr_gemv_p14s_l2w == 160 && lr_gemv_p14s_l2w_mask == 3, "garbage taken or a value lost (%d, %d)",
             lr_gemv_p14s_l2w, lr_gemv_p14s_l2w_mask);
    /* LEECHRT_GEMV_L2W_SHARE: the % goes with the KB (default 100: no key) */
    T_ASSERT(ld.l2wp == LR_ENGINE_GEMV_L2W_SHARE && lq.l2wp == LR_ENGINE_GEMV_L2W_SHARE, "l2wp by default: %d %d", ld.l2wp,
             lq.l2wp);
    T_OK(lr_gemv_p14s_l2w_share_set("LEECHRT_GEMV_L2W_SHARE", "40"));
    lq = lr_leech_engine_ends(LR_PROJ_QKV, 0, 1, 1, 1e-6f), ld = lr_leech_engine_ends(LR_PROJ_DOWN, 0, 1, 1, 1e-6f);
    T_ASSERT(lq.l2w == 160 && lq.l2wp == 40 && !ld.l2w, "share 40: %d %d %d", lq.l2w, lq.l2wp, ld.l2w);
    const int bad_share = lr_gemv_p14s_l2w_share_set("LEECHRT_GEMV_L2W_SHARE", "0") == LR_OK ||
                          lr_gemv_p14s_l2w_share_set("LEECHRT_GEMV_L2W_SHARE", "101") == LR_OK ||
                          lr_gemv_p14s_l2w_share_set("LEECHRT_GEMV_L2W_SHARE", "40%") == LR_OK ||
                          !strstr(lr_errmsg(), "LEECHRT_GEMV_L2W_SHARE");
    lr_clear_error();
    T_ASSERT(!bad_share && lr_gemv_p14s_l2w_share == 40, "share garbage taken or the value lost (%d)",
             lr_gemv_p14s_l2w_share);
    g.ends = ld, g.ends.l2w = 96, g.ends.l2wp = 100, g.early = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "l2w", 0) == 96, "l2w key missing with early");
    T_ASSERT(!lr_jit_spec_get(&s, "l2wp", 0), "l2wp key at 100 %%");
    g.ends.l2wp = 40;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "l2wp", 0) == 40, "l2wp key missing at 40 %%");
    g.early = 0;
    T_OK(lr_gemv_leech_p14s_spec(&s, &lg, 1000, 600, 603, g, 232448));
    T_ASSERT(!lr_jit_spec_get(&s, "l2w", 0) && !lr_jit_spec_get(&s, "l2wp", 0), "l2w keys without early");
    lr_gemv_p14s_l2w = LR_ENGINE_GEMV_L2W, lr_gemv_p14s_l2w_mask = LR_ENGINE_GEMV_L2W_MASK;
    lr_gemv_p14s_l2w_share = LR_ENGINE_GEMV_L2W_SHARE;
    /* per device: on for the H100 SXM only (a name prefix), off elsewhere */
    static const struct { const char *name; int kb, share; } dev[] = {
        { "NVIDIA H100 80GB HBM3", 4096, 40 },        { "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 4096, 40 },
        { "NVIDIA H100 PCIe", LR_ENGINE_GEMV_L2W, LR_ENGINE_GEMV_L2W_SHARE },
        { "NVIDIA H200", LR_ENGINE_GEMV_L2W, LR_ENGINE_GEMV_L2W_SHARE },
        { "NVIDIA H100", LR_ENGINE_GEMV_L2W, LR_ENGINE_GEMV_L2W_SHARE },
        { "", LR_ENGINE_GEMV_L2W, LR_ENGINE_GEMV_L2W_SHARE },
        { NULL, LR_ENGINE_GEMV_L2W, LR_ENGINE_GEMV_L2W_SHARE },
    };
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) {
        int kb = -1, share = -1;
        lr_gemv_p14s_l2w_device_defaults(dev[i].name, &kb, &share);
        T_ASSERT(kb == dev[i].kb && share == dev[i].share, "%s: l2w %d, share %d (want %d, %d)",
                 dev[i].name ? dev[i].name : "(null)", kb, share, dev[i].kb, dev[i].share);
    }
    return T_PASS;
}

/* ---- GPU ---- */

enum { END_NORM, END_RES, END_SWIGLU_NORM };

/* eps: the norm's (the add ignores it); amp: x's amplitude */
static int verify_eps(int rows, int cols, int end, int i8, uint64_t seed, float eps, double amp)
{
    lr_p14s L;
    if (end == END_SWIGLU_NORM ? make_pair(rows / 2, cols, seed, &L) : make(rows, cols, seed, &L)) return T_FAIL;
    lr_leech_geom geom = end == END_SWIGLU_NORM ? lr_gemv_leech_p14s_default_geom_swiglu(rows, cols)
                                                : lr_gemv_leech_p14s_default_geom(rows, cols);
    geom.i8 = i8;
    geom.early = 1;
    if (i8) T_OK(lr_p14s_i8_form(&L, L.data, L.tab));
    geom.ends.norm_eps = lr_gemv_p14s_ref_norm_eps = end == END_RES ? 0.f : eps;
    geom.ends.res = end == END_RES;
    lr_jit_spec spec;
    lr_launch_geom g;
    int rc = end == END_SWIGLU_NORM
                 ? lr_gemv_leech_p14s_spec_swiglu(&spec, &g, rows, cols, L.nentries, geom, lr_cu_smem_budget())
                 : lr_gemv_leech_p14s_spec(&spec, &g, rows, cols, L.nentries, geom, lr_cu_smem_budget());
    CUfunction fn;
    if (!rc) rc = lr_jit_get(&spec, &fn);
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, seed * 3 + 1, amp);
    lr_fill_random_seed(LR_E_F32, y, (size_t)rows, seed * 3 + 2, 2.0); /* the add's starting residual */
    lr_arg a[11];
    lr_gemv_leech_p14s_args(&L, x, y, a);
    if (end == END_SWIGLU_NORM) a[8].count = (size_t)rows / 2;
    const lr_kernel_desc *d[3][2] = { { &lr_gemv_leech_p14s_norm_desc, &lr_gemv_leech_p14s_norm_i8_desc },
                                      { &lr_gemv_leech_p14s_res_desc, &lr_gemv_leech_p14s_res_i8_desc },
                                      { &lr_gemv_leech_p14s_swiglu_norm_desc, &lr_gemv_leech_p14s_swiglu_norm_i8_desc } };
    lr_verify_report rep;
    memset(&rep, 0, sizeof rep);
    if (!rc) rc = lr_call_verify(d[end][i8], fn, a, g, LR_GEMV_LEECH_TOL, &rep);
    static const char *const names[3] = { "norm", "res", "swiglu+norm" };
    printf("    %5d x %5d %-11s i8=%d threads=%d bal=%d side=%d grid %u eps %g |x| <= %g: max rel err %.2e\n", rows,
           cols, names[end], i8, geom.threads, (int)lr_jit_spec_get(&spec, "bal", 0), geom.side, g.grid.x, eps, amp,
           rep.max_rel_err);
    lr_gemv_p14s_ref_norm_eps = 0;
    free(x), free(y);
    lr_p14s_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int verify(int rows, int cols, int end, int i8, uint64_t seed)
{
    return verify_eps(rows, cols, end, i8, seed, 1e-6f, 4.0);
}

/* The norm's eps where it shows: at |x| <= 4 an eps of 1e-6 moves the scale by
   ~2e-7, below the tolerance, so a kernel that dropped or misread it passed.
   Here eps is 1e-2 of mean(x^2) ~ 5 (0.1% of the scale), or x is ~1e-3 so
   that eps = 1e-6 is most of mean(x^2) + eps. */
static int test_gpu_norm_eps(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_cu_set_smem_budget(0);
    static const struct { int rows, cols, end; float eps; double amp; } k[] = {
        { 7168, 5120, END_NORM, 1e-2f, 4.0 },         { 7168, 5120, END_NORM, 1e-6f, 1e-3 },
        { 34816, 5120, END_SWIGLU_NORM, 1e-2f, 4.0 }, { 45, 24 * 11 + 7, END_NORM, 1e-6f, 1e-3 },
        { 90, 24 * 11 + 7, END_SWIGLU_NORM, 1e-6f, 1e-3 },
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        for (int i8 = 0; i8 < 2; i8++)
            if (verify_eps(k[i].rows, k[i].cols, k[i].end, i8, 1900 + 2 * i + (uint64_t)i8, k[i].eps, k[i].amp))
                return T_FAIL;
    return T_PASS;
}

/* The engine's uses at 14B, 8B and 4B: q|k|v with the norm, o and down with
 * the add, gate|up pairs with SwiGLU and the norm; plus odd shapes (a tail,
 * rows past the last group). */
static int test_gpu_ends(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_cu_set_smem_budget(0);
    static const struct { int rows, cols, end; } k[] = {
        { 7168, 5120, END_NORM },  { 5120, 5120, END_RES },  { 5120, 17408, END_RES },  { 34816, 5120, END_SWIGLU_NORM },
        { 6144, 4096, END_NORM },  { 4096, 4096, END_RES },  { 4096, 12288, END_RES },  { 24576, 4096, END_SWIGLU_NORM },
        { 4096, 2560, END_NORM },  { 2560, 4096, END_RES },  { 2560, 9728, END_RES },   { 19456, 2560, END_SWIGLU_NORM },
        { 45, 24 * 11 + 7, END_NORM }, { 45, 24 * 11 + 7, END_RES }, { 90, 24 * 11 + 7, END_SWIGLU_NORM },
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        for (int i8 = 0; i8 < 2; i8++)
            if (verify(k[i].rows, k[i].cols, k[i].end, i8, 900 + 2 * i + (uint64_t)i8)) return T_FAIL;
    return T_PASS;
}

T_MAIN(T_CASE(test_references), T_CASE(test_spec_keys), T_CASE(test_gpu_ends), T_CASE(test_gpu_norm_eps))
