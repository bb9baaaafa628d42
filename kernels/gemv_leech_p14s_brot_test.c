/* The Planes14S GEMV with rotation kind 3 in its prologue
 * (kernels/gemv_leech_p14s_brot.c, templates/gemv_leech_p14s.cu LR_BROT):
 * its references are the form's GEMV over x rotated from the seed
 * (lr_rot_init_blocks, f64), and differ from the unrotated product; the
 * spec puts x' after the GEMV's shared memory, and refuses what the
 * prologue cannot serve; on a GPU, lr_call_verify (every output against
 * the f64 reference, outputs poisoned) on the engine's down shapes with its
 * ends, both forms, plain and with the residual add, and an odd shape. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/rotation.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
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
    const int shapes[][2] = { { 9, 1024 }, { 37, 1536 } };
    for (int si = 0; si < 2; si++) {
        const int rows = shapes[si][0], cols = shapes[si][1];
        lr_p14s L;
        lr_rot r;
        if (make(rows, cols, 300 + (uint64_t)si, &L)) return T_FAIL;
        T_OK(lr_p14s_i8_form(&L, L.data, L.tab));
        T_OK(lr_rot_init_blocks(&r, cols, LR_ROT_BLOCK_W, 310 + (uint64_t)si));
        float q, *x = malloc(sizeof(float) * cols), *xr = malloc(sizeof(float) * cols),
                 *y = malloc(sizeof(float) * rows), *want = malloc(sizeof(float) * rows),
                 *plain = malloc(sizeof(float) * rows), *mag = malloc(sizeof(float) * rows);
        double *xd = malloc(sizeof(double) * cols), *xrd = malloc(sizeof(double) * cols);
        lr_rot_qtable(&r, &q);
        T_ASSERT(r.k == 1 && fabsf(q * sqrtf(512.f) - 1.f) < 1e-6f, "kind 3's table: k %d, q %g", r.k, q);
        lr_fill_random_seed(LR_E_F32, x, (size_t)cols, 320 + (uint64_t)si, 1.0);
        for (int i = 0; i < cols; i++) xd[i] = x[i];
        T_OK(lr_rot_apply(&r, xd, xrd));
        for (int i = 0; i < cols; i++) xr[i] = (float)xrd[i];
        lr_gemv_leech_p14s_i8_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, xr, want,
                                   rows, cols);
        lr_gemv_leech_p14s_i8_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, plain,
                                   rows, cols);
        lr_arg a[13];
        lr_gemv_leech_p14s_args(&L, x, y, a);
        memset(&a[11], 0, 2 * sizeof a[0]);
        a[11].host = r.dbits, a[11].count = (size_t)(cols + 31) / 32;
        a[12].host = &q, a[12].count = 1;
        T_OK(lr_call_host(&lr_gemv_leech_p14s_brot_i8_desc, a)); /* through the ffi path, as verify calls it */
        a[8].host = mag;
        T_OK(lr_call_host_fn(&lr_gemv_leech_p14s_brot_i8_desc, lr_gemv_leech_p14s_brot_i8_desc.host_mag, a));
        int moved = 0;
        for (int i = 0; i < rows; i++) {
            T_ASSERT(isfinite(y[i]) && fabs(y[i] - want[i]) <= 1e-5 * mag[i] + 1e-30,
                     "%dx%d row %d: %.9g, from the seed %.9g (scale %g)", rows, cols, i, y[i], want[i], mag[i]);
            moved += fabs(y[i] - plain[i]) > 1e-3 * mag[i];
        }
        T_ASSERT(moved > rows / 2, "only %d of %d rows differ from the unrotated product", moved, rows);
        T_ASSERT(lr_brot_host(x, xr, r.dbits, &q, cols - 24) == -1, "a width that is not blocks of 512 was rotated");
        free(x), free(xr), free(y), free(want), free(plain), free(mag), free(xd), free(xrd);
        lr_rot_free(&r);
        lr_p14s_free(&L);
    }
    return T_PASS;
}

static int test_spec(void)
{
    lr_jit_spec s, p;
    lr_launch_geom g, gp;
    lr_leech_geom geom = { .threads = 128, .rg = 1, .prefetch = 1, .i8 = 1 };
    T_OK(lr_gemv_leech_p14s_spec(&p, &gp, 5120, 17408, 633, geom, 232448));
    geom.ends.brot = 1;
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 5120, 17408, 633, geom, 232448));
    const long long off = lr_jit_spec_get(&s, "brot", 0);
    T_ASSERT(!lr_jit_spec_get(&p, "brot", 0), "brot key without the end");
    T_ASSERT(off >= gp.smem && off % 16 == 0 && off < gp.smem + 16, "x' at %lld after %u bytes", off, gp.smem);
    T_ASSERT(g.smem == off + 4 * 17408, "shared memory %u", g.smem);
    /* refused: not blocks of 512, not the int8 mode, x staged in the loop, SwiGLU */
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 64, 5120 + 24, 633, geom, 232448) == LR_EINVAL && strstr(lr_errmsg(), "512"),
             "5144 wide: %s", lr_errmsg());
    lr_leech_geom bad = geom;
    bad.i8 = 0;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 64, 1024, 603, bad, 232448) == LR_EINVAL && strstr(lr_errmsg(), "int8"),
             "without the int8 mode: %s", lr_errmsg());
    bad = geom, bad.xw = 1;
    T_ASSERT(lr_gemv_leech_p14s_spec(&s, &g, 64, 1024, 603, bad, 232448) == LR_EINVAL, "with xw: %s", lr_errmsg());
    lr_leech_geom_apply_ends(&bad);
    T_ASSERT(bad.i8 && !bad.xw && !bad.pro && !bad.epf, "apply_ends left i8 %d xw %d pro %d epf %d", bad.i8, bad.xw,
             bad.pro, bad.epf);
    T_OK(lr_gemv_leech_p14s_spec(&s, &g, 64, 1024, 603, bad, 232448));
    T_ASSERT(lr_gemv_leech_p14s_spec_swiglu(&s, &g, 64, 1024, 603, geom, 232448) == LR_EINVAL, "SwiGLU with brot: %s",
             lr_errmsg());
    lr_clear_error();
    /* the engine's down shapes of every Qwen3 size fit the H200's budget, both forms, with its ends */
    lr_tuning_set_target("NVIDIA H200", 90);
    const int shapes[][2] = { { 2560, 9728 }, { 4096, 12288 }, { 5120, 17408 }, { 5120, 25600 } };
    for (int i = 0; i < 4; i++)
        for (int c3 = 0; c3 < 2; c3++) {
            lr_leech_geom d = c3 ? lr_gemv_leech_p14s3_default_geom(shapes[i][0], shapes[i][1])
                                 : lr_gemv_leech_p14s_default_geom(shapes[i][0], shapes[i][1]);
            d.ends = lr_leech_engine_ends(LR_PROJ_DOWN, LR_ENGINE_GEMV_TRIGGER, 0, 1, 1e-6f);
            d.ends.brot = 1;
            lr_leech_geom_apply_ends(&d);
            T_ASSERT(lr_gemv_leech_p14s_spec_fit(&s, &g, shapes[i][0], shapes[i][1], 1206, &d, 232448, 0) == LR_OK &&
                         lr_jit_spec_get(&s, "brot", 0) > 0,
                     "%dx%d c3 %d: %s", shapes[i][0], shapes[i][1], c3, lr_errmsg());
        }
    lr_tuning_set_target("", 0);
    return T_PASS;
}

/* ---- GPU ---- */

static int verify(int rows, int cols, int c3, int res, int tuned, uint64_t seed)
{
    lr_p14s L;
    lr_rot r;
    if (make(rows, cols, seed, &L)) return T_FAIL;
    T_OK(lr_rot_init_blocks(&r, cols, LR_ROT_BLOCK_W, seed + 1));
    lr_leech_geom geom = !tuned ? (lr_leech_geom){ .threads = 128, .rg = 1, .prefetch = 1, .shr = 1, .early = 1 }
                         : c3   ? lr_gemv_leech_p14s3_default_geom(rows, cols)
                                : lr_gemv_leech_p14s_default_geom(rows, cols);
    geom.c3 = c3;
    geom.ends = lr_leech_engine_ends(LR_PROJ_DOWN, LR_ENGINE_GEMV_TRIGGER, res, 1, 1e-6f);
    geom.ends.brot = 1;
    lr_leech_geom_apply_ends(&geom);
    lr_p14s_c3 F;
    memset(&F, 0, sizeof F);
    if (c3) T_OK(lr_p14s_c3_form(&L, 2, &F));
    else T_OK(lr_p14s_i8_form(&L, L.data, L.tab));
    lr_jit_spec spec;
    lr_launch_geom g;
    CUfunction fn;
    int rc = lr_gemv_leech_p14s_spec_fit(&spec, &g, rows, cols, c3 ? F.nentries : L.nentries, &geom,
                                         lr_cu_smem_budget(), 0);
    if (!rc) rc = lr_jit_get(&spec, &fn);
    float *x = malloc(sizeof(float) * cols), *y = malloc(sizeof(float) * rows), q;
    lr_rot_qtable(&r, &q);
    lr_fill_random_seed(LR_E_F32, x, (size_t)cols, seed * 5 + 1, 1.0);
    lr_fill_random_seed(LR_E_F32, y, (size_t)rows, seed * 5 + 2, 2.0); /* the add's starting residual */
    lr_arg a[13];
    lr_gemv_leech_p14s_args(&L, x, y, a);
    if (c3) {
        a[0].host = F.data, a[0].count = F.bytes;
        a[1].host = F.tab, a[1].count = (size_t)F.nentries * 16;
        a[4].host = F.exc_ptr;
        a[5].host = F.exc_col, a[5].count = F.nexc ? F.nexc : 1;
        a[6].host = F.exc_dw, a[6].count = F.nexc ? F.nexc : 1;
    }
    memset(&a[11], 0, 2 * sizeof a[0]);
    a[11].host = r.dbits, a[11].count = (size_t)(cols + 31) / 32;
    a[12].host = &q, a[12].count = 1;
    const lr_kernel_desc *d = res ? (c3 ? &lr_gemv_leech_p14s_brot_res_c3_desc : &lr_gemv_leech_p14s_brot_res_i8_desc)
                                  : (c3 ? &lr_gemv_leech_p14s_brot_c3_desc : &lr_gemv_leech_p14s_brot_i8_desc);
    lr_verify_report rep;
    memset(&rep, 0, sizeof rep);
    if (!rc) rc = lr_call_verify(d, fn, a, g, LR_GEMV_LEECH_TOL, &rep);
    printf("    %5d x %5d %s%s threads=%d bal=%d side=%d brot=%lld smem %u grid %u: max rel err %.2e\n", rows, cols,
           c3 ? "c3" : "i8", res ? " res" : "", geom.threads, (int)lr_jit_spec_get(&spec, "bal", 0), geom.side,
           lr_jit_spec_get(&spec, "brot", 0), g.smem, g.grid.x, rep.max_rel_err);
    free(x), free(y);
    lr_p14s_c3_free(&F);
    lr_rot_free(&r);
    lr_p14s_free(&L);
    T_OK(rc);
    return T_PASS;
}

static int test_gpu_shapes(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    lr_cu_set_smem_budget(0);
    static const struct { int rows, cols, c3, res, tuned; } k[] = {
        { 5120, 17408, 1, 0, 1 }, { 5120, 17408, 0, 0, 1 }, { 5120, 17408, 1, 1, 1 }, { 5120, 25600, 1, 0, 1 },
        { 4096, 12288, 1, 1, 1 }, { 2560, 9728, 1, 0, 1 },  { 77, 1024, 0, 0, 0 },     { 77, 1536, 1, 1, 0 },
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        if (verify(k[i].rows, k[i].cols, k[i].c3, k[i].res, k[i].tuned, 950 + 3 * (uint64_t)i)) return T_FAIL;
    return T_PASS;
}

T_MAIN(T_CASE(test_reference), T_CASE(test_spec), T_CASE(test_gpu_shapes))
