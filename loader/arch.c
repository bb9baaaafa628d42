#include "loader/arch.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Qwen3 decoder layer (names follow the GGUF convention, see docs/format.md). */
static const char *const k_qwen3_roles[] = {
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_q_norm", "attn_k_norm", "attn_output",
    "ffn_norm", "ffn_gate", "ffn_up", "ffn_down",
};

/* Llama (and Mistral, SmolLM): the same layer without the per-head q/k norms. */
static const char *const k_llama_roles[] = {
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down",
};

static int is_llama(const char *arch) { return strcmp(arch, "llama") == 0; }

int lr_arch_known(const char *arch) { return strcmp(arch, "qwen3") == 0 || is_llama(arch); }

const char *const *lr_arch_layer_roles(const char *arch, int *n)
{
    if (!lr_arch_known(arch)) { *n = 0; return NULL; }
    if (is_llama(arch)) {
        *n = (int)(sizeof k_llama_roles / sizeof k_llama_roles[0]);
        return k_llama_roles;
    }
    *n = (int)(sizeof k_qwen3_roles / sizeof k_qwen3_roles[0]);
    return k_qwen3_roles;
}

void lr_tensor_name(char name[64], int layer, const char *role)
{
    if (layer < 0) snprintf(name, 64, "%s", role);
    else snprintf(name, 64, "blk.%d.%s", layer, role);
}

const char *lr_stream_reader_norm(const char *role)
{
    static const struct { const char *role, *norm; } t[] = {
        { "attn_q", "attn_norm" }, { "attn_k", "attn_norm" }, { "attn_v", "attn_norm" },
        { "ffn_gate", "ffn_norm" }, { "ffn_up", "ffn_norm" },     { "output", "output_norm" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(role, t[i].role)) return t[i].norm;
    return NULL;
}

static int check_range(const char *label, const char *field, uint32_t v, uint32_t lo, uint32_t hi)
{
    if (v < lo || v > hi)
        return LR_FAIL(LR_EFORMAT, "%s: config: %s = %u is outside [%u, %u]", label, field, v, lo, hi);
    return LR_OK;
}

int lr_arch_check_config(const lr_model_config *c, const char *label)
{
    if (!memchr(c->arch, 0, sizeof c->arch) || !c->arch[0])
        return LR_FAIL(LR_EFORMAT, "%s: config: architecture string empty or not NUL-terminated", label);
    if (!memchr(c->name, 0, sizeof c->name))
        return LR_FAIL(LR_EFORMAT, "%s: config: model name not NUL-terminated", label);
    if (!lr_arch_known(c->arch))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: config: unknown architecture \"%s\" (known: qwen3, llama)", label, c->arch);
    int rc;
    if ((rc = check_range(label, "hidden", c->hidden, 1, LR_MAX_HIDDEN)) ||
        (rc = check_range(label, "layers", c->n_layers, 1, LR_MAX_LAYERS)) ||
        (rc = check_range(label, "heads", c->n_heads, 1, LR_MAX_HEADS)) ||
        (rc = check_range(label, "kv_heads", c->n_kv_heads, 1, c->n_heads)) ||
        (rc = check_range(label, "head_dim", c->head_dim, 2, LR_MAX_HEAD_DIM)) ||
        (rc = check_range(label, "intermediate", c->intermediate, 1, LR_MAX_INTER)) ||
        (rc = check_range(label, "vocab", c->vocab, 1, LR_MAX_VOCAB)) ||
        (rc = check_range(label, "max_context", c->max_context, 1, LR_MAX_CONTEXT)))
        return rc;
    if (c->n_heads % c->n_kv_heads)
        return LR_FAIL(LR_EFORMAT, "%s: config: heads %u not a multiple of kv_heads %u", label, c->n_heads,
                       c->n_kv_heads);
    if (c->head_dim % 2)
        return LR_FAIL(LR_EFORMAT, "%s: config: head_dim %u is odd (rotary pairs)", label, c->head_dim);
    if (c->bos_id != LR_NO_TOKEN && c->bos_id >= c->vocab)
        return LR_FAIL(LR_EFORMAT, "%s: config: bos id %u >= vocab %u", label, c->bos_id, c->vocab);
    if (c->eos_id != LR_NO_TOKEN && c->eos_id >= c->vocab)
        return LR_FAIL(LR_EFORMAT, "%s: config: eos id %u >= vocab %u", label, c->eos_id, c->vocab);
    if (c->tied_head != 0 && c->tied_head != 1)
        return LR_FAIL(LR_EFORMAT, "%s: config: tied head flag %d is not 0 or 1", label, c->tied_head);
    if (!isfinite(c->rope_theta) || c->rope_theta <= 0 || c->rope_theta > 1e12)
        return LR_FAIL(LR_EFORMAT, "%s: config: rope theta %g is not in (0, 1e12]", label, c->rope_theta);
    if (!isfinite(c->norm_eps) || c->norm_eps <= 0 || c->norm_eps >= 1)
        return LR_FAIL(LR_EFORMAT, "%s: config: norm eps %g is not in (0, 1)", label, c->norm_eps);
    return LR_OK;
}

static void put(lr_arch_tensor *t, int layer, const char *role, int kind, uint64_t d0, uint64_t d1)
{
    memset(t, 0, sizeof *t);
    lr_tensor_name(t->name, layer, role);
    t->layer = layer;
    t->role = role;
    t->kind = kind;
    t->ndim = kind == LR_KIND_NORM ? 1 : 2;
    t->dims[0] = d0;
    t->dims[1] = kind == LR_KIND_NORM ? 0 : d1;
}

int lr_arch_tensors(const lr_model_config *c, lr_arch_tensor **list, int *n)
{
    *list = NULL;
    *n = 0;
    if (!lr_arch_known(c->arch)) return LR_FAIL(LR_EUNSUPPORTED, "unknown architecture \"%s\"", c->arch);
    int nroles = (int)(sizeof k_qwen3_roles / sizeof k_qwen3_roles[0]);
    int cap = 3 + (int)c->n_layers * nroles;
    lr_arch_tensor *t = calloc((size_t)cap, sizeof *t);
    if (!t) return LR_FAIL(LR_ENOMEM, "arch tensor list: out of memory");
    uint64_t h = c->hidden, q = (uint64_t)c->n_heads * c->head_dim, kv = (uint64_t)c->n_kv_heads * c->head_dim;
    uint64_t ff = c->intermediate;
    int k = 0;
    put(&t[k++], -1, "token_embd", LR_KIND_EMBED, c->vocab, h);
    for (int l = 0; l < (int)c->n_layers; l++) {
        put(&t[k++], l, "attn_norm", LR_KIND_NORM, h, 0);
        put(&t[k++], l, "attn_q", LR_KIND_MATRIX, q, h);
        put(&t[k++], l, "attn_k", LR_KIND_MATRIX, kv, h);
        put(&t[k++], l, "attn_v", LR_KIND_MATRIX, kv, h);
        if (!is_llama(c->arch)) {
            put(&t[k++], l, "attn_q_norm", LR_KIND_NORM, c->head_dim, 0);
            put(&t[k++], l, "attn_k_norm", LR_KIND_NORM, c->head_dim, 0);
        }
        put(&t[k++], l, "attn_output", LR_KIND_MATRIX, h, q);
        put(&t[k++], l, "ffn_norm", LR_KIND_NORM, h, 0);
        put(&t[k++], l, "ffn_gate", LR_KIND_MATRIX, ff, h);
        put(&t[k++], l, "ffn_up", LR_KIND_MATRIX, ff, h);
        put(&t[k++], l, "ffn_down", LR_KIND_MATRIX, h, ff);
    }
    put(&t[k++], -1, "output_norm", LR_KIND_NORM, h, 0);
    if (!c->tied_head) put(&t[k++], -1, "output", LR_KIND_MATRIX, c->vocab, h);
    *list = t;
    *n = k;
    return LR_OK;
}
