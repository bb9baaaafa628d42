/* Planes14S GEMV: the host reference against exact dense f64 weights (the
 * f16 roundings of weights and x only), the ffi path against a direct call,
 * the specialization's bounds; on a GPU, lr_call_verify at LR_GEMV_LEECH_TOL
 * (every output row against the f64 reference, outputs poisoned) on every
 * Qwen3 projection shape, odd shapes, the fused q|k|v and gate|up shapes,
 * launch geometries (prefetch, row groups, accumulator chains, register
 * caps, the IMAD shift form) and the benchmark arm. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/tuning.h"
#include "kernels/kernels.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/random.h"
#include "rt/call.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>

static int make(int rows, int cols, uint64_t seed, lr_p14s *L, lr_leech_matrix *m)
{
    T_OK(lr_leech_random_matrix(rows, cols, 12, 1, 0, seed, m));
    T_OK(lr_p14s_unfold(m, 0, L));
    return T_PASS;
}

static void fill_x(float *x, int cols, uint64_t seed)
{
    lr_rng r;
    lr_rng_seed(&r, seed);
    lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1.0);
}

static int test_reference_vs_dense(void)
{
    int shapes[][2] = { { 37, 24 * 13 + 7 }, { 16, 24 * 8 }, { 5, 24 * 30 + 23 }, { 40, 24 * 17 } };
    for (int s = 0; s < 4; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        lr_p14s L;
        lr_leech_matrix m;
        if (make(rows, cols, 100 + s, &L, &m)) return T_FAIL;
        float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *mag = malloc(sizeof(float) * rows);
        fill_x(x, cols, 7 + s);
        lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, NULL, y, rows,
                                cols);
        lr_gemv_leech_p14s_host_mag(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, NULL, mag,
                                    rows, cols);
        double worst = 0;
        for (int i = 0; i < rows; i++) {
            double d = 0, dm = 0;
            for (int b = 0; b < L.nblk; b++) {
                double w[24];
                T_OK(lr_p14s_get_f64(&L, i, b, w));
                for (int k = 0; k < 24; k++) d += w[k] * x[24 * b + k], dm += fabs(w[k] * x[24 * b + k]);
            }
            for (int j = 0; j < L.tail; j++) {
                double v = (double)lr_half_to_float(m.tail_f16[(size_t)i * L.tail + j]) * x[24 * L.nblk + j];
                d += v, dm += fabs(v);
            }
            double e = dm > 0 ? fabs(d - y[i]) / dm : fabs(d - y[i]);
            if (e > worst) worst = e;
            T_ASSERT(e < 1.5e-3, "shape %dx%d row %d: reference %g, dense %g (rel %g)", rows, cols, i, y[i], d, e);
            T_ASSERT(fabs(mag[i] - dm) <= 2e-3 * dm + 1e-30, "row %d: magnitude %g vs %g", i, mag[i], dm);
        }
        printf("    %dx%d: reference vs exact dense max rel %.2e, %u exceptions\n", rows, cols, worst, L.nexc);
        free(x), free(y), free(mag);
        lr_p14s_free(&L);
        lr_leech_random_free(&m);
    }
    return T_PASS;
}

static int test_ffi_matches_direct(void)
{
    lr_p14s L;
    lr_leech_matrix m;
    if (make(21, 24 * 11 + 3, 5, &L, &m)) return T_FAIL;
    float x[267], y1[21], y2[21];
    uint16_t xh[2 * 192];
    T_ASSERT(lr_p14s_xh_count(267) == 2 * 192, "xh count %zu", lr_p14s_xh_count(267));
    fill_x(x, 267, 11);
    lr_arg a[12];
    lr_gemv_leech_p14s_args(&L, x, xh, y1, a);
    T_OK(lr_call_host(&lr_gemv_leech_p14s_desc, a));
    lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, NULL, y2, 21, 267);
    T_ASSERT(!memcmp(y1, y2, sizeof y1), "ffi and direct calls differ");
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* x's f16 copy: rounded to nearest over the whole blocks, zeros over the
 * tail columns and the super-chunk pad (a pad block's codes are zero, and 0
 * times a NaN would not be); a spec with xh stages no x (smaller shared
 * memory) and the tuning knob extra3 bit 2 selects it. */
static int test_xh_copy_and_spec(void)
{
    const int cols = 24 * 9 + 5; /* 9 blocks: 2 super-chunks (384 halves), 5 tail columns */
    float x[24 * 9 + 5];
    uint16_t xh[384];
    T_ASSERT(lr_p14s_xh_count(cols) == 384, "count %zu", lr_p14s_xh_count(cols));
    for (int c = 0; c < cols; c++) x[c] = 1.0f + (float)c / 3.0f; /* most not exact in f16 */
    memset(xh, 0xff, sizeof xh);
    lr_p14s_xh_fill(x, cols, xh);
    for (int c = 0; c < 384; c++) {
        uint16_t want = c < 24 * 9 ? lr_float_to_half(x[c]) : 0;
        T_ASSERT(xh[c] == want, "column %d: %04x, want %04x", c, xh[c], want);
    }
    lr_jit_spec a, b;
    lr_launch_geom ga, gb;
    lr_leech_geom g = { .threads = 128, .rg = 1, .prefetch = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&a, &ga, 5120, 17408, 603, g, 232448));
    g.xh = 1;
    T_OK(lr_gemv_leech_p14s_spec(&b, &gb, 5120, 17408, 603, g, 232448));
    T_ASSERT(ga.smem - gb.smem == (17408 / 24 + 7) / 8 * 384, "smem %u with staging, %u with xh", ga.smem, gb.smem);
    g.xh = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&b, &gb, 5120, 17408, 603, g, 232448) == LR_EINVAL, "xh=2 accepted");
    lr_clear_error();
    lr_leech_geom k = { .threads = 128, .rg = 1, .prefetch = 1 };
    const int knobs[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 5, 0 }; /* extra3 = 5: xw + xh */
    lr_gemv_leech_p14s_apply_knobs(&k, knobs);
    T_ASSERT(k.xw == 1 && k.xh == 1 && k.epf == 0, "extra3 5: xw %d xh %d epf %d", k.xw, k.xh, k.epf);
    return T_PASS;
}

static int test_spec_bounds(void)
{
    lr_jit_spec s;
    lr_launch_geom g;
    lr_leech_geom geom = { .threads = 128, .rg = 1, .prefetch = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 && g.block.x == 128, "grid %u block %u", g.grid.x, g.block.x);
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64, "smem %u", g.smem);
    geom.prefetch = 6; /* plus six 1,792-byte ring stages per warp */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64 + 4 * 6 * 1792, "ring smem %u", g.smem);
    geom.prefetch = 1;
    geom.epf = 1; /* four words per thread for the epilogue fetched ahead */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64 + 16 * 128, "epf smem %u", g.smem);
    geom.threads = 64, geom.rg = 8; /* 64 threads for 128 rows: the template cannot, the host asks nothing */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 2 * 8 * 16 * 4 + 64, "epf off: smem %u", g.smem);
    geom.threads = 128, geom.rg = 1, geom.epf = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "epf 2 accepted");
    geom.epf = 0;
    geom.persist = 1; /* at most one CTA per SM (132 without a device) */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.grid.x == (lr_cu_available() ? (unsigned)lr_cu_device()->sm_count : 132u), "persistent grid %u", g.grid.x);
    geom.persist = 0;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 25600, 603, geom, 20000) == LR_ERANGE, "budget ignored");
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 5000, geom, 232448) == LR_EINVAL, "table over 16-bit headers");
    geom.minb = 17;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "minb past 2048 threads");
    geom.minb = 0, geom.l2pf = 17;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "l2pf 17 accepted");
    geom.l2pf = 0, geom.xw = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "xw 2 accepted");
    geom.xw = 0, geom.split = 9;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "split 9 accepted");
    geom.split = 4; /* four CTAs per batch, no cluster */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 * 4 && g.cluster.x == 0, "split grid %u cluster %u", g.grid.x, g.cluster.x);
    geom.threads = 64, geom.split = 5; /* more ranks than warps: the reduction holds 5 partials per row */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 91 * 384 + 2 * 5 * 16 * 4 + 64, "split 5 smem %u", g.smem);
    geom.threads = 128, geom.split = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 && g.cluster.x == 0, "split 1: grid %u cluster %u", g.grid.x, g.cluster.x);
    geom.split = 0, geom.threads = 48;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bad geometry accepted");
    lr_clear_error();
    return T_PASS;
}

/* The tuning table's knobs land on the geometry fields they name (H200
 * rows, read as a target: no GPU needed); an untuned shape keeps the
 * first-cut default. */
static int test_default_geom_from_table(void)
{
    lr_tuning_set_target("NVIDIA H200", 90);
    lr_leech_geom a = lr_gemv_leech_p14s_default_geom(34816, 5120), k = lr_gemv_leech_p14s_default_geom(1024, 5120);
    lr_leech_geom u = lr_gemv_leech_p14s_default_geom(77, 1001), d = lr_gemv_leech_p14s_default_geom(5120, 17408);
    lr_tuning_set_target(NULL, 0);
    T_ASSERT(a.threads == 128 && a.rg == 1 && a.prefetch == 1 && a.tabg == 1 && a.nacc == 1 && a.persist == 0 &&
                 a.minb == 0 && a.l2pf == 0 && a.xw == 1 && a.split == 0,
             "gate|up: threads %d rg %d prefetch %d shr %d nacc %d persist %d minb %d l2pf %d xw %d", a.threads, a.rg,
             a.prefetch, a.tabg, a.nacc, a.persist, a.minb, a.l2pf, a.xw);
    T_ASSERT(k.threads == 512 && k.xw == 1, "k: threads %d xw %d", k.threads, k.xw);
    T_ASSERT(d.threads == 256 && d.nacc == 1 && d.xw == 1 && d.epf == 0 && d.split == 0 && d.minb == 3,
             "down: threads %d nacc %d xw %d epf %d split %d minb %d", d.threads, d.nacc, d.xw, d.epf, d.split, d.minb);
    T_ASSERT(u.threads == 128 && u.rg == 1 && u.prefetch == 1 && !u.tabg && !u.nacc && !u.xw, "untuned shape");
    return T_PASS;
}

/* ---- GPU ---- */

/* grid 0: the specialization's grid; else that many CTAs, or groups of
 * geom.split CTAs (a persistent grid when fewer than the row-group batches). */
static int verify_grid(int rows, int cols, lr_leech_geom geom, uint64_t seed, unsigned grid)
{
    lr_p14s L;
    lr_leech_matrix m;
    if (make(rows, cols, seed, &L, &m)) return T_FAIL;
    lr_leech_random_free(&m);
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_p14s_spec(&spec, &g, rows, cols, L.nentries, geom, lr_cu_smem_budget()));
    if (grid) g.grid.x = grid * (geom.split > 1 ? (unsigned)geom.split : 1u);
    T_OK(lr_jit_get(&spec, &fn));
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows);
    uint16_t *xh = malloc(2 * lr_p14s_xh_count(cols));
    fill_x(x, cols, seed * 3 + 1);
    lr_arg a[12];
    lr_gemv_leech_p14s_args(&L, x, xh, y, a);
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_p14s_desc, fn, a, g, LR_GEMV_LEECH_TOL, &rep);
    printf("    %5d x %5d threads=%d rg=%d prefetch=%d nacc=%d minb=%d shr=%d l2pf=%d xw=%d split=%d grid %u: max rel err "
           "%.2e, %u exceptions\n",
           rows, cols, geom.threads, geom.rg, geom.prefetch, geom.nacc, geom.minb, geom.tabg, geom.l2pf, geom.xw, geom.split,
           g.grid.x, rep.max_rel_err, L.nexc);
    free(x), free(y), free(xh);
    lr_p14s_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int verify_shape(int rows, int cols, lr_leech_geom geom, uint64_t seed)
{
    return verify_grid(rows, cols, geom, seed, 0);
}

static int test_gpu_qwen3_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    for (int i = 0; i < lr_qwen3_nshapes; i++) {
        const lr_shape *s = &lr_qwen3_shapes[i];
        if (verify_shape(s->rows, s->cols, lr_gemv_leech_p14s_default_geom(s->rows, s->cols), 1000 + i)) {
            fprintf(stderr, "    at %s %s\n", s->model, s->matrix);
            return T_FAIL;
        }
    }
    return T_PASS;
}

static int test_gpu_odd_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    /* rows not a multiple of 8 or 16, cols not a multiple of 24 or 192,
     * fewer blocks than one super-chunk; the fused q|k|v and gate|up shapes */
    int shapes[][2] = { { 1, 24 },     { 7, 25 },       { 77, 1001 },         { 129, 24 * 7 },     { 1000, 24 * 8 * 3 + 23 },
                        { 7168, 5120 }, { 34816, 5120 }, { 5121, 17408 + 5 }, { 12288 + 2048, 4096 } };
    for (int i = 0; i < 9; i++)
        if (verify_shape(shapes[i][0], shapes[i][1], lr_gemv_leech_p14s_default_geom(shapes[i][0], shapes[i][1]),
                         2000 + i))
            return T_FAIL;
    return T_PASS;
}

/* {threads, rg, prefetch, xq, tabg (here: IMAD right shifts), nacc, persist, minb, l2pf, xw, split} */
static const lr_leech_geom g_geoms[] = { { 128, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, { 256, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, { 512, 1, 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0 },
                       { 64, 4, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0 },  { 256, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0 }, { 128, 1, 1, 0, 0, 3, 0, 8, 0, 0, 0, 0, 0, 0 },
                       { 1024, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, { 128, 1, 1, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0 }, { 256, 2, 0, 0, 1, 0, 0, 3, 0, 0, 0, 0, 0, 0 },
                       { 128, 1, 2, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0 }, { 256, 2, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, { 64, 3, 2, 0, 0, 2, 0, 10, 0, 0, 0, 0, 0, 0 },
                       /* cp.async rings of 3-6 stages */
                       { 128, 1, 4, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0 }, { 256, 2, 3, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, { 64, 1, 6, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0 },
                       /* L2 prefetch distances, x staged per warp, both, with rings */
                       { 128, 1, 1, 0, 1, 3, 0, 0, 3, 0, 0, 0, 0, 0 }, { 256, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0 }, { 128, 1, 1, 0, 1, 3, 0, 0, 0, 1, 0, 0, 0, 0 },
                       { 64, 3, 2, 0, 0, 2, 0, 0, 8, 1, 0, 0, 0, 0 }, { 1024, 1, 1, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0 }, { 128, 1, 4, 0, 0, 1, 0, 0, 2, 1, 0, 0, 0, 0 },
                       /* super-chunks split over 2-8 CTAs: staged x, prologue x, no prefetch,
                          rings, more warps than a rank's super-chunks (1024 threads x 2 > 28) */
                       { 128, 1, 1, 0, 1, 3, 0, 0, 0, 1, 4, 0, 0, 0 }, { 256, 2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0 }, { 64, 1, 4, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0 },
                       { 128, 1, 2, 0, 1, 3, 0, 0, 0, 1, 8, 0, 0, 0 }, { 1024, 1, 1, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0 }, { 256, 3, 1, 0, 0, 1, 0, 0, 2, 1, 5, 0, 0, 0 },
                       /* the row epilogue fetched ahead: default-like, 256 threads capped at 3 CTAs,
                          two threads per row (64 x rg 2), too few threads for one row each (32 x rg 3:
                          off), with a ring, split */
                       { 128, 1, 1, 0, 1, 3, 0, 0, 0, 1, 0, 1, 0, 0 }, { 256, 1, 1, 0, 1, 2, 0, 3, 0, 1, 0, 1, 0, 0 },
                       { 64, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0 }, { 32, 3, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0 },
                       { 256, 2, 4, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0 },
                       { 128, 1, 1, 0, 1, 3, 0, 0, 0, 1, 2, 1, 0, 0 },
                           /* x's f16 copy from global memory (xh): with xw set (xh wins), no
                              prefetch and 2 row groups, a ring, split + epf, 3 chains */
                           { 128, 1, 1, 0, 1, 3, 0, 0, 0, 1, 0, 0, 1, 0 }, { 256, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0 },
                           { 64, 1, 4, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1, 0 }, { 128, 1, 1, 0, 1, 1, 0, 0, 0, 0, 2, 1, 1, 0 } };

static int test_gpu_geometries(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");

    for (int i = 0; i < (int)(sizeof g_geoms / sizeof g_geoms[0]); i++)
        if (verify_shape(1000, 5120 + 24 * 3 + 1, g_geoms[i], 3000 + i)) return T_FAIL;
    return T_PASS;
}

/* Every geometry above fits the H200's opt-in shared memory (232,448 bytes)
 * at the shape it runs: checked here without a GPU, so CI catches a
 * geometry the GPU run would refuse. */
static int test_geometries_fit(void)
{
    for (int i = 0; i < (int)(sizeof g_geoms / sizeof g_geoms[0]); i++) {
        lr_jit_spec spec;
        lr_launch_geom g;
        int rc = lr_gemv_leech_p14s_spec(&spec, &g, 1000, 5120 + 24 * 3 + 1, 603, g_geoms[i], 232448);
        T_ASSERT(rc == LR_OK, "geometry %d: %s", i, lr_errmsg());
    }
    return T_PASS;
}


/* Persistent grids: CTAs looping over several row-group batches, the
 * double-buffered reduction, prefetch across batch boundaries. */
static int test_gpu_persistent(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    struct { int rows, cols; lr_leech_geom g; unsigned grid; } c[] = {
        { 1000, 5120 + 24 * 3 + 1, { 128, 1, 1, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 0 }, 7 },
        { 1000, 5120 + 24 * 3 + 1, { 128, 2, 2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 3 },
        { 1000, 5120 + 24 * 3 + 1, { 256, 3, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0 }, 5 },
        { 333, 1001, { 512, 1, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 1 },   /* one CTA does everything */
        { 77, 48, { 1024, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 2 },     /* more warps than super-chunks */
        { 34816, 5120, { 128, 1, 2, 0, 1, 3, 5, 0, 0, 0, 0, 0, 0, 0 }, 0 }, /* the fused gate|up, 5 CTAs per SM */
        { 5121, 17413, { 256, 1, 2, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0 }, 0 },
        /* rings refilled across batch boundaries, warps without work */
        { 1000, 5120 + 24 * 3 + 1, { 128, 1, 4, 0, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0 }, 7 },
        { 333, 1001, { 512, 2, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 2 },
        { 34816, 5120, { 128, 1, 4, 0, 1, 3, 4, 0, 0, 0, 0, 0, 0, 0 }, 0 },
        /* x staged by the first batch only, reused by the later ones; L2
           prefetches running past the last batch */
        { 1000, 5120 + 24 * 3 + 1, { 128, 1, 1, 0, 1, 3, 1, 0, 4, 1, 0, 0, 0, 0 }, 7 },
        { 333, 1001, { 512, 2, 2, 0, 0, 0, 1, 0, 2, 1, 0, 0, 0, 0 }, 2 },
        { 77, 48, { 1024, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0 }, 2 },
        { 5121, 17413, { 256, 1, 1, 0, 1, 3, 3, 0, 3, 1, 0, 0, 0, 0 }, 0 },
        /* split ranks looping over batches (each batch's counter reset by
           its last rank, double-buffered partials), the down shape split 4
           ways, one super-chunk in all */
        { 1000, 5120 + 24 * 3 + 1, { 128, 1, 1, 0, 1, 3, 1, 0, 0, 1, 2, 0, 0, 0 }, 7 },
        { 333, 1001, { 128, 2, 2, 0, 0, 0, 1, 0, 0, 1, 3, 0, 0, 0 }, 2 },
        { 5121, 17413, { 128, 1, 1, 0, 1, 3, 0, 0, 0, 1, 4, 0, 0, 0 }, 0 },
        { 77, 48, { 128, 1, 1, 0, 0, 0, 1, 0, 0, 1, 4, 0, 0, 0 }, 2 },
        { 1000, 5120 + 24 * 3 + 1, { 64, 1, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0 }, 3 },
        /* epilogue fetched ahead: later batches start() at their top; rows < 16;
           with a split (every rank fetches, the last finishes) */
        { 1000, 5120 + 24 * 3 + 1, { 128, 1, 1, 0, 1, 3, 1, 0, 0, 1, 0, 1, 0, 0 }, 7 },
        { 77, 48, { 1024, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0 }, 2 },
        { 1000, 5120 + 24 * 3 + 1, { 128, 1, 1, 0, 1, 3, 1, 0, 0, 1, 3, 1, 0, 0 }, 5 },
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++)
        if (verify_grid(c[i].rows, c[i].cols, c[i].g, 5000 + i, c[i].grid)) return T_FAIL;
    return T_PASS;
}

/* y of the epilogue fetched ahead (LR_EPF) equals the plain epilogue's bit
 * for bit: same arithmetic in the same order, only the loads move. */
static int run_y(lr_p14s *L, const float *x, float *y, lr_leech_geom geom)
{
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_p14s_spec(&spec, &g, L->rows, L->cols, L->nentries, geom, lr_cu_smem_budget()));
    T_OK(lr_jit_get(&spec, &fn));
    lr_arg a[12];
    uint16_t *xh = malloc(2 * lr_p14s_xh_count(L->cols));
    lr_gemv_leech_p14s_args(L, (float *)x, xh, y, a);
    int rc = lr_call_upload(&lr_gemv_leech_p14s_desc, a);
    if (!rc) rc = lr_call_launch(&lr_gemv_leech_p14s_desc, fn, a, g, NULL);
    if (!rc) rc = lr_call_download(&lr_gemv_leech_p14s_desc, a);
    lr_call_free_dev(&lr_gemv_leech_p14s_desc, a);
    free(xh);
    T_OK(rc);
    return T_PASS;
}

/* Features that move loads but not arithmetic must leave y bit-identical:
 * the epilogue fetched ahead (epf), the PDL trigger after the main loop
 * (trigger, alone and with epf) and x's f16 copy read from global memory (xh: the same halves, rounded on
 * the host instead of by the staging). */
static int test_gpu_epf_identical(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int shapes[][2] = { { 5120, 17408 }, { 1000, 5120 + 24 * 3 + 1 }, { 77, 1001 } };
    const struct { int epf, trigger, xh; const char *what; } var[] = {
        { 1, 0, 0, "epf" }, { 0, 1, 0, "trigger" }, { 1, 1, 0, "epf + trigger" }, { 0, 0, 1, "xh" } };
    for (int i = 0; i < 3; i++) {
        lr_p14s L;
        lr_leech_matrix m;
        if (make(shapes[i][0], shapes[i][1], 4000 + i, &L, &m)) return T_FAIL;
        lr_leech_random_free(&m);
        float *x = malloc(sizeof(float) * L.cols), *y0 = malloc(sizeof(float) * L.rows),
              *y1 = malloc(sizeof(float) * L.rows);
        fill_x(x, L.cols, 4100 + i);
        lr_leech_geom g = lr_gemv_leech_p14s_default_geom(L.rows, L.cols);
        g.epf = 0, g.trigger = 0, g.xh = 0;
        int bad = run_y(&L, x, y0, g), diff = -1, v = 0;
        float d0 = 0.f, d1 = 0.f;
        for (; v < 4 && !bad && diff < 0; v++) {
            g.epf = var[v].epf, g.trigger = var[v].trigger, g.xh = var[v].xh;
            memset(y1, 0xff, sizeof(float) * L.rows); /* NaN: a row left unwritten differs */
            bad = run_y(&L, x, y1, g);
            for (int r = 0; !bad && r < L.rows && diff < 0; r++)
                if (memcmp(&y0[r], &y1[r], 4)) diff = r, d0 = y0[r], d1 = y1[r];
            printf("    %5d x %5d threads=%d: %s %s\n", L.rows, L.cols, g.threads, var[v].what,
                   bad ? "failed" : diff < 0 ? "bit-identical" : "differs");
        }
        free(x), free(y0), free(y1);
        lr_p14s_free(&L);
        if (bad) return T_FAIL;
        T_ASSERT(diff < 0, "%s, row %d: y %a without, %a with", var[v - 1].what, diff, d0, d1);
    }
    return T_PASS;
}

static int test_gpu_arm(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    void *st;
    T_OK(lr_arm_leech_p14s.prepare(1024, 5120, 2, 42, NULL, &st));
    double err;
    T_OK(lr_arm_leech_p14s.verify(st, 43, &err));
    size_t b = lr_arm_leech_p14s.bytes(st);
    T_ASSERT(b > (size_t)1024 * 5120 * 4.6 / 8 && b < (size_t)1024 * 5120 * 5.1 / 8, "bytes %zu", b);
    printf("    arm leech_p14s 1024 x 5120: verify %.2e, %.3f b/w read\n", err, 8.0 * b / (1024.0 * 5120));
    lr_arm_leech_p14s.destroy(st);
    lr_gemv_arm_opts o = { .threads = 256, .rpw = 2, .tile = 2, .extra = { -1 } };
    T_OK(lr_arm_leech_p14s.prepare(500, 2560, 1, 44, &o, &st));
    T_OK(lr_arm_leech_p14s.verify(st, 45, &err));
    /* one launch through the arm on a stream: x = 0 gives y = 0 */
    CUdeviceptr dx, dy;
    CUstream sm;
    T_OK(lr_cu_stream_create(&sm));
    T_OK(lr_cu_alloc(&dx, sizeof(float) * 2560));
    T_OK(lr_cu_alloc(&dy, sizeof(float) * 500));
    T_OK(lr_cu_memset8(dx, 0, sizeof(float) * 2560));
    T_OK(lr_cu_memset8(dy, 0x7f, sizeof(float) * 500));
    T_OK(lr_arm_leech_p14s.launch(st, 0, dx, dy, sm));
    T_OK(lr_cu_stream_sync(sm));
    float yb[500];
    T_OK(lr_cu_d2h(yb, dy, sizeof yb));
    for (int i = 0; i < 500; i++) T_ASSERT(yb[i] == 0, "zero x gives y[%d] = %g", i, yb[i]);
    lr_cu_free(dx), lr_cu_free(dy);
    lr_cu_stream_destroy(sm);
    lr_arm_leech_p14s.destroy(st);
    return T_PASS;
}

/* The loads-only control: every row's bit count equals the host's, at the
 * table geometry, with x staged per warp, and persistent with two row
 * groups per CTA. */
static int test_gpu_loads_control(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_gemv_arm_opts os[] = { { 0 }, { .threads = 128, .rpw = 2, .extra = { 1, 2, 0, 1 } },
                              { .threads = 256, .extra = { 2, -1, 2, -1 } },
                              { .threads = 128, .extra = { 1, -1, -1, 1, 4 } }, { .threads = 128, .rpw = 2, .extra = { 1, 2, 0, 1, 2 } } };
    for (int i = 0; i < 5; i++) {
        void *st;
        double err;
        T_OK(lr_arm_leech_p14s_loads.prepare(1000, 5120 + 24 * 3 + 1, 1, 60 + i, &os[i], &st));
        int rc = lr_arm_leech_p14s_loads.verify(st, 70 + i, &err);
        lr_arm_leech_p14s_loads.destroy(st);
        T_OK(rc);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_reference_vs_dense), T_CASE(test_ffi_matches_direct), T_CASE(test_spec_bounds), T_CASE(test_default_geom_from_table),
       T_CASE(test_gpu_qwen3_shapes), T_CASE(test_gpu_odd_shapes), T_CASE(test_gpu_geometries), T_CASE(test_geometries_fit), T_CASE(test_xh_copy_and_spec), T_CASE(test_gpu_persistent),
       T_CASE(test_gpu_epf_identical), T_CASE(test_gpu_arm), T_CASE(test_gpu_loads_control))
