/* SentencePiece-style tokenizer.json (Llama 2, Mistral, Gemma): BPE over
 * characters with <0xNN> byte fallback, the metaspace as the space, the
 * Prepend/Replace normalizer or the Metaspace pre-tokenizer, and the decoder's
 * leading-space strip. The vocabulary is small (test/spm_tokenizer.h); every
 * expected id list is worked out by hand from Hugging Face's rules (merges
 * lowest rank first, equal ranks left to right), in the comment beside it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader/gguf/gguf_build.h"
#include "loader/import/gguf_tokjson.h"
#include "loader/tokenizer/tokenizer.h"
#include "test/spm_tokenizer.h"
#include "test/t.h"
#include "util/err.h"
#include "util/log.h"
#include "util/rng.h"

static int load(lr_tok **tok, const char *model_extra, const char *normalizer, const char *pretok, const char *decoder)
{
    char *j = t_spm_json(model_extra, normalizer, pretok, decoder);
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
    T_ASSERT(ENCODES(tok, "hello world", SPM_SP_HELLO, SPM_SP_WORLD), "hello world");
    /* the segment after <s> gets its own ▁ (Prepend normalizes each segment) */
    T_ASSERT(ENCODES(tok, "<s>hello", SPM_BOS, SPM_SP_HELLO), "<s>hello");
    /* "▁hello▁▁world": "▁ w" (rank 5) takes the second ▁ before "▁ ▁" (rank 10) could */
    T_ASSERT(ENCODES(tok, "hello  world", SPM_SP_HELLO, SPM_SP, SPM_SP_WORLD), "two spaces");
    /* Prepend adds ▁ even before a space: "▁▁" */
    T_ASSERT(ENCODES(tok, " ", SPM_SP_SP), "one space");
    /* é is a token; ß (C3 9F) is not: its bytes' fallback tokens */
    T_ASSERT(ENCODES(tok, "h\xC3\xA9", SPM_SP_H, SPM_E_ACUTE), "h + e-acute");
    T_ASSERT(ENCODES(tok, "\xC3\x9F", SPM_SP, spm_fb(0xC3), spm_fb(0x9F)), "sharp s falls back to bytes");
    /* the metaspace in the text is a space */
    T_ASSERT(ENCODES(tok, "hello" MS "world", SPM_SP_HELLO, SPM_SP_WORLD), "metaspace in the text");
    /* without a split, merges cross spaces: "▁x▁y" -> ▁, x▁, y */
    T_ASSERT(ENCODES(tok, "x y", SPM_SP, SPM_X_SP, SPM_Y), "x y unsplit");
    lr_tok_ids v = {0};
    T_OK(lr_tok_encode(tok, "", 0, 1, &v));
    T_ASSERT(v.n == 0, "empty text gives %zu ids", v.n);
    lr_tok_ids_free(&v);
    T_ASSERT(lr_tok_add_bos(tok) && lr_tok_bos(tok) == SPM_BOS, "the post-processor's BOS");
    /* decode: the leading space stripped once, bytes joined back */
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_HELLO, SPM_SP_WORLD }, 2, 0, "hello world"), "decode");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP, spm_fb(0xC3), spm_fb(0x9F) }, 3, 0, "\xC3\x9F"), "decode bytes");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_BOS, SPM_SP_HELLO }, 2, 0, "<s> hello"), "decode with <s>");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_BOS, SPM_SP_HELLO }, 2, 1, "hello"), "decode skipping <s>");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_SP, SPM_SP_HELLO }, 2, 0, "  hello"), "one space stripped only");
    /* the stream keeps the space: a continuation of a prompt */
    lr_tok_stream s;
    lr_tok_stream_init(&s, tok, 1);
    const char *p;
    size_t n;
    T_OK(lr_tok_stream_push(&s, SPM_SP_WORLD, &p, &n));
    T_ASSERT(n == 6 && !memcmp(p, " world", 6), "stream piece '%.*s'", (int)n, p);
    T_OK(lr_tok_stream_push(&s, spm_fb(0xC3), &p, &n));
    T_ASSERT(n == 0, "half a character held");
    T_OK(lr_tok_stream_push(&s, spm_fb(0x9F), &p, &n));
    T_ASSERT(n == 2 && !memcmp(p, "\xC3\x9F", 2), "the character completed");
    lr_tok_stream_free(&s);
    /* tokens by text: the metaspace is a space; a byte-fallback token is not
       found by its byte (that would be the character's token, absent here) */
    T_ASSERT(lr_tok_find(tok, " hello", 6) == SPM_SP_HELLO, "find ' hello'");
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
        for (size_t i = 0; i < v.n; i++) T_ASSERT(v.ids[i] != SPM_UNK, "unknown token with byte fallback");
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
    T_ASSERT(ENCODES(tok, "hello", SPM_SP_HELLO), "first: hello");
    /* "hello" after <s>: h, e, l l -> ll, ll o -> llo */
    T_ASSERT(ENCODES(tok, "<s>hello", SPM_BOS, SPM_H, SPM_E, SPM_LLO), "first: <s>hello");
    /* a text starting with a space gets none more */
    T_ASSERT(ENCODES(tok, " hello", SPM_SP_HELLO), "first: ' hello'");
    T_ASSERT(ENCODES(tok, "x y", SPM_SP, SPM_X_SP, SPM_Y), "first: unsplit");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_HELLO }, 1, 0, "hello"), "Metaspace decoder strips");
    /* Hugging Face's Metaspace decoder drops every metaspace of the first token, none after */
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_SP, SPM_SP_HELLO }, 2, 0, " hello"), "first token's spaces");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_X_SP, SPM_Y }, 2, 0, "xy"), "a trailing metaspace of the first token");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_BOS, SPM_X_SP, SPM_Y }, 3, 1, "xy"), "the first token after skipping");
    lr_tok_free(tok);
    /* "always", split (the default): words start at each space */
    T_OK(load(&tok, FB, NULL, "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"always\"}",
              "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"never\"}"));
    T_ASSERT(ENCODES(tok, "<s>hello", SPM_BOS, SPM_SP_HELLO), "always: <s>hello");
    /* words "▁x", "▁y": the merge "x ▁" never sees the second ▁ */
    T_ASSERT(ENCODES(tok, "x y", SPM_SP, SPM_X, SPM_SP, SPM_Y), "split");
    T_ASSERT(ENCODES(tok, "hello  world", SPM_SP_HELLO, SPM_SP, SPM_SP_WORLD), "split: two spaces");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_HELLO }, 1, 0, " hello"), "never: nothing stripped");
    lr_tok_free(tok);
    /* the older add_prefix_space form, and Gemma's (no prefix, decoder without Strip) */
    T_OK(load(&tok, FB, NULL, "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"add_prefix_space\":false}", NULL));
    T_ASSERT(ENCODES(tok, "hello", SPM_H, SPM_E, SPM_LLO), "add_prefix_space false");
    lr_tok_free(tok);
    T_OK(load(&tok, FB, "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" MS "\"}",
              /* what transformers' GemmaConverter writes: a Split with nothing left to split */
              "{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},\"behavior\":\"MergedWithPrevious\",\"invert\":false}",
              "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"" MS "\"},"
              "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"}]}"));
    T_ASSERT(ENCODES(tok, "hello world", SPM_H, SPM_E, SPM_LLO, SPM_SP_WORLD), "Gemma form");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_WORLD }, 1, 0, " world"), "Gemma form keeps the space");
    lr_tok_free(tok);
    return T_PASS;
}

/* Without byte_fallback an unknown character is the unknown token, one per
 * run with fuse_unk. */
/* A piece transformers' converter lists both in the vocabulary and as an
 * added token (user pieces, normalized false) loads, and stays the
 * vocabulary's: "▁▁" encodes and decodes as before. */
static int test_added_piece_in_vocabulary(void)
{
    char *j = t_spm_json(FB, LLAMA2_NORM, NULL, LLAMA2_DEC);
    T_ASSERT(j, "json");
    const char *at = strstr(j, "\"added_tokens\":[");
    T_ASSERT(at, "added_tokens");
    char extra[128];
    snprintf(extra, sizeof extra, "{\"id\":%d,\"content\":\"" MS MS "\",\"special\":false,\"normalized\":false},",
             SPM_SP_SP);
    size_t head = (size_t)(at - j) + strlen("\"added_tokens\":["), n = strlen(j) + strlen(extra) + 1;
    char *k = malloc(n);
    T_ASSERT(k, "alloc");
    snprintf(k, n, "%.*s%s%s", (int)head, j, extra, j + head);
    free(j);
    lr_tok *tok;
    int rc = lr_tok_load_hf_mem(k, strlen(k), NULL, 0, "spm.json", &tok);
    free(k);
    T_OK(rc);
    T_ASSERT(ENCODES(tok, " ", SPM_SP_SP), "one space");
    T_ASSERT(decodes(tok, (const int32_t[]){ SPM_SP_HELLO, SPM_SP_SP }, 2, 0, "hello  "), "decode");
    lr_tok_free(tok);
    return T_PASS;
}

static int test_unknown_characters(void)
{
    lr_tok *tok;
    T_OK(load(&tok, ",\"fuse_unk\":true", LLAMA2_NORM, NULL, LLAMA2_DEC));
    T_ASSERT(ENCODES(tok, "\xC3\x9F\xC3\x9Fh", SPM_SP, SPM_UNK, SPM_H), "fused");
    lr_tok_free(tok);
    T_OK(load(&tok, ",\"fuse_unk\":false", LLAMA2_NORM, NULL, LLAMA2_DEC));
    T_ASSERT(ENCODES(tok, "\xC3\x9F\xC3\x9Fh", SPM_SP, SPM_UNK, SPM_UNK, SPM_H), "not fused");
    /* <0x41> is then an ordinary token named by its text */
    T_ASSERT(lr_tok_find(tok, "<0x41>", 6) == spm_fb(0x41), "<0x41> as text");
    lr_tok_free(tok);
    return T_PASS;
}

/* A tokenizer.json given as a FIFO is opened once and read to its end (it
 * was opened twice, a probe then the reader, so the writer's one stream went
 * to the probe and the load hung). */
static int test_load_from_fifo(void)
{
    char dir[] = "/tmp/lrspm.XXXXXX", fifo[64];
    T_ASSERT(mkdtemp(dir), "mkdtemp");
    snprintf(fifo, sizeof fifo, "%s/tokenizer.json", dir);
    T_ASSERT(mkfifo(fifo, 0600) == 0, "mkfifo");
    char *j = t_spm_json(FB, LLAMA2_NORM, NULL, LLAMA2_DEC);
    T_ASSERT(j, "json");
    pid_t pid = fork();
    T_ASSERT(pid >= 0, "fork");
    if (pid == 0) {
        FILE *f = fopen(fifo, "wb");
        _exit(f && fwrite(j, 1, strlen(j), f) == strlen(j) && fclose(f) == 0 ? 0 : 1);
    }
    alarm(10); /* a hang fails the test instead of CI */
    lr_tok *tok;
    int rc = lr_tok_load_hf(fifo, &tok);
    alarm(0);
    int st;
    waitpid(pid, &st, 0);
    free(j);
    unlink(fifo);
    rmdir(dir);
    T_OK(rc);
    T_ASSERT(ENCODES(tok, "hello world", SPM_SP_HELLO, SPM_SP_WORLD), "hello world");
    lr_tok_free(tok);
    return T_PASS;
}

static void warn_print(const char *m) { fprintf(stderr, "    warning: %s\n", m); }

/* The same vocabulary as a GGUF "llama" tokenizer (llama.cpp's form: pieces,
 * token types, piece scores and no merges), each merged piece scored minus
 * its rank in the tokenizer.json's merge list, so the merges the loader makes
 * from the scores are that list. pre: add_space_prefix (-1: key absent). */
static uint8_t *llama_gguf(int prefix, size_t *n)
{
    gb_buf b = {0};
    gb_header(&b, 3);
    gb_kv_str(&b, "tokenizer.ggml.model", "llama");
    if (prefix >= 0) gb_kv_bool(&b, "tokenizer.ggml.add_space_prefix", prefix);
    gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", SPM_BOS);
    gb_kv_u32(&b, "tokenizer.ggml.eos_token_id", SPM_EOS);
    gb_kv_u32(&b, "tokenizer.ggml.unknown_token_id", SPM_UNK);
    const int nw = (int)(sizeof WORDS / sizeof WORDS[0]), ntok = SPM_SP + nw;
    gb_kv_arr(&b, "tokenizer.ggml.tokens", LR_GGUF_STR, (uint64_t)ntok);
    gb_str(&b, "<unk>");
    gb_str(&b, "<s>");
    gb_str(&b, "</s>");
    for (unsigned x = 0; x < 256; x++) {
        char k[8];
        snprintf(k, sizeof k, "<0x%02X>", x);
        gb_str(&b, k);
    }
    for (int i = 0; i < nw; i++) gb_str(&b, WORDS[i]);
    gb_kv_arr(&b, "tokenizer.ggml.token_type", LR_GGUF_I32, (uint64_t)ntok);
    for (int i = 0; i < ntok; i++) gb_u32(&b, i == SPM_UNK ? 2 : i < 3 ? 3 : i < SPM_SP ? 6 : 1);
    gb_kv_arr(&b, "tokenizer.ggml.scores", LR_GGUF_F32, (uint64_t)ntok);
    for (int i = 0; i < ntok; i++) {
        float sc = 0;
        for (size_t r = 0; r < sizeof MERGES / sizeof MERGES[0]; r++) {
            /* the merge's result: its two halves joined */
            char joined[32];
            const char *sp = strchr(MERGES[r], ' ');
            snprintf(joined, sizeof joined, "%.*s%s", (int)(sp - MERGES[r]), MERGES[r], sp + 1);
            if (i >= SPM_SP && !strcmp(joined, WORDS[i - SPM_SP])) sc = -(float)r;
        }
        uint32_t u;
        memcpy(&u, &sc, 4);
        gb_u32(&b, u);
    }
    gb_finish(&b);
    *n = b.n;
    return b.failed ? NULL : b.p;
}

/* GGUF's "llama" model: the merges made from the scores are the
 * tokenizer.json's, so both encode alike (and as worked out by hand); the
 * import's conversion of the GGUF to tokenizer.json encodes alike too. */
static int test_gguf_llama(void)
{
    static const char *const texts[] = { "hello world", "hello  world", " ", "", "h\xC3\xA9", "\xC3\x9F",
                                         "x y", "<s>hello", "hello<s> world", "  x\xE2\x96\x81y \xF0\x9F\x98\x80",
                                         "\xff\xfeworld" };
    lr_tok *hf, *gg, *cv;
    T_OK(load(&hf, FB, LLAMA2_NORM, NULL, LLAMA2_DEC));
    size_t n;
    uint8_t *bytes = llama_gguf(-1, &n);
    T_ASSERT(bytes, "GGUF");
    lr_gguf *g;
    T_OK(lr_gguf_parse(bytes, n, "llama.gguf", &g));
    T_OK(lr_tok_from_gguf(g, &gg));
    char *json;
    size_t jn;
    T_OK(lr_gguf_tokenizer_json(g, &json, &jn));
    T_OK(lr_tok_load_hf_mem(json, jn, NULL, 0, "converted.json", &cv));
    free(json);
    int32_t *pa, *pb;
    size_t na, nb;
    T_OK(lr_tok_merge_pairs(hf, &pa, &na));
    T_OK(lr_tok_merge_pairs(gg, &pb, &nb));
    T_ASSERT(na == 12 && nb == na && !memcmp(pa, pb, 2 * na * sizeof *pa), "merges from scores: %zu, want %zu", nb, na);
    free(pa);
    free(pb);
    T_ASSERT(ENCODES(gg, "hello world", SPM_SP_HELLO, SPM_SP_WORLD), "GGUF: hello world");
    T_ASSERT(lr_tok_add_bos(gg) && lr_tok_bos(gg) == SPM_BOS, "BOS by default");
    T_ASSERT(lr_tok_add_bos(cv) && lr_tok_bos(cv) == SPM_BOS, "the converted file's BOS");
    const lr_tok *const all[] = { gg, cv };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        lr_tok_ids a = {0};
        T_OK(lr_tok_encode(hf, texts[k], strlen(texts[k]), 1, &a));
        for (int w = 0; w < 2; w++) {
            lr_tok_ids v = {0};
            T_OK(lr_tok_encode(all[w], texts[k], strlen(texts[k]), 1, &v));
            T_ASSERT(v.n == a.n && (!a.n || !memcmp(v.ids, a.ids, a.n * sizeof *a.ids)), "%s: \"%s\" differs",
                     w ? "converted" : "GGUF", texts[k]);
            char *t1, *t2;
            size_t l1, l2;
            T_OK(lr_tok_decode(hf, a.ids, a.n, 0, &t1, &l1));
            T_OK(lr_tok_decode(all[w], v.ids, v.n, 0, &t2, &l2));
            T_ASSERT(l1 == l2 && !memcmp(t1, t2, l1), "decode of \"%s\"", texts[k]);
            free(t1);
            free(t2);
            lr_tok_ids_free(&v);
        }
        lr_tok_ids_free(&a);
    }
    lr_tok_free(gg);
    lr_tok_free(cv);
    lr_gguf_close(g);
    free(bytes);
    /* a llama model without its scores has no merges to make: refused by name */
    gb_buf nb_ = {0};
    gb_header(&nb_, 3);
    gb_kv_str(&nb_, "tokenizer.ggml.model", "llama");
    gb_kv_arr(&nb_, "tokenizer.ggml.tokens", LR_GGUF_STR, 2);
    gb_str(&nb_, "a");
    gb_str(&nb_, "b");
    gb_finish(&nb_);
    T_OK(lr_gguf_parse(nb_.p, nb_.n, "noscores.gguf", &g));
    T_ASSERT(lr_tok_from_gguf(g, &gg) != LR_OK && strstr(lr_errmsg(), "piece scores") && strstr(lr_errmsg(), "noscores.gguf"),
             "no scores: %s", lr_errmsg());
    lr_gguf_close(g);
    free(nb_.p);
    /* a piece of 200 KB (a hostile file) is no merge's result: loading stays
       fast (every cut of it hashed both halves, 6 s here before the bound) */
    {
        enum { BIG = 200000 };
        char *big = malloc(BIG + 1);
        T_ASSERT(big, "alloc");
        memset(big, 'a', BIG);
        big[BIG] = 0;
        gb_buf hb = {0};
        gb_header(&hb, 3);
        gb_kv_str(&hb, "tokenizer.ggml.model", "llama");
        gb_kv_arr(&hb, "tokenizer.ggml.tokens", LR_GGUF_STR, 3);
        gb_str(&hb, "a");
        gb_str(&hb, "aa");
        gb_str(&hb, big);
        gb_kv_arr(&hb, "tokenizer.ggml.scores", LR_GGUF_F32, 3);
        for (int i = 0; i < 3; i++) gb_u32(&hb, 0);
        gb_finish(&hb);
        free(big);
        T_OK(lr_gguf_parse(hb.p, hb.n, "big.gguf", &g));
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        lr_set_warn_handler(NULL);
        T_OK(lr_tok_from_gguf(g, &gg));
        lr_set_warn_handler(warn_print);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        T_ASSERT(dt < 1.0, "a 200 KB piece took %.2f s to load", dt);
        T_ASSERT(ENCODES(gg, "aaa", 1, 0), "aa then a");
        lr_tok_free(gg);
        lr_gguf_close(g);
        free(hb.p);
    }
    /* add_space_prefix false: no space in front, none stripped */
    bytes = llama_gguf(0, &n);
    T_ASSERT(bytes, "GGUF");
    T_OK(lr_gguf_parse(bytes, n, "llama.gguf", &g));
    T_OK(lr_tok_from_gguf(g, &gg));
    T_ASSERT(ENCODES(gg, "hello world", SPM_H, SPM_E, SPM_LLO, SPM_SP_WORLD), "no space prefix");
    T_ASSERT(decodes(gg, (const int32_t[]){ SPM_SP_WORLD }, 1, 0, " world"), "nothing stripped");
    lr_tok_free(gg);
    lr_gguf_close(g);
    free(bytes);
    lr_tok_free(hf);
    return T_PASS;
}


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
       T_CASE(test_unknown_characters), T_CASE(test_added_piece_in_vocabulary), T_CASE(test_gguf_llama), T_CASE(test_load_from_fifo), T_CASE(test_refusals))
