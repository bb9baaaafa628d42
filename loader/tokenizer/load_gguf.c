/* Loading the tokenizer from GGUF metadata (llama.cpp's tokenizer.ggml.*
 * keys): the "gpt2" (byte-level BPE) and "llama" (SentencePiece BPE: pieces
 * with the metaspace, <0xNN> byte tokens, piece scores instead of merges)
 * models. Token types:
 * 1 normal, 2 unknown, 3 control (special), 4 user-defined (an added token
 * that always matches), 5 unused, 6 byte. Control and user-defined tokens are
 * stored as plain text; the others in the byte-level alphabet ("gpt2") or
 * with the metaspace as a space and byte tokens as their byte ("llama").
 *
 * An unused token (5) gets no token at all: its id is a gap, as an id missing
 * from a tokenizer.json vocabulary is, so it decodes to nothing and encoding
 * never produces it (and a trailing run of them is past lr_tok_vocab_size).
 * llama.cpp decodes it to nothing too (token_to_piece has no case for
 * LLAMA_TOKEN_ATTR_UNUSED: 0 bytes, with or without special), and these are
 * what its converter writes for the ids a Hugging Face vocabulary lacks
 * ("[PAD151665]"...), so the gap is the original tokenizer.json's. llama.cpp
 * does keep the text in its text-to-id map, so a BPE result, an ignore_merges
 * word or a single byte spelled like an unused token would encode to it (and
 * decode to nothing); no converted file has one, and a tokenizer.json cannot
 * say "encodes, decodes to nothing", so the GGUF -> tokenizer.json converter
 * (loader/import/gguf_tokjson.c) leaves the id out the same way and both
 * readers of one GGUF agree. */
#include <stdlib.h>
#include <string.h>

#include "loader/gguf/gguf.h"
#include "loader/tokenizer/tok_internal.h"
#include "util/err.h"
#include "util/log.h"

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER = 4, TT_UNUSED = 5, TT_BYTE = 6 };

static int special_id(lr_tok *t, const lr_gguf *g, const char *key, int32_t *out)
{
    const lr_gguf_kv *kv = lr_gguf_find(g, key);
    if (!kv) return LR_OK;
    uint64_t v;
    int rc = lr_gguf_get_uint(g, key, &v);
    if (rc) return rc;
    if (v >= (uint64_t)t->n) {
        lr_warn("%s: %s = %llu is not a token id; ignored", t->name, key, (unsigned long long)v);
        return LR_OK;
    }
    *out = (int32_t)v;
    return LR_OK;
}

int lr_tok_gguf_pre_adds_bos(const char *pre)
{
    /* llama.cpp's llama-vocab.cpp sets add_bos for its Llama-3 group of
     * pre-tokenizers; of those this tokenizer reads llama3 and llama-bpe */
    return !strcmp(pre, "llama3") || !strcmp(pre, "llama-bpe") || !strcmp(pre, "llama-v3");
}

/* The "llama" model's settings (llama.cpp's SentencePiece tokenizer): a
 * space before each text segment (tokenizer.ggml.add_space_prefix, default
 * true; llama.cpp puts it before the text and after every special token,
 * which is before every segment), stripped again when decoding, no split,
 * <0xNN> byte tokens, merges from the piece scores (spm.c), BOS by default. */
static int spm_setup(lr_tok *t, const lr_gguf *g)
{
    int prefix = 1, rc;
    if (lr_gguf_find(g, "tokenizer.ggml.add_space_prefix") &&
        (rc = lr_gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &prefix)))
        return rc;
    t->spm = t->byte_fallback = 1;
    t->spm_prepend = prefix ? 1 : 0;
    t->strip_lead = prefix;
    return LR_OK;
}

/* The piece scores of the "llama" model as merges, added in rank order. */
static int spm_merges(lr_tok *t, const lr_gguf *g, uint64_t ntok)
{
    const lr_gguf_val *sc;
    int rc = lr_gguf_get_arr(g, "tokenizer.ggml.scores", LR_GGUF_F32, &sc);
    if (rc) return lr_wrap(rc, "%s: the llama tokenizer needs its piece scores", t->name);
    if (sc->arr.n != ntok)
        return LR_FAIL(LR_EFORMAT, "%s: tokenizer.ggml.scores has %llu entries for %llu tokens", t->name,
                       (unsigned long long)sc->arr.n, (unsigned long long)ntok);
    float *scores = malloc((size_t)ntok * sizeof *scores);
    if (!scores) return LR_FAIL(LR_ENOMEM, "%s: scores", t->name);
    for (uint64_t i = 0; i < ntok; i++) scores[i] = (float)lr_gguf_arr_f64(sc, i);
    tok_merge *m;
    size_t nm;
    rc = tok_spm_merges(t, scores, &m, &nm);
    free(scores);
    for (size_t i = 0; !rc && i < nm; i++)
        rc = tok_add_merge(t, tok_bytes(t, m[i].left), t->len[m[i].left], tok_bytes(t, m[i].right), t->len[m[i].right],
                           (uint32_t)i);
    free(m);
    return rc;
}

static int load(lr_tok *t, const lr_gguf *g)
{
    lr_gguf_str s;
    int rc = lr_gguf_get_str(g, "tokenizer.ggml.model", &s);
    if (rc) return rc;
    const int llama = lr_gguf_str_eq(s, "llama");
    if (!llama && !lr_gguf_str_eq(s, "gpt2"))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: tokenizer.ggml.model is \"%.*s\"; only \"gpt2\" (byte-level BPE) and "
                       "\"llama\" (SentencePiece BPE) are supported", t->name, (int)(s.len < 40 ? s.len : 40), s.s);
    char pre[64] = "";
    if (llama) {
        if ((rc = spm_setup(t, g))) return rc;
    } else if (!lr_gguf_find(g, "tokenizer.ggml.pre"))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: tokenizer.ggml.pre is missing; the pre-tokenizer is unknown", t->name);
    else {
        if ((rc = lr_gguf_get_str(g, "tokenizer.ggml.pre", &s))) return rc;
        if (s.len < sizeof pre && !memchr(s.s, 0, (size_t)s.len)) memcpy(pre, s.s, (size_t)s.len);
        t->pattern = pre[0] ? tok_pattern_from_gguf_pre(pre, &t->ignore_merges, &t->digits) : -1;
        if (t->pattern < 0)
            return LR_FAIL(LR_EUNSUPPORTED, "%s: tokenizer.ggml.pre \"%.*s\" is not supported (qwen2, llama-bpe, gpt-2, smollm are)",
                           t->name, (int)(s.len < 40 ? s.len : 40), s.s);
        /* Qwen2/3 GGUFs come from tokenizers that NFC-normalize. */
        t->nfc = t->pattern == TOK_PAT_QWEN2;
    }

    const lr_gguf_val *tokens, *types = NULL, *merges = NULL;
    if ((rc = lr_gguf_get_arr(g, "tokenizer.ggml.tokens", LR_GGUF_STR, &tokens))) return rc;
    if (tokens->arr.n == 0 || tokens->arr.n > INT32_MAX)
        return LR_FAIL(LR_EFORMAT, "%s: tokenizer.ggml.tokens has %llu entries", t->name, (unsigned long long)tokens->arr.n);
    if (lr_gguf_find(g, "tokenizer.ggml.token_type")) {
        if ((rc = lr_gguf_get_arr(g, "tokenizer.ggml.token_type", -1, &types))) return rc;
        uint32_t et = types->arr.type;
        if (types->arr.n != tokens->arr.n || et == LR_GGUF_STR || et == LR_GGUF_ARR || et == LR_GGUF_F32 || et == LR_GGUF_F64)
            return LR_FAIL(LR_EFORMAT, "%s: tokenizer.ggml.token_type must be %llu integers", t->name,
                           (unsigned long long)tokens->arr.n);
    }
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (uint64_t i = 0; i < tokens->arr.n && rc == LR_OK; i++) {
        lr_gguf_str ts = tokens->arr.strs[i];
        int64_t type = types ? lr_gguf_arr_int(types, i) : TT_NORMAL;
        if (type == TT_UNUSED) continue; /* a gap: see the top of the file */
        int flags;
        const uint8_t *bytes;
        size_t len;
        if (type == TT_CONTROL || type == TT_USER) {
            flags = TOK_ADDED | (type == TT_CONTROL ? TOK_SPECIAL : 0);
            bytes = (const uint8_t *)ts.s;
            len = (size_t)ts.len;
        } else {
            if (ts.len + 1 > cap) {
                free(buf);
                cap = (size_t)ts.len + 64;
                if (!(buf = malloc(cap))) return LR_FAIL(LR_ENOMEM, "%s: token", t->name);
            }
            flags = TOK_VOCAB;
            /* without token types, a <0xNN> piece is taken for the byte token it spells
               (as the tokenizer.json the import writes has it) */
            int b = llama && (type == TT_BYTE || !types) ? tok_spm_fallback_byte(ts.s, (size_t)ts.len) : -1;
            if (llama && type == TT_BYTE && b < 0) {
                free(buf);
                return LR_FAIL(LR_EFORMAT, "%s: byte token %llu is \"%.*s\", not <0xNN>", t->name, (unsigned long long)i,
                               (int)(ts.len < 16 ? ts.len : 16), ts.s);
            }
            if (b >= 0) buf[0] = (uint8_t)b, len = 1, flags = TOK_BYTEFB;
            else len = llama ? tok_spm_decode(ts.s, (size_t)ts.len, buf) : tok_bytelevel_decode(ts.s, (size_t)ts.len, buf);
            bytes = buf;
        }
        rc = tok_set(t, (int32_t)i, bytes, len, flags);
    }
    free(buf);
    if (rc) return rc;
    if ((rc = tok_index_vocab(t))) return rc;

    if (llama) {
        if ((rc = spm_merges(t, g, tokens->arr.n))) return rc;
    } else if (lr_gguf_find(g, "tokenizer.ggml.merges") &&
               (rc = lr_gguf_get_arr(g, "tokenizer.ggml.merges", LR_GGUF_STR, &merges)))
        return rc;
    uint8_t *mb = NULL;
    size_t mcap = 0;
    for (uint64_t i = 0; merges && i < merges->arr.n && rc == LR_OK; i++) {
        lr_gguf_str m = merges->arr.strs[i];
        const char *sp = m.len > 1 ? memchr(m.s + 1, ' ', (size_t)m.len - 1) : NULL;
        if (!sp || sp + 1 == m.s + m.len) {
            rc = LR_FAIL(LR_EFORMAT, "%s: tokenizer.ggml.merges[%llu] is not \"left right\"", t->name, (unsigned long long)i);
            break;
        }
        if (m.len > mcap) {
            free(mb);
            mcap = (size_t)m.len + 64;
            if (!(mb = malloc(mcap))) { rc = LR_FAIL(LR_ENOMEM, "%s: merge", t->name); break; }
        }
        /* Both halves decode into one buffer: left at 0, right after it. */
        size_t ln = (size_t)(sp - m.s), rn = (size_t)m.len - ln - 1;
        size_t al = tok_bytelevel_decode(m.s, ln, mb), bl = tok_bytelevel_decode(sp + 1, rn, mb + al);
        rc = tok_add_merge(t, mb, al, mb + al, bl, (uint32_t)i);
    }
    free(mb);
    if (rc) return rc;

    if ((rc = special_id(t, g, "tokenizer.ggml.bos_token_id", &t->bos)) ||
        (rc = special_id(t, g, "tokenizer.ggml.eos_token_id", &t->eos)) ||
        (rc = special_id(t, g, "tokenizer.ggml.padding_token_id", &t->pad)) ||
        (rc = special_id(t, g, "tokenizer.ggml.unknown_token_id", &t->unk)))
        return rc;
    /* without the key, llama.cpp's default: the SentencePiece model's, or the pre-tokenizer's */
    t->add_bos = llama || lr_tok_gguf_pre_adds_bos(pre);
    if (lr_gguf_find(g, "tokenizer.ggml.add_bos_token") &&
        (rc = lr_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos)))
        return rc;
    return tok_finish(t);
}

int lr_tok_from_gguf(const lr_gguf *g, lr_tok **out)
{
    *out = NULL;
    lr_tok *t;
    int rc = tok_create(g->name, &t);
    if (rc) return rc;
    if ((rc = load(t, g))) { lr_tok_free(t); return rc; }
    *out = t;
    return LR_OK;
}

int lr_tok_load_gguf(const char *path, lr_tok **out)
{
    *out = NULL;
    lr_gguf *g;
    int rc = lr_gguf_open(path, &g);
    if (rc) return rc;
    rc = lr_tok_from_gguf(g, out);
    lr_gguf_close(g);
    return rc;
}
