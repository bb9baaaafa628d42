/* Decoding: ids -> exact bytes, and the streaming decoder that hands out only
 * complete, valid UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "loader/tokenizer/tok_internal.h"
#include "util/err.h"

static int check_id(const lr_tok *t, int32_t id)
{
    if (id < 0 || id >= t->n)
        return LR_FAIL(LR_ERANGE, "%s: token id %d out of range [0, %d)", t->name, (int)id, (int)t->n);
    return LR_OK;
}

int lr_tok_decode(const lr_tok *t, const int32_t *ids, size_t n, int skip_special, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = check_id(t, ids[i]);
        if (rc) return rc;
        if (!(skip_special && (t->flags[ids[i]] & TOK_SPECIAL))) total += t->len[ids[i]];
    }
    char *out = malloc(total + 1);
    if (!out) return LR_FAIL(LR_ENOMEM, "decode: %zu bytes", total + 1);
    size_t o = 0;
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (skip_special && (t->flags[id] & TOK_SPECIAL)) continue;
        const uint8_t *b = tok_bytes(t, id);
        if (first && t->meta_first) {
            /* a Metaspace decoder drops the first token's metaspaces (spaces here) */
            for (uint32_t k = 0; k < t->len[id]; k++)
                if (b[k] != ' ') out[o++] = (char)b[k];
        } else {
            memcpy(out + o, b, t->len[id]);
            o += t->len[id];
        }
        first = 0;
    }
    out[o] = 0;
    /* SentencePiece's decoder strips the space its normalizer put in front
       (tokenizer.json's Strip); a streamed continuation keeps its spaces */
    size_t lead = 0;
    while (lead < (size_t)t->strip_lead && lead < o && out[lead] == ' ') lead++;
    if (lead) memmove(out, out + lead, o - lead + 1);
    *text = out;
    *len = o - lead;
    return LR_OK;
}

void lr_tok_stream_init(lr_tok_stream *s, const lr_tok *tok, int skip_special)
{
    memset(s, 0, sizeof *s);
    s->tok = tok;
    s->skip_special = skip_special;
}

void lr_tok_stream_free(lr_tok_stream *s)
{
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/* How many bytes of b[0..n) form a valid prefix of a UTF-8 character, and
 * the length the character needs (0 for a byte that cannot start one). */
static int utf8_prefix(const uint8_t *b, size_t n, int *need)
{
    uint8_t c = b[0];
    uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80) { *need = 1; return 1; }
    if (c >= 0xC2 && c <= 0xDF) *need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        *need = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        *need = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else { *need = 0; return 1; }
    int k = 1;
    while (k < *need && (size_t)k < n) {
        uint8_t x = b[k];
        if (k == 1 ? (x < lo || x > hi) : (x & 0xC0) != 0x80) break;
        k++;
    }
    return k;
}

static int put(lr_tok_stream *s, size_t *o, const void *p, size_t n)
{
    if (*o + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < *o + n) cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) return LR_FAIL(LR_ENOMEM, "stream decode buffer of %zu bytes", cap);
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + *o, p, n);
    *o += n;
    return LR_OK;
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

/* Emits the complete characters of held bytes + b[0..n); keeps a trailing
 * incomplete but valid prefix in s->pend. */
static int feed(lr_tok_stream *s, const uint8_t *b, size_t n, size_t *o)
{
    /* Finish a held character first. The held bytes are a valid prefix, so
     * the verdict comes within the next 3 bytes: complete, still a prefix
     * (the token ended: keep holding), or invalid after k bytes. */
    if (s->npend) {
        uint8_t tmp[4];
        size_t have = (size_t)s->npend, take = 4 - have < n ? 4 - have : n;
        memcpy(tmp, s->pend, have);
        memcpy(tmp + have, b, take);
        int need, k = utf8_prefix(tmp, have + take, &need);
        if (k < need && (size_t)k == have + take) {
            memcpy(s->pend, tmp, (size_t)k);
            s->npend = k;
            return LR_OK;
        }
        int rc = k == need ? put(s, o, tmp, (size_t)k) : put(s, o, REPLACEMENT, 3);
        if (rc) return rc;
        b += (size_t)k - have;
        n -= (size_t)k - have;
        s->npend = 0;
    }
    size_t i = 0;
    while (i < n) {
        if (b[i] < 0x80) {
            size_t j = i;
            while (j < n && b[j] < 0x80) j++;
            int rc = put(s, o, b + i, j - i);
            if (rc) return rc;
            i = j;
            continue;
        }
        int need, k = utf8_prefix(b + i, n - i, &need);
        int rc;
        if (k == need) rc = put(s, o, b + i, (size_t)k);
        else if (i + (size_t)k == n && need) {
            memcpy(s->pend, b + i, (size_t)k);
            s->npend = k;
            return LR_OK;
        } else rc = put(s, o, REPLACEMENT, 3);
        if (rc) return rc;
        i += (size_t)k;
    }
    return LR_OK;
}

int lr_tok_stream_push(lr_tok_stream *s, int32_t id, const char **text, size_t *len)
{
    *text = "";
    *len = 0;
    int rc = check_id(s->tok, id);
    if (rc) return rc;
    const lr_tok *t = s->tok;
    size_t o = 0;
    if (!(s->skip_special && (t->flags[id] & TOK_SPECIAL))) {
        rc = feed(s, tok_bytes(t, id), t->len[id], &o);
        if (rc) return rc;
    }
    if (o) {
        /* NUL-terminated too: a caller's printf("%s") must not run into an older piece */
        if ((rc = put(s, &o, "", 1))) return rc;
        o--;
        *text = s->buf;
    }
    *len = o;
    return LR_OK;
}

int lr_tok_stream_flush(lr_tok_stream *s, const char **text, size_t *len)
{
    *text = "";
    *len = 0;
    size_t o = 0;
    if (s->npend) {
        int rc = put(s, &o, REPLACEMENT, sizeof REPLACEMENT); /* with its NUL */
        if (rc) return rc;
        o--;
        s->npend = 0;
        *text = s->buf;
        *len = o;
    }
    return LR_OK;
}
