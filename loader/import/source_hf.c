/* A Hugging Face model folder as an import source. */
#include "loader/arch.h"
#include "loader/import/hf_config.h"
#include "loader/import/safetensors.h"
#include "loader/import/source.h"
#include "loader/import/tokjson_bos.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/read_file.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    int nfiles;
    lr_st_file **files;
} hf_impl;

/* Hugging Face layer tensor suffixes and their roles. */
static const struct { const char *hf, *role; } k_layer_names[] = {
    { "input_layernorm.weight", "attn_norm" },
    { "self_attn.q_proj.weight", "attn_q" },
    { "self_attn.k_proj.weight", "attn_k" },
    { "self_attn.v_proj.weight", "attn_v" },
    { "self_attn.o_proj.weight", "attn_output" },
    { "self_attn.q_norm.weight", "attn_q_norm" },
    { "self_attn.k_norm.weight", "attn_k_norm" },
    { "post_attention_layernorm.weight", "ffn_norm" },
    { "mlp.gate_proj.weight", "ffn_gate" },
    { "mlp.up_proj.weight", "ffn_up" },
    { "mlp.down_proj.weight", "ffn_down" },
};

enum { MAP_OK, MAP_SKIP, MAP_UNKNOWN };

/* HF name -> artifact name, layer and role. */
static int map_name(const lr_model_config *c, const char *hf, char name[64], int *layer, const char **role)
{
    *layer = -1;
    if (!strcmp(hf, "model.embed_tokens.weight")) *role = "token_embd";
    else if (!strcmp(hf, "model.norm.weight")) *role = "output_norm";
    else if (!strcmp(hf, "lm_head.weight")) {
        if (c->tied_head) return MAP_SKIP; /* some tied checkpoints still store a copy */
        *role = "output";
    } else {
        unsigned l;
        int at = 0;
        if (sscanf(hf, "model.layers.%u.%n", &l, &at) != 1 || at == 0 || l > 100000) return MAP_UNKNOWN;
        const char *rest = hf + at;
        if (!strcmp(rest, "self_attn.rotary_emb.inv_freq")) return MAP_SKIP; /* recomputed from rope_theta */
        *role = NULL;
        for (size_t i = 0; i < sizeof k_layer_names / sizeof *k_layer_names; i++)
            if (!strcmp(rest, k_layer_names[i].hf)) *role = k_layer_names[i].role;
        if (!*role) return MAP_UNKNOWN;
        if ((!strcmp(*role, "attn_q_norm") || !strcmp(*role, "attn_k_norm")) && !lr_src_arch_has_qk_norm(c->arch))
            return MAP_UNKNOWN;
        *layer = (int)l;
    }
    lr_tensor_name(name, *layer, *role);
    return MAP_OK;
}

static int hf_read(const lr_src *s, const lr_src_tensor *t, uint64_t r0, uint64_t n, float *out)
{
    const hf_impl *h = s->impl;
    return lr_st_read_f32(h->files[t->file], t->ref, r0 * t->cols, n * t->cols, out);
}

static void hf_close(lr_src *s)
{
    hf_impl *h = s->impl;
    if (!h) return;
    for (int i = 0; i < h->nfiles; i++) lr_st_close(h->files[i]);
    free(h->files);
    free(h);
    s->impl = NULL;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The shard file names: from the index's weight_map, else model.safetensors,
 * else every *.safetensors in the folder. names[] are malloc'd. */
static int list_shards(const char *dir, char ***names, int *n)
{
    char path[4096];
    *names = NULL;
    *n = 0;
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    char **v = NULL;
    int nv = 0, rc = LR_OK;
    if (exists(path)) {
        json_error_t je;
        json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *wm;
        if (!root) return LR_FAIL(LR_EFORMAT, "%s: JSON: %s (line %d)", path, je.text, je.line);
        wm = json_object_get(root, "weight_map");
        if (!json_is_object(wm)) rc = LR_FAIL(LR_EFORMAT, "%s: no weight_map object", path);
        const char *key;
        json_t *f;
        v = calloc(json_object_size(wm) + 1, sizeof *v);
        if (!rc && !v) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", path);
        json_object_foreach(wm, key, f) {
            if (rc) break;
            const char *fn = json_string_value(f);
            if (!fn || !fn[0] || strchr(fn, '/') || !strcmp(fn, "..") || !strcmp(fn, "."))
                rc = LR_FAIL(LR_EFORMAT, "%s: weight_map[%s] is not a file name in the folder", path, key);
            int seen = 0;
            for (int i = 0; !rc && i < nv && !seen; i++) seen = !strcmp(v[i], fn);
            if (!rc && !seen && !(v[nv++] = strdup(fn))) rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", path);
        }
        json_decref(root);
        if (!rc && nv == 0) rc = LR_FAIL(LR_EFORMAT, "%s: weight_map is empty", path);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        if (exists(path)) {
            v = calloc(1, sizeof *v);
            if (!v || !(v[nv++] = strdup("model.safetensors"))) rc = LR_FAIL(LR_ENOMEM, "out of memory");
        } else {
            DIR *d = opendir(dir);
            if (!d) return LR_FAIL(LR_EIO, "%s: cannot list the folder", dir);
            struct dirent *e;
            int cap = 0;
            while (!rc && (e = readdir(d))) {
                size_t l = strlen(e->d_name);
                if (l <= 12 || strcmp(e->d_name + l - 12, ".safetensors")) continue;
                if (nv == cap) {
                    cap = cap ? 2 * cap : 16;
                    char **nvv = realloc(v, (size_t)cap * sizeof *v);
                    if (!nvv) { rc = LR_FAIL(LR_ENOMEM, "out of memory"); break; }
                    v = nvv;
                }
                if (!(v[nv++] = strdup(e->d_name))) rc = LR_FAIL(LR_ENOMEM, "out of memory");
            }
            closedir(d);
            if (!rc && nv == 0) rc = LR_FAIL(LR_EINVAL, "%s: no *.safetensors weights (model.safetensors, an index or shards)", dir);
        }
    }
    if (!rc) qsort(v, (size_t)nv, sizeof *v, cmp_str);
    if (rc) {
        for (int i = 0; i < nv; i++) free(v[i]);
        free(v);
        return rc;
    }
    *names = v;
    *n = nv;
    return LR_OK;
}

static int load_tokenizer(lr_src *s, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (!exists(path)) {
        s->tok_kind = LR_TOK_NONE;
        return LR_OK;
    }
    void *buf;
    size_t n;
    const lr_read_opts ro = { .max = lr_tok_json_max() }; /* what every reader takes */
    int rc = lr_read_file_opts(path, &ro, &buf, &n);
    if (rc) return rc;
    json_error_t je;
    json_t *j = json_loadb(buf, n, 0, &je);
    if (!j) {
        free(buf);
        return LR_FAIL(LR_EFORMAT, "%s: JSON: %s (line %d, column %d)", path, je.text, je.line, je.column);
    }
    json_decref(j);
    /* add_bos_token lives in tokenizer_config.json, which the artifact does
     * not store: written into the stored tokenizer.json's post-processor */
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    if (exists(path)) {
        void *cfg;
        size_t cn;
        int changed;
        if ((rc = lr_read_file(path, &cfg, &cn))) {
            free(buf);
            return rc;
        }
        char *text = buf;
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        rc = lr_tokjson_fold_config(&text, &n, cfg, cn, path, &changed);
        buf = text;
        free(cfg);
        if (rc) {
            free(buf);
            return rc;
        }
    }
    /* (the folded config may have made it longer) */
    rc = n > lr_tok_json_max() ? LR_FAIL(LR_EINVAL, "%zu bytes, past the %zu a tokenizer may have", n, lr_tok_json_max())
                               : lr_gzip(buf, n, &s->tok, &s->tok_bytes);
    free(buf);
    if (rc) return lr_wrap(rc, "%s", path);
    s->tok_kind = LR_TOK_JSON_GZIP;
    return LR_OK;
}

static int open_hf(lr_src *s, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    void *buf;
    size_t n;
    int rc = lr_read_file(path, &buf, &n);
    if (rc) return rc;
    const char *base = strrchr(dir, '/');
    base = base && base[1] ? base + 1 : dir;
    rc = lr_hf_config_parse(buf, n, path, base, &s->cfg);
    free(buf);
    if (rc || (rc = lr_src_check_config(&s->cfg, path))) return rc;
    if ((rc = load_tokenizer(s, dir))) return rc;

    hf_impl *h = calloc(1, sizeof *h);
    if (!h) return LR_FAIL(LR_ENOMEM, "out of memory");
    s->impl = h;
    char **names;
    int nn;
    if ((rc = list_shards(dir, &names, &nn))) return rc;
    h->files = calloc((size_t)nn, sizeof *h->files);
    if (!h->files) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    for (int i = 0; i < nn && !rc; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if ((rc = lr_st_open(path, &h->files[i]))) break;
        h->nfiles++;
        const lr_st_file *f = h->files[i];
        for (int k = 0; k < f->n && !rc; k++) {
            const lr_st_tensor *st = &f->t[k];
            char name[64], origin[160];
            int layer;
            const char *role;
            snprintf(origin, sizeof origin, "%s: %s (%s)", names[i], st->name, lr_st_dtype_name(st->dtype));
            int m = map_name(&s->cfg, st->name, name, &layer, &role);
            if (m == MAP_SKIP) continue;
            if (m == MAP_UNKNOWN) {
                const char *why = strstr(st->name, ".bias") ? " (biases are not served)" : "";
                rc = LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s is not part of a %s model%s", path, st->name,
                             s->cfg.arch, why);
                break;
            }
            if (layer >= (int)s->cfg.n_layers) {
                rc = LR_FAIL(LR_EFORMAT, "%s: tensor %s: layer %d but the config has %u layers", path, st->name, layer,
                             s->cfg.n_layers);
                break;
            }
            if (st->dtype != LR_ST_F32 && st->dtype != LR_ST_F16 && st->dtype != LR_ST_BF16) {
                rc = LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s: dtype %s (F32, F16 or BF16 weights only)", path, st->name,
                             lr_st_dtype_name(st->dtype));
                break;
            }
            if (st->ndim != 1 && st->ndim != 2) {
                rc = LR_FAIL(LR_EFORMAT, "%s: tensor %s: %d dimensions", path, st->name, st->ndim);
                break;
            }
            lr_src_tensor *t;
            rc = lr_src_add(s, name, layer, role, st->ndim, st->ndim == 2 ? st->shape[0] : 1,
                            st->shape[st->ndim - 1], origin, &t);
            if (!rc) t->file = i, t->ref = st;
        }
    }
    for (int i = 0; i < nn; i++) free(names[i]);
    free(names);
    if (!rc) rc = lr_src_check_complete(s);
    return rc;
}

int lr_src_open_hf(const char *dir, lr_src **out)
{
    *out = NULL;
    lr_src *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    snprintf(s->label, sizeof s->label, "%s", dir);
    snprintf(s->kind, sizeof s->kind, "hf");
    s->read_rows = hf_read;
    s->close = hf_close;
    int rc = open_hf(s, dir);
    if (rc) {
        lr_src_close(s);
        return rc;
    }
    *out = s;
    return LR_OK;
}
