/* Fuzz target: GGUF parsing of arbitrary bytes. A file that parses is walked
 * completely (every value, every array element, the first and last byte of
 * every tensor whose size is known), then handed to the GGUF tokenizer
 * loader, and a tokenizer that loads is used once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader/gguf/gguf.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t g_sink;

static void walk(const lr_gguf_val *v)
{
    if (v->type == LR_GGUF_STR) {
        if (v->str.len) g_sink += (uint8_t)v->str.s[v->str.len - 1];
        return;
    }
    if (v->type != LR_GGUF_ARR) { g_sink += v->u; return; }
    for (uint64_t i = 0; i < v->arr.n; i++) {
        if (v->arr.type == LR_GGUF_STR) { if (v->arr.strs[i].len) g_sink += (uint8_t)v->arr.strs[i].s[0]; }
        else if (v->arr.type == LR_GGUF_ARR) walk(&v->arr.vals[i]);
        else g_sink += (uint64_t)lr_gguf_arr_int(v, i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lr_set_warn_handler(NULL);
    /* A private copy of the exact size, so reads past the end are caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    lr_gguf *g;
    if (lr_gguf_parse(copy, size, "fuzz.gguf", &g) == 0) {
        for (uint64_t i = 0; i < g->n_kv; i++) walk(&g->kv[i].val);
        for (uint64_t i = 0; i < g->n_tensors; i++) {
            const lr_gguf_tensor *t = &g->tensors[i];
            if (!t->nbytes) continue;
            const uint8_t *p = lr_gguf_tensor_data(g, t);
            g_sink += p[0] + p[t->nbytes - 1];
        }
        lr_tok *tok;
        if (lr_tok_from_gguf(g, &tok) == 0) {
            lr_tok_ids v = {0};
            static const char text[] = "Hello, world! 123 <|im_start|> caf\xc3\xa9 \xe4\xbd\xa0";
            if (lr_tok_encode(tok, text, sizeof text - 1, 1, &v) == 0) {
                char *out;
                size_t len;
                if (lr_tok_decode(tok, v.ids, v.n, 0, &out, &len) == 0) free(out);
            }
            lr_tok_ids_free(&v);
            lr_tok_free(tok);
        }
        lr_gguf_close(g);
    }
    free(copy);
    return 0;
}
