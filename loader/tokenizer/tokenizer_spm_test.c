/* SentencePiece-style tokenizer.json (Llama 2, Mistral, Gemma): BPE over
 * characters with <0xNN> byte fallback, the metaspace as the space, the
 * Prepend/Replace normalizer or the Metaspace pre-tokenizer, and the decoder's
 * leading-space strip. The vocabulary is small and built here; every expected
 * id list is worked out by hand from Hugging Face's rules (merges lowest rank
 * first, equal ranks left to right), in the comment beside it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/tokenizer/tokenizer.h"
#include "test/t.h"
#include "util/err.h"
#include "util/log.h"
#include "util/rng.h"

#define MS "\xE2\x96\x81" /* U+2581 */

/* ids 0-2 specials, 3..258 <0x00>..<0xFF>, then these */
enum { UNK = 0, BOS = 1, EOS = 2, SP = 259, H, E, L, O, W, R, D, SP_H, LL, SP_HE, LLO, SP_HELLO, SP_W, OR,
       SP_WOR, LD, SP_WORLD, E_ACUTE, SP_SP, X, Y, X_SP };
static const char *const WORDS[] = { MS, "h", "e", "l", "o", "w", "r", "d", MS "h", "ll", MS "he", "llo",
                                     MS "hello", MS "w", "or", MS "wor", "ld", MS "world", "\xC3\xA9",
                                     MS MS, "x", "y", "x" MS };
/* in rank order */
static const char *const MERGES[] = { MS " h", "l l", MS "h e", "ll o", MS "he llo", MS " w", "o r",
                                      MS "w or", "l d", MS "wor ld", MS " " MS, "x " MS };

static int32_t fb(unsigned byte) { return 3 + (int32_t)byte; }

/* The tokenizer.json text. model_extra: JSON members added to the model
 * (byte_fallback is given there); normalizer / pretok / decoder: JSON values
 * or NULL for null. */
static char *spm_json(const char *model_extra, const char *normalizer, const char *pretok, const char *decoder)
{
    json_t *vocab = json_object();
    json_object_set_new(vocab, "<unk>", json_integer(UNK));
    json_object_set_new(vocab, "<s>", json_integer(BOS));
    json_object_set_new(vocab, "</s>", json_integer(EOS));
    for (unsigned b = 0; b < 256; b++) {
        char k[8];
        snprintf(k, sizeof k, "<0x%02X>", b);
        json_object_set_new(vocab, k, json_integer(fb(b)));
    }
    for (size_t i = 0; i < sizeof WORDS / sizeof WORDS[0]; i++)
        json_object_set_new(vocab, WORDS[i], json_integer(SP + (json_int_t)i));
    json_t *merges = json_array();
    for (size_t i = 0; i < sizeof MERGES / sizeof MERGES[0]; i++) json_array_append_new(merges, json_string(MERGES[i]));
    char *v = json_dumps(vocab, JSON_COMPACT), *m = json_dumps(merges, JSON_COMPACT);
    json_decref(vocab);
    json_decref(merges);
    const char *added = "[{\"id\":0,\"content\":\"<unk>\",\"special\":true,\"normalized\":false},"
                        "{\"id\":1,\"content\":\"<s>\",\"special\":true,\"normalized\":false},"
                        "{\"id\":2,\"content\":\"</s>\",\"special\":true,\"normalized\":false}]";
    size_t n = strlen(v) + strlen(m) + 4096;
    char *out = malloc(n);
    if (out)
        snprintf(out, n,
                 "{\"version\":\"1.0\",\"added_tokens\":%s,\"normalizer\":%s,\"pre_tokenizer\":%s,"
                 "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\","
                 "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\","
                 "\"ids\":[1],\"tokens\":[\"<s>\"]}}},\"decoder\":%s,"
                 "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":\"<unk>\",\"continuing_subword_prefix\":null,"
                 "\"end_of_word_suffix\":null%s,\"vocab\":%s,\"merges\":%s}}",
                 added, normalizer ? normalizer : "null", pretok ? pretok : "null", decoder ? decoder : "null",
                 model_extra ? model_extra : "", v, m);
    free(v);
    free(m);
    return out;
}

/* Llama 2's tokenizer.json form. */
#define LLAMA2_NORM "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"" MS "\"}," \
                    "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" MS "\"}]}"
#define LLAMA2_DEC "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"" MS "\"}," \
                   "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\"," \
                   "\"content\":\" \",\"start\":1,\"stop\":0}]}"
#define FB ",\"fuse_unk\":true,\"byte_fallback\":true"

static int load(lr_tok **tok, const char *model_extra, const char *normalizer, const char *pretok, const char *decoder)
{
    char *j = spm_json(model_extra, normalizer, pretok, decoder);
    if (!j) return LR_ENOMEM;
    int rc = lr_tok_load_hf_mem(j, strlen(j), NULL, 0, "spm.json", tok);
    free(j);
    return rc;
}

/* 1 when text encodes (specials allowed) to exactly want[0..n). */
static int encodes(const lr_tok *tok, const char *text, const int32_t *want, size_t n)
{
    lr_tok_ids v = {0};
    if (lr_tok_encode(tok, text, strlen(text), 1, &v)) {
        fprintf(stderr, "    encode \"%s\": %s\n", text, lr_errmsg());
        return 0;
    }
    int ok = v.n == n && (n == 0 || memcmp(v.ids, want, n * sizeof *want) == 0);
    if (!ok) {
        fprintf(stderr, "    \"%s\" ->", text);
        for (size_t i = 0; i < v.n; i++) fprintf(stderr, " %d", (int)v.ids[i]);
        fprintf(stderr, " (want");
        for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", (int)want[i]);
        fprintf(stderr, ")\n");
    }
    lr_tok_ids_free(&v);
    return ok;
}
#define ENCODES(tok, text, ...) encodes(tok, text, (const int32_t[]){ __VA_ARGS__ }, \
                                        sizeof((const int32_t[]){ __VA_ARGS__ }) / sizeof(int32_t))

static int decodes(const lr_tok *tok, const int32_t *ids, size_t n, int skip, const char *want)
{
    char *text;
    size_t len;
    if (lr_tok_decode(tok, ids, n, skip, &text, &len)) return 0;
    int ok = len == strlen(want) && memcmp(text, want, len) == 0;
    if (!ok) fprintf(stderr, "    decoded \"%s\", want \"%s\"\n", text, want);
    free(text);
    return ok;
}

static int test_llama2_form(void)
{
    lr_tok *tok;
    T_OK(load(&tok, FB, LLAMA2_NORM, NULL, LLAMA2_DEC));
    /* "▁hello▁world": ▁h, ll, ▁he, llo, ▁hello, ▁w, or, ▁wor, ld, ▁world */
    T_ASSERT(ENCODES(tok, "hello world", SP_HELLO, SP_WORLD), "hello world");
    /* the segment after <s> gets its own ▁ (Prepend normalizes each segment) */
    T_ASSERT(ENCODES(tok, "<s>hello", BOS, SP_HELLO), "<s>hello");
    /* "▁hello▁▁world": "▁ w" (rank 5) takes the second ▁ before "▁ ▁" (rank 10) could */
    T_ASSERT(ENCODES(tok, "hello  world", SP_HELLO, SP, SP_WORLD), "two spaces");
    /* Prepend adds ▁ even before a space: "▁▁" */
    T_ASSERT(ENCODES(tok, " ", SP_SP), "one space");
    /* é is a token; ß (C3 9F) is not: its bytes' fallback tokens */
    T_ASSERT(ENCODES(tok, "h\xC3\xA9", SP_H, E_ACUTE), "h + e-acute");
    T_ASSERT(ENCODES(tok, "\xC3\x9F", SP, fb(0xC3), fb(0x9F)), "sharp s falls back to bytes");
    /* the metaspace in the text is a space */
    T_ASSERT(ENCODES(tok, "hello" MS "world", SP_HELLO, SP_WORLD), "metaspace in the text");
    /* without a split, merges cross spaces: "▁x▁y" -> ▁, x▁, y */
    T_ASSERT(ENCODES(tok, "x y", SP, X_SP, Y), "x y unsplit");
    lr_tok_ids v = {0};
    T_OK(lr_tok_encode(tok, "", 0, 1, &v));
    T_ASSERT(v.n == 0, "empty text gives %zu ids", v.n);
    lr_tok_ids_free(&v);
    T_ASSERT(lr_tok_add_bos(tok) && lr_tok_bos(tok) == BOS, "the post-processor's BOS");
    /* decode: the leading space stripped once, bytes joined back */
    T_ASSERT(decodes(tok, (const int32_t[]){ SP_HELLO, SP_WORLD }, 2, 0, "hello world"), "decode");
    T_ASSERT(decodes(tok, (const int32_t[]){ SP, fb(0xC3), fb(0x9F) }, 3, 0, "\xC3\x9F"), "decode bytes");
    T_ASSERT(decodes(tok, (const int32_t[]){ BOS, SP_HELLO }, 2, 0, "<s> hello"), "decode with <s>");
    T_ASSERT(decodes(tok, (const int32_t[]){ BOS, SP_HELLO }, 2, 1, "hello"), "decode skipping <s>");
    T_ASSERT(decodes(tok, (const int32_t[]){ SP_SP, SP_HELLO }, 2, 0, "  hello"), "one space stripped only");
    /* the stream keeps the space: a continuation of a prompt */
    lr_tok_stream s;
    lr_tok_stream_init(&s, tok, 1);
    const char *p;
    size_t n;
    T_OK(lr_tok_stream_push(&s, SP_WORLD, &p, &n));
    T_ASSERT(n == 6 && !memcmp(p, " world", 6), "stream piece '%.*s'", (int)n, p);
    T_OK(lr_tok_stream_push(&s, fb(0xC3), &p, &n));
    T_ASSERT(n == 0, "half a character held");
    T_OK(lr_tok_stream_push(&s, fb(0x9F), &p, &n));
    T_ASSERT(n == 2 && !memcmp(p, "\xC3\x9F", 2), "the character completed");
    lr_tok_stream_free(&s);
    /* tokens by text: the metaspace is a space; a byte-fallback token is not
       found by its byte (that would be the character's token, absent here) */
    T_ASSERT(lr_tok_find(tok, " hello", 6) == SP_HELLO, "find ' hello'");
    T_ASSERT(lr_tok_find(tok, "A", 1) < 0, "a byte-fallback token is not found by its text");
    lr_tok_free(tok);
    return T_PASS;
}

/* Arbitrary bytes (no U+2581 in them) encode and decode back exactly: the
 * Prepend's space is the one the decoder strips, invalid bytes fall back. */
static int test_round_trip(void)
{
    lr_tok *tok;
    T_OK(load(&tok, FB, LLAMA2_NORM, NULL, LLAMA2_DEC));
    lr_rng r;
    lr_rng_seed(&r, 69);
    static const char alpha[] = "helowrdxy \xC3\xA9\xC3\x9F\xE2\x96";
    for (int k = 0; k < 300; k++) {
        char buf[64];
        size_t n = (size_t)(lr_rng_below(&r, 48));
        for (size_t i = 0; i < n; i++)
            buf[i] = k % 3 == 2 ? (char)lr_rng_below(&r, 256) : alpha[lr_rng_below(&r, sizeof alpha - 1)];
        buf[n] = 0;
        if (memmem(buf, n, MS, 3) || memchr(buf, 0, n) || memmem(buf, n, "<s>", 3) || memmem(buf, n, "</s>", 4) ||
            memmem(buf, n, "<unk>", 5))
            continue;
        lr_tok_ids v = {0};
        T_OK(lr_tok_encode(tok, buf, n, 1, &v));
        char *back;
        size_t len;
        T_OK(lr_tok_decode(tok, v.ids, v.n, 0, &back, &len));
        T_ASSERT(len == n && memcmp(back, buf, n) == 0, "round trip %d: %zu bytes back of %zu", k, len, n);
        for (size_t i = 0; i < v.n; i++) T_ASSERT(v.ids[i] != UNK, "unknown token with byte fallback");
        free(back);
        lr_tok_ids_free(&v);
    }
    lr_tok_free(tok);
    return T_PASS;
}

static int test_metaspace_forms(void)
{
    lr_tok *tok;
    /* prepend "first": only the text's first segment gets its ▁ */
    T_OK(load(&tok, FB, NULL,
              "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"first\",\"split\":false}",
              "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"first\",\"split\":false}"));
    T_ASSERT(ENCODES(tok, "hello", SP_HELLO), "first: hello");
    /* "hello" after <s>: h, e, l l -> ll, ll o -> llo */
    T_ASSERT(ENCODES(tok, "<s>hello", BOS, H, E, LLO), "first: <s>hello");
    /* a text starting with a space gets none more */
    T_ASSERT(ENCODES(tok, " hello", SP_HELLO), "first: ' hello'");
    T_ASSERT(ENCODES(tok, "x y", SP, X_SP, Y), "first: unsplit");
    T_ASSERT(decodes(tok, (const int32_t[]){ SP_HELLO }, 1, 0, "hello"), "Metaspace decoder strips");
    lr_tok_free(tok);
    /* "always", split (the default): words start at each space */
    T_OK(load(&tok, FB, NULL, "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"always\"}",
              "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"never\"}"));
    T_ASSERT(ENCODES(tok, "<s>hello", BOS, SP_HELLO), "always: <s>hello");
    /* words "▁x", "▁y": the merge "x ▁" never sees the second ▁ */
    T_ASSERT(ENCODES(tok, "x y", SP, X, SP, Y), "split");
    T_ASSERT(ENCODES(tok, "hello  world", SP_HELLO, SP, SP_WORLD), "split: two spaces");
    T_ASSERT(decodes(tok, (const int32_t[]){ SP_HELLO }, 1, 0, " hello"), "never: nothing stripped");
    lr_tok_free(tok);
    /* the older add_prefix_space form, and Gemma's (no prefix, decoder without Strip) */
    T_OK(load(&tok, FB, NULL, "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"add_prefix_space\":false}", NULL));
    T_ASSERT(ENCODES(tok, "hello", H, E, LLO), "add_prefix_space false");
    lr_tok_free(tok);
    T_OK(load(&tok, FB, "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" MS "\"}", NULL,
              "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"" MS "\"},"
              "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"}]}"));
    T_ASSERT(ENCODES(tok, "hello world", H, E, LLO, SP_WORLD), "Gemma form");
    T_ASSERT(decodes(tok, (const int32_t[]){ SP_WORLD }, 1, 0, " world"), "Gemma form keeps the space");
    lr_tok_free(tok);
    return T_PASS;
}

/* Without byte_fallback an unknown character is the unknown token, one per
 * run with fuse_unk. */
static int test_unknown_characters(void)
{
    lr_tok *tok;
    T_OK(load(&tok, ",\"fuse_unk\":true", LLAMA2_NORM, NULL, LLAMA2_DEC));
    T_ASSERT(ENCODES(tok, "\xC3\x9F\xC3\x9Fh", SP, UNK, H), "fused");
    lr_tok_free(tok);
    T_OK(load(&tok, ",\"fuse_unk\":false", LLAMA2_NORM, NULL, LLAMA2_DEC));
    T_ASSERT(ENCODES(tok, "\xC3\x9F\xC3\x9Fh", SP, UNK, UNK, H), "not fused");
    /* <0x41> is then an ordinary token named by its text */
    T_ASSERT(lr_tok_find(tok, "<0x41>", 6) == fb(0x41), "<0x41> as text");
    lr_tok_free(tok);
    return T_PASS;
}

static void warn_print(const char *m) { fprintf(stderr, "    warning: %s\n", m); }

static int refused(int want, const char *needle, const char *model_extra, const char *normalizer, const char *pretok)
{
    lr_tok *tok = NULL;
    lr_set_warn_handler(NULL);
    int rc = load(&tok, model_extra, normalizer, pretok, NULL);
    lr_set_warn_handler(warn_print);
    lr_tok_free(tok);
    T_ASSERT(rc == want, "rc %d (%s), want %d", rc, lr_errmsg(), want);
    T_ASSERT(strstr(lr_errmsg(), needle) && strstr(lr_errmsg(), "spm.json"), "message '%s' lacks '%s'", lr_errmsg(), needle);
    return T_PASS;
}

static int test_refusals(void)
{
    if (refused(LR_EUNSUPPORTED, "replacement", FB, NULL, "{\"type\":\"Metaspace\",\"replacement\":\"_\"}")) return T_FAIL;
    if (refused(LR_EUNSUPPORTED, "prepend_scheme", FB, NULL,
                "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"sometimes\"}")) return T_FAIL;
    if (refused(LR_EUNSUPPORTED, "pre_tokenizer ByteLevel with SentencePiece", FB, NULL, "{\"type\":\"ByteLevel\"}"))
        return T_FAIL;
    if (refused(LR_EUNSUPPORTED, "normalizer Lowercase", FB, "{\"type\":\"Lowercase\"}", NULL)) return T_FAIL;
    /* Prepend of something else than the metaspace */
    if (refused(LR_EUNSUPPORTED, "normalizer Prepend", FB, "{\"type\":\"Prepend\",\"prepend\":\"_\"}", NULL)) return T_FAIL;
    return T_PASS;
}

T_MAIN(T_CASE(test_llama2_form), T_CASE(test_round_trip), T_CASE(test_metaspace_forms),
       T_CASE(test_unknown_characters), T_CASE(test_refusals))
