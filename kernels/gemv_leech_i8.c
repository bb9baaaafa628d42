/* I8x GEMV: descriptor, host references (decoding the raw layout bytes the
 * way the kernel does and quantizing x the way it does), specialization and
 * the benchmark arm. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/leech_arm_img.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/i8.h"
#include "layouts/leech_vram/random.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const lr_kernel_desc lr_gemv_leech_i8_desc = {
    .name = "gemv_leech_i8",
    .nparams = 12,
    .params = { { "W", LR_T_PTR, LR_E_U8, LR_IN }, { "tab", LR_T_PTR, LR_E_U8, LR_IN },
                { "row_scale", LR_T_PTR, LR_E_F32, LR_IN }, { "tail", LR_T_PTR, LR_E_F16, LR_IN },
                { "exc_ptr", LR_T_PTR, LR_E_U32, LR_IN }, { "exc_col", LR_T_PTR, LR_E_U32, LR_IN },
                { "exc_dw", LR_T_PTR, LR_E_F32, LR_IN }, { "x", LR_T_PTR, LR_E_F32, LR_IN },
                { "xq", LR_T_PTR, LR_E_U8, LR_IN }, { "y", LR_T_PTR, LR_E_F32, LR_OUT }, { "rows", LR_T_I32, 0, 0 },
                { "cols", LR_T_I32, 0, 0 } },
    .host = (lr_host_fn)lr_gemv_leech_i8_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_i8_host_mag,
};

/* The kernel's x_exp: 2^k with m 2^k in (16319, 32639], k in [-126, 126]. */
static int x_exp(float m)
{
    uint32_t bits;
    memcpy(&bits, &m, 4);
    int e = (int)((bits >> 23) & 255) - 127, k = 14 - e;
    k = k < -126 ? -126 : k > 126 ? 126 : k;
    volatile float p = m * ldexpf(1.0f, k); /* exact: a power of two */
    return p > (float)LR_I8_X_RANGE ? k - 1 : k;
}

void lr_gemv_leech_i8_quantize_x(const float *x, int cols, int32_t *xi, float *xs)
{
    int nblk = cols / 24, sc_n = (nblk + 7) / 8;
    for (int sc = 0; sc < sc_n; sc++) {
        float m = 0.f;
        for (int c = sc * 192; c < sc * 192 + 192; c++)
            if (c < 24 * nblk) m = fmaxf(m, fabsf(x[c]));
        int k = m > 0.f ? x_exp(m) : 0;
        float inv = m > 0.f ? ldexpf(1.0f, k) : 0.f;
        xs[sc] = m > 0.f ? ldexpf(1.0f, -k) : 0.f;
        for (int c = sc * 192; c < sc * 192 + 192; c++) {
            volatile float p = c < 24 * nblk ? x[c] * inv : 0.f;
            xi[c] = (int32_t)rintf(p);
        }
    }
}

typedef struct {
    const uint8_t *W, *tab;
    const float *row_scale, *exc_dw, *x, *xs;
    const uint16_t *tail;
    const uint32_t *exc_ptr, *exc_col;
    const int32_t *xi;
    float *y;
    int rows, cols, mag;
} ref_job;

/* Rows [r0, r1) on every core (the f64 reference is slow). */
static int ref_rows(void *ctx, int r0, int r1)
{
    const ref_job *j = ctx;
    int nblk = j->cols / 24, nt = j->cols % 24, sc_n = (nblk + 7) / 8, mag = j->mag;
    for (int r = r0; r < r1; r++) {
        double s = 0;
        for (int sc = 0; sc < sc_n; sc++) {
            double ps = 0;
            for (int b = 8 * sc; b < 8 * sc + 8 && b < nblk; b++) {
                float bs = 0;
                int8_t v[24];
                int64_t dot = 0;
                lr_i8_kernel_block(j->W, j->tab, j->rows, j->cols, r, b, v, &bs);
                for (int k = 0; k < 24; k++)
                    dot += mag ? llabs((int64_t)v[k] * j->xi[24 * b + k]) : (int64_t)v[k] * j->xi[24 * b + k];
                ps += (mag ? fabs(bs) : bs) * (double)dot;
            }
            s += ps * j->xs[sc];
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
    int nblk = cols / 24, sc_n = (nblk + 7) / 8;
    int32_t *xi = malloc(sizeof(int32_t) * ((size_t)sc_n * 192 + 1));
    float *xs = malloc(sizeof(float) * ((size_t)sc_n + 1));
    if (!xi || !xs) { free(xi), free(xs); for (int r = 0; r < rows; r++) y[r] = NAN; return; }
    lr_gemv_leech_i8_quantize_x(x, cols, xi, xs);
    ref_job j = { W, tab, row_scale, exc_dw, x, xs, tail, exc_ptr, exc_col, xi, y, rows, cols, mag };
    lr_parallel_ranges(rows, 64, ref_rows, &j);
    free(xi), free(xs);
}

void lr_gemv_leech_i8_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                           const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                           const uint8_t *xq, float *y, int32_t rows, int32_t cols)
{
    (void)xq;
    gemv(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 0);
}

void lr_gemv_leech_i8_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                               const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw, const float *x,
                               const uint8_t *xq, float *y, int32_t rows, int32_t cols)
{
    (void)xq;
    gemv(W, tab, row_scale, tail, exc_ptr, exc_col, exc_dw, x, y, rows, cols, 1);
}

const lr_kernel_desc lr_gemv_leech_i8_xq_desc = {
    .name = "gemv_leech_i8_xq",
    .nparams = 3,
    .params = { { "x", LR_T_PTR, LR_E_F32, LR_IN }, { "xq", LR_T_PTR, LR_E_U8, LR_OUT }, { "cols", LR_T_I32, 0, 0 } },
    .host = (lr_host_fn)lr_gemv_leech_i8_xq_host,
};

size_t lr_gemv_leech_i8_xq_bytes(int cols)
{
    size_t sc = (size_t)(cols / 24 + 7) / 8;
    return sc * 512 + sc * 4;
}

void lr_gemv_leech_i8_xq_host(const float *x, uint8_t *xq, int32_t cols)
{
    int sc_n = (cols / 24 + 7) / 8;
    int32_t *xi = malloc(sizeof(int32_t) * ((size_t)sc_n * 192 + 1));
    float *xs = malloc(sizeof(float) * ((size_t)sc_n + 1));
    if (!xi || !xs) { free(xi), free(xs); return; }
    lr_gemv_leech_i8_quantize_x(x, cols, xi, xs);
    memset(xq, 0, (size_t)sc_n * 512);
    for (int c = 0; c < sc_n * 192; c++) {
        int sc = c / 192, b = (c % 192) / 24, k = c % 24;
        uint8_t *o = xq + (size_t)sc * 512 + b * 64 + 8 * ((k & 15) >> 2) + 4 * (k >> 4) + (k & 3);
        int hi = (xi[c] + 128) >> 8;
        o[0] = (uint8_t)hi;
        o[32] = (uint8_t)(xi[c] - 256 * hi);
    }
    memcpy(xq + (size_t)sc_n * 512, xs, sizeof(float) * (size_t)sc_n);
    free(xi), free(xs);
}

int lr_gemv_leech_i8_xq_spec(lr_jit_spec *s, lr_launch_geom *g, int cols, int threads)
{
    if (cols < 24 || threads % 32 || threads < 32 || threads > 1024)
        return LR_FAIL(LR_EINVAL, "gemv_leech_i8_xq cols %d threads %d", cols, threads);
    int sc = (cols / 24 + 7) / 8, wpc = threads / 32;
    lr_jit_spec_init(s, "gemv_leech_i8_xq.cu", "gemv_leech_i8_xq");
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", threads);
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->grid = (lr_dim3){ (unsigned)((sc + wpc - 1) / wpc), 1, 1 };
    g->block = (lr_dim3){ (unsigned)threads, 1, 1 };
    g->smem = 0;
    return LR_OK;
}

lr_leech_geom lr_gemv_leech_i8_default_geom(int rows, int cols)
{
    /* Every CTA quantizes x for itself (~1 instruction per weight at 16 rows
     * per CTA): two row groups per CTA once that still leaves two CTAs per SM. */
    lr_leech_geom g = { .threads = 256, .rg = rows >= 2 * 132 * 32 ? 2 : 1, .prefetch = 1 };
    int t[LR_TUNE_KNOBS];
    if (lr_tuning_lookup("leech_i8", rows, cols, t)) {
        if (t[0]) g.threads = t[0];
        if (t[1]) g.rg = t[1];
        if (t[4]) g.prefetch = t[4] > 0;
        g.xq = t[5] > 0;
        if (t[6] > 0) g.minb = t[6];
    }
    return g;
}

int lr_gemv_leech_i8_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                          int smem_budget)
{
    if (rows <= 0 || cols < 24 || ntab <= 0 || ntab > 4096)
        return LR_FAIL(LR_EINVAL, "gemv_leech_i8 shape %dx%d, %d entries", rows, cols, ntab);
    if (geom.threads % 32 || geom.threads < 32 || geom.threads > 1024 || geom.rg < 1 || geom.rg > 8)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_i8 geometry threads=%d rg=%d", geom.threads, geom.rg);
    int sc = (cols / 24 + 7) / 8, rgn = (rows + 15) / 16;
    size_t smem = (size_t)ntab * 16 + (size_t)sc * 512 + (size_t)sc * 4 + (size_t)geom.threads / 32 * geom.rg * 16 * 4;
    if (smem > (size_t)smem_budget)
        return LR_FAIL(LR_ERANGE, "gemv_leech_i8 %dx%d needs %zu bytes of shared memory (budget %d)", rows, cols, smem,
                       smem_budget);
    lr_jit_spec_init(s, "gemv_leech_i8.cu", "gemv_leech_i8");
    lr_jit_spec_set(s, "rows", rows);
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", geom.threads);
    lr_jit_spec_set(s, "rg", geom.rg);
    lr_jit_spec_set(s, "ntab", ntab);
    lr_jit_spec_set(s, "prefetch", geom.prefetch ? 1 : 0);
    lr_jit_spec_set(s, "xq", geom.xq ? 1 : 0);
    if (geom.minb < 0 || geom.minb > 2048 / geom.threads)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_i8 minb=%d for %d threads", geom.minb, geom.threads);
    if (geom.minb > 1) lr_jit_spec_set(s, "minb", geom.minb);
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->grid = (lr_dim3){ (unsigned)((rgn + geom.rg - 1) / geom.rg), 1, 1 };
    g->block = (lr_dim3){ (unsigned)geom.threads, 1, 1 };
    g->smem = (unsigned)smem;
    return LR_OK;
}

/* ---- benchmark arm ---- */

typedef struct {
    int rows, cols;
    lr_i8 L;
    lr_leech_arm_img img;
    CUfunction fn;
    lr_launch_geom g;
    int xq;                        /* x quantized by a first launch into dxq */
    CUdeviceptr dxq;
    CUfunction fq;
    lr_launch_geom gq;
} i8_state;

static void i8_destroy(void *p)
{
    i8_state *s = p;
    if (!s) return;
    lr_leech_arm_img_free(&s->img);
    lr_cu_free(s->dxq);
    lr_i8_free(&s->L);
    free(s);
}

static int i8_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    *out = NULL;
    i8_state *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    s->rows = rows, s->cols = cols;
    lr_leech_geom geom = lr_gemv_leech_i8_default_geom(rows, cols);
    if (o && o->threads) geom.threads = o->threads;
    if (o && o->rpw) geom.rg = o->rpw;
    if (o && o->extra[0]) geom.prefetch = o->extra[0] > 0;
    if (o && o->extra[1]) geom.xq = o->extra[1] > 0;
    if (o && o->minb) geom.minb = o->minb;
    s->xq = geom.xq;
    lr_leech_matrix m;
    int rc = lr_leech_random_matrix(rows, cols, 12, 1, o && o->ball ? LR_RANDOM_BALL : LR_RANDOM_CLASSES, seed, &m);
    if (!rc) rc = lr_i8_unfold(&m, 0, &s->L);
    lr_jit_spec qspec;
    if (!rc && s->xq) rc = lr_gemv_leech_i8_xq_spec(&qspec, &s->gq, cols, 256);
    if (!rc && s->xq) rc = lr_jit_get(&qspec, &s->fq);
    if (!rc && s->xq) rc = lr_cu_alloc(&s->dxq, lr_gemv_leech_i8_xq_bytes(cols));
    lr_leech_random_free(&m);
    lr_jit_spec spec;
    if (!rc) rc = lr_gemv_leech_i8_spec(&spec, &s->g, rows, cols, s->L.nentries, geom, lr_cu_smem_budget());
    if (!rc) rc = lr_jit_get(&spec, &s->fn);
    const lr_leech_arm_src src = { .data = s->L.data,       .bytes = s->L.bytes,         .rows = rows,
                                   .exc_ptr = s->L.exc_ptr, .exc_col = s->L.exc_col,     .exc_dw = s->L.exc_dw,
                                   .nexc = s->L.nexc,       .tab = s->L.tab,             .nentries = s->L.nentries,
                                   .row_scale = s->L.row_scale, .tail_f16 = s->L.tail_f16, .tail = s->L.tail };
    if (!rc) rc = lr_leech_arm_img_upload(&s->img, &src, copies);
    if (rc) { i8_destroy(s); return rc; }
    *out = s;
    return LR_OK;
}

void lr_gemv_leech_i8_args(lr_i8 *L, float *x, uint8_t *xq, float *y, lr_arg a[12])
{
    static uint16_t one_h;
    static uint8_t one_b;
    memset(a, 0, 12 * sizeof *a);
    a[0].host = L->data, a[0].count = L->bytes;
    a[1].host = L->tab, a[1].count = (size_t)L->nentries * 16;
    a[2].host = L->row_scale, a[2].count = (size_t)L->rows;
    a[3].host = L->tail ? (void *)L->tail_f16 : &one_h, a[3].count = L->tail ? (size_t)L->rows * L->tail : 1;
    a[4].host = L->exc_ptr, a[4].count = (size_t)L->rows + 1;
    a[5].host = L->exc_col, a[5].count = L->nexc ? L->nexc : 1;
    a[6].host = L->exc_dw, a[6].count = L->nexc ? L->nexc : 1;
    a[7].host = x, a[7].count = (size_t)L->cols;
    a[8].host = xq ? (void *)xq : &one_b, a[8].count = xq ? lr_gemv_leech_i8_xq_bytes(L->cols) : 1;
    a[9].host = y, a[9].count = (size_t)L->rows;
    a[10].v.i32 = L->rows;
    a[11].v.i32 = L->cols;
}

static int i8_verify(void *p, uint64_t seed, double *err, lr_gemv_arm_io *io)
{
    i8_state *s = p;
    float *x = malloc(sizeof(float) * (size_t)s->cols), *y = malloc(sizeof(float) * (size_t)s->rows);
    if (!x || !y) { free(x), free(y); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    lr_rng r;
    lr_rng_seed(&r, seed ^ 0x5eed);
    lr_fill_random(LR_E_F32, x, (size_t)s->cols, &r, 1.0);
    uint8_t *xq = NULL;
    int rc = LR_OK;
    lr_verify_report rep;
    if (s->xq) {
        /* the quantizer (bit-exact) first, then the GEMV on the host's xq */
        xq = malloc(lr_gemv_leech_i8_xq_bytes(s->cols));
        if (!xq) rc = LR_FAIL(LR_ENOMEM, "out of memory");
        lr_arg q[3] = { 0 };
        q[0].host = x, q[0].count = (size_t)s->cols;
        q[1].host = xq, q[1].count = lr_gemv_leech_i8_xq_bytes(s->cols);
        q[2].v.i32 = s->cols;
        if (!rc) rc = lr_call_verify(&lr_gemv_leech_i8_xq_desc, s->fq, q, s->gq, 0, &rep);
        if (!rc) lr_gemv_leech_i8_xq_host(x, xq, s->cols);
    }
    lr_arg a[12];
    lr_gemv_leech_i8_args(&s->L, x, xq, y, a);
    if (!rc) rc = lr_call_verify(&lr_gemv_leech_i8_desc, s->fn, a, s->g, LR_GEMV_LEECH_I8_TOL, &rep);
    *err = rep.max_rel_err;
    /* the timed launch quantizes x on the device first: the verified quantizer's xq */
    if (!rc) lr_gemv_arm_io_keep(io, &x, (size_t)s->cols, &y, (size_t)s->rows);
    free(x), free(y), free(xq);
    return rc;
}

static int i8_launch(void *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    i8_state *s = p;
    CUdeviceptr xq = s->xq ? s->dxq : x;
    lr_leech_arm_ptrs c = lr_leech_arm_img_copy(&s->img, copy);
    int rows = s->rows, cols = s->cols;
    if (s->xq) {
        void *qa[] = { &x, &s->dxq, &cols };
        int rc = lr_cu_launch(s->fq, s->gq.grid, s->gq.block, 0, st, qa);
        if (rc) return rc;
    }
    void *args[] = { &c.w, &c.tab, &c.scale, &c.tail, &c.exc_ptr, &c.exc_col, &c.exc_dw, &x, &xq, &y, &rows, &cols };
    return lr_cu_launch(s->fn, s->g.grid, s->g.block, s->g.smem, st, args);
}

static size_t i8_bytes(void *p)
{
    i8_state *s = p;
    /* segments + exceptions + row pointers + row scales + tail */
    return s->L.bytes + 8 * (size_t)s->L.nexc + 4 * ((size_t)s->rows + 1) + sizeof(float) * (size_t)s->rows +
           (size_t)s->rows * s->L.tail * 2;
}

const lr_gemv_arm lr_arm_leech_i8 = { "leech_i8", 3.6, i8_prepare, i8_verify, i8_launch, i8_bytes, i8_destroy };
