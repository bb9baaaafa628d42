/* For tests: the demo tokenizer with a BOS rule, <|endoftext|> before the
 * text through a TemplateProcessing post-processor (the form a Llama
 * tokenizer.json has), written to a file for gen_synthetic --tokenizer. */
#ifndef LR_TEST_BOS_TOKENIZER_H
#define LR_TEST_BOS_TOKENIZER_H
#include "loader/import/tokjson_bos.h"
#include "loader/tokenizer/tokenizer.h"
#include "rt/demo_model.h"
#include "util/atomic_file.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The BOS id, or -1 when the file cannot be made. */
static inline int32_t t_write_bos_tokenizer(const char *path)
{
    char *json;
    size_t n;
    if (lr_demo_tokenizer_json(&json, &n)) return -1;
    lr_tok *t = NULL;
    int32_t bos = lr_tok_load_hf_mem(json, n, NULL, 0, "demo", &t) ? -1 : lr_tok_find(t, "<|endoftext|>", 13);
    lr_tok_free(t);
    json_t *root = json_loadb(json, n, 0, NULL);
    free(json);
    json_t *post = bos >= 0 ? lr_tokjson_bos_template("<|endoftext|>", 13, bos) : NULL;
    char *text = NULL;
    if (!root || !post) json_decref(post);
    else if (json_object_set_new(root, "post_processor", post) == 0) text = json_dumps(root, JSON_COMPACT);
    /* (set_new took post, failing or not) */
    json_decref(root);
    int ok = text && lr_write_file_atomic(path, text, strlen(text)) == 0;
    free(text);
    return ok ? bos : -1;
}

#endif
