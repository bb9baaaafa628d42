/* The engine-facing Leech GEMV (lr_leech_dev_*) and the Planes14 loader
 * layout: artifact tensors (a tiny synthetic model, and hand-made views with
 * different gain centroids and row counts not multiple of 16) concatenated
 * by rows into one Planes14 matrix, checked block by block and as a GEMV
 * against lr_tensor_dequant_rows in f64; the mismatch errors; the loader
 * hook against the direct unfold; the same views through Planes14S
 * (lr_p14s_unfold_views) and its host reference; on a GPU, the fused
 * launches (q|k|v, gate|up, mixed centroids, a CUDA graph) against the same
 * f64 truth. */
#include "kernels/gemv_leech.h"
#include "kernels/tuning.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/p14_layout.h"
#include "layouts/leech_vram/p14s_layout.h"
#include "layouts/leech_vram/random.h"
#include "loader/arch.h"
#include "loader/artifact_testlib.h"
#include "loader/load.h"
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>

/* f16 weights and activations: ~2^-11 each relative to sum |w x| (the
 * P14 reference test measures 2-8e-5). */
#define DENSE_TOL 1.5e-3

static char g_tiny[512];
static lr_model *g_model;

static int setup(void)
{
    if (g_model) return 0;
    tl_path(g_tiny, sizeof g_tiny, "leech_dev_tiny.lrt");
    if (tl_synth(g_tiny, "tiny", 9, NULL, 2)) return -1;
    return lr_model_open(g_tiny, 0, &g_model);
}

/* ---- hand-made views over random matrices ---- */

typedef struct {
    lr_leech_matrix m;
    lr_tensor_view v;
    char name[32];
} rview;

static int make_rview(rview *r, const char *name, int rows, int cols, int shell, int gain_bits, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    T_OK(lr_leech_random_matrix(rows, cols, shell, gain_bits, 1, seed, &r->m));
    snprintf(r->name, sizeof r->name, "%s", name);
    lr_tensor_view *v = &r->v;
    v->name = r->name;
    v->codec = LR_CODEC_LEECH;
    v->ndim = 2;
    v->dims[0] = v->rows = (uint64_t)rows;
    v->dims[1] = v->cols = (uint64_t)cols;
    v->nelem = (uint64_t)rows * cols;
    lr_leech_params *p = &v->u.leech;
    p->max_shell = shell;
    p->gain_bits = gain_bits;
    memcpy(p->centroid, r->m.centroid, sizeof p->centroid);
    p->nblk = r->m.nblk, p->tail = r->m.tail;
    p->row_scale = r->m.row_scale;
    p->archive = r->m.archive;
    p->archive_bytes = r->m.archive_bytes;
    p->tail_f16 = r->m.tail_f16;
    return T_PASS;
}

/* ---- checks shared by the host and GPU tests ---- */

/* Dense f64 truth of the concatenation: rows of each view back to back. */
static double *dense_of(const lr_tensor_view *const *v, int n, int *rows_out)
{
    int rows = 0, cols = (int)v[0]->cols;
    for (int i = 0; i < n; i++) rows += (int)v[i]->rows;
    float *f = malloc(sizeof(float) * (size_t)rows * cols);
    double *d = malloc(sizeof(double) * (size_t)rows * cols);
    int r0 = 0;
    for (int i = 0; i < n && f && d; i++) {
        if (lr_tensor_dequant_rows(v[i], 0, v[i]->rows, f + (size_t)r0 * cols)) { free(f), free(d); return NULL; }
        r0 += (int)v[i]->rows;
    }
    for (size_t k = 0; d && f && k < (size_t)rows * cols; k++) d[k] = f[k];
    free(f);
    *rows_out = rows;
    return d;
}

/* y against the dense truth, relative to sum |w x| per row. */
static int check_y(const double *W, int rows, int cols, const float *x, const float *y, double tol, const char *what)
{
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double s = 0, m = 0;
        for (int c = 0; c < cols; c++) s += W[(size_t)r * cols + c] * x[c], m += fabs(W[(size_t)r * cols + c] * x[c]);
        double e = fabs(s - y[r]) / (m > 0 ? m : 1);
        if (e > worst) worst = e;
        T_ASSERT(e <= tol, "%s: row %d of %d: got %.9g, want %.9g (rel %.2e > %.1e)", what, r, rows, y[r], s, e, tol);
    }
    printf("    %s: %d x %d, max rel err %.2e\n", what, rows, cols, worst);
    return T_PASS;
}

/* Every block of the layout decodes to the views' own weights. */
static int check_blocks(const lr_p14 *L, const lr_tensor_view *const *v, int n, const double *W)
{
    for (int r = 0; r < L->rows; r++) {
        int p = lr_p14_part_of(L, r);
        T_ASSERT(p < n && r >= L->part_row0[p] && r < L->part_row0[p + 1], "row %d in part %d", r, p);
        for (int b = 0; b < L->nblk; b++) {
            double w[24];
            T_OK(lr_p14_get_f64(L, v[p]->u.leech.centroid, r, b, w));
            for (int i = 0; i < 24; i++) {
                double want = W[(size_t)r * L->cols + 24 * b + i];
                T_ASSERT(fabs(w[i] - want) <= 1e-6 * fabs(want) + 1e-12, "row %d blk %d coord %d: %g vs %g", r, b, i, w[i],
                         want);
            }
        }
        for (int j = 0; j < L->tail; j++)
            T_ASSERT(lr_half_to_float(L->tail_f16[(size_t)r * L->tail + j]) == (float)W[(size_t)r * L->cols + 24 * L->nblk + j],
                     "row %d tail %d", r, j);
    }
    return T_PASS;
}

static int host_fused(const lr_tensor_view *const *v, int n, const char *what)
{
    lr_p14 L;
    T_OK(lr_p14_unfold_views(v, n, 2, &L));
    int rows;
    double *W = dense_of(v, n, &rows);
    T_ASSERT(W && rows == L.rows, "dense truth");
    if (check_blocks(&L, v, n, W)) return T_FAIL;
    float *x = malloc(sizeof(float) * L.cols), *y = malloc(sizeof(float) * rows);
    lr_rng g;
    lr_rng_seed(&g, 77);
    lr_fill_random(LR_E_F32, x, (size_t)L.cols, &g, 1.0);
    lr_gemv_leech_p14_host(L.data, L.tab, L.row_scale, L.tail_f16, x, y, L.rows, L.cols);
    int rc = check_y(W, rows, L.cols, x, y, DENSE_TOL, what);
    /* the same image from one thread */
    lr_p14 L1;
    T_OK(lr_p14_unfold_views(v, n, 1, &L1));
    T_ASSERT(L1.img_bytes == L.img_bytes && !memcmp(L1.img, L.img, L.img_bytes), "image depends on the thread count");
    lr_p14_free(&L1);
    free(x), free(y), free(W);
    lr_p14_free(&L);
    return rc;
}

/* The same views through Planes14S (the engine's next layout): its host
 * reference against the same dense truth, and the same layout from one
 * thread. */
static int host_fused_p14s(const lr_tensor_view *const *v, int n, const char *what)
{
    lr_p14s L, L1;
    T_OK(lr_p14s_unfold_views(v, n, 2, &L));
    T_OK(lr_p14s_validate(&L));
    int rows;
    double *W = dense_of(v, n, &rows);
    T_ASSERT(W && rows == L.rows, "dense truth");
    float *x = malloc(sizeof(float) * L.cols), *y = malloc(sizeof(float) * rows);
    lr_rng g;
    lr_rng_seed(&g, 78);
    lr_fill_random(LR_E_F32, x, (size_t)L.cols, &g, 1.0);
    lr_gemv_leech_p14s_host(L.data, L.tab, L.row_scale, L.tail_f16, L.exc_ptr, L.exc_col, L.exc_dw, x, y, L.rows,
                            L.cols);
    int rc = check_y(W, rows, L.cols, x, y, DENSE_TOL, what);
    T_OK(lr_p14s_unfold_views(v, n, 1, &L1));
    T_ASSERT(L1.bytes == L.bytes && !memcmp(L1.data, L.data, L.bytes) && L1.nexc == L.nexc &&
                 !memcmp(L1.tab, L.tab, (size_t)L.nentries * 16),
             "%s: Planes14S layout depends on the thread count", what);
    lr_p14s_free(&L1);
    free(x), free(y), free(W);
    lr_p14s_free(&L);
    return rc;
}

static const lr_tensor_view *tv(const char *name)
{
    const lr_tensor_view *t = lr_model_tensor(g_model, name);
    if (!t) fprintf(stderr, "    no tensor %s\n", name);
    return t;
}

/* ---- host tests ---- */

static int test_artifact_fused_host(void)
{
    T_ASSERT(!setup(), "setup: %s", lr_errmsg());
    for (int l = 0; l < 2; l++) {
        char n[3][64];
        const char *qkv[3] = { "attn_q", "attn_k", "attn_v" };
        const lr_tensor_view *v[3];
        for (int i = 0; i < 3; i++) lr_tensor_name(n[i], l, qkv[i]), v[i] = tv(n[i]);
        T_ASSERT(v[0] && v[1] && v[2], "q/k/v views");
        int kind;
        uint64_t seed;
        T_OK(lr_p14_views_rotation(v, 3, &kind, &seed)); /* the synthetic seeds follow the input width */
        if (host_fused(v, 3, l ? "blk.1 q|k|v (host reference)" : "blk.0 q|k|v (host reference)")) return T_FAIL;
        if (host_fused_p14s(v, 3, "q|k|v, Planes14S (host reference)")) return T_FAIL;
        lr_tensor_name(n[0], l, "ffn_gate"), lr_tensor_name(n[1], l, "ffn_up");
        v[0] = tv(n[0]), v[1] = tv(n[1]);
        T_ASSERT(v[0] && v[1], "gate/up views");
        if (host_fused(v, 2, "gate|up (host reference)")) return T_FAIL;
        if (host_fused_p14s(v, 2, "gate|up, Planes14S (host reference)")) return T_FAIL;
    }
    return T_PASS;
}

static int test_mixed_centroids_host(void)
{
    /* three matrices with different centroids, row counts not multiples of
     * 16, a fourth sharing part 0's centroids (and so its table) */
    rview r[4];
    int rows[4] = { 37, 77, 16, 5 };
    for (int i = 0; i < 4; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "part%d", i);
        if (make_rview(&r[i], nm, rows[i], 24 * 13 + 5, 12, 1, 500 + i)) return T_FAIL;
    }
    memcpy(r[3].m.centroid, r[0].m.centroid, sizeof r[0].m.centroid);
    memcpy(r[3].v.u.leech.centroid, r[0].m.centroid, sizeof r[0].m.centroid);
    T_ASSERT(r[0].m.centroid[0] != r[1].m.centroid[0] && r[1].m.centroid[0] != r[2].m.centroid[0], "centroids differ");
    const lr_tensor_view *v[4] = { &r[0].v, &r[1].v, &r[2].v, &r[3].v };
    if (host_fused(v, 4, "mixed centroids 37|77|16|5 (host reference)")) return T_FAIL;
    if (host_fused_p14s(v, 4, "mixed centroids 37|77|16|5, Planes14S (host reference)")) return T_FAIL;
    lr_p14 L;
    T_OK(lr_p14_unfold_views(v, 4, 0, &L));
    T_ASSERT(L.ntabs == 3 && L.part_tab[3] == 0 && L.nentries == 3 * L.nent1, "tables %d", L.ntabs);
    T_ASSERT(L.rows == 135 && L.rg == 9, "rows %d", L.rows);
    /* bit-exact against the archives: lattice point and gain per block */
    for (int p = 0; p < 4; p++) {
        uint64_t *idx;
        uint8_t *gain;
        T_OK(lr_leech_random_indices(&r[p].m, &idx, &gain));
        for (int i = 0; i < rows[p]; i++)
            for (int b = 0; b < L.nblk; b++) {
                int8_t want[24], got[24];
                int g, k = i * L.nblk + b;
                T_OK(lr_leech_unrank(idx[k], 12, want));
                T_OK(lr_p14_get(&L, L.part_row0[p] + i, b, got, &g));
                T_ASSERT(!memcmp(want, got, 24) && (!idx[k] || g == gain[k]), "part %d row %d blk %d", p, i, b);
            }
        free(idx), free(gain);
    }
    /* a header pointing into another part's table is rejected */
    int row = L.part_row0[1] + 3, blk = -1;
    int8_t x[24];
    int g;
    for (int b = 0; b < L.nblk && blk < 0; b++) {
        T_OK(lr_p14_get(&L, row, b, x, &g));
        for (int i = 0; i < 24; i++)
            if (x[i]) { blk = b; break; }
    }
    T_ASSERT(blk >= 0, "no nonzero block");
    int rr = row % 16;
    size_t hoff = ((size_t)(row / 16) * L.sc + blk / 8) * LR_P14_SEG + 2 * (size_t)(((rr % 8) * 2 + rr / 8) * 8 + blk % 8);
    uint16_t h, other;
    memcpy(&h, L.data + hoff, 2);
    T_ASSERT((int)(h / 16) / L.nent1 == L.part_tab[1], "header %u not in part 1's table", h);
    other = (uint16_t)(h - 16 * L.nent1 * L.part_tab[1]); /* same entry, table 0 */
    memcpy(L.data + hoff, &other, 2);
    T_ASSERT(lr_p14_get(&L, row, blk, x, &g) == LR_EFORMAT, "foreign table accepted");
    lr_clear_error();
    memcpy(L.data + hoff, &h, 2);
    T_OK(lr_p14_validate(&L));
    lr_p14_free(&L);
    for (int i = 0; i < 4; i++) lr_leech_random_free(&r[i].m);
    return T_PASS;
}

static int test_mismatch_errors(void)
{
    rview a, b, c;
    if (make_rview(&a, "blk.0.attn_q", 20, 48, 12, 1, 1) || make_rview(&b, "blk.0.attn_k", 20, 48, 12, 2, 2) ||
        make_rview(&c, "blk.0.attn_v", 20, 72, 12, 1, 3))
        return T_FAIL;
    lr_p14 L;
    const lr_tensor_view *ab[2] = { &a.v, &b.v }, *ac[2] = { &a.v, &c.v };
    T_ASSERT(lr_p14_unfold_views(ab, 2, 1, &L) == LR_EINVAL, "gain widths 1 and 2 accepted");
    T_ASSERT(strstr(lr_errmsg(), "blk.0.attn_q") && strstr(lr_errmsg(), "blk.0.attn_k") && strstr(lr_errmsg(), "gain"),
             "message: %s", lr_errmsg());
    printf("    %s\n", lr_errmsg());
    T_ASSERT(lr_p14_unfold_views(ac, 2, 1, &L) == LR_EINVAL && strstr(lr_errmsg(), "columns"), "cols: %s", lr_errmsg());
    /* L24(13) with 2 gain bits: 1533 entries a table, two tables fit u16 headers, three do not */
    rview d[3];
    const lr_tensor_view *dv[3];
    for (int i = 0; i < 3; i++) {
        if (make_rview(&d[i], i ? "wide" : "wide0", 3, 48, 13, 2, 40 + i)) return T_FAIL;
        dv[i] = &d[i].v;
    }
    T_OK(lr_p14_unfold_views(dv, 2, 1, &L));
    T_ASSERT(L.ntabs == 2, "%d tables", L.ntabs);
    lr_p14_free(&L);
    T_ASSERT(lr_p14_unfold_views(dv, 3, 1, &L) == LR_ERANGE && strstr(lr_errmsg(), "16-bit headers"), "3 tables: %s",
             lr_errmsg());
    /* the same refusals through Planes14S, naming the layout and the tensors */
    lr_p14s S;
    T_ASSERT(lr_p14s_unfold_views(ab, 2, 1, &S) == LR_EINVAL && strstr(lr_errmsg(), "planes14s") &&
                 strstr(lr_errmsg(), "blk.0.attn_k") && strstr(lr_errmsg(), "gain"),
             "Planes14S gain widths: %s", lr_errmsg());
    T_ASSERT(lr_p14s_unfold_views(ac, 2, 1, &S) == LR_EINVAL && strstr(lr_errmsg(), "columns"), "Planes14S cols: %s",
             lr_errmsg());
    T_ASSERT(lr_p14s_unfold_views(dv, 3, 1, &S) == LR_ERANGE && strstr(lr_errmsg(), "16-bit"), "Planes14S 3 tables: %s",
             lr_errmsg());
    lr_clear_error();
    /* rotations: same kind and seed, or refused for one x */
    int kind;
    uint64_t seed;
    a.v.u.leech.rot_kind = b.v.u.leech.rot_kind = LR_ROT_HADAMARD;
    a.v.u.leech.rot_seed = 5, b.v.u.leech.rot_seed = 5;
    T_OK(lr_p14_views_rotation(ab, 2, &kind, &seed));
    T_ASSERT(kind == LR_ROT_HADAMARD && seed == 5, "rotation");
    b.v.u.leech.rot_seed = 6;
    T_ASSERT(lr_p14_views_rotation(ab, 2, &kind, &seed) == LR_EINVAL && strstr(lr_errmsg(), "blk.0.attn_k"), "seeds");
    lr_clear_error();
    lr_leech_random_free(&a.m), lr_leech_random_free(&b.m), lr_leech_random_free(&c.m);
    for (int i = 0; i < 3; i++) lr_leech_random_free(&d[i].m);
    return T_PASS;
}

/* The loader hook: its units, in any split and over garbage, give the
 * direct unfold's image; lr_load with "planes14" uses it. */
static int test_loader_hook(void)
{
    T_ASSERT(!setup(), "setup");
    T_OK(lr_leech_vram_register_layouts());
    T_OK(lr_leech_vram_register_layouts());
    const lr_layout *lay = lr_layout_find("planes14");
    T_ASSERT(lay == &lr_layout_planes14, "registered");
    const lr_tensor_view *q = tv("blk.1.attn_q");
    T_ASSERT(q && lay->supports(q) && !lay->supports(tv("token_embd")), "supports");
    lr_layout_plan p;
    T_OK(lay->plan(q, &p));
    lr_p14 L;
    T_OK(lr_p14_unfold_views(&q, 1, 1, &L));
    T_ASSERT(p.bytes == L.img_bytes && p.units == (uint64_t)L.rg && p.nparts == 4, "plan");
    uint8_t *dst = malloc(p.bytes);
    memset(dst, 0xa5, p.bytes);
    uint64_t cut = p.units / 3;
    T_OK(lay->unfold(q, &p, cut, p.units, dst));
    T_OK(lay->unfold(q, &p, 0, cut, dst));
    T_ASSERT(!memcmp(dst, L.img, p.bytes), "hook image differs from the direct unfold");
    free(dst);
    if (lay->release) lay->release(&p);
    lr_load_opts o = { .nthreads = 2, .host_only = 1, .layouts = "planes14" };
    lr_loaded_model *lm;
    T_OK(lr_load(g_tiny, &o, &lm));
    const lr_loaded_tensor *t = lr_loaded_find(lm, "blk.1.attn_q");
    T_ASSERT(t && !strcmp(t->layout->name, "planes14") && t->host, "loaded layout");
    T_ASSERT(t->plan.bytes == L.img_bytes && !memcmp(t->host, L.img, L.img_bytes), "loaded image differs");
    T_ASSERT(lr_loaded_part_host(t, "ctab") == (const uint8_t *)t->host + L.off_tab, "ctab part");
    lr_loaded_free(lm);
    lr_p14_free(&L);
    return T_PASS;
}

/* DEFAULT picks the 3-bit form where the tuning table has a leech_p14s3
 * row for the shape on the device (here: the H200 as a target, no GPU
 * needed), Planes14S where it has a leech_p14s row, Planes14 elsewhere. An
 * sm_90 device the table has no rows for (the H100 PCIe) takes the H200's;
 * the H100 SXM has rows of its own for 14B's gate|up and takes the H200's
 * for the rest. */
static int test_default_layout_rule(void)
{
    lr_tuning_set_target("NVIDIA H200", 90);
    int a = lr_leech_dev_default_layout(7168, 5120), b = lr_leech_dev_default_layout(34816, 5120);
    int c = lr_leech_dev_default_layout(6000, 3000), d = lr_leech_dev_default_layout(77, 1001);
    int f = lr_leech_dev_default_layout(8192, 5120); /* 32B's q alone: a leech_p14s row only */
    int t[LR_TUNE_KNOBS];
    int f3 = lr_tuning_lookup("leech_p14s3", 8192, 5120, t), fs = lr_tuning_lookup("leech_p14s", 8192, 5120, t);
    lr_tuning_set_target("NVIDIA L40S", 89);
    int e = lr_leech_dev_default_layout(7168, 5120);
    /* an unseen sm_90 device borrows the H200's rows (same knobs), or, with
       the sibling rule off, gets the rule of thumb */
    int th[LR_TUNE_KNOBS], tg[LR_TUNE_KNOBS];
    lr_tuning_set_target("NVIDIA H200", 90);
    const int hh = lr_tuning_lookup("leech_p14s3", 34816, 5120, th);
    lr_tuning_set_target("NVIDIA H100 PCIe", 90);
    const int gg = lr_tuning_lookup("leech_p14s3", 34816, 5120, tg), g = lr_leech_dev_default_layout(34816, 5120);
    char src[96], src0[96];
    lr_tuning_current_rows_desc(src, sizeof src);
    lr_tuning_sibling = 0;
    const int g0 = lr_leech_dev_default_layout(34816, 5120);
    lr_tuning_current_rows_desc(src0, sizeof src0);
    lr_tuning_sibling = 1;
    T_ASSERT(hh && gg && !memcmp(th, tg, sizeof th) && g == LR_LEECH_DEV_P14S3 &&
                 !strcmp(src, "NVIDIA H200's (borrowed)"),
             "H100 PCIe: rows %d %d, layout %d, from '%s'", hh, gg, g, src);
    T_ASSERT(g0 == LR_LEECH_DEV_P14 && !strcmp(src0, "none (rule of thumb)"),
             "H100 PCIe without the sibling rule: layout %d, from '%s'", g0, src0);
    /* the H100 SXM: its own gate|up row (swept there, not the H200's), the H200's down;
       without the sibling rule only the shapes it has rows for keep the 3-bit form */
    int ts[LR_TUNE_KNOBS], td[LR_TUNE_KNOBS], hd[LR_TUNE_KNOBS];
    lr_tuning_set_target("NVIDIA H100 80GB HBM3", 90);
    const int sg = lr_tuning_lookup("leech_p14s3", 34816, 5120, ts), sd = lr_tuning_lookup("leech_p14s3", 5120, 17408, td);
    char sdesc[160];
    lr_tuning_current_rows_desc(sdesc, sizeof sdesc);
    lr_tuning_sibling = 0;
    const int sg0 = lr_leech_dev_default_layout(34816, 5120), sd0 = lr_leech_dev_default_layout(5120, 17408);
    lr_tuning_sibling = 1;
    lr_tuning_set_target("NVIDIA H200", 90);
    const int hdd = lr_tuning_lookup("leech_p14s3", 5120, 17408, hd);
    lr_tuning_set_target(NULL, 0);
    T_ASSERT(sg && sd && hdd && memcmp(ts, th, sizeof ts) && !memcmp(td, hd, sizeof td) && sg0 == LR_LEECH_DEV_P14S3 &&
                 sd0 == LR_LEECH_DEV_P14,
             "H100 SXM: rows %d %d %d, own %d, down the H200's %d, alone %d %d", sg, sd, hdd, !!memcmp(ts, th, sizeof ts),
             !memcmp(td, hd, sizeof td), sg0, sd0);
    T_ASSERT(!strncmp(sdesc, "NVIDIA H100 80GB HBM3 (", 23) && strstr(sdesc, " + NVIDIA H200's elsewhere") &&
                 !strchr(sdesc, ','),
             "H100 SXM's rows reported as '%s'", sdesc);
    /* the real table: the H200's own rows; no name, or another compute
       capability, none */
    char rh[96], re[96], rn[96], r75[96];
    lr_tuning_rows_desc_in(lr_tuning_table, lr_tuning_table_n, "NVIDIA H200", 90, rh, sizeof rh);
    lr_tuning_rows_desc_in(lr_tuning_table, lr_tuning_table_n, "", 90, re, sizeof re);
    lr_tuning_rows_desc_in(lr_tuning_table, lr_tuning_table_n, NULL, 90, rn, sizeof rn);
    lr_tuning_rows_desc_in(lr_tuning_table, lr_tuning_table_n, "NVIDIA H200", 75, r75, sizeof r75);
    T_ASSERT(!strncmp(rh, "NVIDIA H200 (", 13) && strstr(rh, " rows)") && !strcmp(re, "none (rule of thumb)") &&
                 !strcmp(rn, "none (rule of thumb)") && !strcmp(r75, "none (rule of thumb)"),
             "the table's rows: '%s' '%s' '%s' '%s'", rh, re, rn, r75);
    /* a device with rows of its own keeps them and takes its sibling's
       only for the shapes it lacks; another compute capability borrows
       nothing */
    static const lr_tuning_row tab[] = {
        { "GPU A", 90, "arm", 64, 64, { 1 }, 1.0 },  { "GPU A", 90, "arm", 128, 64, { 2 }, 1.0 },
        { "GPU B", 90, "arm", 64, 64, { 3 }, 1.0 },  { "GPU C", 89, "arm", 256, 64, { 4 }, 1.0 },
    };
    int k1[LR_TUNE_KNOBS], k2[LR_TUNE_KNOBS], k3[LR_TUNE_KNOBS], k4[LR_TUNE_KNOBS], k5[LR_TUNE_KNOBS];
    const int n = (int)(sizeof tab / sizeof tab[0]);
    const int b64 = lr_tuning_lookup_in(tab, n, "GPU B x", 90, "arm", 64, 64, k1),
              b128 = lr_tuning_lookup_in(tab, n, "GPU B x", 90, "arm", 128, 64, k2),
              d128 = lr_tuning_lookup_in(tab, n, "GPU D", 90, "arm", 128, 64, k3),
              d256 = lr_tuning_lookup_in(tab, n, "GPU D", 90, "arm", 256, 64, k4),
              e128 = lr_tuning_lookup_in(tab, n, "GPU E", 89, "arm", 128, 64, k5);
    T_ASSERT(b64 && k1[0] == 3 && b128 && k2[0] == 2 && d128 && k3[0] == 2 && !d256 && !e128,
             "own %d/%d, filled %d/%d, unseen %d/%d, none %d %d", b64, k1[0], b128, k2[0], d128, k3[0], d256, e128);
    /* the report of whose rows: own (counted), filled by the sibling, borrowed, none */
    char dB[96], dD[96], dF[96], dB0[96], dC[96], dE[96];
    lr_tuning_rows_desc_in(tab, n, "GPU B x", 90, dB, sizeof dB);
    lr_tuning_rows_desc_in(tab, n, "GPU D", 90, dD, sizeof dD);
    lr_tuning_rows_desc_in(tab, n, "GPU F", 75, dF, sizeof dF);
    lr_tuning_rows_desc_in(tab, n, "GPU C", 89, dC, sizeof dC);
    lr_tuning_rows_desc_in(tab, n, "GPU E", 89, dE, sizeof dE);
    lr_tuning_sibling = 0;
    lr_tuning_rows_desc_in(tab, n, "GPU B x", 90, dB0, sizeof dB0);
    const int b128_off = lr_tuning_lookup_in(tab, n, "GPU B x", 90, "arm", 128, 64, k2);
    lr_tuning_sibling = 1;
    T_ASSERT(!strcmp(dB, "GPU B (1 row) + GPU A's elsewhere") && !strcmp(dD, "GPU A's (borrowed)") &&
                 !strcmp(dF, "none (rule of thumb)") && !strcmp(dC, "GPU C (1 row)") && !strcmp(dB0, "GPU B (1 row)") &&
                 !strcmp(dE, "GPU C's (borrowed)"),
             "rows_desc_in: '%s' '%s' '%s' '%s' '%s' '%s'", dB, dD, dF, dC, dB0, dE);
    T_ASSERT(!b128_off, "the sibling lent a row with the rule off");
    /* LEECHRT_TUNE_SIBLING: 0 and 1; garbage refused naming it, unchanged */
    static const char *bad[] = { "", "2", "-1", "on", "1x", "0.5" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_ASSERT(lr_tuning_sibling_set("LEECHRT_TUNE_SIBLING", bad[i]) == LR_EINVAL &&
                     strstr(lr_errmsg(), "LEECHRT_TUNE_SIBLING") && lr_tuning_sibling == 1,
                 "'%s' accepted: %s", bad[i], lr_errmsg());
        lr_clear_error();
    }
    T_OK(lr_tuning_sibling_set("X", "0"));
    T_ASSERT(lr_tuning_sibling == 0, "0 not taken");
    T_OK(lr_tuning_sibling_set("X", NULL));
    T_ASSERT(lr_tuning_sibling == 0, "NULL changed it");
    T_OK(lr_tuning_sibling_set("X", "1"));
    T_ASSERT(a == LR_LEECH_DEV_P14S3 && b == LR_LEECH_DEV_P14S3, "14B q|k|v %d, gate|up %d: tuned on the H200", a, b);
    T_ASSERT(!f3 && fs && f == LR_LEECH_DEV_P14S, "32B q %d (rows %d %d)", f, f3, fs);
    T_ASSERT(c == LR_LEECH_DEV_P14 && d == LR_LEECH_DEV_P14, "untuned shapes %d, %d", c, d);
    T_ASSERT(e == LR_LEECH_DEV_P14, "another device %d", e);
    T_ASSERT(!strcmp(lr_leech_dev_layout_name(LR_LEECH_DEV_P14S3), "planes14s3") &&
                 !strcmp(lr_leech_dev_layout_name(LR_LEECH_DEV_P14S), "planes14s") &&
                 !strcmp(lr_leech_dev_layout_name(LR_LEECH_DEV_P14), "planes14") && !lr_leech_dev_layout_name(4) &&
                 !lr_leech_dev_layout_name(LR_LEECH_DEV_DEFAULT),
             "layout names");
    return T_PASS;
}

/* ---- GPU ---- */

/* x up, y (ny values) poisoned, one GEMV of d on s, y back. */
static int dev_gemv_run(const lr_leech_dev *d, CUstream s, CUdeviceptr dx, CUdeviceptr dy, const float *x, float *y,
                        int ny)
{
    T_OK(lr_cu_h2d(dx, x, sizeof(float) * lr_leech_dev_cols(d)));
    T_OK(lr_cu_memset8(dy, 0xff, sizeof(float) * ny));
    T_OK(lr_leech_dev_gemv(d, dx, dy, s));
    T_OK(lr_cu_stream_sync(s));
    T_OK(lr_cu_d2h(y, dy, sizeof(float) * ny));
    return T_PASS;
}

/* One GEMV of d on fresh random x (seeded), its own stream and device
 * buffers (the graph check reuses them): ny outputs into r->y. */
typedef struct { float *x, *y; CUstream s; CUdeviceptr dx, dy; } dev_run;

static int dev_run_random(const lr_leech_dev *d, int ny, uint64_t seed, dev_run *r)
{
    const int cols = lr_leech_dev_cols(d);
    r->x = malloc(sizeof(float) * cols), r->y = malloc(sizeof(float) * ny);
    T_ASSERT(r->x && r->y, "out of memory");
    lr_rng g;
    lr_rng_seed(&g, seed);
    lr_fill_random(LR_E_F32, r->x, (size_t)cols, &g, 1.0);
    T_OK(lr_cu_stream_create(&r->s));
    T_OK(lr_cu_alloc(&r->dx, sizeof(float) * cols));
    T_OK(lr_cu_alloc(&r->dy, sizeof(float) * ny));
    return dev_gemv_run(d, r->s, r->dx, r->dy, r->x, r->y, ny);
}

static void dev_run_free(dev_run *r)
{
    lr_cu_free(r->dx), lr_cu_free(r->dy);
    lr_cu_stream_destroy(r->s);
    free(r->x), free(r->y);
}

static int gpu_fused_on(const lr_tensor_view *const *v, int n, const char *what0, int graph, int layout)
{
    lr_leech_dev *d;
    char what[160];
    snprintf(what, sizeof what, "%s (%s)", what0, lr_leech_dev_layout_name(layout));
    T_OK(lr_leech_dev_upload(v, n, 0, layout, NULL, &d));
    T_ASSERT(lr_leech_dev_layout(d) == layout, "layout %d", lr_leech_dev_layout(d));
    int rows, cols = lr_leech_dev_cols(d);
    double *W = dense_of(v, n, &rows);
    T_ASSERT(W && rows == lr_leech_dev_rows(d) && lr_leech_dev_part_row(d, n) == rows, "rows");
    /* at least the codes: 4 bits per weight, 3 in the 3-bit form */
    const size_t code_bits = layout == LR_LEECH_DEV_P14S3 ? 3 : 4;
    T_ASSERT(lr_leech_dev_bytes(d) >= (size_t)rows * cols * code_bits / 8, "bytes %zu", lr_leech_dev_bytes(d));
    dev_run r;
    T_OK(dev_run_random(d, rows, 91, &r));
    int rc = check_y(W, rows, cols, r.x, r.y, DENSE_TOL, what);
    if (!rc && graph) {
        float *y2 = malloc(sizeof(float) * rows);
        CUgraphExec ge;
        T_ASSERT(y2, "out of memory");
        T_OK(lr_cu_memset8(r.dy, 0xff, sizeof(float) * rows));
        T_OK(lr_cu_graph_begin(r.s));
        T_OK(lr_leech_dev_gemv(d, r.dx, r.dy, r.s));
        T_OK(lr_cu_graph_end(r.s, &ge));
        T_OK(lr_cu_graph_launch(ge, r.s));
        T_OK(lr_cu_stream_sync(r.s));
        T_OK(lr_cu_d2h(y2, r.dy, sizeof(float) * rows));
        T_ASSERT(!memcmp(r.y, y2, sizeof(float) * rows), "graph launch differs");
        lr_cu_graph_destroy(ge);
        free(y2);
    }
    dev_run_free(&r);
    free(W);
    lr_leech_dev_free(d);
    return rc;
}

/* Every engine layout, each against the dense f64 truth. */
static int gpu_fused(const lr_tensor_view *const *v, int n, const char *what, int graph)
{
    return gpu_fused_on(v, n, what, graph, LR_LEECH_DEV_P14) || gpu_fused_on(v, n, what, graph, LR_LEECH_DEV_P14S) ||
           gpu_fused_on(v, n, what, graph, LR_LEECH_DEV_P14S3);
}

/* gate|up as one SwiGLU pair in layout `layout`: h = silu(gate x) (up x)
 * against the dense f64 truth, the error bound carried through silu and
 * the product from each row's sum |w x|. */
static int gpu_swiglu_on(const lr_tensor_view *const gu[2], int layout)
{
    lr_leech_dev *d;
    T_OK(lr_leech_dev_upload_swiglu(gu, 0, layout, NULL, &d));
    T_ASSERT(lr_leech_dev_layout(d) == layout, "SwiGLU layout %d, asked %d", lr_leech_dev_layout(d), layout);
    int rows, cols = lr_leech_dev_cols(d), n = (int)gu[0]->rows;
    double *W = dense_of(gu, 2, &rows);
    T_ASSERT(W && rows == 2 * n && rows == lr_leech_dev_rows(d), "rows");
    dev_run r;
    T_OK(dev_run_random(d, n, 93, &r));
    const float *x = r.x, *h = r.y;
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double a = 0, ma = 0, b = 0, mb = 0;
        for (int c = 0; c < cols; c++) {
            double wa = W[(size_t)i * cols + c] * x[c], wb = W[(size_t)(n + i) * cols + c] * x[c];
            a += wa, ma += fabs(wa), b += wb, mb += fabs(wb);
        }
        const double sg = 1 / (1 + exp(-a)), want = a * sg * b;
        /* |silu'| <= 1.1: the gate's error through silu, times |up|, plus silu(gate) times the up's */
        const double bound = DENSE_TOL * (1.1 * ma * (fabs(b) + DENSE_TOL * mb) + fabs(a * sg) * mb) + 1e-30;
        const double e = fabs(h[i] - want) / bound;
        if (e > worst) worst = e;
        T_ASSERT(e <= 1, "SwiGLU (%s) row %d of %d: got %.9g, want %.9g (%.2f of the bound)", lr_leech_dev_layout_name(layout),
                 i, n, h[i], want, e);
    }
    printf("    SwiGLU pair (%s): %d x %d, worst %.2e of the bound\n", lr_leech_dev_layout_name(layout), rows, cols, worst);
    dev_run_free(&r);
    free(W);
    lr_leech_dev_free(d);
    return T_PASS;
}

static int test_gpu_artifact_fused(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    T_ASSERT(!setup(), "setup");
    const lr_tensor_view *qkv[3] = { tv("blk.0.attn_q"), tv("blk.0.attn_k"), tv("blk.0.attn_v") };
    const lr_tensor_view *gu[2] = { tv("blk.1.ffn_gate"), tv("blk.1.ffn_up") };
    const lr_tensor_view *down[1] = { tv("blk.1.ffn_down") };
    if (gpu_fused(qkv, 3, "GPU blk.0 q|k|v", 1) || gpu_fused(gu, 2, "GPU blk.1 gate|up", 0) ||
        gpu_fused(down, 1, "GPU blk.1 down", 0) || gpu_swiglu_on(gu, LR_LEECH_DEV_P14S) ||
        gpu_swiglu_on(gu, LR_LEECH_DEV_P14S3))
        return T_FAIL;
    lr_leech_dev *p14;
    T_ASSERT(lr_leech_dev_upload_swiglu(gu, 0, LR_LEECH_DEV_P14, NULL, &p14) == LR_EINVAL && strstr(lr_errmsg(), "planes14s3"),
             "a Planes14 SwiGLU pair: %s", lr_errmsg());
    int kind;
    uint64_t seed;
    lr_leech_dev *d;
    T_OK(lr_leech_dev_upload(qkv, 3, 0, LR_LEECH_DEV_DEFAULT, NULL, &d));
    int want = lr_leech_dev_default_layout(lr_leech_dev_rows(d), lr_leech_dev_cols(d));
    T_ASSERT(lr_leech_dev_layout(d) == want, "default layout %d, the rule says %d", lr_leech_dev_layout(d), want);
    int rc = lr_leech_dev_rotation(d, &kind, &seed);
    lr_leech_dev_free(d);
    T_ASSERT(!rc && kind == qkv[0]->u.leech.rot_kind && seed == qkv[0]->u.leech.rot_seed, "q|k|v rotation: %s",
             rc ? lr_errmsg() : "other seed");
    return T_PASS;
}

static int test_gpu_mixed_centroids(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    /* odd row counts, cols with a tail and fewer than 8 blocks per super-chunk at the end */
    int shapes[][4] = { { 37, 77, 16, 24 * 13 + 5 }, { 1, 7, 129, 1001 }, { 4096, 1024, 1024, 2560 } };
    for (int s = 0; s < 3; s++) {
        rview r[3];
        const lr_tensor_view *v[3];
        for (int i = 0; i < 3; i++) {
            if (make_rview(&r[i], "p", shapes[s][i], shapes[s][3], 12, s == 1 ? 2 : 1, 700 + 10 * s + i)) return T_FAIL;
            v[i] = &r[i].v;
        }
        char what[64];
        snprintf(what, sizeof what, "GPU mixed centroids %d|%d|%d", shapes[s][0], shapes[s][1], shapes[s][2]);
        int rc = gpu_fused(v, 3, what, s == 0);
        for (int i = 0; i < 3; i++) lr_leech_random_free(&r[i].m);
        if (rc) return T_FAIL;
    }
    return T_PASS;
}

static int teardown(void)
{
    lr_model_close(g_model);
    g_model = NULL;
    return T_PASS;
}

T_MAIN(T_CASE(test_artifact_fused_host), T_CASE(test_mixed_centroids_host), T_CASE(test_mismatch_errors),
       T_CASE(test_loader_hook), T_CASE(test_default_layout_rule), T_CASE(test_gpu_artifact_fused), T_CASE(test_gpu_mixed_centroids), T_CASE(teardown))
