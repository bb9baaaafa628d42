/* Planes14, the published 14-byte record: [id 9][gain 1][sign 24][p0 24]
 * [p1 24][p2 24][0 : 6], LSB-first, one record per block at 14 b. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/par.h"
#include "layouts/leech_vram/rec.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

int lr_rec14_encode(const int8_t x[24], int max_shell, int gain, uint8_t rec[14])
{
    int id, nlev;
    uint8_t lvl[24];
    uint32_t signs, p[3] = { 0, 0, 0 };
    if (gain < 0 || gain > 1) return LR_FAIL(LR_EINVAL, "rec14: gain %d", gain);
    int rc = lr_rec_split(x, max_shell, &id, lvl, &signs, &nlev);
    if (rc) return rc;
    for (int i = 0; i < 24; i++)
        for (int k = 0; k < 3; k++) p[k] |= (uint32_t)((lvl[i] >> k) & 1) << i;
    memset(rec, 0, 14);
    lr_rec_put_bits(rec, 0, 9, (uint32_t)id);
    lr_rec_put_bits(rec, 9, 1, (uint32_t)gain);
    lr_rec_put_bits(rec, 10, 24, signs);
    for (int k = 0; k < 3; k++) lr_rec_put_bits(rec, 34 + 24 * (size_t)k, 24, p[k]);
    return LR_OK;
}

int lr_rec14_decode(const uint8_t rec[14], int max_shell, int gain_bits, int8_t x[24], int *gain)
{
    int id = (int)lr_rec_bits(rec, 0, 9);
    *gain = (int)lr_rec_bits(rec, 9, 1);
    if (*gain >= 1 << gain_bits) return LR_FAIL(LR_EFORMAT, "rec14: gain %d with %d gain bits", *gain, gain_bits);
    if (lr_rec_bits(rec, 106, 6)) return LR_FAIL(LR_EFORMAT, "rec14: padding bits set");
    uint32_t signs = lr_rec_bits(rec, 10, 24), p[3];
    for (int k = 0; k < 3; k++) p[k] = lr_rec_bits(rec, 34 + 24 * (size_t)k, 24);
    uint8_t lvl[24];
    for (int i = 0; i < 24; i++)
        lvl[i] = (uint8_t)(((p[0] >> i) & 1) | ((p[1] >> i) & 1) << 1 | ((p[2] >> i) & 1) << 2);
    return lr_rec_join(max_shell, id, lvl, signs, x);
}

typedef struct {
    const lr_leech_matrix *m;
    lr_rec *L;
    const uint64_t *idx;
    const uint8_t *gain;
} fill_ctx;

/* Rows [r0, r1) own bytes [14 r0 nblk, 14 r1 nblk): nothing shared. */
static int fill_rows(void *p, int r0, int r1)
{
    fill_ctx *c = p;
    int nblk = c->m->nblk;
    for (size_t b = (size_t)r0 * nblk; b < (size_t)r1 * nblk; b++) {
        int8_t x[24];
        int rc = lr_leech_unrank(c->idx[b], c->m->max_shell, x);
        if (!rc) rc = lr_rec14_encode(x, c->m->max_shell, c->gain[b], c->L->data + LR_REC14_BYTES * b);
        if (rc) return lr_wrap(rc, "rec14 unfold: row %zu block %zu", b / nblk, b % nblk);
    }
    return LR_OK;
}

int lr_rec14_unfold(const lr_leech_matrix *m, int nthreads, lr_rec *L)
{
    int rc = lr_rec_from_matrix(L, LR_REC_P14, m);
    if (rc) return rc;
    uint64_t *idx = NULL;
    uint8_t *gain = NULL;
    rc = lr_rec_alloc_data(L, LR_REC14_BYTES * L->nblocks);
    if (!rc) rc = lr_rec_unpack(m, nthreads, &idx, &gain);
    fill_ctx c = { m, L, idx, gain };
    if (!rc) rc = lr_vram_parallel(m->rows, nthreads, fill_rows, &c);
    free(idx), free(gain);
    if (rc) lr_rec_free(L);
    return rc;
}
