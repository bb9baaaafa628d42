/* Planes14S's 3-bit form (layouts/leech_vram/p14s_c3.h has the bit layout):
 * writer, decoder, validation and the kernel's view of the bytes. Every
 * position is addressed through bit_of / header_bit_of, so the writer, the
 * decoder and the kernel view cannot disagree on where a bit lives. */
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/exc.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/p14s.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

static size_t seg_off(int cols, int row, int blk)
{
    const int sc_n = (cols / 24 + 7) / 8;
    return ((size_t)(row / 16) * sc_n + blk / 8) * LR_P14S_C3_SEG;
}

/* Byte offset in the segment of stored word S[si] of lane L. */
static int word_off(int lane, int si)
{
    return si < 4 ? 16 * lane + 4 * si : si < 8 ? 512 + 16 * lane + 4 * (si - 4) : 1024 + 8 * lane;
}

/* Where bit j (0..2) of the code of (row, blk, coordinate k) lives: byte
 * offset in the segment and bit in that byte. */
static void bit_of(int row, int blk, int k, int j, int *off, int *bit)
{
    const int g = row % 8, h = (row % 16) / 8, b = blk % 8, q = b / 2, u = b % 2, lane = 4 * g + q;
    const int t = 6 * u + k / 4, n = 4 * h + k % 4, G = t / 4, m = t % 4;
    const int si = m < 3 ? 3 * G + m : 3 * G + j, pos = m < 3 ? 4 * n + j : 4 * n + 3;
    *off = word_off(lane, si) + pos / 8, *bit = pos % 8;
}

/* Where bit i (0..11) of the entry index of (row, blk) lives. */
static void header_bit_of(int row, int blk, int i, int *off, int *bit)
{
    const int g = row % 8, h = (row % 16) / 8, b = blk % 8, q = b / 2, u = b % 2, lane = 4 * g + q;
    const int H = 1024 + 8 * lane + 4, H2 = 1280 + 2 * lane;
    int base, pos;
    if (h == 0) base = H, pos = (u ? 20 : 4) + i;
    else if (u == 0) base = H2, pos = 4 + i;
    else if (i < 4) base = H, pos = i;
    else if (i < 8) base = H, pos = 16 + i - 4;
    else base = H2, pos = i - 8;
    *off = base + pos / 8, *bit = pos % 8;
}

static int read_code(const uint8_t *seg, int row, int blk, int k)
{
    int c = 0;
    for (int j = 0; j < 3; j++) {
        int off, bit;
        bit_of(row, blk, k, j, &off, &bit);
        c |= ((seg[off] >> bit) & 1) << j;
    }
    return c;
}

static int read_header(const uint8_t *seg, int row, int blk)
{
    int e = 0;
    for (int i = 0; i < 12; i++) {
        int off, bit;
        header_bit_of(row, blk, i, &off, &bit);
        e |= ((seg[off] >> bit) & 1) << i;
    }
    return e;
}

static void put_bits(uint8_t *seg, int off, int bit, int v)
{
    seg[off] = (uint8_t)((seg[off] & ~(1u << bit)) | (unsigned)(v & 1) << bit);
}

static void write_block(uint8_t *seg, int row, int blk, int e, const int code[24])
{
    for (int i = 0; i < 12; i++) {
        int off, bit;
        header_bit_of(row, blk, i, &off, &bit);
        put_bits(seg, off, bit, e >> i);
    }
    for (int k = 0; k < 24; k++)
        for (int j = 0; j < 3; j++) {
            int off, bit;
            bit_of(row, blk, k, j, &off, &bit);
            put_bits(seg, off, bit, code[k] >> j);
        }
}

/* A five-valued class with zero among its values (15 of the 16 at shell
 * 12) has a spare code, 4 ("-0"): it holds the top value v4 with its plus
 * sign, so only a negative top needs an exception (half of them). */
static int top_code(const lr_leech_class *c) { return c && c->nvals == 5 && c->vals[0] == 0; }

/* The int8 pool of a class (+v0..+v3, -v0..-v3; a fifth value is not
 * stored), or all zero for the origin (cls < 0). */
static void class_pool(const lr_leech_class *c, int8_t pool[8])
{
    memset(pool, 0, 8);
    if (!c) return;
    for (int l = 0; l < 4 && l < c->nvals; l++) pool[l] = (int8_t)c->vals[l], pool[4 + l] = (int8_t)-c->vals[l];
    if (top_code(c)) pool[4] = (int8_t)c->vals[4];
}

static float f32_at(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

/* The class of entry e of a layout row's part (-1 the origin), or
 * LR_EFORMAT. */
static int entry_class(const lr_p14s *L, int row, int blk, int e, int *cls, int *gain)
{
    if (e >= L->nentries)
        return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): entry %d past the table (%d entries)", row, blk, e,
                       L->nentries);
    const int base = L->part_tab[lr_p14s_part_of(L, row)] * L->nent1, le = e ? e - base : 0;
    if (e && (le < 1 || le >= L->nent1))
        return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): entry %d is in another part's table", row, blk, e);
    *cls = le ? (le - 1) >> L->gain_bits : -1;
    *gain = le ? (le - 1) & ((1 << L->gain_bits) - 1) : 0;
    return LR_OK;
}

void lr_p14s_c3_free(lr_p14s_c3 *F)
{
    free(F->data), free(F->tab), free(F->exc_ptr), free(F->exc_col), free(F->exc_dw);
    memset(F, 0, sizeof *F);
}

typedef struct {
    const lr_p14s *L;
    lr_p14s_c3 *F;
    const lr_leech_class *cl;
    lr_exc_list *lists; /* one per row group */
} form_ctx;

static int form_groups(void *p, int g0, int g1)
{
    form_ctx *c = p;
    const lr_p14s *L = c->L;
    for (int g = g0; g < g1; g++) {
        lr_exc_list *xl = &c->lists[g];
        for (int r = 16 * g; r < 16 * g + 16 && r < L->rows; r++)
            for (int b = 0; b < L->nblk; b++) {
                int8_t x[24];
                int gain, code[24], rc = lr_p14s_get(L, r, b, x, &gain);
                if (rc) return lr_wrap(rc, "p14s_c3 form: row %d block %d", r, b);
                const int e = lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b) / 16;
                int cls, gn;
                if ((rc = entry_class(L, r, b, e, &cls, &gn))) return rc;
                const lr_leech_class *cc = cls >= 0 ? &c->cl[cls] : NULL;
                const float s = f32_at(c->F->tab + 16 * (size_t)e + 12);
                lr_vram_exc ex[24];
                size_t ne = 0;
                for (int k = 0; k < 24; k++) {
                    const int a = x[k] < 0 ? -x[k] : x[k];
                    int lvl = 0;
                    if (cc) {
                        while (lvl < cc->nvals && cc->vals[lvl] != a) lvl++;
                        if (lvl == cc->nvals) /* lr_p14s_get checked the class: unreachable */
                            return LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d block %d: |x| %d not in class %d", r, b, a, cls);
                        if (lvl == 4 && x[k] > 0 && top_code(cc)) {
                            code[k] = 4;
                            continue;
                        }
                        if (lvl == 4) {
                            lvl = 3;
                            ex[ne].col = (uint32_t)(24 * b + k);
                            ex[ne++].dw = (float)((cc->vals[4] - cc->vals[3]) * (x[k] < 0 ? -1 : 1)) * s;
                        }
                    }
                    code[k] = lvl | (x[k] < 0) << 2;
                }
                write_block(c->F->data + seg_off(L->cols, r, b), r, b, e, code);
                if (ne && (rc = lr_exc_push(xl, (uint32_t)r, ex, ne, "p14s_c3"))) return rc;
            }
    }
    return LR_OK;
}

/* ---- the fast conversion ----
 * For layouts as the unfolder writes them: no block is decoded; a class map
 * turns each f16-form code (with or without the row's next exception) into
 * its value and that into its 3-bit code, and segments are written a word at
 * a time. It refuses what it can see cheaply (entries outside the table or
 * the part, invalid codes, exceptions on zeros or out of order) but does not
 * check that blocks are lattice points or that exceptions' values match:
 * lr_p14s_c3_form_ref does, and the tests hold the two byte for byte. */
typedef struct {
    int8_t val[2][8];  /* [exception][f16 code 0..7]: the signed value, or -128 */
    int8_t code[129];  /* [x + 64]: the 3-bit code, -1 for no such value */
    uint8_t exc[129];  /* [x + 64]: 1 when x is stored with an exception */
} fast_map;

static int fast_maps(const lr_p14s *L, const lr_leech_class *cl, int ncl, fast_map *m)
{
    for (int c = 0; c < ncl; c++) {
        fast_map *f = &m[c];
        memset(f->val, -128, sizeof f->val);
        memset(f->code, -1, sizeof f->code);
        memset(f->exc, 0, sizeof f->exc);
        int nz[LR_LEECH_MAX_VALS], nnz = 0;
        for (int j = 0; j < cl[c].nvals; j++)
            if (cl[c].vals[j]) nz[nnz++] = cl[c].vals[j];
        for (int k = 0; k < 8; k++) {
            const int sl = k & 3, sign = k & 4 ? -1 : 1;
            if (sl >= nnz) continue;
            const int u = lr_p14s_stored(L->max_shell, c, nz[sl]);
            if (u < 0) return LR_EFORMAT;
            if (nz[sl] == u) f->val[0][k] = (int8_t)(sign * u);
            for (int j = sl; j < nnz; j++) /* slot 3 also holds a fifth magnitude */
                if ((j == sl || (sl == 3 && j == 4)) && nz[j] != u) f->val[1][k] = (int8_t)(sign * nz[j]);
        }
        for (int l = 0; l < cl[c].nvals; l++)
            for (int neg = 0; neg < 2; neg++) {
                const int v = cl[c].vals[l], x = neg ? -v : v;
                if (!v && neg) continue;
                int code = l | neg << 2, e = 0;
                if (l == 4 && !neg && cl[c].vals[0] == 0) code = 4;
                else if (l == 4) code = 3 | neg << 2, e = 1;
                f->code[x + 64] = (int8_t)code, f->exc[x + 64] = (uint8_t)e;
            }
    }
    return LR_OK;
}

typedef struct {
    const lr_p14s *L;
    lr_p14s_c3 *F;
    const lr_leech_class *cl;
    const fast_map *maps;
    lr_exc_list *lists;
} fast_ctx;

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* Segment (row group g, super-chunk sc) from the row group's codes
 * (cb[row % 16][block][k]) and entries (eb[row % 16][block]). */
static void write_segment_fast(uint8_t *seg, const uint8_t (*cb)[24], const uint16_t *eb, int nb)
{
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane / 4, q = lane % 4;
        uint32_t V[12] = { 0 };
        for (int t = 0; t < 12; t++) {
            const int b = 2 * q + (t >= 6), k0 = 4 * (t % 6);
            for (int n = 0; n < 8; n++) {
                const int r = g + 8 * (n >= 4);
                V[t] |= (uint32_t)cb[r * nb + b][k0 + n % 4] << (4 * n);
            }
        }
        uint32_t S[9];
        for (int G = 0; G < 3; G++)
            for (int m = 0; m < 3; m++) S[3 * G + m] = V[4 * G + m] | ((V[4 * G + 3] >> m) & 0x11111111u) << 3;
        const uint32_t e00 = eb[g * nb + 2 * q], e01 = eb[g * nb + 2 * q + 1];
        const uint32_t e10 = eb[(g + 8) * nb + 2 * q], e11 = eb[(g + 8) * nb + 2 * q + 1];
        const uint32_t H = e00 << 4 | e01 << 20 | (e11 & 0xfu) | ((e11 >> 4) & 0xfu) << 16;
        const uint32_t H2 = e10 << 4 | ((e11 >> 8) & 0xfu);
        for (int i = 0; i < 9; i++) wr32(seg + word_off(lane, i), S[i]);
        wr32(seg + 1024 + 8 * lane + 4, H);
        seg[1280 + 2 * lane] = (uint8_t)H2, seg[1281 + 2 * lane] = (uint8_t)(H2 >> 8);
    }
}

static int fast_groups(void *p, int g0, int g1)
{
    fast_ctx *c = p;
    const lr_p14s *L = c->L;
    const int nb = L->sc * 8;
    uint8_t(*cb)[24] = calloc((size_t)16 * nb, 24);
    uint16_t *eb = calloc((size_t)16 * nb, sizeof *eb);
    int rc = cb && eb ? LR_OK : LR_FAIL(LR_ENOMEM, "p14s_c3 form: out of memory");
    for (int g = g0; g < g1 && !rc; g++) {
        memset(cb, 0, (size_t)16 * nb * 24), memset(eb, 0, (size_t)16 * nb * sizeof *eb);
        for (int r = 16 * g; r < 16 * g + 16 && r < L->rows && !rc; r++) {
            uint32_t x = L->exc_ptr[r];
            const uint32_t xe = L->exc_ptr[r + 1];
            if (x > xe || xe > L->nexc) {
                rc = LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d: exception pointers %u..%u", r, x, xe);
                break;
            }
            for (int b = 0; b < L->nblk && !rc; b++) {
                const int h = lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b), e = h / 16;
                int cls, gain;
                if (h % 16) rc = LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d block %d: header %d", r, b, h);
                if (!rc) rc = entry_class(L, r, b, e, &cls, &gain);
                if (rc) break;
                const fast_map *m = cls >= 0 ? &c->maps[cls] : NULL;
                const float s = f32_at(c->F->tab + 16 * (size_t)e + 12);
                lr_vram_exc ex[24];
                size_t ne = 0;
                int f16[24];
                lr_p14s_kernel_block_codes(L->data, L->rows, L->cols, r, b, f16);
                for (int k = 0; k < 24 && !rc; k++) {
                    const uint32_t col = (uint32_t)(24 * b + k);
                    const int f16c = f16[k];
                    const int has = x < xe && L->exc_col[x] == col;
                    x += (uint32_t)has;
                    int v = f16c == LR_P14S_ZERO ? 0 : -128;
                    if (f16c < LR_P14S_ZERO && m) v = m->val[has][f16c];
                    if (v == -128 || (has && f16c == LR_P14S_ZERO) || (!m && f16c != LR_P14S_ZERO) ||
                        (m && m->code[v + 64] < 0)) {
                        rc = LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d block %d coordinate %d: code %d%s", r, b, k, f16c,
                                     has ? " with an exception" : "");
                        break;
                    }
                    cb[(r % 16) * nb + b][k] = m ? (uint8_t)m->code[v + 64] : 0;
                    if (m && m->exc[v + 64]) {
                        const lr_leech_class *cc = &c->cl[cls];
                        ex[ne].col = col;
                        ex[ne++].dw = (float)((cc->vals[4] - cc->vals[3]) * (v < 0 ? -1 : 1)) * s;
                    }
                }
                eb[(r % 16) * nb + b] = (uint16_t)e;
                if (!rc && ne) rc = lr_exc_push(&c->lists[g], (uint32_t)r, ex, ne, "p14s_c3");
            }
            if (!rc && x != xe)
                rc = LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d: exception %u (column %u) is on no coordinate", r, x,
                             L->exc_col[x]);
        }
        for (int sc = 0; sc < L->sc && !rc; sc++) {
            /* the super-chunk's 8 blocks of the 16 rows: cb / eb rows at stride nb */
            write_segment_fast(c->F->data + ((size_t)g * L->sc + sc) * LR_P14S_C3_SEG, cb + 8 * sc, eb + 8 * sc, nb);
        }
    }
    free(cb), free(eb);
    return rc;
}

/* Shared by both conversions: the form's allocation and class table. */
static int form_begin(const lr_p14s *L, lr_p14s_c3 *F, const lr_leech_class **cl, int *ncl)
{
    memset(F, 0, sizeof *F);
    if (L->nentries > 4096)
        return LR_FAIL(LR_ERANGE, "p14s_c3: %d class-table entries do not fit 12-bit headers", L->nentries);
    int rc = lr_leech_classes(L->max_shell, cl, ncl);
    if (rc) return rc;
    F->bytes = L->bytes / LR_P14S_SEG * LR_P14S_C3_SEG;
    F->nentries = L->nentries;
    F->data = calloc(F->bytes ? F->bytes : 1, 1); /* zero: every pad the origin */
    F->tab = calloc((size_t)L->nentries, 16);
    F->exc_ptr = calloc((size_t)L->rows + 1, sizeof *F->exc_ptr);
    if (!F->data || !F->tab || !F->exc_ptr) return LR_FAIL(LR_ENOMEM, "p14s_c3: out of memory");
    for (int e = 0; e < L->nentries; e++) {
        const int le = e % L->nent1, cls = le ? (le - 1) >> L->gain_bits : -1;
        if (cls >= *ncl) return LR_FAIL(LR_EFORMAT, "p14s_c3: entry %d: class %d of %d", e, cls, *ncl);
        int8_t pool[8];
        class_pool(cls >= 0 ? &(*cl)[cls] : NULL, pool);
        memcpy(F->tab + 16 * (size_t)e, pool, 8);
        if (cls >= 0) memcpy(F->tab + 16 * (size_t)e + 12, L->tab + 16 * (size_t)e + 12, 4);
    }
    return LR_OK;
}

/* Runs one conversion over the row groups and installs its exceptions. */
static int form_run(const lr_p14s *L, int nthreads, lr_p14s_c3 *F, int (*groups)(void *, int, int), void *ctx,
                    lr_exc_list *lists)
{
    int rc = lists ? lr_vram_parallel(L->rg, nthreads, groups, ctx) : LR_FAIL(LR_ENOMEM, "p14s_c3: out of memory");
    if (!rc) {
        lr_exc_csr csr = { F->exc_ptr, &F->exc_col, &F->exc_dw, &F->nexc };
        rc = lr_exc_install_lists(csr, L->rows, lists, L->rg, "p14s_c3");
    }
    for (int g = 0; lists && g < L->rg; g++) lr_exc_list_free(&lists[g]);
    free(lists);
    return rc;
}

int lr_p14s_c3_form(const lr_p14s *L, int nthreads, lr_p14s_c3 *F)
{
    const lr_leech_class *cl;
    int ncl, rc = form_begin(L, F, &cl, &ncl);
    fast_map *maps = rc ? NULL : malloc(sizeof *maps * (size_t)ncl);
    if (!rc && !maps) rc = LR_FAIL(LR_ENOMEM, "p14s_c3: out of memory");
    if (!rc && fast_maps(L, cl, ncl, maps)) rc = LR_FAIL(LR_EFORMAT, "p14s_c3: class maps for ball %d", L->max_shell);
    if (!rc) {
        fast_ctx c = { L, F, cl, maps, calloc((size_t)L->rg, sizeof(lr_exc_list)) };
        rc = form_run(L, nthreads, F, fast_groups, &c, c.lists);
    }
    free(maps);
    if (rc) lr_p14s_c3_free(F);
    return rc;
}

int lr_p14s_c3_form_ref(const lr_p14s *L, int nthreads, lr_p14s_c3 *F)
{
    const lr_leech_class *cl;
    int ncl, rc = form_begin(L, F, &cl, &ncl);
    if (!rc) {
        form_ctx c = { L, F, cl, calloc((size_t)L->rg, sizeof(lr_exc_list)) };
        rc = form_run(L, nthreads, F, form_groups, &c, c.lists);
    }
    if (rc) lr_p14s_c3_free(F);
    return rc;
}

int lr_p14s_c3_unfold(const lr_leech_matrix *m, int nthreads, lr_p14s *L, lr_p14s_c3 *F)
{
    memset(F, 0, sizeof *F);
    int rc = lr_p14s_unfold(m, nthreads, L);
    if (!rc) rc = lr_p14s_c3_form(L, nthreads, F);
    return rc;
}

/* ---- decode ---- */

int lr_p14s_c3_get(const lr_p14s *L, const lr_p14s_c3 *F, int row, int blk, int8_t x[24], int *gain)
{
    if (row < 0 || row >= L->rows || blk < 0 || blk >= L->nblk)
        return LR_FAIL(LR_ERANGE, "p14s_c3: block (%d, %d) outside %dx%d blocks", row, blk, L->rows, L->nblk);
    const uint8_t *seg = F->data + seg_off(L->cols, row, blk);
    const int e = read_header(seg, row, blk);
    int cls, rc = entry_class(L, row, blk, e, &cls, gain);
    if (rc) return rc;
    const lr_leech_class *cl = NULL;
    int ncl;
    if (cls >= 0) {
        if ((rc = lr_leech_classes(L->max_shell, &cl, &ncl))) return rc;
        if (cls >= ncl) return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): class %d of %d", row, blk, cls, ncl);
        cl += cls;
    }
    const uint8_t *ent = F->tab + 16 * (size_t)e;
    int8_t pool[8];
    class_pool(cl, pool);
    static const uint8_t zero[8];
    const float s = f32_at(ent + 12);
    if (memcmp(ent, pool, 8) || memcmp(ent + 8, zero, 4) || (cl && memcmp(ent + 12, L->tab + 16 * (size_t)e + 12, 4)) ||
        (!cl && memcmp(ent + 12, zero, 4)))
        return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): class-table entry %d malformed", row, blk, e);
    const float *dw[24];
    if ((rc = lr_exc_block(F->exc_ptr, F->exc_col, F->exc_dw, F->nexc, row, blk, (uint32_t)(24 * L->nblk), dw,
                           "p14s_c3")))
        return rc;
    for (int k = 0; k < 24; k++) {
        const int code = read_code(seg, row, blk, k), lvl = code & 3, sign = code >> 2 ? -1 : 1;
        if (!cl) {
            if (code || dw[k])
                return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d) coordinate %d: the origin with code %d%s", row, blk,
                               k, code, dw[k] ? " and an exception" : "");
            x[k] = 0;
            continue;
        }
        if (lvl >= cl->nvals)
            return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d) coordinate %d: code %d selects unused level %d (of %d)",
                           row, blk, k, code, lvl, cl->nvals);
        int v = cl->vals[lvl];
        if (!v && sign < 0 && top_code(cl) && !dw[k]) {
            x[k] = (int8_t)cl->vals[4];
            continue;
        }
        if (!v && sign < 0)
            return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d) coordinate %d: negative zero (code %d)", row, blk, k, code);
        if (dw[k]) {
            const float want = cl->nvals == 5 && lvl == 3 ? (float)(sign * (cl->vals[4] - cl->vals[3])) * s : 0.f;
            if (cl->nvals != 5 || lvl != 3 || memcmp(&want, dw[k], 4))
                return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d) coordinate %d (column %d): exception %g fits no "
                                           "value of class %d", row, blk, k, 24 * blk + k, (double)*dw[k], cls);
            v = cl->vals[4];
        }
        x[k] = (int8_t)(sign * v);
    }
    int got;
    if (cl && ((rc = lr_leech_class_of(x, L->max_shell, &got)) || got != cls)) {
        lr_clear_error();
        return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d) is not a point of class %d (entry %d)", row, blk, cls, e);
    }
    return LR_OK;
}

typedef struct { const lr_p14s *L; const lr_p14s_c3 *F; } val_ctx;

/* A pad position (row >= rows or blk >= nblk): entry 0 and codes 0. */
static int check_pad(const lr_p14s *L, const lr_p14s_c3 *F, int row, int blk)
{
    const uint8_t *seg = F->data + seg_off(L->cols, row, blk);
    int e = read_header(seg, row, blk);
    if (e) return LR_FAIL(LR_EFORMAT, "p14s_c3: pad block (%d, %d): entry %d, not the origin", row, blk, e);
    for (int k = 0; k < 24; k++)
        if (read_code(seg, row, blk, k))
            return LR_FAIL(LR_EFORMAT, "p14s_c3: pad block (%d, %d) coordinate %d: code %d, not the origin", row, blk, k,
                           read_code(seg, row, blk, k));
    return LR_OK;
}

static int validate_rows(void *p, int r0, int r1)
{
    const val_ctx *v = p;
    for (int r = r0; r < r1; r++) {
        int rc;
        if (r < v->L->rows)
            for (int b = 0; b < v->L->nblk; b++) {
                int8_t x[24];
                int g;
                if ((rc = lr_p14s_c3_get(v->L, v->F, r, b, x, &g))) return rc;
            }
        for (int b = r < v->L->rows ? v->L->nblk : 0; b < v->L->sc * LR_P14S_BLKS; b++)
            if ((rc = check_pad(v->L, v->F, r, b))) return rc;
    }
    return LR_OK;
}

int lr_p14s_c3_validate(const lr_p14s *L, const lr_p14s_c3 *F)
{
    if (F->bytes != L->bytes / LR_P14S_SEG * LR_P14S_C3_SEG || F->nentries != L->nentries)
        return LR_FAIL(LR_EFORMAT, "p14s_c3: %zu bytes and %d entries for a %dx%d layout", F->bytes, F->nentries, L->rows,
                       L->cols);
    int rc = lr_exc_check_ptr(F->exc_ptr, L->rows, F->nexc, "p14s_c3");
    if (rc) return rc;
    val_ctx v = { L, F };
    return lr_vram_parallel(L->rg * 16, 0, validate_rows, &v);
}

double lr_p14s_c3_bits_per_weight(const lr_p14s *L, const lr_p14s_c3 *F)
{
    double w = (double)L->rows * 24 * L->nblk;
    double bits = 8.0 * ((double)F->bytes + 8.0 * F->nexc + 4.0 * (L->rows + 1));
    return w > 0 ? bits / w : 0;
}

/* ---- the kernel's view ---- */

int lr_p14s_c3_kernel_header(const uint8_t *W, int rows, int cols, int row, int blk)
{
    (void)rows;
    return read_header(W + seg_off(cols, row, blk), row, blk);
}

int lr_p14s_c3_kernel_code(const uint8_t *W, int rows, int cols, int row, int blk, int k)
{
    (void)rows;
    return read_code(W + seg_off(cols, row, blk), row, blk, k);
}

void lr_p14s_c3_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, float w[24])
{
    const uint8_t *seg = W + seg_off(cols, row, blk), *e = tab + 16 * (size_t)read_header(W + seg_off(cols, row, blk), row, blk);
    (void)rows;
    const float s = f32_at(e + 12);
    for (int k = 0; k < 24; k++) w[k] = (float)(int8_t)e[read_code(seg, row, blk, k)] * s; /* exact */
}
