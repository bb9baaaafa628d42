/* How a tokenizer.json says "prompts start with BOS": a TemplateProcessing
 * post-processor that puts one special token before the text, the form
 * Hugging Face tokenizers use and loader/tokenizer reads back as add_bos.
 * The import writes it for a GGUF's add_bos_token and for a
 * tokenizer_config.json's add_bos_token that tokenizer.json lacks, so the
 * artifact's stored tokenizer.json alone carries the rule. */
#ifndef LR_IMPORT_TOKJSON_BOS_H
#define LR_IMPORT_TOKJSON_BOS_H
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The post-processor object for token id spelled text[0..len) (as the
 * vocabulary or added_tokens spell it); NULL when out of memory or the
 * text is not valid UTF-8. */
json_t *lr_tokjson_bos_template(const char *text, size_t len, int64_t id);

/* A Hugging Face folder's tokenizer_config.json folded into its
 * tokenizer.json text (*json, *n; malloc'd): when the pair, read as
 * transformers reads it (add_bos_token overrides the post-processor, and for
 * the Llama, Gemma and CodeLlama tokenizer classes its absence is true), adds a
 * different BOS than tokenizer.json alone, *json is replaced by a text whose
 * post_processor says what the pair says (and *changed set). A tokenizer.json
 * that loader/tokenizer cannot read is left as it is: the engine says so when
 * the model opens. name labels messages. */
int lr_tokjson_fold_config(char **json, size_t *n, const char *cfg, size_t cfg_n, const char *name, int *changed);

#endif
