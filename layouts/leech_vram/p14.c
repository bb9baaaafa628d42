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
    if (L->owned) free(L->img);
    memset(L, 0, sizeof *L);
}

static size_t align_up(size_t n) { return (n + LR_P14_ALIGN - 1) / LR_P14_ALIGN * LR_P14_ALIGN; }

/* Shape, sizes and image sections for ntabs tables (L->nparts etc. set by the caller). */
static int geometry(lr_p14 *L, int rows, int cols, int max_shell, int gain_bits, int ntabs)
{
    if (rows <= 0 || cols <= 0 || rows > (1 << 24) || cols > (1 << 24))
        return LR_FAIL(LR_EINVAL, "p14: shape %dx%d", rows, cols);
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "p14: max_shell %d", max_shell);
    int rc = lr_ctab_entries(max_shell, gain_bits, &L->nent1);
    if (rc) return rc;
    L->ntabs = ntabs;
    L->nentries = ntabs * L->nent1;
    /* headers are u16 byte offsets of an entry */
    if ((L->nentries - 1) * LR_CTAB_ENTRY > 0xffff)
        return LR_FAIL(LR_ERANGE, "p14: %d class tables of %d entries do not fit 16-bit headers (at most %d tables)",
                       ntabs, L->nent1, 4096 / L->nent1);
    L->rows = rows, L->cols = cols, L->nblk = cols / 24, L->tail = cols % 24;
    L->max_shell = max_shell, L->gain_bits = gain_bits;
    L->rg = (rows + LR_P14_ROWS - 1) / LR_P14_ROWS;
    L->sc = (L->nblk + LR_P14_BLKS - 1) / LR_P14_BLKS;
    L->bytes = (size_t)L->rg * L->sc * LR_P14_SEG;
    L->off_tab = align_up(L->bytes);
    L->off_scale = align_up(L->off_tab + (size_t)L->nentries * LR_CTAB_ENTRY);
    L->off_tail = align_up(L->off_scale + (size_t)L->rg * LR_P14_ROWS * sizeof(float));
    L->img_bytes = align_up(L->off_tail + (size_t)rows * L->tail * 2);
    return LR_OK;
}

void lr_p14_bind(lr_p14 *L, void *img)
{
    L->img = img;
    L->owned = 0;
    L->data = L->img;
    L->tab = L->img + L->off_tab;
    L->row_scale = (float *)(void *)(L->img + L->off_scale);
    L->tail_f16 = L->tail ? (uint16_t *)(void *)(L->img + L->off_tail) : NULL;
}

static int alloc_image(lr_p14 *L)
{
    void *img = calloc(L->img_bytes, 1);
    if (!img) {
        int rows = L->rows, cols = L->cols;
        memset(L, 0, sizeof *L);
        return LR_FAIL(LR_ENOMEM, "p14: out of memory for %dx%d", rows, cols);
    }
    lr_p14_bind(L, img);
    L->owned = 1;
    return LR_OK;
}

int lr_p14_alloc(lr_p14 *L, int rows, int cols, int max_shell, int gain_bits)
{
    memset(L, 0, sizeof *L);
    int rc = geometry(L, rows, cols, max_shell, gain_bits, 1);
    if (rc) { memset(L, 0, sizeof *L); return rc; }
    L->nparts = 1, L->part_row0[1] = rows;
    if ((rc = alloc_image(L))) return rc;
    /* the origin entry, so an empty layout already decodes */
    L->tab[7] = 0x64;
    return LR_OK;
}

int lr_p14_plan(const lr_leech_matrix *const *parts, int nparts, lr_p14 *L)
{
    memset(L, 0, sizeof *L);
    if (nparts < 1 || nparts > LR_P14_MAX_PARTS) return LR_FAIL(LR_EINVAL, "p14: %d parts (1..%d)", nparts, LR_P14_MAX_PARTS);
    const lr_leech_matrix *m0 = parts[0];
    long long rows = 0;
    for (int p = 0; p < nparts; p++) {
        const lr_leech_matrix *m = parts[p];
        if (m->rows <= 0 || m->cols <= 0 || m->nblk != m->cols / 24 || m->tail != m->cols % 24)
            return LR_FAIL(LR_EINVAL, "p14: part %d: shape %dx%d with %d blocks and tail %d", p, m->rows, m->cols, m->nblk,
                           m->tail);
        if (m->cols != m0->cols)
            return LR_FAIL(LR_EINVAL, "p14: part %d has %d columns, part 0 has %d: only rows concatenate", p, m->cols,
                           m0->cols);
        if (m->gain_bits != m0->gain_bits)
            return LR_FAIL(LR_EINVAL, "p14: part %d has %d gain bits, part 0 has %d: one layout needs one gain width", p,
                           m->gain_bits, m0->gain_bits);
        if (m->max_shell != m0->max_shell)
            return LR_FAIL(LR_EINVAL, "p14: part %d uses L24(%d), part 0 L24(%d)", p, m->max_shell, m0->max_shell);
        if (m->gain_bits < 0 || m->gain_bits > 2) return LR_FAIL(LR_EINVAL, "p14: part %d: gain bits %d", p, m->gain_bits);
        for (int g = 0; g < 1 << m->gain_bits; g++)
            if (!isfinite(m->centroid[g])) return LR_FAIL(LR_EINVAL, "p14: part %d: centroid %d not finite", p, g);
        L->part_row0[p] = (int)rows;
        rows += m->rows;
        if (rows > (1 << 24)) return LR_FAIL(LR_EINVAL, "p14: %lld rows", rows);
        /* a table per distinct centroid vector */
        int ng = 1 << m->gain_bits, t = 0;
        while (t < L->ntabs && memcmp(L->tab_centroid[t], m->centroid, (size_t)ng * sizeof(float))) t++;
        if (t == L->ntabs) {
            memset(L->tab_centroid[t], 0, sizeof L->tab_centroid[t]);
            memcpy(L->tab_centroid[t], m->centroid, (size_t)ng * sizeof(float));
            L->ntabs++;
        }
        L->part_tab[p] = t;
    }
    L->part_row0[nparts] = (int)rows;
    L->nparts = nparts;
    int ntabs = L->ntabs;
    int rc = geometry(L, (int)rows, m0->cols, m0->max_shell, m0->gain_bits, ntabs);
    if (rc) {
        lr_p14 z;
        memset(&z, 0, sizeof z);
        *L = z;
    }
    return rc;
}

int lr_p14_part_of(const lr_p14 *L, int row)
{
    int p = 0;
    while (p + 1 < L->nparts && row >= L->part_row0[p + 1]) p++;
    return p;
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
    int e = cls < 0 ? 0 : L->part_tab[lr_p14_part_of(L, row)] * L->nent1 + lr_ctab_entry(cls, gain, L->gain_bits);
    uint16_t h = (uint16_t)(e * LR_CTAB_ENTRY);
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
    if (!e) return LR_OK;
    int t = e / L->nent1, e1 = e % L->nent1;
    if (!e1 || t != L->part_tab[lr_p14_part_of(L, row)])
        return LR_FAIL(LR_EFORMAT, "p14: block (%d, %d): header %u is not an entry of its part's class table", row, blk, h);
    *cls = (e1 - 1) >> L->gain_bits;
    *gain = (e1 - 1) & ((1 << L->gain_bits) - 1);
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

/* Blocks [k0, k0 + n) of an archive. Blocks at multiples of 8 start on a
 * byte (8 * (47 + g) bits), so unpack from the one at or before k0. */
static int unpack_range(const lr_leech_matrix *m, size_t k0, size_t n, uint64_t *idx, uint8_t *gain, uint64_t *tmp_idx,
                        uint8_t *tmp_gain)
{
    size_t k8 = k0 & ~(size_t)7, skip = k0 - k8;
    size_t at = k8 * (size_t)(47 + m->gain_bits) / 8;
    if (at > m->archive_bytes) return LR_FAIL(LR_EFORMAT, "p14 unfold: archive of %zu bytes too short", m->archive_bytes);
    int rc = lr_leech_archive_unpack(m->archive + at, m->archive_bytes - at, n + skip, m->gain_bits, tmp_idx, tmp_gain);
    if (rc) return rc;
    memcpy(idx, tmp_idx + skip, n * sizeof *idx);
    memcpy(gain, tmp_gain + skip, n);
    return LR_OK;
}

/* What every fill does first: the range check, and for the range starting
 * at 0 the class tables and the gaps between the image's sections. */
static int fill_begin(const lr_p14 *L, int rg0, int rg1)
{
    if (rg0 < 0 || rg1 > L->rg || rg0 > rg1) return LR_FAIL(LR_EINVAL, "p14 fill: row groups [%d, %d) of %d", rg0, rg1, L->rg);
    if (rg0 != 0 || rg0 == rg1) return LR_OK;
    int rc = LR_OK;
    memset(L->img + L->bytes, 0, L->off_scale - L->bytes);
    for (int t = 0; t < L->ntabs && !rc; t++)
        rc = lr_ctab_build(L->max_shell, L->gain_bits, L->tab_centroid[t], L->tab + (size_t)t * L->nent1 * LR_CTAB_ENTRY,
                           (size_t)L->nent1 * LR_CTAB_ENTRY);
    size_t scale_end = L->off_scale + (size_t)L->rg * LR_P14_ROWS * sizeof(float);
    memset(L->img + scale_end, 0, L->off_tail - scale_end);
    size_t tail_end = L->off_tail + (size_t)L->rows * L->tail * 2;
    memset(L->img + tail_end, 0, L->img_bytes - tail_end);
    return rc;
}

/* The reference: every block unranked to its point and stored with
 * lr_p14_put. */
int lr_p14_fill_ref(const lr_leech_matrix *const *parts, const lr_p14 *Lc, int rg0, int rg1)
{
    lr_p14 *L = (lr_p14 *)Lc; /* puts touch only the image, which the caller owns */
    int rc = fill_begin(L, rg0, rg1);
    if (rc || rg0 == rg1) return rc;
    size_t nb = (size_t)LR_P14_ROWS * L->nblk + 8;
    uint64_t *idx = malloc(2 * nb * sizeof *idx);
    uint8_t *gain = malloc(2 * nb);
    if (!idx || !gain) { free(idx), free(gain); return LR_FAIL(LR_ENOMEM, "p14 fill: out of memory"); }
    for (int g = rg0; g < rg1 && !rc; g++) {
        memset(L->data + (size_t)g * L->sc * LR_P14_SEG, 0, (size_t)L->sc * LR_P14_SEG);
        int r0 = g * LR_P14_ROWS, r1 = r0 + LR_P14_ROWS < L->rows ? r0 + LR_P14_ROWS : L->rows;
        for (int r = r0; r < r0 + LR_P14_ROWS; r++) L->row_scale[r] = 0;
        /* the rows of each part inside this group */
        for (int r = r0; r < r1 && !rc;) {
            int p = lr_p14_part_of(L, r), pe = L->part_row0[p + 1] < r1 ? L->part_row0[p + 1] : r1;
            const lr_leech_matrix *m = parts[p];
            int lr0 = r - L->part_row0[p], n = pe - r;
            rc = unpack_range(m, (size_t)lr0 * m->nblk, (size_t)n * m->nblk, idx, gain, idx + nb, gain + nb);
            for (int i = 0; i < n && !rc; i++) {
                for (int b = 0; b < m->nblk && !rc; b++) {
                    size_t k = (size_t)i * m->nblk + b;
                    int8_t x[24];
                    rc = lr_leech_unrank(idx[k], m->max_shell, x);
                    if (!rc) rc = lr_p14_put(L, r + i, b, x, gain[k]);
                    if (rc) rc = lr_wrap(rc, "p14 unfold: part %d row %d block %d", p, lr0 + i, b);
                }
                float sc = m->row_scale[lr0 + i];
                if (!rc && !isfinite(sc)) rc = LR_FAIL(LR_EINVAL, "p14 unfold: part %d row %d scale not finite", p, lr0 + i);
                L->row_scale[r + i] = sc;
                if (L->tail)
                    memcpy(L->tail_f16 + (size_t)(r + i) * L->tail, m->tail_f16 + (size_t)(lr0 + i) * L->tail,
                           (size_t)L->tail * 2);
            }
            r = pe;
        }
    }
    free(idx), free(gain);
    return rc;
}

static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* The fragment words of a segment from its codes (row-major [16][192],
 * code = level | sign << 3, as lr_leech_unrank_codes writes them). Word t
 * of lane 4 g + q holds columns c, c+1 (the low 16 bits' bytes) and c+8,
 * c+9 (the high), c = 16 t + 2 q, of rows g (level in bits 0-2 of each
 * byte) and g + 8 (bits 4-6); the sign bits sit one byte over: byte order
 * (c+8, c, c+9, c+1) at bit 7 (row g) and bit 3 (row g + 8). Eight bytes of
 * a row at a time: the level and sign bits of both rows are merged per
 * byte first, then spread into the four lanes' words. */
static void frag_words(uint8_t *frag, const uint8_t *codes)
{
    const uint64_t L7 = 0x0707070707070707ull, S8 = 0x0808080808080808ull;
    for (int g = 0; g < 8; g++) {
        const uint8_t *A = codes + 192 * g, *B = codes + 192 * (g + 8);
        for (int t = 0; t < 12; t++) {
            uint64_t pa = rd64(A + 16 * t), ha = rd64(A + 16 * t + 8), pb = rd64(B + 16 * t), hb = rd64(B + 16 * t + 8);
            uint64_t lp = (pa & L7) | (pb & L7) << 4, lh = (ha & L7) | (hb & L7) << 4; /* levels, columns c.. / c+8.. */
            uint64_t sp = (pa & S8) << 4 | (pb & S8), sh = (ha & S8) << 4 | (hb & S8);  /* signs */
            uint8_t *w = frag + 512 * (t / 4) + 64 * g + 4 * (t % 4);
            for (int q = 0; q < 4; q++, lp >>= 16, lh >>= 16, sp >>= 16, sh >>= 16) {
                uint32_t lv = (uint32_t)(lp & 0xFFFF) | (uint32_t)(lh & 0xFFFF) << 16;
                uint32_t sg = (uint32_t)(sh & 0xFF) | (uint32_t)(sp & 0xFF) << 8 | (uint32_t)(sh & 0xFF00) << 8 |
                              (uint32_t)(sp & 0xFF00) << 16;
                wr32(w + 16 * q, lv | sg);
            }
        }
    }
}

/* Per thread: a row group's indices and gains, and one segment's. */
typedef struct {
    uint64_t *idx, *tmp_idx;
    uint8_t *gain, *tmp_gain;
    uint64_t sidx[LR_P14_ROWS * LR_P14_BLKS];
    uint8_t sgain[LR_P14_ROWS * LR_P14_BLKS];
    int16_t cls[LR_P14_ROWS * LR_P14_BLKS];
    uint8_t codes[LR_P14_ROWS * LR_P14_BLKS * 24];
    int part[LR_P14_ROWS]; /* -1: pad row */
} fill_buf;

/* Row group g of a layout: unpack its rows, check them in the reference's
 * order (a row's blocks, then its scale: the same first error), then per
 * segment decode the 16 x 8 blocks straight to codes and write the headers
 * and fragment words once (no read-modify-write, no per-coordinate search). */
static int fill_group(const lr_leech_matrix *const *parts, lr_p14 *L, int g, fill_buf *fb)
{
    int r0 = g * LR_P14_ROWS, r1 = r0 + LR_P14_ROWS < L->rows ? r0 + LR_P14_ROWS : L->rows, rc = LR_OK;
    const uint64_t np = lr_leech_ball_points(L->max_shell);
    for (int r = r0; r < r0 + LR_P14_ROWS; r++) L->row_scale[r] = 0, fb->part[r - r0] = -1;
    for (int r = r0; r < r1;) {
        int p = lr_p14_part_of(L, r), pe = L->part_row0[p + 1] < r1 ? L->part_row0[p + 1] : r1;
        const lr_leech_matrix *m = parts[p];
        int lr0 = r - L->part_row0[p], n = pe - r;
        size_t at = (size_t)(r - r0) * L->nblk;
        if ((rc = unpack_range(m, (size_t)lr0 * m->nblk, (size_t)n * m->nblk, fb->idx + at, fb->gain + at, fb->tmp_idx,
                               fb->tmp_gain)))
            return rc;
        for (int i = 0; i < n; i++) {
            const uint64_t *ri = fb->idx + at + (size_t)i * L->nblk;
            for (int b = 0; b < L->nblk; b++)
                if (ri[b] >= np) {
                    int8_t x[24];
                    rc = lr_leech_unrank(ri[b], m->max_shell, x); /* the reference's message */
                    return lr_wrap(rc ? rc : LR_FAIL(LR_ERANGE, "index %llu", (unsigned long long)ri[b]),
                                   "p14 unfold: part %d row %d block %d", p, lr0 + i, b);
                }
            float sc = m->row_scale[lr0 + i];
            if (!isfinite(sc)) return LR_FAIL(LR_EINVAL, "p14 unfold: part %d row %d scale not finite", p, lr0 + i);
            L->row_scale[r + i] = sc;
            fb->part[r + i - r0] = p;
            if (L->tail)
                memcpy(L->tail_f16 + (size_t)(r + i) * L->tail, m->tail_f16 + (size_t)(lr0 + i) * L->tail, (size_t)L->tail * 2);
        }
        r = pe;
    }
    for (int s = 0; s < L->sc; s++) {
        int b0 = s * LR_P14_BLKS, nbs = L->nblk - b0 < LR_P14_BLKS ? L->nblk - b0 : LR_P14_BLKS;
        memset(fb->sidx, 0, sizeof fb->sidx); /* pad rows and blocks: the origin */
        for (int rr = 0; rr < r1 - r0; rr++)
            for (int b = 0; b < nbs; b++) {
                size_t k = (size_t)rr * L->nblk + b0 + b;
                fb->sidx[rr * LR_P14_BLKS + b] = fb->idx[k], fb->sgain[rr * LR_P14_BLKS + b] = fb->gain[k];
            }
        if ((rc = lr_leech_unrank_codes(fb->sidx, LR_P14_ROWS * LR_P14_BLKS, L->max_shell, fb->cls, fb->codes))) return rc;
        uint8_t *seg = L->data + ((size_t)g * L->sc + s) * LR_P14_SEG;
        for (int rr = 0; rr < LR_P14_ROWS; rr++) {
            int tab0 = fb->part[rr] < 0 ? 0 : L->part_tab[fb->part[rr]] * L->nent1;
            for (int b = 0; b < LR_P14_BLKS; b++) {
                int k = rr * LR_P14_BLKS + b, c = fb->cls[k];
                uint16_t h = (uint16_t)((c < 0 ? 0 : tab0 + lr_ctab_entry(c, fb->sgain[k], L->gain_bits)) * LR_CTAB_ENTRY);
                memcpy(seg + 2 * (((rr % 8) * 2 + rr / 8) * 8 + b), &h, 2);
            }
        }
        frag_words(seg + LR_P14_HDR, fb->codes);
    }
    return LR_OK;
}

int lr_p14_fill(const lr_leech_matrix *const *parts, const lr_p14 *Lc, int rg0, int rg1)
{
    lr_p14 *L = (lr_p14 *)Lc; /* writes touch only the image, which the caller owns */
    int rc = fill_begin(L, rg0, rg1);
    if (rc || rg0 == rg1) return rc;
    size_t nb = (size_t)LR_P14_ROWS * L->nblk + 8;
    fill_buf *fb = malloc(sizeof *fb);
    if (fb) {
        fb->idx = malloc(2 * nb * sizeof *fb->idx), fb->tmp_idx = fb->idx ? fb->idx + nb : NULL;
        fb->gain = malloc(2 * nb), fb->tmp_gain = fb->gain ? fb->gain + nb : NULL;
    }
    if (!fb || !fb->idx || !fb->gain) {
        if (fb) free(fb->idx), free(fb->gain);
        free(fb);
        return LR_FAIL(LR_ENOMEM, "p14 fill: out of memory");
    }
    for (int g = rg0; g < rg1 && !rc; g++) rc = fill_group(parts, L, g, fb);
    free(fb->idx), free(fb->gain), free(fb);
    return rc;
}

typedef struct {
    const lr_leech_matrix *const *parts;
    const lr_p14 *L;
} fill_ctx;

static int fill_groups(void *p, int g0, int g1)
{
    fill_ctx *c = p;
    return lr_p14_fill(c->parts, c->L, g0, g1);
}

int lr_p14_unfold_parts(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14 *L)
{
    int rc = lr_p14_plan(parts, nparts, L);
    if (!rc) rc = alloc_image(L);
    if (rc) return rc;
    /* parallel over row groups: rows g and g + 8 share words */
    fill_ctx c = { parts, L };
    if ((rc = lr_vram_parallel(L->rg, nthreads, fill_groups, &c))) lr_p14_free(L);
    return rc;
}

int lr_p14_unfold(const lr_leech_matrix *m, int nthreads, lr_p14 *L)
{
    const lr_leech_matrix *parts[1] = { m };
    return lr_p14_unfold_parts(parts, 1, nthreads, L);
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
