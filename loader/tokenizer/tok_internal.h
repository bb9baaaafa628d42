/* Internals shared by the tokenizer's files: the lr_tok layout, the builder
 * the two loaders use, and the encoder's pieces (pre-tokenizer, BPE). */
#ifndef LR_TOK_INTERNAL_H
#define LR_TOK_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#include "loader/tokenizer/tokenizer.h"

/* Per-id flags. */
enum {
    TOK_PRESENT = 1, /* the id has a token (ids may have gaps) */
    TOK_VOCAB = 2,   /* in the model vocabulary: BPE may produce it */
    TOK_ADDED = 4,   /* an added token: matched in the text before pre-tokenization */
    TOK_SPECIAL = 8, /* a special (control) token: matched only when allowed */
    TOK_LSTRIP = 16, /* added token that swallows whitespace on its left */
    TOK_RSTRIP = 32, /* ... and on its right */
    TOK_BYTEFB = 64, /* a SentencePiece byte-fallback token <0xNN>: stores its one byte, never
                        found by a vocabulary lookup (the character token of that byte is) */
};

#define TOK_METASPACE "\xE2\x96\x81" /* U+2581, SentencePiece's space */

/* Pre-tokenizer split patterns, each a hand-written matcher (pretok.c). */
enum {
    TOK_PAT_QWEN2,  /* Qwen2/Qwen3: digits one at a time */
    TOK_PAT_LLAMA3, /* Llama-3: the Qwen pattern with up to 3 digits together */
    TOK_PAT_GPT2,   /* GPT-2 / ByteLevel(use_regex=true) */
};

typedef struct {
    int32_t id;
    uint32_t len;
    const uint8_t *s; /* into the token arena */
    uint8_t flags;
} tok_added;

struct lr_tok {
    char *name; /* file name for messages */
    int32_t n;  /* ids are 0..n-1 */
    size_t cap;
    uint64_t *off; /* per id: token bytes at arena[off .. off+len) */
    uint32_t *len;
    uint8_t *flags;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    size_t max_len; /* longest token, in bytes */

    /* Model vocabulary: decoded bytes -> id, open addressing; slot holds id+1. */
    uint32_t *vmap, *vhash;
    size_t vmask;
    /* Merges: (left id << 32 | right id) -> rank, merged id. */
    uint64_t *pkey;
    uint32_t *prank, *pmerged;
    size_t pmask, npairs, pcap_used;

    int32_t byte_id[256]; /* token of each single byte, -1 if none */
    int32_t unk;

    /* Added tokens sorted by first byte, longest first; first[b]..first[b+1]
     * are the ones starting with byte b. */
    tok_added *added;
    size_t nadded;
    uint32_t first[257];
    uint8_t first_any[256];

    int pattern;
    int digits; /* Digits pre-split before the pattern: 0 none, 1 each digit alone, 2 digit runs */
    int nfc;
    int ignore_merges;  /* a word that is itself a vocab token is not merged */
    int prefix_segment; /* ByteLevel add_prefix_space applied before the split */
    int prefix_piece;   /* ... applied to each piece after a Split */
    /* SentencePiece-style BPE (Llama 2, Mistral, TinyLlama tokenizer.json): tokens
     * store the metaspace "\u2581" as a plain space, a word starts as one symbol
     * per character, and a character without a token falls back to its bytes'
     * <0xNN> tokens (byte_fallback) or the unknown token. */
    int spm;
    int byte_fallback;
    int fuse_unk;      /* consecutive unknown characters give one unknown token */
    int spm_prepend;   /* a space before each segment: 0 never, 1 always (Prepend normalizer),
                          2 unless it starts with one (Metaspace "always"), 3 as 2 for the
                          segment at the text's start only (Metaspace "first") */
    int spm_split;     /* Metaspace split: a word starts at each space */
    int strip_lead;    /* decoding drops up to this many leading spaces (decoder Strip) */
    int meta_first;    /* decoding drops every space of the first token (a Metaspace decoder) */
    int32_t bos, eos, pad;
    int add_bos;
};

/* Builder: both loaders create the tokenizer, set every token, index the
 * vocabulary, add merges in rank order, then finish. */
int tok_create(const char *name, lr_tok **out);
int tok_set(lr_tok *t, int32_t id, const uint8_t *s, size_t len, int flags);
/* Token id's bytes (len[id] of them). A vocabulary of empty tokens only has
 * no arena: their bytes are "" (never NULL + 0). */
static inline const uint8_t *tok_bytes(const lr_tok *t, int32_t id)
{
    return t->arena ? t->arena + t->off[id] : (const uint8_t *)"";
}
int tok_index_vocab(lr_tok *t);
int tok_add_merge(lr_tok *t, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  uint32_t rank);
int tok_finish(lr_tok *t);
int32_t tok_vocab_find(const lr_tok *t, const uint8_t *s, size_t len);
/* Sets the pattern from a tokenizer.json Split regex or a GGUF
 * tokenizer.ggml.pre name; returns -1 for one that is not known. */
int tok_pattern_from_regex(const char *re);
int tok_pattern_from_gguf_pre(const char *pre, int *ignore_merges, int *digits);

/* A SentencePiece piece's bytes: every metaspace a plain space (out needs n
 * bytes; returns the count). */
size_t tok_spm_decode(const char *s, size_t n, uint8_t *out);
/* The byte of a byte-fallback piece "<0xNN>" (upper-case hex, as SentencePiece
 * writes them), or -1. */
int tok_spm_fallback_byte(const char *s, size_t n);
/* SentencePiece scores as BPE merges: every split of a vocabulary token into
 * two vocabulary tokens at a character boundary (tokens up to
 * TOK_SPM_MAX_PIECE bytes), ranked by the whole token's
 * score, highest first (equal scores: the lower merged id, then the lower
 * left id). That is llama.cpp's SentencePiece tokenizer, which merges the
 * adjacent pair whose concatenation is the best-scoring token (it breaks
 * equal scores by position instead). *out (free it) in rank order. */
typedef struct {
    int32_t left, right;
} tok_merge;
#define TOK_SPM_MAX_PIECE 256 /* bytes: a longer piece is no merge's result */
int tok_spm_merges(const lr_tok *t, const float *scores, tok_merge **out, size_t *n);

/* Maps a ByteLevel-encoded token string (GPT-2's byte-to-unicode alphabet,
 * e.g. "Ġhello") to bytes. A string with a character outside the alphabet is
 * returned as its raw UTF-8, as Hugging Face's ByteLevel decoder does.
 * out needs len bytes. Returns the byte count. */
size_t tok_bytelevel_decode(const char *s, size_t len, uint8_t *out);

/* The end of the pre-tokenizer match starting at s[i] (i < n; the result is
 * > i). */
size_t tok_pretok_next(int pattern, const uint8_t *s, size_t n, size_t i);
/* The same after t's Digits pre-split, if any: *lim carries the end of the
 * current digit-free run from call to call (start it at 0). */
size_t tok_piece_next(const lr_tok *t, const uint8_t *s, size_t n, size_t i, size_t *lim);

/* Scratch memory of one encode call. */
typedef struct {
    struct tok_sym *sym;
    struct tok_heap *heap;
    size_t sym_cap, heap_cap;
    uint8_t *buf;
    size_t buf_cap;
} tok_scratch;
void tok_scratch_free(tok_scratch *sc);
/* Appends the BPE tokens of word w[0..n) (n >= 1). */
int tok_bpe_word(const lr_tok *t, const uint8_t *w, size_t n, tok_scratch *sc, lr_tok_ids *out);

#endif
