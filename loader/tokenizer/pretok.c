/* Pre-tokenizer split patterns, written out as matchers instead of run by a
 * regex engine. Each function returns the end of the match a backtracking
 * engine (leftmost alternative first, greedy quantifiers) finds at position
 * i; every position matches some alternative, so the pieces tile the text.
 *
 * Qwen2/Qwen3 (Llama-3 differs only in \p{N}{1,3} for \p{N}):
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}
 *   | ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * GPT-2:
 *   's|'t|'re|'ve|'m|'ll|'d | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+
 *   | \s+(?!\S) | \s+
 * \s is White_Space, \p{L} and \p{N} the general categories (unicode.h). An
 * invalid UTF-8 byte counts as one character of neither class.
 *
 * A Digits pre-tokenizer in front (SmolLM) first isolates numbers (\p{N},
 * Rust's char::is_numeric), one character or one run each; the pattern then
 * runs on each piece in between as if it were the whole text. */
#include <string.h>

#include "loader/tokenizer/tok_internal.h"
#include "loader/tokenizer/unicode.h"

static const char QWEN2_RE[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char LLAMA3_RE[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char GPT2_RE[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

int tok_pattern_from_regex(const char *re)
{
    if (strcmp(re, QWEN2_RE) == 0) return TOK_PAT_QWEN2;
    if (strcmp(re, LLAMA3_RE) == 0) return TOK_PAT_LLAMA3;
    if (strcmp(re, GPT2_RE) == 0) return TOK_PAT_GPT2;
    return -1;
}

int tok_pattern_from_gguf_pre(const char *pre, int *ignore_merges, int *digits)
{
    *ignore_merges = *digits = 0;
    if (strcmp(pre, "qwen2") == 0) return TOK_PAT_QWEN2;
    /* llama.cpp's names for the Llama-3 pattern; its llama-bpe vocabularies
     * also skip merging words that are whole tokens. */
    if (strcmp(pre, "llama-bpe") == 0 || strcmp(pre, "llama3") == 0) {
        *ignore_merges = 1;
        return TOK_PAT_LLAMA3;
    }
    if (strcmp(pre, "gpt-2") == 0 || strcmp(pre, "gpt2") == 0) return TOK_PAT_GPT2;
    /* SmolLM: every digit alone, then the GPT-2 pattern. */
    if (strcmp(pre, "smollm") == 0) {
        *digits = 1;
        return TOK_PAT_GPT2;
    }
    return -1;
}

/* One decoded character: class and length. */
typedef struct {
    uint32_t cp;
    int cls, len;
} ch;

static ch at(const uint8_t *s, size_t n, size_t i)
{
    ch c;
    if (i >= n) { c.cp = UINT32_MAX; c.cls = -1; c.len = 0; return c; }
    if (s[i] < 0x80) { c.cp = s[i]; c.cls = lr_uc_ascii[s[i]]; c.len = 1; return c; }
    c.len = lr_utf8_decode(s + i, n - i, &c.cp);
    c.cls = lr_uc_class(c.cp);
    return c;
}

/* End of the run of characters of class cls starting at i. */
static size_t run(const uint8_t *s, size_t n, size_t i, int cls)
{
    for (;;) {
        ch c = at(s, n, i);
        if (c.cls != cls) return i;
        i += (size_t)c.len;
    }
}

static int lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? (int)c + 32 : (int)c; }

/* Length of the contraction after an apostrophe at s[i] ('s 't 're 've 'm
 * 'll 'd), or 0. Case-insensitive for ASCII only: Hugging Face's engine does
 * not fold U+017F to s here. */
static size_t contraction(const uint8_t *s, size_t n, size_t i, int fold)
{
    if (i + 1 >= n) return 0;
    int a = fold ? lower(s[i + 1]) : s[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (i + 2 >= n) return 0;
    int b = fold ? lower(s[i + 2]) : s[i + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

/* The whitespace alternatives shared by both patterns, at a whitespace
 * character: [\s*[\r\n]+ when newlines,] \s+(?!\S), \s+. */
static size_t whitespace(const uint8_t *s, size_t n, size_t i, int newlines)
{
    size_t j = i, last_start = i, after_nl = 0;
    for (;;) {
        ch c = at(s, n, j);
        if (c.cls != LR_UC_WS) break;
        last_start = j;
        j += (size_t)c.len;
        if (c.cp == '\r' || c.cp == '\n') after_nl = j;
    }
    /* \s*[\r\n]+ backtracks to end just after the run's last newline. */
    if (newlines && after_nl) return after_nl;
    /* \s+(?!\S): the whole run at the end of the text, else all but its last
     * character; a single whitespace before a non-space falls to \s+. */
    if (j >= n || last_start == i) return j;
    return last_start;
}

static size_t next_qwen(const uint8_t *s, size_t n, size_t i, int max_digits)
{
    ch c0 = at(s, n, i);
    if (c0.cp == '\'') {
        size_t k = contraction(s, n, i, 1);
        if (k) return i + k;
    }
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (c0.cls == LR_UC_L) return run(s, n, i, LR_UC_L);
    size_t i1 = i + (size_t)c0.len;
    ch c1 = at(s, n, i1);
    if (c0.cls != LR_UC_N && c0.cp != '\r' && c0.cp != '\n' && c1.cls == LR_UC_L)
        return run(s, n, i1, LR_UC_L);
    /* \p{N} or \p{N}{1,3} */
    if (c0.cls == LR_UC_N) {
        size_t j = i1;
        for (int k = 1; k < max_digits; k++) {
            ch c = at(s, n, j);
            if (c.cls != LR_UC_N) break;
            j += (size_t)c.len;
        }
        return j;
    }
    /* ' ?[^\s\p{L}\p{N}]+[\r\n]*' */
    size_t p = c0.cls == LR_UC_OTHER ? i : c0.cp == ' ' && c1.cls == LR_UC_OTHER ? i1 : SIZE_MAX;
    if (p != SIZE_MAX) {
        size_t j = run(s, n, p, LR_UC_OTHER);
        while (j < n && (s[j] == '\r' || s[j] == '\n')) j++;
        return j;
    }
    return whitespace(s, n, i, 1);
}

static size_t next_gpt2(const uint8_t *s, size_t n, size_t i)
{
    ch c0 = at(s, n, i);
    if (c0.cp == '\'') {
        size_t k = contraction(s, n, i, 0);
        if (k) return i + k;
    }
    size_t p = i;
    if (c0.cp == ' ') {
        ch c1 = at(s, n, i + 1);
        if (c1.cls == LR_UC_L || c1.cls == LR_UC_N || c1.cls == LR_UC_OTHER) {
            p = i + 1;
            c0 = c1;
        }
    }
    /* ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+' */
    if (c0.cls != LR_UC_WS) return run(s, n, p, c0.cls);
    return whitespace(s, n, i, 0);
}

size_t tok_pretok_next(int pattern, const uint8_t *s, size_t n, size_t i)
{
    switch (pattern) {
    case TOK_PAT_LLAMA3: return next_qwen(s, n, i, 3);
    case TOK_PAT_GPT2: return next_gpt2(s, n, i);
    default: return next_qwen(s, n, i, 1);
    }
}

size_t tok_piece_next(const lr_tok *t, const uint8_t *s, size_t n, size_t i, size_t *lim)
{
    if (!t->digits) return tok_pretok_next(t->pattern, s, n, i);
    if (i >= *lim) {
        ch c = at(s, n, i);
        if (c.cls == LR_UC_N) return t->digits == 1 ? i + (size_t)c.len : run(s, n, i, LR_UC_N);
        size_t j = i;
        for (ch d; j < n && (d = at(s, n, j)).cls != LR_UC_N;) j += (size_t)d.len;
        *lim = j;
    }
    return tok_pretok_next(t->pattern, s, *lim, i);
}
