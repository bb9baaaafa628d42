/* BPE merging of one word. The word starts as one symbol per byte in a
 * doubly linked list; a min-heap holds candidate adjacent pairs keyed by
 * (merge rank, position), so the lowest rank merges first and equal ranks
 * (the same pair) merge left to right -- the order Hugging Face tokenizers and
 * the original GPT-2 code produce. Entries made stale by an earlier merge are
 * recognised on pop (a symbol's id only ever grows into a longer token, so an
 * unchanged id pair means the pair is still there) and dropped. O(n log n)
 * per word, so a megabyte without a split point is still fast. */
#include <stdlib.h>
#include <string.h>

#include "loader/tokenizer/tok_internal.h"
#include "loader/tokenizer/unicode.h"
#include "util/err.h"

struct tok_sym {
    int32_t id; /* -1: merged away */
    int32_t prev, next;
};

struct tok_heap {
    uint64_t key; /* rank << 32 | left position */
    uint32_t right;
    int32_t lid, rid, merged;
};

void tok_scratch_free(tok_scratch *sc)
{
    free(sc->sym);
    free(sc->heap);
    free(sc->buf);
    memset(sc, 0, sizeof *sc);
}

static int pair_lookup(const lr_tok *t, int32_t a, int32_t b, uint32_t *rank, int32_t *merged)
{
    if (!t->pkey) return 0;
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t k = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & t->pmask;
    for (; t->pkey[k] != UINT64_MAX; k = (k + 1) & t->pmask)
        if (t->pkey[k] == key) {
            *rank = t->prank[k];
            *merged = (int32_t)t->pmerged[k];
            return 1;
        }
    return 0;
}

static void heap_push(struct tok_heap *h, size_t *n, struct tok_heap e)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].key <= e.key) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static struct tok_heap heap_pop(struct tok_heap *h, size_t *n)
{
    struct tok_heap top = h[0], last = h[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && h[c + 1].key < h[c].key) c++;
        if (last.key <= h[c].key) break;
        h[i] = h[c];
        i = c;
    }
    if (m) h[i] = last;
    return top;
}

/* Pushes the pair (left, its next) when it has a merge. */
static void push_pair(const lr_tok *t, const struct tok_sym *sym, int32_t left,
                      struct tok_heap *h, size_t *nh)
{
    int32_t right = sym[left].next;
    if (right < 0) return;
    uint32_t rank;
    int32_t merged;
    if (!pair_lookup(t, sym[left].id, sym[right].id, &rank, &merged)) return;
    struct tok_heap e = { (uint64_t)rank << 32 | (uint32_t)left, (uint32_t)right,
                          sym[left].id, sym[right].id, merged };
    heap_push(h, nh, e);
}

int tok_bpe_word(const lr_tok *t, const uint8_t *w, size_t n, tok_scratch *sc, lr_tok_ids *out)
{
    if (n > INT32_MAX) return LR_FAIL(LR_ERANGE, "word of %zu bytes", n);
    if (n > sc->sym_cap) {
        size_t cap = sc->sym_cap ? sc->sym_cap : 64;
        while (cap < n) cap *= 2;
        free(sc->sym);
        free(sc->heap);
        sc->sym = malloc(cap * sizeof *sc->sym);
        /* Every push follows a merge (at most 2 each) or an initial pair. */
        sc->heap = malloc(3 * cap * sizeof *sc->heap);
        sc->sym_cap = sc->heap_cap = 0;
        if (!sc->sym || !sc->heap) return LR_FAIL(LR_ENOMEM, "BPE scratch for a %zu-byte word", n);
        sc->sym_cap = cap;
        sc->heap_cap = 3 * cap;
    }
    struct tok_sym *sym = sc->sym;
    int32_t head = -1, prev = -1, count = 0;
#define PUSH_SYM(v) do { sym[count] = (struct tok_sym){ (v), prev, -1 }; \
        if (prev >= 0) sym[prev].next = count; else head = count; prev = count++; } while (0)
    if (t->spm) {
        /* One symbol per character (a byte not starting a valid one stands
           alone); a character without a token becomes its bytes' fallback
           tokens when all of them exist, else the unknown token (one for a
           run of them with fuse_unk), else nothing: Hugging Face's BPE. At
           most one symbol per byte, so the scratch above fits. */
        for (size_t i = 0; i < n;) {
            uint32_t cp;
            size_t cl = (size_t)lr_utf8_decode(w + i, n - i, &cp);
            if (cl < 1 || cl > n - i) cl = 1;
            int32_t id = tok_vocab_find(t, w + i, cl);
            if (id >= 0) PUSH_SYM(id);
            else {
                size_t k = 0;
                while (k < cl && t->byte_id[w[i + k]] >= 0) k++;
                if (k == cl)
                    for (k = 0; k < cl; k++) PUSH_SYM(t->byte_id[w[i + k]]);
                else if (t->unk >= 0 && !(t->fuse_unk && prev >= 0 && sym[prev].id == t->unk))
                    PUSH_SYM(t->unk);
            }
            i += cl;
        }
    } else {
        /* Bytes without a token become the unknown token, or are dropped. */
        for (size_t i = 0; i < n; i++) {
            int32_t id = t->byte_id[w[i]];
            if (id < 0) id = t->unk;
            if (id < 0) continue;
            PUSH_SYM(id);
        }
    }
#undef PUSH_SYM
    struct tok_heap *h = sc->heap;
    size_t nh = 0;
    for (int32_t i = 0; i + 1 < count; i++) push_pair(t, sym, i, h, &nh);
    while (nh) {
        struct tok_heap e = heap_pop(h, &nh);
        int32_t left = (int32_t)(uint32_t)e.key, right = (int32_t)e.right;
        if (sym[left].id != e.lid || sym[left].next != right || sym[right].id != e.rid) continue;
        sym[left].id = e.merged;
        sym[left].next = sym[right].next;
        if (sym[right].next >= 0) sym[sym[right].next].prev = left;
        sym[right].id = -1;
        if (sym[left].prev >= 0) push_pair(t, sym, sym[left].prev, h, &nh);
        push_pair(t, sym, left, h, &nh);
    }
    for (int32_t i = head; i >= 0; i = sym[i].next) {
        int rc = lr_tok_ids_push(out, sym[i].id);
        if (rc) return rc;
    }
    return LR_OK;
}
