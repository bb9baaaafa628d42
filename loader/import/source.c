/* What the two import sources share: the roles of each architecture, the
 * shapes a config implies, the completeness check and canonical order. */
#include "loader/import/source.h"
#include "loader/arch.h"
#include "util/err.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const k_qwen3_roles[] = {
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_q_norm", "attn_k_norm", "attn_output",
    "ffn_norm", "ffn_gate", "ffn_up", "ffn_down",
};
static const char *const k_llama_roles[] = {
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down",
};

int lr_src_arch_has_qk_norm(const char *arch) { return strcmp(arch, "qwen3") == 0; }

const char *const *lr_src_layer_roles(const char *arch, int *n)
{
    if (lr_src_arch_has_qk_norm(arch)) {
        *n = (int)(sizeof k_qwen3_roles / sizeof *k_qwen3_roles);
        return k_qwen3_roles;
    }
    *n = (int)(sizeof k_llama_roles / sizeof *k_llama_roles);
    return k_llama_roles;
}

void lr_src_role_shape(const lr_model_config *c, const char *role, int *ndim, uint64_t *rows, uint64_t *cols)
{
    uint64_t h = c->hidden, q = (uint64_t)c->n_heads * c->head_dim, kv = (uint64_t)c->n_kv_heads * c->head_dim;
    *ndim = 2;
    *rows = 1;
    *cols = h;
    if (!strcmp(role, "attn_norm") || !strcmp(role, "ffn_norm") || !strcmp(role, "output_norm")) *ndim = 1;
    else if (!strcmp(role, "attn_q_norm") || !strcmp(role, "attn_k_norm")) *ndim = 1, *cols = c->head_dim;
    else if (!strcmp(role, "attn_q")) *rows = q;
    else if (!strcmp(role, "attn_k") || !strcmp(role, "attn_v")) *rows = kv;
    else if (!strcmp(role, "attn_output")) *rows = h, *cols = q;
    else if (!strcmp(role, "ffn_gate") || !strcmp(role, "ffn_up")) *rows = c->intermediate;
    else if (!strcmp(role, "ffn_down")) *rows = h, *cols = c->intermediate;
    else if (!strcmp(role, "token_embd") || !strcmp(role, "output")) *rows = c->vocab;
}

int lr_src_check_config(const lr_model_config *c, const char *label)
{
    if (strcmp(c->arch, "qwen3") && strcmp(c->arch, "llama"))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: architecture \"%s\" is not imported (qwen3, llama)", label, c->arch);
    /* loader/arch.c checks the numbers of the architectures it has tables
     * for; a llama layer is a qwen3 layer without the q/k norms, so the
     * same limits apply to it. */
    lr_model_config k = *c;
    snprintf(k.arch, sizeof k.arch, "qwen3");
    return lr_arch_check_config(&k, label);
}

int lr_src_add(lr_src *s, const char *name, int layer, const char *role, int ndim, uint64_t rows, uint64_t cols,
               const char *origin, lr_src_tensor **added)
{
    int wnd;
    uint64_t wr, wc;
    lr_src_role_shape(&s->cfg, role, &wnd, &wr, &wc);
    if (ndim != wnd || rows != wr || cols != wc) {
        char got[48], want[48];
        if (ndim == 1) snprintf(got, sizeof got, "[%llu]", (unsigned long long)cols);
        else snprintf(got, sizeof got, "[%llu, %llu]", (unsigned long long)rows, (unsigned long long)cols);
        if (wnd == 1) snprintf(want, sizeof want, "[%llu]", (unsigned long long)wc);
        else snprintf(want, sizeof want, "[%llu, %llu]", (unsigned long long)wr, (unsigned long long)wc);
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: shape %s but the config implies %s for %s", s->label, origin, got,
                       want, name);
    }
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name))
            return LR_FAIL(LR_EFORMAT, "%s: tensors %s and %s are both %s", s->label, s->t[i].origin, origin, name);
    if (s->n % 64 == 0) {
        lr_src_tensor *t = realloc(s->t, (size_t)(s->n + 64) * sizeof *t);
        if (!t) return LR_FAIL(LR_ENOMEM, "%s: out of memory", s->label);
        s->t = t;
    }
    lr_src_tensor *t = &s->t[s->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->origin, sizeof t->origin, "%s", origin);
    t->layer = layer;
    t->ndim = ndim;
    t->rows = rows;
    t->cols = cols;
    if (added) *added = t;
    return LR_OK;
}

/* Canonical order: token_embd, each layer's roles in order, output_norm, output. */
static long order_key(const lr_src *s, const lr_src_tensor *t)
{
    int nr;
    const char *const *roles = lr_src_layer_roles(s->cfg.arch, &nr);
    if (t->layer < 0) return !strcmp(t->name, "token_embd") ? -1 : !strcmp(t->name, "output_norm") ? LONG_MAX - 1 : LONG_MAX;
    const char *dot = strchr(t->name + 4, '.'), *role = dot ? dot + 1 : "";
    for (int i = 0; i < nr; i++)
        if (!strcmp(role, roles[i])) return (long)t->layer * 64 + i;
    return (long)t->layer * 64 + 63;
}

typedef struct { long key; int i; } keyed;
static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : x->i - y->i;
}

static int sort_canonical(lr_src *s)
{
    keyed *k = malloc((size_t)(s->n ? s->n : 1) * sizeof *k);
    lr_src_tensor *t = malloc((size_t)(s->n ? s->n : 1) * sizeof *t);
    if (!k || !t) {
        free(k);
        free(t);
        return LR_FAIL(LR_ENOMEM, "%s: out of memory", s->label);
    }
    for (int i = 0; i < s->n; i++) k[i] = (keyed){ order_key(s, &s->t[i]), i };
    qsort(k, (size_t)s->n, sizeof *k, by_key);
    for (int i = 0; i < s->n; i++) t[i] = s->t[k[i].i];
    free(k);
    free(s->t);
    s->t = t;
    return LR_OK;
}

int lr_src_check_complete(lr_src *s)
{
    char name[64];
    int nr;
    const char *const *roles = lr_src_layer_roles(s->cfg.arch, &nr);
    if (!lr_src_find(s, "token_embd")) return LR_FAIL(LR_EFORMAT, "%s: no token embedding", s->label);
    if (!lr_src_find(s, "output_norm")) return LR_FAIL(LR_EFORMAT, "%s: no final norm (output_norm)", s->label);
    if (!s->cfg.tied_head && !lr_src_find(s, "output"))
        return LR_FAIL(LR_EFORMAT, "%s: the head is not tied to the embedding but there is no output tensor", s->label);
    for (uint32_t l = 0; l < s->cfg.n_layers; l++)
        for (int i = 0; i < nr; i++) {
            lr_tensor_name(name, (int)l, roles[i]);
            if (!lr_src_find(s, name)) return LR_FAIL(LR_EFORMAT, "%s: tensor %s is missing", s->label, name);
        }
    return sort_canonical(s);
}

const lr_src_tensor *lr_src_find(const lr_src *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name)) return &s->t[i];
    return NULL;
}

int lr_src_read(const lr_src *s, const lr_src_tensor *t, uint64_t r0, uint64_t n, float *out)
{
    if (r0 > t->rows || n > t->rows - r0)
        return LR_FAIL(LR_ERANGE, "%s: tensor %s: rows [%llu, +%llu) past its %llu", s->label, t->name,
                       (unsigned long long)r0, (unsigned long long)n, (unsigned long long)t->rows);
    return s->read_rows(s, t, r0, n, out);
}

void lr_src_close(lr_src *s)
{
    if (!s) return;
    if (s->close) s->close(s);
    free(s->tok);
    free(s->t);
    free(s);
}

int lr_gzip(const void *in, size_t n, void **out, size_t *out_n)
{
    *out = NULL;
    *out_n = 0;
    if (n > (1u << 30)) return LR_FAIL(LR_EINVAL, "gzip: %zu bytes is over 1 GiB", n);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return LR_FAIL(LR_ENOMEM, "gzip: deflateInit2 failed");
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return LR_FAIL(LR_ENOMEM, "gzip: out of memory for %zu bytes", cap);
    }
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int zr = deflate(&z, Z_FINISH);
    size_t got = cap - z.avail_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END) {
        free(buf);
        return LR_FAIL(LR_EINVAL, "gzip: deflate failed (%d)", zr);
    }
    *out = buf;
    *out_n = got;
    return LR_OK;
}
