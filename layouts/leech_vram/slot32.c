/* Slot32, the published one-hot-mask record: [id 9][gain 1][sign 24]
 * [mask of level 1 : 24] ... [mask of level L-1 : 24] (the origin is the
 * 10-bit header alone), groups of 32 flat blocks at one stride (the
 * group's widest record in bytes), record b at bases[b / 32] + (b % 32) *
 * stride. A trailing partial group still spans 32 strides, so every base
 * is a multiple of 32 bytes. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/rec.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

int lr_slot32_width(int max_shell, int id, int *bits)
{
    uint8_t v[5];
    int n, rc = lr_rec_levels(max_shell, id - 1, v, &n);
    if (rc) return rc;
    *bits = id ? 34 + 24 * (n - 1) : 10;
    return LR_OK;
}

int lr_slot32_encode(const int8_t x[24], int max_shell, int gain, uint8_t *rec)
{
    int id, nlev;
    uint8_t lvl[24];
    uint32_t signs;
    if (gain < 0 || gain > 1) return LR_FAIL(LR_EINVAL, "slot32: gain %d", gain);
    int rc = lr_rec_split(x, max_shell, &id, lvl, &signs, &nlev);
    if (rc) return rc;
    lr_rec_put_bits(rec, 0, 9, (uint32_t)id);
    lr_rec_put_bits(rec, 9, 1, (uint32_t)gain);
    if (!id) return LR_OK;
    lr_rec_put_bits(rec, 10, 24, signs);
    for (int k = 1; k < nlev; k++) {
        uint32_t mk = 0;
        for (int i = 0; i < 24; i++) mk |= (uint32_t)(lvl[i] == k) << i;
        lr_rec_put_bits(rec, 34 + 24 * (size_t)(k - 1), 24, mk);
    }
    return LR_OK;
}

int lr_slot32_decode(const uint8_t *rec, size_t stride, int max_shell, int gain_bits, int8_t x[24], int *gain)
{
    const lr_leech_class *cl;
    int nc, w, rc = lr_leech_classes(max_shell, &cl, &nc);
    if (rc) return rc;
    if (stride < 2) return LR_FAIL(LR_EFORMAT, "slot32: stride %zu", stride);
    int id = (int)lr_rec_bits(rec, 0, 9);
    *gain = (int)lr_rec_bits(rec, 9, 1);
    if (id > nc) return LR_FAIL(LR_EFORMAT, "slot32: class id %d outside 0..%d", id, nc);
    if (*gain >= 1 << gain_bits) return LR_FAIL(LR_EFORMAT, "slot32: gain %d with %d gain bits", *gain, gain_bits);
    if ((rc = lr_slot32_width(max_shell, id, &w))) return rc;
    if ((size_t)w > 8 * stride) return LR_FAIL(LR_EFORMAT, "slot32: %d-bit record in a %zu-byte stride", w, stride);
    for (size_t b = (size_t)w; b < 8 * stride; b += 16) {
        int n = 8 * stride - b < 16 ? (int)(8 * stride - b) : 16;
        if (lr_rec_bits(rec, b, n)) return LR_FAIL(LR_EFORMAT, "slot32: bits past the record set");
    }
    uint8_t lvl[24];
    memset(lvl, 0, sizeof lvl);
    if (!id) { memset(x, 0, 24); return LR_OK; }
    uint32_t signs = lr_rec_bits(rec, 10, 24), seen = 0;
    int nlev = 1 + (w - 34) / 24;
    for (int k = 1; k < nlev; k++) {
        uint32_t mk = lr_rec_bits(rec, 34 + 24 * (size_t)(k - 1), 24);
        if (mk & seen) return LR_FAIL(LR_EFORMAT, "slot32: level masks overlap");
        seen |= mk;
        for (int i = 0; i < 24; i++)
            if ((mk >> i) & 1) lvl[i] = (uint8_t)k;
    }
    return lr_rec_join(max_shell, id, lvl, signs, x);
}

typedef struct {
    const lr_leech_matrix *m;
    lr_rec *L;
    const uint64_t *idx;
    const uint8_t *gain;
} fill_ctx;

/* Pass 1: each group's stride (in bases[g + 1] until the prefix sum). */
static int stride_groups(void *p, int g0, int g1)
{
    fill_ctx *c = p;
    for (int g = g0; g < g1; g++) {
        int wmax = 10;
        size_t b1 = ((size_t)g + 1) * LR_REC_GROUP < c->L->nblocks ? ((size_t)g + 1) * LR_REC_GROUP : c->L->nblocks;
        for (size_t b = (size_t)g * LR_REC_GROUP; b < b1; b++) {
            int cls, w, rc = lr_leech_index_class(c->idx[b], c->m->max_shell, &cls);
            if (!rc) rc = lr_slot32_width(c->m->max_shell, cls + 1, &w);
            if (rc) return lr_wrap(rc, "slot32 unfold: row %zu block %zu", b / c->m->nblk, b % c->m->nblk);
            if (w > wmax) wmax = w;
        }
        c->L->bases[g + 1] = (uint32_t)((wmax + 7) / 8);
    }
    return LR_OK;
}

/* Pass 2: groups [g0, g1) own bytes [bases[g0], bases[g1]): nothing shared. */
static int fill_groups(void *p, int g0, int g1)
{
    fill_ctx *c = p;
    lr_rec *L = c->L;
    for (int g = g0; g < g1; g++) {
        size_t stride = (L->bases[g + 1] - L->bases[g]) / LR_REC_GROUP;
        size_t b1 = ((size_t)g + 1) * LR_REC_GROUP < L->nblocks ? ((size_t)g + 1) * LR_REC_GROUP : L->nblocks;
        for (size_t b = (size_t)g * LR_REC_GROUP; b < b1; b++) {
            int8_t x[24];
            int rc = lr_leech_unrank(c->idx[b], c->m->max_shell, x);
            if (!rc) rc = lr_slot32_encode(x, c->m->max_shell, c->gain[b], L->data + L->bases[g] + (b % LR_REC_GROUP) * stride);
            if (rc) return lr_wrap(rc, "slot32 unfold: row %zu block %zu", b / c->m->nblk, b % c->m->nblk);
        }
    }
    return LR_OK;
}

int lr_slot32_unfold(const lr_leech_matrix *m, int nthreads, lr_rec *L)
{
    int rc = lr_rec_from_matrix(L, LR_REC_SLOT32, m);
    if (rc) return rc;
    L->ngroups = (L->nblocks + LR_REC_GROUP - 1) / LR_REC_GROUP;
    if (L->ngroups > (1u << 30)) { lr_rec_free(L); return LR_FAIL(LR_ERANGE, "slot32: %zu groups", L->ngroups); }
    L->bases = calloc(L->ngroups + 1, sizeof *L->bases);
    if (!L->bases) { lr_rec_free(L); return LR_FAIL(LR_ENOMEM, "slot32: out of memory"); }
    uint64_t *idx = NULL;
    uint8_t *gain = NULL;
    rc = lr_rec_unpack(m, nthreads, &idx, &gain);
    fill_ctx c = { m, L, idx, gain };
    if (!rc) rc = lr_vram_parallel((int)L->ngroups, nthreads, stride_groups, &c);
    if (!rc) {
        uint64_t at = 0;
        for (size_t g = 0; g < L->ngroups; g++) {
            at += (uint64_t)LR_REC_GROUP * L->bases[g + 1];
            if (at > 0xffffffffu - LR_REC_PAD) { rc = LR_FAIL(LR_ERANGE, "slot32: stream past 4 GB"); break; }
            L->bases[g + 1] = (uint32_t)at;
        }
    }
    if (!rc) rc = lr_rec_alloc_data(L, L->bases[L->ngroups]);
    if (!rc) rc = lr_vram_parallel((int)L->ngroups, nthreads, fill_groups, &c);
    free(idx), free(gain);
    if (rc) lr_rec_free(L);
    return rc;
}
