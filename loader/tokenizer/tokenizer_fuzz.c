/* Fuzz target for the tokenizer. The first input byte picks what the rest is:
 *   0: text to encode (bit 2: allow special tokens) -- checks exact round
 *      trips and that the stream decoder emits valid UTF-8;
 *   1: a list of token ids (3 bytes each, some out of range) to decode;
 *   2: a tokenizer.json to load, then use;
 *   3: text to NFC-normalize -- checks NFC is idempotent and that text the
 *      quick check passes is left alone.
 * Tokenizers: a small byte-level one built here (Qwen pattern, no
 * normalizer, so round trips are exact), a small SentencePiece-style one
 * (byte fallback, Llama 2's normalizer and decoder) and, when found
 * (LEECHRT_QWEN3_TOKENIZER or ../shared/data/qwen3-tokenizer/), the real
 * Qwen3 one. A failed check aborts, which the fuzzer reports. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/tokenizer/tok_internal.h"
#include "loader/tokenizer/tokenizer.h"
#include "loader/tokenizer/unicode.h"
#include "util/err.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) { fprintf(stderr, "check failed: %s (line %d)\n", #c, __LINE__); abort(); } \
    } while (0)

/* The small tokenizer: 256 byte tokens in the GPT-2 alphabet, a few merges,
 * special and non-special added tokens. */
static char *small_json(void)
{
    size_t cap = 32768, o = 0;
    char *js = malloc(cap);
    if (!js) return NULL;
    o += (size_t)snprintf(js + o, cap - o,
                          "{\"added_tokens\":[{\"id\":270,\"content\":\"<|s|>\",\"special\":true},"
                          "{\"id\":271,\"content\":\"<|s|>x\",\"special\":true},{\"id\":272,\"content\":\"<t>\",\"special\":false}],"
                          "\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\","
                          "\"pattern\":{\"Regex\":\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}|"
                          " ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\","
                          "\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]},"
                          "\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"vocab\":{");
    int k = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint8_t u[4];
        int n = lr_utf8_encode(printable ? (uint32_t)b : 0x100u + (uint32_t)k++, u);
        js[o++] = '"';
        for (int i = 0; i < n; i++) {
            if (u[i] == '"' || u[i] == '\\') js[o++] = '\\';
            js[o++] = (char)u[i];
        }
        o += (size_t)snprintf(js + o, cap - o, "\":%d,", b);
    }
    snprintf(js + o, cap - o,
             "\"ab\":256,\"abc\":257,\"ĠĠ\":258,\"ĠĠĠĠ\":259,\"Ġa\":260,\"in\":261,\"Ġin\":262,\"ĊĊ\":263,\"Ã©\":264},"
             "\"merges\":[\"a b\",\"ab c\",\"Ġ Ġ\",\"ĠĠ ĠĠ\",\"Ġ a\",\"i n\",\"Ġ in\",\"Ċ Ċ\",\"Ã ©\"]}}");
    return js;
}

/* A small SentencePiece-style one (Llama 2's form): <0xNN> byte fallback,
 * Prepend + Replace, the decoder's Strip; round trips are exact for text
 * without the metaspace U+2581 and special tokens. */
static char *spm_json(void)
{
    size_t cap = 16384, o = 0;
    char *js = malloc(cap);
    if (!js) return NULL;
    o += (size_t)snprintf(js + o, cap - o,
                          "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},"
                          "{\"id\":1,\"content\":\"<s>\",\"special\":true}],"
                          "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"\u2581\"},"
                          "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\u2581\"}]},\"pre_tokenizer\":null,"
                          "\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"\u2581\"},"
                          "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\",\"content\":\" \","
                          "\"start\":1,\"stop\":0}]},\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"fuse_unk\":true,"
                          "\"byte_fallback\":true,\"vocab\":{\"<unk>\":0,\"<s>\":1");
    for (int b = 0; b < 256; b++) o += (size_t)snprintf(js + o, cap - o, ",\"<0x%02X>\":%d", b, 2 + b);
    snprintf(js + o, cap - o,
             ",\"\u2581\":258,\"a\":259,\"b\":260,\"\u2581a\":261,\"ab\":262,\"\u2581ab\":263,\"\u2581\u2581\":264,"
             "\"\u00e9\":265},\"merges\":[\"\u2581 a\",\"a b\",\"\u2581a b\",\"\u2581 \u2581\"]}}");
    return js;
}

static lr_tok *g_small, *g_qwen, *g_spm;

static void init(void)
{
    static int done;
    if (done) return;
    done = 1;
    lr_set_warn_handler(NULL);
    char *js = small_json();
    if (!js || lr_tok_load_hf_mem(js, strlen(js), NULL, 0, "small.json", &g_small) != LR_OK) {
        fprintf(stderr, "small tokenizer: %s\n", lr_errmsg());
        abort();
    }
    free(js);
    js = spm_json();
    if (!js || lr_tok_load_hf_mem(js, strlen(js), NULL, 0, "spm.json", &g_spm) != LR_OK) {
        fprintf(stderr, "SentencePiece tokenizer: %s\n", lr_errmsg());
        abort();
    }
    free(js);
    const char *p = getenv("LEECHRT_QWEN3_TOKENIZER");
    if (!p || !*p) p = "../shared/data/qwen3-tokenizer/tokenizer.json.gz";
    if (access(p, R_OK) == 0 && lr_tok_load_hf(p, &g_qwen) != LR_OK) g_qwen = NULL;
}

static int valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += (size_t)lr_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        if (cp >= 0x110000) return 0;
    }
    return 1;
}

/* Stream-decodes ids; the output must be valid UTF-8 and, when the exact
 * bytes are valid UTF-8, equal to them. */
static void stream_check(const lr_tok *tok, const int32_t *ids, size_t n, const char *exact, size_t exact_len)
{
    lr_tok_stream s;
    lr_tok_stream_init(&s, tok, 0);
    size_t cap = exact_len + 64, o = 0;
    char *out = malloc(cap);
    CHECK(out);
    for (size_t i = 0; i <= n; i++) {
        const char *t;
        size_t l;
        int rc = i < n ? lr_tok_stream_push(&s, ids[i], &t, &l) : lr_tok_stream_flush(&s, &t, &l);
        if (rc) break;
        CHECK(valid_utf8(t, l));
        if (o + l > cap) {
            cap = (o + l) * 2;
            out = realloc(out, cap);
            CHECK(out);
        }
        memcpy(out + o, t, l);
        o += l;
    }
    /* a SentencePiece decode strips leading spaces the stream keeps */
    size_t lead = o > exact_len ? o - exact_len : 0;
    /* (a Metaspace decoder drops the first token's spaces wherever they are: no comparison) */
    if (exact && valid_utf8(exact, exact_len) && !tok->meta_first) {
        CHECK(lead <= (size_t)tok->strip_lead && o == exact_len + lead && memcmp(out + lead, exact, exact_len) == 0);
        for (size_t i = 0; i < lead; i++) CHECK(out[i] == ' ');
    }
    free(out);
    lr_tok_stream_free(&s);
}

/* exact: 1 the round trip must give the input back, 0 only when the input
 * is NFC already, -1 no check (a fuzzed tokenizer may strip or drop). */
static void encode_check(const lr_tok *tok, const uint8_t *data, size_t size, int special, int exact)
{
    lr_tok_ids v = {0};
    if (lr_tok_encode(tok, (const char *)data, size, special, &v) != LR_OK) { lr_tok_ids_free(&v); return; }
    for (size_t i = 0; i < v.n; i++) CHECK(v.ids[i] >= 0 && v.ids[i] < lr_tok_vocab_size(tok));
    char *text;
    size_t len;
    CHECK(lr_tok_decode(tok, v.ids, v.n, 0, &text, &len) == LR_OK);
    if (exact == 1 || (exact == 0 && !lr_nfc_needed(data, size))) CHECK(len == size && memcmp(text, data, size) == 0);
    stream_check(tok, v.ids, v.n, text, len);
    free(text);
    lr_tok_ids_free(&v);
}

static void decode_ids(const lr_tok *tok, const uint8_t *data, size_t size)
{
    size_t n = size / 3;
    int32_t *ids = malloc((n + 1) * sizeof *ids);
    CHECK(ids);
    int32_t span = lr_tok_vocab_size(tok) + 16;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)data[3 * i] | (uint32_t)data[3 * i + 1] << 8 | (uint32_t)data[3 * i + 2] << 16;
        ids[i] = (int32_t)(r % (uint32_t)span) - 8;
    }
    char *text;
    size_t len;
    if (lr_tok_decode(tok, ids, n, size && (data[0] & 1), &text, &len) == LR_OK) free(text);
    stream_check(tok, ids, n, NULL, 0);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size < 1) return 0;
    int mode = data[0] & 3, special = (data[0] >> 2) & 1;
    data++;
    size--;
    switch (mode) {
    case 0:
        encode_check(g_small, data, size, special, 1);
        /* exact unless a special token or the metaspace changes the spaces */
        encode_check(g_spm, data, size, special, special || memmem(data, size, "\xE2\x96\x81", 3) ? -1 : 1);
        if (g_qwen) encode_check(g_qwen, data, size, special, 0);
        break;
    case 1:
        decode_ids(g_small, data, size);
        decode_ids(g_spm, data, size);
        if (g_qwen) decode_ids(g_qwen, data, size);
        break;
    case 2: {
        lr_tok *t;
        if (lr_tok_load_hf_mem((const char *)data, size, (const char *)data, size, "fuzz.json", &t) == LR_OK) {
            encode_check(t, (const uint8_t *)"Hello, world! 123 <|s|>", 23, 1, -1);
            encode_check(t, data, size, special, -1);
            decode_ids(t, data, size);
            lr_tok_free(t);
        }
        break;
    }
    case 3: {
        uint8_t *a, *b;
        size_t na, nb;
        CHECK(lr_nfc(data, size, &a, &na) == 0);
        CHECK(lr_nfc(a, na, &b, &nb) == 0);
        CHECK(na == nb && memcmp(a, b, na) == 0);
        if (!lr_nfc_needed(data, size)) CHECK(na == size && memcmp(a, data, size) == 0);
        free(a);
        free(b);
        break;
    }
    }
    return 0;
}
