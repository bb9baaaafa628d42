#include "loader/import/hf_config.h"
#include "loader/arch.h"
#include "util/err.h"
#include "util/log.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct { const char *hf, *model_type, *arch; } k_archs[] = {
    { "Qwen3ForCausalLM", "qwen3", "qwen3" },
    { "LlamaForCausalLM", "llama", "llama" },
    { "MistralForCausalLM", "mistral", "llama" },
};

/* A positive integer field; *out keeps its default when the key is absent
 * or null and required is 0. */
static int get_u32(json_t *root, const char *key, int required, uint32_t *out, const char *L)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        if (required) return LR_FAIL(LR_EFORMAT, "%s: %s is missing", L, key);
        return LR_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > (json_int_t)UINT32_MAX - 1)
        return LR_FAIL(LR_EFORMAT, "%s: %s is not a positive 32-bit integer", L, key);
    *out = (uint32_t)json_integer_value(v);
    return LR_OK;
}

static int get_num(json_t *root, const char *key, double *out, const char *L)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) return LR_OK;
    if (!json_is_number(v)) return LR_FAIL(LR_EFORMAT, "%s: %s is not a number", L, key);
    *out = json_number_value(v);
    return LR_OK;
}

static int is_true(json_t *root, const char *key) { return json_is_true(json_object_get(root, key)); }

/* bos/eos: an integer, null, or a list (the first is used). */
static int get_token(json_t *root, const char *key, uint32_t *out, const char *L)
{
    json_t *v = json_object_get(root, key);
    *out = LR_NO_TOKEN;
    if (v && json_is_array(v)) {
        if (json_array_size(v) > 1) lr_warn("%s: %s lists %zu ids; the first is used", L, key, json_array_size(v));
        v = json_array_get(v, 0);
    }
    if (!v || json_is_null(v)) return LR_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= (json_int_t)LR_NO_TOKEN)
        return LR_FAIL(LR_EFORMAT, "%s: %s is not a token id", L, key);
    *out = (uint32_t)json_integer_value(v);
    return LR_OK;
}

/* rope_scaling / rope_parameters: only the plain rotary embedding is served. */
static int check_rope(json_t *r, const char *key, const char *L)
{
    if (!r || json_is_null(r)) return LR_OK;
    if (!json_is_object(r)) return LR_FAIL(LR_EFORMAT, "%s: %s is not an object", L, key);
    json_t *ty = json_object_get(r, "rope_type");
    if (!ty) ty = json_object_get(r, "type");
    if (json_is_string(ty) && !strcmp(json_string_value(ty), "default")) return LR_OK;
    return LR_FAIL(LR_EUNSUPPORTED, "%s: %s type \"%s\" is not supported (only the plain rotary embedding)", L, key,
                   json_is_string(ty) ? json_string_value(ty) : "?");
}

static int parse(json_t *root, const char *L, const char *default_name, lr_model_config *c)
{
    if (!json_is_object(root)) return LR_FAIL(LR_EFORMAT, "%s: not a JSON object", L);
    const char *arch = NULL;
    json_t *archs = json_object_get(root, "architectures"), *mt = json_object_get(root, "model_type");
    for (size_t i = 0; json_is_array(archs) && i < json_array_size(archs) && !arch; i++)
        for (size_t k = 0; k < sizeof k_archs / sizeof *k_archs; k++)
            if (json_is_string(json_array_get(archs, i)) && !strcmp(json_string_value(json_array_get(archs, i)), k_archs[k].hf))
                arch = k_archs[k].arch;
    for (size_t k = 0; !arch && !json_is_array(archs) && json_is_string(mt) && k < sizeof k_archs / sizeof *k_archs; k++)
        if (!strcmp(json_string_value(mt), k_archs[k].model_type)) arch = k_archs[k].arch;
    if (!arch) {
        const char *got = json_is_array(archs) && json_is_string(json_array_get(archs, 0)) ? json_string_value(json_array_get(archs, 0))
                          : json_is_string(mt) ? json_string_value(mt) : "none given";
        return LR_FAIL(LR_EUNSUPPORTED, "%s: architecture %.64s is not imported (Qwen3ForCausalLM, LlamaForCausalLM, "
                       "MistralForCausalLM)", L, got);
    }
    memset(c, 0, sizeof *c);
    snprintf(c->arch, sizeof c->arch, "%s", arch);
    int rc;
    if ((rc = get_u32(root, "hidden_size", 1, &c->hidden, L)) || (rc = get_u32(root, "num_hidden_layers", 1, &c->n_layers, L)) ||
        (rc = get_u32(root, "num_attention_heads", 1, &c->n_heads, L)) ||
        (rc = get_u32(root, "intermediate_size", 1, &c->intermediate, L)) || (rc = get_u32(root, "vocab_size", 1, &c->vocab, L)))
        return rc;
    c->n_kv_heads = c->n_heads;
    if ((rc = get_u32(root, "num_key_value_heads", 0, &c->n_kv_heads, L))) return rc;
    if (c->hidden % c->n_heads == 0) c->head_dim = c->hidden / c->n_heads;
    if ((rc = get_u32(root, "head_dim", 0, &c->head_dim, L))) return rc;
    if (!c->head_dim)
        return LR_FAIL(LR_EFORMAT, "%s: no head_dim and hidden_size %u is not a multiple of %u heads", L, c->hidden, c->n_heads);
    c->max_context = 0;
    if ((rc = get_u32(root, "max_position_embeddings", 0, &c->max_context, L))) return rc;
    if (!c->max_context) {
        c->max_context = 2048;
        lr_warn("%s: no max_position_embeddings; using 2048", L);
    }
    json_t *rp = json_object_get(root, "rope_parameters"); /* newer transformers keep rope_theta here */
    c->rope_theta = 10000.0;
    c->norm_eps = 1e-6;
    if ((rc = get_num(root, "rope_theta", &c->rope_theta, L)) || (rc = get_num(root, "rms_norm_eps", &c->norm_eps, L)) ||
        (json_is_object(rp) && (rc = get_num(rp, "rope_theta", &c->rope_theta, L))))
        return rc;
    if ((rc = check_rope(json_object_get(root, "rope_scaling"), "rope_scaling", L)) ||
        (rc = check_rope(rp, "rope_parameters", L)))
        return rc;
    double prf = 1.0;
    if ((rc = get_num(root, "partial_rotary_factor", &prf, L))) return rc;
    if (prf != 1.0) return LR_FAIL(LR_EUNSUPPORTED, "%s: partial_rotary_factor %g (only 1)", L, prf);
    json_t *tie = json_object_get(root, "tie_word_embeddings");
    if (tie && !json_is_boolean(tie)) return LR_FAIL(LR_EFORMAT, "%s: tie_word_embeddings is not a boolean", L);
    c->tied_head = json_is_true(tie);
    if ((rc = get_token(root, "bos_token_id", &c->bos_id, L)) || (rc = get_token(root, "eos_token_id", &c->eos_id, L))) return rc;
    static const char *const flags[] = { "attention_bias", "mlp_bias", "use_sliding_window" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        json_t *v = json_object_get(root, flags[i]);
        if (v && !json_is_boolean(v) && !json_is_null(v)) /* 1 or "true" once read as false */
            return LR_FAIL(LR_EFORMAT, "%s: %s is not a boolean", L, flags[i]);
    }
    if (is_true(root, "attention_bias")) return LR_FAIL(LR_EUNSUPPORTED, "%s: attention_bias is true (no biases served)", L);
    if (is_true(root, "mlp_bias")) return LR_FAIL(LR_EUNSUPPORTED, "%s: mlp_bias is true (no biases served)", L);
    json_t *act = json_object_get(root, "hidden_act");
    if (act && !(json_is_string(act) && !strcmp(json_string_value(act), "silu")))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: hidden_act %s (only silu)", L, json_is_string(act) ? json_string_value(act) : "?");
    if (json_object_get(root, "quantization_config"))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: the checkpoint is already quantized (quantization_config); import the "
                       "original weights", L);
    /* A sliding window only matters beyond its length: serving at most that
     * many positions keeps the model exact. */
    json_t *sw = json_object_get(root, "sliding_window"), *use_sw = json_object_get(root, "use_sliding_window");
    if (sw && !json_is_integer(sw) && !json_is_null(sw)) /* "4096" was ignored: the window not applied */
        return LR_FAIL(LR_EFORMAT, "%s: sliding_window is not an integer or null", L);
    if (json_is_integer(sw) && json_integer_value(sw) > 0 && !json_is_false(use_sw) &&
        (uint64_t)json_integer_value(sw) < c->max_context) {
        lr_warn("%s: sliding_window %lld < max_position_embeddings %u: the context is limited to the window", L,
                (long long)json_integer_value(sw), c->max_context);
        c->max_context = (uint32_t)json_integer_value(sw);
    }
    if (c->max_context > LR_MAX_CONTEXT) {
        lr_warn("%s: max_position_embeddings %u is limited to %u", L, c->max_context, LR_MAX_CONTEXT);
        c->max_context = LR_MAX_CONTEXT;
    }
    json_t *nm = json_object_get(root, "_name_or_path");
    const char *name = json_is_string(nm) && json_string_length(nm) ? json_string_value(nm) : default_name;
    if (name) {
        const char *slash = strrchr(name, '/');
        if (slash && slash[1]) name = slash + 1;
        snprintf(c->name, sizeof c->name, "%.63s", name);
        for (char *p = c->name; *p; p++) /* control characters out of a name printed in messages, as GGUF's */
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    }
    return LR_OK;
}

int lr_hf_config_parse(const char *json, size_t n, const char *label, const char *default_name, lr_model_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    json_error_t je;
    json_t *root = json_loadb(json, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) return LR_FAIL(LR_EFORMAT, "%s: JSON: %s (line %d, column %d)", label, je.text, je.line, je.column);
    int rc = parse(root, label, default_name, cfg);
    json_decref(root);
    return rc;
}
