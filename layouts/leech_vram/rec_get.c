/* Block access, validation and size accounting for the published record
 * layouts, whatever their kind. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/rec.h"
#include "util/err.h"

#include <math.h>
#include <string.h>

/* Slot32: the stride of block b's group, after checking its bases. */
static int slot_stride(const lr_rec *L, size_t b, size_t *at, size_t *stride)
{
    size_t g = b / LR_REC_GROUP;
    if (!L->bases || g >= L->ngroups) return LR_FAIL(LR_EFORMAT, "slot32: block %zu has no group", b);
    uint32_t a = L->bases[g], e = L->bases[g + 1];
    if (e < a || (e - a) % LR_REC_GROUP || e > L->bytes)
        return LR_FAIL(LR_EFORMAT, "slot32: group %zu spans bytes [%u, %u) of %zu", g, a, e, L->bytes);
    *stride = (e - a) / LR_REC_GROUP;
    *at = a + (b % LR_REC_GROUP) * *stride;
    return LR_OK;
}

/* Planes12x: the exception of block b in its row's list, or -1. */
static int exc_of(const lr_rec *L, int row, size_t b, long *e)
{
    uint32_t e0 = L->exc_ptr[row], e1 = L->exc_ptr[row + 1];
    if (e0 > e1 || e1 > L->nexc) return LR_FAIL(LR_EFORMAT, "p12x: row %d exceptions [%u, %u) of %u", row, e0, e1, L->nexc);
    *e = -1;
    for (uint32_t i = e0; i < e1; i++)
        if (L->exc_idx[i] == b) { *e = (long)i; break; }
    return LR_OK;
}

int lr_rec_get(const lr_rec *L, int row, int blk, int8_t x[24], int *gain)
{
    if (row < 0 || row >= L->rows || blk < 0 || blk >= L->nblk)
        return LR_FAIL(LR_ERANGE, "rec: block (%d, %d) outside %dx%d blocks", row, blk, L->rows, L->nblk);
    size_t b = (size_t)row * L->nblk + blk, at = 0, stride = 0;
    int rc, id;
    long e;
    switch (L->kind) {
    case LR_REC_P14:
        return lr_rec14_decode(L->data + LR_REC14_BYTES * b, L->max_shell, L->gain_bits, x, gain);
    case LR_REC_SLOT32:
        if ((rc = slot_stride(L, b, &at, &stride))) return rc;
        return lr_slot32_decode(L->data + at, stride, L->max_shell, L->gain_bits, x, gain);
    case LR_REC_P12X:
        if ((rc = exc_of(L, row, b, &e))) return rc;
        if (e < 0) {
            uint8_t v[5];
            if ((rc = lr_p12x_decode_main(L->data + LR_REC12_BYTES * b, L->max_shell, L->gain_bits, x, gain, &id)))
                return rc;
            int n;
            if ((rc = lr_rec_levels(L->max_shell, id - 1, v, &n))) return rc;
            if (n == 5) return LR_FAIL(LR_EFORMAT, "p12x: block (%d, %d) of a five-level class without exception", row, blk);
            return LR_OK;
        } else {
            /* the exact block, and the main record must be its approximation */
            uint8_t want[LR_REC12_BYTES];
            int five;
            if ((rc = lr_rec14_decode(L->exc_rec + (size_t)LR_REC14_BYTES * e, L->max_shell, L->gain_bits, x, gain)))
                return rc;
            if ((rc = lr_p12x_encode(x, L->max_shell, *gain, want, &five))) return rc;
            if (!five) return LR_FAIL(LR_EFORMAT, "p12x: exception at (%d, %d) of a class with <= 4 levels", row, blk);
            if (memcmp(want, L->data + LR_REC12_BYTES * b, LR_REC12_BYTES))
                return LR_FAIL(LR_EFORMAT, "p12x: block (%d, %d): main record is not its exception's approximation", row, blk);
            return LR_OK;
        }
    }
    return LR_FAIL(LR_EINVAL, "rec: kind %d", L->kind);
}

int lr_rec_get_f64(const lr_rec *L, int row, int blk, double w[24])
{
    int8_t x[24];
    int g, rc = lr_rec_get(L, row, blk, x, &g);
    if (rc) return rc;
    int n2 = lr_leech_norm(x);
    double s = n2 ? L->gscale[g] / sqrt((double)n2) * L->row_scale[row] : 0.0;
    for (int i = 0; i < 24; i++) w[i] = x[i] * s;
    return LR_OK;
}

typedef struct { const lr_rec *L; } val_ctx;

static int validate_rows(void *p, int r0, int r1)
{
    const lr_rec *L = ((val_ctx *)p)->L;
    for (int r = r0; r < r1; r++)
        for (int b = 0; b < L->nblk; b++) {
            int8_t x[24];
            int g, rc = lr_rec_get(L, r, b, x, &g);
            if (rc) return rc;
        }
    return LR_OK;
}

int lr_rec_validate(const lr_rec *L)
{
    if (L->kind == LR_REC_SLOT32) {
        if (!L->bases || L->ngroups != (L->nblocks + LR_REC_GROUP - 1) / LR_REC_GROUP || L->bases[0] != 0 ||
            L->bases[L->ngroups] != L->bytes)
            return LR_FAIL(LR_EFORMAT, "slot32: bases do not cover the %zu-byte stream", L->bytes);
    } else if (L->bytes != L->nblocks * (L->kind == LR_REC_P14 ? LR_REC14_BYTES : LR_REC12_BYTES)) {
        return LR_FAIL(LR_EFORMAT, "rec: %zu bytes for %zu blocks", L->bytes, L->nblocks);
    }
    if (L->kind == LR_REC_P12X) {
        if (L->exc_ptr[0] != 0 || L->exc_ptr[L->rows] != L->nexc)
            return LR_FAIL(LR_EFORMAT, "p12x: row pointers do not cover %u exceptions", L->nexc);
        for (int r = 0; r < L->rows; r++) {
            if (L->exc_ptr[r] > L->exc_ptr[r + 1]) return LR_FAIL(LR_EFORMAT, "p12x: row %d pointers decrease", r);
            for (uint32_t e = L->exc_ptr[r]; e < L->exc_ptr[r + 1]; e++) {
                uint32_t b = L->exc_idx[e];
                if (b / (uint32_t)(L->nblk ? L->nblk : 1) != (uint32_t)r || b >= L->nblocks ||
                    (e > L->exc_ptr[r] && b <= L->exc_idx[e - 1]))
                    return LR_FAIL(LR_EFORMAT, "p12x: exception %u (block %u) misplaced in row %d", e, b, r);
            }
        }
    }
    val_ctx c = { L };
    return lr_vram_parallel(L->rows, 0, validate_rows, &c);
}

double lr_rec_bits_per_weight(const lr_rec *L, double *nominal)
{
    double w = 24.0 * (double)L->nblocks, bits = 8.0 * (double)L->bytes;
    if (L->kind == LR_REC_SLOT32) bits += 32.0 * (double)(L->ngroups + 1);
    if (L->kind == LR_REC_P12X) bits += 8.0 * LR_REC_EXC_BYTES * L->nexc;
    if (nominal) *nominal = w ? bits / w : 0;
    if (L->kind == LR_REC_P12X) bits += 32.0 * (L->rows + 1);
    return w ? bits / w : 0;
}
