#include "layouts/leech_vram/i8.h"

#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/par.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- bit positions (docs/layouts.md, "I8x") ---- */

static size_t seg_off(int sc_n, int row, int blk)
{
    return ((size_t)(row / LR_I8_ROWS) * sc_n + blk / LR_I8_BLKS) * LR_I8_SEG;
}

/* Byte offset (in the segment) of lane word wi of lane (g, q). */
static int word_off(int g, int q, int wi)
{
    if (wi < 4) return LR_I8_HDR + 16 * (4 * g + q) + 4 * wi;
    if (wi < 8) return q < 2 ? 704 + 48 * g + 16 * q + 4 * (wi - 4) : 704 + 48 * g + 32 + 8 * (q - 2) + 4 * (wi - 4);
    return 1088 + 32 * g + 16 * q + 4 * (wi - 8);
}

/* The three (byte offset, bit) places of coordinate k's code bits 0..2. */
static void code_bits(int row, int blk, int k, int off[3], int bit[3])
{
    int rr = row % LR_I8_ROWS, g = rr % 8, h = rr / 8, b = blk % LR_I8_BLKS;
    int q = (k % 16) / 4, half = k / 16, n = k % 4, r = half * 2 + h;
    int idx = r < 2 ? 2 * b + r : 16 + 2 * b + (r - 2), G = idx / 8, s = idx % 8;
    for (int j = 0; j < 3; j++) {
        int wi, bt;
        if (s < 6) wi = 3 * G + s / 2, bt = (s % 2) * 16 + 4 * n + j;
        else wi = 3 * G + j, bt = (s - 6) * 16 + 4 * n + 3;
        off[j] = word_off(g, q, wi) + bt / 8;
        bit[j] = bt % 8;
    }
}

/* The 12 (byte offset, bit) places of the header of (row, blk), index bit i. */
static void header_bits(int row, int blk, int off[12], int bit[12])
{
    int rr = row % LR_I8_ROWS, g = rr % 8, h = rr / 8, j = h * 8 + blk % LR_I8_BLKS;
    for (int i = 0; i < 12; i++) {
        int w, bt;
        if (j < 6) w = j, bt = 4 + i;
        else if (j < 12) w = j - 6, bt = 20 + i;
        else w = (j >= 14 ? 3 : 0) + i / 4, bt = ((j - 12) & 1) * 16 + i % 4;
        off[i] = 24 * g + 4 * w + bt / 8;
        bit[i] = bt % 8;
    }
}

static int get_bit(const uint8_t *seg, int off, int bit) { return (seg[off] >> bit) & 1; }
static void set_bit(uint8_t *seg, int off, int bit, int v)
{
    seg[off] = (uint8_t)((seg[off] & ~(1u << bit)) | (unsigned)(v & 1) << bit);
}

static int read_code(const uint8_t *seg, int row, int blk, int k)
{
    int off[3], bit[3];
    code_bits(row, blk, k, off, bit);
    return get_bit(seg, off[0], bit[0]) | get_bit(seg, off[1], bit[1]) << 1 | get_bit(seg, off[2], bit[2]) << 2;
}

static int read_header(const uint8_t *seg, int row, int blk)
{
    int off[12], bit[12], v = 0;
    header_bits(row, blk, off, bit);
    for (int i = 0; i < 12; i++) v |= get_bit(seg, off[i], bit[i]) << i;
    return v;
}

/* ---- table ---- */

int lr_i8_tab_build(int max_shell, int gain_bits, const float *centroid, uint8_t *tab, size_t tab_bytes)
{
    const lr_leech_class *cls;
    int nc, n;
    int rc = lr_ctab_entries(max_shell, gain_bits, &n);
    if (rc) return rc;
    if ((rc = lr_leech_classes(max_shell, &cls, &nc))) return rc;
    if (tab_bytes < (size_t)n * 16) return LR_FAIL(LR_EINVAL, "i8 table: %zu bytes < %d entries", tab_bytes, n);
    memset(tab, 0, (size_t)n * 16);
    for (int c = 0; c < nc; c++)
        for (int g = 0; g < 1 << gain_bits; g++) {
            if (!isfinite(centroid[g])) return LR_FAIL(LR_EINVAL, "i8 table: centroid %d not finite", g);
            uint8_t *e = tab + (size_t)lr_ctab_entry(c, g, gain_bits) * 16;
            for (int l = 0; l < 4 && l < cls[c].nvals; l++) {
                if (cls[c].vals[l] > 127) return LR_FAIL(LR_ERANGE, "i8 table: |v| %d", cls[c].vals[l]);
                e[l] = (uint8_t)cls[c].vals[l];
                e[4 + l] = (uint8_t)(int8_t)(-(int)cls[c].vals[l]);
            }
            float s = (float)(centroid[g] / sqrt(16.0 * cls[c].shell));
            memcpy(e + 8, &s, 4);
        }
    return LR_OK;
}

static float entry_scale(const uint8_t *tab, int e)
{
    float s;
    memcpy(&s, tab + (size_t)e * 16 + 8, 4);
    return s;
}

/* ---- alloc ---- */

void lr_i8_free(lr_i8 *L)
{
    if (!L) return;
    free(L->data), free(L->tab), free(L->row_scale), free(L->tail_f16);
    free(L->exc_ptr), free(L->exc_col), free(L->exc_dw);
    memset(L, 0, sizeof *L);
}

int lr_i8_alloc(lr_i8 *L, int rows, int cols, int max_shell, int gain_bits)
{
    memset(L, 0, sizeof *L);
    if (rows <= 0 || cols <= 0 || rows > (1 << 24) || cols > (1 << 24))
        return LR_FAIL(LR_EINVAL, "i8: shape %dx%d", rows, cols);
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "i8: max_shell %d", max_shell);
    int rc = lr_ctab_entries(max_shell, gain_bits, &L->nentries);
    if (rc) return rc;
    if (L->nentries > 4096) return LR_FAIL(LR_ERANGE, "i8: %d class-table entries do not fit 12-bit headers", L->nentries);
    L->rows = rows, L->cols = cols, L->nblk = cols / 24, L->tail = cols % 24;
    L->max_shell = max_shell, L->gain_bits = gain_bits;
    L->rg = (rows + LR_I8_ROWS - 1) / LR_I8_ROWS;
    L->sc = (L->nblk + LR_I8_BLKS - 1) / LR_I8_BLKS;
    L->bytes = (size_t)L->rg * L->sc * LR_I8_SEG;
    L->data = calloc(L->bytes ? L->bytes : 1, 1);
    L->tab = calloc((size_t)L->nentries, 16);
    L->row_scale = calloc((size_t)L->rg * LR_I8_ROWS, sizeof(float));
    L->tail_f16 = L->tail ? calloc((size_t)rows * L->tail, 2) : NULL;
    L->exc_ptr = calloc((size_t)rows + 1, sizeof(uint32_t));
    L->exc_col = calloc(1, sizeof(uint32_t));
    L->exc_dw = calloc(1, sizeof(float));
    if (!L->data || !L->tab || !L->row_scale || (L->tail && !L->tail_f16) || !L->exc_ptr || !L->exc_col || !L->exc_dw) {
        lr_i8_free(L);
        return LR_FAIL(LR_ENOMEM, "i8: out of memory for %dx%d", rows, cols);
    }
    return LR_OK;
}

static int check_pos(const lr_i8 *L, int row, int blk)
{
    if (row < 0 || row >= L->rows || blk < 0 || blk >= L->nblk)
        return LR_FAIL(LR_ERANGE, "i8: block (%d, %d) outside %dx%d blocks", row, blk, L->rows, L->nblk);
    return LR_OK;
}

/* ---- put / get ---- */

int lr_i8_put(lr_i8 *L, int row, int blk, const int8_t x[24], int gain, lr_i8_exc exc[24], int *nexc)
{
    *nexc = 0;
    int rc = check_pos(L, row, blk), cls;
    if (rc) return rc;
    if (gain < 0 || gain >= 1 << L->gain_bits) return LR_FAIL(LR_EINVAL, "i8: gain %d", gain);
    if ((rc = lr_leech_class_of(x, L->max_shell, &cls))) return rc;
    const lr_leech_class *cl = NULL;
    int nc;
    if (cls >= 0) {
        if ((rc = lr_leech_classes(L->max_shell, &cl, &nc))) return rc;
        cl += cls;
    }
    int e = lr_ctab_entry(cls, gain, L->gain_bits);
    uint8_t *seg = L->data + seg_off(L->sc, row, blk);
    int hoff[12], hbit[12];
    header_bits(row, blk, hoff, hbit);
    for (int i = 0; i < 12; i++) set_bit(seg, hoff[i], hbit[i], e >> i);
    float s = entry_scale(L->tab, e);
    for (int i = 0; i < 24; i++) {
        int a = x[i] < 0 ? -x[i] : x[i], lvl = 0;
        if (cl) {
            while (lvl < cl->nvals && cl->vals[lvl] != a) lvl++;
            if (lvl == cl->nvals) return LR_FAIL(LR_EINVAL, "i8: |x[%d]| = %d not in class %d", i, a, cls);
            if (lvl == 4) {
                /* stored as v3, the difference goes to the row's exceptions */
                lvl = 3;
                int d = (cl->vals[4] - cl->vals[3]) * (x[i] < 0 ? -1 : 1);
                exc[*nexc].col = (uint32_t)(24 * blk + i);
                exc[*nexc].dw = (float)d * s;
                ++*nexc;
            }
        }
        int code = lvl | (x[i] < 0) << 2, off[3], bit[3];
        code_bits(row, blk, i, off, bit);
        for (int j = 0; j < 3; j++) set_bit(seg, off[j], bit[j], code >> j);
    }
    return LR_OK;
}

int lr_i8_set_exceptions(lr_i8 *L, const uint32_t *row, const lr_i8_exc *e, size_t n)
{
    lr_exc_csr c = { L->exc_ptr, &L->exc_col, &L->exc_dw, &L->nexc };
    return lr_exc_install(c, L->rows, row, e, n, "i8");
}

int lr_i8_kernel_header(const uint8_t *W, int rows, int cols, int row, int blk)
{
    (void)rows;
    int sc_n = (cols / 24 + LR_I8_BLKS - 1) / LR_I8_BLKS;
    return read_header(W + seg_off(sc_n, row, blk), row, blk);
}

int lr_i8_kernel_value(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int col, float *scale)
{
    int blk = col / 24, sc_n = (cols / 24 + LR_I8_BLKS - 1) / LR_I8_BLKS;
    const uint8_t *seg = W + seg_off(sc_n, row, blk);
    int e = lr_i8_kernel_header(W, rows, cols, row, blk);
    int code = read_code(seg, row, blk, col % 24);
    *scale = entry_scale(tab, e);
    return (int8_t)tab[(size_t)e * 16 + code]; /* PRMT: byte code of (e.x, e.y) */
}

void lr_i8_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, int8_t v[24],
                        float *scale)
{
    int sc_n = (cols / 24 + LR_I8_BLKS - 1) / LR_I8_BLKS;
    const uint8_t *seg = W + seg_off(sc_n, row, blk);
    int e = lr_i8_kernel_header(W, rows, cols, row, blk);
    *scale = entry_scale(tab, e);
    for (int k = 0; k < 24; k++) v[k] = (int8_t)tab[(size_t)e * 16 + read_code(seg, row, blk, k)];
}

/* The row's exception at column col, or NULL. */
static const float *exc_at(const lr_i8 *L, int row, uint32_t col)
{
    uint32_t a = L->exc_ptr[row], b = L->exc_ptr[row + 1];
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (L->exc_col[m] == col) return &L->exc_dw[m];
        if (L->exc_col[m] < col) a = m + 1;
        else b = m;
    }
    return NULL;
}

int lr_i8_get(const lr_i8 *L, int row, int blk, int8_t x[24], int *gain)
{
    int rc = check_pos(L, row, blk), nc;
    if (rc) return rc;
    const uint8_t *seg = L->data + seg_off(L->sc, row, blk);
    int e = read_header(seg, row, blk);
    if (e >= L->nentries) return LR_FAIL(LR_EFORMAT, "i8: block (%d, %d): header %d past the table", row, blk, e);
    int cls = e ? (e - 1) >> L->gain_bits : -1;
    *gain = e ? (e - 1) & ((1 << L->gain_bits) - 1) : 0;
    const lr_leech_class *cl = NULL;
    if (cls >= 0) {
        if ((rc = lr_leech_classes(L->max_shell, &cl, &nc))) return rc;
        cl += cls;
    }
    float s = entry_scale(L->tab, e);
    for (int i = 0; i < 24; i++) {
        int code = read_code(seg, row, blk, i), lvl = code & 3, neg = code >> 2;
        int nv = cl ? (cl->nvals < 4 ? cl->nvals : 4) : 1;
        if (lvl >= nv) return LR_FAIL(LR_EFORMAT, "i8: block (%d, %d) coordinate %d: level %d >= %d", row, blk, i, lvl, nv);
        int v = cl ? cl->vals[lvl] : 0;
        const float *dw = exc_at(L, row, (uint32_t)(24 * blk + i));
        if (dw) {
            if (!cl || cl->nvals != 5 || lvl != 3)
                return LR_FAIL(LR_EFORMAT, "i8: block (%d, %d) coordinate %d: exception on a level-%d value", row, blk, i, lvl);
            float want = (float)((cl->vals[4] - cl->vals[3]) * (neg ? -1 : 1)) * s;
            if (memcmp(dw, &want, 4)) return LR_FAIL(LR_EFORMAT, "i8: block (%d, %d) coordinate %d: exception %g", row, blk, i, *dw);
            v = cl->vals[4];
        }
        if (neg && v == 0) return LR_FAIL(LR_EFORMAT, "i8: block (%d, %d) coordinate %d: negative zero", row, blk, i);
        x[i] = (int8_t)(neg ? -v : v);
    }
    int got;
    if ((rc = lr_leech_class_of(x, L->max_shell, &got)) || got != cls) {
        lr_clear_error();
        return LR_FAIL(LR_EFORMAT, "i8: block (%d, %d) is not a point of class %d", row, blk, cls);
    }
    return LR_OK;
}

int lr_i8_get_f64(const lr_i8 *L, const float *centroid, int row, int blk, double w[24])
{
    int8_t x[24];
    int g, rc = lr_i8_get(L, row, blk, x, &g);
    if (rc) return rc;
    int n2 = lr_leech_norm(x);
    double s = n2 ? centroid[g] / sqrt((double)n2) * L->row_scale[row] : 0.0;
    for (int i = 0; i < 24; i++) w[i] = x[i] * s;
    return LR_OK;
}

/* ---- unfold ---- */

typedef struct {
    const lr_leech_matrix *m;
    lr_i8 *L;
    const uint64_t *idx;
    const uint8_t *gain;
    lr_exc_list *lists; /* one per row group */
} unfold_ctx;

/* The reference: every block unranked to its point and stored with
 * lr_i8_put. */
static int unfold_groups_ref(void *p, int g0, int g1)
{
    unfold_ctx *c = p;
    for (int g = g0; g < g1; g++) {
        lr_exc_list *xl = &c->lists[g];
        int r1 = (g + 1) * LR_I8_ROWS < c->m->rows ? (g + 1) * LR_I8_ROWS : c->m->rows;
        for (int r = g * LR_I8_ROWS; r < r1; r++)
            for (int b = 0; b < c->m->nblk; b++) {
                size_t k = (size_t)r * c->m->nblk + b;
                int8_t x[24];
                lr_i8_exc ex[24];
                int ne, rc = lr_leech_unrank(c->idx[k], c->m->max_shell, x);
                if (!rc) rc = lr_i8_put(c->L, r, b, x, c->gain[k], ex, &ne);
                if (rc) return lr_wrap(rc, "i8 unfold: row %d block %d", r, b);
                if ((rc = lr_exc_push(xl, (uint32_t)r, ex, (size_t)ne, "i8"))) return rc;
            }
    }
    return LR_OK;
}

/* Four coordinates' codes (lr_leech_unrank_codes: level | sign << 3, level
 * <= 4) as one PRMT selector: nibble n = min(level, 3) | sign << 2. */
static uint32_t selector(const uint8_t *codes)
{
    uint32_t x;
    memcpy(&x, codes, 4);
    uint32_t l = x & 0x07070707u, four = (l >> 2) & 0x01010101u; /* level 4 (a top value) is stored as 3 */
    uint32_t c = (l & 0x03030303u) | four * 3u | ((x >> 1) & 0x04040404u);
    c |= c >> 4; /* bytes 0 and 2 now hold nibble pairs */
    return (c & 0xFFu) | ((c >> 8) & 0xFF00u);
}

/* One segment from its 16 x 8 blocks' codes (row-major [16][192]) and entry
 * indices ([16][8]): headers and code words written once, every byte. */
static void write_segment(uint8_t *seg, const uint8_t *codes, const uint16_t *ent)
{
    for (int g = 0; g < 8; g++) {
        uint32_t H[6] = { 0 };
        for (int j = 0; j < 16; j++) {
            uint32_t e = ent[(g + 8 * (j / 8)) * 8 + j % 8];
            if (j < 6) H[j] |= e << 4;
            else if (j < 12) H[j - 6] |= e << 20;
            else {
                int w0 = j >= 14 ? 3 : 0, sh = ((j - 12) & 1) * 16;
                H[w0] |= (e & 15) << sh, H[w0 + 1] |= ((e >> 4) & 15) << sh, H[w0 + 2] |= ((e >> 8) & 15) << sh;
            }
        }
        memcpy(seg + 24 * g, H, sizeof H);
        for (int q = 0; q < 4; q++) {
            uint32_t w[12] = { 0 };
            for (int G = 0; G < (q < 2 ? 4 : 2); G++) /* columns 24..31 (q >= 2, G >= 2) are not stored */
                for (int bl = 0; bl < 4; bl++)
                    for (int h = 0; h < 2; h++) {
                        int blk = 4 * (G & 1) + bl, col = 24 * blk + 16 * (G >> 1) + 4 * q;
                        uint32_t sel = selector(codes + 192 * (g + 8 * h) + col);
                        if (bl < 3) w[3 * G + bl] |= sel << (16 * h); /* selectors 0-5 */
                        else                                          /* 6, 7: code bit j in word 3G + j, bit 3 */
                            for (int j = 0; j < 3; j++) w[3 * G + j] |= ((sel >> j) & 0x1111u) << (3 + 16 * h);
                    }
            for (int wi = 0; wi < (q < 2 ? 12 : 6); wi++) memcpy(seg + word_off(g, q, wi), &w[wi], 4);
        }
    }
}

/* Per thread: one segment's blocks. */
typedef struct {
    uint64_t idx[LR_I8_ROWS * LR_I8_BLKS];
    int16_t cls[LR_I8_ROWS * LR_I8_BLKS];
    uint16_t ent[LR_I8_ROWS * LR_I8_BLKS];
    uint8_t codes[LR_I8_ROWS * LR_I8_BLKS * 24];
    lr_exc_list row[LR_I8_ROWS]; /* the group's exceptions, per row */
} i8_buf;

/* Row group g: its indices checked in the reference's order (the same first
 * error), then per segment the 16 x 8 blocks decoded straight to codes
 * (lr_leech_unrank_codes) and written once; a five-valued class's top
 * coordinates go to their row's exceptions (column order: segments and
 * blocks ascend), the rows' lists to the group's in row order. */
static int unfold_group(unfold_ctx *c, int g, i8_buf *fb, const lr_leech_class *cls)
{
    const lr_leech_matrix *m = c->m;
    lr_i8 *L = c->L;
    const uint64_t np = lr_leech_ball_points(m->max_shell);
    int r0 = g * LR_I8_ROWS, nr = m->rows - r0 < LR_I8_ROWS ? m->rows - r0 : LR_I8_ROWS, rc;
    for (int r = r0; r < r0 + nr; r++)
        for (int b = 0; b < m->nblk; b++)
            if (c->idx[(size_t)r * m->nblk + b] >= np) {
                int8_t x[24];
                rc = lr_leech_unrank(c->idx[(size_t)r * m->nblk + b], m->max_shell, x); /* the reference's message */
                return lr_wrap(rc ? rc : LR_FAIL(LR_ERANGE, "index out of the ball"), "i8 unfold: row %d block %d", r, b);
            }
    for (int rr = 0; rr < LR_I8_ROWS; rr++) fb->row[rr].n = 0;
    for (int s = 0; s < L->sc; s++) {
        int b0 = s * LR_I8_BLKS, nb = m->nblk - b0 < LR_I8_BLKS ? m->nblk - b0 : LR_I8_BLKS;
        memset(fb->idx, 0, sizeof fb->idx); /* pad rows and blocks: the origin */
        for (int rr = 0; rr < nr; rr++)
            memcpy(fb->idx + rr * LR_I8_BLKS, c->idx + (size_t)(r0 + rr) * m->nblk + b0, (size_t)nb * sizeof *fb->idx);
        if ((rc = lr_leech_unrank_codes(fb->idx, LR_I8_ROWS * LR_I8_BLKS, m->max_shell, fb->cls, fb->codes))) return rc;
        for (int rr = 0; rr < LR_I8_ROWS; rr++)
            for (int b = 0; b < LR_I8_BLKS; b++) {
                int k = rr * LR_I8_BLKS + b, cl = fb->cls[k];
                int e = cl < 0 ? 0 : lr_ctab_entry(cl, c->gain[(size_t)(r0 + rr) * m->nblk + b0 + b], L->gain_bits);
                fb->ent[k] = (uint16_t)e;
                if (cl < 0 || cls[cl].nvals != 5) continue;
                lr_i8_exc ex[24];
                int ne = 0;
                float sc = entry_scale(L->tab, e);
                for (int i = 0; i < 24; i++) {
                    uint8_t code = fb->codes[24 * k + i];
                    if ((code & 7) != 4) continue;
                    int d = (cls[cl].vals[4] - cls[cl].vals[3]) * (code & 8 ? -1 : 1);
                    ex[ne].col = (uint32_t)(24 * (b0 + b) + i), ex[ne++].dw = (float)d * sc;
                }
                if ((rc = lr_exc_push(&fb->row[rr], (uint32_t)(r0 + rr), ex, (size_t)ne, "i8"))) return rc;
            }
        write_segment(L->data + ((size_t)g * L->sc + s) * LR_I8_SEG, fb->codes, fb->ent);
    }
    for (int rr = 0; rr < nr; rr++)
        if ((rc = lr_exc_push(&c->lists[g], (uint32_t)(r0 + rr), fb->row[rr].e, fb->row[rr].n, "i8"))) return rc;
    return LR_OK;
}

static int unfold_groups(void *p, int g0, int g1)
{
    unfold_ctx *c = p;
    const lr_leech_class *cls;
    int nc, rc = lr_leech_classes(c->m->max_shell, &cls, &nc);
    i8_buf *fb = rc ? NULL : calloc(1, sizeof *fb);
    if (!rc && !fb) rc = LR_FAIL(LR_ENOMEM, "i8 unfold: out of memory");
    for (int g = g0; g < g1 && !rc; g++) rc = unfold_group(c, g, fb, cls);
    for (int rr = 0; fb && rr < LR_I8_ROWS; rr++) lr_exc_list_free(&fb->row[rr]);
    free(fb);
    return rc;
}

static int unfold(const lr_leech_matrix *m, int nthreads, lr_i8 *L, int (*groups)(void *, int, int))
{
    memset(L, 0, sizeof *L); /* every failure leaves L freeable, as Planes14S's unfold does */
    if (m->nblk != m->cols / 24 || m->tail != m->cols % 24)
        return LR_FAIL(LR_EINVAL, "i8 unfold: cols %d, nblk %d, tail %d disagree", m->cols, m->nblk, m->tail);
    int rc = lr_i8_alloc(L, m->rows, m->cols, m->max_shell, m->gain_bits);
    if (rc) return rc;
    size_t n = (size_t)m->rows * m->nblk;
    uint64_t *idx = malloc((n ? n : 1) * sizeof *idx);
    uint8_t *gain = malloc(n ? n : 1);
    lr_exc_list *lists = calloc((size_t)L->rg, sizeof *lists);
    if (!idx || !gain || !lists) rc = LR_FAIL(LR_ENOMEM, "i8 unfold: out of memory");
    if (!rc) rc = lr_leech_archive_unpack(m->archive, m->archive_bytes, n, m->gain_bits, idx, gain);
    if (!rc) rc = lr_i8_tab_build(m->max_shell, m->gain_bits, m->centroid, L->tab, (size_t)L->nentries * 16);
    if (!rc) {
        /* row groups: rows g and g + 8 share words */
        unfold_ctx c = { m, L, idx, gain, lists };
        rc = lr_vram_parallel(L->rg, nthreads, groups, &c);
    }
    if (!rc) {
        lr_exc_csr csr = { L->exc_ptr, &L->exc_col, &L->exc_dw, &L->nexc };
        rc = lr_exc_install_lists(csr, L->rows, lists, L->rg, "i8");
    }
    for (int g = 0; lists && g < L->rg; g++) lr_exc_list_free(&lists[g]);
    free(lists), free(idx), free(gain);
    for (int r = 0; !rc && r < m->rows; r++) {
        if (!isfinite(m->row_scale[r])) rc = LR_FAIL(LR_EINVAL, "i8 unfold: row %d scale not finite", r);
        L->row_scale[r] = m->row_scale[r];
    }
    if (!rc && L->tail) memcpy(L->tail_f16, m->tail_f16, (size_t)m->rows * m->tail * 2);
    if (rc) lr_i8_free(L);
    return rc;
}

int lr_i8_unfold(const lr_leech_matrix *m, int nthreads, lr_i8 *L) { return unfold(m, nthreads, L, unfold_groups); }
int lr_i8_unfold_ref(const lr_leech_matrix *m, int nthreads, lr_i8 *L) { return unfold(m, nthreads, L, unfold_groups_ref); }

typedef struct { const lr_i8 *L; } val_ctx;

static int validate_rows(void *p, int r0, int r1)
{
    const lr_i8 *L = ((val_ctx *)p)->L;
    for (int r = r0; r < r1; r++) {
        for (int b = 0; b < L->nblk; b++) {
            int8_t x[24];
            int g, rc = lr_i8_get(L, r, b, x, &g);
            if (rc) return rc;
        }
        /* every exception was consumed by a five-valued block: columns in range and on a v4 */
        for (uint32_t i = L->exc_ptr[r]; i < L->exc_ptr[r + 1]; i++) {
            uint32_t col = L->exc_col[i];
            if (col >= (uint32_t)(24 * L->nblk) || (i > L->exc_ptr[r] && col <= L->exc_col[i - 1]))
                return LR_FAIL(LR_EFORMAT, "i8: row %d exception %u: column %u", r, i, col);
        }
    }
    return LR_OK;
}

int lr_i8_validate(const lr_i8 *L)
{
    int rc = lr_exc_check_ptr(L->exc_ptr, L->rows, L->nexc, "i8");
    if (rc) return rc;
    val_ctx c = { L };
    return lr_vram_parallel(L->rows, 0, validate_rows, &c);
}

double lr_i8_bits_per_weight(const lr_i8 *L)
{
    double w = (double)L->rows * 24 * L->nblk;
    double bits = 8.0 * ((double)L->bytes + 8.0 * L->nexc + 4.0 * (L->rows + 1));
    return w > 0 ? bits / w : 0;
}
