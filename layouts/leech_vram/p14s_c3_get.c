/* Planes14S's 3-bit form: the decoder (every check the writer implies),
 * validation, size accounting and the kernel's view of the bytes. Bit
 * positions: p14s_c3_bits.h. */
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/exc.h"
#include "layouts/leech_vram/p14s_c3_bits.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/p14s.h"
#include "util/err.h"

#include <string.h>

int lr_p14s_c3_entry_class(const lr_p14s *L, const lr_p14s_c3 *F, int row, int blk, int e, int *cls, int *gain,
                           int *mirror, int *base)
{
    if (e >= F->nentries)
        return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): entry %d past the table (%d entries)", row, blk, e,
                       F->nentries);
    const int t = L->part_tab[lr_p14s_part_of(L, row)];
    *mirror = e >= L->nentries;
    if (*mirror) {
        /* mirrors: per table, per class with a top code, per gain */
        const lr_leech_class *cl;
        int ncl, rc = lr_leech_classes(L->max_shell, &cl, &ncl);
        if (rc) return rc;
        if (mirror_of(L, cl, ncl, e, cls, gain) != t)
            return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): mirror entry %d is in another part's table", row, blk,
                           e);
        *base = layout_entry(L, t, *cls, *gain);
        return LR_OK;
    }
    const int le = e ? e - t * L->nent1 : 0;
    if (e && (le < 1 || le >= L->nent1))
        return LR_FAIL(LR_EFORMAT, "p14s_c3: block (%d, %d): entry %d is in another part's table", row, blk, e);
    *cls = le ? (le - 1) >> L->gain_bits : -1;
    *gain = le ? (le - 1) & ((1 << L->gain_bits) - 1) : 0;
    *base = e;
    return LR_OK;
}

int lr_p14s_c3_entries(int max_shell, int gain_bits, int nentries, int ntabs, int *n)
{
    const lr_leech_class *cl;
    int ncl, rc = lr_leech_classes(max_shell, &cl, &ncl);
    if (rc) return rc;
    const long all = nentries + (long)ntabs * (mirror_count(cl, ncl) << gain_bits);
    *n = all <= 4096 ? (int)all : nentries;
    return LR_OK;
}

int lr_p14s_c3_get(const lr_p14s *L, const lr_p14s_c3 *F, int row, int blk, int8_t x[24], int *gain)
{
    if (row < 0 || row >= L->rows || blk < 0 || blk >= L->nblk)
        return LR_FAIL(LR_ERANGE, "p14s_c3: block (%d, %d) outside %dx%d blocks", row, blk, L->rows, L->nblk);
    const uint8_t *seg = F->data + seg_off(L->cols, row, blk);
    const int e = read_header(seg, row, blk);
    int cls, mirror, base, rc = lr_p14s_c3_entry_class(L, F, row, blk, e, &cls, gain, &mirror, &base);
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
    class_pool(cl, mirror, pool);
    static const uint8_t zero[8];
    const float s = f32_at(ent + 12);
    if (memcmp(ent, pool, 8) || memcmp(ent + 8, zero, 4) ||
        (cl && memcmp(ent + 12, L->tab + 16 * (size_t)base + 12, 4)) || (!cl && memcmp(ent + 12, zero, 4)))
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
        if (!v && sign < 0 && top_code(cl) && !dw[k]) { /* code 4: the top, - in a mirror */
            x[k] = (int8_t)(mirror ? -cl->vals[4] : cl->vals[4]);
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
    int want;
    int rc = lr_p14s_c3_entries(L->max_shell, L->gain_bits, L->nentries, L->ntabs, &want);
    if (rc) return rc;
    if (F->bytes != L->bytes / LR_P14S_SEG * LR_P14S_C3_SEG || F->nentries != want)
        return LR_FAIL(LR_EFORMAT, "p14s_c3: %zu bytes and %d entries for a %dx%d layout", F->bytes, F->nentries, L->rows,
                       L->cols);
    rc = lr_exc_check_ptr(F->exc_ptr, L->rows, F->nexc, "p14s_c3");
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
