/* The tokenizer object: token table, the two hash maps (bytes -> id and
 * pair -> merge), the builder the loaders use, accessors, and the encode
 * pipeline (added tokens, NFC, pre-tokenizer, BPE). */
#include "loader/tokenizer/tok_internal.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "loader/tokenizer/unicode.h"
#include "util/err.h"
#include "util/log.h"

/* Ids above this are refused: no real vocabulary comes near it, and it bounds
 * what a hostile file can make us allocate. */
#define TOK_MAX_ID (1 << 22)

int lr_tok_ids_push(lr_tok_ids *v, int32_t id)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        int32_t *p = realloc(v->ids, cap * sizeof *p);
        if (!p) return LR_FAIL(LR_ENOMEM, "token id buffer of %zu ids", cap);
        v->ids = p;
        v->cap = cap;
    }
    v->ids[v->n++] = id;
    return LR_OK;
}

void lr_tok_ids_free(lr_tok_ids *v)
{
    free(v->ids);
    v->ids = NULL;
    v->n = v->cap = 0;
}

int tok_create(const char *name, lr_tok **out)
{
    *out = NULL;
    lr_tok *t = calloc(1, sizeof *t);
    if (!t || !(t->name = strdup(name ? name : "tokenizer"))) {
        free(t);
        return LR_FAIL(LR_ENOMEM, "tokenizer");
    }
    t->unk = t->bos = t->eos = t->pad = -1;
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    *out = t;
    return LR_OK;
}

void lr_tok_free(lr_tok *t)
{
    if (!t) return;
    free(t->name);
    free(t->off);
    free(t->len);
    free(t->flags);
    free(t->arena);
    free(t->vmap);
    free(t->vhash);
    free(t->pkey);
    free(t->prank);
    free(t->pmerged);
    free(t->added);
    free(t);
}

static uint32_t hash_bytes(const uint8_t *s, size_t len) { return (uint32_t)XXH3_64bits(s, len); }


int tok_set(lr_tok *t, int32_t id, const uint8_t *s, size_t len, int flags)
{
    if (id < 0 || id >= TOK_MAX_ID)
        return LR_FAIL(LR_EFORMAT, "%s: token id %d out of range [0, %d)", t->name, (int)id, TOK_MAX_ID);
    if (len > UINT32_MAX) return LR_FAIL(LR_EFORMAT, "%s: token %d too long", t->name, (int)id);
    if ((size_t)id >= t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (cap <= (size_t)id) cap *= 2;
        uint64_t *off = realloc(t->off, cap * sizeof *off);
        if (off) t->off = off;
        uint32_t *ln = realloc(t->len, cap * sizeof *ln);
        if (ln) t->len = ln;
        uint8_t *fl = realloc(t->flags, cap);
        if (fl) t->flags = fl;
        if (!off || !ln || !fl) return LR_FAIL(LR_ENOMEM, "%s: token table of %zu", t->name, cap);
        memset(t->flags + t->cap, 0, cap - t->cap);
        memset(t->len + t->cap, 0, (cap - t->cap) * sizeof *ln);
        memset(t->off + t->cap, 0, (cap - t->cap) * sizeof *off);
        t->cap = cap;
    }
    if (t->flags[id] & TOK_PRESENT) {
        /* The same token listed twice (an added token that is also in the
         * vocabulary): fine when the text agrees. */
        if (t->len[id] != len || memcmp(tok_bytes(t, id), s, len) != 0)
            return LR_FAIL(LR_EFORMAT, "%s: id %d is given to two different tokens", t->name, (int)id);
        t->flags[id] |= (uint8_t)flags;
        return LR_OK;
    }
    if (t->arena_len + len > t->arena_cap) {
        size_t cap = t->arena_cap ? t->arena_cap : 1 << 16;
        while (cap < t->arena_len + len) cap *= 2;
        uint8_t *a = realloc(t->arena, cap);
        if (!a) return LR_FAIL(LR_ENOMEM, "%s: token text (%zu bytes)", t->name, cap);
        t->arena = a;
        t->arena_cap = cap;
    }
    if (len) memcpy(t->arena + t->arena_len, s, len);
    t->off[id] = t->arena_len;
    t->len[id] = (uint32_t)len;
    t->flags[id] = (uint8_t)(flags | TOK_PRESENT);
    t->arena_len += len;
    if (id >= t->n) t->n = id + 1;
    if (len > t->max_len) t->max_len = len;
    return LR_OK;
}

int tok_index_vocab(lr_tok *t)
{
    size_t count = 0;
    for (int32_t i = 0; i < t->n; i++) count += (t->flags[i] & TOK_VOCAB) != 0;
    size_t size = 64;
    while (size < count * 2) size *= 2;
    free(t->vmap);
    free(t->vhash);
    t->vmap = calloc(size, sizeof *t->vmap);
    t->vhash = calloc(size, sizeof *t->vhash);
    if (!t->vmap || !t->vhash) return LR_FAIL(LR_ENOMEM, "%s: vocabulary index", t->name);
    t->vmask = size - 1;
    size_t dups = 0;
    for (int32_t i = 0; i < t->n; i++) {
        if (!(t->flags[i] & TOK_VOCAB)) continue;
        uint32_t h = hash_bytes(tok_bytes(t, i), t->len[i]);
        size_t k = h & t->vmask;
        int dup = 0;
        for (; t->vmap[k]; k = (k + 1) & t->vmask) {
            int32_t j = (int32_t)t->vmap[k] - 1;
            if (t->vhash[k] == h && t->len[j] == t->len[i] &&
                memcmp(tok_bytes(t, j), tok_bytes(t, i), t->len[i]) == 0) { dup = 1; break; }
        }
        if (dup) { dups++; continue; } /* the lower id keeps the text */
        t->vmap[k] = (uint32_t)i + 1;
        t->vhash[k] = h;
    }
    if (dups) lr_warn("%s: %zu vocabulary entries repeat the text of a lower id", t->name, dups);
    return LR_OK;
}

int32_t tok_vocab_find(const lr_tok *t, const uint8_t *s, size_t len)
{
    if (!t->vmap) return -1;
    uint32_t h = hash_bytes(s, len);
    for (size_t k = h & t->vmask; t->vmap[k]; k = (k + 1) & t->vmask) {
        int32_t j = (int32_t)t->vmap[k] - 1;
        if (t->vhash[k] == h && t->len[j] == len && memcmp(tok_bytes(t, j), s, len) == 0) return j;
    }
    return -1;
}

static size_t pair_slot(uint64_t key, size_t mask)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

#define PAIR_EMPTY UINT64_MAX

static int pairs_grow(lr_tok *t)
{
    size_t size = t->pmask ? (t->pmask + 1) * 2 : 1024;
    uint64_t *key = malloc(size * sizeof *key);
    uint32_t *rank = malloc(size * sizeof *rank), *merged = malloc(size * sizeof *merged);
    if (!key || !rank || !merged) {
        free(key); free(rank); free(merged);
        return LR_FAIL(LR_ENOMEM, "%s: merge table", t->name);
    }
    for (size_t i = 0; i < size; i++) key[i] = PAIR_EMPTY;
    for (size_t i = 0; t->pkey && i <= t->pmask; i++) {
        if (t->pkey[i] == PAIR_EMPTY) continue;
        size_t k = pair_slot(t->pkey[i], size - 1);
        while (key[k] != PAIR_EMPTY) k = (k + 1) & (size - 1);
        key[k] = t->pkey[i];
        rank[k] = t->prank[i];
        merged[k] = t->pmerged[i];
    }
    free(t->pkey); free(t->prank); free(t->pmerged);
    t->pkey = key;
    t->prank = rank;
    t->pmerged = merged;
    t->pmask = size - 1;
    return LR_OK;
}

int tok_add_merge(lr_tok *t, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint32_t rank)
{
    int32_t ia = tok_vocab_find(t, a, alen), ib = tok_vocab_find(t, b, blen);
    if (ia < 0 || ib < 0)
        return LR_FAIL(LR_EFORMAT, "%s: merge %u: %s part is not in the vocabulary", t->name,
                       (unsigned)rank, ia < 0 ? "left" : "right");
    uint8_t small[256], *ab = alen + blen <= sizeof small ? small : malloc(alen + blen);
    if (!ab) return LR_FAIL(LR_ENOMEM, "%s: merge", t->name);
    memcpy(ab, a, alen);
    memcpy(ab + alen, b, blen);
    int32_t im = tok_vocab_find(t, ab, alen + blen);
    if (ab != small) free(ab);
    if (im < 0)
        return LR_FAIL(LR_EFORMAT, "%s: merge %u: the merged token is not in the vocabulary",
                       t->name, (unsigned)rank);
    if ((t->npairs + 1) * 2 > t->pmask + 1 || !t->pkey) {
        int rc = pairs_grow(t);
        if (rc) return rc;
    }
    uint64_t key = (uint64_t)ia << 32 | (uint32_t)ib;
    size_t k = pair_slot(key, t->pmask);
    for (; t->pkey[k] != PAIR_EMPTY; k = (k + 1) & t->pmask)
        if (t->pkey[k] == key) return LR_OK; /* a repeated merge keeps its first rank */
    t->pkey[k] = key;
    t->prank[k] = rank;
    t->pmerged[k] = (uint32_t)im;
    t->npairs++;
    return LR_OK;
}

typedef struct {
    uint32_t rank;
    uint64_t key;
} rank_key;

static int rank_cmp(const void *x, const void *y)
{
    const rank_key *a = x, *b = y;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

int lr_tok_merge_pairs(const lr_tok *t, int32_t **pairs, size_t *n)
{
    *pairs = NULL;
    *n = 0;
    if (!t->npairs) return LR_OK;
    rank_key *v = malloc(t->npairs * sizeof *v);
    int32_t *p = malloc(2 * t->npairs * sizeof *p);
    if (!v || !p) {
        free(v);
        free(p);
        return LR_FAIL(LR_ENOMEM, "%s: %zu merges", t->name, t->npairs);
    }
    size_t k = 0;
    for (size_t i = 0; i <= t->pmask && k < t->npairs; i++)
        if (t->pkey[i] != PAIR_EMPTY) v[k++] = (rank_key){ t->prank[i], t->pkey[i] };
    qsort(v, k, sizeof *v, rank_cmp);
    for (size_t i = 0; i < k; i++) {
        p[2 * i] = (int32_t)(v[i].key >> 32);
        p[2 * i + 1] = (int32_t)(uint32_t)v[i].key;
    }
    free(v);
    *pairs = p;
    *n = k;
    return LR_OK;
}

static int added_cmp(const void *x, const void *y)
{
    const tok_added *a = x, *b = y;
    if (a->s[0] != b->s[0]) return a->s[0] < b->s[0] ? -1 : 1;
    if (a->len != b->len) return a->len > b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

int tok_finish(lr_tok *t)
{
    if (t->n == 0) return LR_FAIL(LR_EFORMAT, "%s: empty vocabulary", t->name);
    if (!t->vmap) {
        int rc = tok_index_vocab(t);
        if (rc) return rc;
    }
    int missing = 0;
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        /* SentencePiece: a byte's token is its <0xNN> fallback (none without
           byte_fallback: an unknown character is then the unknown token) */
        t->byte_id[b] = t->spm ? -1 : tok_vocab_find(t, &c, 1);
    }
    if (t->byte_fallback)
        for (int32_t i = t->n - 1; i >= 0; i--) /* the lowest id wins */
            if ((t->flags[i] & TOK_BYTEFB) && t->len[i] == 1) t->byte_id[tok_bytes(t, i)[0]] = i;
    if (!t->spm || t->byte_fallback)
        for (int b = 0; b < 256; b++) missing += t->byte_id[b] < 0;
    if (missing)
        lr_warn("%s: %d of the 256 byte tokens are missing; such bytes encode as %s", t->name,
                missing, t->unk >= 0 ? "the unknown token" : "nothing");
    size_t na = 0;
    for (int32_t i = 0; i < t->n; i++) na += (t->flags[i] & TOK_ADDED) && t->len[i];
    free(t->added);
    t->added = calloc(na ? na : 1, sizeof *t->added);
    if (!t->added) return LR_FAIL(LR_ENOMEM, "%s: added tokens", t->name);
    t->nadded = 0;
    for (int32_t i = 0; i < t->n; i++) {
        if (!(t->flags[i] & TOK_ADDED) || !t->len[i]) continue;
        tok_added *a = &t->added[t->nadded++];
        a->id = i;
        a->len = t->len[i];
        a->s = tok_bytes(t, i);
        a->flags = t->flags[i];
    }
    qsort(t->added, t->nadded, sizeof *t->added, added_cmp);
    memset(t->first_any, 0, sizeof t->first_any);
    size_t j = 0;
    for (int b = 0; b < 256; b++) {
        t->first[b] = (uint32_t)j;
        while (j < t->nadded && t->added[j].s[0] == b) j++;
        t->first_any[b] = t->first[b] != j;
    }
    t->first[256] = (uint32_t)j;
    int32_t *sp[] = { &t->bos, &t->eos, &t->pad, &t->unk };
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++)
        if (*sp[k] >= t->n || (*sp[k] >= 0 && !(t->flags[*sp[k]] & TOK_PRESENT))) {
            lr_warn("%s: special token id %d is not in the vocabulary; ignored", t->name, (int)*sp[k]);
            *sp[k] = -1;
        }
    if (t->add_bos && t->bos < 0) {
        lr_warn("%s: the tokenizer asks for a BOS token but names none; no BOS added", t->name);
        t->add_bos = 0;
    }
    return LR_OK;
}

/* ---- accessors ---- */

int32_t lr_tok_vocab_size(const lr_tok *t) { return t->n; }
int32_t lr_tok_bos(const lr_tok *t) { return t->bos; }
int32_t lr_tok_eos(const lr_tok *t) { return t->eos; }
int32_t lr_tok_pad(const lr_tok *t) { return t->pad; }
int lr_tok_add_bos(const lr_tok *t) { return t->add_bos; }

int lr_tok_set_special(lr_tok *t, int which, int32_t id)
{
    if (id < -1 || id >= t->n || (id >= 0 && !(t->flags[id] & TOK_PRESENT)))
        return LR_FAIL(LR_ERANGE, "%s: special token id %d not in the vocabulary", t->name, (int)id);
    switch (which) {
    case LR_TOK_BOS: t->bos = id; return LR_OK;
    case LR_TOK_EOS: t->eos = id; return LR_OK;
    case LR_TOK_PAD: t->pad = id; return LR_OK;
    }
    return LR_FAIL(LR_EINVAL, "special token kind %d", which);
}

int32_t lr_tok_find(const lr_tok *t, const char *s, size_t len)
{
    const uint8_t *u = (const uint8_t *)s;
    if (len && t->first_any[u[0]])
        for (uint32_t i = t->first[u[0]]; i < t->first[u[0] + 1]; i++)
            if (t->added[i].len == len && memcmp(t->added[i].s, u, len) == 0) return t->added[i].id;
    return tok_vocab_find(t, u, len);
}

const char *lr_tok_token(const lr_tok *t, int32_t id, size_t *len)
{
    if (id < 0 || id >= t->n || !(t->flags[id] & TOK_PRESENT)) { *len = 0; return NULL; }
    *len = t->len[id];
    return (const char *)tok_bytes(t, id);
}

int lr_tok_is_special(const lr_tok *t, int32_t id)
{
    return id >= 0 && id < t->n && (t->flags[id] & TOK_SPECIAL) != 0;
}

/* ---- encode ---- */

static int is_ws_at(const uint8_t *s, size_t n, size_t i, size_t *clen)
{
    uint32_t cp;
    *clen = (size_t)lr_utf8_decode(s + i, n - i, &cp);
    return lr_uc_class(cp) == LR_UC_WS;
}

/* The start of the whitespace character that ends at s[end] (end > lo), or
 * end when it is not whitespace. */
static size_t ws_before(const uint8_t *s, size_t lo, size_t end)
{
    size_t b = end - 1;
    while (b > lo && end - b < 4 && (s[b] & 0xC0) == 0x80) b--;
    size_t clen;
    return is_ws_at(s, end, b, &clen) && b + clen == end ? b : end;
}

static int ensure_buf(tok_scratch *sc, size_t n)
{
    if (n <= sc->buf_cap) return LR_OK;
    size_t cap = sc->buf_cap ? sc->buf_cap : 256;
    while (cap < n) cap *= 2;
    uint8_t *p = realloc(sc->buf, cap);
    if (!p) return LR_FAIL(LR_ENOMEM, "tokenizer scratch of %zu bytes", cap);
    sc->buf = p;
    sc->buf_cap = cap;
    return LR_OK;
}

static int encode_word(const lr_tok *t, const uint8_t *w, size_t n, tok_scratch *sc, lr_tok_ids *out)
{
    if (t->prefix_piece && w[0] != ' ') {
        int rc = ensure_buf(sc, n + 1);
        if (rc) return rc;
        sc->buf[0] = ' ';
        memcpy(sc->buf + 1, w, n);
        w = sc->buf;
        n++;
    }
    if (!t->spm && (t->ignore_merges || n == 1)) {
        int32_t id = n == 1 ? t->byte_id[w[0]] : tok_vocab_find(t, w, n);
        if (id >= 0) return lr_tok_ids_push(out, id);
    }
    return tok_bpe_word(t, w, n, sc, out);
}

/* SentencePiece's normalization of one segment: the metaspace U+2581 is a
 * space (tokens store it so), a space goes in front as the tokenizer says,
 * then the words: the whole segment, or (Metaspace split) one starting at
 * each space. at_start: the segment begins the text. */
static int encode_spm(const lr_tok *t, const uint8_t *s, size_t n, int at_start, tok_scratch *sc, lr_tok_ids *out)
{
    int pre = t->spm_prepend == 1 || ((t->spm_prepend == 2 || (t->spm_prepend == 3 && at_start)) &&
                                      !(s[0] == ' ' || (n >= 3 && !memcmp(s, "\xE2\x96\x81", 3))));
    uint8_t *w = malloc(n + 1);
    if (!w) return LR_FAIL(LR_ENOMEM, "%zu bytes", n + 1);
    size_t m = 0;
    if (pre) w[m++] = ' ';
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && !memcmp(s + i, "\xE2\x96\x81", 3)) { w[m++] = ' '; i += 3; }
        else w[m++] = s[i++];
    }
    int rc = LR_OK;
    for (size_t i = 0; i < m && rc == LR_OK;) {
        size_t e = m;
        if (t->spm_split)
            for (e = i + 1; e < m && w[e] != ' '; e++) {}
        rc = tok_bpe_word(t, w + i, e - i, sc, out);
        i = e;
    }
    free(w);
    return rc;
}

/* Normalizes and pre-tokenizes one piece of text between added tokens. */
static int encode_segment(const lr_tok *t, const uint8_t *s, size_t n, int at_start, tok_scratch *sc, lr_tok_ids *out)
{
    if (n == 0) return LR_OK;
    uint8_t *norm = NULL;
    if (t->nfc && lr_nfc_needed(s, n)) {
        size_t m;
        if (lr_nfc(s, n, &norm, &m) != 0) return LR_FAIL(LR_ENOMEM, "NFC of %zu bytes", n);
        s = norm;
        n = m;
    }
    if (t->spm) {
        int rc = encode_spm(t, s, n, at_start, sc, out);
        free(norm);
        return rc;
    }
    uint8_t *pre = NULL;
    if (t->prefix_segment && s[0] != ' ') {
        pre = malloc(n + 1);
        if (!pre) { free(norm); return LR_FAIL(LR_ENOMEM, "%zu bytes", n + 1); }
        pre[0] = ' ';
        memcpy(pre + 1, s, n);
        s = pre;
        n++;
    }
    int rc = LR_OK;
    size_t lim = 0;
    for (size_t i = 0; i < n && rc == LR_OK;) {
        size_t e = tok_piece_next(t, s, n, i, &lim);
        rc = encode_word(t, s + i, e - i, sc, out);
        i = e;
    }
    free(pre);
    free(norm);
    return rc;
}

/* The added token matching at s[i], or NULL. */
static const tok_added *match_added(const lr_tok *t, const uint8_t *s, size_t n, size_t i, int allow_special)
{
    for (uint32_t k = t->first[s[i]]; k < t->first[s[i] + 1]; k++) {
        const tok_added *a = &t->added[k];
        if ((a->flags & TOK_SPECIAL) && !allow_special) continue;
        if (a->len <= n - i && memcmp(a->s, s + i, a->len) == 0) return a;
    }
    return NULL;
}

int lr_tok_encode(const lr_tok *t, const char *text, size_t len, int allow_special, lr_tok_ids *out)
{
    if (!text && len) return LR_FAIL(LR_EINVAL, "encode: NULL text");
    const uint8_t *s = (const uint8_t *)text;
    tok_scratch sc = {0};
    int rc = LR_OK;
    size_t seg = 0; /* start of the text not yet encoded */
    for (size_t i = 0; i < len && rc == LR_OK;) {
        const tok_added *a = t->first_any[s[i]] ? match_added(t, s, len, i, allow_special) : NULL;
        if (!a) { i++; continue; }
        size_t start = i, end = i + a->len;
        if (a->flags & TOK_LSTRIP)
            for (size_t b; start > seg && (b = ws_before(s, seg, start)) != start;) start = b;
        if (a->flags & TOK_RSTRIP)
            for (size_t clen; end < len && is_ws_at(s, len, end, &clen);) end += clen;
        rc = encode_segment(t, s + seg, start - seg, seg == 0, &sc, out);
        if (rc == LR_OK) rc = lr_tok_ids_push(out, a->id);
        seg = i = end;
    }
    if (rc == LR_OK) rc = encode_segment(t, s + seg, len - seg, seg == 0, &sc, out);
    tok_scratch_free(&sc);
    return rc;
}
