/* The artifact reader: maps a file (or takes a buffer) and validates every
 * structural fact before handing out a single pointer. Each check names the
 * file, the tensor when there is one, and the problem; nothing here reads a
 * byte it has not bounds-checked first. The data pass (tensor checksums and
 * payload checks) is in artifact_verify.c. */
#include "kernels/rotation.h" /* lr_rot_factor: which head widths the per-head rotation serves */
#include "loader/arch.h"
#include "loader/artifact_format.h"
#include "loader/codec.h"
#include "loader/model_impl.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define BAD(m, fmt, ...) LR_FAIL(LR_EFORMAT, "%s: " fmt, (m)->label, ##__VA_ARGS__)
#define BADT(m, name, fmt, ...) LR_FAIL(LR_EFORMAT, "%s: tensor %s: " fmt, (m)->label, name, ##__VA_ARGS__)

#define MAX_TENSORS 65536

typedef unsigned long long ull;

/* [off, off + len) lies inside [0, size). */
static int in_bounds(uint64_t off, uint64_t len, uint64_t size) { return len <= size && off <= size - len; }

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

static int checksum_ok(const lr_model *m, const uint8_t *p, size_t n, uint64_t want)
{
    return (m->flags & LR_MODEL_NO_CHECKSUMS) || XXH3_64bits(p, n) == want;
}

/* ---- header and section table ---- */

typedef struct { uint32_t type, subtype; uint64_t off, len, sum; } section;
typedef struct { uint64_t off, len; const char *what; } region;

static int cmp_region(const void *a, const void *b)
{
    const region *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static const char *section_name(uint32_t type)
{
    switch (type) {
    case LRA_SECT_CONFIG: return "config";
    case LRA_SECT_TOKENIZER: return "tokenizer";
    case LRA_SECT_TENSORS: return "tensor table";
    case LRA_SECT_DATA: return "data";
    }
    return "?";
}

static int parse_header(lr_model *m, section *sect, int *nsect)
{
    const uint8_t *h = m->base;
    if (m->size < LRA_HEADER_BYTES)
        return BAD(m, "file is %zu bytes, shorter than the %d-byte header (truncated or not an artifact)", m->size,
                   LRA_HEADER_BYTES);
    if (memcmp(h + LRA_H_MAGIC, LRA_MAGIC, LRA_MAGIC_BYTES))
        return BAD(m, "bad magic: not a leechrt model artifact");
    uint32_t ver = lra_rd32(h + LRA_H_VERSION);
    if (ver != LRA_VERSION) return BAD(m, "format version %u, this reader reads version %d", ver, LRA_VERSION);
    if (lra_rd32(h + LRA_H_HEADER_BYTES) != LRA_HEADER_BYTES)
        return BAD(m, "header size %u, expected %d", lra_rd32(h + LRA_H_HEADER_BYTES), LRA_HEADER_BYTES);
    if (!checksum_ok(m, h, LRA_H_SUM, lra_rd64(h + LRA_H_SUM))) return BAD(m, "header checksum mismatch");
    uint64_t fb = lra_rd64(h + LRA_H_FILE_BYTES);
    if (fb != m->size)
        return BAD(m, "file is %zu bytes but its header says %llu (truncated or extended)", m->size, (ull)fb);
    if (lra_rd32(h + LRA_H_FLAGS) || !all_zero(h + 52, LRA_H_SUM - 52))
        return BAD(m, "header flags or reserved bytes are not zero");
    uint64_t so = lra_rd64(h + LRA_H_SECT_OFFSET);
    uint32_t sc = lra_rd32(h + LRA_H_SECT_COUNT);
    if (lra_rd32(h + LRA_H_SECT_ENTRY) != LRA_SECT_ENTRY_BYTES)
        return BAD(m, "section entry size %u, expected %d", lra_rd32(h + LRA_H_SECT_ENTRY), LRA_SECT_ENTRY_BYTES);
    if (sc < 1 || sc > LRA_MAX_SECTIONS) return BAD(m, "section count %u is not in 1..%d", sc, LRA_MAX_SECTIONS);
    if (so < LRA_HEADER_BYTES || so % 8 || !in_bounds(so, (uint64_t)sc * LRA_SECT_ENTRY_BYTES, m->size))
        return BAD(m, "section table at %llu (%u entries) is misplaced or outside the file", (ull)so, sc);
    const uint8_t *st = m->base + so;
    if (!checksum_ok(m, st, (size_t)sc * LRA_SECT_ENTRY_BYTES, lra_rd64(h + LRA_H_SECT_SUM)))
        return BAD(m, "section table checksum mismatch");

    region reg[LRA_MAX_SECTIONS + 2];
    int nreg = 0;
    reg[nreg++] = (region){ 0, LRA_HEADER_BYTES, "header" };
    reg[nreg++] = (region){ so, (uint64_t)sc * LRA_SECT_ENTRY_BYTES, "section table" };
    for (uint32_t i = 0; i < sc; i++) {
        const uint8_t *e = st + (size_t)i * LRA_SECT_ENTRY_BYTES;
        section s = { lra_rd32(e + LRA_S_TYPE), lra_rd32(e + LRA_S_SUBTYPE), lra_rd64(e + LRA_S_OFFSET),
                      lra_rd64(e + LRA_S_LENGTH), lra_rd64(e + LRA_S_SUM) };
        if (s.type < LRA_SECT_CONFIG || s.type > LRA_SECT_DATA)
            return BAD(m, "section %u has unknown type %u", i, s.type);
        for (uint32_t j = 0; j < i; j++)
            if (sect[j].type == s.type) return BAD(m, "duplicate %s section", section_name(s.type));
        if (s.type != LRA_SECT_TOKENIZER && s.subtype)
            return BAD(m, "%s section: subtype %u (must be 0)", section_name(s.type), s.subtype);
        if (s.off % 64) return BAD(m, "%s section offset %llu is not 64-byte aligned", section_name(s.type), (ull)s.off);
        if (!in_bounds(s.off, s.len, m->size))
            return BAD(m, "%s section [%llu, +%llu) runs past the end of the %zu-byte file", section_name(s.type),
                       (ull)s.off, (ull)s.len, m->size);
        sect[i] = s;
        reg[nreg++] = (region){ s.off, s.len, section_name(s.type) };
    }
    /* Sorted by start, a region overlaps an earlier one iff it starts
     * before the furthest end so far (empty regions overlap nothing). */
    qsort(reg, (size_t)nreg, sizeof reg[0], cmp_region);
    int far = 0;
    for (int i = 1; i < nreg; i++) {
        if (!reg[i].len) continue;
        if (reg[far].off + reg[far].len > reg[i].off) return BAD(m, "%s overlaps %s", reg[i].what, reg[far].what);
        if (reg[i].off + reg[i].len > reg[far].off + reg[far].len) far = i;
    }
    *nsect = (int)sc;
    return LR_OK;
}

/* ---- config and tokenizer ---- */

static int parse_config(lr_model *m, const section *s)
{
    if (s->len != LRA_CONFIG_BYTES)
        return BAD(m, "config section is %llu bytes, expected %d", (ull)s->len, LRA_CONFIG_BYTES);
    const uint8_t *c = m->base + s->off;
    if (!checksum_ok(m, c, LRA_CONFIG_BYTES, s->sum)) return BAD(m, "config section checksum mismatch");
    const uint32_t flags = lra_rd32(c + LRA_C_FLAGS);
    if (!all_zero(c + 168, LRA_CONFIG_BYTES - 168) || (flags & ~LRA_CFG_ROTATED_RESIDUAL))
        return BAD(m, "config: unknown flags or reserved bytes are not zero");
    if (!(flags & LRA_CFG_ROTATED_RESIDUAL) && lra_rd64(c + LRA_C_RESID_SEED))
        return BAD(m, "config: a residual rotation seed without the rotated-residual flag");
    lr_model_config *k = &m->cfg;
    memcpy(k->arch, c + LRA_C_ARCH, LRA_ARCH_LEN);
    memcpy(k->name, c + LRA_C_NAME, LRA_MODEL_NAME_LEN);
    /* free text from a GGUF or a folder name, printed by every tool: a control
       character (an escape sequence, a line break) reads as '?' */
    for (size_t i = 0; i < LRA_MODEL_NAME_LEN && k->name[i]; i++)
        if ((unsigned char)k->name[i] < 0x20 || k->name[i] == 0x7f) k->name[i] = '?';
    k->hidden = lra_rd32(c + LRA_C_HIDDEN);
    k->n_layers = lra_rd32(c + LRA_C_LAYERS);
    k->n_heads = lra_rd32(c + LRA_C_HEADS);
    k->n_kv_heads = lra_rd32(c + LRA_C_KV_HEADS);
    k->head_dim = lra_rd32(c + LRA_C_HEAD_DIM);
    k->intermediate = lra_rd32(c + LRA_C_INTER);
    k->vocab = lra_rd32(c + LRA_C_VOCAB);
    k->max_context = lra_rd32(c + LRA_C_MAX_CTX);
    k->bos_id = lra_rd32(c + LRA_C_BOS);
    k->eos_id = lra_rd32(c + LRA_C_EOS);
    uint32_t tied = lra_rd32(c + LRA_C_TIED);
    k->tied_head = tied > 1 ? 2 : (int)tied; /* 2 = invalid, reported by the check */
    k->rope_theta = lra_rdf64(c + LRA_C_ROPE_THETA);
    k->norm_eps = lra_rdf64(c + LRA_C_NORM_EPS);
    k->rotated_residual = (flags & LRA_CFG_ROTATED_RESIDUAL) != 0;
    k->residual_seed = lra_rd64(c + LRA_C_RESID_SEED);
    int rc = lr_arch_check_config(k, m->label);
    /* A non-terminated string must not reach callers who print it. */
    k->arch[sizeof k->arch - 1] = 0;
    k->name[sizeof k->name - 1] = 0;
    return rc;
}

static int parse_tokenizer(lr_model *m, const section *s)
{
    if (s->subtype != LR_TOK_JSON && s->subtype != LR_TOK_JSON_GZIP)
        return BAD(m, "tokenizer section: unknown kind %u", s->subtype);
    if (s->len < 1 || s->len > lr_tok_json_max())
        return BAD(m, "tokenizer section: %llu bytes is not in [1, %zu]", (ull)s->len, lr_tok_json_max());
    const uint8_t *p = m->base + s->off;
    if (!checksum_ok(m, p, s->len, s->sum)) return BAD(m, "tokenizer section checksum mismatch");
    if (s->subtype == LR_TOK_JSON_GZIP && (s->len < 18 || p[0] != 0x1f || p[1] != 0x8b))
        return BAD(m, "tokenizer section: kind gzip but the blob is not gzip data");
    m->tok_kind = (int)s->subtype;
    m->tok = p;
    m->tok_bytes = s->len;
    return LR_OK;
}

/* ---- the tensor table ---- */

static int name_ok(const uint8_t *p)
{
    const uint8_t *end = memchr(p, 0, LRA_NAME_LEN);
    if (!end || end == p) return 0;
    for (const uint8_t *q = p; q < end; q++)
        if (*q < 0x21 || *q > 0x7e) return 0;
    return all_zero(end, (size_t)(p + LRA_NAME_LEN - end));
}

static int parse_params(lr_model *m, const char *name, const uint8_t *r, lr_tensor_desc *d)
{
    const uint8_t *p = r + LRA_T_PARAMS;
    if (d->codec == LR_CODEC_LEECH) {
        d->leech.max_shell = (int)lra_rd32(p + LRA_P_LEECH_MAX_SHELL);
        d->leech.gain_bits = (int)lra_rd32(p + LRA_P_LEECH_GAIN_BITS);
        d->leech.rot_kind = (int)lra_rd32(p + LRA_P_LEECH_ROT_KIND);
        d->leech.rot_seed = lra_rd64(p + LRA_P_LEECH_ROT_SEED);
        for (int i = 0; i < 4; i++) d->leech.centroid[i] = lra_rdf32(p + LRA_P_LEECH_CENTROID + 4 * i);
        /* Out-of-range reads of small ints are caught by lr_desc_parts; a huge u32 maps to -1. */
        if (lra_rd32(p + LRA_P_LEECH_MAX_SHELL) > 64) d->leech.max_shell = -1;
        if (lra_rd32(p + LRA_P_LEECH_GAIN_BITS) > 64) d->leech.gain_bits = -1;
        if (lra_rd32(p + LRA_P_LEECH_ROT_KIND) > 64) d->leech.rot_kind = -1;
        if (lra_rd32(p + LRA_P_LEECH_INDEX_BITS) != 47)
            return BADT(m, name, "leech index bits %u (the archive has 47)", lra_rd32(p + LRA_P_LEECH_INDEX_BITS));
        if (!all_zero(p + 40, 8)) return BADT(m, name, "codec parameter reserved bytes are not zero");
    } else if (d->codec == LR_CODEC_INT8G) {
        uint32_t g = lra_rd32(p + LRA_P_I8_GROUP), k = lra_rd32(p + LRA_P_I8_SB_KIND);
        d->i8.group = g > 65536 ? -1 : (int)g;
        d->i8.sb_kind = k > 64 ? -1 : (int)k;
        if (!all_zero(p + 8, LRA_PARAMS_BYTES - 8)) return BADT(m, name, "codec parameter reserved bytes are not zero");
    } else if ((d->codec == LR_CODEC_F32 || d->codec == LR_CODEC_F16 || d->codec == LR_CODEC_BF16) &&
               !all_zero(p, LRA_PARAMS_BYTES)) {
        return BADT(m, name, "codec %s takes no parameters but they are not zero", lr_codec_name(d->codec));
    }
    return LR_OK;
}

/* One tensor record -> view, checking it against the data section. */
static int parse_tensor(lr_model *m, int i, const uint8_t *r)
{
    if (!name_ok(r + LRA_T_NAME))
        return BAD(m, "tensor #%d: name is empty, not NUL-terminated, not zero-padded or not printable ASCII", i);
    memcpy(m->names[i], r + LRA_T_NAME, LRA_NAME_LEN);
    const char *name = m->names[i];
    lr_tensor_view *t = &m->t[i];
    t->name = name;

    lr_tensor_desc d;
    memset(&d, 0, sizeof d);
    uint32_t codec = lra_rd32(r + LRA_T_CODEC), ndim = lra_rd32(r + LRA_T_NDIM);
    /* Clamped so absurd values still print as themselves up to a point. */
    d.codec = codec > 1000000 ? 1000000 : (int)codec;
    d.ndim = ndim > 1000000 ? 1000000 : (int)ndim;
    for (int k = 0; k < 4; k++) d.dims[k] = lra_rd64(r + LRA_T_DIMS + 8 * k);
    if (lra_rd32(r + LRA_T_FLAGS) || !all_zero(r + 140, 4))
        return BADT(m, name, "flags or reserved bytes are not zero");
    int rc = parse_params(m, name, r, &d);
    if (rc) return rc;
    int nparts;
    uint64_t want[4];
    if ((rc = lr_desc_parts(&d, &nparts, want))) return lr_wrap(rc, "%s: tensor %s", m->label, name);
    if (lra_rd32(r + LRA_T_NPARTS) != (uint32_t)nparts)
        return BADT(m, name, "%u parts, codec %s has %d", lra_rd32(r + LRA_T_NPARTS), lr_codec_name(d.codec), nparts);

    uint32_t align = lra_rd32(r + LRA_T_ALIGN);
    uint64_t off = lra_rd64(r + LRA_T_OFFSET), len = lra_rd64(r + LRA_T_LENGTH);
    if (align != 64 && align != 4096) return BADT(m, name, "alignment %u (must be 64 or 4096)", align);
    if (off % align) return BADT(m, name, "data offset %llu is not a multiple of its alignment %u", (ull)off, align);
    if (off < m->data_off || !in_bounds(off - m->data_off, len, m->data_len))
        return BADT(m, name, "data [%llu, +%llu) lies outside the data section [%llu, +%llu)", (ull)off, (ull)len,
                    (ull)m->data_off, (ull)m->data_len);

    /* Parts: exact codec sizes, 64-byte aligned, inside the data, disjoint,
     * and the data ends where the last part ends. */
    uint64_t end = 0;
    for (int k = 0; k < LRA_MAX_PARTS; k++) {
        uint64_t po = lra_rd64(r + LRA_T_PARTS + 16 * k), pl = lra_rd64(r + LRA_T_PARTS + 16 * k + 8);
        const char *pn = lr_part_name(d.codec, k);
        if (k >= nparts) {
            if (po || pl) return BADT(m, name, "unused part %d is not zero", k);
            continue;
        }
        if (pl != want[k])
            return BADT(m, name, "part %s is %llu bytes, codec %s with this shape needs %llu", pn, (ull)pl,
                        lr_codec_name(d.codec), (ull)want[k]);
        if (pl == 0) {
            if (po) return BADT(m, name, "empty part %s has offset %llu (must be 0)", pn, (ull)po);
            continue;
        }
        if (po % LRA_PART_ALIGN) return BADT(m, name, "part %s offset %llu is not 64-byte aligned", pn, (ull)po);
        if (!in_bounds(po, pl, len))
            return BADT(m, name, "part %s [%llu, +%llu) runs past the tensor's %llu bytes", pn, (ull)po, (ull)pl,
                        (ull)len);
        for (int j = 0; j < k; j++) {
            const lr_tensor_part *q = &t->parts[j];
            if (q->bytes && po < q->offset + q->bytes && q->offset < po + pl)
                return BADT(m, name, "part %s overlaps part %s", pn, lr_part_name(d.codec, j));
        }
        t->parts[k] = (lr_tensor_part){ po, pl };
        if (po + pl > end) end = po + pl;
    }
    if (end != len)
        return BADT(m, name, "data length %llu but its parts end at %llu", (ull)len, (ull)end);

    t->codec = d.codec;
    t->ndim = d.ndim;
    memcpy(t->dims, d.dims, sizeof t->dims);
    t->rows = d.ndim >= 2 ? d.dims[0] : 1;
    t->cols = d.ndim >= 2 ? d.dims[1] : d.dims[0];
    if (d.ndim > 2)
        for (int k = 2; k < d.ndim; k++) t->cols *= d.dims[k];
    lr_desc_nelem(&d, &t->nelem);
    t->data = m->base + off;
    t->data_bytes = len;
    t->file_offset = off;
    t->align = align;
    t->checksum = lra_rd64(r + LRA_T_SUM);
    t->nparts = nparts;
    if (d.codec == LR_CODEC_LEECH) {
        lr_leech_params *L = &t->u.leech;
        L->max_shell = d.leech.max_shell;
        L->gain_bits = d.leech.gain_bits;
        L->rot_kind = d.leech.rot_kind;
        L->rot_seed = d.leech.rot_seed;
        memcpy(L->centroid, d.leech.centroid, sizeof L->centroid);
        L->nblk = (int)(t->cols / 24);
        L->tail = (int)(t->cols % 24);
        L->row_scale = (const float *)(const void *)(t->data + t->parts[0].offset);
        L->archive = t->data + t->parts[1].offset;
        L->archive_bytes = t->parts[1].bytes;
        L->tail_f16 = L->tail ? (const uint16_t *)(const void *)(t->data + t->parts[2].offset) : NULL;
    } else if (d.codec == LR_CODEC_INT8G) {
        t->u.i8.group = d.i8.group;
        t->u.i8.q = (const int8_t *)(t->data + t->parts[0].offset);
        t->u.i8.scale_bias = (const uint16_t *)(const void *)(t->data + t->parts[1].offset);
    } else {
        t->u.dense = t->data + t->parts[0].offset;
    }
    return LR_OK;
}

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
    const lr_model *m = ctx;
    return strcmp(m->names[*(const int *)a], m->names[*(const int *)b]);
}
static int cmp_by_offset(const void *a, const void *b, void *ctx)
{
    const lr_model *m = ctx;
    const lr_tensor_view *x = &m->t[*(const int *)a], *y = &m->t[*(const int *)b];
    return x->file_offset < y->file_offset ? -1 : x->file_offset > y->file_offset;
}

static void sort_indices(lr_model *m, int *idx, int (*cmp)(const void *, const void *, void *))
{
    for (int i = 0; i < m->n; i++) idx[i] = i;
    qsort_r(idx, (size_t)m->n, sizeof idx[0], cmp, m);
}

/* Whether a tensor name is a projection reading the residual stream (its
 * normed form): the ones a rotated residual feeds already rotated (a layer's
 * reader roles; the head, also a reader, is model-level and not one). */
int lr_reads_residual(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && strcmp(dot + 1, "output") && lr_stream_reader_norm(dot + 1) != NULL;
}

/* The tensors must be exactly the architecture's set, with its shapes and
 * codecs the engines can use for each role. */
static int check_tensor_set(lr_model *m)
{
    lr_arch_tensor *want;
    int nwant, rc = lr_arch_tensors(&m->cfg, &want, &nwant);
    if (rc) return lr_wrap(rc, "%s", m->label);
    int fm, fk;
    if (m->cfg.rotated_residual && lr_rot_factor((int)m->cfg.hidden, &fm, &fk))
        rc = BAD(m, "config: rotated residual, but hidden %u is not a width the rotation serves "
                 "(odd factor <= 31 times a power of two >= 4)", m->cfg.hidden);
    for (int i = 0; i < nwant && !rc; i++) {
        const lr_arch_tensor *w = &want[i];
        const lr_tensor_view *t = lr_model_tensor(m, w->name);
        if (!t) {
            rc = BADT(m, w->name, "missing (architecture %s, %u layers%s)", m->cfg.arch, m->cfg.n_layers,
                      m->cfg.tied_head ? ", tied head" : "");
            break;
        }
        int dense = t->codec == LR_CODEC_F32 || t->codec == LR_CODEC_F16 || t->codec == LR_CODEC_BF16;
        if (t->ndim != w->ndim || t->dims[0] != w->dims[0] || (w->ndim == 2 && t->dims[1] != w->dims[1])) {
            rc = BADT(m, w->name, "shape [%llu, %llu] (ndim %d), the config implies [%llu, %llu] (ndim %d)",
                      (ull)t->dims[0], (ull)t->dims[1], t->ndim, (ull)w->dims[0], (ull)w->dims[1], w->ndim);
        } else if (w->kind == LR_KIND_NORM && !dense) {
            rc = BADT(m, w->name, "a norm must be f32, f16 or bf16, not %s", lr_codec_name(t->codec));
        } else if (w->kind == LR_KIND_EMBED && !dense && t->codec != LR_CODEC_INT8G) {
            rc = BADT(m, w->name, "the embedding must be f32, f16, bf16 or int8g, not %s", lr_codec_name(t->codec));
        } else if (t->codec == LR_CODEC_LEECH && t->u.leech.rot_kind == LR_ROT_HEADS) {
            /* per head: only the input that comes in heads, in blocks the rotation serves */
            const size_t nl = strlen(w->name), sl = strlen(".attn_output");
            if (nl < sl || strcmp(w->name + nl - sl, ".attn_output"))
                rc = BADT(m, w->name, "rotation kind 2 (per head) is only for attn_output");
            else if (lr_rot_factor((int)m->cfg.head_dim, &fm, &fk))
                rc = BADT(m, w->name, "rotation kind 2 (per head): head_dim %u is not a width the rotation serves "
                          "(odd factor <= 31 times a power of two >= 4)", m->cfg.head_dim);
        } else if (t->codec == LR_CODEC_LEECH && t->u.leech.rot_kind == LR_ROT_HADAMARD &&
                   lr_rot_factor((int)t->cols, &fm, &fk)) {
            /* the engines rotate the input over its whole width: refused here, not at run time */
            rc = BADT(m, w->name, "rotation kind 1 over %llu columns, not a width the rotation serves "
                      "(odd factor <= 31 times a power of two >= 4)", (ull)t->cols);
        }
        /* a rotated residual arrives rotated by R: a Leech reader of it must be
         * stored against R itself (kind 1, the residual's seed) */
        if (!rc && m->cfg.rotated_residual && t->codec == LR_CODEC_LEECH && lr_reads_residual(w->name) &&
            (t->u.leech.rot_kind != LR_ROT_HADAMARD || t->u.leech.rot_seed != m->cfg.residual_seed))
            rc = BADT(m, w->name, "the residual is rotated (seed %llu), but this reader's rotation is kind %d, "
                      "seed %llu (must be kind 1 with the residual's seed)", (ull)m->cfg.residual_seed,
                      t->u.leech.rot_kind, (ull)t->u.leech.rot_seed);
    }
    if (!rc && m->n != nwant) {
        /* Names are unique and every wanted one is present: find the extra. */
        for (int i = 0; i < m->n && !rc; i++) {
            int found = 0;
            for (int j = 0; j < nwant && !found; j++) found = !strcmp(m->names[i], want[j].name);
            if (!found)
                rc = BADT(m, m->names[i], "unexpected for architecture %s with %u layers%s", m->cfg.arch,
                          m->cfg.n_layers, m->cfg.tied_head ? " and a tied head" : "");
        }
    }
    free(want);
    return rc;
}

static int parse_tensors(lr_model *m, const section *s)
{
    if (s->len < LRA_TT_HEAD_BYTES) return BAD(m, "tensor table is %llu bytes, shorter than its head", (ull)s->len);
    const uint8_t *p = m->base + s->off;
    if (!checksum_ok(m, p, s->len, s->sum)) return BAD(m, "tensor table checksum mismatch");
    uint32_t n = lra_rd32(p + LRA_TT_COUNT);
    if (lra_rd32(p + LRA_TT_RECORD) != LRA_TENSOR_BYTES)
        return BAD(m, "tensor record size %u, expected %d", lra_rd32(p + LRA_TT_RECORD), LRA_TENSOR_BYTES);
    if (!all_zero(p + 8, LRA_TT_HEAD_BYTES - 8)) return BAD(m, "tensor table reserved bytes are not zero");
    if (n < 1 || n > MAX_TENSORS) return BAD(m, "tensor count %u is not in 1..%d", n, MAX_TENSORS);
    if (s->len != LRA_TT_HEAD_BYTES + (uint64_t)n * LRA_TENSOR_BYTES)
        return BAD(m, "tensor table is %llu bytes, %u records need %llu", (ull)s->len, n,
                   (ull)(LRA_TT_HEAD_BYTES + (uint64_t)n * LRA_TENSOR_BYTES));
    m->t = calloc(n, sizeof *m->t);
    m->names = calloc(n, sizeof *m->names);
    m->by_name = calloc(n, sizeof *m->by_name);
    int *by_off = calloc(n, sizeof *by_off);
    if (!m->t || !m->names || !m->by_name || !by_off) {
        free(by_off);
        return LR_FAIL(LR_ENOMEM, "%s: %u tensors: out of memory", m->label, n);
    }
    m->n = (int)n;
    int rc = LR_OK;
    for (uint32_t i = 0; i < n && !rc; i++)
        rc = parse_tensor(m, (int)i, p + LRA_TT_HEAD_BYTES + (size_t)i * LRA_TENSOR_BYTES);
    if (!rc) {
        sort_indices(m, m->by_name, cmp_by_name);
        for (int i = 1; i < m->n && !rc; i++)
            if (!strcmp(m->names[m->by_name[i]], m->names[m->by_name[i - 1]]))
                rc = BADT(m, m->names[m->by_name[i]], "duplicate name");
    }
    if (!rc) {
        sort_indices(m, by_off, cmp_by_offset);
        const lr_tensor_view *far = &m->t[by_off[0]]; /* the furthest-reaching so far */
        for (int i = 1; i < m->n && !rc; i++) {
            const lr_tensor_view *b = &m->t[by_off[i]];
            if (far->file_offset + far->data_bytes > b->file_offset)
                rc = BADT(m, b->name, "data [%llu, +%llu) overlaps tensor %s [%llu, +%llu)", (ull)b->file_offset,
                          (ull)b->data_bytes, far->name, (ull)far->file_offset, (ull)far->data_bytes);
            if (b->file_offset + b->data_bytes > far->file_offset + far->data_bytes) far = b;
        }
    }
    free(by_off);
    if (!rc) rc = check_tensor_set(m);
    return rc;
}

/* ---- open / close ---- */

static int parse(lr_model *m)
{
    section sect[LRA_MAX_SECTIONS];
    int nsect = 0, rc = parse_header(m, sect, &nsect);
    if (rc) return rc;
    const section *cfg = NULL, *tok = NULL, *tt = NULL, *data = NULL;
    for (int i = 0; i < nsect; i++) {
        if (sect[i].type == LRA_SECT_CONFIG) cfg = &sect[i];
        if (sect[i].type == LRA_SECT_TOKENIZER) tok = &sect[i];
        if (sect[i].type == LRA_SECT_TENSORS) tt = &sect[i];
        if (sect[i].type == LRA_SECT_DATA) data = &sect[i];
    }
    m->nsect = nsect;
    for (int i = 0; i < nsect; i++)
        m->sect[i] = (lr_section_info){ sect[i].type, sect[i].subtype, sect[i].off, sect[i].len, sect[i].sum };
    if (!cfg) return BAD(m, "no config section");
    if (!tt) return BAD(m, "no tensor table section");
    if (!data) return BAD(m, "no data section");
    m->data_off = data->off;
    m->data_len = data->len;
    m->data_sum = data->sum;
    if ((rc = parse_config(m, cfg))) return rc;
    if (tok && (rc = parse_tokenizer(m, tok))) return rc;
    if ((rc = parse_tensors(m, tt))) return rc;
    if (!(m->flags & LR_MODEL_SKIP_DATA)) rc = lr_model_verify_data(m, 0, NULL);
    return rc;
}

static int open_common(lr_model *m, lr_model **out)
{
    int rc = parse(m);
    if (rc) {
        lr_model_close(m);
        return rc;
    }
    *out = m;
    return LR_OK;
}

int lr_model_open_mem(const void *buf, size_t n, const char *label, unsigned flags, lr_model **out)
{
    *out = NULL;
    if ((uintptr_t)buf % 64) return LR_FAIL(LR_EINVAL, "%s: buffer is not 64-byte aligned", label);
    lr_model *m = calloc(1, sizeof *m);
    if (!m) return LR_FAIL(LR_ENOMEM, "%s: out of memory", label);
    snprintf(m->label, sizeof m->label, "%s", label);
    m->base = buf;
    m->size = n;
    m->flags = flags;
    return open_common(m, out);
}

int lr_model_open(const char *path, unsigned flags, lr_model **out)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO would wait for a writer before the check below */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return LR_FAIL(LR_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return LR_FAIL(LR_EIO, "%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return LR_FAIL(LR_EFORMAT, "%s: empty file", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return LR_FAIL(LR_EIO, "%s: mmap: %s", path, strerror(e));
    lr_model *m = calloc(1, sizeof *m);
    if (!m) {
        munmap(p, (size_t)st.st_size);
        return LR_FAIL(LR_ENOMEM, "%s: out of memory", path);
    }
    snprintf(m->label, sizeof m->label, "%s", path);
    m->base = p;
    m->size = (size_t)st.st_size;
    m->mapped = 1;
    m->flags = flags;
    return open_common(m, out);
}

void lr_model_close(lr_model *m)
{
    if (!m) return;
    if (m->mapped) munmap((void *)m->base, m->size);
    free(m->t);
    free(m->names);
    free(m->by_name);
    free(m);
}

/* ---- lookups ---- */

const lr_model_config *lr_model_cfg(const lr_model *m) { return &m->cfg; }
const char *lr_model_path(const lr_model *m) { return m->label; }
size_t lr_model_file_bytes(const lr_model *m) { return m->size; }
int lr_model_tensor_count(const lr_model *m) { return m->n; }
const lr_tensor_view *lr_model_tensor_at(const lr_model *m, int i)
{
    return i >= 0 && i < m->n ? &m->t[i] : NULL;
}

const lr_tensor_view *lr_model_tensor(const lr_model *m, const char *name)
{
    int lo = 0, hi = m->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(m->names[m->by_name[mid]], name);
        if (c == 0) return &m->t[m->by_name[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

const lr_tensor_view *lr_model_layer_tensor(const lr_model *m, int layer, const char *role)
{
    char name[64];
    lr_tensor_name(name, layer, role);
    return lr_model_tensor(m, name);
}

int lr_model_section_count(const lr_model *m) { return m->nsect; }
const lr_section_info *lr_model_section_at(const lr_model *m, int i)
{
    return i >= 0 && i < m->nsect ? &m->sect[i] : NULL;
}

int lr_model_tokenizer(const lr_model *m, int *kind, const void **blob, size_t *n)
{
    *kind = m->tok_kind;
    *blob = m->tok;
    *n = m->tok_bytes;
    return LR_OK;
}
