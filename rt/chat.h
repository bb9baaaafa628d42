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
 * lr_chat_render's result is text to encode with special tokens allowed,
 * which lets a message's own "<|im_end|>" become the control token;
 * lr_chat_render_parts gives the markup and the contents apart, so that only
 * the markup is encoded with specials (lr_rt_tokenize_chat). */
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
/* The template in pieces, in order: fn(user, text, special) with special 1
 * for the markup and 0 for a message's content (empty contents skipped); the
 * first nonzero return stops it and is returned. */
typedef int (*lr_chat_part_fn)(void *user, const char *text, int special);
int lr_chat_render_parts(const lr_chat_msg *msgs, int n, int add_generation_prompt, int no_think, lr_chat_part_fn fn,
                         void *user);
/* The common case: an optional system prompt (NULL or "" = none) and one
 * user turn, ready for generation. */
int lr_chat_prompt(const char *system, const char *user, int no_think, char **out);

struct lr_tok;
/* 1 when the tokenizer has ChatML's <|im_start|> and <|im_end|> as special tokens. */
int lr_chat_tokenizer_is_chatml(const struct lr_tok *tok);

#endif
