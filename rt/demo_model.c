/* The demo model (rt/demo_model.h). */
#include "rt/demo_model.h"
#include "loader/model.h"
#include "loader/synthetic.h"
#include "util/atomic_file.h"
#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEMO_FILE "models/qwen3-tiny-demo-v1.lrt"
#define DEMO_SEED 1

int lr_demo_model_path(char *path, size_t n)
{
    const char *env = getenv("LEECHRT_CACHE_DIR"), *home = getenv("HOME");
    int k = env && *env ? snprintf(path, n, "%s/%s", env, DEMO_FILE)
                        : snprintf(path, n, "%s/.cache/leechrt/%s", home && *home ? home : "/tmp", DEMO_FILE);
    if (k < 0 || (size_t)k >= n) return LR_FAIL(LR_ERANGE, "demo model path too long");
    return LR_OK;
}

/* ---- the tokenizer ---- */

/* The byte-level alphabet of GPT-2 style tokenizers: printable Latin-1 bytes
 * stand for themselves, the other 68 bytes for U+0100 onwards, in order. */
static unsigned byte_char(unsigned b)
{
    int printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    if (printable) return b;
    unsigned k = 0;
    for (unsigned x = 0; x < b; x++)
        if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174)) k++;
    return 256 + k;
}

/* Appends the byte-level spelling of bytes s[0..n) to out (room: 2n + 1). */
static void spell(const char *s, size_t n, char *out)
{
    size_t o = strlen(out);
    for (size_t i = 0; i < n; i++) {
        unsigned c = byte_char((unsigned char)s[i]);
        if (c < 0x80) out[o++] = (char)c;
        else {
            out[o++] = (char)(0xC0 | (c >> 6));
            out[o++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[o] = 0;
}

#define DEMO_VOCAB 512
#define DEMO_MERGES (DEMO_VOCAB - 256 - 3)

/* Merge i joins two byte strings: " " + a letter first (by English letter
 * frequency), then pairs of the 16 most frequent letters. */
static void merge_parts(int i, char a[3], char b[2])
{
    static const char freq[] = "etaoinshrdlcumwfgypbvkjxqz";
    if (i < 26) {
        a[0] = ' ', a[1] = 0;
        b[0] = freq[i], b[1] = 0;
    } else {
        i -= 26;
        a[0] = freq[i / 16], a[1] = 0;
        b[0] = freq[i % 16], b[1] = 0;
    }
}

int lr_demo_tokenizer_json(char **json, size_t *n)
{
    *json = NULL;
    *n = 0;
    json_t *root = json_object(), *model = json_object(), *vocab = json_object(), *merges = json_array();
    json_t *added = json_array(), *pre = json_object(), *dec = json_object();
    int ok = root && model && vocab && merges && added && pre && dec;
    char sa[8], sb[8], sab[16];
    for (unsigned b = 0; b < 256 && ok; b++) {
        char c = (char)b;
        sa[0] = 0;
        spell(&c, 1, sa);
        ok = !json_object_set_new(vocab, sa, json_integer(b));
    }
    for (int i = 0; i < DEMO_MERGES && ok; i++) {
        char a[3], b[2], ab[4];
        merge_parts(i, a, b);
        snprintf(ab, sizeof ab, "%s%s", a, b);
        sa[0] = sb[0] = sab[0] = 0;
        spell(a, strlen(a), sa);
        spell(b, strlen(b), sb);
        spell(ab, strlen(ab), sab);
        char m[24];
        snprintf(m, sizeof m, "%s %s", sa, sb);
        ok = !json_object_set_new(vocab, sab, json_integer(256 + i)) && !json_array_append_new(merges, json_string(m));
    }
    static const char *const specials[3] = { "<|endoftext|>", "<|im_start|>", "<|im_end|>" };
    for (int i = 0; i < 3 && ok; i++)
        ok = !json_array_append_new(added, json_pack("{s:i, s:s, s:b, s:b, s:b, s:b, s:b}", "id", DEMO_VOCAB - 3 + i,
                                                     "content", specials[i], "single_word", 0, "lstrip", 0, "rstrip",
                                                     0, "normalized", 0, "special", 1));
    if (ok) {
        json_object_set_new(model, "type", json_string("BPE"));
        json_object_set_new(model, "vocab", vocab);
        json_object_set_new(model, "merges", merges);
        json_object_set_new(pre, "type", json_string("ByteLevel"));
        json_object_set_new(pre, "add_prefix_space", json_false());
        json_object_set_new(pre, "use_regex", json_true());
        json_object_set_new(dec, "type", json_string("ByteLevel"));
        json_object_set_new(root, "version", json_string("1.0"));
        json_object_set_new(root, "added_tokens", added);
        json_object_set_new(root, "normalizer", json_null());
        json_object_set_new(root, "pre_tokenizer", pre);
        json_object_set_new(root, "decoder", dec);
        json_object_set_new(root, "model", model);
        model = vocab = merges = added = pre = dec = NULL; /* owned by root now */
        *json = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
        ok = *json != NULL;
    }
    json_decref(model); json_decref(vocab); json_decref(merges);
    json_decref(added); json_decref(pre); json_decref(dec); json_decref(root);
    if (!ok) return LR_FAIL(LR_ENOMEM, "demo tokenizer: out of memory");
    *n = strlen(*json);
    return LR_OK;
}

/* ---- the model file ---- */

static int mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return LR_FAIL(LR_EIO, "%s: %s", tmp, strerror(errno));
            *p = '/';
        }
    return LR_OK;
}

int lr_demo_model_ensure(char *path, size_t n, int *created)
{
    *created = 0;
    int rc = lr_demo_model_path(path, n);
    if (rc) return rc;
    if (access(path, R_OK) == 0) {
        /* a cached file that no longer opens (cut short, damaged) is generated again: it is
           ours to rebuild, and it used to stop every run with the loader's message */
        lr_model *m;
        if (lr_model_open(path, 0, &m) == LR_OK) {
            lr_model_close(m);
            return LR_OK;
        }
        lr_warn("the demo model %s does not open (%s): generating it again", path, lr_errmsg());
        lr_clear_error();
    }
    if ((rc = mkdirs(path))) return lr_wrap(rc, "demo model folder");
    char *json;
    size_t len;
    if ((rc = lr_demo_tokenizer_json(&json, &len))) return rc;
    char tpath[4200];
    snprintf(tpath, sizeof tpath, "%s.tokenizer.%d.json", path, (int)getpid());
    rc = lr_write_file_atomic(tpath, json, len);
    free(json);
    if (rc) return rc;
    lr_model_config cfg;
    lr_synth_opts o = { .seed = DEMO_SEED, .tokenizer_path = tpath, .gain_bits = 1 };
    rc = lr_synth_config("tiny", &cfg);
    if (!rc) {
        snprintf(cfg.name, sizeof cfg.name, "qwen3-tiny-demo (random weights)");
        rc = lr_synth_write(path, &cfg, &o);
    }
    unlink(tpath);
    if (rc) return lr_wrap(rc, "generating the demo model %s", path);
    *created = 1;
    return LR_OK;
}
