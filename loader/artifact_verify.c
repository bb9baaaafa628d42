/* The data pass of the reader: each tensor's checksum and the facts about
 * its payload that its size alone cannot show (Leech indices inside the
 * ball, scales and dense values finite). Runs per tensor so the loader can
 * do it in its unfold threads while the bytes are hot. */
#include "layouts/leech/leech.h"
#include "loader/model_impl.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef unsigned long long ull;

static int f16_finite(uint16_t h) { return (h & 0x7c00) != 0x7c00; }
static int bf16_finite(uint16_t h) { return (h & 0x7f80) != 0x7f80; }

static int check_f16(const lr_model *m, const lr_tensor_view *t, const char *what, const uint16_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (!f16_finite(p[i]))
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: %s value %llu is not finite", m->label, t->name, what, (ull)i);
    return LR_OK;
}

/* With one gain bit (the served case) a block is exactly 6 bytes, the
 * big-endian value index << 1 | gain: one load and compare per block, about
 * 10x faster than the general unpacker it must agree with (both run in the
 * tests). Returns the first block whose index is outside the ball, or nb. */
static uint64_t first_bad_g1(const uint8_t *a, uint64_t nb, uint64_t npts)
{
    uint64_t i = 0;
    for (; i + 1 < nb; i++) { /* 8-byte loads stay inside the archive until the last block */
        uint64_t v;
        memcpy(&v, a + 6 * i, 8);
        if ((__builtin_bswap64(v) >> 17) >= npts) return i;
    }
    for (; i < nb; i++) {
        const uint8_t *p = a + 6 * i;
        uint64_t v = (uint64_t)p[0] << 40 | (uint64_t)p[1] << 32 | (uint64_t)p[2] << 24 | (uint64_t)p[3] << 16 |
                     (uint64_t)p[4] << 8 | p[5];
        if ((v >> 1) >= npts) return i;
    }
    return nb;
}

/* Indices are unpacked 4096 blocks at a time: a multiple of 8 blocks always
 * starts on a byte boundary whatever the gain bits. */
static int check_leech(const lr_model *m, const lr_tensor_view *t)
{
    const lr_leech_params *L = &t->u.leech;
    for (uint64_t r = 0; r < t->rows; r++)
        if (!(isfinite(L->row_scale[r]) && L->row_scale[r] >= 0))
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: row scale %llu = %g is not finite and >= 0", m->label, t->name,
                           (ull)r, (double)L->row_scale[r]);
    if (L->tail && check_f16(m, t, "dense tail", L->tail_f16, t->rows * (uint64_t)L->tail)) return LR_EFORMAT;
    enum { CHUNK = 4096 };
    uint64_t idx[CHUNK];
    uint8_t gain[CHUNK];
    uint64_t nb = t->rows * (uint64_t)L->nblk, npts = lr_leech_ball_points(L->max_shell);
    unsigned bits = (unsigned)(LR_LEECH_INDEX_BITS + L->gain_bits);
    if (L->gain_bits == 1 && L->archive_bytes == nb * 6) {
        uint64_t bad = first_bad_g1(L->archive, nb, npts);
        if (bad == nb) return LR_OK;
        /* Fall through to the general unpacker for its message. */
    }
    for (uint64_t b0 = 0; b0 < nb; b0 += CHUNK) {
        uint64_t n = nb - b0 < CHUNK ? nb - b0 : CHUNK;
        size_t at = (size_t)(b0 / 8 * bits), len = lr_leech_archive_bytes(n, L->gain_bits);
        if (at > L->archive_bytes || len > L->archive_bytes - at)
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: archive shorter than its blocks", m->label, t->name);
        int rc = lr_leech_archive_unpack(L->archive + at, len, n, L->gain_bits, idx, gain);
        if (rc)
            return lr_wrap(LR_EFORMAT, "%s: tensor %s: archive blocks from %llu (row %llu)", m->label, t->name,
                           (ull)b0, (ull)(b0 / (uint64_t)L->nblk));
        for (uint64_t i = 0; i < n; i++)
            if (idx[i] >= npts)
                return LR_FAIL(LR_EFORMAT, "%s: tensor %s: block %llu (row %llu) has index %llu, past the %llu points of the ball",
                               m->label, t->name, (ull)(b0 + i), (ull)((b0 + i) / (uint64_t)L->nblk), (ull)idx[i],
                               (ull)npts);
    }
    return LR_OK;
}

int lr_model_verify_tensor(const lr_model *m, const lr_tensor_view *t)
{
    if (!(m->flags & LR_MODEL_NO_CHECKSUMS) && XXH3_64bits(t->data, t->data_bytes) != t->checksum)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: data checksum mismatch", m->label, t->name);
    switch (t->codec) {
    case LR_CODEC_LEECH: return check_leech(m, t);
    case LR_CODEC_INT8G:
        return check_f16(m, t, "scale/bias", t->u.i8.scale_bias, t->parts[1].bytes / 2);
    case LR_CODEC_F16: return check_f16(m, t, "f16", t->u.dense, t->nelem);
    case LR_CODEC_BF16: {
        const uint16_t *p = t->u.dense;
        for (uint64_t i = 0; i < t->nelem; i++)
            if (!bf16_finite(p[i]))
                return LR_FAIL(LR_EFORMAT, "%s: tensor %s: value %llu is not finite", m->label, t->name, (ull)i);
        return LR_OK;
    }
    case LR_CODEC_F32: {
        const float *p = t->u.dense;
        for (uint64_t i = 0; i < t->nelem; i++)
            if (!isfinite(p[i]))
                return LR_FAIL(LR_EFORMAT, "%s: tensor %s: value %llu is not finite", m->label, t->name, (ull)i);
        return LR_OK;
    }
    }
    return LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s: codec %d", m->label, t->name, t->codec);
}

typedef struct {
    const lr_model *m;
    int *order;      /* tensors, largest first, so the tail of the run is short jobs */
    lr_progress *progress;
} verify_ctx;

static int verify_job(void *arg, int j)
{
    verify_ctx *c = arg;
    const lr_model *m = c->m;
    if (j == 0) { /* the data section as a whole (padding included) */
        if (!(m->flags & LR_MODEL_NO_CHECKSUMS) && XXH3_64bits(m->base + m->data_off, m->data_len) != m->data_sum)
            return LR_FAIL(LR_EFORMAT, "%s: data section checksum mismatch", m->label);
        return LR_OK;
    }
    const lr_tensor_view *t = &m->t[c->order[j - 1]];
    int rc = lr_model_verify_tensor(m, t);
    if (!rc && c->progress) lr_progress_add(c->progress, t->data_bytes);
    return rc;
}

static int cmp_size_desc(const void *a, const void *b, void *ctx)
{
    const lr_model *m = ctx;
    uint64_t x = m->t[*(const int *)a].data_bytes, y = m->t[*(const int *)b].data_bytes;
    return x > y ? -1 : x < y;
}

int lr_model_verify_data(const lr_model *m, int nthreads, lr_progress *progress)
{
    verify_ctx c = { m, calloc((size_t)m->n + 1, sizeof(int)), progress };
    if (!c.order) return LR_FAIL(LR_ENOMEM, "%s: out of memory", m->label);
    for (int i = 0; i < m->n; i++) c.order[i] = i;
    qsort_r(c.order, (size_t)m->n, sizeof(int), cmp_size_desc, (void *)m);
    int rc = lr_parallel_for(nthreads, m->n + 1, verify_job, &c);
    free(c.order);
    return rc;
}

uint64_t lr_tensor_payload_bytes(const lr_tensor_view *t)
{
    uint64_t n = 0;
    for (int i = 0; i < t->nparts; i++) n += t->parts[i].bytes;
    return n;
}

double lr_tensor_bits_per_weight(const lr_tensor_view *t)
{
    return t->nelem ? 8.0 * (double)lr_tensor_payload_bytes(t) / (double)t->nelem : 0;
}
