/* Host reference decoding of tensor views (the ground truth for layouts,
 * kernels and the CPU engine) and the tokenizer blob. Slow and obvious on
 * purpose. */
#include "layouts/leech/leech.h"
#include "layouts/leech/shapegain.h"
#include "loader/model_impl.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/half.h"
#include "util/gunzip.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long ull;

static int decode_leech_rows(const lr_tensor_view *t, uint64_t r0, uint64_t n, float *out)
{
    const lr_leech_params *L = &t->u.leech;
    uint64_t nblk = (uint64_t)L->nblk, cols = t->cols;
    unsigned bits = (unsigned)(LR_LEECH_INDEX_BITS + L->gain_bits);
    /* Unpack from the last 8-block boundary (a byte boundary) at or before the first row. */
    uint64_t first = r0 * nblk, b0 = first / 8 * 8, nb = (r0 + n) * nblk - b0;
    uint64_t *idx = malloc((nb ? nb : 1) * sizeof *idx);
    uint8_t *gain = malloc(nb ? nb : 1);
    if (!idx || !gain) {
        free(idx);
        free(gain);
        return LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name);
    }
    int rc = LR_OK;
    if (nb) {
        size_t at = (size_t)(b0 / 8 * bits);
        rc = lr_leech_archive_unpack(L->archive + at, L->archive_bytes - at, nb, L->gain_bits, idx, gain);
        if (rc) rc = lr_wrap(rc, "tensor %s", t->name);
    }
    for (uint64_t r = 0; r < n && !rc; r++) {
        float *o = out + r * cols;
        float s = L->row_scale[r0 + r];
        for (uint64_t b = 0; b < nblk && !rc; b++) {
            uint64_t k = (r0 + r) * nblk + b - b0;
            int8_t x[24];
            if ((rc = lr_leech_unrank(idx[k], L->max_shell, x))) {
                rc = lr_wrap(rc, "tensor %s: row %llu block %llu", t->name, (ull)(r0 + r), (ull)b);
                break;
            }
            int norm = lr_leech_norm(x);
            float f = norm ? L->centroid[gain[k]] * s / sqrtf((float)norm) : 0.0f;
            for (int i = 0; i < 24; i++) o[24 * b + i] = (float)x[i] * f;
        }
        for (int i = 0; i < L->tail; i++)
            o[24 * nblk + (uint64_t)i] = lr_half_to_float(L->tail_f16[(r0 + r) * (uint64_t)L->tail + (uint64_t)i]);
    }
    free(idx);
    free(gain);
    return rc;
}

int lr_tensor_dequant_rows(const lr_tensor_view *t, uint64_t r0, uint64_t n, float *out)
{
    if (r0 > t->rows || n > t->rows - r0)
        return LR_FAIL(LR_ERANGE, "tensor %s: rows [%llu, +%llu) past %llu", t->name, (ull)r0, (ull)n, (ull)t->rows);
    uint64_t cols = t->cols, e0 = r0 * cols, ne = n * cols;
    switch (t->codec) {
    case LR_CODEC_F32: memcpy(out, (const float *)t->u.dense + e0, ne * 4); return LR_OK;
    case LR_CODEC_F16:
        for (uint64_t i = 0; i < ne; i++) out[i] = lr_half_to_float(((const uint16_t *)t->u.dense)[e0 + i]);
        return LR_OK;
    case LR_CODEC_BF16:
        for (uint64_t i = 0; i < ne; i++) out[i] = lr_bf16_to_float(((const uint16_t *)t->u.dense)[e0 + i]);
        return LR_OK;
    case LR_CODEC_INT8G: {
        uint64_t g = (uint64_t)t->u.i8.group;
        for (uint64_t i = 0; i < ne; i++) {
            const uint16_t *sb = t->u.i8.scale_bias + (e0 + i) / g * 2;
            out[i] = (float)t->u.i8.q[e0 + i] * lr_half_to_float(sb[0]) + lr_half_to_float(sb[1]);
        }
        return LR_OK;
    }
    case LR_CODEC_LEECH: return decode_leech_rows(t, r0, n, out);
    }
    return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: no host decoder for codec %s", t->name, lr_codec_name(t->codec));
}

int lr_tensor_leech_matrix(const lr_tensor_view *t, lr_leech_matrix *m)
{
    memset(m, 0, sizeof *m);
    if (t->codec != LR_CODEC_LEECH) return LR_FAIL(LR_EINVAL, "tensor %s: codec %s, not leech", t->name, lr_codec_name(t->codec));
    if (t->rows > INT_MAX || t->cols > INT_MAX) return LR_FAIL(LR_ERANGE, "tensor %s: too large for lr_leech_matrix", t->name);
    const lr_leech_params *L = &t->u.leech;
    m->rows = (int)t->rows;
    m->cols = (int)t->cols;
    m->nblk = L->nblk;
    m->tail = L->tail;
    m->max_shell = L->max_shell;
    m->gain_bits = L->gain_bits;
    memcpy(m->centroid, L->centroid, sizeof m->centroid);
    /* lr_leech_matrix has mutable pointers for the quantizer's output; a
     * view's matrix is read-only by contract (never freed or written). */
    m->row_scale = (float *)(uintptr_t)L->row_scale;
    m->archive = (uint8_t *)(uintptr_t)L->archive;
    m->archive_bytes = L->archive_bytes;
    m->tail_f16 = (uint16_t *)(uintptr_t)L->tail_f16;
    return LR_OK;
}

/* Gunzips with a cap so a hostile blob cannot exhaust memory. */

int lr_tok_load_stored(int kind, const void *bytes, size_t n, const char *name, lr_tok **out)
{
    *out = NULL;
    char *json = NULL;
    size_t jn = 0;
    if (kind != LR_TOK_JSON && kind != LR_TOK_JSON_GZIP) return LR_FAIL(LR_EINVAL, "%s: no tokenizer", name);
    int rc = kind == LR_TOK_JSON_GZIP ? lr_gunzip(bytes, n, lr_tok_json_max(), name, &json, &jn) : LR_OK;
    if (!rc) rc = lr_tok_load_hf_mem(json ? json : bytes, json ? jn : n, NULL, 0, name, out);
    free(json);
    return rc;
}

int lr_model_tokenizer_json(const lr_model *m, char **json, size_t *n)
{
    *json = NULL;
    *n = 0;
    if (m->tok_kind == LR_TOK_NONE) return LR_FAIL(LR_EINVAL, "%s: the artifact has no tokenizer", m->label);
    if (m->tok_kind == LR_TOK_JSON) {
        char *s = malloc(m->tok_bytes + 1);
        if (!s) return LR_FAIL(LR_ENOMEM, "%s: tokenizer: out of memory", m->label);
        memcpy(s, m->tok, m->tok_bytes);
        s[m->tok_bytes] = 0;
        *json = s;
        *n = m->tok_bytes;
        return LR_OK;
    }
    char what[sizeof m->label + 16];
    snprintf(what, sizeof what, "%s: tokenizer", m->label);
    return lr_gunzip(m->tok, m->tok_bytes, lr_tok_json_max(), what, json, n);
}
