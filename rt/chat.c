/* ChatML rendering (rt/chat.h). */
#include "rt/chat.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *t)
{
    size_t m = strlen(t);
    if (b->oom) return;
    if (b->n + m + 1 > b->cap) {
        size_t cap = (b->n + m + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->oom = 1; return; }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, t, m + 1);
    b->n += m;
}

int lr_chat_render_parts(const lr_chat_msg *msgs, int n, int add_generation_prompt, int no_think, lr_chat_part_fn fn,
                         void *user)
{
    for (int i = 0; i < n; i++) {
        const char *r = msgs[i].role;
        if (!r || (strcmp(r, "system") && strcmp(r, "user") && strcmp(r, "assistant")))
            return LR_FAIL(LR_EINVAL, "chat: message %d has role \"%s\" (system, user or assistant)", i, r ? r : "(null)");
    }
    int rc = LR_OK;
    char head[64];
    for (int i = 0; i < n && !rc; i++) {
        snprintf(head, sizeof head, "<|im_start|>%s\n", msgs[i].role);
        rc = fn(user, head, 1);
        if (!rc && msgs[i].content && *msgs[i].content) rc = fn(user, msgs[i].content, 0);
        if (!rc) rc = fn(user, "<|im_end|>\n", 1);
    }
    if (!rc && add_generation_prompt) rc = fn(user, "<|im_start|>assistant\n", 1);
    if (!rc && add_generation_prompt && no_think) rc = fn(user, "<think>\n\n</think>\n\n", 1);
    return rc;
}

static int put_part(void *user, const char *text, int special)
{
    (void)special;
    sbuf *b = user;
    put(b, text);
    return b->oom ? LR_FAIL(LR_ENOMEM, "chat: out of memory") : LR_OK;
}

int lr_chat_render(const lr_chat_msg *msgs, int n, int add_generation_prompt, int no_think, char **out)
{
    *out = NULL;
    sbuf b = { 0 };
    put(&b, "");
    int rc = b.oom ? LR_FAIL(LR_ENOMEM, "chat: out of memory")
                   : lr_chat_render_parts(msgs, n, add_generation_prompt, no_think, put_part, &b);
    if (rc) {
        free(b.s);
        return rc;
    }
    *out = b.s;
    return LR_OK;
}

int lr_chat_prompt(const char *system, const char *user, int no_think, char **out)
{
    lr_chat_msg m[2];
    int n = 0;
    if (system && *system) m[n++] = (lr_chat_msg){ "system", system };
    m[n++] = (lr_chat_msg){ "user", user };
    return lr_chat_render(m, n, 1, no_think, out);
}

static int is_special(const lr_tok *tok, const char *s)
{
    int32_t id = lr_tok_find(tok, s, strlen(s));
    return id >= 0 && lr_tok_is_special(tok, id);
}

int lr_chat_tokenizer_is_chatml(const lr_tok *tok)
{
    return tok && is_special(tok, "<|im_start|>") && is_special(tok, "<|im_end|>");
}
