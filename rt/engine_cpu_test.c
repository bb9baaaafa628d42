/* The CPU engine against an independent f64 forward pass written here: dense
 * weights with the rotation folded in (W Q from the dense Q of the seed, not
 * the fast transform the engine uses), attention recomputed from scratch over
 * the whole prefix (no KV cache), RoPE from its definition. Plus: cached and
 * streamed weights agree bit for bit, thread counts do not change a bit,
 * reset, context limits, the layer hook. On the tiny synthetic model. */
#include "kernels/rotation.h"
#include "loader/parallel.h"
#include "loader/synthetic.h"
#include "rt/engine_cpu.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[] = "/tmp/lr-engine-test-XXXXXX";
static char g_path[256], g_llama[256], g_full[256]; /* g_full: attn_output rotated over its whole width */
static char g_rres[256];                            /* the residual stream held rotated */

/* A synthetic model (config name), generated once per run. */
static const char *synth_path_or(const char *name, char *g_path, int o_full, int rres)
{
    if (g_path[0]) return g_path;
    /* once: mkdtemp's random suffix may itself contain an 'X' */
    static int made;
    if (!made && !mkdtemp(g_dir)) return NULL;
    made = 1;
    snprintf(g_path, 256, "%s/%s%s%s.lrt", g_dir, name, o_full ? "-o-full" : "", rres ? "-rres" : "");
    lr_model_config cfg;
    lr_synth_opts o = { .seed = 7, .nthreads = 2, .gain_bits = 1, .o_rot_full = o_full, .rotated_residual = rres };
    if (lr_synth_config(name, &cfg) || lr_synth_write(g_path, &cfg, &o)) {
        fprintf(stderr, "    %s model: %s\n", name, lr_errmsg());
        g_path[0] = 0;
        return NULL;
    }
    return g_path;
}

static const char *synth_path_o(const char *name, char *g_path, int o_full)
{
    return synth_path_or(name, g_path, o_full, 0);
}
static const char *synth_path(const char *name, char *g_path) { return synth_path_o(name, g_path, 0); }
static const char *tiny_path(void) { return synth_path("tiny", g_path); }

/* ---- the f64 reference ---- */

typedef struct {
    int rows, cols;
    double *w;
} dmat;

typedef struct {
    double *an, *fn, *qn, *kn;
    dmat q, k, v, o, gate, up, down;
} dlayer;

typedef struct {
    lr_model_config c;
    dlayer *L;
    dmat embd, head;
    double *on;
} dref;

static int dense(const lr_model *m, const char *name, dmat *d)
{
    const lr_tensor_view *t = lr_model_tensor(m, name);
    if (!t) return LR_FAIL(LR_EINVAL, "no %s", name);
    int rows = (int)t->rows, cols = (int)t->cols;
    float *f = malloc((size_t)rows * cols * 4);
    double *w = malloc((size_t)rows * cols * 8);
    int rc = lr_tensor_dequant_rows(t, 0, (uint64_t)rows, f);
    for (size_t i = 0; !rc && i < (size_t)rows * cols; i++) w[i] = f[i];
    free(f);
    /* a rotated residual's readers take it as it is: W is already against its basis */
    const int as_is = lr_model_cfg(m)->rotated_residual && lr_reads_residual(name);
    if (!rc && t->codec == LR_CODEC_LEECH && t->u.leech.rot_kind != LR_ROT_NONE && !as_is) {
        /* y = W (Q x) = (W Q) x: fold the dense Q into the rows (per head: block-diagonal). */
        lr_rot r;
        double *q = malloc((size_t)cols * cols * 8), *row = malloc((size_t)cols * 8);
        rc = t->u.leech.rot_kind == LR_ROT_HEADS
                 ? lr_rot_init_blocks(&r, cols, (int)lr_model_cfg(m)->head_dim, t->u.leech.rot_seed)
                 : lr_rot_init(&r, cols, t->u.leech.rot_seed);
        if (!rc) rc = lr_rot_dense(&r, q);
        for (int i = 0; !rc && i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                double s = 0;
                for (int k = 0; k < cols; k++) s += w[(size_t)i * cols + k] * q[(size_t)k * cols + j];
                row[j] = s;
            }
            memcpy(w + (size_t)i * cols, row, (size_t)cols * 8);
        }
        if (r.n) lr_rot_free(&r);
        free(q);
        free(row);
    }
    d->rows = rows;
    d->cols = cols;
    d->w = w;
    return rc;
}

static int dvec(const lr_model *m, const char *name, double **v)
{
    dmat d;
    int rc = dense(m, name, &d);
    *v = d.w;
    return rc;
}

static int ref_open(const lr_model *m, dref *r)
{
    memset(r, 0, sizeof *r);
    r->c = *lr_model_cfg(m);
    r->L = calloc(r->c.n_layers, sizeof *r->L);
    int rc = dense(m, "token_embd", &r->embd);
    if (!rc) rc = dense(m, r->c.tied_head ? "token_embd" : "output", &r->head);
    if (!rc) rc = dvec(m, "output_norm", &r->on);
    char n[64];
#define LOAD(field, role, fn)                                  \
    if (!rc) {                                                 \
        snprintf(n, sizeof n, "blk.%u.%s", l, role);           \
        rc = fn(m, n, &L->field);                              \
    }
    for (uint32_t l = 0; l < r->c.n_layers && !rc; l++) {
        dlayer *L = &r->L[l];
        LOAD(an, "attn_norm", dvec) LOAD(fn, "ffn_norm", dvec)
        if (lr_model_layer_tensor(m, (int)l, "attn_q_norm")) { /* Qwen3; Llama has none */
            LOAD(qn, "attn_q_norm", dvec) LOAD(kn, "attn_k_norm", dvec)
        }
        LOAD(q, "attn_q", dense) LOAD(k, "attn_k", dense) LOAD(v, "attn_v", dense)
        LOAD(o, "attn_output", dense) LOAD(gate, "ffn_gate", dense) LOAD(up, "ffn_up", dense)
        LOAD(down, "ffn_down", dense)
    }
#undef LOAD
    return rc;
}

static void ref_free(dref *r)
{
    for (uint32_t l = 0; r->L && l < r->c.n_layers; l++) {
        dlayer *L = &r->L[l];
        free(L->an); free(L->fn); free(L->qn); free(L->kn);
        free(L->q.w); free(L->k.w); free(L->v.w); free(L->o.w); free(L->gate.w); free(L->up.w); free(L->down.w);
    }
    free(r->L);
    free(r->embd.w);
    free(r->head.w);
    free(r->on);
}

static void mv(const dmat *m, const double *x, double *y)
{
    for (int i = 0; i < m->rows; i++) {
        double s = 0;
        for (int j = 0; j < m->cols; j++) s += m->w[(size_t)i * m->cols + j] * x[j];
        y[i] = s;
    }
}

static void norm(const double *x, const double *w, int n, double eps, double *y)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    double s = 1 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) y[i] = x[i] * s * w[i];
}

/* Rotary embedding by definition: the pair (v[i], v[i + d/2]) is the complex
 * number v[i] + j v[i + d/2], multiplied by e^{j pos theta^(-2i/d)}. */
static void rope_ref(double *v, int d, int pos, double theta)
{
    for (int i = 0; i < d / 2; i++) {
        double a = pos / pow(theta, (2.0 * i) / d), re = v[i], im = v[i + d / 2];
        v[i] = re * cos(a) - im * sin(a);
        v[i + d / 2] = re * sin(a) + im * cos(a);
    }
}

/* Logits after tokens[0..p), everything recomputed for every position. */
static void ref_logits(const dref *r, const int32_t *tok, int p, double *logits)
{
    const lr_model_config *c = &r->c;
    int h = (int)c->hidden, hd = (int)c->head_dim, nh = (int)c->n_heads, nkv = (int)c->n_kv_heads;
    int qd = nh * hd, kvd = nkv * hd, ff = (int)c->intermediate;
    double *X = malloc((size_t)p * h * 8), *Q = malloc((size_t)p * qd * 8), *K = malloc((size_t)p * kvd * 8);
    double *V = malloc((size_t)p * kvd * 8), *xn = malloc((size_t)h * 8), *a = malloc((size_t)qd * 8);
    double *y = malloc((size_t)h * 8), *g = malloc((size_t)ff * 8), *u = malloc((size_t)ff * 8);
    double *sc = malloc((size_t)p * 8);
    for (int t = 0; t < p; t++) memcpy(X + (size_t)t * h, r->embd.w + (size_t)tok[t] * h, (size_t)h * 8);
    for (uint32_t l = 0; l < c->n_layers; l++) {
        const dlayer *L = &r->L[l];
        for (int t = 0; t < p; t++) {
            norm(X + (size_t)t * h, L->an, h, c->norm_eps, xn);
            double *q = Q + (size_t)t * qd, *k = K + (size_t)t * kvd;
            mv(&L->q, xn, q);
            mv(&L->k, xn, k);
            mv(&L->v, xn, V + (size_t)t * kvd);
            for (int i = 0; i < nh; i++) {
                if (L->qn) norm(q + i * hd, L->qn, hd, c->norm_eps, q + i * hd);
                rope_ref(q + i * hd, hd, t, c->rope_theta);
            }
            for (int i = 0; i < nkv; i++) {
                if (L->kn) norm(k + i * hd, L->kn, hd, c->norm_eps, k + i * hd);
                rope_ref(k + i * hd, hd, t, c->rope_theta);
            }
        }
        for (int t = 0; t < p; t++) {
            for (int i = 0; i < nh; i++) {
                int kh = i / (nh / nkv);
                double mx = -INFINITY, sum = 0;
                for (int s = 0; s <= t; s++) {
                    double d = 0;
                    for (int e = 0; e < hd; e++) d += Q[(size_t)t * qd + i * hd + e] * K[(size_t)s * kvd + kh * hd + e];
                    sc[s] = d / sqrt(hd);
                    mx = fmax(mx, sc[s]);
                }
                for (int s = 0; s <= t; s++) sum += sc[s] = exp(sc[s] - mx);
                for (int e = 0; e < hd; e++) {
                    double acc = 0;
                    for (int s = 0; s <= t; s++) acc += sc[s] / sum * V[(size_t)s * kvd + kh * hd + e];
                    a[i * hd + e] = acc;
                }
            }
            mv(&L->o, a, y);
            for (int i = 0; i < h; i++) X[(size_t)t * h + i] += y[i];
            norm(X + (size_t)t * h, L->fn, h, c->norm_eps, xn);
            mv(&L->gate, xn, g);
            mv(&L->up, xn, u);
            for (int i = 0; i < ff; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
            mv(&L->down, g, y);
            for (int i = 0; i < h; i++) X[(size_t)t * h + i] += y[i];
        }
    }
    norm(X + (size_t)(p - 1) * h, r->on, h, c->norm_eps, xn);
    mv(&r->head, xn, logits);
    free(X); free(Q); free(K); free(V); free(xn); free(a); free(y); free(g); free(u); free(sc);
}

/* max |a - b| / max |b| */
static double rel_err(const float *a, const double *b, int n)
{
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        num = fmax(num, fabs(a[i] - b[i]));
        den = fmax(den, fabs(b[i]));
    }
    return num / den;
}

static void tokens(int32_t *t, int n, int vocab, uint64_t seed)
{
    lr_rng r;
    lr_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) t[i] = (int32_t)lr_rng_below(&r, (uint64_t)vocab);
}

/* ---- tests ---- */

/* Every step of a 20-token decode against the from-scratch reference; the
 * KV cache grows (16 -> 20 positions) on the way. */
static int matches_f64_reference(const char *path)
{
    T_ASSERT(path, "no model");
    lr_model *m;
    T_OK(lr_model_open(path, 0, &m));
    dref r;
    T_OK(ref_open(m, &r));
    lr_engine *e;
    /* more threads than CPUs are capped at the CPUs (one engine opened and closed to see it) */
    lr_engine_opts many = { .nthreads = 4096 };
    lr_engine_cpu_info ci;
    T_OK(lr_engine_cpu_open(m, &many, &e));
    lr_engine_cpu_info_get(e, &ci);
    e->ops->close(e);
    T_ASSERT(ci.nthreads == lr_cpu_count(), "4096 threads asked, %d kept (%d CPUs)", ci.nthreads, lr_cpu_count());
    lr_engine_opts o = { .nthreads = 2 };
    T_OK(lr_engine_cpu_open(m, &o, &e));
    int vocab = (int)r.c.vocab, n = 20;
    int32_t tok[20];
    tokens(tok, n, vocab, 11);
    double *ref = malloc((size_t)vocab * 8), worst = 0;
    for (int p = 1; p <= n; p++) {
        const float *logits;
        T_OK(e->ops->step(e, tok[p - 1], &logits));
        T_ASSERT(e->pos == p, "pos %d after %d steps", e->pos, p);
        ref_logits(&r, tok, p, ref);
        double err = rel_err(logits, ref, vocab);
        worst = fmax(worst, err);
        T_ASSERT(err <= 1e-4, "step %d: logits differ from the f64 reference by %.3g (relative to max |logit|)", p, err);
    }
    printf("    worst relative logit error over %d steps: %.3g\n", n, worst);
    free(ref);
    e->ops->close(e);
    ref_free(&r);
    lr_model_close(m);
    return T_PASS;
}

static int test_matches_f64_reference(void) { return matches_f64_reference(tiny_path()); }
/* The Llama path: no per-head q/k norms. */
static int test_llama_matches_f64_reference(void) { return matches_f64_reference(synth_path("tiny-llama", g_llama)); }
/* attn_output rotated over its whole width (rotation kind 1; the synthetic
 * default is per head, kind 2, which the tests above run: the engine
 * rotates each head with the host rotation, the reference folds the
 * block-diagonal Q). */
static int test_o_full_matches_f64_reference(void)
{
    return matches_f64_reference(synth_path_o("tiny", g_full, 1));
}

/* The residual stream held rotated (config flag): q|k|v and gate|up take the
 * normed stream with no rotation, their stored rows already against it; the
 * reference multiplies them as stored. */
static int test_rotated_residual_matches_f64_reference(void)
{
    const char *p = synth_path_or("tiny", g_rres, 0, 1);
    lr_model *m;
    if (!p || lr_model_open(p, 0, &m)) return T_FAIL;
    const int flag = lr_model_cfg(m)->rotated_residual;
    char name[sizeof lr_model_cfg(m)->name];
    snprintf(name, sizeof name, "%s", lr_model_cfg(m)->name);
    lr_model_close(m);
    T_ASSERT(flag == 1, "the synthetic model lacks the rotated-residual flag");
    T_ASSERT(!strcmp(name, "qwen3-tiny-synthetic-rotated") || !strcmp(name, "llama-tiny-synthetic-rotated"),
             "rotated synthetic model named %s", name);
    return matches_f64_reference(p);
}

static int run_steps(lr_engine *e, const int32_t *tok, int n, float *last)
{
    const float *l = NULL;
    for (int i = 0; i < n; i++) T_OK(e->ops->step(e, tok[i], &l));
    memcpy(last, l, lr_model_cfg(e->model)->vocab * sizeof(float));
    return T_PASS;
}

/* Cached f32 weights vs rows dequantized on every use, 1 vs 2 threads, and
 * a reset replaying a prefix: all bit-identical. */
static int test_streamed_threads_reset_identical(void)
{
    const char *path = tiny_path();
    T_ASSERT(path, "no tiny model");
    lr_model *m;
    T_OK(lr_model_open(path, 0, &m));
    int vocab = (int)lr_model_cfg(m)->vocab, n = 9;
    int32_t tok[9];
    tokens(tok, n, vocab, 12);
    lr_engine_opts oc = { .nthreads = 1 }, os = { .nthreads = 2, .cache_bytes = 1 };
    lr_engine *ec, *es;
    T_OK(lr_engine_cpu_open(m, &oc, &ec));
    T_OK(lr_engine_cpu_open(m, &os, &es));
    lr_engine_cpu_info ic, is;
    lr_engine_cpu_info_get(ec, &ic);
    lr_engine_cpu_info_get(es, &is);
    T_ASSERT(ic.streamed == 0 && ic.cached == 15, "cached engine: %d cached, %d streamed", ic.cached, ic.streamed);
    T_ASSERT(is.cached == 0 && is.streamed == 15, "streaming engine: %d cached, %d streamed", is.cached, is.streamed);
    float *a = malloc((size_t)vocab * 4), *b = malloc((size_t)vocab * 4), *c = malloc((size_t)vocab * 4);
    if (run_steps(ec, tok, n, a) || run_steps(es, tok, n, b)) return T_FAIL;
    T_ASSERT(!memcmp(a, b, (size_t)vocab * 4), "streamed weights changed the logits");
    /* Replay a prefix after reset: the cache is overwritten, not appended to. */
    T_OK(ec->ops->reset(ec));
    T_ASSERT(ec->pos == 0, "pos %d after reset", ec->pos);
    if (run_steps(ec, tok, 4, c)) return T_FAIL;
    T_OK(es->ops->reset(es));
    if (run_steps(es, tok, 4, b)) return T_FAIL;
    T_ASSERT(!memcmp(b, c, (size_t)vocab * 4), "prefix after reset differs");
    T_OK(ec->ops->reset(ec));
    if (run_steps(ec, tok, n, c)) return T_FAIL;
    T_ASSERT(!memcmp(a, c, (size_t)vocab * 4), "replay after reset differs");
    free(a); free(b); free(c);
    ec->ops->close(ec);
    es->ops->close(es);
    lr_model_close(m);
    return T_PASS;
}

static int test_context_and_token_limits(void)
{
    const char *path = tiny_path();
    T_ASSERT(path, "no tiny model");
    lr_model *m;
    T_OK(lr_model_open(path, 0, &m));
    lr_engine_opts o = { .max_context = 3, .nthreads = 1 };
    lr_engine *e;
    T_OK(lr_engine_cpu_open(m, &o, &e));
    T_ASSERT(e->max_context == 3, "max_context %d", e->max_context);
    const float *l;
    T_ASSERT(e->ops->step(e, 512, &l) == LR_EINVAL && strstr(lr_errmsg(), "vocabulary"), "token 512: %s", lr_errmsg());
    T_ASSERT(e->ops->step(e, -1, &l) == LR_EINVAL, "token -1 accepted");
    for (int i = 0; i < 3; i++) T_OK(e->ops->step(e, 5 + i, &l));
    T_ASSERT(e->ops->step(e, 1, &l) == LR_ERANGE && strstr(lr_errmsg(), "context full"), "4th step: %s", lr_errmsg());
    T_ASSERT(e->pos == 3, "pos moved to %d on a failed step", e->pos);
    e->ops->close(e);
    lr_model_close(m);
    return T_PASS;
}

typedef struct {
    int calls, bad, last_layer;
    float first;
} hook_log;

static void hook(void *user, int layer, int pos, const float *x, int n)
{
    hook_log *h = user;
    if (n != 256 || pos != 0 || layer != h->last_layer + 1) h->bad++;
    if (layer == -1) h->first = x[0];
    h->last_layer = layer;
    h->calls++;
}

/* The layer hook sees embedding, each layer and the final norm, in order. */
static int test_layer_hook(void)
{
    const char *path = tiny_path();
    T_ASSERT(path, "no tiny model");
    lr_model *m;
    T_OK(lr_model_open(path, 0, &m));
    lr_engine *e;
    T_OK(lr_engine_cpu_open(m, NULL, &e));
    hook_log h = { 0, 0, -2, 0 };
    e->on_layer = hook;
    e->on_layer_user = &h;
    const float *l;
    T_OK(e->ops->step(e, 42, &l));
    T_ASSERT(h.calls == 4 && !h.bad && h.last_layer == 2, "%d calls, %d out of order, last layer %d", h.calls, h.bad,
             h.last_layer);
    float row[256];
    T_OK(lr_tensor_dequant_rows(lr_model_tensor(m, "token_embd"), 42, 1, row));
    T_ASSERT(h.first == row[0], "layer -1 is not the embedding row");
    e->ops->close(e);
    lr_model_close(m);
    return T_PASS;
}

static int cleanup(void)
{
    if (g_path[0]) unlink(g_path);
    if (g_llama[0]) unlink(g_llama);
    if (g_full[0]) unlink(g_full);
    if (g_rres[0]) unlink(g_rres);
    if (g_path[0] || g_llama[0] || g_full[0] || g_rres[0]) rmdir(g_dir);
    return T_PASS;
}

T_MAIN(T_CASE(test_matches_f64_reference), T_CASE(test_llama_matches_f64_reference), T_CASE(test_o_full_matches_f64_reference),
       T_CASE(test_rotated_residual_matches_f64_reference), T_CASE(test_streamed_threads_reset_identical),
       T_CASE(test_context_and_token_limits), T_CASE(test_layer_hook), T_CASE(cleanup))
