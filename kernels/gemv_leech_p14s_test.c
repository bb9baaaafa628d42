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
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
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

static int test_reference_vs_dense(void)
{
    int shapes[][2] = { { 37, 24 * 13 + 7 }, { 16, 24 * 8 }, { 5, 24 * 30 + 23 }, { 40, 24 * 17 } };
    for (int s = 0; s < 4; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        lr_p14s L;
        lr_leech_matrix m;
        if (make(rows, cols, 100 + s, &L, &m)) return T_FAIL;
        float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *mag = malloc(sizeof(float) * rows);
        lr_fill_random_seed(LR_E_F32, x, (size_t)cols, 7 + s, 1.0);
        lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, y, rows, cols);
        lr_gemv_leech_p14s_host_mag(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, mag, rows,
                                    cols);
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
        /* the int8 mode's reference over the int8 form: x to 15 bits per
           super-chunk instead of f16, so within f16's rounding of the f16
           reference (relative to the row's magnitude) */
        uint8_t *d8 = malloc(L.bytes), *t8 = malloc((size_t)L.nentries * 16);
        float *y8 = malloc(sizeof(float) * rows), *mag8 = malloc(sizeof(float) * rows);
        T_ASSERT(d8 && t8 && y8 && mag8, "out of memory");
        T_OK(lr_p14s_i8_form(&L, d8, t8));
        lr_gemv_leech_p14s_i8_host(d8, t8, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, y8, rows, cols);
        lr_gemv_leech_p14s_i8_host_mag(d8, t8, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, mag8, rows,
                                       cols);
        double w8 = 0;
        for (int i = 0; i < rows; i++) {
            const double e = fabs((double)y8[i] - y[i]) / mag[i];
            if (e > w8) w8 = e;
            T_ASSERT(e < 5e-4 && fabs(mag8[i] - mag[i]) <= 5e-4 * mag[i], "row %d: int8 reference %g (mag %g), f16 %g (mag %g)", i,
                     y8[i], mag8[i], y[i], mag[i]);
        }
        printf("    int8 reference vs f16 reference: max rel %.2e\n", w8);
        /* the 3-bit form's (its own exception lists) computes the same as
           the int8 form's: the same weights and the same quantized x */
        lr_p14s_c3 F;
        T_OK(lr_p14s_c3_form(&L, 2, &F));
        float *y3 = malloc(sizeof(float) * rows), *mag3 = malloc(sizeof(float) * rows);
        T_ASSERT(y3 && mag3, "out of memory");
        lr_gemv_leech_p14s_c3_host(F.data, F.tab, L.row_scale, L.tail_f16, F.exc_ptr, F.exc_col, F.exc_dw, x, y3, rows, cols);
        lr_gemv_leech_p14s_c3_host_mag(F.data, F.tab, L.row_scale, L.tail_f16, F.exc_ptr, F.exc_col, F.exc_dw, x, mag3,
                                       rows, cols);
        for (int i = 0; i < rows; i++)
            T_ASSERT(fabs(y3[i] - y8[i]) <= 1e-6 * mag8[i] && fabs(mag3[i] - mag8[i]) <= 1e-6 * mag8[i],
                     "row %d: 3-bit form reference %g (mag %g), int8 form %g (mag %g)", i, y3[i], mag3[i], y8[i], mag8[i]);
        free(y3), free(mag3);
        lr_p14s_c3_free(&F);
        free(d8), free(t8), free(y8), free(mag8);
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
    lr_fill_random_seed(LR_E_F32, x, 267, 11, 1.0);
    lr_arg a[11];
    lr_gemv_leech_p14s_args(&L, x, y1, a);
    T_OK(lr_call_host(&lr_gemv_leech_p14s_desc, a));
    lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, y2, 21, 267);
    T_ASSERT(!memcmp(y1, y2, sizeof y1), "ffi and direct calls differ");
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* The tuning knobs: extra3 bits 0 and 1 are xw and epf; the knobs of the
 * removed features (extra2, extra3 bit 2, extra4) change nothing. */
static int test_knobs(void)
{
    lr_leech_geom k = { .threads = 128, .rg = 1, .prefetch = 1 };
    const int knobs[LR_TUNE_KNOBS] = { 256, 2, 2, 3, 2, 4, 3, 7, 7, 4 };
    lr_gemv_leech_p14s_apply_knobs(&k, knobs);
    T_ASSERT(k.threads == 256 && k.rg == 2 && k.shr == 1 && k.nacc == 3 && k.prefetch == 2 && k.persist == 4 &&
                 k.minb == 3 && k.xw == 1 && k.epf == 1,
             "threads %d rg %d shr %d nacc %d prefetch %d persist %d minb %d xw %d epf %d", k.threads, k.rg, k.shr,
             k.nacc, k.prefetch, k.persist, k.minb, k.xw, k.epf);
    const int off[LR_TUNE_KNOBS] = { 0, 0, 0, 0, -1, -1, 0, -1, -1, -1 };
    lr_gemv_leech_p14s_apply_knobs(&k, off);
    T_ASSERT(k.prefetch == 0 && k.persist == 0 && k.xw == 0 && k.epf == 0 && k.threads == 256, "negative knobs");
    const int grp[LR_TUNE_KNOBS] = { 768, 0, 0, 0, 0, 0, 0, 0, 176, 0 }; /* 6 groups (bits 3-6); bit 7 is gone */
    lr_gemv_leech_p14s_apply_knobs(&k, grp);
    T_ASSERT(k.groups == 6 && k.xw == 0 && k.epf == 0, "groups %d", k.groups);
    const int grp1[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 25, 0 }; /* 3 groups, xw asked */
    lr_gemv_leech_p14s_apply_knobs(&k, grp1);
    T_ASSERT(k.groups == 3 && k.xw == 1, "groups %d xw %d", k.groups, k.xw);
    const int grp6[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 256 + 48 + 1, 0 }; /* bit 8 (ping-pong) is gone */
    lr_gemv_leech_p14s_apply_knobs(&k, grp6);
    T_ASSERT(k.groups == 6 && k.xw == 1, "groups %d xw %d", k.groups, k.xw);
    const int xwonly[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
    lr_gemv_leech_p14s_apply_knobs(&k, xwonly);
    T_ASSERT(k.groups == 0, "groups %d after extra3 1", k.groups);
    /* the int8 mode (bit 19): set by the bit, kept (the default's) without
       it, cleared by a negative extra3 */
    const int i8[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 524288 + 1, 0 };
    lr_gemv_leech_p14s_apply_knobs(&k, i8);
    T_ASSERT(k.i8 == 1 && k.xw == 1, "i8 %d xw %d", k.i8, k.xw);
    lr_gemv_leech_p14s_apply_knobs(&k, xwonly);
    T_ASSERT(k.i8 == 1, "i8 %d after extra3 1", k.i8);
    lr_gemv_leech_p14s_apply_knobs(&k, off);
    T_ASSERT(k.i8 == 0, "i8 %d after extra3 -1", k.i8);
    /* the 3-bit form (bit 20) sets the int8 mode too; a negative extra3
       clears both; the spec refuses it without the int8 mode */
    const int c3[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 1048576 + 1, 0 };
    lr_gemv_leech_p14s_apply_knobs(&k, c3);
    T_ASSERT(k.i8 == 1 && k.c3 == 1 && k.xw == 1, "i8 %d c3 %d xw %d", k.i8, k.c3, k.xw);
    lr_gemv_leech_p14s_apply_knobs(&k, off);
    T_ASSERT(k.i8 == 0 && k.c3 == 0, "i8 %d c3 %d after extra3 -1", k.i8, k.c3);
    {
        lr_jit_spec sp;
        lr_launch_geom lg;
        lr_leech_geom g3 = { .threads = 128, .rg = 1, .prefetch = 1, .c3 = 1 };
        T_ASSERT(lr_gemv_leech_p14s_spec(&sp, &lg, 64, 24 * 16, 603, g3, 48 * 1024) == LR_EINVAL &&
                     strstr(lr_errmsg(), "c3=1"),
                 "c3 without i8 accepted: %s", lr_errmsg());
        lr_clear_error();
        g3.i8 = 1;
        T_OK(lr_gemv_leech_p14s_spec(&sp, &lg, 64, 24 * 16, 603, g3, 48 * 1024));
        T_ASSERT(lr_jit_spec_get(&sp, "c3", 0) == 1 && lr_jit_spec_get(&sp, "i8", 0) == 1, "spec without c3 / i8");
    }
    const int bal[LR_TUNE_KNOBS] = { 768, 0, 0, 0, 0, 0, 0, 0, 512, 0 }; /* balanced split (bit 9) */
    lr_gemv_leech_p14s_apply_knobs(&k, bal);
    T_ASSERT(k.bal == 1 && k.groups == 0 && k.xw == 0, "bal %d groups %d xw %d", k.bal, k.groups, k.xw);
    lr_gemv_leech_p14s_apply_knobs(&k, xwonly);
    T_ASSERT(k.bal == 0, "bal %d after extra3 1", k.bal);
    const int split[LR_TUNE_KNOBS] = { 768, 0, 0, 0, 0, 0, 0, 0, 1024 + 2, 0 }; /* split over segments (bit 10) */
    lr_gemv_leech_p14s_apply_knobs(&k, split);
    T_ASSERT(k.bal == 2 && k.epf == 1 && k.ilv == 0, "bal %d epf %d ilv %d", k.bal, k.epf, k.ilv);
    const int ilv[LR_TUNE_KNOBS] = { 768, 0, 0, 0, 0, 0, 0, 0, 2048 + 512, 0 }; /* round-robin segments (bit 11) */
    lr_gemv_leech_p14s_apply_knobs(&k, ilv);
    T_ASSERT(k.bal == 1 && k.ilv == 1 && k.pro == 0, "bal %d ilv %d pro %d", k.bal, k.ilv, k.pro);
    const int stag[LR_TUNE_KNOBS] = { 768, 0, 0, 0, 0, 0, 0, 0, 16384 + 1024, 0 }; /* bit 14 (ilv 2) is gone */
    lr_gemv_leech_p14s_apply_knobs(&k, stag);
    T_ASSERT(k.bal == 2 && k.ilv == 0, "bal %d ilv %d", k.bal, k.ilv);
    const int pro[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, 4096 + 24, 0 }; /* prologue loads batched (bit 12) */
    lr_gemv_leech_p14s_apply_knobs(&k, pro);
    T_ASSERT(k.pro == 1 && k.groups == 3 && k.bal == 0 && k.ilv == 0, "pro %d groups %d bal %d ilv %d", k.pro, k.groups,
             k.bal, k.ilv);
    lr_gemv_leech_p14s_apply_knobs(&k, xwonly);
    T_ASSERT(k.bal == 0, "bal %d after extra3 1", k.bal);
    const int side[LR_TUNE_KNOBS] = { 0, 0, 0, 0, 0, 0, 0, 0, (3 << 16) + 2048 + 1024, 0 }; /* side warps (bits 16-18) */
    lr_gemv_leech_p14s_apply_knobs(&k, side);
    T_ASSERT(k.side == 3 && k.bal == 2 && k.ilv == 1, "side %d bal %d ilv %d", k.side, k.bal, k.ilv);
    lr_gemv_leech_p14s_apply_knobs(&k, split); /* no side bits: kept */
    T_ASSERT(k.side == 3 && k.bal == 2, "side %d bal %d", k.side, k.bal);
    lr_gemv_leech_p14s_apply_knobs(&k, off); /* extra3 -1: none */
    T_ASSERT(k.side == 0, "side %d after extra3 -1", k.side);
    return T_PASS;
}

/* The side warp: one more warp in the block, its shared memory (3 floats
 * per row of the CTA or of its groups' batches, 1024 products), refused
 * where no warp or named barrier is left; xrot turns it off. */
static int test_side_spec(void)
{
    lr_jit_spec s0, s1;
    lr_launch_geom g0, g1;
    lr_leech_geom geom = { .threads = 768, .rg = 1, .prefetch = 1, .groups = 3, .shr = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&s0, &g0, 5120, 5120, 603, geom, 232448));
    geom.side = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s1, &g1, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g1.block.x == 800 && g0.block.x == 768 && lr_jit_spec_get(&s1, "side", 0) == 1 &&
                 lr_jit_spec_get(&s0, "side", 0) == 0,
             "block %u / %u", g0.block.x, g1.block.x);
    T_ASSERT(g1.smem == g0.smem + 4 * (3 * 48 + 1024), "smem %u against %u", g1.smem, g0.smem);
    geom.side = 3;
    T_OK(lr_gemv_leech_p14s_spec(&s1, &g1, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g1.block.x == 864 && g1.smem == g0.smem + 4 * (3 * 48 + 3 * 1024) && lr_jit_spec_get(&s1, "side", 0) == 3,
             "3 side warps: block %u smem %u", g1.block.x, g1.smem);
    geom.side = 5;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s1, &g1, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "5 side warps");
    geom = (lr_leech_geom){ .threads = 928, .rg = 1, .side = 4 };
    T_ASSERT(lr_gemv_leech_p14s_spec(&s1, &g1, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "1056 threads");
    geom = (lr_leech_geom){ .threads = 768, .rg = 1, .prefetch = 1, .bal = 2, .ilv = 1, .epf = 1, .side = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&s1, &g1, 34816, 5120, 603, geom, 232448));
    const int bal = (int)lr_jit_spec_get(&s1, "bal", 0);
    T_ASSERT(bal > 0 && lr_jit_spec_get(&s1, "epf", 0) == 0 && g1.block.x == 800, "bal %d epf %d", bal,
             (int)lr_jit_spec_get(&s1, "epf", 0));
    geom = (lr_leech_geom){ .threads = 1024, .rg = 1, .side = 1 };
    T_ASSERT(lr_gemv_leech_p14s_spec(&s1, &g1, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "side with 1024 threads");
    geom = (lr_leech_geom){ .threads = 896, .rg = 1, .groups = 7, .side = 1 };
    T_ASSERT(lr_gemv_leech_p14s_spec(&s1, &g1, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "side with 7 groups");
    geom = (lr_leech_geom){ .threads = 768, .rg = 1, .prefetch = 1, .groups = 3, .pro = 1, .side = 1 };
    T_OK(lr_gemv_leech_p14s_spec_rot(&s1, &g1, 5120, 5120, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s1, "side", 0) == 0 && g1.block.x == 768, "xrot kept the side warp");
    /* LEECHRT_GEMV_SIDE: 0-4, garbage refused by name and the value kept */
    const int keep = lr_gemv_p14s_side;
    T_OK(lr_gemv_p14s_side_set("LEECHRT_GEMV_SIDE", "2"));
    T_ASSERT(lr_gemv_leech_p14s_default_geom(77, 1001).side == 2, "LEECHRT_GEMV_SIDE=2 ignored");
    T_ASSERT(lr_gemv_p14s_side_set("LEECHRT_GEMV_SIDE", "two") == LR_EINVAL && strstr(lr_errmsg(), "LEECHRT_GEMV_SIDE"),
             "LEECHRT_GEMV_SIDE=two accepted");
    T_ASSERT(lr_gemv_p14s_side_set("LEECHRT_GEMV_SIDE", "5") == LR_EINVAL && lr_gemv_p14s_side == 2,
             "LEECHRT_GEMV_SIDE=5 accepted");
    T_OK(lr_gemv_p14s_side_set("LEECHRT_GEMV_SIDE", NULL)); /* unset: unchanged */
    T_ASSERT(lr_gemv_p14s_side == 2, "unset changed the setting");
    lr_gemv_p14s_side = keep;
    return T_PASS;
}

static int test_spec_bounds(void)
{
    /* the grids below follow the opened device's SMs (132 with none): open it first */
    (void)lr_cu_available();
    lr_jit_spec s;
    lr_launch_geom g;
    lr_leech_geom geom = { .threads = 128, .rg = 1, .prefetch = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 && g.block.x == 128, "grid %u block %u", g.grid.x, g.block.x);
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64, "smem %u", g.smem);
    geom.prefetch = 3; /* the rings are gone: two segments ahead at most */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "prefetch 3 accepted");
    geom.prefetch = 2;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64, "prefetch 2 smem %u", g.smem);
    geom.prefetch = 1;
    /* early: a key of the spec, nothing else changes; only 0 or 1 */
    geom.early = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "early", 0) == 1 && g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64, "early spec");
    geom.early = 2; /* the table by cp.async */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "early", 0) == 2, "early 2 spec");
    geom.early = 3;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "early 3 accepted");
    geom.early = 0;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "early", 0) == 0, "early 0 in the spec");
    /* the default geometry takes the setting; garbage is refused, naming it */
    T_ASSERT(lr_gemv_leech_p14s_default_geom(5120, 5120).early == 1, "early not the default");
    T_OK(lr_gemv_p14s_early_set("LEECHRT_GEMV_EARLY", "0"));
    T_ASSERT(lr_gemv_leech_p14s_default_geom(5120, 5120).early == 0, "LEECHRT_GEMV_EARLY=0 ignored");
    T_ASSERT(lr_gemv_p14s_early_set("LEECHRT_GEMV_EARLY", "yes") == LR_EINVAL && strstr(lr_errmsg(), "LEECHRT_GEMV_EARLY"),
             "garbage accepted: %s", lr_errmsg());
    T_ASSERT(lr_gemv_p14s_early == 0, "garbage changed the setting");
    T_ASSERT(lr_gemv_p14s_early_set("LEECHRT_GEMV_EARLY", "3") == LR_EINVAL, "LEECHRT_GEMV_EARLY=3 accepted");
    T_OK(lr_gemv_p14s_early_set("LEECHRT_GEMV_EARLY", "2"));
    T_ASSERT(lr_gemv_leech_p14s_default_geom(5120, 5120).early == 2, "LEECHRT_GEMV_EARLY=2 ignored");
    T_OK(lr_gemv_p14s_early_set("LEECHRT_GEMV_EARLY", NULL)); /* unset: unchanged */
    T_OK(lr_gemv_p14s_early_set("LEECHRT_GEMV_EARLY", "1"));
    lr_clear_error();
    geom.epf = 1; /* four words per thread for the epilogue fetched ahead */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 4 * 16 * 4 + 64 + 16 * 128, "epf smem %u", g.smem);
    geom.threads = 64, geom.rg = 8; /* 64 threads for 128 rows: the template cannot, the host asks nothing */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 2 * 8 * 16 * 4 + 64, "epf off: smem %u", g.smem);
    geom.threads = 768, geom.rg = 1, geom.epf = 1, geom.xw = 1, geom.groups = 6;
    /* six groups of four warps share one copy of the table; x staged in
       the prologue (xw off); each group fetches its batch's row end ahead
       (128 threads for 16 rows: the ahead words of every thread); 320 row
       groups over 6 per CTA */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(g.smem == 603 * 16 + 27 * 384 + 2 * 24 * 16 * 4 + 64 + 16 * 768 && g.grid.x == 54 && g.block.x == 768,
             "groups: smem %u grid %u", g.smem, g.grid.x);
    T_ASSERT(lr_jit_spec_get(&s, "xw", 0) == 0 && lr_jit_spec_get(&s, "epf", 0) == 1 &&
                 lr_jit_spec_get(&s, "groups", 0) == 6,
             "groups spec");
    {
        lr_leech_geom gg = geom;
        gg.threads = 1024, gg.groups = 2, gg.rg = 8; /* 512 threads per group for 128 rows: epf on */
        T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, gg, 232448));
        T_ASSERT(lr_jit_spec_get(&s, "epf", 0) == 1, "groups of 512 threads for 128 rows: epf off");
        gg.threads = 512, gg.groups = 8; /* 64 threads per group for 128 rows: off */
        T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, gg, 232448));
        T_ASSERT(lr_jit_spec_get(&s, "epf", 0) == 0, "groups of 64 threads for 128 rows: epf on");
    }
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 20000) == LR_ERANGE, "past the budget");
    geom.groups = 5; /* 768 threads are not 5 groups of whole warps */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "5 groups accepted");
    geom.threads = 32 * 16, geom.groups = 16; /* named barriers 1..15 */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "16 groups accepted");
    geom.groups = 0, geom.xw = 0, geom.epf = 0;
    geom.threads = 128, geom.tabg = 1; /* Planes14's field: refused, not read as shr */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "tabg accepted");
    geom.tabg = 0, geom.shr = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "shr", 0) == 1, "shr not in the spec");
    geom.shr = 0;
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
    geom.minb = 0, geom.xw = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "xw 2 accepted");
    geom.xw = 0;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    T_ASSERT(g.grid.x == 320 && g.cluster.x == 0, "down: grid %u cluster %u", g.grid.x, g.cluster.x);
    T_ASSERT(g.smem == 603 * 16 + 91 * 384 + 2 * 4 * 16 * 4 + 64, "down smem %u", g.smem);
    /* the balanced split: one CTA per SM, at most one per row group; its
       grid sets the row groups a CTA takes (bal = 320 / 132 rounded up on
       the 14B down), warp partials per row group touched, then the row sums */
    geom.threads = 768, geom.bal = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    const unsigned sms = lr_cu_available() ? (unsigned)lr_cu_device()->sm_count : 132u;
    const int bal = (int)((320 + sms - 1) / sms), btw = (bal * 91 + 23) / 24, kmax = (btw + 89) / 91 + 1;
    T_ASSERT(g.grid.x == (sms < 320 ? sms : 320) && lr_jit_spec_get(&s, "bal", 0) == bal, "bal grid %u bal %lld",
             g.grid.x, lr_jit_spec_get(&s, "bal", 0));
    T_ASSERT(g.smem == (unsigned)(603 * 16 + 91 * 384 + (24 * kmax + bal) * 16 * 4 + 64), "bal smem %u", g.smem);
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 77, 48, 603, geom, 232448));
    T_ASSERT(g.grid.x == 5 && lr_jit_spec_get(&s, "bal", 0) == 1, "bal: %u CTAs for 5 row groups", g.grid.x);
    geom.epf = 1; /* the row end fetched ahead: one row per thread of the CTA's rows */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "epf", 0) == 1 &&
                 g.smem == (unsigned)(603 * 16 + 91 * 384 + (24 * kmax + bal) * 16 * 4 + 64 + 16 * 768),
             "bal epf smem %u", g.smem);
    geom.threads = 32; /* 32 threads for the 16 rows of the 14B gate|up's CTAs: epf off */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 34816, 5120, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "epf", 0) == 0, "epf with fewer threads than rows");
    geom.threads = 768, geom.epf = 0;
    geom.groups = 6; /* bal is its own split: no groups, one row group per segment, prefetch 1 */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bal with groups");
    geom.groups = 0, geom.rg = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bal with rg 2");
    geom.rg = 1, geom.prefetch = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bal with prefetch 2");
    geom.prefetch = 1, geom.bal = 3;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "bal 3 accepted");
    /* bal 2, the split over segments: the same grid; CTA c takes segments
       [c T / G, (c + 1) T / G) of T = 320 * 91, so it touches at most
       ceil(T / G / 91) + 1 row groups (3 or 4 on the 14B down), and a flag
       per row follows its row sums */
    geom.bal = 2;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    {
        const unsigned G = sms < 320 ? sms : 320;
        int most = 0;
        for (unsigned c = 0; c < G; c++) {
            const long long tA = c * 320LL * 91 / G, tB = (c + 1) * 320LL * 91 / G;
            const int n = (int)((tB - 1) / 91 - tA / 91 + 1);
            most = n > most ? n : most;
        }
        const int sbtw = (most * 91 + 23) / 24, skmax = (sbtw + 89) / 91 + 1;
        T_ASSERT(g.grid.x == G && lr_jit_spec_get(&s, "bal", 0) == most && lr_jit_spec_get(&s, "split", 0) == 1,
                 "split grid %u bal %lld split %lld", g.grid.x, lr_jit_spec_get(&s, "bal", 0),
                 lr_jit_spec_get(&s, "split", 0));
        T_ASSERT(most == (sms == 132 ? 4 : most), "split: %d row groups on 132 SMs", most);
        T_ASSERT(g.smem == (unsigned)(603 * 16 + 91 * 384 + (24 * skmax + most) * 16 * 4 + most * 16 + 64),
                 "split smem %u", g.smem);
    }
    geom.groups = 6;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 5120, 603, geom, 232448) == LR_EINVAL, "split with groups");
    geom.groups = 0;
    /* ilv: a partial slot per warp and row group of the CTA */
    geom.ilv = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    {
        const int most = (int)lr_jit_spec_get(&s, "bal", 0);
        T_ASSERT(lr_jit_spec_get(&s, "ilv", 0) == 1 &&
                     g.smem == (unsigned)(603 * 16 + 91 * 384 + (24 * most + most) * 16 * 4 + most * 16 + 64),
                 "ilv smem %u (bal %d)", g.smem, most);
    }
    geom.bal = 0; /* ilv without bal */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) == LR_EINVAL, "ilv without bal");
    geom.ilv = 2, geom.bal = 2; /* the walk from a point of each CTA's own: measured and removed */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) == LR_EINVAL, "ilv 2");
    geom.ilv = 0, geom.bal = 0;
    geom.pro = 1; /* the prologue batched: a spec parameter, nothing else changes */
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    T_ASSERT(lr_jit_spec_get(&s, "pro", 0) == 1, "pro not in the spec");
    geom.pro = 2;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) == LR_EINVAL, "pro 2 accepted");
    geom.pro = 0;
    geom.threads = 48;
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
    /* the 14B gate|up: the balanced split over segments dealt round-robin
       (bal 2, ilv; the sweeps at c352ca4 and 324c9dc; whole row groups per
       CTA at ba009a8 and dd97e2e); down:
       one persistent CTA per SM of three groups of eight warps (a65ca43 and
       later) with the prologue's x loads batched (pro, 6783868) */
    T_ASSERT(a.threads == 768 && a.rg == 1 && a.prefetch == 1 && a.shr == 1 && a.nacc == 1 && a.persist == 1 &&
                 a.groups == 0 && a.bal == 2 && a.ilv == 1 && a.xw == 0 && a.epf == 0,
             "gate|up: threads %d rg %d prefetch %d shr %d nacc %d persist %d groups %d bal %d xw %d epf %d", a.threads,
             a.rg, a.prefetch, a.shr, a.nacc, a.persist, a.groups, a.bal, a.xw, a.epf);
    T_ASSERT(k.threads == 512 && k.xw == 1 && k.minb == 0 && k.groups == 0, "k: threads %d xw %d minb %d groups %d",
             k.threads, k.xw, k.minb, k.groups);
    T_ASSERT(d.threads == 768 && d.groups == 3 && d.persist == 1 && d.minb == 1 && d.xw == 0 && d.epf == 0 && !d.bal &&
                 d.pro == 1,
             "down: threads %d groups %d persist %d minb %d xw %d epf %d pro %d", d.threads, d.groups, d.persist, d.minb,
             d.xw, d.epf, d.pro);
    T_ASSERT(u.threads == 128 && u.rg == 1 && u.prefetch == 1 && !u.shr && !u.nacc && !u.xw, "untuned shape");
    /* the side warps the eighteenth session's sweeps chose for 14B (gate|up
       and down 4 beside 768 threads, o 3 beside three groups of 7 warps) */
    lr_tuning_set_target("NVIDIA H200", 90);
    const lr_leech_geom o = lr_gemv_leech_p14s_default_geom(5120, 5120);
    lr_tuning_set_target(NULL, 0);
    T_ASSERT(a.side == 4 && d.side == 4 && o.side == 3 && o.threads == 672 && o.groups == 3 && k.side == 0,
             "side warps: gate|up %d down %d o %d (threads %d) k %d", a.side, d.side, o.side, o.threads, k.side);
    return T_PASS;
}

/* Every Planes14S row of the tuning table makes a specialization the H200
 * accepts (shared memory within its 232,448-byte opt-in, at most 1024
 * threads with the side warps), at its shape with 2 gain bits' 1,205
 * entries: a row the GPU would refuse fails here, without a GPU. */
static int test_table_rows_fit(void)
{
    int n = 0;
    for (int i = 0; i < lr_tuning_table_n; i++) {
        const lr_tuning_row *t = &lr_tuning_table[i];
        const int swiglu = !strcmp(t->arm, "leech_p14s_swiglu");
        if (strcmp(t->arm, "leech_p14s") && !swiglu) continue;
        lr_leech_geom g = { .threads = 128, .rg = 1, .prefetch = 1, .early = 1 };
        lr_gemv_leech_p14s_apply_knobs(&g, t->knobs);
        lr_jit_spec s;
        lr_launch_geom lg;
        int rc = swiglu ? lr_gemv_leech_p14s_spec_swiglu(&s, &lg, t->rows, t->cols, 1205, g, 232448)
                        : lr_gemv_leech_p14s_spec(&s, &lg, t->rows, t->cols, 1205, g, 232448);
        T_ASSERT(rc == LR_OK, "%s %s row %dx%d: %s", t->device, t->arm, t->rows, t->cols, lr_errmsg());
        T_ASSERT(lg.block.x <= 1024 && lg.block.x == (unsigned)(g.threads + 32 * g.side), "%dx%d: block %u",
                 t->rows, t->cols, lg.block.x);
        n++;
    }
    T_ASSERT(n >= 20, "only %d Planes14S rows", n);
    return T_PASS;
}

/* A tuned geometry over a smaller budget (LEECHRT_SMEM_BUDGET=101376 on an
 * H200): 32B's SwiGLU gate|up in the 3-bit form with 2 gain bits and a table
 * per part needs 114,416 bytes; the spec refuses it, the fitting choice falls
 * back to the untuned geometry in the same form with the same ends, and
 * keeps a geometry that fits. */
static int test_spec_fit(void)
{
    lr_tuning_set_target("NVIDIA H200", 90);
    int nent1, ntab;
    T_OK(lr_ctab_entries(12, 2, &nent1));
    T_OK(lr_p14s_c3_entries(12, 2, 2 * nent1, 2, &ntab));
    lr_leech_geom g = lr_gemv_leech_p14s3_default_geom_swiglu(51200, 5120), tuned;
    g.ends.norm_eps = 1e-6f;
    tuned = g;
    lr_jit_spec s;
    lr_launch_geom lg;
    const int big = lr_gemv_leech_p14s_spec_swiglu(&s, &lg, 51200, 5120, ntab, g, 101376);
    lr_clear_error();
    int rc = lr_gemv_leech_p14s_spec_fit(&s, &lg, 51200, 5120, ntab, &g, 101376, 1);
    const unsigned smem = lg.smem;
    const long long norm = lr_jit_spec_get(&s, "norm", 0), c3 = lr_jit_spec_get(&s, "c3", 0);
    lr_leech_geom fits = lr_gemv_leech_p14s3_default_geom(7168, 5120), before = fits;
    const int rc2 = lr_gemv_leech_p14s_spec_fit(&s, &lg, 7168, 5120, ntab, &fits, 232448, 0);
    lr_tuning_set_target(NULL, 0);
    T_ASSERT(big == LR_ERANGE, "the tuned 32B gate|up fits 101376 bytes (%d): pick another shape for this test", big);
    T_ASSERT(rc == LR_OK, "fit: %s", lr_errmsg());
    T_ASSERT(g.threads == 128 && g.threads != tuned.threads && g.c3 && g.i8 && g.ends.norm_eps == 1e-6f,
             "fell back to threads %d c3 %d i8 %d eps %g", g.threads, g.c3, g.i8, g.ends.norm_eps);
    T_ASSERT(smem <= 101376 && norm && c3, "spec smem %u norm %lld c3 %lld", smem, norm, c3);
    T_OK(rc2);
    T_ASSERT(!memcmp(&fits, &before, sizeof fits), "a fitting geometry was changed");
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
    if (grid) g.grid.x = grid;
    T_OK(lr_jit_get(&spec, &fn));
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, seed * 3 + 1, 1.0);
    /* a geometry in the int8 mode (the table's 14B o and gate|up) reads the
       layout's int8 form and is checked against the int8 reference */
    if (geom.i8) T_OK(lr_p14s_i8_form(&L, L.data, L.tab));
    lr_arg a[11];
    lr_gemv_leech_p14s_args(&L, x, y, a);
    lr_verify_report rep;
    int rc = lr_call_verify(geom.i8 ? &lr_gemv_leech_p14s_i8_desc : &lr_gemv_leech_p14s_desc, fn, a, g,
                            LR_GEMV_LEECH_TOL, &rep);
    printf("    %5d x %5d threads=%d rg=%d prefetch=%d nacc=%d minb=%d shr=%d xw=%d epf=%d groups=%d bal=%d i8=%d "
           "grid %u: max rel err %.2e, %u exceptions\n",
           rows, cols, geom.threads, geom.rg, geom.prefetch, geom.nacc, geom.minb, geom.shr, geom.xw, geom.epf,
           geom.groups, (int)lr_jit_spec_get(&spec, "bal", 0), geom.i8, g.grid.x, rep.max_rel_err, L.nexc);
    free(x), free(y);
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

static const lr_leech_geom g_geoms[] = {
    { .threads = 128, .rg = 1 },
    { .threads = 256, .rg = 2, .prefetch = 1 },
    { .threads = 512, .rg = 1, .prefetch = 1, .nacc = 3 },
    { .threads = 64, .rg = 4, .prefetch = 1, .nacc = 2 },
    { .threads = 256, .rg = 3, .nacc = 4 },
    { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .minb = 8 },
    { .threads = 1024, .rg = 1, .prefetch = 1 },
    { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .shr = 1 },
    { .threads = 256, .rg = 2, .minb = 3, .shr = 1 },
    { .threads = 128, .rg = 1, .prefetch = 2, .nacc = 3, .shr = 1 },
    { .threads = 256, .rg = 2, .prefetch = 2, .nacc = 1 },
    { .threads = 64, .rg = 3, .prefetch = 2, .nacc = 2, .minb = 10 },
    /* x staged per warp: no prefetch, 2 ahead, more warps than super-chunks per CTA */
    { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .xw = 1, .shr = 1 },
    { .threads = 256, .rg = 2, .xw = 1 },
    { .threads = 64, .rg = 3, .prefetch = 2, .nacc = 2, .xw = 1 },
    { .threads = 1024, .rg = 1, .prefetch = 1, .xw = 1 },
    { .threads = 128, .rg = 1, .prefetch = 2, .nacc = 1, .xw = 1 },
    /* the row epilogue fetched ahead: default-like, 256 threads capped at 3 CTAs,
       two threads per row (64 x rg 2), too few threads for one row each (32 x rg 3:
       off), two segments ahead */
    { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .xw = 1, .epf = 1, .shr = 1 },
    { .threads = 256, .rg = 1, .prefetch = 1, .nacc = 2, .minb = 3, .xw = 1, .epf = 1, .shr = 1 },
    { .threads = 64, .rg = 2, .nacc = 1, .epf = 1 },
    { .threads = 32, .rg = 3, .prefetch = 1, .nacc = 1, .xw = 1, .epf = 1 },
    { .threads = 256, .rg = 2, .prefetch = 2, .nacc = 1, .xw = 1, .epf = 1 },
    /* warp groups: six of four warps, two of four (rg 2, two ahead), three of
       two, eight of four (registers capped at 64: spills) */
    { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .groups = 6, .shr = 1 },
    { .threads = 256, .rg = 2, .prefetch = 2, .nacc = 1, .groups = 2 },
    { .threads = 192, .rg = 1, .groups = 3 },
    { .threads = 1024, .rg = 1, .prefetch = 1, .nacc = 1, .groups = 8, .shr = 1 },
    /* (once the ping-pong cases) one chain with x staged per warp, two row
       groups in four groups, with the row end fetched ahead, more warps than
       super-chunks (warps with one segment or none) */
    { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 1, .xw = 1, .shr = 1 },
    { .threads = 512, .rg = 2, .prefetch = 1, .nacc = 1, .groups = 4, .shr = 1 },
    { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .xw = 1, .epf = 1, .shr = 1 },
    { .threads = 1024, .rg = 1, .prefetch = 1, .xw = 1 },
};

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
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .persist = 1 }, 7 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 2, .prefetch = 2, .persist = 1, .shr = 1 }, 3 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rg = 3, .nacc = 1, .persist = 2 }, 5 },
        { 333, 1001, { .threads = 512, .rg = 1, .prefetch = 2, .persist = 1 }, 1 },   /* one CTA does everything */
        { 77, 48, { .threads = 1024, .rg = 1, .prefetch = 1, .persist = 1 }, 2 },     /* more warps than super-chunks */
        { 34816, 5120, { .threads = 128, .rg = 1, .prefetch = 2, .nacc = 3, .persist = 5, .shr = 1 }, 0 }, /* the fused gate|up, 5 CTAs per SM */
        { 5121, 17413, { .threads = 256, .rg = 1, .prefetch = 2, .nacc = 3, .persist = 3 }, 0 },
        /* two segments ahead across batch boundaries */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 2, .nacc = 3, .persist = 1, .shr = 1 }, 7 },
        /* x staged by the first batch only, reused by the later ones */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .persist = 1, .xw = 1, .shr = 1 }, 7 },
        { 333, 1001, { .threads = 512, .rg = 2, .prefetch = 2, .persist = 1, .xw = 1 }, 2 },
        { 77, 48, { .threads = 1024, .rg = 1, .prefetch = 1, .persist = 1, .xw = 1 }, 2 },
        { 5121, 17413, { .threads = 256, .rg = 1, .prefetch = 1, .nacc = 3, .persist = 3, .xw = 1, .shr = 1 }, 0 },
        /* epilogue fetched ahead: later batches start() at their top; rows < 16 */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .persist = 1, .xw = 1, .epf = 1, .shr = 1 }, 7 },
        { 77, 48, { .threads = 1024, .rg = 1, .prefetch = 1, .persist = 1, .xw = 1, .epf = 1 }, 2 },
        /* warp groups looping over batches: 7 CTAs of 6 groups for 63
           batches, the 14B gate|up and a down-like shape at their tuned-like
           geometries, more groups than batches */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .groups = 6, .shr = 1 }, 7 },
        { 34816, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .groups = 6, .shr = 1 }, 0 },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .groups = 3, .shr = 1 }, 0 },
        { 77, 48, { .threads = 768, .rg = 1, .prefetch = 2, .persist = 1, .groups = 6 }, 0 },
        /* (once the ping-pong cases) odd and even segment counts per warp
           across batch boundaries (27 super-chunks over 4 warps), two row
           groups in persistent groups */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .xw = 1, .shr = 1 }, 7 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 768, .rg = 2, .prefetch = 1, .nacc = 1, .persist = 1, .groups = 6, .shr = 1 }, 3 },
        /* the balanced split (its own grid, always): 63 row groups, the 14B
           gate|up, down-like, q|k|v; two warps per CTA (a warp's run crosses
           ~10 row groups of the gate|up); fewer segments than warps (77 x
           48: one each, 23 idle warps); three warps, three accumulator chains */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 1 }, 0 },
        { 34816, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 1 }, 0 },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 1 }, 0 },
        { 7168, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 1 }, 0 },
        { 34816, 5120, { .threads = 64, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .bal = 1 }, 0 },
        { 77, 48, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .bal = 1 }, 0 },
        { 333, 1001, { .threads = 96, .rg = 1, .prefetch = 1, .nacc = 3, .persist = 1, .bal = 1 }, 0 },
        /* with the row end fetched ahead: rows < 16, q|k|v, the 14B down */
        { 77, 48, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .epf = 1, .bal = 1 }, 0 },
        { 7168, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .shr = 1, .bal = 1 }, 0 },
        { 5120, 17408, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .shr = 1, .bal = 1 }, 0 },
        /* the split over segments (bal 2): row groups shared by two CTAs
           wherever there are more row groups than SMs (gate|up, down with
           odd rows and columns, q|k|v, o), two warps per CTA, with the row
           end fetched ahead; 63 row groups (one CTA each: no sharing) */
        { 34816, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2 }, 0 },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2 }, 0 },
        { 7168, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2 }, 0 },
        { 5120, 5120, { .threads = 256, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2 }, 0 },
        { 34816, 5120, { .threads = 64, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .bal = 2 }, 0 },
        { 5120, 17408, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .shr = 1, .bal = 2 }, 0 },
        { 7168, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .shr = 1, .bal = 2 }, 0 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2 }, 0 },
        /* warp groups fetching their row end ahead: 7 CTAs of 6 groups for
           63 batches (groups with two: the later batch's start at its top),
           the 14B down at its table geometry, rows < 16 */
        { 1000, 5120 + 24 * 3 + 1, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .groups = 6, .shr = 1 }, 7 },
        { 5120, 17408, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .groups = 3, .shr = 1 }, 0 },
        { 77, 48, { .threads = 768, .rg = 1, .prefetch = 2, .persist = 1, .epf = 1, .groups = 6 }, 0 },
        /* segments dealt round-robin to the warps (ilv), with whole row groups
           and split ones: the down (91 super-chunks over 24 warps), the
           gate|up (27 over 24: warps cross a row group every step), two
           warps (most row groups skipped by neither), 32 warps over the 5
           segments of 77 x 48 (warps with none), with the row end fetched
           ahead, q|k|v */
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 1, .ilv = 1 }, 0 },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2, .ilv = 1 }, 0 },
        { 34816, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2, .ilv = 1 }, 0 },
        { 34816, 5120, { .threads = 64, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .bal = 1, .ilv = 1 }, 0 },
        { 77, 48, { .threads = 1024, .rg = 1, .prefetch = 1, .persist = 1, .bal = 1, .ilv = 1 }, 0 },
        { 5120, 17408, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .epf = 1, .shr = 1, .bal = 2, .ilv = 1 }, 0 },
        { 7168, 5120, { .threads = 512, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2, .ilv = 1 }, 0 },
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++)
        if (verify_grid(c[i].rows, c[i].cols, c[i].g, 5000 + i, c[i].grid)) return T_FAIL;
    return T_PASS;
}

/* y of the epilogue fetched ahead (LR_EPF) equals the plain epilogue's bit
 * for bit: same arithmetic in the same order, only the loads move. Every run
 * is verified against the host reference first (lr_call_verify leaves the
 * GPU's y in y): two runs that left the same rows unwritten, or agreed on a
 * wrong value, were "bit-identical" before. */
static int run_y(lr_p14s *L, const float *x, float *y, lr_leech_geom geom)
{
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_p14s_spec(&spec, &g, L->rows, L->cols, L->nentries, geom, lr_cu_smem_budget()));
    T_OK(lr_jit_get(&spec, &fn));
    lr_arg a[11];
    lr_gemv_leech_p14s_args(L, (float *)x, y, a);
    lr_verify_report rep;
    T_OK(lr_call_verify(&lr_gemv_leech_p14s_desc, fn, a, g, LR_GEMV_LEECH_TOL, &rep));
    return T_PASS;
}

/* A random matrix of the shape, its x, and two outputs to compare bit for bit. */
typedef struct { lr_p14s L; float *x, *y0, *y1; } ypair;

static int ypair_make(ypair *p, int rows, int cols, uint64_t seed)
{
    lr_leech_matrix m;
    if (make(rows, cols, seed, &p->L, &m)) return T_FAIL;
    lr_leech_random_free(&m);
    p->x = malloc(sizeof(float) * cols), p->y0 = malloc(sizeof(float) * rows), p->y1 = malloc(sizeof(float) * rows);
    lr_fill_random_seed(LR_E_F32, p->x, (size_t)cols, seed + 100, 1.0);
    return T_PASS;
}

static void ypair_free(ypair *p)
{
    free(p->x), free(p->y0), free(p->y1);
    lr_p14s_free(&p->L);
}

/* y1 poisoned (NaN: a row left unwritten differs), computed at g; the
 * first row where it differs from y0 by a bit, or -1 (*bad on failure). */
static int ypair_rerun(ypair *p, lr_leech_geom g, int *bad)
{
    memset(p->y1, 0xff, sizeof(float) * p->L.rows);
    *bad = run_y(&p->L, p->x, p->y1, g);
    for (int r = 0; !*bad && r < p->L.rows; r++)
        if (memcmp(&p->y0[r], &p->y1[r], 4)) return r;
    return -1;
}

/* Features that move loads but not arithmetic must leave y bit-identical:
 * the epilogue fetched ahead (epf) and x staged per warp (xw), alone and
 * together, on a 128-thread geometry; epf on the balanced split (which
 * stages x in the prologue, so xw is not among its variants). Fixed
 * geometries: a tuned default may be one (warp groups) that ignores both. */
static int test_gpu_epf_identical(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int shapes[][2] = { { 5120, 17408 }, { 1000, 5120 + 24 * 3 + 1 }, { 77, 1001 } };
    const struct { int epf, xw; const char *what; } var[] = { { 1, 0, "epf" }, { 0, 1, "xw" }, { 1, 1, "epf + xw" } };
    const lr_leech_geom base[] = { { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .shr = 1 },
                                   { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 1 },
                                   { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .groups = 3, .shr = 1 } };
    for (int i = 0; i < 3; i++)
        for (int gi = 0; gi < 3; gi++) {
            ypair p;
            if (ypair_make(&p, shapes[i][0], shapes[i][1], 4000 + i)) return T_FAIL;
            lr_leech_geom g = base[gi];
            const int nvar = g.bal || g.groups > 1 ? 1 : 3; /* both stage x in the prologue: no xw */
            int bad = run_y(&p.L, p.x, p.y0, g), diff = -1, v = 0;
            for (; v < nvar && !bad && diff < 0; v++) {
                g.epf = var[v].epf, g.xw = var[v].xw;
                diff = ypair_rerun(&p, g, &bad);
                printf("    %5d x %5d threads=%d groups=%d bal=%d: %s %s\n", p.L.rows, p.L.cols, g.threads, g.groups, g.bal, var[v].what,
                       bad ? "failed" : diff < 0 ? "bit-identical" : "differs");
            }
            const float d0 = diff < 0 ? 0.f : p.y0[diff], d1 = diff < 0 ? 0.f : p.y1[diff];
            ypair_free(&p);
            if (bad) return T_FAIL;
            T_ASSERT(diff < 0, "%s, row %d: y %a without, %a with", var[v - 1].what, diff, d0, d1);
        }
    return T_PASS;
}

/* The split over segments leaves a shared row group's partial in a slot of
 * the module's memory for the other CTA, which empties it: launched again
 * (and again, other buffers, same module) y must not change by a bit. A
 * slot left full would make the next launch's first CTA take a stale
 * partial (wrong y), or skip its rows (NaN left by the poison). */
static int test_gpu_split_repeat(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int shapes[][2] = { { 5121, 17413 }, { 7168, 5120 }, { 34816, 5120 } };
    for (int i = 0; i < 3; i++) {
        ypair p;
        if (ypair_make(&p, shapes[i][0], shapes[i][1], 4500 + i)) return T_FAIL;
        /* down as is; q|k|v with its row end fetched ahead and the segments
           round-robin; gate|up round-robin */
        const lr_leech_geom g = { 768, 1, 1, 0, 0, 1, 1, 0, 0, i == 1, 0, 1, 2, i > 0, 0, 0, 0, 0, 0, { 0, 0, 0.f, 0, 0 } };
        int bad = run_y(&p.L, p.x, p.y0, g), diff = -1;
        for (int rep = 0; rep < 3 && !bad && diff < 0; rep++) diff = ypair_rerun(&p, g, &bad);
        printf("    %5d x %5d split: 4 launches %s\n", p.L.rows, p.L.cols,
               bad ? "failed" : diff < 0 ? "bit-identical" : "differ");
        const float d0 = diff < 0 ? 0.f : p.y0[diff], d1 = diff < 0 ? 0.f : p.y1[diff];
        ypair_free(&p);
        if (bad) return T_FAIL;
        T_ASSERT(diff < 0, "row %d: y %a first, %a later", diff, d0, d1);
    }
    return T_PASS;
}

/* The prologue's loads batched (pro), and the first segments and the class
 * table loaded before the PDL wait (early 1, or 2 with the table by
 * cp.async), move loads, not arithmetic: y
 * equals the plain prologue's bit for bit with either and both, with x in
 * the prologue (128 threads: 5 table and 21 x loads per thread, two batches
 * of 16), with x staged per warp (only the table batched), warp groups on a
 * down-like shape (1205 entries), the split with round-robin segments, two
 * segments ahead, and rows < 16. */
static int test_gpu_pro_early_identical(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const struct { int rows, cols; lr_leech_geom g; } c[] = {
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .shr = 1 } },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .xw = 1, .epf = 1, .shr = 1 } },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .groups = 3, .shr = 1 } },
        { 34816, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .nacc = 1, .persist = 1, .shr = 1, .bal = 2, .ilv = 1 } },
        { 7168, 5120, { .threads = 256, .rg = 2, .prefetch = 2, .nacc = 1, .groups = 2 } },
        { 77, 48, { .threads = 32, .rg = 3, .nacc = 1 } },
    };
    const struct { int pro, early; const char *what; } var[] = { { 1, 0, "pro" },         { 0, 1, "early" },
                                                                 { 1, 1, "pro + early" }, { 0, 2, "early 2" },
                                                                 { 1, 2, "pro + early 2" } };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        ypair p;
        if (ypair_make(&p, c[i].rows, c[i].cols, 4700 + i)) return T_FAIL;
        lr_leech_geom g = c[i].g;
        int bad = run_y(&p.L, p.x, p.y0, g), diff = -1, v = 0;
        for (; v < (int)(sizeof var / sizeof var[0]) && !bad && diff < 0; v++) {
            g.pro = var[v].pro, g.early = var[v].early;
            diff = ypair_rerun(&p, g, &bad);
            printf("    %5d x %5d threads=%d xw=%d groups=%d bal=%d: %s %s\n", p.L.rows, p.L.cols, g.threads, g.xw,
                   g.groups, g.bal, var[v].what, bad ? "failed" : diff < 0 ? "bit-identical" : "differs");
        }
        const float d0 = diff < 0 ? 0.f : p.y0[diff], d1 = diff < 0 ? 0.f : p.y1[diff];
        ypair_free(&p);
        if (bad) return T_FAIL;
        T_ASSERT(diff < 0, "case %d, row %d: y %a plain, %a with %s", i, diff, d0, d1, var[v - 1].what);
    }
    return T_PASS;
}

static int test_gpu_arm(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    void *st;
    T_OK(lr_arm_leech_p14s.prepare(1024, 5120, 2, 42, NULL, &st));
    double err;
    T_OK(lr_arm_leech_p14s.verify(st, 43, &err, NULL));
    size_t b = lr_arm_leech_p14s.bytes(st);
    T_ASSERT(b > (size_t)1024 * 5120 * 4.6 / 8 && b < (size_t)1024 * 5120 * 5.1 / 8, "bytes %zu", b);
    printf("    arm leech_p14s 1024 x 5120: verify %.2e, %.3f b/w read\n", err, 8.0 * b / (1024.0 * 5120));
    lr_arm_leech_p14s.destroy(st);
    lr_gemv_arm_opts o = { .threads = 256, .rpw = 2, .tile = 2, .extra = { -1 } };
    T_OK(lr_arm_leech_p14s.prepare(500, 2560, 1, 44, &o, &st));
    T_OK(lr_arm_leech_p14s.verify(st, 45, &err, NULL));
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

/* The side warps against the f64 reference: the balanced split (with
 * row groups split between CTAs, round-robin segments; the 14B gate|up
 * has ~3,000 exceptions per CTA, several rounds of the warp's 1,024),
 * warp groups (every group one batch; persistent, where later batches end
 * the old way), one row group per CTA with x staged per warp, two row
 * groups two segments ahead, rows < 16, cols with a tail and no full
 * super-chunk; then the no-end control arm. */
static int test_gpu_side(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    struct { int rows, cols; lr_leech_geom g; unsigned grid; } c[] = {
        { 34816, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .shr = 1, .bal = 2, .ilv = 1 }, 0 },
        { 7168, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .shr = 1, .bal = 2 }, 0 },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .shr = 1, .bal = 1 }, 0 },
        { 5120, 5120, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .groups = 3, .shr = 1, .pro = 1 }, 0 },
        { 5121, 17413, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .groups = 3, .shr = 1 }, 0 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .groups = 6, .shr = 1 }, 7 },
        { 7168, 5120, { .threads = 128, .rg = 1, .prefetch = 1, .xw = 1, .shr = 1 }, 0 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rg = 2, .prefetch = 2, .nacc = 2 }, 0 },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rg = 1, .prefetch = 1, .persist = 1, .xw = 1 }, 5 },
        { 77, 1001, { .threads = 64, .rg = 3, .prefetch = 2 }, 0 },
        { 7, 25, { .threads = 768, .rg = 1, .prefetch = 1, .persist = 1, .bal = 1 }, 0 },
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        lr_leech_geom g = c[i].g;
        g.side = 1 + i % 4; /* 1-4 side warps, each a share of the rows */
        if (verify_grid(c[i].rows, c[i].cols, g, 5100 + i, c[i].grid)) return T_FAIL;
    }
    lr_gemv_arm_opts o = { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 + 2048 } };
    void *st;
    double err;
    T_OK(lr_arm_leech_p14s_noepi.prepare(7168, 5120 + 24 * 3 + 1, 1, 5200, &o, &st));
    int rc = lr_arm_leech_p14s_noepi.verify(st, 5201, &err, NULL);
    lr_arm_leech_p14s_noepi.destroy(st);
    T_OK(rc);
    return T_PASS;
}

/* The loads-only control: every row's bit count equals the host's, at the
 * table geometry, with x staged per warp, and persistent with two row
 * groups per CTA; the decode-only control verified at the same geometries. */
static int test_gpu_loads_control(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_gemv_arm_opts os[] = { { 0 }, { .threads = 128, .rpw = 2, .extra = { 1, 2, 0, 1 } },
                              { .threads = 256, .extra = { 2, -1, 0, -1 } },
                              { .threads = 128, .extra = { 0, -1, -1, 3 } },
                              { .threads = 64, .rpw = 3, .extra = { 2, 2, 0, 3 } },
                              /* 6 warp groups, persistent */
                              { .threads = 768, .extra = { 1, 1, 0, 48 } },
                              /* the split over segments, 7168 rows: shared row groups */
                              { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 } },
                              /* and its segments dealt round-robin */
                              { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 + 2048 } },
                              /* the 14B o's table geometry: 3 side warps, which the loads-only
                                 control drops (it has no row end; bench_gemv failed on it) */
                              { .threads = 672, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 200728 }, .minb = 1 } };
    for (int i = 0; i < (int)(sizeof os / sizeof os[0]); i++) {
        void *st;
        double err;
        const int rows = i >= 6 ? 7168 : 1000;
        T_OK(lr_arm_leech_p14s_loads.prepare(rows, 5120 + 24 * 3 + 1, 1, 60 + i, &os[i], &st));
        int rc = lr_arm_leech_p14s_loads.verify(st, 70 + i, &err, NULL);
        /* it counts the bytes it reads: the segments alone (16 rows x 8 blocks each) */
        const size_t segs = (size_t)((rows + 15) / 16) * (size_t)(((5120 + 24 * 3 + 1) / 24 + 7) / 8) * LR_P14S_SEG,
                     bytes = lr_arm_leech_p14s_loads.bytes(st);
        lr_arm_leech_p14s_loads.destroy(st);
        T_OK(rc);
        T_ASSERT(bytes == segs, "the loads-only control counts %zu bytes, reads %zu", bytes, segs);
        /* the decode-only control at the same geometries: the GEMV of the
           layout whose row groups all hold row group 0's codes, verified row
           by row (the last, partial row group included) */
        T_OK(lr_arm_leech_p14s_decode.prepare(rows, 5120 + 24 * 3 + 1, 2, 80 + i, &os[i], &st));
        rc = lr_arm_leech_p14s_decode.verify(st, 90 + i, &err, NULL);
        lr_arm_leech_p14s_decode.destroy(st);
        T_OK(rc);
    }
    return T_PASS;
}

/* One arm verified at the 14B table geometries with a mode's extra3 bit
 * added (the first four) and at odd shapes in every x staging path (per
 * warp, prologue, batched prologue, warp groups, the balanced split; rows
 * not a multiple of 16, a tail), and the round-robin walk over fewer
 * super-chunks than warps; seeds from seed0. */
static int mode_grid(int bit, const lr_gemv_arm *arm, uint64_t seed0)
{
    struct { int rows, cols; lr_gemv_arm_opts o; } c[] = {
        { 7168, 5120, { .threads = 128, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, -1, 0, 65537 + bit } } },
        { 5120, 5120, { .threads = 672, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 200728 + bit }, .minb = 1 } },
        { 5120, 17408, { .threads = 768, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 266264 + bit } } },
        { 34816, 5120, { .threads = 768, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 265216 + bit } } },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 256, .rpw = 2, .extra = { 2, -1, 0, bit } } },
        { 1000, 5120 + 24 * 3 + 1, { .threads = 128, .rpw = 1, .extra = { 1, 1, 0, 1 + bit } } },
        { 1001, 5120 + 24 * 3 + 1, { .threads = 768, .extra = { 1, 1, 0, 48 + 4096 + 65536 * 2 + bit } } },
        { 77, 1001, { .threads = 64, .rpw = 3, .extra = { 2, 2, 0, 4096 + bit } } },
        { 7, 25, { .threads = 768, .extra = { 1, 1, 0, 512 + bit } } },
        { 5121, 17413, { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 + 2048 + 65536 * 4 + bit } } },
        /* the round-robin walk with fewer super-chunks (22) than warps (24):
           a step may move the walk on by more than one row group's worth */
        { 1001, 4096 + 24 * 2 + 5, { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 + 2048 + bit } } },
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        void *st;
        double err;
        T_OK(arm->prepare(c[i].rows, c[i].cols, 1, seed0 + (uint64_t)i, &c[i].o, &st));
        int rc = arm->verify(st, seed0 + 100 + (uint64_t)i, &err, NULL);
        arm->destroy(st);
        T_OK(rc);
        printf("    %s %dx%d extra3 %d: max rel err %.3g\n", arm->name, c[i].rows, c[i].cols, c[i].o.extra[3], err);
    }
    return T_PASS;
}

/* The SwiGLU arm at the 14B gate|up geometry with the mode's bit: a pair
 * layout, split row groups. */
static int mode_swiglu(int bit, const lr_gemv_arm *arm, uint64_t seed)
{
    lr_gemv_arm_opts o = { .threads = 768, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 265216 + bit } };
    void *st;
    double err;
    T_OK(arm->prepare(34816, 5120, 1, seed, &o, &st));
    int rc = arm->verify(st, seed + 1, &err, NULL);
    arm->destroy(st);
    T_OK(rc);
    return T_PASS;
}

/* The int8 mode (geometry i8, extra3 bit 19) over the int8 form: the GEMV,
 * the decode-only control and the SwiGLU end verified row by row against
 * the int8 reference (x quantized per super-chunk as the kernel does). */
static int test_gpu_i8(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int I8 = 524288;
    if (mode_grid(I8, &lr_arm_leech_p14s, 5300) || mode_grid(I8, &lr_arm_leech_p14s_decode, 5500)) return T_FAIL;
    return mode_swiglu(I8, &lr_arm_leech_p14s_swiglu, 5700);
}

/* The 3-bit form (leech_p14s3 arms, extra3 bit 20): the GEMV and the three
 * controls, and the SwiGLU gate|up, each against its host reference. */
static int test_gpu_c3(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int C3 = 1048576;
    if (mode_grid(C3, &lr_arm_leech_p14s3, 6300) || mode_grid(C3, &lr_arm_leech_p14s3_loads, 6500) ||
        mode_grid(C3, &lr_arm_leech_p14s3_decode, 6800) || mode_grid(C3, &lr_arm_leech_p14s3_smem, 6900))
        return T_FAIL;
    return mode_swiglu(C3, &lr_arm_leech_p14s3_swiglu, 6700);
}

/* The loads-only control without x's staging, and without the table's too
 * (leech_p14s3_loads_nox / _nopro): the same popcounts against the
 * reference on the geometries that stage x in the prologue (pro or not);
 * one whose warps stage it (xw) refused by name. */
static int test_gpu_loads_prologue(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int C3 = 1048576;
    struct { int rows, cols; lr_gemv_arm_opts o; } c[] = {
        { 34816, 5120, { .threads = 768, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 265216 + C3 } } },
        { 5121, 17413, { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 + 2048 + 65536 * 4 + C3 } } },
        { 1001, 4096 + 24 * 2 + 5, { .threads = 768, .unroll = 2, .extra = { 1, 1, 0, 1024 + 2048 + C3 } } },
        { 7, 25, { .threads = 768, .extra = { 1, 1, 0, 512 + C3 } } },
        { 77, 1001, { .threads = 64, .rpw = 3, .extra = { 2, 2, 0, 4096 + C3 } } },             /* pro */
        { 5120, 5120, { .threads = 672, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, 1, 0, 200728 + C3 }, .minb = 1 } },
    };
    const lr_gemv_arm *arms[2] = { &lr_arm_leech_p14s3_loads_nox, &lr_arm_leech_p14s3_loads_nopro };
    for (int a = 0; a < 2; a++)
        for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
            void *st;
            double err;
            T_OK(arms[a]->prepare(c[i].rows, c[i].cols, 1, 7100 + (uint64_t)i, &c[i].o, &st));
            int rc = arms[a]->verify(st, 7200 + (uint64_t)i, &err, NULL);
            arms[a]->destroy(st);
            T_OK(rc);
            printf("    %s %dx%d extra3 %d: max rel err %.3g\n", arms[a]->name, c[i].rows, c[i].cols, c[i].o.extra[3], err);
        }
    const lr_gemv_arm_opts xw = { .threads = 128, .rpw = 1, .unroll = 2, .tile = 1, .extra = { 1, -1, 0, 65537 + C3 } };
    void *st = NULL;
    T_ASSERT(lr_arm_leech_p14s3_loads_nox.prepare(7168, 5120, 1, 7300, &xw, &st) == LR_EUNSUPPORTED && st == NULL &&
                 strstr(lr_errmsg(), "leech_p14s3_loads_nox"),
             "an xw geometry accepted: %s", lr_errmsg());
    return T_PASS;
}

/* The split's late weighting (LEECHRT_GEMV_LATE; the engine sets 70): keys only
 * under bal 2 below 100 %; the late CTAs as many as the rotation of the
 * input width has (4 at 5120, 8 at 17408 under the H200's budget) unless
 * set; every CTA still at least a row group of segments, else equal
 * shares; the settings' range. */
static int test_late_spec(void)
{
    lr_jit_spec s;
    lr_launch_geom g;
    const int save = lr_gemv_p14s_late, save_n = lr_gemv_p14s_late_n;
    lr_leech_geom geom = { .threads = 768, .rg = 1, .prefetch = 1, .bal = 2, .ilv = 1 };
    int rc = T_PASS;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448));
    const long long most_equal = lr_jit_spec_get(&s, "bal", 0);
    if (lr_jit_spec_get(&s, "late", 0) != 0) rc = T_FAIL;
    lr_gemv_p14s_late = 60;
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) || lr_jit_spec_get(&s, "late", 0) != 8 ||
                lr_jit_spec_get(&s, "latew", 0) != 60 || lr_jit_spec_get(&s, "bal", 0) < most_equal))
        rc = T_FAIL, printf("    down: late %lld latew %lld bal %lld\n", lr_jit_spec_get(&s, "late", 0),
                            lr_jit_spec_get(&s, "latew", 0), lr_jit_spec_get(&s, "bal", 0));
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 34816, 5120, 603, geom, 232448) || lr_jit_spec_get(&s, "late", 0) != 4))
        rc = T_FAIL, printf("    gate|up: late %lld\n", lr_jit_spec_get(&s, "late", 0));
    geom.bal = 1;
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 34816, 5120, 603, geom, 232448) || lr_jit_spec_get(&s, "late", 0) != 0))
        rc = T_FAIL, printf("    bal 1 took late %lld\n", lr_jit_spec_get(&s, "late", 0));
    geom.bal = 2, lr_gemv_p14s_late_n = 16;
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) || lr_jit_spec_get(&s, "late", 0) != 16))
        rc = T_FAIL, printf("    late_n 16: late %lld\n", lr_jit_spec_get(&s, "late", 0));
    /* 29120 segments over 132 CTAs, 8 of them at 25 %: ~58 each, under 91:
       equal shares instead */
    lr_gemv_p14s_late = 25, lr_gemv_p14s_late_n = 8;
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) || lr_jit_spec_get(&s, "late", 0) != 0 ||
                lr_jit_spec_get(&s, "bal", 0) != most_equal))
        rc = T_FAIL, printf("    a share under a row group: late %lld bal %lld\n", lr_jit_spec_get(&s, "late", 0),
                            lr_jit_spec_get(&s, "bal", 0));
    /* the trigger after the main loop: only on split geometries */
    geom.ends.trig = 1;
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) || lr_jit_spec_get(&s, "trig", 0) != 1))
        rc = T_FAIL, printf("    trig not in a split spec\n");
    lr_leech_geom plain = { .threads = 768, .rg = 1, .prefetch = 1, .groups = 3, .ends = { .trig = 1 } };
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, plain, 232448) || lr_jit_spec_get(&s, "trig", 0) != 0))
        rc = T_FAIL, printf("    trig in a spec without bal\n");
    geom.ends.trig = 0;
    if (!rc && (lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 603, geom, 232448) || lr_jit_spec_get(&s, "trig", 0) != 0))
        rc = T_FAIL, printf("    trig without the setting\n");
    if (!rc && (lr_gemv_p14s_late_set("t", "24") == LR_OK || lr_gemv_p14s_late_set("t", "101") == LR_OK ||
                lr_gemv_p14s_late_n_set("t", "65") == LR_OK || lr_gemv_p14s_late_set("t", "70") != LR_OK ||
                lr_gemv_p14s_late != 70 || lr_gemv_p14s_late_set("t", NULL) != LR_OK || lr_gemv_p14s_late != 70))
        rc = T_FAIL, printf("    settings: late %d\n", lr_gemv_p14s_late);
    lr_gemv_p14s_late = save, lr_gemv_p14s_late_n = save_n;
    return rc;
}

/* The 3-bit GEMV and its SwiGLU gate|up with the late weighting on the
 * split geometries of mode_grid (the 14B down, gate|up, odd shapes), at the
 * rotation's count and at 16 late CTAs at 50 % (equal shares on the shapes
 * too small for it), against their references. */
static int test_gpu_late(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int save = lr_gemv_p14s_late, save_n = lr_gemv_p14s_late_n, C3 = 1048576;
    int rc = T_PASS;
    for (int k = 0; k < 2 && !rc; k++) {
        lr_gemv_p14s_late = k ? 50 : 70, lr_gemv_p14s_late_n = k ? 16 : 0;
        rc = mode_grid(C3, &lr_arm_leech_p14s3, 7400 + 50 * (uint64_t)k);
        if (!rc) rc = mode_swiglu(C3, &lr_arm_leech_p14s3_swiglu, 7490 + (uint64_t)k);
    }
    lr_gemv_p14s_late = save, lr_gemv_p14s_late_n = save_n;
    return rc;
}

T_MAIN(T_CASE(test_reference_vs_dense), T_CASE(test_spec_fit), T_CASE(test_late_spec), T_CASE(test_gpu_late), T_CASE(test_gpu_i8), T_CASE(test_gpu_c3), T_CASE(test_gpu_loads_prologue), T_CASE(test_ffi_matches_direct), T_CASE(test_spec_bounds), T_CASE(test_default_geom_from_table),
       T_CASE(test_gpu_qwen3_shapes), T_CASE(test_gpu_odd_shapes), T_CASE(test_gpu_geometries), T_CASE(test_geometries_fit), T_CASE(test_knobs), T_CASE(test_gpu_persistent),
       T_CASE(test_gpu_epf_identical), T_CASE(test_gpu_split_repeat), T_CASE(test_gpu_pro_early_identical), T_CASE(test_gpu_arm),
       T_CASE(test_gpu_loads_control), T_CASE(test_side_spec), T_CASE(test_table_rows_fit), T_CASE(test_gpu_side))
