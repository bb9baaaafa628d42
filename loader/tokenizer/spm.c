/* SentencePiece pieces: the metaspace, byte-fallback tokens, and merges made
 * from piece scores (GGUF's "llama" tokenizer model has scores, no merges). */
#include <stdlib.h>
#include <string.h>

#include "loader/tokenizer/tok_internal.h"
#include "util/err.h"

size_t tok_spm_decode(const char *s, size_t n, uint8_t *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && !memcmp(s + i, TOK_METASPACE, 3)) { out[o++] = ' '; i += 3; }
        else out[o++] = (uint8_t)s[i++];
    }
    return o;
}

int tok_spm_fallback_byte(const char *s, size_t n)
{
    if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') v = v * 16 + (c - '0');
        else if (c >= 'A' && c <= 'F') v = v * 16 + (c - 'A' + 10);
        else return -1;
    }
    return v;
}

typedef struct {
    float score;
    int32_t merged, left, right;
} cand;

static int cand_cmp(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->merged != b->merged) return a->merged < b->merged ? -1 : 1;
    return (a->left > b->left) - (a->left < b->left);
}

int tok_spm_merges(const lr_tok *t, const float *scores, tok_merge **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0, k = 0;
    cand *c = NULL;
    for (int32_t id = 0; id < t->n; id++) {
        /* a text given to several ids is looked up as its first; a piece
           longer than TOK_SPM_MAX_PIECE is no merge's result (SentencePiece's
           own pieces are at most 16 characters; the bound keeps a hostile
           file's cost linear: every cut of a piece hashes the piece) */
        if (!(t->flags[id] & TOK_VOCAB) || t->len[id] < 2 || t->len[id] > TOK_SPM_MAX_PIECE ||
            tok_vocab_find(t, tok_bytes(t, id), t->len[id]) != id)
            continue;
        const uint8_t *s = tok_bytes(t, id);
        size_t len = t->len[id];
        /* split at every character boundary (a continuation byte starts no character) */
        for (size_t cut = 1; cut < len; cut++) {
            if ((s[cut] & 0xC0) == 0x80) continue;
            int32_t a = tok_vocab_find(t, s, cut), b = tok_vocab_find(t, s + cut, len - cut);
            if (a < 0 || b < 0) continue;
            if (k == cap) {
                size_t nc = cap ? 2 * cap : 4096;
                cand *g = realloc(c, nc * sizeof *g);
                if (!g) { free(c); return LR_FAIL(LR_ENOMEM, "%s: %zu merges", t->name, nc); }
                c = g;
                cap = nc;
            }
            /* a NaN score ranks last */
            float sc = scores[id] == scores[id] ? scores[id] : -3.4e38f;
            c[k++] = (cand){ sc, id, a, b };
        }
    }
    if (!k) { free(c); return LR_OK; }
    qsort(c, k, sizeof *c, cand_cmp);
    tok_merge *m = malloc(k * sizeof *m);
    if (!m) { free(c); return LR_FAIL(LR_ENOMEM, "%s: %zu merges", t->name, k); }
    for (size_t i = 0; i < k; i++) m[i] = (tok_merge){ c[i].left, c[i].right };
    free(c);
    *out = m;
    *n = k;
    return LR_OK;
}
