/* A GGUF file as an import source. Tensors are dequantized row by row; a
 * Llama model's Q and K rows are read through the inverse of llama.cpp's
 * permutation, so the imported model follows the Hugging Face rotate_half
 * convention like one imported from safetensors (docs/import.md). */
#include "loader/arch.h"
#include "loader/gguf/gguf.h"
#include "loader/import/ggml_dequant.h"
#include "loader/import/gguf_tokjson.h"
#include "loader/import/source.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    lr_gguf *g;
} gguf_impl;

static int gguf_read(const lr_src *s, const lr_src_tensor *t, uint64_t r0, uint64_t n, float *out)
{
    const lr_gguf_tensor *gt = t->ref;
    const uint8_t *base = lr_gguf_tensor_data(((const gguf_impl *)s->impl)->g, gt);
    uint64_t rb = lr_ggml_row_bytes(t->type, t->cols);
    for (uint64_t r = 0; r < n; r++) {
        uint64_t src = t->qk_head_dim ? lr_qk_gguf_row(r0 + r, t->qk_head_dim) : r0 + r;
        int rc = lr_ggml_dequant(t->type, base + src * rb, t->cols, out + r * t->cols);
        if (rc) return lr_wrap(rc, "%s: tensor %s", s->label, t->origin);
    }
    return LR_OK;
}

static void gguf_close(lr_src *s)
{
    gguf_impl *h = s->impl;
    if (!h) return;
    lr_gguf_close(h->g);
    free(h);
    s->impl = NULL;
}

/* A float key (f32 or f64); *out keeps its default when absent. */
static int get_float(const lr_gguf *g, const char *key, double *out)
{
    const lr_gguf_kv *kv = lr_gguf_find(g, key);
    if (!kv) return LR_OK;
    if (kv->val.type != LR_GGUF_F32 && kv->val.type != LR_GGUF_F64)
        return LR_FAIL(LR_EFORMAT, "%s: %s is a %s, not a float", g->name, key, lr_gguf_type_name(kv->val.type));
    *out = kv->val.f;
    return LR_OK;
}

/* An arch-prefixed unsigned key; *out keeps its default when absent and not required. */
static int get_u32(const lr_gguf *g, const char *arch, const char *key, int required, uint32_t *out)
{
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    if (!lr_gguf_find(g, k)) {
        if (required) return LR_FAIL(LR_EFORMAT, "%s: metadata %s is missing", g->name, k);
        return LR_OK;
    }
    uint64_t v;
    int rc = lr_gguf_get_uint(g, k, &v);
    if (rc) return rc;
    if (v == 0 || v >= UINT32_MAX) return LR_FAIL(LR_EFORMAT, "%s: %s = %llu is out of range", g->name, k, (unsigned long long)v);
    *out = (uint32_t)v;
    return LR_OK;
}

static int get_token(const lr_gguf *g, const char *key, uint32_t *out)
{
    *out = LR_NO_TOKEN;
    if (!lr_gguf_find(g, key)) return LR_OK;
    uint64_t v;
    int rc = lr_gguf_get_uint(g, key, &v);
    if (rc) return rc;
    if (v < LR_NO_TOKEN) *out = (uint32_t)v;
    return LR_OK;
}

static int read_config(lr_src *s, const lr_gguf *g)
{
    lr_model_config *c = &s->cfg;
    lr_gguf_str as;
    int rc = lr_gguf_get_str(g, "general.architecture", &as);
    if (rc) return rc;
    char arch[32] = "";
    if (as.len < sizeof arch && !memchr(as.s, 0, (size_t)as.len)) memcpy(arch, as.s, (size_t)as.len);
    if (strcmp(arch, "llama") && strcmp(arch, "qwen3"))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: general.architecture \"%.*s\" is not imported (llama, qwen3)", g->name,
                       (int)(as.len < 40 ? as.len : 40), as.s);
    snprintf(c->arch, sizeof c->arch, "%s", arch);
    if ((rc = get_u32(g, arch, "embedding_length", 1, &c->hidden)) || (rc = get_u32(g, arch, "block_count", 1, &c->n_layers)) ||
        (rc = get_u32(g, arch, "attention.head_count", 1, &c->n_heads)) ||
        (rc = get_u32(g, arch, "feed_forward_length", 1, &c->intermediate)))
        return rc;
    c->n_kv_heads = c->n_heads;
    c->head_dim = c->hidden % c->n_heads ? 0 : c->hidden / c->n_heads;
    c->max_context = 2048;
    uint32_t vlen = 0, rot = 0;
    if ((rc = get_u32(g, arch, "attention.head_count_kv", 0, &c->n_kv_heads)) ||
        (rc = get_u32(g, arch, "attention.key_length", 0, &c->head_dim)) ||
        (rc = get_u32(g, arch, "attention.value_length", 0, &vlen)) || (rc = get_u32(g, arch, "rope.dimension_count", 0, &rot)) ||
        (rc = get_u32(g, arch, "context_length", 0, &c->max_context)))
        return rc;
    if (!c->head_dim)
        return LR_FAIL(LR_EFORMAT, "%s: no %s.attention.key_length and %u heads do not divide %u", g->name, arch,
                       c->n_heads, c->hidden);
    if (vlen && vlen != c->head_dim)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: value length %u differs from key length %u", g->name, vlen, c->head_dim);
    if (rot && rot != c->head_dim)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: rope.dimension_count %u is not the head size %u (partial rotary)", g->name,
                       rot, c->head_dim);
    char k[128];
    c->rope_theta = 10000.0;
    c->norm_eps = 1e-6;
    snprintf(k, sizeof k, "%s.rope.freq_base", arch);
    if ((rc = get_float(g, k, &c->rope_theta))) return rc;
    snprintf(k, sizeof k, "%s.attention.layer_norm_rms_epsilon", arch);
    if (!lr_gguf_find(g, k)) lr_warn("%s: no %s; using 1e-6", g->name, k);
    if ((rc = get_float(g, k, &c->norm_eps))) return rc;
    snprintf(k, sizeof k, "%s.rope.scaling.type", arch);
    if (lr_gguf_find(g, k)) {
        lr_gguf_str st;
        if ((rc = lr_gguf_get_str(g, k, &st))) return rc;
        if (!lr_gguf_str_eq(st, "none"))
            return LR_FAIL(LR_EUNSUPPORTED, "%s: %s \"%.*s\" (only the plain rotary embedding)", g->name, k,
                           (int)(st.len < 40 ? st.len : 40), st.s);
    }
    if (c->max_context > LR_MAX_CONTEXT) {
        lr_warn("%s: context length %u is limited to %u", g->name, c->max_context, LR_MAX_CONTEXT);
        c->max_context = LR_MAX_CONTEXT;
    }
    if ((rc = get_token(g, "tokenizer.ggml.bos_token_id", &c->bos_id)) ||
        (rc = get_token(g, "tokenizer.ggml.eos_token_id", &c->eos_id)))
        return rc;
    const lr_gguf_tensor *emb = lr_gguf_find_tensor(g, "token_embd.weight");
    if (!emb || emb->n_dims != 2) return LR_FAIL(LR_EFORMAT, "%s: no 2-D token_embd.weight tensor", g->name);
    if (emb->dims[1] == 0 || emb->dims[1] > LR_MAX_VOCAB)
        return LR_FAIL(LR_EFORMAT, "%s: token_embd.weight has %llu rows", g->name, (unsigned long long)emb->dims[1]);
    c->vocab = (uint32_t)emb->dims[1];
    c->tied_head = lr_gguf_find_tensor(g, "output.weight") == NULL;
    /* an id past the embedding cannot be fed or sampled: dropped, but said (the model
       then runs without that token, which changes its prompts or its stops) */
    if (c->bos_id != LR_NO_TOKEN && c->bos_id >= c->vocab) {
        lr_warn("%s: bos_token_id %u is past the %u embedding rows: no BOS token", g->name, c->bos_id, c->vocab);
        c->bos_id = LR_NO_TOKEN;
    }
    if (c->eos_id != LR_NO_TOKEN && c->eos_id >= c->vocab) {
        lr_warn("%s: eos_token_id %u is past the %u embedding rows: no end-of-sequence token", g->name, c->eos_id,
                c->vocab);
        c->eos_id = LR_NO_TOKEN;
    }
    if (lr_gguf_find(g, "general.name") && !lr_gguf_get_str(g, "general.name", &as))
        snprintf(c->name, sizeof c->name, "%.*s", (int)(as.len < 63 ? as.len : 63), as.s);
    for (char *p = c->name; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    return lr_src_check_config(c, g->name);
}

static int load_tokenizer(lr_src *s, const lr_gguf *g)
{
    char *json;
    size_t n;
    s->tok_kind = LR_TOK_NONE;
    if (!lr_gguf_find(g, "tokenizer.ggml.model")) {
        lr_warn("%s: no tokenizer metadata; the artifact gets no tokenizer", g->name);
        return LR_OK;
    }
    int rc = lr_gguf_tokenizer_json(g, &json, &n);
    if (rc == LR_EUNSUPPORTED) {
        lr_warn("%s; the artifact gets no tokenizer", lr_errmsg());
        return LR_OK;
    }
    if (rc) return rc;
    rc = n > lr_tok_json_max() ? LR_FAIL(LR_EINVAL, "tokenizer.json of %zu bytes, past the %zu a tokenizer may have", n, lr_tok_json_max())
                               : lr_gzip(json, n, &s->tok, &s->tok_bytes);
    free(json);
    if (rc) return lr_wrap(rc, "%s: tokenizer", g->name);
    s->tok_kind = LR_TOK_JSON_GZIP;
    return LR_OK;
}

/* GGUF tensor name -> artifact name, layer and role; 0 if not a model tensor. */
static int map_name(const lr_model_config *c, const char *gn, char name[64], int *layer, const char **role)
{
    size_t l = strlen(gn);
    if (l < 8 || strcmp(gn + l - 7, ".weight")) return 0;
    char base[64];
    if (l - 7 >= sizeof base) return 0;
    memcpy(base, gn, l - 7);
    base[l - 7] = 0;
    *layer = -1;
    *role = NULL;
    static const char *const globals[] = { "token_embd", "output_norm", "output" };
    for (int i = 0; i < 3; i++)
        if (!strcmp(base, globals[i])) *role = globals[i];
    if (*layer < 0 && strncmp(base, "blk.", 4)) {
        if (!*role) return 0;
        snprintf(name, 64, "%s", base);
        return 1;
    }
    unsigned lay;
    int at = 0;
    if (sscanf(base, "blk.%u.%n", &lay, &at) != 1 || at == 0 || lay > 100000) return 0;
    int nr;
    const char *const *roles = lr_src_layer_roles(c->arch, &nr);
    for (int i = 0; i < nr; i++)
        if (!strcmp(base + at, roles[i])) {
            *role = roles[i];
            *layer = (int)lay;
            lr_tensor_name(name, *layer, *role);
            return 1;
        }
    return 0;
}

static int open_gguf(lr_src *s, const char *path)
{
    gguf_impl *h = calloc(1, sizeof *h);
    if (!h) return LR_FAIL(LR_ENOMEM, "out of memory");
    s->impl = h;
    int rc = lr_gguf_open(path, &h->g);
    if (rc || (rc = read_config(s, h->g)) || (rc = load_tokenizer(s, h->g))) return rc;
    const lr_gguf *g = h->g;
    int permute = !strcmp(s->cfg.arch, "llama");
    for (uint64_t i = 0; i < g->n_tensors && !rc; i++) {
        const lr_gguf_tensor *gt = &g->tensors[i];
        char gn[128], name[64], origin[160];
        snprintf(gn, sizeof gn, "%.*s", (int)(gt->name.len < 127 ? gt->name.len : 127), gt->name.s);
        const char *tn = lr_ggml_type_name(gt->type);
        snprintf(origin, sizeof origin, "%s (%s)", gn, tn ? tn : "?");
        int layer;
        const char *role = NULL;
        if (gt->name.len >= sizeof gn || memchr(gt->name.s, 0, (size_t)gt->name.len) || !map_name(&s->cfg, gn, name, &layer, &role)) {
            const char *why = strstr(gn, "rope_freqs") ? " (rope scaling is not served)"
                              : strstr(gn, ".bias") ? " (biases are not served)" : "";
            return LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s is not part of a %s model%s", path, gn, s->cfg.arch, why);
        }
        if (layer >= (int)s->cfg.n_layers)
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: layer %d but block_count is %u", path, gn, layer, s->cfg.n_layers);
        if (!lr_ggml_dequant_supported(gt->type))
            return LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s: type %s is not imported (f32, f16, bf16, q8_0, q4_0, q4_1)",
                           path, gn, tn ? tn : "?");
        if (gt->n_dims != 1 && gt->n_dims != 2)
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: %u dimensions", path, gn, gt->n_dims);
        uint64_t rows = gt->n_dims == 2 ? gt->dims[1] : 1, cols = gt->dims[0];
        if (lr_ggml_row_bytes(gt->type, cols) * rows != gt->nbytes || !lr_gguf_tensor_data(g, gt))
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: size does not match its shape", path, gn);
        lr_src_tensor *t;
        if ((rc = lr_src_add(s, name, layer, role, (int)gt->n_dims, rows, cols, origin, &t))) return rc;
        t->ref = gt;
        t->type = gt->type;
        if (permute && (!strcmp(role, "attn_q") || !strcmp(role, "attn_k"))) t->qk_head_dim = s->cfg.head_dim;
    }
    return lr_src_check_complete(s);
}

int lr_src_open_gguf(const char *path, lr_src **out)
{
    *out = NULL;
    lr_src *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    snprintf(s->label, sizeof s->label, "%s", path);
    snprintf(s->kind, sizeof s->kind, "gguf");
    s->read_rows = gguf_read;
    s->close = gguf_close;
    int rc = open_gguf(s, path);
    if (rc) {
        lr_src_close(s);
        return rc;
    }
    *out = s;
    return LR_OK;
}
