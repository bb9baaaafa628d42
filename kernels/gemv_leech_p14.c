/* Planes14 GEMV (fragment order): descriptor, host references (decoding the
 * raw layout bytes the way the kernel does), specialization and the
 * benchmark arm. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/leech_arm_img.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/random.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const lr_kernel_desc lr_gemv_leech_p14_desc = {
    .name = "gemv_leech_p14",
    .nparams = 8,
    .params = { { "W", LR_T_PTR, LR_E_U8, LR_IN }, { "tab", LR_T_PTR, LR_E_U8, LR_IN },
                { "row_scale", LR_T_PTR, LR_E_F32, LR_IN }, { "tail", LR_T_PTR, LR_E_F16, LR_IN },
                { "x", LR_T_PTR, LR_E_F32, LR_IN }, { "y", LR_T_PTR, LR_E_F32, LR_OUT },
                { "rows", LR_T_I32, 0, 0 }, { "cols", LR_T_I32, 0, 0 } },
    .host = (lr_host_fn)lr_gemv_leech_p14_host,
    .host_mag = (lr_host_fn)lr_gemv_leech_p14_host_mag,
};

static const int LA[4] = { 0, 4, 16, 20 }, SA[4] = { 15, 11, 7, 3 };

float lr_gemv_leech_p14_weight(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int col)
{
    int nblk = cols / 24, sc_n = (nblk + 7) / 8;
    (void)rows;
    int blk = col / 24, i = col % 24;
    const uint8_t *seg = W + ((size_t)(row / 16) * sc_n + blk / 8) * LR_P14_SEG;
    int rr = row % 16, g = rr % 8, h = rr / 8, b = blk % 8;
    uint16_t hdr;
    memcpy(&hdr, seg + 2 * ((g * 2 + h) * 8 + b), 2);
    const uint8_t *e = tab + hdr;
    int c = 24 * b + i, t = c / 16, k = c % 16, hi = k / 8, q = (k % 8) / 2, ee = k % 2, p = hi * 2 + h;
    uint32_t w;
    memcpy(&w, seg + LR_P14_HDR + 512 * (t / 4) + 16 * (4 * g + q) + 4 * (t % 4), 4);
    int lvl = (w >> (LA[p] + 8 * ee)) & 7, neg = (w >> (SA[p] + 16 * ee)) & 1;
    uint16_t s16;
    memcpy(&s16, e + 8, 2);
    /* the PRMT reads byte lvl of the 8-byte table word pair; HFMA2 rounds once */
    float a = lr_half_to_float(lr_float_to_half((float)e[lvl] * lr_half_to_float(s16)));
    return neg ? -a : a;
}

typedef struct {
    const uint8_t *W, *tab;
    const float *row_scale, *x;
    const uint16_t *tail;
    float *y;
    int rows, cols, mag;
} ref_job;

/* Rows [r0, r1): the reference is slow (f64, one weight at a
 * time from the raw bytes), so the rows run on every core. */
static int ref_rows(void *ctx, int r0, int r1)
{
    const ref_job *j = ctx;
    int nblk = j->cols / 24, nt = j->cols % 24, mag = j->mag;
    for (int r = r0; r < r1; r++) {
        double s = 0, t = 0;
        for (int c = 0; c < 24 * nblk; c++) {
            double v = (double)lr_gemv_leech_p14_weight(j->W, j->tab, j->rows, j->cols, r, c) *
                       lr_half_to_float(lr_float_to_half(j->x[c]));
            s += mag ? fabs(v) : v;
        }
        for (int k = 0; k < nt; k++) {
            double v = (double)lr_half_to_float(j->tail[(size_t)r * nt + k]) * j->x[24 * nblk + k];
            t += mag ? fabs(v) : v;
        }
        j->y[r] = (float)(s * (mag ? fabs(j->row_scale[r]) : j->row_scale[r]) + t);
    }
    return 0;
}

static void gemv(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail, const float *x,
                 float *y, int rows, int cols, int mag)
{
    ref_job j = { W, tab, row_scale, x, tail, y, rows, cols, mag };
    lr_parallel_ranges(rows, 64, ref_rows, &j);
}

void lr_gemv_leech_p14_host(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                            const float *x, float *y, int32_t rows, int32_t cols)
{
    gemv(W, tab, row_scale, tail, x, y, rows, cols, 0);
}

void lr_gemv_leech_p14_host_mag(const uint8_t *W, const uint8_t *tab, const float *row_scale, const uint16_t *tail,
                                const float *x, float *y, int32_t rows, int32_t cols)
{
    gemv(W, tab, row_scale, tail, x, y, rows, cols, 1);
}

unsigned lr_leech_batch_grid(int batches, int persist)
{
    unsigned grid = (unsigned)batches;
    if (persist > 0) {
        /* the device the process opened (library code never opens one itself: a program
           on device 1 would then be refused it) */
        const lr_device_info *d = lr_cu_device();
        unsigned cap = (unsigned)persist * (unsigned)(d && d->sm_count > 0 ? d->sm_count : 132);
        if (cap < grid) grid = cap;
    }
    return grid;
}

lr_leech_geom lr_gemv_leech_p14_default_geom(int rows, int cols)
{
    lr_leech_geom g = { .threads = 256, .rg = 1, .prefetch = 1 };
    int t[LR_TUNE_KNOBS];
    if (lr_tuning_lookup("leech_p14", rows, cols, t)) {
        if (t[0]) g.threads = t[0];
        if (t[1]) g.rg = t[1];
        if (t[4]) g.prefetch = t[4] > 0 ? t[4] : 0;
        if (t[5] > 0) g.persist = t[5];
        if (t[2] == 2) g.tabg = 1;
        if (t[3] > 1) g.nacc = t[3];
        if (t[6] > 0) g.minb = t[6];
    }
    return g;
}

int lr_gemv_leech_p14_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, int ntab, lr_leech_geom geom,
                           int smem_budget)
{
    if (rows <= 0 || cols < 24 || ntab <= 0) return LR_FAIL(LR_EINVAL, "gemv_leech_p14 shape %dx%d, %d entries", rows, cols, ntab);
    if (geom.threads % 32 || geom.threads < 32 || geom.threads > 1024 || geom.rg < 1 || geom.rg > 8)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14 geometry threads=%d rg=%d", geom.threads, geom.rg);
    int sc = (cols / 24 + 7) / 8, rgn = (rows + 15) / 16;
    if (geom.persist < 0 || geom.persist > 32) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14 persist=%d", geom.persist);
    if (geom.nacc < 0 || geom.nacc > 4) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14 nacc=%d", geom.nacc);
    if (geom.prefetch < 0 || geom.prefetch > 8) return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14 prefetch=%d", geom.prefetch);
    size_t smem = (geom.tabg ? 0 : (size_t)ntab * 16) + (size_t)sc * 384 + 2 * (size_t)geom.threads / 32 * geom.rg * 16 * 4;
    if (geom.prefetch >= 2) /* per-warp rings of prefetch stages of rg segments */
        smem += (size_t)geom.threads / 32 * geom.prefetch * geom.rg * LR_P14_SEG;
    if (smem > (size_t)smem_budget)
        return LR_FAIL(LR_ERANGE, "gemv_leech_p14 %dx%d needs %zu bytes of shared memory (budget %d)", rows, cols, smem,
                       smem_budget);
    lr_jit_spec_init(s, "gemv_leech_p14.cu", "gemv_leech_p14");
    lr_jit_spec_set(s, "rows", rows);
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", geom.threads);
    lr_jit_spec_set(s, "rg", geom.rg);
    lr_jit_spec_set(s, "ntab", ntab);
    lr_jit_spec_set(s, "prefetch", geom.prefetch);
    if (geom.tabg) lr_jit_spec_set(s, "tabg", 1);
    if (geom.nacc > 1) lr_jit_spec_set(s, "nacc", geom.nacc);
    if (geom.minb < 0 || geom.minb > 2048 / geom.threads)
        return LR_FAIL(LR_EINVAL, "bad gemv_leech_p14 minb=%d for %d threads", geom.minb, geom.threads);
    if (geom.minb > 1) lr_jit_spec_set(s, "minb", geom.minb);
    else if (geom.prefetch >= 2) {
        /* Registers must not be what limits the CTAs per SM below what shared
         * memory allows (an SM has the budget + 1 KB reserved per CTA). */
        int minb = (int)(((size_t)smem_budget + 1024) / (smem + 1024));
        if (minb > 2048 / geom.threads / 2) minb = 2048 / geom.threads / 2;
        if (minb > 1) lr_jit_spec_set(s, "minb", minb);
    }
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->grid = (lr_dim3){ lr_leech_batch_grid((rgn + geom.rg - 1) / geom.rg, geom.persist), 1, 1 };
    g->block = (lr_dim3){ (unsigned)geom.threads, 1, 1 };
    g->smem = (unsigned)smem;
    return LR_OK;
}

/* ---- benchmark arm ---- */

typedef struct {
    int rows, cols;
    lr_p14 L;
    lr_leech_arm_img img; /* no exception lists: copies x L.bytes */
    CUfunction fn;
    lr_launch_geom g;
} p14_state;

static void p14_destroy(void *p)
{
    p14_state *s = p;
    if (!s) return;
    lr_leech_arm_img_free(&s->img);
    lr_p14_free(&s->L);
    free(s);
}

static int p14_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    *out = NULL;
    p14_state *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    s->rows = rows, s->cols = cols;
    lr_leech_geom geom = lr_gemv_leech_p14_default_geom(rows, cols);
    if (o && o->threads) geom.threads = o->threads;
    if (o && o->rpw) geom.rg = o->rpw;
    if (o && o->extra[0]) geom.prefetch = o->extra[0] > 0 ? o->extra[0] : 0;
    if (o && o->extra[1] > 0) geom.persist = o->extra[1];
    if (o && o->unroll) geom.tabg = o->unroll == 2; /* knob "unroll": 1 = table in smem, 2 = via L1 */
    if (o && o->tile) geom.nacc = o->tile;          /* knob "tile": accumulator chains */
    if (o && o->extra[1] < 0) geom.persist = 0;
    if (o && o->minb) geom.minb = o->minb;
    lr_leech_matrix m;
    int rc = lr_leech_random_matrix(rows, cols, 12, 1, o && o->ball ? LR_RANDOM_BALL : LR_RANDOM_CLASSES, seed, &m);
    if (!rc) rc = lr_p14_unfold(&m, 0, &s->L);
    lr_leech_random_free(&m);
    lr_jit_spec spec;
    if (!rc) rc = lr_gemv_leech_p14_spec(&spec, &s->g, rows, cols, s->L.nentries, geom, lr_cu_smem_budget());
    if (!rc) rc = lr_jit_get(&spec, &s->fn);
    const lr_leech_arm_src src = { .data = s->L.data,          .bytes = s->L.bytes,         .rows = rows,
                                   .tab = s->L.tab,            .nentries = s->L.nentries,   .row_scale = s->L.row_scale,
                                   .tail_f16 = s->L.tail_f16, .tail = s->L.tail };
    if (!rc) rc = lr_leech_arm_img_upload(&s->img, &src, copies);
    if (rc) { p14_destroy(s); return rc; }
    *out = s;
    return LR_OK;
}

static int p14_verify(void *p, uint64_t seed, double *err, lr_gemv_arm_io *io)
{
    p14_state *s = p;
    float *x = malloc(sizeof(float) * (size_t)s->cols), *y = malloc(sizeof(float) * (size_t)s->rows);
    uint16_t one = 0;
    if (!x || !y) { free(x), free(y); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    lr_rng r;
    lr_rng_seed(&r, seed ^ 0x5eed);
    lr_fill_random(LR_E_F32, x, (size_t)s->cols, &r, 1.0);
    lr_arg a[8] = { 0 };
    a[0].host = s->L.data, a[0].count = s->L.bytes;
    a[1].host = s->L.tab, a[1].count = (size_t)s->L.nentries * 16;
    a[2].host = s->L.row_scale, a[2].count = (size_t)s->rows;
    a[3].host = s->L.tail ? (void *)s->L.tail_f16 : &one, a[3].count = s->L.tail ? (size_t)s->rows * s->L.tail : 1;
    a[4].host = x, a[4].count = (size_t)s->cols;
    a[5].host = y, a[5].count = (size_t)s->rows;
    a[6].v.i32 = s->rows;
    a[7].v.i32 = s->cols;
    lr_verify_report rep;
    int rc = lr_call_verify(&lr_gemv_leech_p14_desc, s->fn, a, s->g, LR_GEMV_LEECH_TOL, &rep);
    *err = rep.max_rel_err;
    if (!rc) lr_gemv_arm_io_keep(io, &x, (size_t)s->cols, &y, (size_t)s->rows);
    free(x), free(y);
    return rc;
}

static int p14_launch(void *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    p14_state *s = p;
    lr_leech_arm_ptrs c = lr_leech_arm_img_copy(&s->img, copy);
    int rows = s->rows, cols = s->cols;
    void *args[] = { &c.w, &c.tab, &c.scale, &c.tail, &x, &y, &rows, &cols };
    return lr_cu_launch(s->fn, s->g.grid, s->g.block, s->g.smem, st, args);
}

static size_t p14_bytes(void *p)
{
    p14_state *s = p;
    /* layout + row scales + tail; the class table and x come from the L2 */
    return s->L.bytes + sizeof(float) * (size_t)s->rows + (size_t)s->rows * s->L.tail * 2;
}

const lr_gemv_arm lr_arm_leech_p14 = { "leech_p14", 4.667, p14_prepare, p14_verify, p14_launch, p14_bytes, p14_destroy };
