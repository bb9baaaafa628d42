#include "loader/import/tokjson_bos.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

json_t *lr_tokjson_bos_template(const char *text, size_t len, int64_t id)
{
    json_t *t = json_stringn(text, len), *specials = json_object(), *out = NULL;
    json_t *entry = t ? json_pack("{s:O, s:[I], s:[O]}", "id", t, "ids", (json_int_t)id, "tokens", t) : NULL;
    /* setn_new takes entry whether it succeeds or not */
    if (t && specials && entry && json_object_setn_new(specials, text, len, entry) == 0)
        out = json_pack("{s:s, s:[{s:{s:O, s:i}}, {s:{s:s, s:i}}], s:[{s:{s:O, s:i}}, {s:{s:s, s:i}}, "
                        "{s:{s:O, s:i}}, {s:{s:s, s:i}}], s:O}",
                        "type", "TemplateProcessing", "single", "SpecialToken", "id", t, "type_id", 0, "Sequence", "id",
                        "A", "type_id", 0, "pair", "SpecialToken", "id", t, "type_id", 0, "Sequence", "id", "A",
                        "type_id", 0, "SpecialToken", "id", t, "type_id", 1, "Sequence", "id", "B", "type_id", 1,
                        "special_tokens", specials);
    else if (!specials)
        json_decref(entry);
    json_decref(specials);
    json_decref(t);
    return out;
}

static int same_rule(const lr_tok *a, const lr_tok *b)
{
    return lr_tok_add_bos(a) == lr_tok_add_bos(b) && (!lr_tok_add_bos(a) || lr_tok_bos(a) == lr_tok_bos(b));
}

/* The BOS token's spelling: tokenizer_config.json's bos_token (a string or
 * {"content": ...}), which is where the rule being written came from. */
static json_t *config_bos_text(const char *cfg, size_t cfg_n)
{
    json_t *c = json_loadb(cfg, cfg_n, 0, NULL), *v = json_object_get(c, "bos_token");
    if (json_is_object(v)) v = json_object_get(v, "content");
    json_t *out = json_is_string(v) ? json_incref(v) : NULL;
    json_decref(c);
    return out;
}

int lr_tokjson_fold_config(char **json, size_t *n, const char *cfg, size_t cfg_n, const char *name, int *changed)
{
    *changed = 0;
    lr_tok *alone = NULL, *pair = NULL;
    /* the pair's load says what is wrong with the files; the second, of
     * tokenizer.json alone, would only repeat it */
    int rc = lr_tok_load_hf_mem(*json, *n, cfg, cfg_n, name, &pair);
    lr_warn_mute(1);
    if (!rc) rc = lr_tok_load_hf_mem(*json, *n, NULL, 0, name, &alone);
    lr_warn_mute(0);
    if (rc || same_rule(alone, pair)) {
        lr_clear_error();
        lr_tok_free(alone);
        lr_tok_free(pair);
        return LR_OK;
    }
    const int add = lr_tok_add_bos(pair);
    const int32_t bos = lr_tok_bos(pair);
    lr_tok_free(alone);
    lr_tok_free(pair);
    json_error_t je;
    json_t *root = json_loadb(*json, *n, 0, &je), *post = NULL;
    if (!json_is_object(root)) {
        json_decref(root);
        return LR_FAIL(LR_EFORMAT, "%s: JSON: %s (line %d)", name, je.text, je.line);
    }
    rc = LR_OK;
    if (add) {
        json_t *text = config_bos_text(cfg, cfg_n);
        if (text) post = lr_tokjson_bos_template(json_string_value(text), json_string_length(text), bos);
        json_decref(text);
        if (!post) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", name);
    } else {
        post = json_null();
    }
    if (!rc && json_object_set_new(root, "post_processor", post)) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", name);
    char *text = rc ? NULL : json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!rc && !text) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory writing it", name);
    if (rc) return rc;
    free(*json);
    *json = text;
    *n = strlen(text);
    *changed = 1;
    return LR_OK;
}
