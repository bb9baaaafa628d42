/* Tokenizer tests. Expected ids for the real Qwen3 tokenizer come from
 * Hugging Face tokenizers (testdata/qwen3_cases.txt, written by
 * tools/gen_tok_fixtures.py); the tokenizer file itself is found through
 * LEECHRT_QWEN3_TOKENIZER or ../shared/data/qwen3-tokenizer/, and those tests
 * skip when it is absent. The rest use small tokenizers built here. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "loader/gguf/gguf.h"
#include "loader/gguf/gguf_build.h"
#include "loader/tokenizer/tok_internal.h"
#include "loader/tokenizer/tokenizer.h"
#include "loader/tokenizer/unicode.h"
#include "test/t.h"
#include "util/err.h"
#include "util/log.h"
#include "util/rng.h"

/* ---- helpers ---- */

static const char *find_file(const char *env, const char *const *cands)
{
    const char *e = getenv(env);
    if (e && *e) return access(e, R_OK) == 0 ? e : NULL;
    for (; *cands; cands++)
        if (access(*cands, R_OK) == 0) return *cands;
    return NULL;
}

static const char *qwen3_path(void)
{
    static const char *const c[] = { "../shared/data/qwen3-tokenizer/tokenizer.json.gz",
                                     "../../shared/data/qwen3-tokenizer/tokenizer.json.gz", NULL };
    return find_file("LEECHRT_QWEN3_TOKENIZER", c);
}

static const char *testdata(const char *env, const char *name)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 512, "loader/tokenizer/testdata/%s", name);
    const char *const c[] = { b, NULL };
    return find_file(env, c);
}

/* The Qwen3 tokenizer, loaded once. */
static lr_tok *qwen3(void)
{
    static lr_tok *tok;
    static int tried;
    if (!tried) {
        tried = 1;
        const char *p = qwen3_path();
        if (p && lr_tok_load_hf(p, &tok) != LR_OK) {
            fprintf(stderr, "    loading %s: %s\n", p, lr_errmsg());
            tok = NULL;
        }
    }
    return tok;
}

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/* Decodes hex into a malloc'd buffer. */
static uint8_t *unhex(const char *h, size_t n, size_t *len)
{
    uint8_t *out = malloc(n / 2 + 1);
    for (size_t i = 0; i + 1 < n; i += 2) out[i / 2] = (uint8_t)(hexval(h[i]) << 4 | hexval(h[i + 1]));
    *len = n / 2;
    out[*len] = 0;
    return out;
}

typedef struct {
    char name[64];
    int special;
    uint8_t *text, *decoded;
    size_t len, dlen;
    int32_t *ids;
    size_t n;
} tcase;

static void free_cases(tcase *c, size_t n)
{
    for (size_t i = 0; i < n; i++) { free(c[i].text); free(c[i].decoded); free(c[i].ids); }
    free(c);
}

/* Reads a fixture file: name \t special \t text-hex \t ids \t decoded-hex. */
static tcase *read_cases(const char *path, size_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 0, n = 0, lcap = 0;
    tcase *c = NULL;
    char *line = NULL;
    ssize_t ll;
    while ((ll = getline(&line, &lcap, f)) > 0) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char *field[5];
        int k = 0;
        for (char *p = line; k < 5;) {
            field[k++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (k != 5) continue;
        field[4][strcspn(field[4], "\n")] = 0;
        if (n == cap) c = realloc(c, (cap = cap ? cap * 2 : 64) * sizeof *c);
        tcase *t = &c[n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", field[0]);
        t->special = atoi(field[1]);
        t->text = unhex(field[2], strlen(field[2]), &t->len);
        if (strcmp(field[4], "-") == 0) {
            t->decoded = malloc(t->len + 1);
            memcpy(t->decoded, t->text, t->len + 1);
            t->dlen = t->len;
        } else {
            t->decoded = unhex(field[4], strlen(field[4]), &t->dlen);
        }
        size_t icap = 16;
        t->ids = malloc(icap * sizeof *t->ids);
        for (char *p = field[3]; *p;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) break;
            if (t->n == icap) t->ids = realloc(t->ids, (icap *= 2) * sizeof *t->ids);
            t->ids[t->n++] = (int32_t)v;
            p = end;
        }
    }
    free(line);
    fclose(f);
    *count = n;
    return c;
}

static int valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = lr_utf8_decode(s + i, n - i, &cp);
        if (cp >= 0x110000) return 0;
        i += (size_t)k;
    }
    return 1;
}

/* Streams ids through the streaming decoder into one malloc'd string. */
static int stream_all(const lr_tok *tok, const int32_t *ids, size_t n, char **out, size_t *len)
{
    lr_tok_stream s;
    lr_tok_stream_init(&s, tok, 0);
    size_t cap = 64, o = 0;
    char *buf = malloc(cap);
    for (size_t i = 0; i <= n; i++) {
        const char *t;
        size_t l;
        int rc = i < n ? lr_tok_stream_push(&s, ids[i], &t, &l) : lr_tok_stream_flush(&s, &t, &l);
        if (rc) { free(buf); lr_tok_stream_free(&s); return rc; }
        while (o + l + 1 > cap) buf = realloc(buf, cap *= 2);
        memcpy(buf + o, t, l);
        o += l;
    }
    buf[o] = 0;
    lr_tok_stream_free(&s);
    *out = buf;
    *len = o;
    return LR_OK;
}

static void print_ids(const char *what, const int32_t *ids, size_t n)
{
    fprintf(stderr, "    %s:", what);
    for (size_t i = 0; i < n && i < 40; i++) fprintf(stderr, " %d", (int)ids[i]);
    fprintf(stderr, n > 40 ? " ...\n" : "\n");
}

/* Runs every fixture case through tok: ids, decode, stream decode. */
static int check_cases(const lr_tok *tok, const char *path)
{
    size_t n;
    tcase *c = read_cases(path, &n);
    T_ASSERT(c && n > 0, "cannot read fixture %s", path);
    int bad = 0;
    for (size_t i = 0; i < n && bad < 5; i++) {
        lr_tok_ids v = {0};
        T_OK(lr_tok_encode(tok, (const char *)c[i].text, c[i].len, c[i].special, &v));
        int same = v.n == c[i].n && (v.n == 0 || memcmp(v.ids, c[i].ids, v.n * sizeof *v.ids) == 0);
        if (!same) {
            fprintf(stderr, "    case %s: ids differ\n", c[i].name);
            print_ids("want", c[i].ids, c[i].n);
            print_ids("got ", v.ids, v.n);
            bad++;
        }
        char *text, *st;
        size_t len, slen;
        T_OK(lr_tok_decode(tok, v.ids, v.n, 0, &text, &len));
        if (len != c[i].dlen || memcmp(text, c[i].decoded, len) != 0) {
            fprintf(stderr, "    case %s: decode(encode(text)) differs\n", c[i].name);
            bad++;
        }
        T_OK(stream_all(tok, v.ids, v.n, &st, &slen));
        if (!valid_utf8((const uint8_t *)st, slen) ||
            (valid_utf8((const uint8_t *)text, len) && (slen != len || memcmp(st, text, len) != 0))) {
            fprintf(stderr, "    case %s: streamed decode differs\n", c[i].name);
            bad++;
        }
        free(text);
        free(st);
        lr_tok_ids_free(&v);
    }
    free_cases(c, n);
    T_ASSERT(bad == 0, "%d mismatches", bad);
    return T_PASS;
}

/* A small byte-level tokenizer.json: the 256 byte tokens (ids 0..255 in
 * byte order), a few merges, and added tokens. Extra JSON can replace the
 * pre_tokenizer or add model fields. */
static char *small_json(const char *model_extra, const char *merges, const char *added, const char *pretok,
                        const char *normalizer)
{
    /* ByteLevel alphabet, written independently of bytelevel.c. */
    char *vocab = malloc(256 * 16 + 4096);
    size_t o = 0;
    int k = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint32_t cp = printable ? (uint32_t)b : 0x100u + (uint32_t)k++;
        uint8_t u[4];
        int n = lr_utf8_encode(cp, u);
        o += (size_t)sprintf(vocab + o, "%s\"", b ? "," : "");
        for (int i = 0; i < n; i++) {
            if (u[i] == '"' || u[i] == '\\') vocab[o++] = '\\';
            vocab[o++] = (char)u[i];
        }
        o += (size_t)sprintf(vocab + o, "\":%d", b);
    }
    /* merged tokens used by the merges below */
    o += (size_t)sprintf(vocab + o, ",\"ab\":256,\"abc\":257,\"ĠĠ\":258,\"bc\":259,\"Ġa\":260,\"aa\":261,\"aaaa\":262");
    vocab[o] = 0;
    size_t cap = o + 8192;
    char *js = malloc(cap);
    snprintf(js, cap,
             "{\"version\":\"1.0\",\"added_tokens\":[%s],\"normalizer\":%s,\"pre_tokenizer\":%s,"
             "\"post_processor\":null,\"decoder\":{\"type\":\"ByteLevel\"},"
             "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null%s,\"vocab\":{%s},\"merges\":[%s]}}",
             added ? added : "", normalizer ? normalizer : "null",
             pretok ? pretok
                    : "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}",
             model_extra ? model_extra : "", vocab,
             merges ? merges : "\"a b\",\"ab c\",\"Ġ Ġ\",\"b c\",\"Ġ a\",\"a a\",\"aa aa\"");
    free(vocab);
    return js;
}

static int load_small(lr_tok **tok, const char *model_extra, const char *merges, const char *added,
                      const char *pretok, const char *normalizer)
{
    char *js = small_json(model_extra, merges, added, pretok, normalizer);
    int rc = lr_tok_load_hf_mem(js, strlen(js), NULL, 0, "small.json", tok);
    free(js);
    return rc;
}

static int encode_str(const lr_tok *tok, const char *s, int special, lr_tok_ids *v)
{
    v->n = 0;
    return lr_tok_encode(tok, s, strlen(s), special, v);
}

static int ids_eq(const lr_tok_ids *v, const int32_t *want, size_t n)
{
    if (v->n != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (v->ids[i] != want[i]) return 0;
    return 1;
}
#define IDS(...) ((const int32_t[]){ __VA_ARGS__ }), (sizeof((const int32_t[]){ __VA_ARGS__ }) / sizeof(int32_t))

/* ---- unicode ---- */

static int test_ascii_classes_match_tables(void)
{
    for (uint32_t c = 0; c < 128; c++)
        T_ASSERT(lr_uc_ascii[c] == (lr_uc_lookup(c) & 3), "U+%04X: fast table %d, generated %d", c, lr_uc_ascii[c],
                 lr_uc_lookup(c) & 3);
    T_ASSERT(lr_uc_class(0x4E2D) == LR_UC_L, "CJK is a letter");
    T_ASSERT(lr_uc_class(0x0661) == LR_UC_N, "Arabic-Indic one is a number");
    T_ASSERT(lr_uc_class(0x2167) == LR_UC_N, "roman numeral is a number (Nl)");
    T_ASSERT(lr_uc_class(0x3000) == LR_UC_WS && lr_uc_class(0x85) == LR_UC_WS, "White_Space");
    T_ASSERT(lr_uc_class(0x1C) == LR_UC_OTHER && lr_uc_class(0x200B) == LR_UC_OTHER, "not White_Space");
    T_ASSERT(lr_uc_class(0x1F642) == LR_UC_OTHER, "emoji is other");
    T_ASSERT(lr_uc_class(LR_UC_BAD(0xFF)) == LR_UC_OTHER, "bad byte is other");
    return T_PASS;
}

static int test_utf8_decode(void)
{
    static const struct { const char *s; int len; uint32_t cp; } c[] = {
        { "A", 1, 'A' },
        { "\xC3\xA9", 2, 0xE9 },
        { "\xE4\xBD\xA0", 3, 0x4F60 },
        { "\xF0\x9F\x99\x82", 4, 0x1F642 },
        { "\xC0\x80", 1, LR_UC_BAD(0xC0) },         /* overlong */
        { "\xE0\x80\x80", 1, LR_UC_BAD(0xE0) },     /* overlong */
        { "\xED\xA0\x80", 1, LR_UC_BAD(0xED) },     /* surrogate */
        { "\xF4\x90\x80\x80", 1, LR_UC_BAD(0xF4) }, /* > U+10FFFF */
        { "\xE4\xBD", 1, LR_UC_BAD(0xE4) },         /* truncated */
        { "\x80", 1, LR_UC_BAD(0x80) },
        { "\xFF", 1, LR_UC_BAD(0xFF) },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint32_t cp;
        int len = lr_utf8_decode((const uint8_t *)c[i].s, strlen(c[i].s), &cp);
        T_ASSERT(len == c[i].len && cp == c[i].cp, "case %zu: len %d cp %X", i, len, cp);
        uint8_t out[4];
        if (cp < 0x110000) T_ASSERT(lr_utf8_encode(cp, out) == len && memcmp(out, c[i].s, (size_t)len) == 0, "re-encode %zu", i);
    }
    return T_PASS;
}

static int nfc_str(const char *in, const char *want)
{
    uint8_t *out;
    size_t n;
    T_ASSERT(lr_nfc((const uint8_t *)in, strlen(in), &out, &n) == 0, "oom");
    int ok = n == strlen(want) && memcmp(out, want, n) == 0;
    if (!ok) {
        fprintf(stderr, "    nfc(");
        for (const char *p = in; *p; p++) fprintf(stderr, "%02x", (uint8_t)*p);
        fprintf(stderr, ") = ");
        for (size_t i = 0; i < n; i++) fprintf(stderr, "%02x", out[i]);
        fprintf(stderr, "\n");
    }
    free(out);
    T_ASSERT(ok, "NFC mismatch, want %s", want);
    return T_PASS;
}

static int test_nfc_basic(void)
{
    if (nfc_str("e\xCC\x81", "\xC3\xA9")) return T_FAIL;                     /* e + acute -> é */
    if (nfc_str("\xE2\x84\xAB", "\xC3\x85")) return T_FAIL;                  /* Angstrom sign -> Å */
    if (nfc_str("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x81")) return T_FAIL; /* jamo -> 각 */
    /* q + dot above (230) + dot below (220): reordered, nothing composes */
    if (nfc_str("q\xCC\x87\xCC\xA3", "q\xCC\xA3\xCC\x87")) return T_FAIL;
    /* a + dot below + dot above: a and dot below compose to U+1EA1, which has
     * no composite with dot above */
    if (nfc_str("a\xCC\xA3\xCC\x87", "\xE1\xBA\xA1\xCC\x87")) return T_FAIL;
    /* invalid bytes pass through and block composition */
    if (nfc_str("e\xFF\xCC\x81\x80", "e\xFF\xCC\x81\x80")) return T_FAIL;
    /* ASCII, CJK and precomposed text are NFC already: no work at all */
    const char *plain[] = { "Hello, world!\n\t 123", "\xE4\xBD\xA0\xE5\xA5\xBD", "caf\xC3\xA9 \xC3\xBC", "\xF0\x9F\x99\x82" };
    for (size_t i = 0; i < 4; i++)
        T_ASSERT(!lr_nfc_needed((const uint8_t *)plain[i], strlen(plain[i])), "plain %zu flagged", i);
    T_ASSERT(lr_nfc_needed((const uint8_t *)"e\xCC\x81", 3), "combining mark not flagged");
    return T_PASS;
}

/* NFC against Python's unicodedata: every character that NFC changes, and
 * random mixes of bases, marks and jamo (testdata/nfc_cases.txt). */
static int test_nfc_fixture(void)
{
    const char *path = testdata("LEECHRT_NFC_CASES", "nfc_cases.txt");
    T_ASSERT(path, "testdata/nfc_cases.txt not found (run from the repository root)");
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int n = 0, bad = 0;
    while (getline(&line, &cap, f) > 0 && bad < 5) {
        if (line[0] == '#') continue;
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        tab[1 + strcspn(tab + 1, "\n")] = 0;
        size_t il, wl, ol;
        uint8_t *in = unhex(line, strlen(line), &il), *want = unhex(tab + 1, strlen(tab + 1), &wl), *out;
        T_ASSERT(lr_nfc(in, il, &out, &ol) == 0, "oom");
        if (ol != wl || memcmp(out, want, wl) != 0) { fprintf(stderr, "    line %d differs: %s\n", n + 1, line); bad++; }
        /* Text NFC leaves alone may be reported "needed", never the reverse. */
        if (!lr_nfc_needed(in, il) && (il != wl || memcmp(in, want, il) != 0)) { fprintf(stderr, "    line %d missed\n", n + 1); bad++; }
        free(in);
        free(want);
        free(out);
        n++;
    }
    free(line);
    fclose(f);
    T_ASSERT(n > 10 && bad == 0, "%d lines, %d bad", n, bad);
    return T_PASS;
}

/* ---- pre-tokenizer patterns against the regex engine of Hugging Face
 * tokenizers (testdata/pretok_cases.txt: pattern, text, piece ends; smollm
 * and digitruns are GPT-2 after a Digits split) ---- */
static int test_pretok_fixture(void)
{
    const char *path = testdata("LEECHRT_PRETOK_CASES", "pretok_cases.txt");
    T_ASSERT(path, "testdata/pretok_cases.txt not found");
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int n = 0, bad = 0;
    while (getline(&line, &cap, f) > 0 && bad < 5) {
        if (line[0] == '#') continue;
        char *f1 = strchr(line, '\t'), *f2 = f1 ? strchr(f1 + 1, '\t') : NULL;
        if (!f2) continue;
        *f1 = *f2 = 0;
        /* Only the fields the piece splitter reads. */
        lr_tok t;
        memset(&t, 0, sizeof t);
        t.pattern = !strcmp(line, "qwen2") ? TOK_PAT_QWEN2 : !strcmp(line, "llama3") ? TOK_PAT_LLAMA3 : TOK_PAT_GPT2;
        t.digits = !strcmp(line, "smollm") ? 1 : !strcmp(line, "digitruns") ? 2 : 0;
        size_t len, lim = 0;
        uint8_t *text = unhex(f1 + 1, strlen(f1 + 1), &len);
        size_t i = 0;
        char *p = f2 + 1;
        while (i < len) {
            size_t e = tok_piece_next(&t, text, len, i, &lim);
            char *end;
            long want = strtol(p, &end, 10);
            if (end == p || (size_t)want != e) {
                fprintf(stderr, "    %s case %d: piece at %zu ends at %zu, want %ld\n", line, n + 1, i, e, end == p ? -1 : want);
                bad++;
                break;
            }
            p = end;
            i = e;
        }
        free(text);
        n++;
    }
    free(line);
    fclose(f);
    T_ASSERT(n > 10 && bad == 0, "%d lines, %d bad", n, bad);
    return T_PASS;
}

/* ---- small synthetic tokenizers ---- */

static int test_small_gpt2_merges(void)
{
    lr_tok *tok;
    T_OK(load_small(&tok, NULL, NULL, NULL, NULL, NULL));
    lr_tok_ids v = {0};
    /* "abc" -> ab+c -> abc; " a" merges Ġ a; "  " pair -> ĠĠ */
    T_OK(encode_str(tok, "abc", 1, &v));
    T_ASSERT(ids_eq(&v, IDS(257)), "abc -> %zu ids, first %d", v.n, v.n ? v.ids[0] : -1);
    T_OK(encode_str(tok, "x abc", 1, &v));
    /* " abc": a b (rank 0), then ab c (rank 1); Ġ a (rank 4) never gets a turn */
    T_ASSERT(ids_eq(&v, IDS('x', ' ', 257)), "x abc: got %zu ids", v.n);
    /* "aaaaa": a a (rank 5) merges left to right -> aa aa a, then aa aa -> aaaa */
    T_OK(encode_str(tok, "aaaaa", 1, &v));
    T_ASSERT(ids_eq(&v, IDS(262, 'a')), "aaaaa: got %zu ids", v.n);
    T_ASSERT(lr_tok_vocab_size(tok) == 263, "vocab %d", lr_tok_vocab_size(tok));
    T_ASSERT(lr_tok_find(tok, " a", 2) == 260, "find ' a'");
    T_ASSERT(lr_tok_find(tok, "zz", 2) == -1, "find zz");
    size_t n;
    const char *s = lr_tok_token(tok, 258, &n);
    T_ASSERT(s && n == 2 && memcmp(s, "  ", 2) == 0, "token 258 is two spaces");
    T_ASSERT(lr_tok_token(tok, 263, &n) == NULL && lr_tok_token(tok, -1, &n) == NULL, "out of range");
    lr_tok_ids_free(&v);
    lr_tok_free(tok);
    return T_PASS;
}

static int test_small_pair_form_merges(void)
{
    lr_tok *a, *b;
    T_OK(load_small(&a, NULL, NULL, NULL, NULL, NULL));
    T_OK(load_small(&b, NULL, "[\"a\",\"b\"],[\"ab\",\"c\"],[\"Ġ\",\"Ġ\"],[\"b\",\"c\"],[\"Ġ\",\"a\"],[\"a\",\"a\"],[\"aa\",\"aa\"]",
                    NULL, NULL, NULL));
    const char *text = "abc  aaaaaa x abcabc bc";
    lr_tok_ids va = {0}, vb = {0};
    T_OK(encode_str(a, text, 1, &va));
    T_OK(encode_str(b, text, 1, &vb));
    T_ASSERT(va.n == vb.n && memcmp(va.ids, vb.ids, va.n * 4) == 0, "string and pair merges disagree");
    lr_tok_ids_free(&va);
    lr_tok_ids_free(&vb);
    lr_tok_free(a);
    lr_tok_free(b);
    return T_PASS;
}

static int test_small_added_tokens(void)
{
    lr_tok *tok;
    T_OK(load_small(&tok, NULL, NULL,
                    "{\"id\":300,\"content\":\"<s>\",\"special\":true},"
                    "{\"id\":301,\"content\":\"<s>x\",\"special\":true},"
                    "{\"id\":302,\"content\":\"[L]\",\"special\":false,\"lstrip\":true},"
                    "{\"id\":303,\"content\":\"[R]\",\"special\":false,\"rstrip\":true}",
                    NULL, NULL));
    lr_tok_ids v = {0};
    T_OK(encode_str(tok, "<s>x<s>", 1, &v)); /* longest first */
    T_ASSERT(ids_eq(&v, IDS(301, 300)), "longest match: %zu ids", v.n);
    T_OK(encode_str(tok, "<s>", 0, &v)); /* special not allowed: plain text */
    T_ASSERT(ids_eq(&v, IDS('<', 's', '>')), "special as text: %zu ids", v.n);
    T_OK(encode_str(tok, "a  [L]b", 0, &v)); /* non-special always; lstrip eats the spaces */
    T_ASSERT(ids_eq(&v, IDS('a', 302, 'b')), "lstrip: %zu ids", v.n);
    T_OK(encode_str(tok, "a[R] \t b", 0, &v));
    T_ASSERT(ids_eq(&v, IDS('a', 303, 'b')), "rstrip: %zu ids", v.n);
    T_ASSERT(lr_tok_is_special(tok, 300) && !lr_tok_is_special(tok, 302), "special flags");
    T_ASSERT(lr_tok_find(tok, "<s>x", 4) == 301, "find added");
    char *text;
    size_t len;
    int32_t ids[] = { 300, 'h', 'i', 303 };
    T_OK(lr_tok_decode(tok, ids, 4, 0, &text, &len));
    T_ASSERT(len == 8 && memcmp(text, "<s>hi[R]", 8) == 0, "decode: %s", text);
    free(text);
    T_OK(lr_tok_decode(tok, ids, 4, 1, &text, &len));
    T_ASSERT(len == 5 && memcmp(text, "hi[R]", 5) == 0, "skip special: %s", text);
    free(text);
    int32_t bad[] = { 1, 400 };
    T_ASSERT(lr_tok_decode(tok, bad, 2, 0, &text, &len) == LR_ERANGE, "id 400 accepted");
    T_ASSERT(strstr(lr_errmsg(), "400"), "message: %s", lr_errmsg());
    lr_tok_ids_free(&v);
    lr_tok_free(tok);
    return T_PASS;
}

static int test_small_ignore_merges_and_prefix(void)
{
    lr_tok *tok;
    /* "aaaa" is a token; ignore_merges takes it whole even with the merge to
     * build it removed. */
    T_OK(load_small(&tok, ",\"ignore_merges\":true", "\"a b\"", NULL, NULL, NULL));
    lr_tok_ids v = {0};
    T_OK(encode_str(tok, "aaaa aaa", 1, &v));
    T_ASSERT(ids_eq(&v, IDS(262, ' ', 'a', 'a', 'a')), "ignore_merges: %zu ids", v.n);
    lr_tok_free(tok);
    /* add_prefix_space: "a" is encoded as " a" */
    T_OK(load_small(&tok, NULL, NULL, NULL,
                    "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":true}", NULL));
    T_OK(encode_str(tok, "a", 1, &v));
    T_ASSERT(ids_eq(&v, IDS(260)), "prefix space: %zu ids", v.n);
    lr_tok_ids_free(&v);
    lr_tok_free(tok);
    return T_PASS;
}

static int test_small_pattern_variants(void)
{
    lr_tok *tok;
    T_OK(load_small(&tok, NULL, NULL, NULL,
                    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":"
                    "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},"
                    "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
                    "\"use_regex\":false}]}",
                    NULL));
    T_ASSERT(tok->pattern == TOK_PAT_LLAMA3, "pattern %d", tok->pattern);
    lr_tok_free(tok);
    /* SmolLM: Digits (each alone) then ByteLevel's pattern: " 12ab" is " ", "1", "2", "ab" */
    T_OK(load_small(&tok, NULL, NULL, NULL,
                    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\",\"individual_digits\":true},"
                    "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}]}",
                    NULL));
    lr_tok_ids v = {0};
    T_OK(encode_str(tok, " 12ab", 1, &v));
    T_ASSERT(ids_eq(&v, IDS(' ', '1', '2', 256)), "digits: %zu ids", v.n);
    lr_tok_ids_free(&v);
    lr_tok_free(tok);
    return T_PASS;
}

static void warn_print(const char *m) { fprintf(stderr, "    warning: %s\n", m); }

static int expect_load_error(int want, const char *needle, const char *model_extra, const char *merges,
                             const char *pretok, const char *normalizer)
{
    lr_tok *tok = NULL;
    lr_set_warn_handler(NULL);
    int rc = load_small(&tok, model_extra, merges, NULL, pretok, normalizer);
    lr_set_warn_handler(warn_print);
    lr_tok_free(tok);
    T_ASSERT(rc == want, "rc %d (%s), want %d", rc, lr_errmsg(), want);
    T_ASSERT(strstr(lr_errmsg(), needle), "message '%s' lacks '%s'", lr_errmsg(), needle);
    T_ASSERT(strstr(lr_errmsg(), "small.json"), "message '%s' lacks the file name", lr_errmsg());
    return T_PASS;
}

static int test_small_load_errors(void)
{
    if (expect_load_error(LR_EUNSUPPORTED, "known patterns", NULL, NULL,
                          "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\w+\"},"
                          "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\"}]}", NULL)) return T_FAIL;
    if (expect_load_error(LR_EUNSUPPORTED, "pre_tokenizer Metaspace", NULL, NULL, "{\"type\":\"Metaspace\"}", NULL)) return T_FAIL;
    if (expect_load_error(LR_EUNSUPPORTED, "normalizer NFKC", NULL, NULL, NULL, "{\"type\":\"NFKC\"}")) return T_FAIL;
    if (expect_load_error(LR_EFORMAT, "merge 1: right part", NULL, "\"a b\",\"q zz\"", NULL, NULL)) return T_FAIL;
    if (expect_load_error(LR_EFORMAT, "merged token", NULL, "\"b a\"", NULL, NULL)) return T_FAIL;
    if (expect_load_error(LR_EFORMAT, "merges[0]", NULL, "\"ab\"", NULL, NULL)) return T_FAIL;
    if (expect_load_error(LR_EUNSUPPORTED, "with SentencePiece tokens", ",\"byte_fallback\":true", NULL, NULL, NULL)) return T_FAIL;
    lr_tok *tok;
    T_ASSERT(lr_tok_load_hf_mem("{\"model\": [}", 12, NULL, 0, "bad.json", &tok) == LR_EFORMAT, "bad JSON");
    T_ASSERT(strstr(lr_errmsg(), "bad.json") && strstr(lr_errmsg(), "line 1"), "message: %s", lr_errmsg());
    T_ASSERT(lr_tok_load_hf("/nonexistent/tokenizer.json", &tok) == LR_EIO, "missing file");
    T_ASSERT(strstr(lr_errmsg(), "/nonexistent/tokenizer.json"), "message: %s", lr_errmsg());
    return T_PASS;
}

/* Arbitrary bytes (mostly invalid UTF-8) encode and decode back exactly
 * (this tokenizer has no normalizer). */
static int test_small_arbitrary_bytes_round_trip(void)
{
    lr_tok *tok;
    T_OK(load_small(&tok, NULL, NULL, "{\"id\":300,\"content\":\"<s>\",\"special\":true}", NULL, NULL));
    lr_rng rng;
    lr_rng_seed(&rng, 11);
    uint8_t buf[300];
    lr_tok_ids v = {0};
    for (int it = 0; it < 2000; it++) {
        size_t n = (uint32_t)lr_rng_u64(&rng) % sizeof buf;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = (uint32_t)lr_rng_u64(&rng);
            buf[i] = (uint8_t)(r % 4 == 0 ? (uint32_t)(uint8_t)"ab <s>'\n\r\t"[r / 4 % 11] : r >> 8);
        }
        v.n = 0;
        T_OK(lr_tok_encode(tok, (const char *)buf, n, (int)(it & 1), &v));
        char *text;
        size_t len;
        T_OK(lr_tok_decode(tok, v.ids, v.n, 0, &text, &len));
        T_ASSERT(len == n && memcmp(text, buf, n) == 0, "round trip of %zu bytes failed (iteration %d)", n, it);
        free(text);
    }
    lr_tok_ids_free(&v);
    lr_tok_free(tok);
    return T_PASS;
}

/* Streaming decode of byte tokens against Python's
 * bytes.decode('utf-8', 'replace') (testdata/lossy_cases.txt), fed one byte
 * per token and in random groups. */
static int test_stream_lossy_fixture(void)
{
    const char *path = testdata("LEECHRT_LOSSY_CASES", "lossy_cases.txt");
    T_ASSERT(path, "testdata/lossy_cases.txt not found");
    lr_tok *tok;
    T_OK(load_small(&tok, NULL, NULL, NULL, NULL, NULL));
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int n = 0, bad = 0;
    while (getline(&line, &cap, f) > 0 && bad < 5) {
        if (line[0] == '#') continue;
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        tab[1 + strcspn(tab + 1, "\n")] = 0;
        size_t il, wl, ol;
        uint8_t *in = unhex(line, strlen(line), &il), *want = unhex(tab + 1, strlen(tab + 1), &wl);
        int32_t *ids = malloc((il + 1) * sizeof *ids);
        for (size_t i = 0; i < il; i++) ids[i] = lr_tok_find(tok, (const char *)in + i, 1);
        char *out;
        T_OK(stream_all(tok, ids, il, &out, &ol));
        if (ol != wl || memcmp(out, want, wl) != 0) { fprintf(stderr, "    lossy line %d: %s\n", n + 1, line); bad++; }
        free(out);
        free(ids);
        free(in);
        free(want);
        n++;
    }
    free(line);
    fclose(f);
    lr_tok_free(tok);
    T_ASSERT(n > 10 && bad == 0, "%d lines, %d bad", n, bad);
    return T_PASS;
}

/* ---- the real Qwen3 tokenizer ---- */

static int test_qwen3_fixture(void)
{
    lr_tok *tok = qwen3();
    T_SKIP_IF(!tok, "Qwen3 tokenizer not found (set LEECHRT_QWEN3_TOKENIZER)");
    const char *path = testdata("LEECHRT_TOK_CASES", "qwen3_cases.txt");
    T_ASSERT(path, "testdata/qwen3_cases.txt not found (run from the repository root)");
    return check_cases(tok, path);
}

/* small_json with its post-processor (and a tokenizer_config.json) given:
 * the BOS rule of add_bos / bos. */
static int bos_rule(const char *post, const char *config, int32_t *bos)
{
    char *js = small_json(NULL, NULL, "{\"id\":300,\"content\":\"<s>\",\"special\":true},"
                                      "{\"id\":301,\"content\":\"</s>\",\"special\":true}",
                          NULL, NULL);
    const char *at = strstr(js, "\"post_processor\":null");
    size_t cap = strlen(js) + strlen(post) + 1;
    char *full = malloc(cap);
    snprintf(full, cap, "%.*s\"post_processor\":%s%s", (int)(at - js), js, post, at + 21);
    free(js);
    lr_tok *t;
    int rc = lr_tok_load_hf_mem(full, strlen(full), config, config ? strlen(config) : 0, "bos.json", &t);
    free(full);
    if (rc) return -1;
    int add = lr_tok_add_bos(t);
    *bos = lr_tok_bos(t);
    lr_tok_free(t);
    return add;
}

/* tokenizer.json's own BOS rule, a TemplateProcessing post-processor (alone,
 * or in a Sequence as Llama 3's), then tokenizer_config.json's add_bos_token
 * over it either way, as transformers reads the pair. */
static int test_bos_from_post_processor(void)
{
#define TP(first, specials)                                                                                  \
    "{\"type\":\"TemplateProcessing\",\"single\":[" first "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}]," \
    "\"pair\":[],\"special_tokens\":{" specials "}}"
#define S_TOK(t) "{\"SpecialToken\":{\"id\":\"" t "\",\"type_id\":0}},"
    int32_t bos = 0;
    int add = bos_rule("null", NULL, &bos);
    T_ASSERT(add == 0 && bos == -1, "no post-processor: add %d bos %d", add, bos);
    add = bos_rule(TP(S_TOK("<s>"), "\"<s>\":{\"id\":\"<s>\",\"ids\":[300],\"tokens\":[\"<s>\"]}"), NULL, &bos);
    T_ASSERT(add == 1 && bos == 300, "template with ids: add %d bos %d", add, bos);
    /* the ids win over the text; without them the text is looked up */
    add = bos_rule(TP(S_TOK("<s>"), "\"<s>\":{\"id\":\"<s>\",\"ids\":[301],\"tokens\":[\"<s>\"]}"), NULL, &bos);
    T_ASSERT(add == 1 && bos == 301, "ids [301]: add %d bos %d", add, bos);
    add = bos_rule(TP(S_TOK("</s>"), ""), NULL, &bos);
    T_ASSERT(add == 1 && bos == 301, "by text: add %d bos %d", add, bos);
    add = bos_rule("{\"type\":\"Sequence\",\"processors\":[{\"type\":\"ByteLevel\"}," TP(S_TOK("<s>"), "") "]}", NULL,
                   &bos);
    T_ASSERT(add == 1 && bos == 300, "inside a Sequence: add %d bos %d", add, bos);
    /* a template whose text comes first adds no BOS (a suffix is not added) */
    add = bos_rule("{\"type\":\"TemplateProcessing\",\"single\":[{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}," S_TOK("</s>")
                   "{\"Sequence\":{\"id\":\"A\",\"type_id\":9}}]}", NULL, &bos);
    T_ASSERT(add == 0 && bos == -1, "suffix only: add %d bos %d", add, bos);
    add = bos_rule(TP(S_TOK("<nope>"), ""), NULL, &bos);
    T_ASSERT(add == 0 && bos == -1, "a token that is not one: add %d bos %d", add, bos);
    add = bos_rule("{\"type\":\"ByteLevel\"}", NULL, &bos);
    T_ASSERT(add == 0, "ByteLevel: add %d", add);
    /* tokenizer_config.json over it: false removes, true adds, absent keeps */
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"add_bos_token\":false}", &bos);
    T_ASSERT(add == 0, "add_bos_token false: add %d", add);
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"model_max_length\":8}", &bos);
    T_ASSERT(add == 1 && bos == 300, "config without the key: add %d bos %d", add, bos);
    add = bos_rule("null", "{\"add_bos_token\":true,\"bos_token\":{\"content\":\"</s>\"}}", &bos);
    T_ASSERT(add == 1 && bos == 301, "add_bos_token true: add %d bos %d", add, bos);
    add = bos_rule("null", "{\"add_bos_token\":true}", &bos);
    T_ASSERT(add == 0 && bos == -1, "add_bos_token true without a BOS: add %d bos %d", add, bos);
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"bos_token\":null}", &bos);
    T_ASSERT(add == 1 && bos == 300, "bos_token null keeps the template's: add %d bos %d", add, bos);
    /* bos_token alone does not rebuild the template (transformers adds the template's token) */
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"bos_token\":\"</s>\"}", &bos);
    T_ASSERT(add == 1 && bos == 300, "bos_token without add_bos_token: add %d bos %d", add, bos);
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"bos_token\":\"<bos>\"}", &bos);
    T_ASSERT(add == 1 && bos == 300, "a bos_token that is no token, without add_bos_token: add %d bos %d", add, bos);
    /* with add_bos_token, bos_token names what is added */
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"bos_token\":\"</s>\",\"add_bos_token\":true}", &bos);
    T_ASSERT(add == 1 && bos == 301, "bos_token with add_bos_token: add %d bos %d", add, bos);
    /* a number as Python reads it; a string is ignored */
    add = bos_rule("null", "{\"bos_token\":\"<s>\",\"add_bos_token\":1}", &bos);
    T_ASSERT(add == 1 && bos == 300, "add_bos_token 1: add %d bos %d", add, bos);
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"add_bos_token\":0}", &bos);
    T_ASSERT(add == 0, "add_bos_token 0: add %d", add);
    add = bos_rule(TP(S_TOK("<s>"), ""), "{\"add_bos_token\":\"no\"}", &bos);
    T_ASSERT(add == 1 && bos == 300, "add_bos_token \"no\" ignored: add %d bos %d", add, bos);
    /* transformers' Llama and Gemma classes, slow or fast, default add_bos_token to true
       and rebuild the template from it and bos_token (their __init__ calls
       update_post_processor): the key absent adds bos_token, null adds none */
    static const char *const cls[] = { "LlamaTokenizer", "LlamaTokenizerFast", "GemmaTokenizer", "GemmaTokenizerFast",
                                       "CodeLlamaTokenizer", "CodeLlamaTokenizerFast" };
    char cfg[256];
    for (int c = 0; c < 4; c++) {
        snprintf(cfg, sizeof cfg, "{\"tokenizer_class\":\"%s\",\"bos_token\":\"<s>\"}", cls[c]);
        add = bos_rule("null", cfg, &bos);
        T_ASSERT(add == 1 && bos == 300, "%s without add_bos_token: add %d bos %d", cls[c], add, bos);
        snprintf(cfg, sizeof cfg, "{\"tokenizer_class\":\"%s\",\"bos_token\":{\"content\":\"</s>\"}}", cls[c]);
        add = bos_rule(TP(S_TOK("<s>"), ""), cfg, &bos);
        T_ASSERT(add == 1 && bos == 301, "%s without add_bos_token over a template: add %d bos %d", cls[c], add, bos);
        snprintf(cfg, sizeof cfg, "{\"tokenizer_class\":\"%s\",\"bos_token\":\"<s>\",\"add_bos_token\":false}", cls[c]);
        add = bos_rule(TP(S_TOK("<s>"), ""), cfg, &bos);
        T_ASSERT(add == 0, "%s with add_bos_token false: add %d", cls[c], add);
        snprintf(cfg, sizeof cfg, "{\"tokenizer_class\":\"%s\",\"bos_token\":\"<s>\",\"add_bos_token\":null}", cls[c]);
        add = bos_rule(TP(S_TOK("<s>"), ""), cfg, &bos);
        T_ASSERT(add == 0, "%s with add_bos_token null (None): add %d", cls[c], add);
        snprintf(cfg, sizeof cfg, "{\"tokenizer_class\":\"%s\",\"bos_token\":\"<s>\",\"add_bos_token\":\"no\"}", cls[c]);
        add = bos_rule("null", cfg, &bos);
        T_ASSERT(add == 1 && bos == 300, "%s with add_bos_token \"no\" ignored: add %d bos %d", cls[c], add, bos);
        /* no bos_token: the template's stays, and without one no BOS is named */
        snprintf(cfg, sizeof cfg, "{\"tokenizer_class\":\"%s\"}", cls[c]);
        add = bos_rule(TP(S_TOK("</s>"), ""), cfg, &bos);
        T_ASSERT(add == 1 && bos == 301, "%s without bos_token over a template: add %d bos %d", cls[c], add, bos);
        add = bos_rule("null", cfg, &bos);
        T_ASSERT(add == 0 && bos == -1, "%s without bos_token or template: add %d bos %d", cls[c], add, bos);
    }
    /* other classes (and none) keep the rule above: no key, the template's */
    static const char *const other[] = { "{\"bos_token\":\"<s>\"}", "{\"tokenizer_class\":\"PreTrainedTokenizerFast\",\"bos_token\":\"<s>\"}",
                                         "{\"tokenizer_class\":\"Qwen2TokenizerFast\",\"bos_token\":\"<s>\"}",
                                         "{\"tokenizer_class\":\"llamatokenizerfast\",\"bos_token\":\"<s>\"}",
                                         "{\"tokenizer_class\":[\"LlamaTokenizerFast\"],\"bos_token\":\"<s>\"}" };
    for (size_t c = 0; c < sizeof other / sizeof *other; c++) {
        add = bos_rule("null", other[c], &bos);
        T_ASSERT(add == 0, "%s: add %d", other[c], add);
        add = bos_rule(TP(S_TOK("</s>"), ""), other[c], &bos);
        T_ASSERT(add == 1 && bos == 301, "%s over a template: add %d bos %d", other[c], add, bos);
    }
    /* a template token standing for several ids adds none (one BOS id cannot say it) */
    add = bos_rule(TP(S_TOK("<s>"), "\"<s>\":{\"id\":\"<s>\",\"ids\":[301,300],\"tokens\":[\"</s>\",\"<s>\"]}"), NULL, &bos);
    T_ASSERT(add == 0, "a two-id template token: add %d bos %d", add, bos);
#undef TP
#undef S_TOK
    return T_PASS;
}

/* A gzip'd tokenizer.json loads; cut short by a few bytes (its CRC and
 * length trailer gone) it is refused as truncated, where it once loaded. */
static int test_gzip_truncated_refused(void)
{
    char *js = small_json(NULL, NULL, NULL, NULL, NULL);
    char dir[] = "/tmp/lr-tokgz-XXXXXX", whole[64], cut[64];
    T_ASSERT(mkdtemp(dir), "mkdtemp");
    snprintf(whole, sizeof whole, "%s/t.json.gz", dir);
    snprintf(cut, sizeof cut, "%s/cut.json.gz", dir);
    gzFile g = gzopen(whole, "wb");
    T_ASSERT(g && gzwrite(g, js, (unsigned)strlen(js)) == (int)strlen(js) && gzclose(g) == Z_OK, "gzip write");
    free(js);
    FILE *f = fopen(whole, "rb");
    T_ASSERT(f, "read back");
    static unsigned char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(cut, "wb");
    T_ASSERT(f && n > 8, "cut file");
    fwrite(buf, 1, n - 6, f), fclose(f);
    lr_tok *t;
    T_OK(lr_tok_load_hf(whole, &t));
    lr_tok_free(t);
    t = NULL;
    const int rc = lr_tok_load_hf(cut, &t);
    T_ASSERT(rc == LR_EFORMAT && !t && strstr(lr_errmsg(), "truncated") && strstr(lr_errmsg(), "cut.json.gz"), "cut: %d %s",
             rc, lr_errmsg());
    unlink(whole), unlink(cut), rmdir(dir);
    return T_PASS;
}

static int test_qwen3_specials(void)
{
    lr_tok *tok = qwen3();
    T_SKIP_IF(!tok, "Qwen3 tokenizer not found");
    T_ASSERT(lr_tok_vocab_size(tok) == 151669, "vocab %d", lr_tok_vocab_size(tok));
    T_ASSERT(lr_tok_find(tok, "<|im_start|>", 12) == 151644, "im_start");
    T_ASSERT(lr_tok_find(tok, "<|im_end|>", 10) == 151645, "im_end");
    T_ASSERT(lr_tok_find(tok, "<|endoftext|>", 13) == 151643, "endoftext");
    T_ASSERT(lr_tok_find(tok, " hello", 6) == 23811, "' hello' is %d", lr_tok_find(tok, " hello", 6));
    /* from tokenizer_config.json */
    T_ASSERT(lr_tok_eos(tok) == 151645 && lr_tok_pad(tok) == 151643 && lr_tok_bos(tok) == -1 && !lr_tok_add_bos(tok),
             "eos %d pad %d bos %d", lr_tok_eos(tok), lr_tok_pad(tok), lr_tok_bos(tok));
    T_ASSERT(lr_tok_is_special(tok, 151644) && !lr_tok_is_special(tok, 151667), "<think> is not special");
    return T_PASS;
}

/* Multi-byte characters split across tokens come out of the stream decoder
 * only once complete. */
static int test_qwen3_stream_split_chars(void)
{
    lr_tok *tok = qwen3();
    T_SKIP_IF(!tok, "Qwen3 tokenizer not found");
    /* 你 is E4 BD A0: three single-byte tokens. */
    const uint8_t bytes[] = { 0xE4, 0xBD, 0xA0, 'x', 0xF0, 0x9F, 0x99, 0x82 };
    lr_tok_stream s;
    lr_tok_stream_init(&s, tok, 0);
    size_t want_len[] = { 0, 0, 3, 1, 0, 0, 0, 4 };
    for (size_t i = 0; i < sizeof bytes; i++) {
        int32_t id = lr_tok_find(tok, (const char *)bytes + i, 1);
        const char *t;
        size_t l;
        T_ASSERT(id >= 0, "byte %02x has no token", bytes[i]);
        T_OK(lr_tok_stream_push(&s, id, &t, &l));
        T_ASSERT(l == want_len[i], "after byte %zu: %zu bytes out", i, l);
    }
    lr_tok_stream_free(&s);
    return T_PASS;
}

/* Encoding arbitrary bytes round-trips (after NFC of any valid parts). */
static int test_qwen3_arbitrary_bytes(void)
{
    lr_tok *tok = qwen3();
    T_SKIP_IF(!tok, "Qwen3 tokenizer not found");
    lr_rng rng;
    lr_rng_seed(&rng, 5);
    uint8_t buf[200];
    lr_tok_ids v = {0};
    for (int it = 0; it < 3000; it++) {
        size_t n = (uint32_t)lr_rng_u64(&rng) % sizeof buf;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = (uint32_t)lr_rng_u64(&rng);
            buf[i] = (uint8_t)(r % 3 == 0 ? (uint32_t)(uint8_t)"a1 <|im_end|>'\n\xcc\x81\xe4"[r / 3 % 18] : r >> 8);
        }
        v.n = 0;
        T_OK(lr_tok_encode(tok, (const char *)buf, n, (int)(it & 1), &v));
        char *text;
        size_t len;
        T_OK(lr_tok_decode(tok, v.ids, v.n, 0, &text, &len));
        /* Input that NFC leaves alone must come back byte for byte. */
        if (!lr_nfc_needed(buf, n)) T_ASSERT(len == n && memcmp(text, buf, n) == 0, "round trip failed (%d)", it);
        free(text);
    }
    lr_tok_ids_free(&v);
    return T_PASS;
}

/* The same tokenizer loaded from GGUF metadata (built here from the JSON)
 * encodes every fixture case the same. */
static int test_qwen3_from_gguf(void)
{
    const char *p = qwen3_path();
    T_SKIP_IF(!p, "Qwen3 tokenizer not found");
    gzFile gz = gzopen(p, "rb");
    T_ASSERT(gz, "gzopen");
    size_t cap = 1 << 24, len = 0;
    char *js = malloc(cap);
    for (int r; (r = gzread(gz, js + len, (unsigned)(cap - len))) > 0;) {
        len += (size_t)r;
        if (len == cap) js = realloc(js, cap *= 2);
    }
    gzclose(gz);
    json_error_t err;
    json_t *root = json_loadb(js, len, 0, &err);
    free(js);
    T_ASSERT(root, "json: %s", err.text);
    json_t *vocab = json_object_get(json_object_get(root, "model"), "vocab");
    json_t *merges = json_object_get(json_object_get(root, "model"), "merges");
    json_t *added = json_object_get(root, "added_tokens");
    size_t nv = json_object_size(vocab), na = json_array_size(added), n = nv + na;
    const char **text = calloc(n, sizeof *text);
    int32_t *type = calloc(n, sizeof *type);
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val) { text[json_integer_value(val)] = key; type[json_integer_value(val)] = 1; }
    size_t i;
    json_array_foreach(added, i, val) {
        json_int_t id = json_integer_value(json_object_get(val, "id"));
        T_ASSERT(id >= 0 && (size_t)id < n, "added id");
        text[id] = json_string_value(json_object_get(val, "content"));
        type[id] = json_is_true(json_object_get(val, "special")) ? 3 : 4;
    }
    gb_buf b = {0};
    gb_header(&b, 3);
    gb_kv_str(&b, "general.architecture", "qwen3");
    gb_kv_str(&b, "tokenizer.ggml.model", "gpt2");
    gb_kv_str(&b, "tokenizer.ggml.pre", "qwen2");
    gb_kv_arr(&b, "tokenizer.ggml.tokens", LR_GGUF_STR, n);
    for (i = 0; i < n; i++) gb_str(&b, text[i] ? text[i] : "");
    gb_kv_arr(&b, "tokenizer.ggml.token_type", LR_GGUF_I32, n);
    for (i = 0; i < n; i++) gb_u32(&b, (uint32_t)type[i]);
    gb_kv_arr(&b, "tokenizer.ggml.merges", LR_GGUF_STR, json_array_size(merges));
    json_array_foreach(merges, i, val) {
        char m[512];
        snprintf(m, sizeof m, "%s %s", json_string_value(json_array_get(val, 0)), json_string_value(json_array_get(val, 1)));
        gb_str(&b, m);
    }
    gb_kv_u32(&b, "tokenizer.ggml.eos_token_id", 151645);
    gb_kv_u32(&b, "tokenizer.ggml.padding_token_id", 151643);
    gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", 151643);
    gb_kv_bool(&b, "tokenizer.ggml.add_bos_token", 0);
    gb_finish(&b);
    json_decref(root);
    free(text);
    free(type);
    T_ASSERT(!b.failed, "gguf build");
    lr_gguf *g;
    T_OK(lr_gguf_parse(b.p, b.n, "qwen3-test.gguf", &g));
    lr_tok *tok;
    T_OK(lr_tok_from_gguf(g, &tok));
    lr_gguf_close(g);
    free(b.p);
    T_ASSERT(lr_tok_vocab_size(tok) == 151669, "vocab %d", lr_tok_vocab_size(tok));
    T_ASSERT(lr_tok_eos(tok) == 151645 && lr_tok_bos(tok) == 151643 && lr_tok_pad(tok) == 151643, "special ids");
    T_ASSERT(lr_tok_is_special(tok, 151644) && !lr_tok_is_special(tok, 151667), "token types");
    int rc = check_cases(tok, testdata("LEECHRT_TOK_CASES", "qwen3_cases.txt"));
    lr_tok_free(tok);
    return rc;
}

static int test_gguf_tokenizer_errors(void)
{
    static const struct { const char *model, *pre, *needle; } c[] = {
        { "t5", "default", "only \"gpt2\"" },
        { "gpt2", "deepseek-llm", "tokenizer.ggml.pre \"deepseek-llm\"" },
        { "gpt2", NULL, "tokenizer.ggml.pre is missing" },
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        gb_buf b = {0};
        gb_header(&b, 3);
        gb_kv_str(&b, "tokenizer.ggml.model", c[k].model);
        if (c[k].pre) gb_kv_str(&b, "tokenizer.ggml.pre", c[k].pre);
        gb_kv_arr(&b, "tokenizer.ggml.tokens", LR_GGUF_STR, 2);
        gb_str(&b, "a");
        gb_str(&b, "b");
        gb_finish(&b);
        lr_gguf *g;
        T_OK(lr_gguf_parse(b.p, b.n, "tiny.gguf", &g));
        lr_tok *tok;
        int rc = lr_tok_from_gguf(g, &tok);
        T_ASSERT(rc == LR_EUNSUPPORTED, "case %zu: rc %d", k, rc);
        T_ASSERT(strstr(lr_errmsg(), c[k].needle) && strstr(lr_errmsg(), "tiny.gguf"), "message: %s", lr_errmsg());
        lr_gguf_close(g);
        free(b.p);
    }
    /* a merge naming a token that does not exist */
    gb_buf b = {0};
    gb_header(&b, 3);
    gb_kv_str(&b, "tokenizer.ggml.model", "gpt2");
    gb_kv_str(&b, "tokenizer.ggml.pre", "llama-bpe");
    gb_kv_arr(&b, "tokenizer.ggml.tokens", LR_GGUF_STR, 3);
    gb_str(&b, "a");
    gb_str(&b, "b");
    gb_str(&b, "ab");
    gb_kv_arr(&b, "tokenizer.ggml.merges", LR_GGUF_STR, 2);
    gb_str(&b, "a b");
    gb_str(&b, "a c");
    gb_finish(&b);
    lr_gguf *g;
    T_OK(lr_gguf_parse(b.p, b.n, "tiny.gguf", &g));
    lr_tok *tok;
    T_ASSERT(lr_tok_from_gguf(g, &tok) == LR_EFORMAT && strstr(lr_errmsg(), "merge 1"), "message: %s", lr_errmsg());
    lr_gguf_close(g);
    free(b.p);
    return T_PASS;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 MB of mixed text encodes well under a second (reported, and checked
 * against a loose bound that only a pathological, e.g. quadratic, slowdown
 * breaks, so a loaded machine does not fail it). */
static int test_qwen3_speed_1mb(void)
{
    lr_tok *tok = qwen3();
    T_SKIP_IF(!tok, "Qwen3 tokenizer not found");
    static const char *const words[] = { "the ", "tokenizer ", "splits ", "text, ", "into ", "pieces. ", "Qwen3 ",
                                         "2024 ", "naïve ", "東京は ", "über ", "don't ", "x_y = 42;\n", "    ",
                                         "🙂 ", "Ελλάδα ", "москва ", "return 0;\n}\n", "\n\n", "élève " };
    size_t cap = 1 << 20, n = 0;
    char *text = malloc(cap + 64);
    lr_rng rng;
    lr_rng_seed(&rng, 3);
    while (n < cap) {
        const char *w = words[(uint32_t)lr_rng_u64(&rng) % (sizeof words / sizeof words[0])];
        size_t l = strlen(w);
        memcpy(text + n, w, l);
        n += l;
    }
    lr_tok_ids v = {0};
    double t0 = now();
    T_OK(lr_tok_encode(tok, text, n, 1, &v));
    double dt = now() - t0;
    printf("    encode %zu bytes -> %zu tokens: %.3f s (%.1f MB/s)\n", n, v.n, dt, n / dt / 1e6);
    char *back;
    size_t len;
    T_OK(lr_tok_decode(tok, v.ids, v.n, 0, &back, &len));
    T_ASSERT(len == n && memcmp(back, text, n) == 0, "1 MB round trip");
    free(back);
    /* A megabyte with no split point at all (one huge word). */
    memset(text, 'a', n);
    v.n = 0;
    t0 = now();
    T_OK(lr_tok_encode(tok, text, n, 1, &v));
    double dt2 = now() - t0;
    printf("    encode %zu bytes of 'a' -> %zu tokens: %.3f s\n", n, v.n, dt2);
    free(text);
    lr_tok_ids_free(&v);
    T_ASSERT(dt < 10 && dt2 < 10, "too slow: %.2f s, %.2f s", dt, dt2);
    return T_PASS;
}

T_MAIN(T_CASE(test_ascii_classes_match_tables), T_CASE(test_utf8_decode), T_CASE(test_nfc_basic),
       T_CASE(test_nfc_fixture), T_CASE(test_pretok_fixture), T_CASE(test_small_gpt2_merges),
       T_CASE(test_small_pair_form_merges), T_CASE(test_small_added_tokens),
       T_CASE(test_small_ignore_merges_and_prefix), T_CASE(test_small_pattern_variants),
       T_CASE(test_small_load_errors), T_CASE(test_bos_from_post_processor), T_CASE(test_gzip_truncated_refused), T_CASE(test_small_arbitrary_bytes_round_trip),
       T_CASE(test_stream_lossy_fixture), T_CASE(test_qwen3_fixture), T_CASE(test_qwen3_specials),
       T_CASE(test_qwen3_stream_split_chars), T_CASE(test_qwen3_arbitrary_bytes), T_CASE(test_qwen3_from_gguf),
       T_CASE(test_gguf_tokenizer_errors), T_CASE(test_qwen3_speed_1mb))
