/* BPE tokenizer: byte-level (GPT-2 / Llama-3 / Qwen2-3 family) and, from a
 * tokenizer.json, SentencePiece-style with byte fallback (Llama 2, Mistral).
 *
 * Loads a Hugging Face tokenizer.json (plain or gzip-compressed) or the
 * tokenizer.ggml.* metadata of a GGUF file. A loaded tokenizer is read-only:
 * encode and decode may run on several threads at once.
 *
 * Encoding: added tokens are cut out of the text first (leftmost, longest
 * first); each piece between them is NFC-normalized (when the tokenizer says
 * so), split by the pre-tokenizer pattern, and each word is BPE-merged over its
 * bytes (SentencePiece: a space goes in front as the tokenizer says, each word
 * is merged over its characters, and a character without a token becomes its
 * bytes' <0xNN> tokens). Text need not be valid UTF-8: invalid bytes are
 * encoded byte-wise and decode back to the same bytes (a SentencePiece
 * tokenizer without byte fallback makes them its unknown token). Encode never adds BOS/EOS; see
 * lr_tok_add_bos. docs/tokenizer.md has the details. */
#ifndef LR_TOKENIZER_H
#define LR_TOKENIZER_H
#include <stddef.h>
#include <stdint.h>

typedef struct lr_tok lr_tok;
struct lr_gguf;

/* A growable id array; start from {0} and release with lr_tok_ids_free. */
typedef struct {
    int32_t *ids;
    size_t n, cap;
} lr_tok_ids;
void lr_tok_ids_free(lr_tok_ids *v);
/* Appends one id (LR_ENOMEM when the array cannot grow). */
int lr_tok_ids_push(lr_tok_ids *v, int32_t id);

/* Loads tokenizer.json, or tokenizer.json.gz (gzip is detected by content).
 * When a tokenizer_config.json sits in the same folder its bos/eos/pad/unk
 * tokens and add_bos_token are read too (add_bos_token as transformers reads
 * it, the Llama, Gemma and CodeLlama classes' default of true included; docs/tokenizer.md). */
int lr_tok_load_hf(const char *path, lr_tok **out);
/* The same from a tokenizer.json already in memory; name is used in messages.
 * config_json (may be NULL) is the text of a tokenizer_config.json. */
int lr_tok_load_hf_mem(const char *json, size_t len, const char *config_json,
                       size_t config_len, const char *name, lr_tok **out);
/* Loads the tokenizer from a GGUF file's metadata (tokenizer.ggml.model must
 * be "gpt2"), or from an already parsed GGUF (loader/gguf/gguf.h). */
int lr_tok_load_gguf(const char *path, lr_tok **out);
int lr_tok_from_gguf(const struct lr_gguf *g, lr_tok **out);
/* 1 when a GGUF with this tokenizer.ggml.pre and no tokenizer.ggml.add_bos_token
 * adds BOS (llama.cpp's default: the Llama-3 pre-tokenizers), else 0. */
int lr_tok_gguf_pre_adds_bos(const char *pre);
void lr_tok_free(lr_tok *tok);

/* The largest tokenizer.json, in bytes, that any reader takes: the text
 * lr_tok_load_hf reads (inflated when gzip), an artifact's tokenizer section
 * (its stored bytes, either kind, as the writer and the reader check them),
 * the text lr_model_tokenizer_json inflates a gzip'd section to, and what
 * the import reads and stores. One bound, so a tokenizer that gen_synthetic,
 * tokenize and inspect take, the runtime takes too (docs/format.md: 2^30). */
#define LR_TOK_JSON_MAX ((size_t)1 << 30)
/* The bound in force: LR_TOK_JSON_MAX unless a test lowered it, to try every
 * reader at its boundary without a 1 GiB input (0 restores it). Set it
 * before loading, never while another thread loads or writes a model. */
size_t lr_tok_json_max(void);
void lr_tok_json_set_max(size_t max);

/* Appends the ids of text[0..len) to out. With allow_special, added tokens
 * marked special (<|im_start|>, <|endoftext|>, ...) in the text become their
 * single ids; without it they are encoded as plain text. Added tokens that
 * are not special (Qwen3's <think>, <tool_call>, ...) always match, as in
 * Hugging Face tokenizers. */
int lr_tok_encode(const lr_tok *tok, const char *text, size_t len, int allow_special,
                  lr_tok_ids *out);

/* Decodes ids to the bytes their tokens stand for (a NUL is appended, not
 * counted in *len; free *text). For a byte-level tokenizer they are the
 * original text of ids from lr_tok_encode; a SentencePiece one gives the
 * normalized text (the metaspace as a space, the spaces its normalizer put
 * before segments), with the leading space its decoder strips (Strip, or a
 * Metaspace decoder's first token) removed, as Hugging Face's decode does;
 * the stream decoder below strips nothing (a continuation of a prompt starts
 * with its space). An arbitrary id list may cut a UTF-8 character. With
 * skip_special, special tokens produce nothing. Ids outside [0, vocab size)
 * fail. */
int lr_tok_decode(const lr_tok *tok, const int32_t *ids, size_t n, int skip_special,
                  char **text, size_t *len);

/* Streaming decoder for generation: push ids one at a time and get back the
 * text that is complete so far, always valid UTF-8. Bytes of a character split
 * across tokens are held until it completes; invalid sequences become U+FFFD
 * (one per maximal invalid subpart, like Rust's from_utf8_lossy). */
typedef struct {
    const lr_tok *tok;
    int skip_special;
    uint8_t pend[4];
    int npend;
    char *buf;
    size_t cap;
} lr_tok_stream;
void lr_tok_stream_init(lr_tok_stream *s, const lr_tok *tok, int skip_special);
/* *text (valid until the next call, NUL-terminated) gets the newly completed
 * text, *len its length (often 0). */
int lr_tok_stream_push(lr_tok_stream *s, int32_t id, const char **text, size_t *len);
/* End of stream: held bytes of an incomplete character become U+FFFD. */
int lr_tok_stream_flush(lr_tok_stream *s, const char **text, size_t *len);
void lr_tok_stream_free(lr_tok_stream *s);

/* Vocabulary size: one more than the largest id (model vocab and added tokens). */
int32_t lr_tok_vocab_size(const lr_tok *tok);
/* Special ids, -1 when the tokenizer does not name one. */
int32_t lr_tok_bos(const lr_tok *tok);
int32_t lr_tok_eos(const lr_tok *tok);
int32_t lr_tok_pad(const lr_tok *tok);
/* 1 when the model expects BOS in front of a prompt (add_bos_token). */
int lr_tok_add_bos(const lr_tok *tok);
/* Overrides a special id (e.g. from generation_config.json); -1 clears it. */
enum { LR_TOK_BOS, LR_TOK_EOS, LR_TOK_PAD };
int lr_tok_set_special(lr_tok *tok, int which, int32_t id);

/* The id whose text is s[0..len) (added tokens are searched first, then the
 * model vocabulary, by decoded bytes: " hello", not "Ġhello"), or -1. */
int32_t lr_tok_find(const lr_tok *tok, const char *s, size_t len);
/* The decoded bytes of one token (not NUL-terminated); NULL for an id out of
 * range or an unused id. */
const char *lr_tok_token(const lr_tok *tok, int32_t id, size_t *len);
/* 1 for a special (control) token, 0 otherwise. */
int lr_tok_is_special(const lr_tok *tok, int32_t id);
/* The merges in rank order as (left, right) id pairs: *pairs (2 * *n ints,
 * free it). A GGUF "llama" tokenizer's are made from its piece scores. */
int lr_tok_merge_pairs(const lr_tok *tok, int32_t **pairs, size_t *n);

#endif
