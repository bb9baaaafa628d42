/* The published Leech GEMVs (Planes14 record, Planes12x, Slot32):
 * descriptors, f64 host references reading the raw bytes the way the kernel
 * does, specialization and the three benchmark arms. */
#include "kernels/gemv_leech_rec.h"

#include "jit/jit.h"
#include "layouts/leech_vram/random.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int kind, mag;
    const uint8_t *W, *exc_rec;
    const uint32_t *bases, *exc_ptr, *exc_idx;
    const float *tab, *gscale, *row_scale, *x;
    const uint16_t *tail;
    float *y;
    int rows, cols;
} ref_job;

/* Rows [r0, r1); the f64 reference runs on every core. */
static int ref_rows(void *ctx, int r0, int r1)
{
    const ref_job *c = ctx;
    const int kind = c->kind, mag = c->mag, nblk = c->cols / 24, nt = c->cols % 24;
    const float *x = c->x, *gscale = c->gscale;
    for (int r = r0; r < r1; r++) {
        double s = 0, t = 0;
        size_t b0 = (size_t)r * nblk;
        for (int j = 0; j < nblk; j++) {
            float v[24];
            int g;
            double d = 0;
            lr_rec_view_block(kind, c->W, c->bases, c->tab, b0 + j, v, &g);
            for (int i = 0; i < 24; i++) d += mag ? fabs((double)v[i] * x[24 * j + i]) : (double)v[i] * x[24 * j + i];
            s += d * (mag ? fabs(gscale[g]) : gscale[g]);
        }
        if (kind == LR_REC_P12X)
            for (uint32_t e = c->exc_ptr[r]; e < c->exc_ptr[r + 1]; e++) {
                float ve[24], va[24];
                int ge, ga;
                size_t j = c->exc_idx[e] - b0;
                double de = 0, da = 0;
                lr_rec_view_rec14(c->exc_rec + (size_t)LR_REC14_BYTES * e, c->tab, ve, &ge);
                lr_rec_view_block(kind, c->W, c->bases, c->tab, c->exc_idx[e], va, &ga);
                for (int i = 0; i < 24; i++) {
                    double xi = x[24 * j + i];
                    de += mag ? fabs(ve[i] * xi) : ve[i] * xi;
                    da += mag ? fabs(va[i] * xi) : va[i] * xi;
                }
                /* the magnitude counts both terms: the kernel cancels in f32 */
                s += mag ? de * fabs(gscale[ge]) + da * fabs(gscale[ga]) : de * gscale[ge] - da * gscale[ga];
            }
        for (int j = 0; j < nt; j++) {
            double v = (double)lr_half_to_float(c->tail[(size_t)r * nt + j]) * x[24 * nblk + j];
            t += mag ? fabs(v) : v;
        }
        c->y[r] = (float)(s * (mag ? fabs(c->row_scale[r]) : c->row_scale[r]) + t);
    }
    return 0;
}

void lr_gemv_leech_rec_host(int kind, int mag, const uint8_t *W, const uint32_t *bases, const uint32_t *exc_ptr,
                            const uint32_t *exc_idx, const uint8_t *exc_rec, const float *tab, const float *gscale,
                            const float *row_scale, const uint16_t *tail, const float *x, float *y, int32_t rows,
                            int32_t cols)
{
    ref_job j = { kind, mag, W, exc_rec, bases, exc_ptr, exc_idx, tab, gscale, row_scale, x, tail, y, rows, cols };
    lr_parallel_ranges(rows, 64, ref_rows, &j);
}

#define HOST(name, kind, mag)                                                                                        \
    static void name(const uint8_t *W, const uint32_t *bases, const uint32_t *exc_ptr, const uint32_t *exc_idx,      \
                     const uint8_t *exc_rec, const float *tab, const float *gscale, const float *row_scale,          \
                     const uint16_t *tail, const float *x, float *y, int32_t rows, int32_t cols)                      \
    {                                                                                                                \
        lr_gemv_leech_rec_host(kind, mag, W, bases, exc_ptr, exc_idx, exc_rec, tab, gscale, row_scale, tail, x, y,  \
                               rows, cols);                                                                          \
    }
HOST(host_p14, LR_REC_P14, 0)
HOST(mag_p14, LR_REC_P14, 1)
HOST(host_p12x, LR_REC_P12X, 0)
HOST(mag_p12x, LR_REC_P12X, 1)
HOST(host_slot32, LR_REC_SLOT32, 0)
HOST(mag_slot32, LR_REC_SLOT32, 1)

#define PARAMS                                                                                                        \
    .nparams = 13,                                                                                                    \
    .params = { { "W", LR_T_PTR, LR_E_U8, LR_IN }, { "bases", LR_T_PTR, LR_E_U32, LR_IN },                            \
                { "exc_ptr", LR_T_PTR, LR_E_U32, LR_IN }, { "exc_idx", LR_T_PTR, LR_E_U32, LR_IN },                   \
                { "exc_rec", LR_T_PTR, LR_E_U8, LR_IN }, { "tab", LR_T_PTR, LR_E_F32, LR_IN },                        \
                { "gscale", LR_T_PTR, LR_E_F32, LR_IN }, { "row_scale", LR_T_PTR, LR_E_F32, LR_IN },                  \
                { "tail", LR_T_PTR, LR_E_F16, LR_IN }, { "x", LR_T_PTR, LR_E_F32, LR_IN },                            \
                { "y", LR_T_PTR, LR_E_F32, LR_OUT }, { "rows", LR_T_I32, 0, 0 }, { "cols", LR_T_I32, 0, 0 } }

const lr_kernel_desc lr_gemv_leech_rec_desc[3] = {
    { .name = "gemv_leech_rec", PARAMS, .host = (lr_host_fn)host_p14, .host_mag = (lr_host_fn)mag_p14 },
    { .name = "gemv_leech_rec", PARAMS, .host = (lr_host_fn)host_p12x, .host_mag = (lr_host_fn)mag_p12x },
    { .name = "gemv_leech_rec", PARAMS, .host = (lr_host_fn)host_slot32, .host_mag = (lr_host_fn)mag_slot32 },
};

lr_rec_geom lr_gemv_leech_rec_default_geom(void)
{
    lr_rec_geom g = { 256, 128 };
    return g;
}

int lr_gemv_leech_rec_spec(lr_jit_spec *s, lr_launch_geom *g, int kind, int rows, int cols, lr_rec_geom geom)
{
    if (kind < 0 || kind > 2 || rows <= 0 || cols < 24)
        return LR_FAIL(LR_EINVAL, "gemv_leech_rec kind %d shape %dx%d", kind, rows, cols);
    if (geom.threads % 32 || geom.threads < 32 || geom.threads > 1024 || geom.tile < 1 || geom.tile > 512)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_rec geometry threads=%d tile=%d", geom.threads, geom.tile);
    lr_jit_spec_init(s, "gemv_leech_rec.cu", "gemv_leech_rec");
    lr_jit_spec_set(s, "kind", kind);
    lr_jit_spec_set(s, "rows", rows);
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", geom.threads);
    lr_jit_spec_set(s, "tile", geom.tile);
    int wpc = geom.threads / 32;
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->grid = (lr_dim3){ (unsigned)((rows + wpc - 1) / wpc), 1, 1 };
    g->block = (lr_dim3){ (unsigned)geom.threads, 1, 1 };
    g->smem = 0; /* the x tile is static shared memory (<= 48 KB) */
    return LR_OK;
}

static uint32_t g_dummy32[1];
static uint8_t g_dummy8[4];
static uint16_t g_dummy16[1];

void lr_gemv_leech_rec_args(const lr_rec *L, float *x, float *y, lr_arg a[13])
{
    memset(a, 0, 13 * sizeof *a);
    a[0].host = L->data, a[0].count = L->bytes + LR_REC_PAD; /* the read windows run past the last record */
    a[1].host = L->bases ? (void *)L->bases : g_dummy32, a[1].count = L->bases ? L->ngroups + 1 : 1;
    a[2].host = L->exc_ptr ? (void *)L->exc_ptr : g_dummy32, a[2].count = L->exc_ptr ? (size_t)L->rows + 1 : 1;
    a[3].host = L->exc_idx ? (void *)L->exc_idx : g_dummy32, a[3].count = L->exc_idx && L->nexc ? L->nexc : 1;
    a[4].host = L->exc_rec ? (void *)L->exc_rec : g_dummy8;
    a[4].count = L->exc_rec ? (size_t)L->nexc * LR_REC14_BYTES + LR_REC_PAD : 4;
    a[5].host = L->tab, a[5].count = (size_t)LR_REC_TAB_ENTRIES * LR_REC_TAB_STRIDE;
    a[6].host = (void *)L->gscale, a[6].count = 2;
    a[7].host = L->row_scale, a[7].count = (size_t)L->rows;
    a[8].host = L->tail ? (void *)L->tail_f16 : g_dummy16, a[8].count = L->tail ? (size_t)L->rows * L->tail : 1;
    a[9].host = x, a[9].count = (size_t)L->cols;
    a[10].host = y, a[10].count = (size_t)L->rows;
    a[11].v.i32 = L->rows;
    a[12].v.i32 = L->cols;
}

/* ---- benchmark arms ---- */

/* A copy's device image: every stream the kernel reads, at 256-byte offsets,
 * so copies at distinct addresses keep all of them out of the L2. */
enum { S_W, S_BASES, S_EXC_PTR, S_EXC_IDX, S_EXC_REC, S_N };

typedef struct {
    int kind, rows, cols, copies;
    lr_rec L;
    lr_arg a[13];
    size_t off[S_N], img;
    CUdeviceptr dev, tab, gscale, scale, tail; /* dev: copies x img */
    CUfunction fn;
    lr_launch_geom g;
} rec_state;

static void rec_destroy(void *p)
{
    rec_state *s = p;
    if (!s) return;
    lr_cu_free(s->dev), lr_cu_free(s->tab), lr_cu_free(s->gscale), lr_cu_free(s->scale), lr_cu_free(s->tail);
    lr_rec_free(&s->L);
    free(s);
}

static int unfold(int kind, const lr_leech_matrix *m, lr_rec *L)
{
    return kind == LR_REC_P14 ? lr_rec14_unfold(m, 0, L) : kind == LR_REC_P12X ? lr_p12x_unfold(m, 0, L) : lr_slot32_unfold(m, 0, L);
}

static int upload(CUdeviceptr *d, const void *h, size_t n)
{
    int rc = lr_cu_alloc(d, n);
    return rc ? rc : lr_cu_h2d(*d, h, n);
}

static int rec_prepare(int kind, int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    *out = NULL;
    rec_state *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    s->kind = kind, s->rows = rows, s->cols = cols, s->copies = copies < 1 ? 1 : copies;
    lr_rec_geom geom = lr_gemv_leech_rec_default_geom();
    if (o && o->threads) geom.threads = o->threads;
    if (o && o->tile) geom.tile = o->tile;
    lr_leech_matrix m;
    int rc = lr_leech_random_matrix(rows, cols, 12, 1, o && o->ball ? LR_RANDOM_BALL : LR_RANDOM_CLASSES, seed, &m);
    if (!rc) rc = unfold(kind, &m, &s->L);
    lr_leech_random_free(&m);
    lr_jit_spec spec;
    if (!rc) rc = lr_gemv_leech_rec_spec(&spec, &s->g, kind, rows, cols, geom);
    if (!rc) rc = lr_jit_get(&spec, &s->fn);
    if (!rc) {
        lr_gemv_leech_rec_args(&s->L, NULL, NULL, s->a);
        static const int arg_of[S_N] = { 0, 1, 2, 3, 4 };
        for (int i = 0; i < S_N; i++) {
            s->off[i] = s->img;
            s->img += (s->a[arg_of[i]].count * lr_elt_size(lr_gemv_leech_rec_desc[0].params[arg_of[i]].elt) + 255) / 256 * 256;
        }
        rc = lr_cu_alloc(&s->dev, s->img * (size_t)s->copies);
    }
    for (int c = 0; c < s->copies && !rc; c++)
        for (int i = 0; i < S_N && !rc; i++)
            rc = lr_cu_h2d(s->dev + (size_t)c * s->img + s->off[i], s->a[i].host,
                           s->a[i].count * lr_elt_size(lr_gemv_leech_rec_desc[0].params[i].elt));
    if (!rc) rc = upload(&s->tab, s->L.tab, sizeof(float) * LR_REC_TAB_ENTRIES * LR_REC_TAB_STRIDE);
    if (!rc) rc = upload(&s->gscale, s->L.gscale, sizeof s->L.gscale);
    if (!rc) rc = upload(&s->scale, s->L.row_scale, sizeof(float) * (size_t)rows);
    if (!rc) rc = upload(&s->tail, s->a[8].host, s->a[8].count * 2);
    if (rc) { rec_destroy(s); return rc; }
    *out = s;
    return LR_OK;
}

static int rec_verify(void *p, uint64_t seed, double *err, lr_gemv_arm_io *io)
{
    rec_state *s = p;
    float *x = malloc(sizeof(float) * (size_t)s->cols), *y = malloc(sizeof(float) * (size_t)s->rows);
    if (!x || !y) { free(x), free(y); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    lr_rng r;
    lr_rng_seed(&r, seed ^ 0x5eed);
    lr_fill_random(LR_E_F32, x, (size_t)s->cols, &r, 1.0);
    lr_arg a[13];
    lr_gemv_leech_rec_args(&s->L, x, y, a);
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_rec_desc[s->kind], s->fn, a, s->g, LR_GEMV_LEECH_REC_TOL, &rep);
    *err = rep.max_rel_err;
    if (!rc) lr_gemv_arm_io_keep(io, &x, (size_t)s->cols, &y, (size_t)s->rows);
    free(x), free(y);
    return rc;
}

static int rec_launch(void *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    rec_state *s = p;
    CUdeviceptr base = s->dev + (size_t)(copy % s->copies) * s->img;
    CUdeviceptr w = base + s->off[S_W], bases = base + s->off[S_BASES], ep = base + s->off[S_EXC_PTR];
    CUdeviceptr ei = base + s->off[S_EXC_IDX], er = base + s->off[S_EXC_REC];
    int rows = s->rows, cols = s->cols;
    void *args[] = { &w, &bases, &ep, &ei, &er, &s->tab, &s->gscale, &s->scale, &s->tail, &x, &y, &rows, &cols };
    return lr_cu_launch(s->fn, s->g.grid, s->g.block, s->g.smem, st, args);
}

static size_t rec_bytes(void *p)
{
    rec_state *s = p;
    /* records, bases, exceptions and row pointers, row scales, tail; the
     * class table and x come from the L2 */
    double bpw = lr_rec_bits_per_weight(&s->L, NULL);
    return (size_t)(bpw * 24.0 * (double)s->L.nblocks / 8.0) + sizeof(float) * (size_t)s->rows +
           (size_t)s->rows * s->L.tail * 2;
}

static int prep_p14(int r, int c, int n, uint64_t seed, const lr_gemv_arm_opts *o, void **st) { return rec_prepare(LR_REC_P14, r, c, n, seed, o, st); }
static int prep_p12x(int r, int c, int n, uint64_t seed, const lr_gemv_arm_opts *o, void **st) { return rec_prepare(LR_REC_P12X, r, c, n, seed, o, st); }
static int prep_slot32(int r, int c, int n, uint64_t seed, const lr_gemv_arm_opts *o, void **st) { return rec_prepare(LR_REC_SLOT32, r, c, n, seed, o, st); }

/* Nominal bits per weight: the published figures (bytes() counts what a
 * matrix actually holds). */
const lr_gemv_arm lr_arm_leech_p14rec = { "leech_p14rec", 112.0 / 24, prep_p14, rec_verify, rec_launch, rec_bytes, rec_destroy };
const lr_gemv_arm lr_arm_leech_p12x = { "leech_p12x", 4.342, prep_p12x, rec_verify, rec_launch, rec_bytes, rec_destroy };
const lr_gemv_arm lr_arm_leech_slot32 = { "leech_slot32", 5.51, prep_slot32, rec_verify, rec_launch, rec_bytes, rec_destroy };
