/* The streaming writer. File order: header and section table (patched at
 * the end), config, tokenizer, then from 4096 the data section (tensors in
 * the order written, each aligned), then the tensor table. Checksums are
 * computed on the fly as the bytes stream out. */
#include "loader/artifact_write.h"
#include "loader/arch.h"
#include "loader/artifact_format.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define NSECT_MAX 4
#define DATA_ALIGN 4096
#define AUTO_BIG (1u << 20)

struct lr_writer {
    lr_afile af;
    char path[4096];
    int failed;                 /* sticky: after an error only abort is possible */
    uint64_t pos;               /* bytes written = file offset */
    lr_model_config cfg;
    int tok_kind;
    uint64_t cfg_off, tok_off, tok_len, data_off;
    uint64_t cfg_sum, tok_sum;
    uint32_t default_align;
    XXH3_state_t *data_state, *t_state;
    /* tensors */
    uint8_t *rec;               /* n records of LRA_TENSOR_BYTES */
    int n, cap;
    /* the tensor being written */
    int open;
    lr_tensor_desc cur;
    int nparts, part;
    uint64_t part_len[4], part_off[4], in_part, t_off, t_len;
};

static int emit(lr_writer *w, const void *p, size_t n, int hashed)
{
    errno = 0;
    if (n && fwrite(p, 1, n, w->af.f) != n) {
        w->failed = 1;
        return LR_FAIL(LR_EIO, "%s: write failed: %s", w->path, errno ? strerror(errno) : "short write");
    }
    if (hashed) {
        XXH3_64bits_update(w->data_state, p, n);
        if (w->open) XXH3_64bits_update(w->t_state, p, n);
    }
    w->pos += n;
    return LR_OK;
}

static int pad_to(lr_writer *w, uint64_t target, int hashed)
{
    static const uint8_t zeros[4096];
    while (w->pos < target) {
        uint64_t n = target - w->pos < sizeof zeros ? target - w->pos : sizeof zeros;
        int rc = emit(w, zeros, (size_t)n, hashed);
        if (rc) return rc;
    }
    return LR_OK;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static void encode_config(uint8_t c[LRA_CONFIG_BYTES], const lr_model_config *k)
{
    memset(c, 0, LRA_CONFIG_BYTES);
    memcpy(c + LRA_C_ARCH, k->arch, strnlen(k->arch, LRA_ARCH_LEN - 1));
    memcpy(c + LRA_C_NAME, k->name, strnlen(k->name, LRA_MODEL_NAME_LEN - 1));
    lra_wr32(c + LRA_C_HIDDEN, k->hidden);
    lra_wr32(c + LRA_C_LAYERS, k->n_layers);
    lra_wr32(c + LRA_C_HEADS, k->n_heads);
    lra_wr32(c + LRA_C_KV_HEADS, k->n_kv_heads);
    lra_wr32(c + LRA_C_HEAD_DIM, k->head_dim);
    lra_wr32(c + LRA_C_INTER, k->intermediate);
    lra_wr32(c + LRA_C_VOCAB, k->vocab);
    lra_wr32(c + LRA_C_MAX_CTX, k->max_context);
    lra_wr32(c + LRA_C_BOS, k->bos_id);
    lra_wr32(c + LRA_C_EOS, k->eos_id);
    lra_wr32(c + LRA_C_TIED, (uint32_t)k->tied_head);
    lra_wrf64(c + LRA_C_ROPE_THETA, k->rope_theta);
    lra_wrf64(c + LRA_C_NORM_EPS, k->norm_eps);
    if (k->rotated_residual) {
        lra_wr32(c + LRA_C_FLAGS, LRA_CFG_ROTATED_RESIDUAL);
        lra_wr64(c + LRA_C_RESID_SEED, k->residual_seed);
    }
}

int lr_writer_open(const char *path, const lr_model_config *cfg, int tok_kind, const void *tok, size_t tok_bytes,
                   lr_writer **out)
{
    *out = NULL;
    int rc = lr_arch_check_config(cfg, path);
    if (rc) return rc;
    if (tok_kind != LR_TOK_NONE && tok_kind != LR_TOK_JSON && tok_kind != LR_TOK_JSON_GZIP)
        return LR_FAIL(LR_EINVAL, "%s: unknown tokenizer kind %d", path, tok_kind);
    if (tok_kind != LR_TOK_NONE && (!tok || !tok_bytes || tok_bytes > lr_tok_json_max()))
        return LR_FAIL(LR_EINVAL, "%s: tokenizer blob empty or over %zu bytes", path, lr_tok_json_max());
    lr_writer *w = calloc(1, sizeof *w);
    if (!w) return LR_FAIL(LR_ENOMEM, "%s: out of memory", path);
    snprintf(w->path, sizeof w->path, "%s", path);
    w->cfg = *cfg;
    w->tok_kind = tok_kind;
    w->data_state = XXH3_createState();
    w->t_state = XXH3_createState();
    if (!w->data_state || !w->t_state) {
        lr_writer_abort(w);
        return LR_FAIL(LR_ENOMEM, "%s: out of memory", path);
    }
    if ((rc = lr_afile_open(&w->af, path))) {
        lr_writer_abort(w);
        return rc;
    }
    setvbuf(w->af.f, NULL, _IOFBF, 4u << 20);
    /* Header and section table are zeros until finish patches them. */
    uint64_t meta = LRA_HEADER_BYTES + NSECT_MAX * LRA_SECT_ENTRY_BYTES;
    w->cfg_off = align_up(meta, 64);
    uint8_t c[LRA_CONFIG_BYTES];
    encode_config(c, cfg);
    w->cfg_sum = XXH3_64bits(c, sizeof c);
    if ((rc = pad_to(w, w->cfg_off, 0)) || (rc = emit(w, c, sizeof c, 0))) {
        lr_writer_abort(w);
        return rc;
    }
    if (tok_kind != LR_TOK_NONE) {
        w->tok_off = align_up(w->pos, 64);
        w->tok_len = tok_bytes;
        w->tok_sum = XXH3_64bits(tok, tok_bytes);
        if ((rc = pad_to(w, w->tok_off, 0)) || (rc = emit(w, tok, tok_bytes, 0))) {
            lr_writer_abort(w);
            return rc;
        }
    }
    w->data_off = align_up(w->pos, DATA_ALIGN);
    if ((rc = pad_to(w, w->data_off, 0))) {
        lr_writer_abort(w);
        return rc;
    }
    XXH3_64bits_reset(w->data_state);
    *out = w;
    return LR_OK;
}

int lr_writer_set_default_align(lr_writer *w, uint32_t align)
{
    if (align != 0 && align != 64 && align != 4096)
        return LR_FAIL(LR_EINVAL, "%s: alignment %u (0, 64 or 4096)", w->path, align);
    w->default_align = align;
    return LR_OK;
}

static int name_valid(const char *s)
{
    size_t n = strnlen(s, LRA_NAME_LEN);
    if (n == 0 || n >= LRA_NAME_LEN) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x21 || s[i] > 0x7e) return 0;
    return 1;
}

/* After a part completes (or at begin), skip empty parts and pad up to the
 * next part's offset. */
static int settle(lr_writer *w)
{
    while (w->part < w->nparts && w->in_part == w->part_len[w->part]) {
        w->part++;
        w->in_part = 0;
        if (w->part < w->nparts && w->part_len[w->part]) {
            int rc = pad_to(w, w->t_off + w->part_off[w->part], 1);
            if (rc) return rc;
        }
    }
    return LR_OK;
}

int lr_writer_begin(lr_writer *w, const lr_tensor_desc *d)
{
    if (w->failed) return LR_FAIL(LR_EINVAL, "%s: writer failed earlier", w->path);
    if (w->open) return LR_FAIL(LR_EINVAL, "%s: tensor %s still open", w->path, w->cur.name);
    if (!name_valid(d->name))
        return LR_FAIL(LR_EINVAL, "%s: tensor name \"%.64s\" is empty, too long or not printable ASCII", w->path, d->name);
    for (int i = 0; i < w->n; i++)
        if (!strncmp((const char *)w->rec + (size_t)i * LRA_TENSOR_BYTES, d->name, LRA_NAME_LEN))
            return LR_FAIL(LR_EINVAL, "%s: tensor %s written twice", w->path, d->name);
    int rc = lr_desc_parts(d, &w->nparts, w->part_len);
    if (rc) return lr_wrap(rc, "%s: tensor %s", w->path, d->name);
    uint64_t end = 0;
    for (int k = 0; k < w->nparts; k++) {
        w->part_off[k] = w->part_len[k] ? align_up(end, LRA_PART_ALIGN) : 0;
        if (w->part_len[k]) end = w->part_off[k] + w->part_len[k];
    }
    uint32_t align = d->align ? d->align : w->default_align ? w->default_align : end >= AUTO_BIG ? 4096 : 64;
    if (align != 64 && align != 4096)
        return LR_FAIL(LR_EINVAL, "%s: tensor %s: alignment %u (64 or 4096)", w->path, d->name, align);
    if ((rc = pad_to(w, align_up(w->pos, align), 1))) return rc;
    w->cur = *d;
    w->cur.align = align;
    w->t_off = w->pos;
    w->t_len = end;
    w->part = 0;
    w->in_part = 0;
    w->open = 1;
    XXH3_64bits_reset(w->t_state);
    /* The first part is at offset 0; settle skips leading empty parts. */
    if (w->part_len[0] == 0 && (rc = settle(w))) return rc;
    return LR_OK;
}

int lr_writer_write(lr_writer *w, const void *p, size_t n)
{
    const uint8_t *b = p;
    if (!w->open) return LR_FAIL(LR_EINVAL, "%s: write with no tensor open", w->path);
    while (n) {
        if (w->part >= w->nparts)
            return LR_FAIL(LR_EINVAL, "%s: tensor %s: %zu bytes more than its codec needs", w->path, w->cur.name, n);
        uint64_t room = w->part_len[w->part] - w->in_part;
        size_t take = room < n ? (size_t)room : n;
        int rc = emit(w, b, take, 1);
        if (rc) return rc;
        w->in_part += take;
        b += take;
        n -= take;
        if ((rc = settle(w))) return rc;
    }
    return LR_OK;
}

int lr_writer_end(lr_writer *w)
{
    if (!w->open) return LR_FAIL(LR_EINVAL, "%s: end with no tensor open", w->path);
    if (w->part < w->nparts)
        return LR_FAIL(LR_EINVAL, "%s: tensor %s: part %s short by %llu bytes", w->path, w->cur.name,
                       lr_part_name(w->cur.codec, w->part),
                       (unsigned long long)(w->part_len[w->part] - w->in_part));
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 256;
        uint8_t *r = realloc(w->rec, (size_t)cap * LRA_TENSOR_BYTES);
        if (!r) return LR_FAIL(LR_ENOMEM, "%s: out of memory", w->path);
        w->rec = r;
        w->cap = cap;
    }
    uint8_t *r = w->rec + (size_t)w->n * LRA_TENSOR_BYTES;
    const lr_tensor_desc *d = &w->cur;
    memset(r, 0, LRA_TENSOR_BYTES);
    memcpy(r + LRA_T_NAME, d->name, strnlen(d->name, LRA_NAME_LEN));
    lra_wr32(r + LRA_T_CODEC, (uint32_t)d->codec);
    lra_wr32(r + LRA_T_NDIM, (uint32_t)d->ndim);
    for (int k = 0; k < 4; k++) lra_wr64(r + LRA_T_DIMS + 8 * k, k < d->ndim ? d->dims[k] : 0);
    lra_wr32(r + LRA_T_ALIGN, d->align);
    lra_wr64(r + LRA_T_OFFSET, w->t_off);
    lra_wr64(r + LRA_T_LENGTH, w->t_len);
    lra_wr64(r + LRA_T_SUM, XXH3_64bits_digest(w->t_state));
    lra_wr32(r + LRA_T_NPARTS, (uint32_t)w->nparts);
    for (int k = 0; k < w->nparts; k++) {
        lra_wr64(r + LRA_T_PARTS + 16 * k, w->part_off[k]);
        lra_wr64(r + LRA_T_PARTS + 16 * k + 8, w->part_len[k]);
    }
    uint8_t *p = r + LRA_T_PARAMS;
    if (d->codec == LR_CODEC_LEECH) {
        lra_wr32(p + LRA_P_LEECH_MAX_SHELL, (uint32_t)d->leech.max_shell);
        lra_wr32(p + LRA_P_LEECH_GAIN_BITS, (uint32_t)d->leech.gain_bits);
        lra_wr32(p + LRA_P_LEECH_ROT_KIND, (uint32_t)d->leech.rot_kind);
        lra_wr32(p + LRA_P_LEECH_INDEX_BITS, 47);
        lra_wr64(p + LRA_P_LEECH_ROT_SEED, d->leech.rot_seed);
        for (int i = 0; i < 4; i++) lra_wrf32(p + LRA_P_LEECH_CENTROID + 4 * i, d->leech.centroid[i]);
    } else if (d->codec == LR_CODEC_INT8G) {
        lra_wr32(p + LRA_P_I8_GROUP, (uint32_t)d->i8.group);
        lra_wr32(p + LRA_P_I8_SB_KIND, (uint32_t)d->i8.sb_kind);
    }
    w->n++;
    w->open = 0;
    return LR_OK;
}

int lr_writer_tensor(lr_writer *w, const lr_tensor_desc *d, const void *const parts[])
{
    int rc = lr_writer_begin(w, d);
    for (int k = 0; !rc && k < w->nparts; k++)
        if (w->part_len[k]) rc = lr_writer_write(w, parts[k], (size_t)w->part_len[k]);
    return rc ? rc : lr_writer_end(w);
}

uint64_t lr_writer_bytes(const lr_writer *w) { return w->pos; }

static void put_section(uint8_t *e, uint32_t type, uint32_t sub, uint64_t off, uint64_t len, uint64_t sum)
{
    lra_wr32(e + LRA_S_TYPE, type);
    lra_wr32(e + LRA_S_SUBTYPE, sub);
    lra_wr64(e + LRA_S_OFFSET, off);
    lra_wr64(e + LRA_S_LENGTH, len);
    lra_wr64(e + LRA_S_SUM, sum);
}

static int write_tail(lr_writer *w)
{
    if (w->open) return LR_FAIL(LR_EINVAL, "%s: tensor %s still open at finish", w->path, w->cur.name);
    if (w->n == 0) return LR_FAIL(LR_EINVAL, "%s: no tensors", w->path);
    uint64_t data_len = w->pos - w->data_off, data_sum = XXH3_64bits_digest(w->data_state);
    /* Tensor table. */
    uint64_t tt_off = align_up(w->pos, 64), tt_len = LRA_TT_HEAD_BYTES + (uint64_t)w->n * LRA_TENSOR_BYTES;
    uint8_t head[LRA_TT_HEAD_BYTES] = { 0 };
    lra_wr32(head + LRA_TT_COUNT, (uint32_t)w->n);
    lra_wr32(head + LRA_TT_RECORD, LRA_TENSOR_BYTES);
    XXH3_64bits_reset(w->t_state);
    XXH3_64bits_update(w->t_state, head, sizeof head);
    XXH3_64bits_update(w->t_state, w->rec, (size_t)w->n * LRA_TENSOR_BYTES);
    uint64_t tt_sum = XXH3_64bits_digest(w->t_state);
    int rc;
    if ((rc = pad_to(w, tt_off, 0)) || (rc = emit(w, head, sizeof head, 0)) ||
        (rc = emit(w, w->rec, (size_t)w->n * LRA_TENSOR_BYTES, 0)))
        return rc;
    /* Section table and header, at the front. */
    uint8_t st[NSECT_MAX * LRA_SECT_ENTRY_BYTES] = { 0 };
    int ns = 0;
    put_section(st + LRA_SECT_ENTRY_BYTES * ns++, LRA_SECT_CONFIG, 0, w->cfg_off, LRA_CONFIG_BYTES, w->cfg_sum);
    if (w->tok_kind != LR_TOK_NONE)
        put_section(st + LRA_SECT_ENTRY_BYTES * ns++, LRA_SECT_TOKENIZER, (uint32_t)w->tok_kind, w->tok_off, w->tok_len,
                    w->tok_sum);
    put_section(st + LRA_SECT_ENTRY_BYTES * ns++, LRA_SECT_TENSORS, 0, tt_off, tt_len, tt_sum);
    put_section(st + LRA_SECT_ENTRY_BYTES * ns++, LRA_SECT_DATA, 0, w->data_off, data_len, data_sum);
    uint8_t h[LRA_HEADER_BYTES] = { 0 };
    memcpy(h + LRA_H_MAGIC, LRA_MAGIC, LRA_MAGIC_BYTES);
    lra_wr32(h + LRA_H_VERSION, LRA_VERSION);
    lra_wr32(h + LRA_H_HEADER_BYTES, LRA_HEADER_BYTES);
    lra_wr64(h + LRA_H_FILE_BYTES, w->pos);
    lra_wr64(h + LRA_H_SECT_OFFSET, LRA_HEADER_BYTES);
    lra_wr32(h + LRA_H_SECT_COUNT, (uint32_t)ns);
    lra_wr32(h + LRA_H_SECT_ENTRY, LRA_SECT_ENTRY_BYTES);
    lra_wr64(h + LRA_H_SECT_SUM, XXH3_64bits(st, (size_t)ns * LRA_SECT_ENTRY_BYTES));
    lra_wr64(h + LRA_H_SUM, XXH3_64bits(h, LRA_H_SUM));
    if (fflush(w->af.f) || fseeko(w->af.f, 0, SEEK_SET) || fwrite(h, 1, sizeof h, w->af.f) != sizeof h ||
        fwrite(st, 1, sizeof st, w->af.f) != sizeof st || fflush(w->af.f))
        return LR_FAIL(LR_EIO, "%s: writing the header failed", w->path);
    return LR_OK;
}

int lr_writer_finish(lr_writer *w)
{
    int rc = w->failed ? LR_FAIL(LR_EINVAL, "%s: writer failed earlier", w->path) : write_tail(w);
    if (!rc) {
        /* The writer's checks are the reader's checks: re-read the structure
         * (not the data, which was hashed as it streamed) before publishing. */
        lr_model *m;
        rc = lr_model_open(w->af.tmp, LR_MODEL_SKIP_DATA, &m);
        if (rc) rc = lr_wrap(rc, "%s: the file written does not validate", w->path);
        else lr_model_close(m);
    }
    if (rc) {
        lr_writer_abort(w);
        return rc;
    }
    rc = lr_afile_commit(&w->af);
    w->af.f = NULL;
    w->af.tmp[0] = 0;
    lr_writer_abort(w); /* frees what is left; nothing to unlink */
    return rc;
}

void lr_writer_abort(lr_writer *w)
{
    if (!w) return;
    if (w->af.f || w->af.tmp[0]) lr_afile_abort(&w->af);
    if (w->data_state) XXH3_freeState(w->data_state);
    if (w->t_state) XXH3_freeState(w->t_state);
    free(w->rec);
    free(w);
}
