#include "loader/import/gguf_tokjson.h"
#include "loader/import/tokjson_bos.h"
#include "loader/tokenizer/tokenizer.h"
#include "loader/gguf/gguf.h"
#include "util/err.h"
#include "util/log.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { TT_CONTROL = 3, TT_USER = 4, TT_UNUSED = 5 };

/* The split patterns as Hugging Face tokenizer.json files spell them
 * (loader/tokenizer/pretok.c recognizes exactly these strings). */
static const char QWEN2_RE[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char LLAMA3_RE[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static json_t *byte_level(int use_regex, int trim_offsets)
{
    return json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 0, "trim_offsets", trim_offsets,
                     "use_regex", use_regex);
}

static json_t *split_then_bytes(const char *re, int trim_offsets)
{
    return json_pack("{s:s, s:[{s:s, s:{s:s}, s:s, s:b}, o]}", "type", "Sequence", "pretokenizers", "type", "Split",
                     "pattern", "Regex", re, "behavior", "Isolated", "invert", 0, byte_level(0, trim_offsets));
}

/* pre-tokenizer, normalizer (may be NULL) and ignore_merges for a GGUF pre name. */
static int pre_for(const char *pre, json_t **pt, json_t **norm, int *ignore_merges)
{
    *norm = NULL;
    *ignore_merges = 0;
    if (!strcmp(pre, "qwen2")) {
        *pt = split_then_bytes(QWEN2_RE, 0);
        *norm = json_pack("{s:s}", "type", "NFC");
    } else if (!strcmp(pre, "llama-bpe") || !strcmp(pre, "llama3")) {
        *pt = split_then_bytes(LLAMA3_RE, 1);
        *ignore_merges = 1;
    } else if (!strcmp(pre, "gpt-2") || !strcmp(pre, "gpt2")) {
        *pt = byte_level(1, 1);
    } else if (!strcmp(pre, "smollm")) {
        *pt = json_pack("{s:s, s:[{s:s, s:b}, o]}", "type", "Sequence", "pretokenizers", "type", "Digits",
                        "individual_digits", 1, byte_level(1, 1));
    } else {
        return 0;
    }
    return *pt != NULL;
}

/* tokenizer.ggml.add_bos_token as tokenizer.json says it: a TemplateProcessing
 * post-processor putting the BOS token before the text (loader/tokenizer
 * reads it back as add_bos), or none (*out NULL) when BOS is not added. */
static int bos_template(const lr_gguf *g, const char *pre, int llama, const lr_gguf_val *tokens,
                        const lr_gguf_val *types, json_t **out)
{
    *out = NULL;
    int add = llama || lr_tok_gguf_pre_adds_bos(pre), rc = LR_OK; /* llama.cpp's default without the key */
    uint64_t id;
    if (lr_gguf_find(g, "tokenizer.ggml.add_bos_token") &&
        (rc = lr_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &add)))
        return rc;
    if (!add) return LR_OK;
    if (!lr_gguf_find(g, "tokenizer.ggml.bos_token_id")) {
        lr_warn("%s: BOS asked for (add_bos_token, or llama.cpp's default for this pre-tokenizer) without a bos_token_id: no BOS added", g->name);
        return LR_OK;
    }
    if ((rc = lr_gguf_get_uint(g, "tokenizer.ggml.bos_token_id", &id))) return rc;
    if (id >= tokens->arr.n || (types && lr_gguf_arr_int(types, id) == TT_UNUSED)) {
        /* (an unused token is no token here: see build) */
        lr_warn("%s: bos_token_id %llu is not a token: no BOS added", g->name, (unsigned long long)id);
        return LR_OK;
    }
    const lr_gguf_str *t = &tokens->arr.strs[id];
    *out = lr_tokjson_bos_template(t->s, (size_t)t->len, (int64_t)id);
    if (!*out) rc = LR_FAIL(LR_EFORMAT, "%s: BOS token %llu: not valid UTF-8 text, or out of memory", g->name,
                            (unsigned long long)id);
    return rc;
}

/* The "llama" model (SentencePiece BPE) as Llama 2's tokenizer.json says it:
 * the normalizer putting the space in front (tokenizer.ggml.add_space_prefix,
 * default true) and spaces as the metaspace, no pre-tokenizer, the decoder
 * undoing both, and the merges the GGUF tokenizer loader makes from the piece
 * scores (their order is the ranks), as pairs of the pieces' own text. */
static int spm_parts(const lr_gguf *g, const lr_gguf_val *tokens, json_t **norm, json_t **decoder, json_t **mj)
{
    int prefix = 1, rc = LR_OK;
    if (lr_gguf_find(g, "tokenizer.ggml.add_space_prefix") &&
        (rc = lr_gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &prefix)))
        return rc;
    json_t *rep = json_pack("{s:s, s:{s:s}, s:s}", "type", "Replace", "pattern", "String", " ", "content", "\u2581");
    *norm = prefix ? json_pack("{s:s, s:[{s:s, s:s}, o]}", "type", "Sequence", "normalizers", "type", "Prepend",
                               "prepend", "\u2581", rep)
                   : rep;
    *decoder = json_pack("{s:s, s:[{s:s, s:{s:s}, s:s}, {s:s}, {s:s}, {s:s, s:s, s:i, s:i}]}", "type", "Sequence",
                         "decoders", "type", "Replace", "pattern", "String", "\u2581", "content", " ", "type",
                         "ByteFallback", "type", "Fuse", "type", "Strip", "content", " ", "start", prefix, "stop", 0);
    lr_tok *t = NULL;
    int32_t *pairs = NULL;
    size_t np = 0;
    rc = lr_tok_from_gguf(g, &t);
    if (!rc) rc = lr_tok_merge_pairs(t, &pairs, &np);
    lr_tok_free(t);
    for (size_t i = 0; !rc && i < np; i++) {
        const lr_gguf_str *a = &tokens->arr.strs[pairs[2 * i]], *b = &tokens->arr.strs[pairs[2 * i + 1]];
        json_t *m = json_pack("[s#, s#]", a->s, (int)a->len, b->s, (int)b->len);
        if (!m || json_array_append_new(*mj, m))
            rc = LR_FAIL(LR_EFORMAT, "%s: merge %zu: a piece is not valid UTF-8 text (or out of memory)", g->name, i);
    }
    free(pairs);
    if (!rc && (!*norm || !*decoder)) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", g->name);
    return rc;
}

static int build(const lr_gguf *g, json_t **out)
{
    const char *L = g->name;
    lr_gguf_str s;
    int rc = lr_gguf_get_str(g, "tokenizer.ggml.model", &s);
    if (rc) return rc;
    const int llama = lr_gguf_str_eq(s, "llama");
    if (!llama && !lr_gguf_str_eq(s, "gpt2"))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: tokenizer.ggml.model \"%.*s\" (only gpt2, byte-level BPE, and llama, "
                       "SentencePiece BPE)", L, (int)(s.len < 40 ? s.len : 40), s.s);
    char pre[64] = "";
    if (!llama && lr_gguf_find(g, "tokenizer.ggml.pre")) {
        if ((rc = lr_gguf_get_str(g, "tokenizer.ggml.pre", &s))) return rc;
        if (s.len < sizeof pre && !memchr(s.s, 0, (size_t)s.len)) memcpy(pre, s.s, (size_t)s.len);
    }
    json_t *pt = NULL, *norm = NULL, *decoder = NULL;
    int ignore_merges = 0;
    if (!llama && !pre_for(pre, &pt, &norm, &ignore_merges))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: tokenizer.ggml.pre \"%s\" has no known pre-tokenizer (qwen2, llama-bpe, "
                       "gpt-2, smollm)", L, pre);
    const lr_gguf_val *tokens, *types = NULL, *merges = NULL;
    if (!rc) rc = lr_gguf_get_arr(g, "tokenizer.ggml.tokens", LR_GGUF_STR, &tokens);
    if (!rc && lr_gguf_find(g, "tokenizer.ggml.token_type")) {
        rc = lr_gguf_get_arr(g, "tokenizer.ggml.token_type", -1, &types);
        const uint32_t et = rc ? 0 : types->arr.type; /* integers only, as the GGUF tokenizer loader wants */
        if (!rc && (types->arr.n != tokens->arr.n || et == LR_GGUF_STR || et == LR_GGUF_ARR || et == LR_GGUF_F32 ||
                    et == LR_GGUF_F64))
            rc = LR_FAIL(LR_EFORMAT, "%s: tokenizer.ggml.token_type must be %llu integers", L,
                         (unsigned long long)tokens->arr.n);
    }
    if (!rc && lr_gguf_find(g, "tokenizer.ggml.merges")) rc = lr_gguf_get_arr(g, "tokenizer.ggml.merges", LR_GGUF_STR, &merges);
    json_t *vocab = json_object(), *added = json_array(), *mj = json_array();
    if (!rc && (!vocab || !added || !mj)) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", L);
    size_t dups = 0;
    for (uint64_t i = 0; !rc && i < tokens->arr.n; i++) {
        const lr_gguf_str *t = &tokens->arr.strs[i];
        int64_t ty = types ? lr_gguf_arr_int(types, i) : 1;
        /* An unused token (llama.cpp's converter writes them for the ids a
         * Hugging Face vocabulary lacks) is left out: its id is a gap, as in
         * that vocabulary, and decodes to nothing, as llama.cpp decodes it;
         * the GGUF tokenizer loader does the same (loader/tokenizer/load_gguf.c
         * says where llama.cpp differs). */
        if (ty == TT_UNUSED) continue;
        json_t *str = json_stringn(t->s, (size_t)t->len);
        if (!str) {
            rc = LR_FAIL(LR_EFORMAT, "%s: token %llu is not valid UTF-8 text", L, (unsigned long long)i);
            break;
        }
        if (ty == TT_CONTROL || ty == TT_USER) {
            json_t *a = json_pack("{s:I, s:o, s:b, s:b, s:b, s:b, s:b}", "id", (json_int_t)i, "content", str,
                                  "single_word", 0, "lstrip", 0, "rstrip", 0, "normalized", 0, "special",
                                  ty == TT_CONTROL);
            if (!a || json_array_append_new(added, a)) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", L);
        } else {
            /* json_object_setn_new takes the key with its length: tokens
             * holding NUL bytes stay intact. A text seen before keeps its
             * lower id, as the GGUF tokenizer loader keeps it (a set would
             * move the text to the higher id and drop the lower one). */
            if (json_object_getn(vocab, t->s, (size_t)t->len)) dups++;
            else if (json_object_setn_new(vocab, t->s, (size_t)t->len, json_integer((json_int_t)i)))
                rc = LR_FAIL(LR_EFORMAT, "%s: token %llu cannot be a JSON key", L, (unsigned long long)i);
            json_decref(str);
        }
    }
    if (!rc && dups) lr_warn("%s: %zu vocabulary entries repeat the text of a lower id (the lower id keeps it)", L, dups);
    if (!rc && llama) rc = spm_parts(g, tokens, &norm, &decoder, &mj);
    for (uint64_t i = 0; !rc && !llama && merges && i < merges->arr.n; i++) {
        json_t *m = json_stringn(merges->arr.strs[i].s, (size_t)merges->arr.strs[i].len);
        if (!m || json_array_append_new(mj, m))
            rc = LR_FAIL(LR_EFORMAT, "%s: merge %llu is not valid UTF-8 text", L, (unsigned long long)i);
    }
    json_t *post = NULL;
    if (!rc) rc = bos_template(g, pre, llama, tokens, types, &post);
    json_t *unk = NULL;
    uint64_t uid;
    if (!rc && llama && lr_gguf_find(g, "tokenizer.ggml.unknown_token_id") &&
        !lr_gguf_get_uint(g, "tokenizer.ggml.unknown_token_id", &uid) && uid < tokens->arr.n)
        unk = json_stringn(tokens->arr.strs[uid].s, (size_t)tokens->arr.strs[uid].len);
    if (rc) {
        json_decref(vocab);
        json_decref(added);
        json_decref(mj);
        json_decref(pt);
        json_decref(norm);
        json_decref(decoder);
        return rc;
    }
    /* SentencePiece: unknown characters fall back to their bytes' tokens; no
       fused unknowns (the GGUF tokenizer loader and llama.cpp fuse none) */
    json_t *model = json_pack("{s:s, s:n, s:o?, s:n, s:n, s:b, s:b, s:b, s:o, s:o}", "type", "BPE", "dropout",
                              "unk_token", unk, "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", 0,
                              "byte_fallback", llama, "ignore_merges", ignore_merges, "vocab", vocab, "merges", mj);
    if (!decoder)
        decoder = json_pack("{s:s, s:b, s:b, s:b}", "type", "ByteLevel", "add_prefix_space", 1, "trim_offsets", 1,
                            "use_regex", 1);
    json_t *root = json_pack("{s:s, s:n, s:n, s:o, s:o?, s:o?, s:o?, s:o, s:o}", "version", "1.0", "truncation",
                             "padding", "added_tokens", added, "normalizer", norm, "pre_tokenizer", pt,
                             "post_processor", post, "decoder", decoder, "model", model);
    if (!root) return LR_FAIL(LR_ENOMEM, "%s: out of memory building tokenizer.json", L);
    *out = root;
    return LR_OK;
}

int lr_gguf_tokenizer_json(const lr_gguf *g, char **json, size_t *n)
{
    *json = NULL;
    *n = 0;
    json_t *root = NULL;
    int rc = build(g, &root);
    if (rc) return rc;
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text) return LR_FAIL(LR_ENOMEM, "%s: out of memory writing tokenizer.json", g->name);
    *json = text;
    *n = strlen(text);
    return LR_OK;
}
