/* Planes12x, the published 12-byte record with two level planes and an
 * exception side channel for the five-level classes.
 *
 * Main record: [id 9][gain 1][sign 24][p0 24][p1 24][0 : 14], LSB-first, at
 * 12 b. A block of a five-level class keeps its class id, gain and signs
 * in the main record, with its level-4 coordinates relabelled to the level
 * among 0..3 whose value is nearest (ties: the lower level; a sign on a
 * zero dropped): an approximation the kernel's correction cancels. (The
 * published transcoder stores instead the nearest lattice point of a
 * <= 4-level class, found by an angular search per exception; which
 * approximation the main stream carries changes neither the bytes read nor
 * the instructions, and ours needs no search.) The exact block is its
 * Planes14 record in exc_rec, its flat index in exc_idx (ascending), and
 * exc_ptr[row] .. exc_ptr[row + 1] are the row's exceptions. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/rec.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

/* The main-record level standing in for level 4 of a five-level class. */
static int stand_in(const uint8_t v[5])
{
    int best = 0;
    for (int l = 1; l < 4; l++)
        if (abs(v[l] - v[4]) < abs(v[best] - v[4])) best = l;
    return best;
}

int lr_p12x_encode(const int8_t x[24], int max_shell, int gain, uint8_t rec[12], int *exc)
{
    int id, nlev;
    uint8_t lvl[24], v[5];
    uint32_t signs, p0 = 0, p1 = 0;
    if (gain < 0 || gain > 1) return LR_FAIL(LR_EINVAL, "p12x: gain %d", gain);
    int rc = lr_rec_split(x, max_shell, &id, lvl, &signs, &nlev);
    if (!rc) rc = lr_rec_levels(max_shell, id - 1, v, &nlev);
    if (rc) return rc;
    *exc = nlev == 5;
    for (int i = 0; i < 24; i++) {
        int l = lvl[i];
        if (l == 4) l = stand_in(v);
        if (v[l] == 0) signs &= ~(1u << i);
        p0 |= (uint32_t)(l & 1) << i;
        p1 |= (uint32_t)(l >> 1) << i;
    }
    memset(rec, 0, 12);
    lr_rec_put_bits(rec, 0, 9, (uint32_t)id);
    lr_rec_put_bits(rec, 9, 1, (uint32_t)gain);
    lr_rec_put_bits(rec, 10, 24, signs);
    lr_rec_put_bits(rec, 34, 24, p0);
    lr_rec_put_bits(rec, 58, 24, p1);
    return LR_OK;
}

int lr_p12x_decode_main(const uint8_t rec[12], int max_shell, int gain_bits, int8_t x[24], int *gain, int *id)
{
    const lr_leech_class *cl;
    int nc, rc = lr_leech_classes(max_shell, &cl, &nc);
    if (rc) return rc;
    *id = (int)lr_rec_bits(rec, 0, 9);
    *gain = (int)lr_rec_bits(rec, 9, 1);
    if (*id > nc) return LR_FAIL(LR_EFORMAT, "p12x: class id %d outside 0..%d", *id, nc);
    if (*gain >= 1 << gain_bits) return LR_FAIL(LR_EFORMAT, "p12x: gain %d with %d gain bits", *gain, gain_bits);
    if (lr_rec_bits(rec, 82, 14)) return LR_FAIL(LR_EFORMAT, "p12x: padding bits set");
    uint32_t signs = lr_rec_bits(rec, 10, 24), p0 = lr_rec_bits(rec, 34, 24), p1 = lr_rec_bits(rec, 58, 24);
    uint8_t lvl[24], v[5];
    int nlev;
    for (int i = 0; i < 24; i++) lvl[i] = (uint8_t)(((p0 >> i) & 1) | ((p1 >> i) & 1) << 1);
    if ((rc = lr_rec_levels(max_shell, *id - 1, v, &nlev))) return rc;
    if (nlev < 5) return lr_rec_join(max_shell, *id, lvl, signs, x);
    /* an approximation: any levels 0..3, no sign on a zero */
    for (int i = 0; i < 24; i++) {
        int neg = (signs >> i) & 1;
        if (neg && v[lvl[i]] == 0) return LR_FAIL(LR_EFORMAT, "p12x: coordinate %d: negative zero", i);
        x[i] = (int8_t)(neg ? -v[lvl[i]] : v[lvl[i]]);
    }
    return LR_OK;
}

typedef struct {
    const lr_leech_matrix *m;
    lr_rec *L;
    const uint64_t *idx;
    const uint8_t *gain;
} fill_ctx;

static int five_levels(int max_shell, uint64_t idx, int *five)
{
    int cls, n;
    uint8_t v[5];
    int rc = lr_leech_index_class(idx, max_shell, &cls);
    if (!rc) rc = lr_rec_levels(max_shell, cls, v, &n);
    *five = !rc && n == 5;
    return rc;
}

/* Pass 1: exceptions per row (exc_ptr[r + 1], one word per row). */
static int count_rows(void *p, int r0, int r1)
{
    fill_ctx *c = p;
    int nblk = c->m->nblk;
    for (int r = r0; r < r1; r++) {
        uint32_t n = 0;
        for (size_t b = (size_t)r * nblk; b < (size_t)(r + 1) * nblk; b++) {
            int five, rc = five_levels(c->m->max_shell, c->idx[b], &five);
            if (rc) return lr_wrap(rc, "p12x unfold: row %d block %zu", r, b % nblk);
            n += (uint32_t)five;
        }
        c->L->exc_ptr[r + 1] = n;
    }
    return LR_OK;
}

/* Pass 2: rows [r0, r1) own main bytes [12 r0 nblk, 12 r1 nblk) and
 * exceptions [exc_ptr[r0], exc_ptr[r1]). */
static int fill_rows(void *p, int r0, int r1)
{
    fill_ctx *c = p;
    lr_rec *L = c->L;
    int nblk = c->m->nblk, ms = c->m->max_shell;
    uint32_t e = L->exc_ptr[r0];
    for (size_t b = (size_t)r0 * nblk; b < (size_t)r1 * nblk; b++) {
        int8_t x[24];
        int exc, rc = lr_leech_unrank(c->idx[b], ms, x);
        if (!rc) rc = lr_p12x_encode(x, ms, c->gain[b], L->data + LR_REC12_BYTES * b, &exc);
        if (!rc && exc) {
            L->exc_idx[e] = (uint32_t)b;
            rc = lr_rec14_encode(x, ms, c->gain[b], L->exc_rec + (size_t)LR_REC14_BYTES * e);
            e++;
        }
        if (rc) return lr_wrap(rc, "p12x unfold: row %zu block %zu", b / nblk, b % nblk);
    }
    return LR_OK;
}

int lr_p12x_unfold(const lr_leech_matrix *m, int nthreads, lr_rec *L)
{
    int rc = lr_rec_from_matrix(L, LR_REC_P12X, m);
    if (rc) return rc;
    uint64_t *idx = NULL;
    uint8_t *gain = NULL;
    rc = lr_rec_alloc_data(L, LR_REC12_BYTES * L->nblocks);
    if (!rc) rc = lr_rec_unpack(m, nthreads, &idx, &gain);
    fill_ctx c = { m, L, idx, gain };
    if (!rc) rc = lr_vram_parallel(m->rows, nthreads, count_rows, &c);
    if (!rc) {
        for (int r = 0; r < m->rows; r++) L->exc_ptr[r + 1] += L->exc_ptr[r];
        L->nexc = L->exc_ptr[m->rows];
        L->exc_idx = malloc(sizeof(uint32_t) * (L->nexc ? L->nexc : 1));
        L->exc_rec = calloc((size_t)L->nexc * LR_REC14_BYTES + LR_REC_PAD, 1);
        if (!L->exc_idx || !L->exc_rec) rc = LR_FAIL(LR_ENOMEM, "p12x unfold: out of memory for %u exceptions", L->nexc);
    }
    if (!rc) rc = lr_vram_parallel(m->rows, nthreads, fill_rows, &c);
    free(idx), free(gain);
    if (rc) lr_rec_free(L);
    return rc;
}
