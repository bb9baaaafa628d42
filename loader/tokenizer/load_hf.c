/* Loading a Hugging Face tokenizer.json (optionally gzip-compressed) plus the
 * special-token names of a sibling tokenizer_config.json. Only what a
 * byte-level BPE tokenizer uses is accepted; anything else is refused with a
 * message naming the field, so a tokenizer is never silently half-understood. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/tokenizer/tok_internal.h"
#include "util/err.h"
#include "util/gunzip.h"
#include "util/log.h"
#include "util/read_file.h"

static size_t g_json_max; /* 0: LR_TOK_JSON_MAX */

size_t lr_tok_json_max(void) { return g_json_max ? g_json_max : LR_TOK_JSON_MAX; }
void lr_tok_json_set_max(size_t max) { g_json_max = max < LR_TOK_JSON_MAX ? max : 0; }

/* Reads a whole file (opened once: a FIFO's one stream), inflating it when
 * it is gzip by its magic; the file and its text at most the tokenizer bound.
 * lr_gunzip reads gzip as zlib's gzread does (every member). */
static int read_file(const char *path, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    const lr_read_opts o = { .max = lr_tok_json_max() };
    void *raw;
    size_t n;
    int rc = lr_read_file_opts(path, &o, &raw, &n);
    /* a folder or a file past the bound: not a tokenizer (LR_EFORMAT, as ever) */
    if (rc == LR_EINVAL) return lr_wrap(LR_EFORMAT, "tokenizer");
    if (rc) return rc;
    const uint8_t *b = raw;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        rc = lr_gunzip(raw, n, lr_tok_json_max(), path, out, out_len);
        free(raw);
        return rc;
    }
    *out = raw;
    *out_len = n;
    return LR_OK;
}

static int is_true(json_t *v) { return v && json_is_true(v); }

static const char *type_of(json_t *obj)
{
    json_t *ty = json_is_object(obj) ? json_object_get(obj, "type") : NULL;
    return json_is_string(ty) ? json_string_value(ty) : NULL;
}

#define METASPACE TOK_METASPACE

/* Decodes a token string (ByteLevel's alphabet, or SentencePiece's
 * metaspace) into a growing scratch buffer. */
static int bl(const lr_tok *t, const char *str, size_t n, uint8_t **buf, size_t *cap, size_t *len)
{
    if (n + 1 > *cap) {
        size_t c = n + 64;
        uint8_t *b = realloc(*buf, c);
        if (!b) return LR_FAIL(LR_ENOMEM, "%s: %zu bytes", t->name, c);
        *buf = b;
        *cap = c;
    }
    *len = t->spm ? tok_spm_decode(str, n, *buf) : tok_bytelevel_decode(str, n, *buf);
    return LR_OK;
}

static int load_vocab(lr_tok *t, json_t *model)
{
    json_t *vocab = json_object_get(model, "vocab");
    if (!json_is_object(vocab)) return LR_FAIL(LR_EFORMAT, "%s: model.vocab is missing or not an object", t->name);
    const char *key;
    json_t *v;
    uint8_t *buf = NULL;
    size_t cap = 0, len;
    json_object_foreach(vocab, key, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX) {
            free(buf);
            return LR_FAIL(LR_EFORMAT, "%s: model.vocab[\"%.40s\"] is not a valid id", t->name, key);
        }
        int fb = t->byte_fallback ? tok_spm_fallback_byte(key, strlen(key)) : -1, rc;
        if (fb >= 0) {
            uint8_t b = (uint8_t)fb;
            rc = tok_set(t, (int32_t)json_integer_value(v), &b, 1, TOK_BYTEFB);
        } else {
            rc = bl(t, key, strlen(key), &buf, &cap, &len);
            if (rc == LR_OK) rc = tok_set(t, (int32_t)json_integer_value(v), buf, len, TOK_VOCAB);
        }
        if (rc) { free(buf); return rc; }
    }
    free(buf);
    return tok_index_vocab(t);
}

static int load_merges(lr_tok *t, json_t *model)
{
    json_t *merges = json_object_get(model, "merges");
    if (!merges || json_is_null(merges)) return LR_OK;
    if (!json_is_array(merges)) return LR_FAIL(LR_EFORMAT, "%s: model.merges is not an array", t->name);
    uint8_t *a = NULL, *b = NULL;
    size_t acap = 0, bcap = 0, alen, blen;
    int rc = LR_OK;
    for (size_t i = 0; i < json_array_size(merges) && rc == LR_OK; i++) {
        json_t *m = json_array_get(merges, i);
        const char *l, *r;
        size_t ln, rn;
        if (json_is_string(m)) {
            /* "left right": byte-level and SentencePiece tokens never
               contain a plain space (theirs is Ġ or the metaspace). */
            l = json_string_value(m);
            const char *sp = strchr(l, ' ');
            if (!sp || sp == l || strchr(sp + 1, ' ') || !sp[1]) {
                rc = LR_FAIL(LR_EFORMAT, "%s: model.merges[%zu] is not \"left right\"", t->name, i);
                break;
            }
            ln = (size_t)(sp - l);
            r = sp + 1;
            rn = strlen(r);
        } else if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
                   json_is_string(json_array_get(m, 1))) {
            l = json_string_value(json_array_get(m, 0));
            ln = json_string_length(json_array_get(m, 0));
            r = json_string_value(json_array_get(m, 1));
            rn = json_string_length(json_array_get(m, 1));
        } else {
            rc = LR_FAIL(LR_EFORMAT, "%s: model.merges[%zu] is neither \"a b\" nor [\"a\", \"b\"]", t->name, i);
            break;
        }
        rc = bl(t, l, ln, &a, &acap, &alen);
        if (rc == LR_OK) rc = bl(t, r, rn, &b, &bcap, &blen);
        if (rc == LR_OK) rc = tok_add_merge(t, a, alen, b, blen, (uint32_t)i);
    }
    free(a);
    free(b);
    return rc;
}

static int load_added(lr_tok *t, json_t *root)
{
    json_t *added = json_object_get(root, "added_tokens");
    if (!added || json_is_null(added)) return LR_OK;
    if (!json_is_array(added)) return LR_FAIL(LR_EFORMAT, "%s: added_tokens is not an array", t->name);
    size_t i;
    json_t *a;
    json_array_foreach(added, i, a) {
        json_t *id = json_object_get(a, "id"), *content = json_object_get(a, "content");
        if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > INT32_MAX ||
            !json_is_string(content))
            return LR_FAIL(LR_EFORMAT, "%s: added_tokens[%zu] needs an integer id and a string content", t->name, i);
        int flags = TOK_ADDED;
        if (is_true(json_object_get(a, "special"))) flags |= TOK_SPECIAL;
        if (is_true(json_object_get(a, "lstrip"))) flags |= TOK_LSTRIP;
        if (is_true(json_object_get(a, "rstrip"))) flags |= TOK_RSTRIP;
        if (is_true(json_object_get(a, "single_word")))
            lr_warn("%s: added token \"%.40s\": single_word is not supported; it matches anywhere",
                    t->name, json_string_value(content));
        const int32_t i32 = (int32_t)json_integer_value(id);
        const char *c = json_string_value(content);
        const size_t cl = json_string_length(content);
        if (t->spm && memmem(c, cl, METASPACE, 3) && i32 < t->n && (t->flags[i32] & TOK_PRESENT)) {
            /* a SentencePiece piece the converter also lists as added (user
               pieces): the vocabulary stores its metaspaces as spaces, so one
               text cannot serve both; it stays a vocabulary token (found by
               BPE after the normalizer, not matched as written in the text) */
            uint8_t *m = malloc(cl);
            const size_t ml = m ? tok_spm_decode(c, cl, m) : 0;
            const int same = m && t->len[i32] == ml && !memcmp(tok_bytes(t, i32), m, ml);
            free(m);
            if (!m) return LR_FAIL(LR_ENOMEM, "%s: added token", t->name);
            if (same) continue;
        }
        int rc = tok_set(t, i32, (const uint8_t *)c, cl, flags);
        if (rc) return rc;
    }
    return LR_OK;
}

/* 1 when e is a Replace of the string from by to (the tokenizer.json form
 * {"type":"Replace","pattern":{"String":from},"content":to}). */
static int replace_is(json_t *e, const char *from, const char *to)
{
    const char *ty = type_of(e);
    json_t *pat = json_object_get(json_object_get(e, "pattern"), "String"), *c = json_object_get(e, "content");
    return ty && !strcmp(ty, "Replace") && json_is_string(pat) && !strcmp(json_string_value(pat), from) &&
           json_is_string(c) && !strcmp(json_string_value(c), to);
}

/* Whether tokenizer.json is SentencePiece-style (decided before the vocabulary
 * is read, since it says how a token's text maps to bytes): BPE with
 * byte_fallback, a Metaspace pre-tokenizer, or a normalizer replacing spaces
 * by the metaspace (alone or in a Sequence). */
/* Whether the normalizer replaces spaces by the metaspace (alone or in a
 * Sequence). */
static int replaces_space(json_t *root)
{
    json_t *n = json_object_get(root, "normalizer"), *list = json_object_get(n, "normalizers");
    if (replace_is(n, " ", METASPACE)) return 1;
    for (size_t i = 0; json_is_array(list) && i < json_array_size(list); i++)
        if (replace_is(json_array_get(list, i), " ", METASPACE)) return 1;
    return 0;
}

static int is_spm(json_t *root)
{
    if (is_true(json_object_get(json_object_get(root, "model"), "byte_fallback"))) return 1;
    const char *pt = type_of(json_object_get(root, "pre_tokenizer"));
    if (pt && !strcmp(pt, "Metaspace")) return 1;
    return replaces_space(root);
}

/* One normalizer: NFC, or SentencePiece's Prepend("\u2581") and
 * Replace(" " -> "\u2581") (tokens store the metaspace as a space, so the
 * replace is what encoding does anyway). */
static int normalizer_one(lr_tok *t, json_t *e)
{
    const char *et = type_of(e);
    if (et && !strcmp(et, "NFC")) { t->nfc = 1; return LR_OK; }
    json_t *p = json_object_get(e, "prepend");
    if (t->spm && et && !strcmp(et, "Prepend") && json_is_string(p) && !strcmp(json_string_value(p), METASPACE)) {
        t->spm_prepend = 1;
        return LR_OK;
    }
    if (t->spm && replace_is(e, " ", METASPACE)) return LR_OK;
    return LR_FAIL(LR_EUNSUPPORTED, "%s: normalizer %s is not supported (NFC; for SentencePiece tokens also "
                   "Prepend \"\u2581\" and Replace \" \" by \"\u2581\")", t->name, et ? et : "?");
}

static int load_normalizer(lr_tok *t, json_t *root)
{
    json_t *n = json_object_get(root, "normalizer");
    if (!n || json_is_null(n)) return LR_OK;
    const char *ty = type_of(n);
    if (ty && strcmp(ty, "Sequence") == 0) {
        json_t *list = json_object_get(n, "normalizers");
        size_t i;
        json_t *e;
        if (!json_is_array(list)) return LR_FAIL(LR_EFORMAT, "%s: normalizer Sequence without a list", t->name);
        json_array_foreach(list, i, e) {
            int rc = normalizer_one(t, e);
            if (rc) return rc;
        }
        return LR_OK;
    }
    return normalizer_one(t, n);
}

/* The Metaspace pre-tokenizer: spaces are the metaspace (as tokens store
 * them), one goes in front per prepend_scheme (or the older add_prefix_space),
 * and with split (the default) a word starts at each. */
static int load_metaspace(lr_tok *t, json_t *p)
{
    json_t *rep = json_object_get(p, "replacement"), *scheme = json_object_get(p, "prepend_scheme");
    if (!json_is_string(rep) || strcmp(json_string_value(rep), METASPACE) != 0)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer Metaspace with a replacement other than \"\u2581\"", t->name);
    const char *sc = json_is_string(scheme) ? json_string_value(scheme) : NULL;
    if (sc && !strcmp(sc, "always")) t->spm_prepend = 2;
    else if (sc && !strcmp(sc, "first")) t->spm_prepend = 3;
    else if (sc && !strcmp(sc, "never")) t->spm_prepend = 0;
    else if (sc) return LR_FAIL(LR_EUNSUPPORTED, "%s: Metaspace prepend_scheme \"%.20s\" (always, first or never)", t->name, sc);
    else {
        json_t *aps = json_object_get(p, "add_prefix_space");
        t->spm_prepend = !aps || is_true(aps) ? 2 : 0; /* before prepend_scheme: true by default */
    }
    json_t *split = json_object_get(p, "split");
    t->spm_split = !split || is_true(split);
    return LR_OK;
}

static int load_pretok(lr_tok *t, json_t *root)
{
    json_t *p = json_object_get(root, "pre_tokenizer");
    const char *ty = type_of(p);
    if (t->spm) {
        /* no split at all (Llama 2's tokenizer.json), or Metaspace */
        if (!p || json_is_null(p)) return LR_OK;
        if (ty && !strcmp(ty, "Metaspace")) return load_metaspace(t, p);
        /* Gemma's converter writes a Split on " " after a normalizer that
           left no space to split on: nothing to do */
        json_t *str = json_object_get(json_object_get(p, "pattern"), "String");
        if (ty && !strcmp(ty, "Split") && json_is_string(str) && !strcmp(json_string_value(str), " ") &&
            !is_true(json_object_get(p, "invert")) && replaces_space(root))
            return LR_OK;
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer %s with SentencePiece tokens is not supported "
                       "(expected none or Metaspace)", t->name, ty ? ty : "?");
    }
    if (ty && strcmp(ty, "ByteLevel") == 0) {
        /* GPT-2 style: ByteLevel splits with its own pattern. */
        if (json_is_false(json_object_get(p, "use_regex")))
            return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer ByteLevel without use_regex splits nothing; not supported", t->name);
        t->pattern = TOK_PAT_GPT2;
        t->prefix_segment = is_true(json_object_get(p, "add_prefix_space"));
        return LR_OK;
    }
    json_t *list = ty && strcmp(ty, "Sequence") == 0 ? json_object_get(p, "pretokenizers") : NULL;
    if (!json_is_array(list) || json_array_size(list) != 2)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer %s is not supported (expected ByteLevel, or a "
                       "Sequence of Split and ByteLevel)", t->name, ty ? ty : "null");
    json_t *split = json_array_get(list, 0), *byte = json_array_get(list, 1);
    const char *st = type_of(split), *bt = type_of(byte);
    if (st && strcmp(st, "Digits") == 0 && bt && strcmp(bt, "ByteLevel") == 0) {
        /* SmolLM style: numbers split off, then ByteLevel's own pattern. */
        if (json_is_false(json_object_get(byte, "use_regex")) || is_true(json_object_get(byte, "add_prefix_space")))
            return LR_FAIL(LR_EUNSUPPORTED, "%s: Digits then ByteLevel needs use_regex true, add_prefix_space false", t->name);
        t->pattern = TOK_PAT_GPT2;
        t->digits = is_true(json_object_get(split, "individual_digits")) ? 1 : 2;
        return LR_OK;
    }
    if (!st || strcmp(st, "Split") != 0 || !bt || strcmp(bt, "ByteLevel") != 0)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer Sequence of %s, %s is not supported (expected Split or Digits, then ByteLevel)",
                       t->name, st ? st : "?", bt ? bt : "?");
    json_t *pat = json_object_get(split, "pattern"), *behavior = json_object_get(split, "behavior");
    json_t *re = json_is_object(pat) ? json_object_get(pat, "Regex") : NULL;
    if (!json_is_string(re))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer Split needs a Regex pattern", t->name);
    if (!json_is_string(behavior) || strcmp(json_string_value(behavior), "Isolated") != 0 ||
        is_true(json_object_get(split, "invert")))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer Split must be behavior Isolated, invert false", t->name);
    int pattern = tok_pattern_from_regex(json_string_value(re));
    if (pattern < 0)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: pre_tokenizer Split regex is not one of the known patterns "
                       "(Qwen2/3, Llama-3, GPT-2): %.200s", t->name, json_string_value(re));
    if (is_true(json_object_get(byte, "use_regex")))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: ByteLevel with use_regex after a Split is not supported", t->name);
    t->pattern = pattern;
    t->prefix_piece = is_true(json_object_get(byte, "add_prefix_space"));
    return LR_OK;
}

static int load_model(lr_tok *t, json_t *root)
{
    json_t *model = json_object_get(root, "model");
    if (!json_is_object(model)) return LR_FAIL(LR_EFORMAT, "%s: no \"model\" object", t->name);
    const char *ty = type_of(model);
    if (ty && strcmp(ty, "BPE") != 0)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: model type %s is not supported (only BPE)", t->name, ty);
    json_t *v;
    t->byte_fallback = is_true(json_object_get(model, "byte_fallback"));
    t->fuse_unk = is_true(json_object_get(model, "fuse_unk"));
    const char *affix[] = { "continuing_subword_prefix", "end_of_word_suffix" };
    for (int i = 0; i < 2; i++)
        if ((v = json_object_get(model, affix[i])) && !json_is_null(v) &&
            !(json_is_string(v) && json_string_length(v) == 0))
            return LR_FAIL(LR_EUNSUPPORTED, "%s: BPE %s is not supported", t->name, affix[i]);
    if ((v = json_object_get(model, "dropout")) && json_is_number(v) && json_number_value(v) > 0)
        lr_warn("%s: BPE dropout is ignored (encoding is deterministic)", t->name);
    t->ignore_merges = is_true(json_object_get(model, "ignore_merges"));
    int rc = load_vocab(t, model);
    if (rc == LR_OK) rc = load_merges(t, model);
    json_t *unk = json_object_get(model, "unk_token");
    if (rc == LR_OK && json_is_string(unk)) {
        uint8_t *b = NULL;
        size_t cap = 0, n;
        if ((rc = bl(t, json_string_value(unk), json_string_length(unk), &b, &cap, &n))) return rc;
        t->unk = tok_vocab_find(t, b, n);
        free(b);
        if (t->unk < 0) lr_warn("%s: unk_token is not in the vocabulary", t->name);
    }
    return rc;
}

/* The decoder: tokens always decode to the bytes they stand for (ByteLevel's
 * alphabet or the metaspace undone, byte-fallback tokens their byte); what a
 * SentencePiece decoder adds is the leading space stripped (Strip after Fuse,
 * or Metaspace with a prepend scheme). Anything else is said and ignored. */
static void load_decoder(lr_tok *t, json_t *root)
{
    json_t *d = json_object_get(root, "decoder");
    const char *dt = type_of(d);
    if (!dt) return;
    if (!t->spm) {
        if (strcmp(dt, "ByteLevel") != 0) lr_warn("%s: decoder %s ignored; tokens decode byte-level", t->name, dt);
        return;
    }
    if (!strcmp(dt, "Metaspace")) {
        json_t *sc = json_object_get(d, "prepend_scheme"), *aps = json_object_get(d, "add_prefix_space");
        /* Hugging Face's Metaspace decoder: every metaspace of the first token
           goes (not only a leading one) unless the scheme is never */
        t->meta_first = json_is_string(sc) ? strcmp(json_string_value(sc), "never") != 0 : !aps || is_true(aps);
        return;
    }
    json_t *list = !strcmp(dt, "Sequence") ? json_object_get(d, "decoders") : NULL;
    if (!json_is_array(list)) {
        lr_warn("%s: decoder %s ignored; SentencePiece tokens decode as their text with spaces", t->name, dt);
        return;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *e = json_array_get(list, i), *c = json_object_get(e, "content"), *st = json_object_get(e, "start");
        const char *et = type_of(e);
        if (!et || !strcmp(et, "ByteFallback") || !strcmp(et, "Fuse") || replace_is(e, METASPACE, " ")) continue;
        if (!strcmp(et, "Strip") && json_is_string(c) && !strcmp(json_string_value(c), " ") && json_is_integer(st) &&
            json_integer_value(st) >= 0 && json_integer_value(st) <= 16) {
            t->strip_lead = (int)json_integer_value(st);
            continue;
        }
        lr_warn("%s: decoder step %s ignored", t->name, et);
    }
}

/* The id of a token named by its text: added tokens first (the index is
 * not built yet), then the vocabulary; -1 when none. */
static int32_t token_by_text(const lr_tok *t, const char *text, size_t n)
{
    const uint8_t *s = (const uint8_t *)text;
    for (int32_t i = 0; i < t->n; i++)
        if ((t->flags[i] & TOK_ADDED) && t->len[i] == n && memcmp(tok_bytes(t, i), s, n) == 0) return i;
    return tok_vocab_find(t, s, n);
}

/* bos_token etc. in tokenizer_config.json: a string, an object with
 * "content", or null. *present says whether the key names a token at all. */
static int32_t config_token(lr_tok *t, json_t *cfg, const char *key, int *present)
{
    json_t *v = json_object_get(cfg, key);
    if (json_is_object(v)) v = json_object_get(v, "content");
    *present = json_is_string(v);
    if (!*present) return -1;
    int32_t id = token_by_text(t, json_string_value(v), json_string_length(v));
    if (id < 0) lr_warn("%s: tokenizer_config %s \"%.40s\" is not a token", t->name, key, json_string_value(v));
    return id;
}

/* One special token of a TemplateProcessing "single" list: its ids from
 * the processor's special_tokens map when given, else by its text; -1 when
 * it is not a token, -2 when it stands for several. */
static int32_t template_token(const lr_tok *t, json_t *proc, const char *text)
{
    json_t *e = json_object_get(json_object_get(proc, "special_tokens"), text);
    json_t *ids = json_object_get(e, "ids");
    if (json_is_array(ids) && json_array_size(ids) == 1 && json_is_integer(json_array_get(ids, 0))) {
        json_int_t id = json_integer_value(json_array_get(ids, 0));
        return id >= 0 && id < t->n ? (int32_t)id : -1;
    }
    if (json_is_array(ids) && json_array_size(ids) != 1) {
        /* several tokens: one BOS id cannot say it */
        lr_warn("%s: post_processor token \"%.40s\" stands for %zu ids; no BOS added", t->name, text,
                json_array_size(ids));
        return -2;
    }
    return token_by_text(t, text, strlen(text));
}

/* The BOS a prompt starts with, where tokenizer.json itself says so: a
 * TemplateProcessing post-processor (alone or inside a Sequence, as
 * Llama 3's) whose "single" template puts one special token before the text.
 * That is how Hugging Face tokenizers add BOS; tokenizer_config.json's
 * add_bos_token, read after, overrides it. Other specials in the template
 * (a suffix EOS, a second prefix token) are not added, and said so. */
static void load_post_processor(lr_tok *t, json_t *root)
{
    json_t *pp = json_object_get(root, "post_processor"), *proc = NULL;
    const char *ty = type_of(pp);
    if (ty && !strcmp(ty, "TemplateProcessing")) proc = pp;
    else if (ty && !strcmp(ty, "Sequence")) {
        json_t *list = json_object_get(pp, "processors");
        for (size_t i = 0; i < json_array_size(list) && !proc; i++) {
            const char *pt = type_of(json_array_get(list, i));
            if (pt && !strcmp(pt, "TemplateProcessing")) proc = json_array_get(list, i);
        }
    }
    json_t *single = json_object_get(proc, "single");
    if (!json_is_array(single)) return;
    int seen_text = 0, prefix = 0, ignored = 0;
    int32_t bos = -1;
    for (size_t i = 0; i < json_array_size(single); i++) {
        json_t *p = json_array_get(single, i);
        json_t *sp = json_object_get(json_object_get(p, "SpecialToken"), "id");
        if (json_object_get(p, "Sequence")) seen_text = 1;
        else if (json_is_string(sp) && !seen_text && prefix++ == 0) {
            bos = template_token(t, proc, json_string_value(sp));
            if (bos == -1) lr_warn("%s: post_processor token \"%.40s\" is not a token", t->name, json_string_value(sp));
        } else if (json_is_string(sp)) ignored++;
    }
    if (ignored)
        lr_warn("%s: post_processor template: %d special token(s) besides a leading BOS not added", t->name, ignored);
    if (bos >= 0) {
        t->bos = bos;
        t->add_bos = 1;
    }
}

/* transformers' tokenizer classes whose add_bos_token defaults to true:
 * LlamaTokenizer(Fast), GemmaTokenizer(Fast), CodeLlamaTokenizer(Fast) (v4.4x). A config naming the
 * slow class gets the fast one from AutoTokenizer (use_fast by default), and
 * the fast class's __init__ takes add_bos_token=True and calls
 * update_post_processor(), which rewrites tokenizer.json's post-processor
 * from add_bos_token and bos_token: the key absent is add_bos_token given
 * true, whatever the post-processor said; the slow class's
 * build_inputs_with_special_tokens adds the same BOS. A JSON null arrives as
 * add_bos_token=None, false to Python: no BOS. Where the config names no
 * bos_token, the class's own default ("<s>", "<bos>") is not looked up: the
 * template's BOS, if any, stays the one added, as for add_bos_token true. */
static int class_defaults_bos(json_t *cfg)
{
    static const char *const names[] = { "LlamaTokenizer", "LlamaTokenizerFast", "GemmaTokenizer",
                                         "GemmaTokenizerFast", "CodeLlamaTokenizer", "CodeLlamaTokenizerFast" };
    json_t *c = json_object_get(cfg, "tokenizer_class");
    for (size_t i = 0; json_is_string(c) && i < sizeof names / sizeof *names; i++)
        if (!strcmp(json_string_value(c), names[i])) return 1;
    return 0;
}

static void load_config(lr_tok *t, const char *cfg_text, size_t cfg_len)
{
    json_error_t err;
    json_t *cfg = json_loadb(cfg_text, cfg_len, 0, &err);
    if (!json_is_object(cfg)) {
        lr_warn("%s: tokenizer_config.json ignored: line %d: %s", t->name, err.line, err.text);
        json_decref(cfg);
        return;
    }
    int present;
    t->eos = config_token(t, cfg, "eos_token", &present);
    t->pad = config_token(t, cfg, "pad_token", &present);
    int32_t unk = config_token(t, cfg, "unk_token", &present);
    if (unk >= 0) t->unk = unk;
    /* An add_bos_token given (true or false; a number as Python reads it)
     * rebuilds the post-processor from it and bos_token, as transformers
     * does: then bos_token names the BOS (-1 when it is not a token).
     * Without it the post-processor's BOS stays what is added, and
     * bos_token only names a BOS where the template has none; except for
     * the Llama and Gemma classes (class_defaults_bos), where no key means
     * true and null false, both rebuilt as when given. */
    json_t *ab = json_object_get(cfg, "add_bos_token");
    const int stated = json_is_boolean(ab) || json_is_number(ab), by_class = class_defaults_bos(cfg);
    if (ab && !stated && !json_is_null(ab)) {
        lr_warn("%s: tokenizer_config add_bos_token is neither true nor false; ignored", t->name);
        ab = NULL;
    }
    const int given = stated || by_class;
    int32_t id = config_token(t, cfg, "bos_token", &present);
    if (present && (given || !t->add_bos)) t->bos = id;
    if (json_is_boolean(ab)) t->add_bos = json_is_true(ab);
    else if (json_is_number(ab)) t->add_bos = json_number_value(ab) != 0;
    else if (by_class) t->add_bos = ab == NULL; /* absent: the class's true; null: None */
    json_decref(cfg);
}

int lr_tok_load_hf_mem(const char *json, size_t len, const char *config_json, size_t config_len,
                       const char *name, lr_tok **out)
{
    *out = NULL;
    if (!name) name = "tokenizer.json";
    json_error_t err;
    json_t *root = json_loadb(json, len, 0, &err);
    if (!root) return LR_FAIL(LR_EFORMAT, "%s: JSON error at line %d column %d: %s", name, err.line, err.column, err.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return LR_FAIL(LR_EFORMAT, "%s: not a JSON object", name);
    }
    lr_tok *t;
    int rc = tok_create(name, &t);
    if (rc == LR_OK) t->spm = is_spm(root);
    if (rc == LR_OK) rc = load_model(t, root);
    if (rc == LR_OK) rc = load_added(t, root);
    if (rc == LR_OK) rc = load_normalizer(t, root);
    if (rc == LR_OK) rc = load_pretok(t, root);
    if (rc == LR_OK) {
        load_decoder(t, root);
        load_post_processor(t, root);
        if (config_json) load_config(t, config_json, config_len);
        rc = tok_finish(t);
    }
    json_decref(root);
    if (rc) { lr_tok_free(t); return rc; }
    *out = t;
    return LR_OK;
}

int lr_tok_load_hf(const char *path, lr_tok **out)
{
    *out = NULL;
    char *json, *cfg = NULL;
    size_t len, cfg_len = 0;
    int rc = read_file(path, &json, &len);
    if (rc) return rc;
    /* tokenizer_config.json beside it, when there is one. */
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    char *cpath = malloc(dir + sizeof "tokenizer_config.json");
    if (cpath) {
        memcpy(cpath, path, dir);
        strcpy(cpath + dir, "tokenizer_config.json");
        if (access(cpath, F_OK) == 0) { /* (a look, not an open: the file is opened once, below) */
            if (read_file(cpath, &cfg, &cfg_len) != LR_OK) {
                lr_warn("%s: ignored: %s", cpath, lr_errmsg());
                cfg = NULL;
            }
        }
        free(cpath);
    }
    rc = lr_tok_load_hf_mem(json, len, cfg, cfg_len, path, out);
    free(json);
    free(cfg);
    return rc;
}
