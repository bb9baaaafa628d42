/* Planes14S host side (layouts/leech_vram/p14s.h has the bit layout): class
 * table, put / get of one block, the exception lists, unfold from an
 * archive, validation. The kernel's view of the raw bytes is in
 * p14s_view.c; this file keeps its own bit positions so the tests
 * cross-check the two. */
#include "layouts/leech_vram/p14s.h"

#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/par.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a class's pool: stored magnitudes and which values need exceptions ---- */

typedef struct {
    int nnz;          /* distinct nonzero magnitudes (<= 5) */
    uint8_t nz[5];    /* them, ascending */
    uint8_t mult[5];  /* coordinates per point taking each */
    int nu;           /* used pool slots: min(nnz, 4) */
    uint8_t u[4];     /* stored magnitudes (the pool), strictly ascending */
    int nexc;         /* exceptions per point of the class */
} pool_info;

/* The stored magnitude of v: 9, 11 and 13 need 4 significant bits, one more
 * than the f16 high byte holds. */
static int st(int v) { return v == 9 || v == 11 || v == 13 ? v - 1 : v; }

/* Slot of the j-th nonzero magnitude: the fifth shares slot 3. */
static int slot_of(int j) { return j < 4 ? j : 3; }

/* The f16 high byte of a (small, integer) value; *exact = the low byte is
 * zero and the byte alone gives v back. */
static uint8_t high_byte(int v, int *exact)
{
    uint16_t h = lr_float_to_half((float)v);
    if (exact) *exact = (h & 0xff) == 0 && lr_half_to_float((uint16_t)(h & 0xff00)) == (float)v;
    return (uint8_t)(h >> 8);
}

/* Every assumption the layout makes about a class, checked: a class that
 * breaks one fails here (and so in tab_build) instead of giving a wrong
 * layout. */
static int pool_of(const lr_leech_class *c, int ci, pool_info *p)
{
    memset(p, 0, sizeof *p);
    for (int j = 0; j < c->nvals && j < LR_LEECH_MAX_VALS; j++) {
        if (!c->vals[j]) continue;
        if (p->nnz == 5)
            return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d has more than 5 distinct nonzero magnitudes (a pool of 4 "
                                            "plus one exception value)", ci);
        if (p->nnz && c->vals[j] <= p->nz[p->nnz - 1])
            return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d: magnitudes not ascending", ci);
        p->nz[p->nnz] = c->vals[j], p->mult[p->nnz++] = c->mult[j];
    }
    if (!p->nnz) return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d has no nonzero magnitude", ci);
    if (p->nnz == 5 && p->mult[4] != 1)
        return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d: its fifth magnitude %d appears %d times in a point, not once",
                       ci, p->nz[4], p->mult[4]);
    p->nu = p->nnz < 4 ? p->nnz : 4;
    for (int k = 0; k < p->nu; k++) {
        int exact;
        p->u[k] = (uint8_t)st(p->nz[k]);
        high_byte(p->u[k], &exact);
        if (!exact)
            return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d: stored magnitude %d is not exact in an f16 high byte", ci,
                           p->u[k]);
        if (k && p->u[k] <= p->u[k - 1])
            return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d: stored magnitudes %d and %d collide", ci, p->u[k - 1],
                           p->u[k]);
    }
    /* one slot may carry at most one value that needs an exception, or the
     * exception's value alone would have to tell them apart */
    if (p->nnz == 5 && p->u[3] != p->nz[3])
        return LR_FAIL(LR_EUNSUPPORTED, "p14s: class %d: magnitudes %d and %d both need exceptions in slot 3", ci,
                       p->nz[3], p->nz[4]);
    for (int j = 0; j < p->nnz; j++)
        if (p->nz[j] != p->u[slot_of(j)]) p->nexc += p->mult[j];
    return LR_OK;
}

/* Pool of class ci of a ball (ci >= 0). */
static int class_pool(int max_shell, int ci, pool_info *p)
{
    const lr_leech_class *cls;
    int nc, rc = lr_leech_classes(max_shell, &cls, &nc);
    if (rc) return rc;
    if (ci < 0 || ci >= nc) return LR_FAIL(LR_ERANGE, "p14s: class %d of %d", ci, nc);
    return pool_of(&cls[ci], ci, p);
}

/* Index j of nonzero magnitude v in the pool's class, or -1. */
static int nz_index(const pool_info *p, int v)
{
    for (int j = 0; j < p->nnz; j++)
        if (p->nz[j] == v) return j;
    return -1;
}

int lr_p14s_stored(int max_shell, int cls, int v)
{
    /* errors (v not a value of the class, no such class) give -1 with the
     * message set: the API returns the magnitude itself */
    if (cls < 0) {
        if (v == 0) return 0; /* the origin */
        LR_FAIL(LR_EINVAL, "p14s: value %d in the origin", v);
        return -1;
    }
    pool_info p;
    if (class_pool(max_shell, cls, &p)) return -1;
    if (v == 0) {
        const lr_leech_class *c;
        int nc;
        if (lr_leech_classes(max_shell, &c, &nc)) return -1;
        if (c[cls].vals[0] == 0) return 0;
        LR_FAIL(LR_EINVAL, "p14s: class %d has no zero coordinate", cls);
        return -1;
    }
    int j = nz_index(&p, v);
    if (j < 0) {
        LR_FAIL(LR_EINVAL, "p14s: value %d not in class %d", v, cls);
        return -1;
    }
    return p.u[slot_of(j)];
}

/* ---- bit positions ---- */

static size_t seg_off(int sc_n, int row, int blk)
{
    return ((size_t)(row / LR_P14S_ROWS) * sc_n + blk / LR_P14S_BLKS) * LR_P14S_SEG;
}

/* Header of (row, blk) inside its segment: lane L = 4 g + q at 8 L + 2 (2 h + j). */
static int header_off(int row, int blk)
{
    int g = row % 8, h = (row % 16) / 8, b = blk % 8;
    return 8 * (4 * g + b / 2) + 2 * (2 * h + b % 2);
}

/* Byte and bit shift of coordinate k's code nibble in its segment: word t
 * = 6 (b & 1) + k / 4 of lane (g, q), nibble 2 c + 1 (row g) or 2 c (row g + 8). */
static void code_pos(int row, int blk, int k, int *off, int *shift)
{
    int g = row % 8, h = (row % 16) / 8, b = blk % 8, t = 6 * (b % 2) + k / 4, c = k % 4;
    int nib = 2 * c + (h == 0);
    *off = LR_P14S_HDR + 512 * (t >> 2) + 16 * (4 * g + b / 2) + 4 * (t & 3) + nib / 2;
    *shift = 4 * (nib % 2);
}

static int read_header(const uint8_t *seg, int row, int blk)
{
    int o = header_off(row, blk);
    return seg[o] | seg[o + 1] << 8;
}

static void write_header(uint8_t *seg, int row, int blk, int h)
{
    int o = header_off(row, blk);
    seg[o] = (uint8_t)h, seg[o + 1] = (uint8_t)(h >> 8);
}

static int read_code(const uint8_t *seg, int row, int blk, int k)
{
    int off, sh;
    code_pos(row, blk, k, &off, &sh);
    return seg[off] >> sh & 15;
}

static void write_code(uint8_t *seg, int row, int blk, int k, int code)
{
    int off, sh;
    code_pos(row, blk, k, &off, &sh);
    seg[off] = (uint8_t)((seg[off] & ~(15u << sh)) | (unsigned)code << sh);
}

/* ---- table ---- */

static float entry_scale(const uint8_t *tab, int e)
{
    uint16_t s;
    memcpy(&s, tab + (size_t)e * 16 + 8, 2);
    return lr_half_to_float(s);
}

int lr_p14s_tab_build(int max_shell, int gain_bits, const float *centroid, uint8_t *tab, size_t tab_bytes)
{
    const lr_leech_class *cls;
    int nc, n;
    int rc = lr_ctab_entries(max_shell, gain_bits, &n);
    if (rc) return rc;
    if ((rc = lr_leech_classes(max_shell, &cls, &nc))) return rc;
    if (tab_bytes < (size_t)n * 16) return LR_FAIL(LR_EINVAL, "p14s table: %zu bytes < %d entries", tab_bytes, n);
    for (int g = 0; g < 1 << gain_bits; g++)
        if (!isfinite(centroid[g])) return LR_FAIL(LR_EINVAL, "p14s table: centroid %d not finite", g);
    memset(tab, 0, (size_t)n * 16); /* the origin's entry stays all zero */
    for (int c = 0; c < nc; c++) {
        pool_info p;
        if ((rc = pool_of(&cls[c], c, &p))) return lr_wrap(rc, "p14s table");
        for (int g = 0; g < 1 << gain_bits; g++) {
            uint8_t *e = tab + (size_t)lr_ctab_entry(c, g, gain_bits) * 16;
            uint16_t s = lr_float_to_half((float)(centroid[g] / sqrt(16.0 * cls[c].shell)));
            float sf = lr_half_to_float(s), top = (float)p.u[p.nu - 1] * sf;
            /* the kernel's f16(u s) must stay finite (and so must the exceptions) */
            if (!isfinite(sf) || (lr_float_to_half(top) & 0x7fff) >= 0x7c00)
                return LR_FAIL(LR_ERANGE, "p14s table: centroid %d (%g) out of f16 range for class %d", g,
                               centroid[g], c);
            for (int k = 0; k < p.nu; k++) {
                e[k] = high_byte(p.u[k], NULL);
                e[4 + k] = high_byte(-(int)p.u[k], NULL);
            }
            memcpy(e + 8, &s, 2), memcpy(e + 10, &s, 2), memcpy(e + 12, &sf, 4);
        }
    }
    return LR_OK;
}

/* ---- alloc ---- */

void lr_p14s_free(lr_p14s *L)
{
    if (!L) return;
    free(L->data), free(L->tab), free(L->row_scale), free(L->tail_f16);
    free(L->exc_ptr), free(L->exc_col), free(L->exc_dw);
    memset(L, 0, sizeof *L);
}

int lr_p14s_alloc(lr_p14s *L, int rows, int cols, int max_shell, int gain_bits)
{
    memset(L, 0, sizeof *L);
    if (rows <= 0 || cols <= 0 || rows > (1 << 24) || cols > (1 << 24))
        return LR_FAIL(LR_EINVAL, "p14s: shape %dx%d", rows, cols);
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "p14s: max_shell %d", max_shell);
    int rc = lr_ctab_entries(max_shell, gain_bits, &L->nentries);
    if (rc) return rc;
    if (L->nentries > 65536 / 16)
        return LR_FAIL(LR_ERANGE, "p14s: %d class-table entries do not fit 16-bit byte-offset headers", L->nentries);
    L->rows = rows, L->cols = cols, L->nblk = cols / 24, L->tail = cols % 24;
    L->max_shell = max_shell, L->gain_bits = gain_bits;
    L->rg = (rows + LR_P14S_ROWS - 1) / LR_P14S_ROWS;
    L->sc = (L->nblk + LR_P14S_BLKS - 1) / LR_P14S_BLKS;
    L->bytes = (size_t)L->rg * L->sc * LR_P14S_SEG;
    L->data = malloc(L->bytes ? L->bytes : 1);
    L->tab = calloc((size_t)L->nentries, 16);
    L->row_scale = calloc((size_t)L->rg * LR_P14S_ROWS, sizeof(float));
    L->tail_f16 = L->tail ? calloc((size_t)rows * L->tail, 2) : NULL;
    L->exc_ptr = calloc((size_t)rows + 1, sizeof(uint32_t));
    L->exc_col = calloc(1, sizeof(uint32_t));
    L->exc_dw = calloc(1, sizeof(float));
    L->nparts = L->ntabs = 1, L->nent1 = L->nentries;
    L->part_row0[1] = rows;
    if (!L->data || !L->tab || !L->row_scale || (L->tail && !L->tail_f16) || !L->exc_ptr || !L->exc_col || !L->exc_dw) {
        lr_p14s_free(L);
        return LR_FAIL(LR_ENOMEM, "p14s: out of memory for %dx%d", rows, cols);
    }
    /* every block the origin: header 0, codes 8 (0x88 per byte) */
    for (size_t s = 0; s < L->bytes; s += LR_P14S_SEG) {
        memset(L->data + s, 0, LR_P14S_HDR);
        memset(L->data + s + LR_P14S_HDR, 0x88, LR_P14S_SEG - LR_P14S_HDR);
    }
    return LR_OK;
}

int lr_p14s_part_of(const lr_p14s *L, int row)
{
    if (L->pair) return row & 1;
    int p = 0;
    while (p + 1 < L->nparts && row >= L->part_row0[p + 1]) p++;
    return p;
}

/* First entry of the table of row's part. */
static int tab_base(const lr_p14s *L, int row) { return L->part_tab[lr_p14s_part_of(L, row)] * L->nent1; }

static int check_pos(const lr_p14s *L, int row, int blk)
{
    if (row < 0 || row >= L->rows || blk < 0 || blk >= L->nblk)
        return LR_FAIL(LR_ERANGE, "p14s: block (%d, %d) outside %dx%d blocks", row, blk, L->rows, L->nblk);
    return LR_OK;
}

/* ---- put / get ---- */

int lr_p14s_put(lr_p14s *L, int row, int blk, const int8_t x[24], int gain, lr_p14s_exc exc[24], int *nexc)
{
    *nexc = 0;
    int rc = check_pos(L, row, blk), cls;
    if (rc) return rc;
    if (gain < 0 || gain >= 1 << L->gain_bits) return LR_FAIL(LR_EINVAL, "p14s: gain %d", gain);
    if ((rc = lr_leech_class_of(x, L->max_shell, &cls))) return rc;
    pool_info p = { 0 };
    if (cls >= 0 && (rc = class_pool(L->max_shell, cls, &p))) return rc;
    int e = cls < 0 ? 0 : tab_base(L, row) + lr_ctab_entry(cls, gain, L->gain_bits);
    uint8_t *seg = L->data + seg_off(L->sc, row, blk);
    float s = entry_scale(L->tab, e);
    int code[24];
    for (int i = 0; i < 24; i++) {
        int a = x[i] < 0 ? -x[i] : x[i];
        code[i] = LR_P14S_ZERO;
        if (!a) continue;
        int j = nz_index(&p, a);
        if (j < 0) {
            *nexc = 0;
            return LR_FAIL(LR_EINVAL, "p14s: |x[%d]| = %d not in class %d", i, a, cls);
        }
        int sl = slot_of(j), u = p.u[sl];
        code[i] = sl + 4 * (x[i] < 0);
        if (u != a) {
            exc[*nexc].col = (uint32_t)(24 * blk + i);
            exc[*nexc].dw = (float)((x[i] < 0 ? -1 : 1) * (a - u)) * s;
            ++*nexc;
        }
    }
    write_header(seg, row, blk, 16 * e);
    for (int i = 0; i < 24; i++) write_code(seg, row, blk, i, code[i]);
    return LR_OK;
}

int lr_p14s_set_exceptions(lr_p14s *L, const uint32_t *row, const lr_p14s_exc *e, size_t n)
{
    lr_exc_csr c = { L->exc_ptr, &L->exc_col, &L->exc_dw, &L->nexc };
    return lr_exc_install(c, L->rows, row, e, n, "p14s");
}

int lr_p14s_get(const lr_p14s *L, int row, int blk, int8_t x[24], int *gain)
{
    int rc = check_pos(L, row, blk);
    if (rc) return rc;
    const uint8_t *seg = L->data + seg_off(L->sc, row, blk);
    int h = read_header(seg, row, blk), e = h / 16;
    if (h % 16) return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d): header %d not a multiple of 16", row, blk, h);
    if (e >= L->nentries)
        return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d): header %d past the table (%d entries)", row, blk, h,
                       L->nentries);
    int base = tab_base(L, row), le = e ? e - base : 0; /* the entry in the part's own table */
    if (e && (le < 1 || le >= L->nent1))
        return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d): header %d points into another part's table", row, blk, h);
    int cls = le ? (le - 1) >> L->gain_bits : -1;
    *gain = le ? (le - 1) & ((1 << L->gain_bits) - 1) : 0;
    pool_info p = { 0 };
    if (cls >= 0 && (rc = class_pool(L->max_shell, cls, &p))) return rc;
    const uint8_t *ent = L->tab + (size_t)e * 16;
    float s = entry_scale(L->tab, e);
    /* bytes 8..11 the f16 scale twice, 12..15 the same scale as f32 */
    if (memcmp(ent + 8, ent + 10, 2) || memcmp(ent + 12, &s, 4))
        return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d): class-table entry %d malformed", row, blk, e);
    const float *dw[24];
    if ((rc = lr_exc_block(L->exc_ptr, L->exc_col, L->exc_dw, L->nexc, row, blk, 0, dw, "p14s"))) return rc;
    for (int i = 0; i < 24; i++) {
        int code = read_code(seg, row, blk, i), col = 24 * blk + i;
        if (code == LR_P14S_ZERO) {
            if (dw[i]) return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d): exception at zero coordinate %d", row, blk, i);
            x[i] = 0;
            continue;
        }
        if (code > LR_P14S_ZERO)
            return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d) coordinate %d: invalid code %d", row, blk, i, code);
        int sl = code & 3, neg = code >> 2, sign = neg ? -1 : 1;
        if (sl >= p.nu)
            return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d) coordinate %d: code %d selects unused pool slot %d (of %d)",
                           row, blk, i, code, sl, p.nu);
        int u = p.u[sl], v = -1;
        if (ent[code] != high_byte(sign * u, NULL))
            return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d): class-table entry %d byte %d is %#x", row, blk, e, code,
                           ent[code]);
        /* the magnitude: the slot's value equal to u (no exception) or the
         * one whose correction the exception holds, bit for bit */
        for (int j = 0; j < p.nnz && v < 0; j++) {
            if (slot_of(j) != sl) continue;
            if (!dw[i] && p.nz[j] == u) v = u;
            if (dw[i] && p.nz[j] != u) {
                float want = (float)(sign * (p.nz[j] - u)) * s;
                if (!memcmp(&want, dw[i], sizeof want)) v = p.nz[j];
            }
        }
        if (v < 0) {
            if (dw[i])
                return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d) coordinate %d (column %d): exception %g fits no value "
                                           "of class %d slot %d", row, blk, i, col, (double)*dw[i], cls, sl);
            return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d) coordinate %d (column %d): stored %d needs an exception, "
                                       "none listed", row, blk, i, col, u);
        }
        x[i] = (int8_t)(sign * v);
    }
    int got;
    if ((rc = lr_leech_class_of(x, L->max_shell, &got)) || got != cls) {
        lr_clear_error();
        return LR_FAIL(LR_EFORMAT, "p14s: block (%d, %d) is not a point of class %d (entry %d)", row, blk, cls, e);
    }
    return LR_OK;
}

int lr_p14s_get_f64(const lr_p14s *L, int row, int blk, double w[24])
{
    int8_t x[24];
    int g, rc = lr_p14s_get(L, row, blk, x, &g);
    if (rc) return rc;
    const uint8_t *seg = L->data + seg_off(L->sc, row, blk);
    double s = (double)entry_scale(L->tab, read_header(seg, row, blk) / 16) * L->row_scale[row];
    for (int i = 0; i < 24; i++) w[i] = x[i] * s;
    return LR_OK;
}

/* ---- unfold ---- */

/* Per class, per level (index into the class's ascending vals): the code
 * of a positive coordinate (8 for a zero) and |v| - u, the exception's size;
 * nib[] maps a whole code byte of lr_leech_unrank_codes (level | sign << 3)
 * to the stored nibble, and exc says whether any level needs an exception
 * (31 of 301 classes at shell 12: the others skip the per-coordinate test). */
typedef struct { uint8_t code[LR_LEECH_MAX_VALS], delta[LR_LEECH_MAX_VALS], nib[16], exc; } level_map;

typedef struct {
    const lr_leech_matrix *m;
    lr_p14s *L;
    const uint64_t *idx;
    const uint8_t *gain;
    lr_exc_list *lists;    /* one per row group */
    const level_map *maps; /* the fast path's, per class */
    size_t half;           /* a pair's rows per part (L->pair), else 0 */
} unfold_ctx;

/* Where layout row r's blocks start in idx/gain (the parts' rows
 * concatenated): row r itself, or for a pair (rows 2i + p) part p's row i. */
static size_t src_blk(const unfold_ctx *c, int r)
{
    const size_t s = c->half ? (size_t)(r % 2) * c->half + (size_t)r / 2 : (size_t)r;
    return s * (size_t)c->m->nblk;
}

/* Row groups [g0, g1): every block unranked and stored with lr_p14s_put
 * (rows g and g + 8 share code words, so a group is one thread's); each
 * row's exceptions sorted by column onto the group's list in row order. */
static int unfold_groups(void *p, int g0, int g1)
{
    unfold_ctx *c = p;
    lr_exc_list row = { 0 };
    int rc = LR_OK;
    for (int g = g0; g < g1 && !rc; g++) {
        int r1 = (g + 1) * LR_P14S_ROWS < c->m->rows ? (g + 1) * LR_P14S_ROWS : c->m->rows;
        for (int r = g * LR_P14S_ROWS; r < r1 && !rc; r++) {
            row.n = 0;
            for (int b = 0; b < c->m->nblk && !rc; b++) {
                size_t k = src_blk(c, r) + b;
                int8_t x[24];
                lr_p14s_exc ex[24];
                int ne = 0;
                rc = lr_leech_unrank(c->idx[k], c->m->max_shell, x);
                if (!rc) rc = lr_p14s_put(c->L, r, b, x, c->gain[k], ex, &ne);
                if (rc) rc = lr_wrap(rc, "p14s unfold: row %d block %d", r, b);
                else rc = lr_exc_push(&row, (uint32_t)r, ex, (size_t)ne, "p14s");
            }
            if (!rc) {
                lr_exc_sort_tail(&row, row.n);
                rc = lr_exc_push(&c->lists[g], (uint32_t)r, row.e, row.n, "p14s");
            }
        }
    }
    lr_exc_list_free(&row);
    return rc;
}

/* One segment written whole from its 16 rows x 8 blocks of nibble codes
 * and entries: row rr's block j at nib[rr * stride + j] / ent[rr * stride
 * + j] (8 = zero); headers and the 12 code words of every lane, every byte
 * (the layout of p14s.h). */
static void write_segment(uint8_t *seg, const uint8_t (*nib)[24], const uint16_t *ent, size_t stride)
{
    for (int g = 0; g < 8; g++)
        for (int q = 0; q < 4; q++) {
            int lane = 4 * g + q;
            for (int h = 0; h < 2; h++)
                for (int j = 0; j < 2; j++) {
                    uint16_t v = (uint16_t)(16 * ent[(size_t)(g + 8 * h) * stride + (size_t)(2 * q + j)]);
                    seg[8 * lane + 2 * (2 * h + j)] = (uint8_t)v, seg[8 * lane + 2 * (2 * h + j) + 1] = (uint8_t)(v >> 8);
                }
            for (int t = 0; t < 12; t++) {
                int j = 2 * q + (t >= 6), c0 = 4 * (t % 6);
                /* nibbles 2cc + 1 from row g, 2cc from row g + 8: the four
                 * bytes (each < 16) of each row as one word, g's shifted by 4 */
                const uint8_t *a = nib[(size_t)g * stride + (size_t)j] + c0,
                              *b = nib[(size_t)(g + 8) * stride + (size_t)j] + c0;
                uint32_t wa = (uint32_t)a[0] | (uint32_t)a[1] << 8 | (uint32_t)a[2] << 16 | (uint32_t)a[3] << 24,
                         wb = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                uint32_t w = wa << 4 | wb;
                uint8_t *o = seg + LR_P14S_HDR + 512 * (t >> 2) + 16 * lane + 4 * (t & 3);
                o[0] = (uint8_t)w, o[1] = (uint8_t)(w >> 8), o[2] = (uint8_t)(w >> 16), o[3] = (uint8_t)(w >> 24);
            }
        }
}

/* Row groups [g0, g1), fast: per row the blocks' codes in one
 * lr_leech_unrank_codes call, mapped to nibbles by the level tables into a
 * per-group buffer, then each segment written once; the exceptions of a
 * row come out in column order. */
static int unfold_groups_fast(void *p, int g0, int g1)
{
    unfold_ctx *c = p;
    const lr_leech_matrix *m = c->m;
    lr_p14s *L = c->L;
    const uint64_t np = lr_leech_ball_points(m->max_shell);
    int nbp = L->sc * LR_P14S_BLKS; /* blocks with the pad */
    int16_t *cls = malloc((size_t)nbp * sizeof *cls);
    uint8_t *codes = malloc((size_t)nbp * 24);
    uint8_t (*nib)[24] = malloc((size_t)LR_P14S_ROWS * nbp * 24);      /* [row][block][coordinate] */
    uint16_t *ent = malloc((size_t)LR_P14S_ROWS * nbp * sizeof *ent); /* [row][block] */
    int rc = !cls || !codes || !nib || !ent ? LR_FAIL(LR_ENOMEM, "p14s unfold: out of memory") : LR_OK;
    for (int g = g0; g < g1 && !rc; g++) {
        int r0 = g * LR_P14S_ROWS, r1 = r0 + LR_P14S_ROWS < m->rows ? r0 + LR_P14S_ROWS : m->rows;
        /* an index outside the ball fails as the reference does (its message, its block) */
        for (int r = r0; r < r1 && !rc; r++)
            for (int b = 0; b < m->nblk && !rc; b++)
                if (c->idx[src_blk(c, r) + b] >= np) {
                    int8_t x[24];
                    rc = lr_leech_unrank(c->idx[src_blk(c, r) + b], m->max_shell, x);
                    rc = lr_wrap(rc ? rc : LR_FAIL(LR_ERANGE, "index out of the ball"), "p14s unfold: row %d block %d", r, b);
                }
        /* pad rows and blocks: the origin */
        memset(nib, LR_P14S_ZERO, (size_t)LR_P14S_ROWS * nbp * 24);
        memset(ent, 0, (size_t)LR_P14S_ROWS * nbp * sizeof *ent);
        for (int r = r0; r < r1 && !rc; r++) {
            const uint64_t *ix = c->idx + src_blk(c, r);
            const uint8_t *gn = c->gain + src_blk(c, r);
            const int base = tab_base(L, r);
            uint8_t (*rn)[24] = nib + (size_t)(r - r0) * nbp;
            uint16_t *re = ent + (size_t)(r - r0) * nbp;
            if (m->nblk && (rc = lr_leech_unrank_codes(ix, (size_t)m->nblk, m->max_shell, cls, codes))) break;
            for (int b = 0; b < m->nblk && !rc; b++) {
                if (cls[b] < 0) continue; /* the origin: entry 0, codes 8 */
                int e = base + lr_ctab_entry(cls[b], gn[b], L->gain_bits);
                re[b] = (uint16_t)e;
                const level_map *lm = &c->maps[cls[b]];
                const uint8_t *cb = codes + 24 * b;
                for (int i = 0; i < 24; i++) rn[b][i] = lm->nib[cb[i] & 15];
                if (!lm->exc) continue;
                float s = entry_scale(L->tab, e);
                for (int i = 0; i < 24; i++) {
                    int lv = cb[i] & 7, neg = cb[i] >> 3 & 1;
                    if (lm->delta[lv]) {
                        lr_p14s_exc ex = { (uint32_t)(24 * b + i), (float)((neg ? -1 : 1) * lm->delta[lv]) * s };
                        if ((rc = lr_exc_push(&c->lists[g], (uint32_t)r, &ex, 1, "p14s"))) break;
                    }
                }
            }
            if (rc) rc = lr_wrap(rc, "p14s unfold: row %d", r);
        }
        for (int sc = 0; sc < L->sc && !rc; sc++)
            write_segment(L->data + ((size_t)g * L->sc + sc) * LR_P14S_SEG, nib + (size_t)sc * LR_P14S_BLKS,
                          ent + (size_t)sc * LR_P14S_BLKS, (size_t)nbp);
    }
    free(cls), free(codes), free(nib), free(ent);
    return rc;
}

static int level_maps(int max_shell, level_map **out)
{
    const lr_leech_class *cls;
    int nc, rc = lr_leech_classes(max_shell, &cls, &nc);
    if (rc) return rc;
    level_map *maps = calloc((size_t)nc, sizeof *maps);
    if (!maps) return LR_FAIL(LR_ENOMEM, "p14s unfold: out of memory");
    for (int ci = 0; ci < nc && !rc; ci++) {
        pool_info p;
        if ((rc = pool_of(&cls[ci], ci, &p))) break;
        for (int l = 0; l < cls[ci].nvals && l < LR_LEECH_MAX_VALS; l++) {
            int v = cls[ci].vals[l], j = v ? nz_index(&p, v) : -1;
            maps[ci].code[l] = v ? (uint8_t)slot_of(j) : LR_P14S_ZERO;
            maps[ci].delta[l] = v ? (uint8_t)(v - p.u[slot_of(j)]) : 0;
            maps[ci].exc |= maps[ci].delta[l] != 0;
        }
        for (int cb = 0; cb < 16; cb++) {
            int lv = cb & 7, pc = lv < LR_LEECH_MAX_VALS ? maps[ci].code[lv] : LR_P14S_ZERO;
            maps[ci].nib[cb] = (uint8_t)(pc == LR_P14S_ZERO ? pc : pc + 4 * (cb >> 3));
        }
    }
    if (rc) free(maps);
    else *out = maps;
    return rc;
}

/* Checks parts and plans their tables (one per distinct centroid vector). */
static int plan_parts(const lr_leech_matrix *const *parts, int nparts, lr_p14s *L, float (*cent)[4], int *rows)
{
    if (nparts < 1 || nparts > LR_P14S_MAX_PARTS)
        return LR_FAIL(LR_EINVAL, "p14s unfold: %d parts (1..%d)", nparts, LR_P14S_MAX_PARTS);
    const lr_leech_matrix *m0 = parts[0];
    long long total = 0;
    for (int p = 0; p < nparts; p++) {
        const lr_leech_matrix *m = parts[p];
        if (m->nblk != m->cols / 24 || m->tail != m->cols % 24)
            return LR_FAIL(LR_EINVAL, "p14s unfold: part %d: cols %d, nblk %d, tail %d disagree", p, m->cols, m->nblk,
                           m->tail);
        if (m->cols != m0->cols || m->gain_bits != m0->gain_bits || m->max_shell != m0->max_shell)
            return LR_FAIL(LR_EINVAL,
                           "p14s unfold: part %d (%d columns, %d gain bits, L24(%d)) does not match part 0 (%d, %d, "
                           "L24(%d)): only rows concatenate",
                           p, m->cols, m->gain_bits, m->max_shell, m0->cols, m0->gain_bits, m0->max_shell);
        if (m->rows <= 0) return LR_FAIL(LR_EINVAL, "p14s unfold: part %d has %d rows", p, m->rows);
        for (int r = 0; r < m->rows; r++)
            if (!isfinite(m->row_scale[r]))
                return LR_FAIL(LR_EINVAL, "p14s unfold: row %lld scale not finite", total + r);
        L->part_row0[p] = (int)total;
        total += m->rows;
        if (total > (1 << 24)) return LR_FAIL(LR_EINVAL, "p14s unfold: %lld rows", total);
        int k = 1 << (m->gain_bits < 0 ? 0 : m->gain_bits > 2 ? 2 : m->gain_bits), t = 0;
        while (t < L->ntabs && memcmp(cent[t], m->centroid, (size_t)k * sizeof(float))) t++;
        if (t == L->ntabs) {
            memset(cent[t], 0, sizeof cent[t]);
            memcpy(cent[t], m->centroid, (size_t)k * sizeof(float));
            L->ntabs++;
        }
        L->part_tab[p] = t;
    }
    L->part_row0[nparts] = (int)total;
    L->nparts = nparts;
    *rows = (int)total;
    return LR_OK;
}

/* Destination row of part p's row r: concatenated, or interleaved (pair). */
static size_t dest_row(const lr_p14s *L, int p, int r) { return L->pair ? 2 * (size_t)r + p : (size_t)L->part_row0[p] + r; }

static int unfold(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14s *L, int fast, int pair)
{
    memset(L, 0, sizeof *L);
    lr_p14s plan;
    memset(&plan, 0, sizeof plan);
    float cent[LR_P14S_MAX_PARTS][4];
    int rows = 0, rc = plan_parts(parts, nparts, &plan, cent, &rows);
    if (rc) return rc;
    if (pair && (nparts != 2 || parts[0]->rows != parts[1]->rows))
        return LR_FAIL(LR_EINVAL, "p14s unfold: interleaving needs two parts of equal rows (%d parts, %d and %d rows)",
                       nparts, parts[0]->rows, nparts > 1 ? parts[1]->rows : 0);
    const lr_leech_matrix *m0 = parts[0];
    if ((rc = lr_p14s_alloc(L, rows, m0->cols, m0->max_shell, m0->gain_bits))) return rc;
    /* the tables: one per distinct centroid vector */
    L->nparts = plan.nparts, L->ntabs = plan.ntabs, L->pair = pair;
    memcpy(L->part_row0, plan.part_row0, sizeof L->part_row0);
    memcpy(L->part_tab, plan.part_tab, sizeof L->part_tab);
    if ((long long)L->ntabs * L->nent1 > 65536 / 16) {
        int nt = L->ntabs, ne = L->nent1;
        lr_p14s_free(L);
        return LR_FAIL(LR_ERANGE, "p14s unfold: %d class tables of %d entries do not fit 16-bit byte-offset headers "
                       "(4096 entries)", nt, ne);
    }
    if (L->ntabs > 1) {
        uint8_t *t = realloc(L->tab, (size_t)L->ntabs * L->nent1 * 16);
        if (!t) rc = LR_FAIL(LR_ENOMEM, "p14s unfold: out of memory");
        else L->tab = t, L->nentries = L->ntabs * L->nent1;
    }
    for (int t = 0; t < L->ntabs && !rc; t++)
        rc = lr_p14s_tab_build(m0->max_shell, m0->gain_bits, cent[t], L->tab + (size_t)t * L->nent1 * 16,
                               (size_t)L->nent1 * 16);
    /* every part's indices, rows concatenated */
    lr_leech_matrix all = *m0;
    all.rows = rows;
    size_t n = (size_t)rows * m0->nblk;
    uint64_t *idx = malloc((n ? n : 1) * sizeof *idx);
    uint8_t *gain = malloc(n ? n : 1);
    lr_exc_list *lists = calloc((size_t)L->rg, sizeof *lists);
    if (!rc && (!idx || !gain || !lists)) rc = LR_FAIL(LR_ENOMEM, "p14s unfold: out of memory");
    for (int p = 0; p < nparts && !rc; p++) {
        const lr_leech_matrix *m = parts[p];
        size_t o = (size_t)L->part_row0[p] * m0->nblk, np = (size_t)m->rows * m->nblk;
        if ((rc = lr_leech_archive_unpack(m->archive, m->archive_bytes, np, m->gain_bits, idx + o, gain + o)))
            rc = nparts > 1 ? lr_wrap(rc, "p14s unfold: part %d", p) : lr_wrap(rc, "p14s unfold");
    }
    level_map *maps = NULL;
    if (!rc && fast) rc = level_maps(m0->max_shell, &maps);
    if (!rc) {
        /* a pair's rows read in place (src_blk), not copied into interleaved order */
        unfold_ctx c = { &all, L, idx, gain, lists, maps, pair ? (size_t)parts[0]->rows : 0 };
        rc = lr_vram_parallel(L->rg, nthreads, fast ? unfold_groups_fast : unfold_groups, &c);
    }
    free(maps);
    if (!rc) {
        lr_exc_csr csr = { L->exc_ptr, &L->exc_col, &L->exc_dw, &L->nexc };
        rc = lr_exc_install_lists(csr, L->rows, lists, L->rg, "p14s");
    }
    for (int g = 0; lists && g < L->rg; g++) lr_exc_list_free(&lists[g]);
    free(lists), free(idx), free(gain);
    for (int p = 0; p < nparts && !rc; p++) {
        const lr_leech_matrix *m = parts[p];
        for (int r = 0; r < m->rows; r++) {
            size_t d = dest_row(L, p, r);
            L->row_scale[d] = m->row_scale[r];
            if (L->tail) memcpy(L->tail_f16 + d * L->tail, m->tail_f16 + (size_t)r * m->tail, (size_t)m->tail * 2);
        }
    }
    if (rc) lr_p14s_free(L);
    return rc;
}

int lr_p14s_unfold(const lr_leech_matrix *m, int nthreads, lr_p14s *L) { return unfold(&m, 1, nthreads, L, 1, 0); }
int lr_p14s_unfold_ref(const lr_leech_matrix *m, int nthreads, lr_p14s *L) { return unfold(&m, 1, nthreads, L, 0, 0); }
int lr_p14s_unfold_parts(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14s *L)
{
    return unfold(parts, nparts, nthreads, L, 1, 0);
}
int lr_p14s_unfold_parts_ref(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14s *L)
{
    return unfold(parts, nparts, nthreads, L, 0, 0);
}
int lr_p14s_unfold_pair(const lr_leech_matrix *const parts[2], int nthreads, lr_p14s *L)
{
    return unfold(parts, 2, nthreads, L, 1, 1);
}
int lr_p14s_unfold_pair_ref(const lr_leech_matrix *const parts[2], int nthreads, lr_p14s *L)
{
    return unfold(parts, 2, nthreads, L, 0, 1);
}

/* ---- validation ---- */

/* A pad position (row >= rows or blk >= nblk): header 0 and codes 8. */
static int check_pad(const lr_p14s *L, int row, int blk)
{
    const uint8_t *seg = L->data + seg_off(L->sc, row, blk);
    int h = read_header(seg, row, blk);
    if (h) return LR_FAIL(LR_EFORMAT, "p14s: pad block (%d, %d): header %d, not the origin", row, blk, h);
    for (int k = 0; k < 24; k++) {
        int c = read_code(seg, row, blk, k);
        if (c != LR_P14S_ZERO)
            return LR_FAIL(LR_EFORMAT, "p14s: pad block (%d, %d) coordinate %d: code %d, not the origin", row, blk, k, c);
    }
    return LR_OK;
}

int lr_p14s_check_row_exceptions(const lr_p14s *L, int r)
{
    const uint32_t a = L->exc_ptr[r], e = L->exc_ptr[r + 1];
    if (a > e || e > L->nexc)
        return LR_FAIL(LR_EFORMAT, "p14s: row %d: exception pointers %u..%u (of %u)", r, a, e, L->nexc);
    /* every exception sits on a real column (blocks consume the rest) */
    for (uint32_t i = a; i < e; i++) {
        uint32_t col = L->exc_col[i];
        if (col >= (uint32_t)(24 * L->nblk) || (i > a && col <= L->exc_col[i - 1]))
            return LR_FAIL(LR_EFORMAT, "p14s: row %d exception %u: column %u", r, i, col);
    }
    return LR_OK;
}

static int validate_rows(void *p, int r0, int r1)
{
    const lr_p14s *L = p;
    for (int r = r0; r < r1; r++) {
        int rc = lr_p14s_check_row_exceptions(L, r);
        if (rc) return rc;
        for (int b = 0; b < L->nblk; b++) {
            int8_t x[24];
            int g;
            if ((rc = lr_p14s_get(L, r, b, x, &g))) return rc;
        }
        for (int b = L->nblk; b < L->sc * LR_P14S_BLKS; b++)
            if ((rc = check_pad(L, r, b))) return rc;
    }
    return LR_OK;
}

int lr_p14s_validate(const lr_p14s *L)
{
    int rc = lr_exc_check_ptr(L->exc_ptr, L->rows, L->nexc, "p14s");
    if (rc) return rc;
    for (int r = L->rows; r < L->rg * LR_P14S_ROWS; r++) {
        for (int b = 0; b < L->sc * LR_P14S_BLKS; b++)
            if ((rc = check_pad(L, r, b))) return rc;
        if (L->row_scale[r] != 0) return LR_FAIL(LR_EFORMAT, "p14s: pad row %d has scale %g", r, (double)L->row_scale[r]);
    }
    return lr_vram_parallel(L->rows, 0, validate_rows, (void *)L);
}

double lr_p14s_bits_per_weight(const lr_p14s *L)
{
    double w = (double)L->rows * 24 * L->nblk;
    double bits = 8.0 * ((double)L->bytes + 8.0 * L->nexc + 4.0 * (L->rows + 1));
    return w > 0 ? bits / w : 0;
}
