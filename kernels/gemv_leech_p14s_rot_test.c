/* The Planes14S GEMV with the rotation in its prologue
 * (kernels/gemv_leech_p14s_rot.c): its host reference is the plain GEMV's
 * over the rotation taken from the seed (lr_rot_apply, f64); the spec adds
 * x' and the table after the GEMV's shared memory, stages x in the prologue,
 * refuses widths the rotation does not serve and budgets it exceeds; on a
 * GPU, lr_call_verify (every output against the f64 reference, outputs
 * poisoned) on the tuned o and down shapes and odd ones. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/rotation.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/random.h"
#include "rt/call.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

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

static int test_reference(void)
{
    const int shapes[][2] = { { 37, 320 }, { 20, 24 * 20 }, { 9, 5120 } };
    for (int si = 0; si < 3; si++) {
        const int rows = shapes[si][0], cols = shapes[si][1];
        lr_p14s L;
        lr_rot r;
        if (make(rows, cols, 700 + (uint64_t)si, &L)) return T_FAIL;
        T_OK(lr_rot_init(&r, cols, 710 + (uint64_t)si));
        float *q = malloc(sizeof(float) * (size_t)r.k * r.k), *x = malloc(sizeof(float) * cols),
              *xr = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *want = malloc(sizeof(float) * rows),
              *mag = malloc(sizeof(float) * rows);
        double *xd = malloc(sizeof(double) * cols), *xrd = malloc(sizeof(double) * cols);
        lr_rot_qtable(&r, q);
        lr_fill_random_seed(LR_E_F32, x, (size_t)cols, 720 + (uint64_t)si, 1.0);
        for (int i = 0; i < cols; i++) xd[i] = x[i];
        T_OK(lr_rot_apply(&r, xd, xrd));
        for (int i = 0; i < cols; i++) xr[i] = (float)xrd[i];
        lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, xr, want, rows,
                                cols);
        lr_gemv_leech_p14s_rot_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, y,
                                    rows, cols, r.dbits, q);
        lr_gemv_leech_p14s_rot_host_mag(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x,
                                        mag, rows, cols, r.dbits, q);
        int nonzero = 0;
        for (int i = 0; i < rows; i++) {
            T_ASSERT(isfinite(y[i]) && fabs(y[i] - want[i]) <= 1e-5 * mag[i] + 1e-30,
                     "%dx%d row %d: %.9g, from the seed %.9g (scale %g)", rows, cols, i, y[i], want[i], mag[i]);
            nonzero += y[i] != 0.f;
        }
        T_ASSERT(nonzero > rows / 2, "only %d of %d outputs nonzero", nonzero, rows);
        free(q), free(x), free(xr), free(y), free(want), free(mag), free(xd), free(xrd);
        lr_rot_free(&r);
        lr_p14s_free(&L);
    }
    return T_PASS;
}

static int test_spec(void)
{
    lr_jit_spec s, p;
    lr_launch_geom g, gp;
    const lr_leech_geom xw = { .threads = 128, .rg = 1, .prefetch = 1, .xw = 1 };
    T_OK(lr_gemv_leech_p14s_spec_rot(&s, &g, 5120, 5120, 603, xw, 232448));
    const lr_leech_geom pro = { .threads = 128, .rg = 1, .prefetch = 1, .pro = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&p, &gp, 5120, 5120, 603, pro, 232448));
    const long long off = lr_jit_spec_get(&s, "xrot", 0);
    T_ASSERT(off >= gp.smem && off % 16 == 0 && off < gp.smem + 16, "x' at %lld after %u bytes", off, gp.smem);
    T_ASSERT(g.smem == off + 4 * 5120 + 4 * 25, "shared memory %u", g.smem);
    T_ASSERT(!lr_jit_spec_get(&s, "xw", 0) && lr_jit_spec_get(&s, "pro", 0) == 1, "x not staged in the prologue");
    /* 2376 = 297 x 8: no rotation serves it */
    T_ASSERT(lr_gemv_leech_p14s_spec_rot(&s, &g, 64, 2376, 603, pro, 232448) == LR_EUNSUPPORTED &&
                 strstr(lr_errmsg(), "2376"),
             "width 2376: %s", lr_errmsg());
    T_ASSERT(lr_gemv_leech_p14s_spec_rot(&s, &g, 5120, 17408, 1205, pro, 101376) == LR_ERANGE &&
                 strstr(lr_errmsg(), "budget"),
             "17408 wide under 101376 bytes: %s", lr_errmsg());
    lr_clear_error();
    /* the tuned o and down shapes of every Qwen3 size fit the H200's budget */
    lr_tuning_set_target("NVIDIA H200", 90);
    const int shapes[][2] = { { 2560, 4096 }, { 2560, 9728 }, { 4096, 4096 }, { 4096, 12288 },
                              { 5120, 5120 }, { 5120, 17408 }, { 5120, 8192 }, { 5120, 25600 } };
    for (int i = 0; i < 8; i++)
        T_ASSERT(lr_gemv_leech_p14s_spec_rot(&s, &g, shapes[i][0], shapes[i][1], 1206,
                                             lr_gemv_leech_p14s_default_geom(shapes[i][0], shapes[i][1]),
                                             232448) == LR_OK,
                 "%dx%d: %s", shapes[i][0], shapes[i][1], lr_errmsg());
    lr_tuning_set_target("", 0);
    return T_PASS;
}

/* ---- GPU ---- */

static int verify(int rows, int cols, lr_leech_geom geom, uint64_t seed)
{
    lr_p14s L;
    lr_rot r;
    if (make(rows, cols, seed, &L)) return T_FAIL;
    T_OK(lr_rot_init(&r, cols, seed + 1));
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    T_OK(lr_gemv_leech_p14s_spec_rot(&spec, &g, rows, cols, L.nentries, geom, lr_cu_smem_budget()));
    T_OK(lr_jit_get(&spec, &fn));
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), *q = malloc(sizeof(float) * r.k * r.k);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, seed * 5 + 1, 1.0);
    lr_rot_qtable(&r, q);
    lr_arg a[13];
    lr_gemv_leech_p14s_args(&L, x, y, a);
    memset(&a[11], 0, 2 * sizeof a[0]);
    a[11].host = r.dbits, a[11].count = (size_t)(cols + 31) / 32;
    a[12].host = q, a[12].count = (size_t)r.k * r.k;
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_p14s_rot_desc, fn, a, g, LR_GEMV_LEECH_TOL, &rep);
    printf("    %5d x %5d (%d x %d) threads=%d groups=%d xrot=%lld smem %u grid %u: max rel err %.2e\n", rows, cols,
           r.k, r.m, geom.threads, geom.groups, lr_jit_spec_get(&spec, "xrot", 0), g.smem, g.grid.x, rep.max_rel_err);
    free(x), free(y), free(q);
    lr_rot_free(&r);
    lr_p14s_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int test_gpu_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_cu_set_smem_budget(0);
    const int tuned[][2] = { { 5120, 5120 }, { 5120, 17408 }, { 4096, 4096 }, { 2560, 9728 } };
    for (int i = 0; i < 4; i++)
        if (verify(tuned[i][0], tuned[i][1], lr_gemv_leech_p14s_default_geom(tuned[i][0], tuned[i][1]),
                   800 + (uint64_t)i))
            return T_FAIL;
    /* odd rows, a tail of 8, m = 64 (no shared-memory pass); xw -> the prologue */
    const lr_leech_geom plain = { .threads = 128, .rg = 1, .prefetch = 1, .nacc = 3, .xw = 1, .shr = 1, .early = 1 };
    if (verify(77, 320, plain, 810)) return T_FAIL;
    const lr_leech_geom groups = { .threads = 192, .rg = 2, .prefetch = 2, .nacc = 1, .persist = 1, .epf = 1, .groups = 3 };
    if (verify(45, 24 * 20, groups, 811)) return T_FAIL; /* 480 = 15 x 32 */
    return T_PASS;
}

T_MAIN(T_CASE(test_reference), T_CASE(test_spec), T_CASE(test_gpu_shapes))
