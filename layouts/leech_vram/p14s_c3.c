/* Planes14S's 3-bit form (layouts/leech_vram/p14s_c3.h has the bit layout):
 * the writer, fast (codes mapped per class) and reference (decode and
 * store again). Bit positions: p14s_c3_bits.h. */
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/exc.h"
#include "layouts/leech_vram/p14s_c3_bits.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/p14s.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

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

void lr_p14s_c3_free(lr_p14s_c3 *F)
{
    free(F->data), free(F->tab), free(F->exc_ptr), free(F->exc_col), free(F->exc_dw);
    memset(F, 0, sizeof *F);
}

typedef struct {
    const lr_p14s *L;
    lr_p14s_c3 *F;
    const lr_leech_class *cl;
    int ncl;
    lr_exc_list *lists; /* one per row group */
} form_ctx;

static int form_groups(void *p, int g0, int g1)
{
    form_ctx *c = p;
    const lr_p14s *L = c->L;
    const int mirrors = c->F->nentries > L->nentries;
    for (int g = g0; g < g1; g++) {
        lr_exc_list *xl = &c->lists[g];
        for (int r = 16 * g; r < 16 * g + 16 && r < L->rows; r++) {
            /* An exception past the blocks (on the dense tail) is no
               block's: lr_p14s_get never reads it, but the f16 form's GEMV
               would add it, so the forms would differ; the fast conversion
               refuses it too (fuzzing found the two disagreeing). */
            const int xr = lr_p14s_check_row_exceptions(L, r);
            if (xr) return lr_wrap(xr, "p14s_c3 form");
            for (int b = 0; b < L->nblk; b++) {
                int8_t x[24];
                int gain, code[24], rc = lr_p14s_get(L, r, b, x, &gain);
                if (rc) return lr_wrap(rc, "p14s_c3 form: row %d block %d", r, b);
                int e = lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b) / 16;
                int cls, gn, mirror, base;
                if ((rc = lr_p14s_c3_entry_class(L, c->F, r, b, e, &cls, &gn, &mirror, &base))) return rc;
                const lr_leech_class *cc = cls >= 0 ? &c->cl[cls] : NULL;
                const float s = f32_at(c->F->tab + 16 * (size_t)e + 12);
                lr_vram_exc ex[24];
                size_t ne = 0;
                /* the block takes its entry's mirror when its class has a
                   top code and its tops are all negative */
                int pos_top = 0, neg_top = 0;
                for (int k = 0; k < 24 && top_code(cc); k++)
                    if (x[k] == cc->vals[4]) pos_top = 1;
                    else if (x[k] == -cc->vals[4]) neg_top = 1;
                const int use_mirror = mirrors && neg_top && !pos_top;
                for (int k = 0; k < 24; k++) {
                    const int a = x[k] < 0 ? -x[k] : x[k];
                    int lvl = 0;
                    if (cc) {
                        while (lvl < cc->nvals && cc->vals[lvl] != a) lvl++;
                        if (lvl == cc->nvals) /* lr_p14s_get checked the class: unreachable */
                            return LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d block %d: |x| %d not in class %d", r, b, a, cls);
                        /* code 4: +v4, or -v4 in a mirror */
                        if (lvl == 4 && top_code(cc) && (x[k] > 0) == !use_mirror) {
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
                if (use_mirror) e = mirror_entry(L, c->cl, c->ncl, e / L->nent1, cls, gn);
                write_block(c->F->data + seg_off(L->cols, r, b), r, b, e, code);
                if (ne && (rc = lr_exc_push(xl, (uint32_t)r, ex, ne, "p14s_c3"))) return rc;
            }
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
/* at[x + 64]: -1 for no such value, else the 3-bit code | AT_EXC (stored
 * with an exception) | AT_MIR (or instead code 4 of the entry's mirror, in a
 * block without a positive top) | AT_TOP (a positive top, code 4): one byte
 * per value, so each coordinate reads one line of the map */
enum { AT_EXC = 8, AT_MIR = 16, AT_TOP = 32 };
typedef struct {
    int8_t val[2][8];  /* [exception][f16 code 0..7]: the signed value, or -128 */
    int8_t at[129];
    int16_t mi;        /* the class's place among those with a top code, or -1 */
} fast_map;

static int fast_maps(const lr_p14s *L, const lr_leech_class *cl, int ncl, int mirrors, fast_map *m)
{
    for (int c = 0; c < ncl; c++) {
        fast_map *f = &m[c];
        memset(f->val, -128, sizeof f->val);
        memset(f->at, -1, sizeof f->at);
        f->mi = (int16_t)mirror_index(cl, c);
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
                int at = l | neg << 2;
                if (l == 4 && !neg && top_code(&cl[c])) at = 4 | AT_TOP;
                else if (l == 4) at = 3 | neg << 2 | AT_EXC | (neg && mirrors && top_code(&cl[c]) ? AT_MIR : 0);
                f->at[x + 64] = (int8_t)at;
            }
    }
    return LR_OK;
}

typedef struct {
    const lr_p14s *L;
    lr_p14s_c3 *F;
    const lr_leech_class *cl;
    int nmir; /* classes with a top code */
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
                const int h = lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b);
                int e = h / 16, cls, gain, mirror, base;
                if (h % 16) rc = LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d block %d: header %d", r, b, h);
                if (!rc) rc = lr_p14s_c3_entry_class(L, c->F, r, b, e, &cls, &gain, &mirror, &base);
                if (rc) break;
                const fast_map *m = cls >= 0 ? &c->maps[cls] : NULL;
                const float s = f32_at(c->F->tab + 16 * (size_t)e + 12);
                lr_vram_exc ex[24];
                size_t ne = 0;
                int f16[24], pos_top = 0;
                uint32_t neg_tops = 0; /* coordinates a mirror would hold */
                lr_p14s_kernel_block_codes(L->data, L->rows, L->cols, r, b, f16);
                for (int k = 0; k < 24 && !rc; k++) {
                    const uint32_t col = (uint32_t)(24 * b + k);
                    const int f16c = f16[k];
                    const int has = x < xe && L->exc_col[x] == col;
                    x += (uint32_t)has;
                    int v = f16c == LR_P14S_ZERO ? 0 : -128;
                    if (f16c < LR_P14S_ZERO && m) v = m->val[has][f16c];
                    const int at = m && v != -128 ? m->at[v + 64] : 0;
                    if (v == -128 || (has && f16c == LR_P14S_ZERO) || (!m && f16c != LR_P14S_ZERO) || at < 0) {
                        rc = LR_FAIL(LR_EFORMAT, "p14s_c3 form: row %d block %d coordinate %d: code %d%s", r, b, k, f16c,
                                     has ? " with an exception" : "");
                        break;
                    }
                    cb[(r % 16) * nb + b][k] = (uint8_t)(at & 7);
                    if (at & AT_EXC) {
                        const lr_leech_class *cc = &c->cl[cls];
                        ex[ne].col = col;
                        ex[ne++].dw = (float)((cc->vals[4] - cc->vals[3]) * (v < 0 ? -1 : 1)) * s;
                    }
                    pos_top |= at & AT_TOP, neg_tops |= (uint32_t)(at >> 4 & 1) << k;
                }
                /* the entry's mirror when the block's tops are all negative:
                   they become code 4, and were its only exceptions (a class
                   with a top code has no other) */
                const int use_mirror = !rc && neg_tops && !pos_top;
                if (use_mirror) {
                    for (int k = 0; k < 24; k++)
                        if (neg_tops >> k & 1) cb[(r % 16) * nb + b][k] = 4;
                    ne = 0;
                    e = mirror_at(L, e / L->nent1, c->nmir, m->mi, gain); /* its mirror */
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
    if (!rc) rc = lr_p14s_c3_entries(L->max_shell, L->gain_bits, L->nentries, L->ntabs, &F->nentries);
    if (rc) return rc;
    F->bytes = L->bytes / LR_P14S_SEG * LR_P14S_C3_SEG;
    F->data = calloc(F->bytes ? F->bytes : 1, 1); /* zero: every pad the origin */
    F->tab = calloc((size_t)F->nentries, 16);
    F->exc_ptr = calloc((size_t)L->rows + 1, sizeof *F->exc_ptr);
    if (!F->data || !F->tab || !F->exc_ptr) return LR_FAIL(LR_ENOMEM, "p14s_c3: out of memory");
    for (int e = 0; e < F->nentries; e++) {
        int cls = -1, gain = 0, mirror = e >= L->nentries, base = e;
        if (mirror) { /* (the mirror's layout: p14s_c3.h; lr_p14s_c3_entries adds them only where a class has a top) */
            const int t = mirror_of(L, *cl, *ncl, e, &cls, &gain);
            base = layout_entry(L, t, cls, gain);
        } else {
            const int le = e % L->nent1;
            cls = le ? (le - 1) >> L->gain_bits : -1;
        }
        if (cls >= *ncl) return LR_FAIL(LR_EFORMAT, "p14s_c3: entry %d: class %d of %d", e, cls, *ncl);
        int8_t pool[8];
        class_pool(cls >= 0 ? &(*cl)[cls] : NULL, mirror, pool);
        memcpy(F->tab + 16 * (size_t)e, pool, 8);
        if (cls >= 0) memcpy(F->tab + 16 * (size_t)e + 12, L->tab + 16 * (size_t)base + 12, 4);
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
    if (!rc && fast_maps(L, cl, ncl, F->nentries > L->nentries, maps))
        rc = LR_FAIL(LR_EFORMAT, "p14s_c3: class maps for ball %d", L->max_shell);
    if (!rc) {
        fast_ctx c = { L, F, cl, mirror_count(cl, ncl), maps, calloc((size_t)L->rg, sizeof(lr_exc_list)) };
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
        form_ctx c = { L, F, cl, ncl, calloc((size_t)L->rg, sizeof(lr_exc_list)) };
        rc = form_run(L, nthreads, F, form_groups, &c, c.lists);
    }
    if (rc) lr_p14s_c3_free(F);
    return rc;
}

int lr_p14s_c3_unfold(const lr_leech_matrix *m, int nthreads, lr_p14s *L, lr_p14s_c3 *F)
{
    memset(F, 0, sizeof *F);
    int rc = lr_p14s_unfold(m, nthreads, L);
    if (!rc && (rc = lr_p14s_c3_form(L, nthreads, F))) lr_p14s_free(L); /* nothing kept on failure, as lr_p14s_unfold */
    return rc;
}
