/* Test helpers for the importer: a small random model held in memory (every
 * tensor under its artifact name, Hugging Face row order), written out as a
 * Hugging Face folder (safetensors, optionally sharded with an index) or as
 * a GGUF file (llama.cpp names, metadata, Q/K rows permuted for llama the
 * way llama.cpp's converter does, chosen ggml types). Header-only, for the
 * *_test.c files of this folder. */
#ifndef LR_IMPORT_TESTLIB_H
#define LR_IMPORT_TESTLIB_H
#include "loader/arch.h"
#include "loader/gguf/gguf_build.h"
#include "loader/import/ggml_dequant.h"
#include "loader/import/source.h"
#include "rt/engine_cpu.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- safetensors builder ---- */

typedef struct {
    char *hdr;
    size_t hn, hcap;
    uint8_t *data;
    size_t dn, dcap;
} stb;

static inline void stb_hdr(stb *b, const char *s)
{
    size_t n = strlen(s);
    if (b->hn + n + 1 > b->hcap) {
        b->hcap = (b->hn + n + 1) * 2 + 256;
        b->hdr = realloc(b->hdr, b->hcap);
    }
    memcpy(b->hdr + b->hn, s, n + 1);
    b->hn += n;
}

/* Appends a tensor whose bytes are given. */
static inline void stb_add_raw(stb *b, const char *name, const char *dtype, int ndim, const uint64_t *shape,
                               const void *bytes, size_t nbytes)
{
    char tmp[512];
    stb_hdr(b, b->hn ? "," : "{");
    snprintf(tmp, sizeof tmp, "\"%s\":{\"dtype\":\"%s\",\"shape\":[", name, dtype);
    stb_hdr(b, tmp);
    for (int i = 0; i < ndim; i++) {
        snprintf(tmp, sizeof tmp, "%s%llu", i ? "," : "", (unsigned long long)shape[i]);
        stb_hdr(b, tmp);
    }
    snprintf(tmp, sizeof tmp, "],\"data_offsets\":[%zu,%zu]}", b->dn, b->dn + nbytes);
    stb_hdr(b, tmp);
    if (b->dn + nbytes > b->dcap) {
        b->dcap = (b->dn + nbytes) * 2 + 256;
        b->data = realloc(b->data, b->dcap);
    }
    memcpy(b->data + b->dn, bytes, nbytes);
    b->dn += nbytes;
}

/* Appends f32 values encoded as dtype "F32", "F16" or "BF16". */
static inline void stb_add(stb *b, const char *name, const char *dtype, int ndim, const uint64_t *shape, const float *v,
                           uint64_t n)
{
    int es = strcmp(dtype, "F32") ? 2 : 4;
    uint8_t *buf = malloc(n * (uint64_t)es + 1);
    for (uint64_t i = 0; i < n; i++) {
        if (es == 4) memcpy(buf + 4 * i, &v[i], 4);
        else {
            uint16_t h = !strcmp(dtype, "F16") ? lr_float_to_half(v[i]) : lr_float_to_bf16(v[i]);
            memcpy(buf + 2 * i, &h, 2);
        }
    }
    stb_add_raw(b, name, dtype, ndim, shape, buf, n * (uint64_t)es);
    free(buf);
}

/* The whole file: u64 header length, header (closed, space-padded to 8), data. */
static inline uint8_t *stb_bytes(stb *b, const char *meta, size_t *n)
{
    if (meta) {
        stb_hdr(b, b->hn ? ",\"__metadata__\":" : "{\"__metadata__\":");
        stb_hdr(b, meta);
    }
    stb_hdr(b, b->hn ? "}" : "{}");
    while (b->hn % 8) stb_hdr(b, " ");
    *n = 8 + b->hn + b->dn;
    uint8_t *out = malloc(*n);
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)((uint64_t)b->hn >> (8 * i));
    memcpy(out + 8, b->hdr, b->hn);
    if (b->dn) memcpy(out + 8 + b->hn, b->data, b->dn);
    free(b->hdr);
    free(b->data);
    memset(b, 0, sizeof *b);
    return out;
}

static inline int tl_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* ---- a small model ---- */

typedef struct {
    char name[64];  /* artifact name */
    int layer;
    const char *role;
    int ndim;
    uint64_t rows, cols;
    float *v;       /* rows * cols, HF row order */
} tm_tensor;

typedef struct {
    lr_model_config cfg;
    int n;
    tm_tensor t[512];
} tmodel;

/* A value exact in bf16 and f16 alike (8 significant bits, normal in f16),
 * never zero. */
static inline float tm_value(lr_rng *r, double scale)
{
    float x = lr_bf16_to_float(lr_float_to_bf16((float)(scale * lr_rng_gauss(r))));
    if (fabsf(x) < 1.0f / 1024) x = x < 0 ? -1.0f / 1024 : 1.0f / 1024;
    return x;
}

static inline void tm_add(tmodel *m, int layer, const char *role, lr_rng *r)
{
    tm_tensor *t = &m->t[m->n++];
    lr_tensor_name(t->name, layer, role);
    t->layer = layer;
    t->role = role;
    lr_src_role_shape(&m->cfg, role, &t->ndim, &t->rows, &t->cols);
    t->v = malloc(t->rows * t->cols * sizeof *t->v);
    int norm = t->ndim == 1;
    for (uint64_t i = 0; i < t->rows * t->cols; i++)
        t->v[i] = norm ? lr_bf16_to_float(lr_float_to_bf16(tm_value(r, 0.1) + 1.0f)) : tm_value(r, 1.0 / sqrt((double)t->cols));
}

/* Config: arch "qwen3" or "llama"; dims chosen by the caller. */
static inline void tm_make(tmodel *m, const lr_model_config *cfg, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    lr_rng r;
    lr_rng_seed(&r, seed);
    tm_add(m, -1, "token_embd", &r);
    int nr;
    const char *const *roles = lr_src_layer_roles(cfg->arch, &nr);
    for (int l = 0; l < (int)cfg->n_layers; l++)
        for (int i = 0; i < nr; i++) tm_add(m, l, roles[i], &r);
    tm_add(m, -1, "output_norm", &r);
    if (!cfg->tied_head) tm_add(m, -1, "output", &r);
}

static inline void tm_free(tmodel *m)
{
    for (int i = 0; i < m->n; i++) free(m->t[i].v);
    m->n = 0;
}

static inline const tm_tensor *tm_find(const tmodel *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->t[i].name, name)) return &m->t[i];
    return NULL;
}

/* A tiny config: hidden 128, 2 layers, 4 heads of 32 (2 kv), ffn 192,
 * vocab 160 (every width has a rotation; 128 a multiple of 64 for int8). */
static inline lr_model_config tm_config(const char *arch, int tied)
{
    lr_model_config c;
    memset(&c, 0, sizeof c);
    snprintf(c.arch, sizeof c.arch, "%s", arch);
    snprintf(c.name, sizeof c.name, "tiny-%s", arch);
    c.hidden = 128, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.head_dim = 32, c.intermediate = 192;
    c.vocab = 160, c.max_context = 256, c.bos_id = 1, c.eos_id = 2, c.tied_head = tied;
    c.rope_theta = 1e6, c.norm_eps = 1e-6;
    return c;
}

/* ---- as a Hugging Face folder ---- */

static inline const char *tm_hf_name(const tm_tensor *t, char out[128])
{
    static const char *const map[][2] = {
        { "attn_norm", "input_layernorm.weight" }, { "attn_q", "self_attn.q_proj.weight" },
        { "attn_k", "self_attn.k_proj.weight" }, { "attn_v", "self_attn.v_proj.weight" },
        { "attn_output", "self_attn.o_proj.weight" }, { "attn_q_norm", "self_attn.q_norm.weight" },
        { "attn_k_norm", "self_attn.k_norm.weight" }, { "ffn_norm", "post_attention_layernorm.weight" },
        { "ffn_gate", "mlp.gate_proj.weight" }, { "ffn_up", "mlp.up_proj.weight" }, { "ffn_down", "mlp.down_proj.weight" },
    };
    if (!strcmp(t->role, "token_embd")) return strcpy(out, "model.embed_tokens.weight");
    if (!strcmp(t->role, "output_norm")) return strcpy(out, "model.norm.weight");
    if (!strcmp(t->role, "output")) return strcpy(out, "lm_head.weight");
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(t->role, map[i][0])) {
            snprintf(out, 128, "model.layers.%d.%s", t->layer, map[i][1]);
            return out;
        }
    return NULL;
}

static inline void tm_config_json(const tmodel *m, char *buf, size_t n, const char *extra)
{
    const lr_model_config *c = &m->cfg;
    const char *hf = !strcmp(c->arch, "qwen3") ? "Qwen3ForCausalLM" : "LlamaForCausalLM";
    snprintf(buf, n,
             "{\"architectures\": [\"%s\"], \"model_type\": \"%s\", \"hidden_size\": %u, \"num_hidden_layers\": %u,"
             " \"num_attention_heads\": %u, \"num_key_value_heads\": %u, \"head_dim\": %u, \"intermediate_size\": %u,"
             " \"vocab_size\": %u, \"max_position_embeddings\": %u, \"rope_theta\": %.1f, \"rms_norm_eps\": %g,"
             " \"tie_word_embeddings\": %s, \"bos_token_id\": %u, \"eos_token_id\": %u, \"hidden_act\": \"silu\","
             " \"torch_dtype\": \"bfloat16\", \"_name_or_path\": \"test/%s\"%s}",
             hf, c->arch, c->hidden, c->n_layers, c->n_heads, c->n_kv_heads, c->head_dim, c->intermediate, c->vocab,
             c->max_context, c->rope_theta, c->norm_eps, c->tied_head ? "true" : "false", c->bos_id, c->eos_id,
             c->name, extra ? extra : "");
}

#define TM_TOKENIZER_JSON "{\"version\": \"1.0\", \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}"

/* dtype "F32" / "F16" / "BF16"; shards >= 2 splits the tensors round-robin
 * over that many files with an index. extra_tensor (may be NULL) adds one
 * more F32 tensor of 4 elements under that HF name. */
static inline int tm_write_hf(const tmodel *m, const char *dir, const char *dtype, int shards, const char *extra_tensor)
{
    char path[4096], hfname[128], buf[8192];
    mkdir(dir, 0755);
    tm_config_json(m, buf, sizeof buf, NULL);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (tl_write(path, buf, strlen(buf))) return -1;
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (tl_write(path, TM_TOKENIZER_JSON, strlen(TM_TOKENIZER_JSON))) return -1;
    int ns = shards < 1 ? 1 : shards;
    stb b[8];
    memset(b, 0, sizeof b);
    char *index = malloc(1 << 16);
    size_t il = (size_t)snprintf(index, 1 << 16, "{\"metadata\": {}, \"weight_map\": {");
    for (int i = 0; i < m->n; i++) {
        const tm_tensor *t = &m->t[i];
        uint64_t shape[2] = { t->rows, t->cols };
        tm_hf_name(t, hfname);
        int s = i % ns;
        if (t->ndim == 1) stb_add(&b[s], hfname, dtype, 1, &shape[1], t->v, t->cols);
        else stb_add(&b[s], hfname, dtype, 2, shape, t->v, t->rows * t->cols);
        il += (size_t)snprintf(index + il, (1 << 16) - il, "%s\"%s\": \"model-%05d-of-%05d.safetensors\"", i ? ", " : "",
                               hfname, s + 1, ns);
    }
    if (extra_tensor) {
        float v[4] = { 0.5f, -0.25f, 0.125f, 1.0f };
        uint64_t shape[1] = { 4 };
        stb_add(&b[0], extra_tensor, "F32", 1, shape, v, 4);
        il += (size_t)snprintf(index + il, (1 << 16) - il, ", \"%s\": \"model-%05d-of-%05d.safetensors\"", extra_tensor, 1, ns);
    }
    snprintf(index + il, (1 << 16) - il, "}}");
    int rc = 0;
    for (int s = 0; s < ns; s++) {
        size_t n;
        uint8_t *bytes = stb_bytes(&b[s], "{\"format\": \"pt\"}", &n);
        if (ns == 1) snprintf(path, sizeof path, "%s/model.safetensors", dir);
        else snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", dir, s + 1, ns);
        rc |= tl_write(path, bytes, n);
        free(bytes);
    }
    if (ns > 1) {
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
        rc |= tl_write(path, index, strlen(index));
    }
    free(index);
    return rc;
}

/* ---- as a GGUF file ---- */

/* Reference encoders of the ggml 32-weight blocks (from the format's
 * definition; round to nearest). */
static inline void tl_enc_block(uint32_t type, const float *x, uint8_t *out)
{
    float mn = x[0], mx = x[0], amax = 0;
    for (int i = 0; i < 32; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
        amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    }
    if (type == LR_GGML_Q8_0) {
        uint16_t dh = lr_float_to_half(amax / 127);
        float d = lr_half_to_float(dh);
        memcpy(out, &dh, 2);
        for (int i = 0; i < 32; i++) {
            float q = d ? rintf(x[i] / d) : 0;
            out[2 + i] = (uint8_t)(int8_t)(q < -127 ? -127 : q > 127 ? 127 : q);
        }
    } else if (type == LR_GGML_Q4_0) {
        uint16_t dh = lr_float_to_half(amax / 7);
        float d = lr_half_to_float(dh);
        memcpy(out, &dh, 2);
        for (int j = 0; j < 16; j++) {
            int lo = d ? (int)rintf(x[j] / d) + 8 : 8, hi = d ? (int)rintf(x[j + 16] / d) + 8 : 8;
            lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
            hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
            out[2 + j] = (uint8_t)(lo | hi << 4);
        }
    } else { /* q4_1 */
        uint16_t dh = lr_float_to_half((mx - mn) / 15), mh = lr_float_to_half(mn);
        float d = lr_half_to_float(dh), m = lr_half_to_float(mh);
        memcpy(out, &dh, 2);
        memcpy(out + 2, &mh, 2);
        for (int j = 0; j < 16; j++) {
            int lo = d ? (int)rintf((x[j] - m) / d) : 0, hi = d ? (int)rintf((x[j + 16] - m) / d) : 0;
            lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
            hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
            out[4 + j] = (uint8_t)(lo | hi << 4);
        }
    }
}

/* n values (a multiple of the block) as ggml type; returns malloc'd bytes. */
static inline uint8_t *tl_encode(uint32_t type, const float *v, uint64_t n, uint64_t *nbytes)
{
    *nbytes = lr_ggml_row_bytes(type, n);
    uint8_t *out = malloc(*nbytes + 1);
    if (type == LR_GGML_F32) memcpy(out, v, n * 4);
    else if (type == LR_GGML_F16 || type == LR_GGML_BF16)
        for (uint64_t i = 0; i < n; i++) {
            uint16_t h = type == LR_GGML_F16 ? lr_float_to_half(v[i]) : lr_float_to_bf16(v[i]);
            memcpy(out + 2 * i, &h, 2);
        }
    else
        for (uint64_t b = 0; b < n / 32; b++) tl_enc_block(type, v + 32 * b, out + b * lr_ggml_row_bytes(type, 32));
    return out;
}

/* llama.cpp's converter permutes Q/K rows: reshape(heads, 2, hd/2, cols),
 * swap axes 1 and 2, reshape back. Output row (h, i, s) of shape
 * (heads, hd/2, 2) takes input row (h, s, i) of shape (heads, 2, hd/2). */
static inline void tl_permute_rows(const float *in, float *out, uint64_t heads, uint64_t hd, uint64_t cols)
{
    for (uint64_t h = 0; h < heads; h++)
        for (uint64_t i = 0; i < hd / 2; i++)
            for (uint64_t s = 0; s < 2; s++) {
                uint64_t o = (h * (hd / 2) + i) * 2 + s, src = (h * 2 + s) * (hd / 2) + i;
                memcpy(out + o * cols, in + src * cols, cols * sizeof *out);
            }
}

/* GPT-2's byte-to-text alphabet: byte b as UTF-8 in out (returns length). */
static inline int tl_byte_char(int b, char *out)
{
    int cp;
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) cp = b;
    else {
        int k = 0;
        for (int x = 0; x < b; x++)
            if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255))) k++;
        cp = 256 + k;
    }
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 63));
    return 2;
}

/* A byte-level BPE tokenizer in GGUF metadata: the 256 byte tokens, a few
 * merges, a control token; vocab_min pads with unused tokens. */
static inline void tl_gguf_tokenizer(gb_buf *b, const char *pre, int vocab_min)
{
    static const char *const merges[] = { "h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d" };
    int nm = (int)(sizeof merges / sizeof *merges), n = 256 + nm + 1;
    int total = n < vocab_min ? vocab_min : n;
    gb_kv_str(b, "tokenizer.ggml.model", "gpt2");
    gb_kv_str(b, "tokenizer.ggml.pre", pre);
    gb_kv_arr(b, "tokenizer.ggml.tokens", LR_GGUF_STR, (uint64_t)total);
    char t[64];
    for (int i = 0; i < 256; i++) {
        int l = tl_byte_char(i, t);
        gb_strn(b, t, (size_t)l);
    }
    for (int i = 0; i < nm; i++) {
        const char *sp = strchr(merges[i], ' ');
        snprintf(t, sizeof t, "%.*s%s", (int)(sp - merges[i]), merges[i], sp + 1);
        gb_str(b, t);
    }
    gb_str(b, "<|end|>");
    for (int i = n; i < total; i++) {
        snprintf(t, sizeof t, "<unused%d>", i);
        gb_str(b, t);
    }
    gb_kv_arr(b, "tokenizer.ggml.token_type", LR_GGUF_I32, (uint64_t)total);
    for (int i = 0; i < total; i++) gb_u32(b, i == n - 1 ? 3 : i >= n ? 5 : 1);
    gb_kv_arr(b, "tokenizer.ggml.merges", LR_GGUF_STR, (uint64_t)nm);
    for (int i = 0; i < nm; i++) gb_str(b, merges[i]);
}

typedef struct {
    uint32_t embed, proj, norm, head; /* ggml types */
    int no_permute;                   /* write Q/K unpermuted (a wrong file, for the test) */
    const char *extra_tensor;         /* one more f32 tensor of 32 elements under this name */
    int tokenizer;                    /* add byte-level BPE tokenizer metadata */
} tl_gguf_opts;

static inline uint8_t *tm_gguf_bytes(const tmodel *m, const tl_gguf_opts *o, size_t *size)
{
    const lr_model_config *c = &m->cfg;
    gb_buf b;
    memset(&b, 0, sizeof b);
    gb_header(&b, 3);
    char k[128];
    gb_kv_str(&b, "general.architecture", c->arch);
    gb_kv_str(&b, "general.name", c->name);
#define TL_KV(key, v) (snprintf(k, sizeof k, "%s." key, c->arch), gb_kv_u32(&b, k, (v)))
    TL_KV("embedding_length", c->hidden);
    TL_KV("block_count", c->n_layers);
    TL_KV("attention.head_count", c->n_heads);
    TL_KV("attention.head_count_kv", c->n_kv_heads);
    TL_KV("attention.key_length", c->head_dim);
    TL_KV("feed_forward_length", c->intermediate);
    TL_KV("context_length", c->max_context);
    TL_KV("rope.dimension_count", c->head_dim);
#undef TL_KV
    snprintf(k, sizeof k, "%s.rope.freq_base", c->arch);
    gb_key(&b, k, LR_GGUF_F32);
    float f = (float)c->rope_theta;
    uint32_t u;
    memcpy(&u, &f, 4);
    gb_u32(&b, u);
    snprintf(k, sizeof k, "%s.attention.layer_norm_rms_epsilon", c->arch);
    gb_key(&b, k, LR_GGUF_F32);
    f = (float)c->norm_eps;
    memcpy(&u, &f, 4);
    gb_u32(&b, u);
    gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", c->bos_id);
    gb_kv_u32(&b, "tokenizer.ggml.eos_token_id", c->eos_id);
    if (o->tokenizer) tl_gguf_tokenizer(&b, "gpt-2", (int)c->vocab);
    /* tensor data, each 32-aligned */
    int nt = m->n + (o->extra_tensor ? 1 : 0);
    uint8_t **data = calloc((size_t)nt, sizeof *data);
    uint64_t *nbytes = calloc((size_t)nt, sizeof *nbytes), off = 0;
    for (int i = 0; i < nt; i++) {
        if (i == m->n) { /* the extra tensor */
            float v[32];
            for (int j = 0; j < 32; j++) v[j] = 0.5f + (float)j;
            uint64_t dims[1] = { 32 };
            data[i] = tl_encode(LR_GGML_F32, v, 32, &nbytes[i]);
            gb_tensor(&b, o->extra_tensor, 1, dims, LR_GGML_F32, off);
            off += (nbytes[i] + 31) / 32 * 32;
            continue;
        }
        const tm_tensor *t = &m->t[i];
        uint32_t type = t->ndim == 1 ? o->norm : !strcmp(t->role, "token_embd") ? o->embed
                                              : !strcmp(t->role, "output") ? o->head : o->proj;
        const float *v = t->v;
        float *perm = NULL;
        int is_q = !strcmp(t->role, "attn_q"), is_k = !strcmp(t->role, "attn_k");
        if (!strcmp(c->arch, "llama") && !o->no_permute && (is_q || is_k)) {
            perm = malloc(t->rows * t->cols * sizeof *perm);
            tl_permute_rows(t->v, perm, is_q ? c->n_heads : c->n_kv_heads, c->head_dim, t->cols);
            v = perm;
        }
        data[i] = tl_encode(type, v, t->rows * t->cols, &nbytes[i]);
        free(perm);
        char gn[96];
        snprintf(gn, sizeof gn, "%s.weight", t->name);
        uint64_t dims[2] = { t->cols, t->rows };
        gb_tensor(&b, gn, (uint32_t)t->ndim, dims, type, off);
        off += (nbytes[i] + 31) / 32 * 32;
    }
    gb_align(&b, 32);
    for (int i = 0; i < nt; i++) {
        gb_bytes(&b, data[i], nbytes[i]);
        gb_align(&b, 32);
        free(data[i]);
    }
    free(data);
    free(nbytes);
    gb_finish(&b);
    *size = b.n;
    return b.p;
}

static inline int tm_write_gguf(const tmodel *m, const char *path, const tl_gguf_opts *o)
{
    size_t n;
    uint8_t *p = tm_gguf_bytes(m, o, &n);
    int rc = tl_write(path, p, n);
    free(p);
    return rc;
}

/* ---- running an artifact ---- */

/* The CPU engine's logits after each of n tokens fed in one sequence:
 * *out = n x vocab floats (malloc'd; free it). */
static inline int tl_logits(const char *path, const int32_t *ids, int n, float **out)
{
    lr_model *md;
    int rc = lr_model_open(path, 0, &md);
    if (rc) return rc;
    lr_engine *e;
    lr_engine_opts eo = { .nthreads = 1 };
    if ((rc = lr_engine_cpu_open(md, &eo, &e))) {
        lr_model_close(md);
        return rc;
    }
    const size_t v = lr_model_cfg(md)->vocab;
    *out = malloc((size_t)n * v * sizeof **out);
    if (!*out) rc = -1;
    for (int i = 0; i < n && !rc; i++) {
        const float *l;
        if (!(rc = e->ops->step(e, ids[i], &l))) memcpy(*out + (size_t)i * v, l, v * sizeof *l);
    }
    e->ops->close(e);
    lr_model_close(md);
    if (rc) free(*out), *out = NULL;
    return rc;
}

/* |a - b| / |b| over n values (l2, f64). */
static inline double tl_rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        r += (double)b[i] * b[i];
    }
    return sqrt(d / r);
}

/* A fresh folder under /tmp (the caller removes it with tl_rmrf). */
static inline void tl_tmpdir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/leechrt-%s-XXXXXX", tag);
    if (!mkdtemp(out)) out[0] = 0;
}

static inline void tl_rmrf(const char *dir)
{
    char cmd[4200];
    if (!dir[0] || strncmp(dir, "/tmp/leechrt-", 13)) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) { /* best effort */ }
}

#endif
