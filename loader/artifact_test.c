/* Round trips through the artifact writer and reader: every codec, every
 * part byte, every config field and the tokenizer come back identical; the
 * synthetic generator is deterministic; a failed write leaves nothing. */
#include "layouts/leech/leech.h"
#include "layouts/leech/shapegain.h"
#include "loader/arch.h"
#include "loader/artifact_testlib.h"
#include "loader/artifact_write.h"
#include "loader/tokenizer/tokenizer.h"
#include "rt/demo_model.h"
#include "test/t.h"
#include "util/half.h"
#include "util/rng.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <math.h>
#include <zlib.h>

/* ---- a hand-made model using every codec ---- */

typedef struct {
    lr_tensor_desc d;
    int nparts;
    uint64_t bytes[4];
    uint8_t *part[4];
    uint64_t *idx; /* leech: the block indices */
    uint8_t *gain;
} tl_tensor;

static void make_tensor(tl_tensor *t, const lr_arch_tensor *a, int i, lr_rng *r)
{
    memset(t, 0, sizeof *t);
    lr_tensor_desc *d = &t->d;
    snprintf(d->name, sizeof d->name, "%s", a->name);
    d->ndim = a->ndim;
    d->dims[0] = a->dims[0];
    d->dims[1] = a->dims[1];
    static const int dense[3] = { LR_CODEC_F32, LR_CODEC_F16, LR_CODEC_BF16 };
    if (a->kind == LR_KIND_NORM) d->codec = dense[i % 3];
    else if (a->kind == LR_KIND_EMBED) d->codec = LR_CODEC_INT8G;
    else if (!strcmp(a->role, "attn_v")) d->codec = LR_CODEC_F16;
    else if (!strcmp(a->role, "attn_output")) d->codec = LR_CODEC_BF16;
    else d->codec = LR_CODEC_LEECH;
    if (d->codec == LR_CODEC_INT8G) d->i8.group = 64, d->i8.sb_kind = LR_INT8G_SB_F16;
    if (d->codec == LR_CODEC_LEECH) {
        d->leech.max_shell = 12;
        d->leech.gain_bits = !strcmp(a->role, "attn_q") ? 0 : !strcmp(a->role, "attn_k") ? 2 : 1;
        d->leech.rot_kind = (i & 1) ? LR_ROT_HADAMARD : LR_ROT_NONE;
        d->leech.rot_seed = (i & 1) ? 1000u + (unsigned)i : 0;
        for (int k = 0; k < 1 << d->leech.gain_bits; k++) d->leech.centroid[k] = 0.7f + 0.2f * (float)k;
    }
    lr_desc_parts(d, &t->nparts, t->bytes);
    for (int k = 0; k < t->nparts; k++) {
        t->part[k] = malloc(t->bytes[k] + 1);
        for (uint64_t b = 0; b < t->bytes[k]; b++) t->part[k][b] = (uint8_t)lr_rng_u64(r);
    }
    uint64_t rows = d->dims[0], cols = d->ndim == 2 ? d->dims[1] : d->dims[0];
    uint64_t nel = d->ndim == 2 ? rows * cols : rows;
    /* Random bytes are fine for int8 q; floats must be finite, indices in the ball. */
    if (d->codec == LR_CODEC_F32)
        for (uint64_t k = 0; k < nel; k++) ((float *)t->part[0])[k] = (float)(1 + 0.1 * lr_rng_signed(r));
    if (d->codec == LR_CODEC_F16 || d->codec == LR_CODEC_BF16)
        for (uint64_t k = 0; k < nel; k++) {
            float v = (float)lr_rng_signed(r);
            ((uint16_t *)t->part[0])[k] = d->codec == LR_CODEC_F16 ? lr_float_to_half(v) : lr_float_to_bf16(v);
        }
    if (d->codec == LR_CODEC_INT8G)
        for (uint64_t k = 0; k < t->bytes[1] / 2; k++)
            ((uint16_t *)t->part[1])[k] = lr_float_to_half((float)(0.01 * lr_rng_signed(r)));
    if (d->codec == LR_CODEC_LEECH) {
        uint64_t nb = rows * (cols / 24), tail = cols % 24;
        t->idx = malloc((nb + 1) * 8);
        t->gain = malloc(nb + 1);
        for (uint64_t k = 0; k < nb; k++) {
            t->idx[k] = k % 5 == 0 ? k % 3 : lr_rng_below(r, LR_LEECH_BALL12_POINTS); /* origin and shell 2 too */
            t->gain[k] = (uint8_t)lr_rng_below(r, 1u << d->leech.gain_bits);
        }
        lr_leech_archive_pack(t->idx, t->gain, nb, d->leech.gain_bits, t->part[1], t->bytes[1]);
        for (uint64_t k = 0; k < rows; k++) ((float *)t->part[0])[k] = (float)(0.05 + 0.01 * lr_rng_unit(r));
        for (uint64_t k = 0; k < rows * tail; k++) ((uint16_t *)t->part[2])[k] = lr_float_to_half((float)lr_rng_signed(r));
    }
}

static void free_tensors(tl_tensor *t, int n)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) free(t[i].part[k]);
        free(t[i].idx);
        free(t[i].gain);
    }
    free(t);
}

static int write_handmade(const char *path, const lr_model_config *c, tl_tensor **out, int *nout)
{
    lr_arch_tensor *at;
    int n, rc = lr_arch_tensors(c, &at, &n);
    if (rc) return rc;
    tl_tensor *t = calloc((size_t)n, sizeof *t);
    lr_rng r;
    lr_rng_seed(&r, 42);
    for (int i = 0; i < n; i++) make_tensor(&t[i], &at[i], i, &r);
    free(at);
    lr_writer *w;
    static const char tok[] = "{\"model\":{}}";
    if ((rc = lr_writer_open(path, c, LR_TOK_JSON, tok, sizeof tok - 1, &w))) goto done;
    /* Stream every tensor in odd-sized pieces to exercise part splitting. */
    for (int i = 0; i < n && !rc; i++) {
        if ((rc = lr_writer_begin(w, &t[i].d))) break;
        for (int k = 0; k < t[i].nparts && !rc; k++)
            for (uint64_t b = 0; b < t[i].bytes[k] && !rc; b += 777) {
                uint64_t m = t[i].bytes[k] - b < 777 ? t[i].bytes[k] - b : 777;
                rc = lr_writer_write(w, t[i].part[k] + b, (size_t)m);
            }
        if (!rc) rc = lr_writer_end(w);
    }
    if (rc) lr_writer_abort(w);
    else rc = lr_writer_finish(w);
done:
    *out = t;
    *nout = n;
    return rc;
}

static int test_roundtrip_every_codec(void)
{
    char path[512];
    tl_path(path, sizeof path, "handmade.lrt");
    lr_model_config c;
    T_OK(lr_synth_config("micro", &c));
    c.bos_id = 3;
    c.max_context = 1234;
    c.rope_theta = 5e5;
    c.norm_eps = 1e-5;
    snprintf(c.name, sizeof c.name, "hand made");
    tl_tensor *t;
    int n;
    T_OK(write_handmade(path, &c, &t, &n));
    lr_model *m;
    T_OK(lr_model_open(path, 0, &m));
    const lr_model_config *k = lr_model_cfg(m);
    T_ASSERT(!strcmp(k->arch, c.arch) && !strcmp(k->name, c.name), "config strings");
    T_ASSERT(k->hidden == c.hidden && k->n_layers == c.n_layers && k->n_heads == c.n_heads &&
                 k->n_kv_heads == c.n_kv_heads && k->head_dim == c.head_dim && k->intermediate == c.intermediate &&
                 k->vocab == c.vocab && k->max_context == c.max_context && k->bos_id == c.bos_id &&
                 k->eos_id == c.eos_id && k->tied_head == c.tied_head && k->rope_theta == c.rope_theta &&
                 k->norm_eps == c.norm_eps,
             "config fields differ");
    T_ASSERT(lr_model_tensor_count(m) == n, "%d tensors, wrote %d", lr_model_tensor_count(m), n);
    for (int i = 0; i < n; i++) {
        const lr_tensor_view *v = lr_model_tensor(m, t[i].d.name);
        T_ASSERT(v && v == lr_model_tensor_at(m, i), "tensor %s not found in order", t[i].d.name);
        T_ASSERT(v->codec == t[i].d.codec && v->ndim == t[i].d.ndim && v->dims[0] == t[i].d.dims[0] &&
                     v->dims[1] == t[i].d.dims[1] && v->nparts == t[i].nparts,
                 "tensor %s header", v->name);
        T_ASSERT(v->file_offset % v->align == 0, "tensor %s misaligned", v->name);
        for (int p = 0; p < v->nparts; p++) {
            T_ASSERT(v->parts[p].bytes == t[i].bytes[p], "tensor %s part %d size", v->name, p);
            T_ASSERT(!memcmp(v->data + v->parts[p].offset, t[i].part[p], t[i].bytes[p]), "tensor %s part %d bytes",
                     v->name, p);
        }
        if (v->codec == LR_CODEC_LEECH) {
            const lr_leech_params *L = &v->u.leech;
            T_ASSERT(L->gain_bits == t[i].d.leech.gain_bits && L->rot_kind == t[i].d.leech.rot_kind &&
                         L->rot_seed == t[i].d.leech.rot_seed && L->max_shell == 12 &&
                         !memcmp(L->centroid, t[i].d.leech.centroid, sizeof L->centroid),
                     "tensor %s leech params", v->name);
            T_ASSERT((uint64_t)L->nblk * 24 + (uint64_t)L->tail == v->cols, "nblk/tail");
            lr_leech_matrix lm;
            T_OK(lr_tensor_leech_matrix(v, &lm));
            T_ASSERT(lm.archive == L->archive && lm.rows == (int)v->rows && lm.gain_bits == L->gain_bits, "matrix");
            /* Host decode of the last row against the formula on the known indices. */
            uint64_t r = v->rows - 1;
            float *row = malloc(v->cols * sizeof *row);
            T_OK(lr_tensor_dequant_rows(v, r, 1, row));
            for (int b = 0; b < L->nblk; b++) {
                uint64_t bi = r * (uint64_t)L->nblk + (uint64_t)b;
                int8_t x[24];
                T_OK(lr_leech_unrank(t[i].idx[bi], 12, x));
                double nn = 0;
                for (int j = 0; j < 24; j++) nn += x[j] * x[j];
                for (int j = 0; j < 24; j++) {
                    double want = nn ? x[j] / sqrt(nn) * L->centroid[t[i].gain[bi]] * L->row_scale[r] : 0;
                    T_ASSERT(fabs(row[24 * b + j] - want) <= 1e-6 * (1 + fabs(want)), "tensor %s row %llu block %d",
                             v->name, (unsigned long long)r, b);
                }
            }
            free(row);
        } else if (v->codec == LR_CODEC_INT8G) {
            T_ASSERT(v->u.i8.group == 64 && v->u.i8.q == (const int8_t *)v->data, "int8g params");
        }
    }
    const lr_tensor_view *q = lr_model_layer_tensor(m, 0, "attn_q");
    T_ASSERT(q && !strcmp(q->name, "blk.0.attn_q"), "layer lookup");
    T_ASSERT(!lr_model_tensor(m, "output") && !lr_model_tensor(m, "blk.1.attn_q"), "absent tensors");
    char *json;
    size_t jn;
    T_OK(lr_model_tokenizer_json(m, &json, &jn));
    T_ASSERT(jn == 12 && !strcmp(json, "{\"model\":{}}"), "tokenizer json");
    free(json);
    lr_model_close(m);
    free_tensors(t, n);
    return T_PASS;
}

static int test_dequant_int8_and_dense(void)
{
    char path[512];
    tl_path(path, sizeof path, "handmade2.lrt");
    lr_model_config c;
    T_OK(lr_synth_config("micro", &c));
    tl_tensor *t;
    int n;
    T_OK(write_handmade(path, &c, &t, &n));
    lr_model *m;
    T_OK(lr_model_open(path, 0, &m));
    for (int i = 0; i < n; i++) {
        const lr_tensor_view *v = lr_model_tensor_at(m, i);
        if (v->codec == LR_CODEC_LEECH) continue;
        float *row = malloc(v->cols * sizeof *row);
        uint64_t r = v->rows / 2;
        T_OK(lr_tensor_dequant_rows(v, r, 1, row));
        for (uint64_t j = 0; j < v->cols; j++) {
            uint64_t e = r * v->cols + j;
            float want;
            if (v->codec == LR_CODEC_F32) want = ((float *)t[i].part[0])[e];
            else if (v->codec == LR_CODEC_F16) want = lr_half_to_float(((uint16_t *)t[i].part[0])[e]);
            else if (v->codec == LR_CODEC_BF16) want = lr_bf16_to_float(((uint16_t *)t[i].part[0])[e]);
            else {
                const uint16_t *sb = (const uint16_t *)t[i].part[1] + e / 64 * 2;
                want = (float)(int8_t)t[i].part[0][e] * lr_half_to_float(sb[0]) + lr_half_to_float(sb[1]);
            }
            T_ASSERT(row[j] == want, "tensor %s elem %llu: %g != %g", v->name, (unsigned long long)j, row[j], want);
        }
        T_ASSERT(lr_tensor_dequant_rows(v, v->rows, 1, row) == LR_ERANGE, "row past the end");
        free(row);
    }
    lr_model_close(m);
    free_tensors(t, n);
    return T_PASS;
}

static int file_equal(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = tl_read(a, &na), *y = tl_read(b, &nb);
    int eq = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return eq;
}

static int test_synthetic_deterministic(void)
{
    char a[512], b[512], d[512], tok[512];
    T_OK(tl_write_tokenizer(tok, sizeof tok));
    tl_path(a, sizeof a, "tiny-a.lrt");
    tl_path(b, sizeof b, "tiny-b.lrt");
    tl_path(d, sizeof d, "tiny-d.lrt");
    T_OK(tl_synth(a, "tiny", 7, tok, 1));
    T_OK(tl_synth(b, "tiny", 7, tok, 3));
    T_OK(tl_synth(d, "tiny", 8, tok, 2));
    T_ASSERT(file_equal(a, b), "same seed, 1 vs 3 threads: files differ");
    T_ASSERT(!file_equal(a, d), "different seeds: same file");
    lr_model *m;
    T_OK(lr_model_open(a, 0, &m));
    lr_model_config want;
    lr_synth_config("tiny", &want);
    const lr_model_config *c = lr_model_cfg(m);
    T_ASSERT(c->hidden == 256 && c->n_layers == 2 && c->n_heads == 4 && c->n_kv_heads == 2 && c->head_dim == 64 &&
                 c->intermediate == 768 && c->vocab == 512 && !c->tied_head && c->rope_theta == 1e6 &&
                 c->norm_eps == 1e-6,
             "tiny config");
    T_ASSERT(lr_model_tensor_count(m) == 1 + 2 * 11 + 2, "tensor count %d", lr_model_tensor_count(m));
    const lr_tensor_view *q = lr_model_tensor(m, "blk.1.ffn_down"), *e = lr_model_tensor(m, "output");
    T_ASSERT(q && q->codec == LR_CODEC_LEECH && q->u.leech.gain_bits == 1 && q->u.leech.tail == 0, "ffn_down");
    T_ASSERT(e && e->codec == LR_CODEC_INT8G && e->u.i8.group == 64, "output head");
    T_ASSERT(fabs(lr_tensor_bits_per_weight(e) - 8.5) < 1e-9, "int8g is 8.5 b/w");
    /* 2 b/w of code + a f32 scale per row of 768 columns. */
    T_ASSERT(fabs(lr_tensor_bits_per_weight(q) - (2.0 + 32.0 / 768)) < 1e-9, "leech b/w %g", lr_tensor_bits_per_weight(q));
    /* Row scales lognormal around sqrt(24/cols). */
    double s = 0;
    for (uint64_t r = 0; r < q->rows; r++) s += log(q->u.leech.row_scale[r]);
    s = exp(s / (double)q->rows);
    T_ASSERT(s > 0.8 * sqrt(24.0 / 768) && s < 1.25 * sqrt(24.0 / 768), "row scale geometric mean %g", s);
    int kind;
    const void *blob;
    size_t bn;
    lr_model_tokenizer(m, &kind, &blob, &bn);
    T_ASSERT(kind == LR_TOK_JSON && bn > 10, "tokenizer stored");
    lr_model_close(m);
    return T_PASS;
}

static int test_tokenizer_gzip(void)
{
    /* A gzip'd tokenizer.json (the real Qwen3 one when present, else made here). */
    const char *real = "/work/shared/data/qwen3-tokenizer/tokenizer.json.gz";
    char gz[512], out[512];
    static const char json[] = "{\"added_tokens\":[],\"model\":{\"type\":\"BPE\"}}";
    tl_path(gz, sizeof gz, "tok.json.gz");
    if (access(real, R_OK) == 0) {
        snprintf(gz, sizeof gz, "%s", real);
    } else {
        gzFile f = gzopen(gz, "wb");
        T_ASSERT(f, "gzopen");
        gzwrite(f, json, sizeof json - 1);
        gzclose(f);
    }
    tl_path(out, sizeof out, "micro-gz.lrt");
    T_OK(tl_synth(out, "micro", 1, gz, 2));
    lr_model *m;
    T_OK(lr_model_open(out, 0, &m));
    int kind;
    const void *blob;
    size_t bn;
    lr_model_tokenizer(m, &kind, &blob, &bn);
    T_ASSERT(kind == LR_TOK_JSON_GZIP, "kind %d", kind);
    char *s;
    size_t n;
    T_OK(lr_model_tokenizer_json(m, &s, &n));
    T_ASSERT(n > 20 && s[0] == '{' && strlen(s) == n, "gunzipped %zu bytes", n);
    T_ASSERT(strstr(s, "\"model\""), "json content");
    free(s);
    lr_model_close(m);
    return T_PASS;
}

/* A tokenizer.json.gz of two gzip members (cat a.gz b.gz, bgzip): what
   the tokenizer loader reads (zlib's gzread, every member), as gen_synthetic
   and tokenize do, is what the runtime gets from the artifact's section
   (util/gunzip), not its first member alone. */
static int test_tokenizer_gzip_members(void)
{
    char gz[512], out[512];
    char *json;
    size_t jn;
    T_OK(lr_demo_tokenizer_json(&json, &jn));
    tl_path(gz, sizeof gz, "tok2.json.gz");
    for (int i = 0; i < 2; i++) { /* "ab": a second member after the first */
        gzFile f = gzopen(gz, i ? "ab" : "wb");
        T_ASSERT(f && gzwrite(f, json + (i ? jn / 2 : 0), (unsigned)(i ? jn - jn / 2 : jn / 2)) > 0 && gzclose(f) == Z_OK, "gzip");
    }
    lr_tok *t;
    T_OK(lr_tok_load_hf(gz, &t)); /* what gen_synthetic and tokenize take */
    lr_tok_free(t);
    tl_path(out, sizeof out, "micro-gz2.lrt");
    T_OK(tl_synth(out, "micro", 1, gz, 2));
    lr_model *m;
    T_OK(lr_model_open(out, 0, &m));
    char *s;
    size_t n;
    T_OK(lr_model_tokenizer_json(m, &s, &n));
    T_ASSERT(n == jn && !strcmp(s, json), "the section inflated to %zu bytes of %zu: %.40s...", n, jn, s);
    free(s);
    free(json);
    lr_model_close(m);
    return T_PASS;
}

/* The demo tokenizer.json padded with spaces (JSON allows them) to len
   bytes, written to name, plain or as two gzip members; its path in path. */
static int padded_tokenizer(const char *json, size_t jn, size_t len, int gz, const char *name, char *path, size_t pn)
{
    char *t = malloc(len);
    if (!t || len < jn) return free(t), -1;
    memcpy(t, json, jn);
    memset(t + jn, ' ', len - jn);
    tl_path(path, pn, name);
    int rc = 0;
    if (!gz) rc = lr_write_file_atomic(path, t, len);
    for (int i = 0; gz && i < 2 && !rc; i++) {
        gzFile f = gzopen(path, i ? "ab" : "wb");
        const size_t at = i ? len / 2 : 0, k = i ? len - len / 2 : len / 2;
        rc = f && gzwrite(f, t + at, (unsigned)k) == (int)k ? 0 : -1;
        if (f && gzclose(f) != Z_OK) rc = -1;
    }
    free(t);
    return rc;
}

/* The cases of test_tokenizer_bound, under a bound of max bytes. */
static int tokenizer_bound(size_t max, const char *json, size_t jn)
{
    char path[512], art[512];
    lr_tok *t;
    char *s;
    size_t n;
    lr_model *m;
    for (int gz = 0; gz < 2; gz++) {
        const char *what = gz ? "gzip'd" : "plain";
        /* exactly max bytes: the loader takes it, the artifact holds it, the
           runtime gets it back */
        T_ASSERT(padded_tokenizer(json, jn, max, gz, "tok-max", path, sizeof path) == 0, "write");
        T_OK(lr_tok_load_hf(path, &t));
        lr_tok_free(t);
        tl_path(art, sizeof art, "tok-max.lrt");
        T_OK(tl_synth(art, "micro", 1, path, 1));
        T_OK(lr_model_open(art, 0, &m));
        T_OK(lr_model_tokenizer_json(m, &s, &n));
        T_ASSERT(n == max, "%s: %zu bytes back of %zu", what, n, max);
        free(s);
        lr_model_close(m);
        /* one byte more: the loader refuses it, and so does every step of the
           artifact's path, by the same bound */
        T_ASSERT(padded_tokenizer(json, jn, max + 1, gz, "tok-over", path, sizeof path) == 0, "write");
        T_ASSERT(lr_tok_load_hf(path, &t) == LR_EFORMAT, "%s: the loader took %zu bytes past a bound of %zu", what, max + 1, max);
        tl_path(art, sizeof art, "tok-over.lrt");
        const int wrote = tl_synth(art, "micro", 1, path, 1);
        if (!gz) {
            T_ASSERT(wrote == LR_EINVAL, "plain: the writer took %zu bytes (%d)", max + 1, wrote);
            lr_tok_json_set_max(max + 1); /* an artifact from a reader with a larger bound */
            const int w2 = tl_synth(art, "micro", 1, path, 1);
            lr_tok_json_set_max(max);
            T_OK(w2);
            T_ASSERT(lr_model_open(art, 0, &m) == LR_EFORMAT, "plain: the reader took a %zu-byte section", max + 1);
        } else {
            T_OK(wrote); /* its stored bytes are few */
            T_OK(lr_model_open(art, 0, &m));
            T_ASSERT(lr_model_tokenizer_json(m, &s, &n) == LR_EFORMAT, "gzip'd: inflated %zu bytes past a bound of %zu", max + 1, max);
            lr_model_close(m);
        }
    }
    return T_PASS;
}

/* One bound for a tokenizer.json everywhere (LR_TOK_JSON_MAX): the loader
   (what gen_synthetic, tokenize and inspect take), the writer, the
   artifact's plain section and the text its gzip'd one inflates to, each
   taking exactly the bound and refusing a byte more; tried at a small bound
   (lr_tok_json_set_max) rather than 1 GiB. */
static int test_tokenizer_bound(void)
{
    T_ASSERT(lr_tok_json_max() == LR_TOK_JSON_MAX && LR_TOK_JSON_MAX == (size_t)1 << 30, "bound %zu", lr_tok_json_max());
    char *json;
    size_t jn;
    T_OK(lr_demo_tokenizer_json(&json, &jn));
    const size_t max = jn + 1000;
    lr_tok_json_set_max(max);
    const int r = tokenizer_bound(max, json, jn);
    lr_tok_json_set_max(0);
    free(json);
    T_ASSERT(lr_tok_json_max() == LR_TOK_JSON_MAX, "bound not restored: %zu", lr_tok_json_max());
    return r;
}

static int count_temp_files(void)
{
    int k = 0;
    DIR *d = opendir(tl_tmpdir());
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) k++;
    if (d) closedir(d);
    return k;
}

static int test_writer_never_leaves_partial_files(void)
{
    char path[512];
    tl_path(path, sizeof path, "atomic.lrt");
    T_OK(tl_synth(path, "micro", 1, NULL, 1));
    size_t n0;
    uint8_t *before = tl_read(path, &n0);
    lr_model_config c;
    lr_synth_config("micro", &c);
    /* A model missing tensors: finish refuses it and the old file stays. */
    lr_writer *w;
    T_OK(lr_writer_open(path, &c, LR_TOK_NONE, NULL, 0, &w));
    lr_tensor_desc d = { .name = "token_embd", .codec = LR_CODEC_F32, .ndim = 2, .dims = { 64, 64 } };
    float *z = calloc(64 * 64, 4);
    const void *parts[1] = { z };
    T_OK(lr_writer_tensor(w, &d, parts));
    int rc = lr_writer_finish(w);
    T_ASSERT(rc == LR_EFORMAT && strstr(lr_errmsg(), "missing"), "rc %d: %s", rc, lr_errmsg());
    /* Aborted midway: nothing either. */
    T_OK(lr_writer_open(path, &c, LR_TOK_NONE, NULL, 0, &w));
    T_OK(lr_writer_begin(w, &d));
    T_OK(lr_writer_write(w, z, 100));
    T_ASSERT(lr_writer_end(w) == LR_EINVAL && strstr(lr_errmsg(), "short"), "short tensor: %s", lr_errmsg());
    lr_writer_abort(w);
    /* Too many bytes and duplicate names are refused as they happen. */
    T_OK(lr_writer_open(path, &c, LR_TOK_NONE, NULL, 0, &w));
    T_OK(lr_writer_begin(w, &d));
    T_ASSERT(lr_writer_write(w, z, 64 * 64 * 4 + 1) == LR_EINVAL, "overlong write accepted");
    lr_writer_abort(w);
    T_OK(lr_writer_open(path, &c, LR_TOK_NONE, NULL, 0, &w));
    T_OK(lr_writer_tensor(w, &d, parts));
    T_ASSERT(lr_writer_begin(w, &d) == LR_EINVAL && strstr(lr_errmsg(), "twice"), "duplicate: %s", lr_errmsg());
    lr_writer_abort(w);
    free(z);
    size_t n1;
    uint8_t *after = tl_read(path, &n1);
    T_ASSERT(n0 == n1 && !memcmp(before, after, n0), "destination changed");
    T_ASSERT(count_temp_files() == 0, "temp files left behind");
    free(before);
    free(after);
    return T_PASS;
}

static int test_bad_configs_refused_by_writer(void)
{
    char path[512];
    tl_path(path, sizeof path, "never.lrt");
    lr_model_config c;
    lr_synth_config("micro", &c);
    lr_writer *w;
    c.n_kv_heads = 3;
    T_ASSERT(lr_writer_open(path, &c, LR_TOK_NONE, NULL, 0, &w) == LR_EFORMAT && strstr(lr_errmsg(), "kv_heads"),
             "%s", lr_errmsg());
    lr_synth_config("micro", &c);
    snprintf(c.arch, sizeof c.arch, "llama9");
    T_ASSERT(lr_writer_open(path, &c, LR_TOK_NONE, NULL, 0, &w) == LR_EUNSUPPORTED, "%s", lr_errmsg());
    T_ASSERT(access(path, F_OK) != 0 && count_temp_files() == 0, "file or temp left");
    return T_PASS;
}

/* The fuzz seeds stay meaningful: the valid ones open, the mutated ones are
 * refused (run from the repository root, as test/run.sh does). */
static int test_fuzz_seeds(void)
{
    const char *dir = "loader/corpus/artifact";
    DIR *d = opendir(dir);
    T_SKIP_IF(!d, "loader/corpus/artifact not found from this folder");
    struct dirent *e;
    int valid = 0, bad = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        lr_model *m;
        int rc = lr_model_open(p, 0, &m);
        if (!strncmp(e->d_name, "valid-", 6)) {
            T_ASSERT(rc == LR_OK, "%s: %s", p, lr_errmsg());
            lr_model_close(m);
            valid++;
        } else {
            T_ASSERT(rc != LR_OK, "%s accepted", p);
            bad++;
        }
    }
    closedir(d);
    T_ASSERT(valid >= 2 && bad >= 5, "%d valid and %d mutated seeds", valid, bad);
    return T_PASS;
}

/* Which matrices read the residual stream, and through which norm: one
 * table (loader/arch.c) for the reader, the engines and the importer. */
static int test_stream_readers(void)
{
    static const struct { const char *role, *norm; } r[] = { { "attn_q", "attn_norm" }, { "attn_v", "attn_norm" },
                                                           { "ffn_up", "ffn_norm" },   { "output", "output_norm" },
                                                           { "attn_output", NULL },    { "ffn_down", NULL },
                                                           { "attn_q_norm", NULL },    { "token_embd", NULL } };
    for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
        const char *n = lr_stream_reader_norm(r[i].role);
        T_ASSERT(r[i].norm ? n && !strcmp(n, r[i].norm) : !n, "%s: %s", r[i].role, n ? n : "(none)");
    }
    static const struct { const char *name; int reads; } t[] = {
        { "blk.3.attn_q", 1 }, { "blk.0.attn_k", 1 },      { "blk.12.ffn_gate", 1 }, { "blk.0.ffn_up", 1 },
        { "output", 0 },       { "blk.0.attn_output", 0 }, { "blk.0.attn_q_norm", 0 }, { "blk.0.ffn_down", 0 },
        { "token_embd", 0 },   { "attn_q", 0 },            { "blk.0.output", 0 },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        T_ASSERT(lr_reads_residual(t[i].name) == t[i].reads, "lr_reads_residual(%s) != %d", t[i].name, t[i].reads);
    return T_PASS;
}

/* A model write that fails (the disk full; here past RLIMIT_FSIZE: EFBIG)
 * says why, and leaves neither the model nor its temp file. */
static int test_write_failure_says_why(void)
{
    char dir[] = "/tmp/lr-artw-XXXXXX", path[64];
    T_ASSERT(mkdtemp(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/m.lrt", dir);
    /* the soft limit only: lowering the hard one cannot be undone without
       CAP_SYS_RESOURCE, and the rest of the run's output would die of SIGXFSZ */
    struct rlimit was, small;
    T_ASSERT(getrlimit(RLIMIT_FSIZE, &was) == 0, "getrlimit");
    small.rlim_cur = 16 << 10, small.rlim_max = was.rlim_max;
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < small.rlim_cur) small.rlim_cur = was.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    T_ASSERT(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
    const int rc = tl_synth(path, "micro", 1, NULL, 1);
    setrlimit(RLIMIT_FSIZE, &was);
    signal(SIGXFSZ, SIG_DFL);
    T_ASSERT(rc != LR_OK && strstr(lr_errmsg(), "m.lrt") && strstr(lr_errmsg(), strerror(EFBIG)), "rc %d: %s", rc,
             lr_errmsg());
    DIR *d = opendir(dir);
    int left = 0;
    for (struct dirent *e; d && (e = readdir(d));) left += e->d_name[0] != '.';
    if (d) closedir(d);
    T_ASSERT(left == 0, "%d files left behind", left);
    rmdir(dir);
    return T_PASS;
}

T_MAIN(T_CASE(test_stream_readers), T_CASE(test_write_failure_says_why), T_CASE(test_fuzz_seeds), T_CASE(test_roundtrip_every_codec), T_CASE(test_dequant_int8_and_dense), T_CASE(test_synthetic_deterministic),
       T_CASE(test_tokenizer_gzip), T_CASE(test_tokenizer_gzip_members), T_CASE(test_tokenizer_bound),
       T_CASE(test_writer_never_leaves_partial_files),
       T_CASE(test_bad_configs_refused_by_writer))
