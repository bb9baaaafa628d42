/* The model the launcher runs when it is given none: the tiny synthetic
 * Qwen3 config (loader/synthetic.h) with a 512-token byte-level BPE
 * tokenizer (256 bytes, 253 merges of common English pairs, <|endoftext|>
 * <|im_start|> <|im_end|>), generated once into the cache folder. Its weights
 * are random: what it writes is meaningless. It exists so a fresh checkout
 * runs end to end in a second. */
#ifndef LR_DEMO_MODEL_H
#define LR_DEMO_MODEL_H
#include <stddef.h>

/* $LEECHRT_CACHE_DIR, else ~/.cache/leechrt (the cubin cache's folder), then
 * models/qwen3-tiny-demo-v1.lrt. */
int lr_demo_model_path(char *path, size_t n);
/* The path, generating the file first when it is missing (*created = 1). */
int lr_demo_model_ensure(char *path, size_t n, int *created);
/* The demo tokenizer.json (malloc'd, NUL-terminated). */
int lr_demo_tokenizer_json(char **json, size_t *n);

#endif
