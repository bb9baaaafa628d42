/* The chat template of instruct models: Qwen3's ChatML (the template in its
 * tokenizer_config.json, without tools):
 *
 *   <|im_start|>system\n{system}<|im_end|>\n        (only when there is one)
 *   <|im_start|>user\n{text}<|im_end|>\n
 *   <|im_start|>assistant\n{text}<|im_end|>\n
 *   ...
 *   <|im_start|>assistant\n                          (the generation prompt)
 *   <think>\n\n</think>\n\n                          (only with thinking off)
 *
 * The result is text to encode with special tokens allowed. */
#ifndef LR_CHAT_H
#define LR_CHAT_H
#include <stddef.h>

typedef struct lr_chat_msg {
    const char *role;    /* "system", "user", "assistant" */
    const char *content;
} lr_chat_msg;

/* Renders msgs and, with add_generation_prompt, the assistant prompt that
 * starts the reply; no_think appends Qwen3's empty thinking block (its
 * enable_thinking=false). *out is malloc'd and NUL-terminated. */
int lr_chat_render(const lr_chat_msg *msgs, int n, int add_generation_prompt, int no_think, char **out);
/* The common case: an optional system prompt (NULL or "" = none) and one
 * user turn, ready for generation. */
int lr_chat_prompt(const char *system, const char *user, int no_think, char **out);

struct lr_tok;
/* 1 when the tokenizer has ChatML's <|im_start|> and <|im_end|> as special tokens. */
int lr_chat_tokenizer_is_chatml(const struct lr_tok *tok);

#endif
