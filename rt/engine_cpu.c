/* The CPU reference engine (rt/engine_cpu.h). One decode step, top to bottom:
 *
 *   x = embedding row of the token
 *   per layer:  x += o( attention( rope(qnorm(q(n1(x)))), rope(knorm(k(n1(x)))), v(n1(x)) ) )
 *               x += down( silu(gate(n2(x))) * up(n2(x)) )
 *   logits = head( final_norm(x) )
 *
 * A projection of a rotated (Leech) tensor first rotates its input with the
 * tensor's own seed (kernels/rotation.h): the stored rows live in that basis;
 * except, in a model whose residual stream is held rotated (config
 * rotated_residual, docs/format.md), the projections reading that stream: their
 * input already is in the basis (the reader checked the seeds agree). */
#include "rt/engine_cpu.h"
#include "rt/sampler.h"
#include "kernels/rotation.h"
#include "loader/arch.h"
#include "loader/parallel.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- state ---- */

typedef struct {
    const lr_tensor_view *t;
    float *w;   /* [rows][cols] f32 when cached; NULL: dequantized per use */
    lr_rot rot; /* input rotation; rot.n == 0 when there is none */
} cpu_mat;

typedef struct {
    float *attn_norm, *ffn_norm;
    float *q_norm, *k_norm; /* per-head norms (Qwen3); NULL when absent (Llama) */
    cpu_mat q, k, v, o, gate, up, down;
    float *kc, *vc;         /* [cap][kv_dim] */
} cpu_layer;

typedef struct {
    lr_engine base;
    lr_model_config c;
    int nthreads;
    cpu_layer *layer;
    const lr_tensor_view *embd;
    float *out_norm;
    cpu_mat head;
    int cap;                /* positions the caches hold now (grown by doubling) */
    int qdim, kvdim;
    float *x, *xn, *xr, *q, *k, *v, *att, *ff_g, *ff_u, *tmp, *logits;
    double *scores, *rotbuf;
    size_t cached_bytes;
    int ncached, nstreamed;
} cpu_engine;

#define MAT_ROLES 7
static cpu_mat *layer_mat(cpu_layer *l, int i)
{
    cpu_mat *m[MAT_ROLES] = { &l->q, &l->k, &l->v, &l->o, &l->gate, &l->up, &l->down };
    return m[i];
}
static const char *const k_mat_roles[MAT_ROLES] = { "attn_q", "attn_k", "attn_v", "attn_output",
                                                    "ffn_gate", "ffn_up", "ffn_down" };

/* ---- small math: f32 storage, f64 sums ---- */

static void rmsnorm(float *out, const float *x, const float *w, int n, double eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    double s = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) out[i] = (float)((double)x[i] * s * w[i]);
}

/* Eight f64 partial sums: one chain of dependent adds would cap the engine
 * at one add per ~4 cycles; eight independent ones pipeline and vectorize.
 * The order is fixed, so results never depend on threads or caching. */
static double dot(const float *w, const float *x, uint64_t n)
{
    double s[8] = { 0 };
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += (double)w[i + (uint64_t)k] * x[i + (uint64_t)k];
    for (; i < n; i++) s[0] += (double)w[i] * x[i];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

/* Hugging Face "rotate_half" RoPE: dimension i pairs with i + head_dim/2 and
 * turns by pos * theta^(-2i/head_dim). */
static void rope(float *v, int nheads, int hd, int pos, double theta)
{
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        double a = pos * pow(theta, -2.0 * i / hd), c = cos(a), s = sin(a);
        for (int h = 0; h < nheads; h++) {
            float *p = v + (size_t)h * hd;
            double x1 = p[i], x2 = p[i + half];
            p[i] = (float)(x1 * c - x2 * s);
            p[i + half] = (float)(x2 * c + x1 * s);
        }
    }
}

/* ---- matvec: y = W (R x) over cached or streamed rows ---- */

typedef struct {
    const cpu_mat *m;
    const float *in;
    float *y;
    int njobs;
} mv_job;

/* Rows dequantized per block when the matrix is not cached: ~1 MB of f32. */
static uint64_t stream_rows(const lr_tensor_view *t)
{
    uint64_t r = (1u << 18) / (t->cols ? t->cols : 1);
    return r ? r : 1;
}

static int mv_rows(void *ctx, int job)
{
    mv_job *j = ctx;
    const lr_tensor_view *t = j->m->t;
    uint64_t rows = t->rows, cols = t->cols;
    uint64_t r0 = rows * (uint64_t)job / (uint64_t)j->njobs, r1 = rows * (uint64_t)(job + 1) / (uint64_t)j->njobs;
    if (j->m->w) {
        for (uint64_t r = r0; r < r1; r++) j->y[r] = (float)dot(j->m->w + r * cols, j->in, cols);
        return LR_OK;
    }
    uint64_t step = stream_rows(t);
    float *buf = malloc((size_t)(step * cols) * sizeof *buf);
    if (!buf) return LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name);
    int rc = LR_OK;
    for (uint64_t r = r0; r < r1 && !rc; r += step) {
        uint64_t n = r1 - r < step ? r1 - r : step;
        rc = lr_tensor_dequant_rows(t, r, n, buf);
        for (uint64_t i = 0; i < n && !rc; i++) j->y[r + i] = (float)dot(buf + i * cols, j->in, cols);
    }
    free(buf);
    return rc;
}

static int matvec(cpu_engine *e, const cpu_mat *m, const float *x, float *y)
{
    const float *in = x;
    uint64_t cols = m->t->cols;
    if (m->rot.n) {
        for (uint64_t i = 0; i < cols; i++) e->rotbuf[i] = x[i];
        int rc = lr_rot_apply(&m->rot, e->rotbuf, e->rotbuf);
        if (rc) return lr_wrap(rc, "tensor %s: input rotation", m->t->name);
        for (uint64_t i = 0; i < cols; i++) e->xr[i] = (float)e->rotbuf[i];
        in = e->xr;
    }
    /* Threads pay off only on big matrices (a thread start costs ~20 us);
     * every row is the same f64 sum either way, so results do not depend on
     * the thread count. */
    uint64_t work = m->t->rows * cols * (m->w ? 1 : 8);
    int njobs = e->nthreads > 1 && work >= (1u << 20) ? e->nthreads : 1;
    mv_job j = { m, in, y, njobs };
    return lr_parallel_for(njobs, njobs, mv_rows, &j);
}

/* ---- open ---- */

static int load_vec(const lr_model *md, int layer, const char *role, uint64_t n, int optional, float **out)
{
    *out = NULL;
    char name[64];
    lr_tensor_name(name, layer, role);
    const lr_tensor_view *t = lr_model_tensor(md, name);
    if (!t) return optional ? LR_OK : LR_FAIL(LR_EFORMAT, "%s: no tensor %s", lr_model_path(md), name);
    if (t->nelem != n)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s has %llu elements, expected %llu", lr_model_path(md), name,
                       (unsigned long long)t->nelem, (unsigned long long)n);
    if (!(*out = malloc((size_t)n * sizeof **out))) return LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", name);
    return lr_tensor_dequant_rows(t, 0, 1, *out);
}

static int init_mat(const lr_model *md, const char *name, uint64_t rows, uint64_t cols, cpu_mat *m)
{
    memset(m, 0, sizeof *m);
    m->t = lr_model_tensor(md, name);
    if (!m->t) return LR_FAIL(LR_EFORMAT, "%s: no tensor %s", lr_model_path(md), name);
    if (m->t->ndim != 2 || m->t->rows != rows || m->t->cols != cols)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s is %llux%llu, expected %llux%llu", lr_model_path(md), name,
                       (unsigned long long)m->t->rows, (unsigned long long)m->t->cols, (unsigned long long)rows,
                       (unsigned long long)cols);
    if (lr_model_cfg(md)->rotated_residual && lr_reads_residual(name)) {
        /* stored against R, which the residual stream carries: nothing to apply */
    } else if (m->t->codec == LR_CODEC_LEECH && m->t->u.leech.rot_kind == LR_ROT_HADAMARD) {
        int rc = lr_rot_init(&m->rot, (int)cols, m->t->u.leech.rot_seed);
        if (rc) return lr_wrap(rc, "tensor %s", name);
    } else if (m->t->codec == LR_CODEC_LEECH && m->t->u.leech.rot_kind == LR_ROT_HEADS) {
        /* per head (the reader allows it on attn_output only): blocks of head_dim */
        int rc = lr_rot_init_blocks(&m->rot, (int)cols, (int)lr_model_cfg(md)->head_dim, m->t->u.leech.rot_seed);
        if (rc) return lr_wrap(rc, "tensor %s", name);
    } else if (m->t->codec == LR_CODEC_LEECH && m->t->u.leech.rot_kind != LR_ROT_NONE) {
        return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: rotation kind %d", name, m->t->u.leech.rot_kind);
    }
    return LR_OK;
}

/* Dequantization at open: jobs of ~1M weights over the matrices chosen for
 * the cache, run on all threads. */
typedef struct {
    cpu_mat *m;
    uint64_t r0, n;
} dq_job;

static int dq_run(void *ctx, int job)
{
    dq_job *j = (dq_job *)ctx + job;
    return lr_tensor_dequant_rows(j->m->t, j->r0, j->n, j->m->w + j->r0 * j->m->t->cols);
}

static size_t default_budget(void)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0) return (size_t)1 << 30;
    return (size_t)pages * (size_t)psize / 2;
}

static int fill_cache(cpu_engine *e, size_t budget)
{
    int nm = (int)e->c.n_layers * MAT_ROLES + 1, njobs = 0, cap = 0;
    dq_job *jobs = NULL;
    int rc = LR_OK;
    for (int i = 0; i < nm && !rc; i++) {
        cpu_mat *m = i < nm - 1 ? layer_mat(&e->layer[i / MAT_ROLES], i % MAT_ROLES) : &e->head;
        size_t bytes = (size_t)(m->t->rows * m->t->cols) * sizeof(float);
        if (e->cached_bytes + bytes > budget || !(m->w = malloc(bytes))) {
            e->nstreamed++;
            continue;
        }
        e->cached_bytes += bytes;
        e->ncached++;
        uint64_t step = (1u << 20) / m->t->cols + 1;
        for (uint64_t r = 0; r < m->t->rows; r += step) {
            if (njobs == cap) {
                cap = cap ? 2 * cap : 256;
                dq_job *nj = realloc(jobs, (size_t)cap * sizeof *nj);
                if (!nj) { rc = LR_FAIL(LR_ENOMEM, "out of memory"); break; }
                jobs = nj;
            }
            jobs[njobs++] = (dq_job){ m, r, m->t->rows - r < step ? m->t->rows - r : step };
        }
    }
    if (!rc) rc = lr_parallel_for(e->nthreads, njobs, dq_run, jobs);
    free(jobs);
    return rc;
}

static void free_mat(cpu_mat *m)
{
    free(m->w);
    if (m->rot.n) lr_rot_free(&m->rot);
}

static void cpu_close(lr_engine *base)
{
    cpu_engine *e = (cpu_engine *)base;
    if (!e) return;
    for (uint32_t l = 0; e->layer && l < e->c.n_layers; l++) {
        cpu_layer *L = &e->layer[l];
        free(L->attn_norm); free(L->ffn_norm); free(L->q_norm); free(L->k_norm);
        for (int i = 0; i < MAT_ROLES; i++) free_mat(layer_mat(L, i));
        free(L->kc); free(L->vc);
    }
    free(e->layer);
    free_mat(&e->head);
    free(e->out_norm);
    free(e->x); free(e->xn); free(e->xr); free(e->q); free(e->k); free(e->v); free(e->att);
    free(e->ff_g); free(e->ff_u); free(e->tmp); free(e->logits);
    free(e->scores); free(e->rotbuf);
    free(e);
}

static int open_weights(cpu_engine *e, const lr_model *md)
{
    const lr_model_config *c = &e->c;
    uint64_t h = c->hidden, hd = c->head_dim, ff = c->intermediate;
    uint64_t dims[MAT_ROLES][2] = { { (uint64_t)e->qdim, h }, { (uint64_t)e->kvdim, h }, { (uint64_t)e->kvdim, h },
                                    { h, (uint64_t)e->qdim }, { ff, h }, { ff, h }, { h, ff } };
    int rc = LR_OK;
    for (uint32_t l = 0; l < c->n_layers && !rc; l++) {
        cpu_layer *L = &e->layer[l];
        if ((rc = load_vec(md, (int)l, "attn_norm", h, 0, &L->attn_norm)) ||
            (rc = load_vec(md, (int)l, "ffn_norm", h, 0, &L->ffn_norm)) ||
            (rc = load_vec(md, (int)l, "attn_q_norm", hd, 1, &L->q_norm)) ||
            (rc = load_vec(md, (int)l, "attn_k_norm", hd, 1, &L->k_norm)))
            break;
        for (int i = 0; i < MAT_ROLES && !rc; i++) {
            char name[64];
            lr_tensor_name(name, (int)l, k_mat_roles[i]);
            rc = init_mat(md, name, dims[i][0], dims[i][1], layer_mat(L, i));
        }
    }
    if (!rc) rc = load_vec(md, -1, "output_norm", h, 0, &e->out_norm);
    if (!rc && !(e->embd = lr_model_tensor(md, "token_embd")))
        rc = LR_FAIL(LR_EFORMAT, "%s: no tensor token_embd", lr_model_path(md));
    if (!rc && (e->embd->rows != c->vocab || e->embd->cols != h))
        rc = LR_FAIL(LR_EFORMAT, "%s: token_embd is not vocab x hidden", lr_model_path(md));
    if (!rc) rc = init_mat(md, c->tied_head ? "token_embd" : "output", c->vocab, h, &e->head);
    return rc;
}

int lr_engine_cpu_open(const lr_model *md, const lr_engine_opts *o, lr_engine **out)
{
    *out = NULL;
    lr_engine_opts def = { 0 };
    if (!o) o = &def;
    cpu_engine *e = calloc(1, sizeof *e);
    if (!e) return LR_FAIL(LR_ENOMEM, "cpu engine: out of memory");
    e->base.ops = &lr_engine_cpu_ops;
    e->base.model = md;
    e->c = *lr_model_cfg(md);
    const lr_model_config *c = &e->c;
    e->base.max_context = o->max_context > 0 && (uint32_t)o->max_context < c->max_context ? o->max_context
                                                                                          : (int)c->max_context;
    /* at most one thread per CPU: each large matvec starts its threads anew, so 2,048 of them
       on two cores made a step ~70x slower than 2 */
    e->nthreads = o->nthreads > 0 && o->nthreads < lr_cpu_count() ? o->nthreads : lr_cpu_count();
    e->qdim = (int)(c->n_heads * c->head_dim);
    e->kvdim = (int)(c->n_kv_heads * c->head_dim);
    size_t h = c->hidden, maxw = h;
    if ((size_t)e->qdim > maxw) maxw = (size_t)e->qdim;
    if (c->intermediate > maxw) maxw = c->intermediate;
    e->layer = calloc(c->n_layers, sizeof *e->layer);
    e->x = malloc(h * 4); e->xn = malloc(h * 4); e->tmp = malloc(h * 4);
    e->xr = malloc(maxw * 4); e->rotbuf = malloc(maxw * 8);
    e->q = malloc((size_t)e->qdim * 4); e->att = malloc((size_t)e->qdim * 4);
    e->k = malloc((size_t)e->kvdim * 4); e->v = malloc((size_t)e->kvdim * 4);
    e->ff_g = malloc((size_t)c->intermediate * 4); e->ff_u = malloc((size_t)c->intermediate * 4);
    e->logits = malloc((size_t)c->vocab * 4);
    int rc = LR_OK;
    if (!e->layer || !e->x || !e->xn || !e->tmp || !e->xr || !e->rotbuf || !e->q || !e->att || !e->k || !e->v ||
        !e->ff_g || !e->ff_u || !e->logits)
        rc = LR_FAIL(LR_ENOMEM, "cpu engine: out of memory");
    if (!rc) rc = open_weights(e, md);
    if (!rc) rc = fill_cache(e, o->cache_bytes ? o->cache_bytes : default_budget());
    if (rc) {
        cpu_close(&e->base);
        return lr_wrap(rc, "cpu engine: %s", lr_model_path(md));
    }
    *out = &e->base;
    return LR_OK;
}

void lr_engine_cpu_info_get(const lr_engine *base, lr_engine_cpu_info *info)
{
    const cpu_engine *e = (const cpu_engine *)base;
    info->cached_bytes = e->cached_bytes;
    info->cached = e->ncached;
    info->streamed = e->nstreamed;
    info->nthreads = e->nthreads;
}

/* ---- step ---- */

static int cpu_reset(lr_engine *base)
{
    base->pos = 0;
    return LR_OK;
}

/* The caches grow by doubling up to max_context, so a short chat on a model
 * with a 40k context does not reserve gigabytes. */
static int grow_cache(cpu_engine *e)
{
    int cap = e->cap ? 2 * e->cap : 16;
    if (cap > e->base.max_context) cap = e->base.max_context;
    size_t bytes = (size_t)cap * (size_t)e->kvdim * sizeof(float);
    for (uint32_t l = 0; l < e->c.n_layers; l++) {
        float *k = realloc(e->layer[l].kc, bytes);
        if (k) e->layer[l].kc = k;
        float *v = k ? realloc(e->layer[l].vc, bytes) : NULL;
        if (v) e->layer[l].vc = v;
        if (!k || !v) return LR_FAIL(LR_ENOMEM, "cpu engine: KV cache of %d positions: out of memory", cap);
    }
    double *s = realloc(e->scores, (size_t)cap * sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "cpu engine: out of memory");
    e->scores = s;
    e->cap = cap;
    return LR_OK;
}

/* Grouped-query attention of every query head over positions [0, pos]. */
static void attention(cpu_engine *e, const cpu_layer *L, int pos)
{
    int hd = (int)e->c.head_dim, group = (int)(e->c.n_heads / e->c.n_kv_heads);
    double scale = 1.0 / sqrt((double)hd);
    for (int h = 0; h < (int)e->c.n_heads; h++) {
        const float *q = e->q + (size_t)h * hd;
        size_t kvoff = (size_t)(h / group) * hd;
        double mx = -INFINITY, sum = 0;
        for (int t = 0; t <= pos; t++) {
            e->scores[t] = dot(L->kc + (size_t)t * e->kvdim + kvoff, q, (uint64_t)hd) * scale;
            if (e->scores[t] > mx) mx = e->scores[t];
        }
        for (int t = 0; t <= pos; t++) sum += e->scores[t] = exp(e->scores[t] - mx);
        for (int i = 0; i < hd; i++) {
            double a = 0;
            for (int t = 0; t <= pos; t++) a += e->scores[t] * L->vc[(size_t)t * e->kvdim + kvoff + (size_t)i];
            e->att[(size_t)h * hd + (size_t)i] = (float)(a / sum);
        }
    }
}

static void trace(cpu_engine *e, int layer, int pos, const float *x)
{
    if (e->base.on_layer) e->base.on_layer(e->base.on_layer_user, layer, pos, x, (int)e->c.hidden);
}

static int cpu_layer_step(cpu_engine *e, cpu_layer *L, int pos)
{
    const lr_model_config *c = &e->c;
    int h = (int)c->hidden, hd = (int)c->head_dim, rc;
    rmsnorm(e->xn, e->x, L->attn_norm, h, c->norm_eps);
    if ((rc = matvec(e, &L->q, e->xn, e->q)) || (rc = matvec(e, &L->k, e->xn, e->k)) ||
        (rc = matvec(e, &L->v, e->xn, e->v)))
        return rc;
    for (uint32_t i = 0; L->q_norm && i < c->n_heads; i++)
        rmsnorm(e->q + i * hd, e->q + i * hd, L->q_norm, hd, c->norm_eps);
    for (uint32_t i = 0; L->k_norm && i < c->n_kv_heads; i++)
        rmsnorm(e->k + i * hd, e->k + i * hd, L->k_norm, hd, c->norm_eps);
    rope(e->q, (int)c->n_heads, hd, pos, c->rope_theta);
    rope(e->k, (int)c->n_kv_heads, hd, pos, c->rope_theta);
    memcpy(L->kc + (size_t)pos * e->kvdim, e->k, (size_t)e->kvdim * sizeof(float));
    memcpy(L->vc + (size_t)pos * e->kvdim, e->v, (size_t)e->kvdim * sizeof(float));
    attention(e, L, pos);
    if ((rc = matvec(e, &L->o, e->att, e->tmp))) return rc;
    for (int i = 0; i < h; i++) e->x[i] += e->tmp[i];

    rmsnorm(e->xn, e->x, L->ffn_norm, h, c->norm_eps);
    if ((rc = matvec(e, &L->gate, e->xn, e->ff_g)) || (rc = matvec(e, &L->up, e->xn, e->ff_u))) return rc;
    for (uint32_t i = 0; i < c->intermediate; i++) {
        double g = e->ff_g[i];
        e->ff_g[i] = (float)(g / (1.0 + exp(-g)) * e->ff_u[i]);
    }
    if ((rc = matvec(e, &L->down, e->ff_g, e->tmp))) return rc;
    for (int i = 0; i < h; i++) e->x[i] += e->tmp[i];
    return LR_OK;
}

static int cpu_step(lr_engine *base, int32_t token, const float **logits)
{
    cpu_engine *e = (cpu_engine *)base;
    const lr_model_config *c = &e->c;
    int pos = base->pos, rc;
    *logits = NULL;
    if (token < 0 || (uint32_t)token >= c->vocab)
        return LR_FAIL(LR_EINVAL, "cpu engine: token %d outside the vocabulary [0, %u)", token, c->vocab);
    if (pos >= base->max_context)
        return LR_FAIL(LR_ERANGE, "cpu engine: context full (%d tokens)", base->max_context);
    if (pos >= e->cap && (rc = grow_cache(e))) return rc;
    if ((rc = lr_tensor_dequant_rows(e->embd, (uint64_t)token, 1, e->x))) return rc;
    trace(e, -1, pos, e->x);
    for (uint32_t l = 0; l < c->n_layers; l++) {
        if ((rc = cpu_layer_step(e, &e->layer[l], pos))) return lr_wrap(rc, "layer %u", l);
        trace(e, (int)l, pos, e->x);
    }
    rmsnorm(e->xn, e->x, e->out_norm, (int)c->hidden, c->norm_eps);
    trace(e, (int)c->n_layers, pos, e->xn);
    if ((rc = matvec(e, &e->head, e->xn, e->logits))) return rc;
    base->pos = pos + 1;
    *logits = e->logits;
    return LR_OK;
}

/* The greedy step as the GPU backend offers it (there it keeps the logits on
 * the device); here the same step and lr_argmax, so the public API's greedy
 * path runs, and is tested, on both backends. */
static int cpu_step_greedy(lr_engine *base, int32_t token, int32_t *next)
{
    const float *logits;
    *next = 0;
    int rc = cpu_step(base, token, &logits);
    if (!rc) *next = lr_argmax(logits, (int)((cpu_engine *)base)->c.vocab);
    return rc;
}

const lr_engine_ops lr_engine_cpu_ops = { "cpu", lr_engine_cpu_open, cpu_reset, cpu_step, cpu_close, cpu_step_greedy };
