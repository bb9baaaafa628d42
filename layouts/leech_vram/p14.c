#include "layouts/leech_vram/p14.h"

#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/par.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const int LA[4] = { 0, 4, 16, 20 }; /* level bits of a pair's first weight */
static const int SA[4] = { 15, 11, 7, 3 }; /* sign bit of a pair's first weight */

/* Where coordinate i of block (row, blk) lives: byte offset of its word and
 * bit positions of its level and sign. */
typedef struct { size_t word; int lbit, sbit; } pos;

static size_t seg_off(const lr_p14 *L, int row, int blk)
{
    return ((size_t)(row / LR_P14_ROWS) * L->sc + blk / LR_P14_BLKS) * LR_P14_SEG;
}

static size_t hdr_off(const lr_p14 *L, int row, int blk)
{
    int rr = row % LR_P14_ROWS, g = rr % 8, h = rr / 8, b = blk % LR_P14_BLKS;
    return seg_off(L, row, blk) + 2 * (size_t)((g * 2 + h) * 8 + b);
}

static pos where(const lr_p14 *L, int row, int blk, int i)
{
    int rr = row % LR_P14_ROWS, g = rr % 8, h = rr / 8;
    int c = 24 * (blk % LR_P14_BLKS) + i, t = c / 16, k = c % 16;
    int hi = k / 8, q = (k % 8) / 2, e = k % 2, p = hi * 2 + h, lane = 4 * g + q;
    pos r;
    r.word = seg_off(L, row, blk) + LR_P14_HDR + 512 * (size_t)(t / 4) + 16 * (size_t)lane + 4 * (size_t)(t % 4);
    r.lbit = LA[p] + 8 * e;
    r.sbit = SA[p] + 16 * e;
    return r;
}

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

void lr_p14_free(lr_p14 *L)
{
    if (!L) return;
    free(L->data), free(L->tab), free(L->row_scale), free(L->tail_f16);
    memset(L, 0, sizeof *L);
}

int lr_p14_alloc(lr_p14 *L, int rows, int cols, int max_shell, int gain_bits)
{
    memset(L, 0, sizeof *L);
    if (rows <= 0 || cols <= 0 || rows > (1 << 24) || cols > (1 << 24))
        return LR_FAIL(LR_EINVAL, "p14: shape %dx%d", rows, cols);
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "p14: max_shell %d", max_shell);
    int rc = lr_ctab_entries(max_shell, gain_bits, &L->nentries);
    if (rc) return rc;
    if (L->nentries * LR_CTAB_ENTRY > 0xffff) return LR_FAIL(LR_ERANGE, "p14: class table too large for u16 headers");
    L->rows = rows, L->cols = cols, L->nblk = cols / 24, L->tail = cols % 24;
    L->max_shell = max_shell, L->gain_bits = gain_bits;
    L->rg = (rows + LR_P14_ROWS - 1) / LR_P14_ROWS;
    L->sc = (L->nblk + LR_P14_BLKS - 1) / LR_P14_BLKS;
    L->bytes = (size_t)L->rg * L->sc * LR_P14_SEG;
    L->data = calloc(L->bytes ? L->bytes : 1, 1);
    L->tab = calloc((size_t)L->nentries, LR_CTAB_ENTRY);
    L->row_scale = calloc((size_t)L->rg * LR_P14_ROWS, sizeof(float));
    L->tail_f16 = L->tail ? calloc((size_t)rows * L->tail, 2) : NULL;
    if (!L->data || !L->tab || !L->row_scale || (L->tail && !L->tail_f16)) {
        lr_p14_free(L);
        return LR_FAIL(LR_ENOMEM, "p14: out of memory for %dx%d", rows, cols);
    }
    /* the origin entry, so an empty layout already decodes */
    L->tab[7] = 0x64;
    return LR_OK;
}

static int check_pos(const lr_p14 *L, int row, int blk)
{
    if (row < 0 || row >= L->rows || blk < 0 || blk >= L->nblk)
        return LR_FAIL(LR_ERANGE, "p14: block (%d, %d) outside %dx%d blocks", row, blk, L->rows, L->nblk);
    return LR_OK;
}

int lr_p14_put(lr_p14 *L, int row, int blk, const int8_t x[24], int gain)
{
    int rc = check_pos(L, row, blk), cls;
    if (rc) return rc;
    if (gain < 0 || gain >= 1 << L->gain_bits) return LR_FAIL(LR_EINVAL, "p14: gain %d", gain);
    if ((rc = lr_leech_class_of(x, L->max_shell, &cls))) return rc;
    const lr_leech_class *cl = NULL;
    int nc;
    if (cls >= 0) {
        if ((rc = lr_leech_classes(L->max_shell, &cl, &nc))) return rc;
        cl += cls;
    }
    uint16_t h = (uint16_t)(lr_ctab_entry(cls, gain, L->gain_bits) * LR_CTAB_ENTRY);
    memcpy(L->data + hdr_off(L, row, blk), &h, 2);
    for (int i = 0; i < 24; i++) {
        int a = x[i] < 0 ? -x[i] : x[i], lvl = 0;
        if (cl) {
            while (lvl < cl->nvals && cl->vals[lvl] != a) lvl++;
            if (lvl == cl->nvals) return LR_FAIL(LR_EINVAL, "p14: |x[%d]| = %d not in class %d", i, a, cls);
        }
        pos p = where(L, row, blk, i);
        uint32_t w = rd32(L->data + p.word);
        w &= ~((7u << p.lbit) | (1u << p.sbit));
        w |= (uint32_t)lvl << p.lbit | (uint32_t)(x[i] < 0) << p.sbit;
        wr32(L->data + p.word, w);
    }
    return LR_OK;
}

/* Header -> (class, gain); class -1 for the origin. */
static int header(const lr_p14 *L, int row, int blk, int *cls, int *gain)
{
    *cls = -1, *gain = 0;
    uint16_t h;
    memcpy(&h, L->data + hdr_off(L, row, blk), 2);
    if (h % LR_CTAB_ENTRY || h / LR_CTAB_ENTRY >= L->nentries)
        return LR_FAIL(LR_EFORMAT, "p14: block (%d, %d): header %u is not a class-table entry", row, blk, h);
    int e = h / LR_CTAB_ENTRY;
    *cls = e ? (e - 1) >> L->gain_bits : -1;
    *gain = e ? (e - 1) & ((1 << L->gain_bits) - 1) : 0;
    return LR_OK;
}

int lr_p14_get(const lr_p14 *L, int row, int blk, int8_t x[24], int *gain)
{
    int rc = check_pos(L, row, blk), cls = -1, nc;
    if (rc) return rc;
    if ((rc = header(L, row, blk, &cls, gain))) return rc;
    const lr_leech_class *cl = NULL;
    if (cls >= 0) {
        if ((rc = lr_leech_classes(L->max_shell, &cl, &nc))) return rc;
        cl += cls;
    }
    for (int i = 0; i < 24; i++) {
        pos p = where(L, row, blk, i);
        uint32_t w = rd32(L->data + p.word);
        int lvl = (w >> p.lbit) & 7, neg = (w >> p.sbit) & 1;
        int nv = cl ? cl->nvals : 1, v = cl ? cl->vals[lvl < nv ? lvl : 0] : 0;
        if (lvl >= nv) return LR_FAIL(LR_EFORMAT, "p14: block (%d, %d) coordinate %d: level %d >= %d", row, blk, i, lvl, nv);
        if (neg && v == 0) return LR_FAIL(LR_EFORMAT, "p14: block (%d, %d) coordinate %d: negative zero", row, blk, i);
        x[i] = (int8_t)(neg ? -v : v);
    }
    /* the planes must spell a point of the class the header names */
    int got;
    if ((rc = lr_leech_class_of(x, L->max_shell, &got)) || got != cls) {
        lr_clear_error();
        return LR_FAIL(LR_EFORMAT, "p14: block (%d, %d) is not a point of class %d", row, blk, cls);
    }
    return LR_OK;
}

int lr_p14_get_f64(const lr_p14 *L, const float *centroid, int row, int blk, double w[24])
{
    int8_t x[24];
    int g, rc = lr_p14_get(L, row, blk, x, &g);
    if (rc) return rc;
    int n2 = lr_leech_norm(x);
    double s = n2 ? centroid[g] / sqrt((double)n2) * L->row_scale[row] : 0.0;
    for (int i = 0; i < 24; i++) w[i] = x[i] * s;
    return LR_OK;
}

int lr_p14_get_kernel(const lr_p14 *L, int row, int blk, float w[24])
{
    int8_t x[24];
    int g, rc = lr_p14_get(L, row, blk, x, &g);
    if (rc) return rc;
    uint16_t h;
    memcpy(&h, L->data + hdr_off(L, row, blk), 2);
    float s = lr_ctab_scale_f16(L->tab, h / LR_CTAB_ENTRY);
    for (int i = 0; i < 24; i++) {
        float a = lr_half_to_float(lr_float_to_half((float)(x[i] < 0 ? -x[i] : x[i]) * s)); /* exact product, one rounding */
        w[i] = (x[i] < 0 ? -a : a) * L->row_scale[row];
    }
    return LR_OK;
}

/* ---- unfold ---- */

typedef struct {
    const lr_leech_matrix *m;
    lr_p14 *L;
    const uint64_t *idx;
    const uint8_t *gain;
} unfold_ctx;

static int unfold_rows(void *p, int r0, int r1)
{
    unfold_ctx *c = p;
    for (int r = r0; r < r1; r++)
        for (int b = 0; b < c->m->nblk; b++) {
            size_t k = (size_t)r * c->m->nblk + b;
            int8_t x[24];
            int rc = lr_leech_unrank(c->idx[k], c->m->max_shell, x);
            if (!rc) rc = lr_p14_put(c->L, r, b, x, c->gain[k]);
            if (rc) return lr_wrap(rc, "p14 unfold: row %d block %d", r, b);
        }
    return LR_OK;
}

int lr_p14_unfold(const lr_leech_matrix *m, int nthreads, lr_p14 *L)
{
    if (m->nblk != m->cols / 24 || m->tail != m->cols % 24)
        return LR_FAIL(LR_EINVAL, "p14 unfold: cols %d, nblk %d, tail %d disagree", m->cols, m->nblk, m->tail);
    int rc = lr_p14_alloc(L, m->rows, m->cols, m->max_shell, m->gain_bits);
    if (rc) return rc;
    size_t n = (size_t)m->rows * m->nblk;
    uint64_t *idx = malloc((n ? n : 1) * sizeof *idx);
    uint8_t *gain = malloc(n ? n : 1);
    if (!idx || !gain) rc = LR_FAIL(LR_ENOMEM, "p14 unfold: out of memory");
    if (!rc) rc = lr_leech_archive_unpack(m->archive, m->archive_bytes, n, m->gain_bits, idx, gain);
    if (!rc) rc = lr_ctab_build(m->max_shell, m->gain_bits, m->centroid, L->tab, (size_t)L->nentries * LR_CTAB_ENTRY);
    if (!rc) {
        unfold_ctx c = { m, L, idx, gain };
        rc = lr_vram_parallel(m->rows, nthreads, unfold_rows, &c);
    }
    free(idx), free(gain);
    if (rc) { lr_p14_free(L); return rc; }
    for (int r = 0; r < m->rows; r++) {
        if (!isfinite(m->row_scale[r])) { lr_p14_free(L); return LR_FAIL(LR_EINVAL, "p14 unfold: row %d scale not finite", r); }
        L->row_scale[r] = m->row_scale[r];
    }
    if (L->tail) memcpy(L->tail_f16, m->tail_f16, (size_t)m->rows * m->tail * 2);
    return LR_OK;
}

typedef struct { const lr_p14 *L; } val_ctx;

static int validate_rows(void *p, int r0, int r1)
{
    const lr_p14 *L = ((val_ctx *)p)->L;
    for (int r = r0; r < r1; r++)
        for (int b = 0; b < L->nblk; b++) {
            int8_t x[24];
            int g, rc = lr_p14_get(L, r, b, x, &g);
            if (rc) return rc;
        }
    return LR_OK;
}

int lr_p14_validate(const lr_p14 *L)
{
    val_ctx c = { L };
    return lr_vram_parallel(L->rows, 0, validate_rows, &c);
}
