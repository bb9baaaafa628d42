/* The synthetic artifact generator. Work is cut into jobs in file order
 * (tensor, part, a range of rows); worker threads fill a ring of buffers
 * and the calling thread writes them strictly in order, so the file is
 * written sequentially and each job's bytes depend only on (seed, tensor,
 * part, first row). */
#include "loader/synthetic.h"
#include "kernels/kernels.h"
#include "kernels/rotation.h"
#include "layouts/leech/leech.h"
#include "loader/arch.h"
#include "loader/artifact_write.h"
#include "loader/codec.h"
#include "loader/parallel.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/half.h"
#include "util/progress.h"
#include "util/read_file.h"
#include "util/rng.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- configs ---- */

typedef struct { const char *name; uint32_t hidden, layers, heads, kv, head_dim, inter, vocab; int tied; const char *arch; } synth_cfg;
static const synth_cfg k_cfgs[] = {
    { "0.6B", 1024, 28, 16, 8, 128, 3072, 151936, 1, NULL },
    { "4B", 2560, 36, 32, 8, 128, 9728, 151936, 1, NULL },
    { "8B", 4096, 36, 32, 8, 128, 12288, 151936, 0, NULL },
    { "14B", 5120, 40, 40, 8, 128, 17408, 151936, 0, NULL },
    { "32B", 5120, 64, 64, 8, 128, 25600, 151936, 0, NULL },
    { "tiny", 256, 2, 4, 2, 64, 768, 512, 0, NULL },
    { "micro", 64, 1, 2, 1, 32, 96, 64, 1, NULL },
    { "tiny-llama", 256, 2, 4, 2, 64, 768, 512, 0, "llama" }, /* no q/k norms: the Llama path */
};

const char *lr_synth_config_names(void) { return "0.6B, 4B, 8B, 14B, 32B, tiny, micro, tiny-llama"; }

int lr_synth_config(const char *name, lr_model_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof k_cfgs / sizeof k_cfgs[0]; i++) {
        const synth_cfg *s = &k_cfgs[i];
        if (strcmp(s->name, name)) continue;
        snprintf(c->arch, sizeof c->arch, "%s", s->arch ? s->arch : "qwen3");
        snprintf(c->name, sizeof c->name, "%s-%s-synthetic", c->arch, s->name);
        c->hidden = s->hidden;
        c->n_layers = s->layers;
        c->n_heads = s->heads;
        c->n_kv_heads = s->kv;
        c->head_dim = s->head_dim;
        c->intermediate = s->inter;
        c->vocab = s->vocab;
        c->tied_head = s->tied;
        c->max_context = s->vocab > 100000 ? 40960 : 512;
        c->bos_id = LR_NO_TOKEN;
        c->eos_id = s->vocab > 151645 ? 151645 : s->vocab - 1; /* Qwen3 <|im_end|> */
        c->rope_theta = 1e6;
        c->norm_eps = LR_QWEN3_NORM_EPS;
        return LR_OK;
    }
    return LR_FAIL(LR_EINVAL, "unknown synthetic config \"%s\" (known: %s)", name, lr_synth_config_names());
}

/* ---- what each tensor is ---- */

/* Gain centroids: the two Lloyd-Max levels of a 24-dim Gaussian block's norm
 * relative to the row's RMS block norm (about 0.87 and 1.12). */
static const float k_centroids[3][4] = { { 1.0f }, { 0.87f, 1.12f }, { 0.75f, 0.93f, 1.07f, 1.24f } };

static void make_desc(const lr_arch_tensor *a, int index, const lr_synth_opts *o, lr_tensor_desc *d)
{
    (void)index; /* seeds depend on the input width, not the tensor position */
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", a->name);
    d->ndim = a->ndim;
    d->dims[0] = a->dims[0];
    d->dims[1] = a->dims[1];
    if (a->kind == LR_KIND_NORM) {
        d->codec = LR_CODEC_F32;
    } else if (a->kind == LR_KIND_EMBED || !strcmp(a->role, "output")) {
        d->codec = LR_CODEC_INT8G;
        d->i8.group = 64;
        d->i8.sb_kind = LR_INT8G_SB_F16;
    } else if (o->proj_f16) {
        d->codec = LR_CODEC_F16;
    } else {
        d->codec = LR_CODEC_LEECH;
        d->leech.max_shell = 12;
        d->leech.gain_bits = o->gain_bits;
        d->leech.rot_kind = !o->o_rot_full && !strcmp(a->role, "attn_output") ? LR_ROT_HEADS : LR_ROT_HADAMARD;
        /* one seed per input width: q|k|v and gate|up share a rotation and fuse */
        d->leech.rot_seed = lr_rot_seed_for_width(o->seed, a->dims[1]);
        memcpy(d->leech.centroid, k_centroids[o->gain_bits], sizeof d->leech.centroid);
    }
}

/* ---- jobs ---- */

typedef struct {
    int tensor, part;
    uint64_t r0, r1;   /* rows */
    uint64_t bytes;    /* output bytes */
    int first, last;   /* of its tensor */
} job;

typedef struct {
    uint8_t *buf;
    size_t cap;
    long turn;         /* the job this slot holds next */
    int ready;
} slot;

typedef struct {
    const lr_synth_opts *o;
    lr_tensor_desc *desc;
    uint64_t (*part_bytes)[4];
    job *jobs;
    int njobs;
    int next;
    slot *slots;
    int nslots;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop, rc;
    char msg[2048];
    uint64_t npoints;
} gen;

static uint64_t archive_offset(const lr_tensor_desc *d, uint64_t row, uint64_t total)
{
    uint64_t nblk = d->dims[1] / 24, bits = 47 + (uint64_t)d->leech.gain_bits;
    return row == d->dims[0] ? total : row * nblk * bits / 8; /* rows start at multiples of 8: exact */
}

static uint64_t job_bytes(const gen *g, const job *j)
{
    const lr_tensor_desc *d = &g->desc[j->tensor];
    uint64_t n = j->r1 - j->r0, cols = d->dims[1];
    if (d->codec == LR_CODEC_F32) return d->dims[0] * 4;
    if (d->codec == LR_CODEC_F16) return n * cols * 2;
    if (d->codec == LR_CODEC_INT8G) return j->part == 0 ? n * cols : n * (cols / 64) * 4;
    if (j->part == 0) return n * 4;
    if (j->part == 2) return n * (cols % 24) * 2;
    uint64_t total = g->part_bytes[j->tensor][1];
    return archive_offset(d, j->r1, total) - archive_offset(d, j->r0, total);
}

static int plan_jobs(gen *g, int ntensors)
{
    const uint64_t target = 4u << 20;
    int cap = 1024;
    g->jobs = malloc((size_t)cap * sizeof *g->jobs);
    if (!g->jobs) return LR_FAIL(LR_ENOMEM, "synthetic: out of memory");
    for (int t = 0; t < ntensors; t++) {
        const lr_tensor_desc *d = &g->desc[t];
        int nparts = d->codec == LR_CODEC_LEECH ? 3 : d->codec == LR_CODEC_INT8G ? 2 : 1;
        uint64_t rows = d->ndim == 2 ? d->dims[0] : 1;
        int first = g->njobs;
        for (int p = 0; p < nparts; p++) {
            if (!g->part_bytes[t][p]) continue;
            uint64_t per_row = g->part_bytes[t][p] / rows + 1;
            uint64_t step = target / per_row / 8 * 8;
            if (step < 8) step = 8;
            for (uint64_t r0 = 0; r0 < rows; r0 += step) {
                if (g->njobs == cap) {
                    cap *= 2;
                    job *nj = realloc(g->jobs, (size_t)cap * sizeof *nj);
                    if (!nj) return LR_FAIL(LR_ENOMEM, "synthetic: out of memory");
                    g->jobs = nj;
                }
                job *j = &g->jobs[g->njobs++];
                *j = (job){ t, p, r0, r0 + step < rows ? r0 + step : rows, 0, 0, 0 };
                j->bytes = job_bytes(g, j);
            }
        }
        g->jobs[first].first = 1;
        g->jobs[g->njobs - 1].last = 1;
    }
    return LR_OK;
}

/* ---- filling one job ---- */

static void fill_leech_archive(gen *g, const lr_tensor_desc *d, const job *j, lr_rng *r, uint8_t *out, int *rc)
{
    enum { SUB = 4096 };
    uint64_t idx[SUB];
    uint8_t gain[SUB];
    int gb = d->leech.gain_bits;
    uint64_t nblk = d->dims[1] / 24, nb = (j->r1 - j->r0) * nblk, bits = 47 + (uint64_t)gb;
    for (uint64_t b = 0; b < nb && !*rc; b += SUB) {
        uint64_t n = nb - b < SUB ? nb - b : SUB;
        for (uint64_t i = 0; i < n; i++) idx[i] = lr_rng_below(r, g->npoints);
        uint64_t gbits = lr_rng_u64(r);
        for (uint64_t i = 0; i < n; i++) {
            if (i % 32 == 31) gbits = lr_rng_u64(r);
            gain[i] = (uint8_t)((gbits >> (2 * (i % 32))) & ((1u << gb) - 1));
        }
        uint64_t at = b * bits / 8; /* b is a multiple of 8 blocks */
        *rc = lr_leech_archive_pack(idx, gain, n, gb, out + at, lr_leech_archive_bytes(n, gb));
        if (*rc) *rc = lr_wrap(*rc, "tensor %s", d->name);
    }
}

static int fill_job(gen *g, const job *j, uint8_t *out)
{
    const lr_tensor_desc *d = &g->desc[j->tensor];
    lr_rng r;
    lr_rng_seed(&r, g->o->seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)j->tensor << 40 ^ (uint64_t)j->part << 36 ^ j->r0);
    uint64_t n = j->r1 - j->r0, cols = d->dims[1];
    int rc = LR_OK;
    if (d->codec == LR_CODEC_F32) { /* norms near 1 */
        float *f = (float *)out;
        /* a rotated residual's norms read it in the rotated basis: an importer
         * folds their gains into the matrices after them and stores ones, and so
         * does this (the q/k norms act on heads, not on the residual) */
        const int unit = g->o->rotated_residual && !strstr(d->name, "attn_q_norm") && !strstr(d->name, "attn_k_norm");
        for (uint64_t i = 0; i < d->dims[0]; i++) f[i] = unit ? 1.f : (float)(1.0 + 0.05 * lr_rng_gauss(&r));
    } else if (d->codec == LR_CODEC_F16) { /* dense projections: std 1/sqrt(cols) */
        uint16_t *w = (uint16_t *)out;
        for (uint64_t i = 0; i < n * cols; i++) w[i] = lr_float_to_half((float)(lr_rng_gauss(&r) / sqrt((double)cols)));
    } else if (d->codec == LR_CODEC_INT8G && j->part == 0) {
        /* Uniform int8 in [-127, 127] (std ~73); 8 weights per draw. */
        for (uint64_t i = 0; i < n * cols; i += 8) {
            uint64_t x = lr_rng_u64(&r);
            for (int k = 0; k < 8 && i + (uint64_t)k < n * cols; k++)
                out[i + (uint64_t)k] = (uint8_t)(int8_t)((int)(((x >> (8 * k)) & 0xff) * 255 >> 8) - 127);
        }
    } else if (d->codec == LR_CODEC_INT8G) {
        /* Scale so weights have std ~0.02 (a typical embedding); small bias. */
        uint16_t *sb = (uint16_t *)out;
        for (uint64_t i = 0; i < n * (cols / 64); i++) {
            sb[2 * i] = lr_float_to_half((float)(2.7e-4 * exp(0.2 * lr_rng_gauss(&r))));
            sb[2 * i + 1] = lr_float_to_half((float)(0.002 * lr_rng_gauss(&r)));
        }
    } else if (j->part == 0) {
        /* Row scale = RMS block norm; weights with std ~1/sqrt(cols) give a
         * block norm of sqrt(24/cols), spread lognormally across rows. */
        float *s = (float *)out;
        for (uint64_t i = 0; i < n; i++) s[i] = (float)(sqrt(24.0 / (double)cols) * exp(0.25 * lr_rng_gauss(&r)));
    } else if (j->part == 2) {
        uint16_t *t = (uint16_t *)out;
        for (uint64_t i = 0; i < n * (cols % 24); i++) t[i] = lr_float_to_half((float)(lr_rng_gauss(&r) / sqrt((double)cols)));
    } else {
        fill_leech_archive(g, d, j, &r, out, &rc);
    }
    return rc;
}

/* ---- the pipeline ---- */

static void fail(gen *g, int rc)
{
    pthread_mutex_lock(&g->lock);
    if (!g->rc) {
        g->rc = rc;
        lr_err_save(g->msg, sizeof g->msg);
    }
    g->stop = 1;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void *worker(void *arg)
{
    gen *g = arg;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        int jn = g->next++;
        slot *s = &g->slots[jn % g->nslots];
        while (!g->stop && jn < g->njobs && (s->turn != jn || s->ready)) pthread_cond_wait(&g->cond, &g->lock);
        int stop = g->stop || jn >= g->njobs;
        pthread_mutex_unlock(&g->lock);
        if (stop) return NULL;
        const job *j = &g->jobs[jn];
        int rc = fill_job(g, j, s->buf);
        if (rc) {
            fail(g, rc);
            return NULL;
        }
        pthread_mutex_lock(&g->lock);
        s->ready = 1;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
    }
}

static int write_all(gen *g, lr_writer *w)
{
    for (int jn = 0; jn < g->njobs; jn++) {
        slot *s = &g->slots[jn % g->nslots];
        pthread_mutex_lock(&g->lock);
        while (!g->stop && !(s->turn == jn && s->ready)) pthread_cond_wait(&g->cond, &g->lock);
        int stop = g->stop;
        pthread_mutex_unlock(&g->lock);
        if (stop) return -1;
        const job *j = &g->jobs[jn];
        int rc = j->first ? lr_writer_begin(w, &g->desc[j->tensor]) : LR_OK;
        if (!rc) rc = lr_writer_write(w, s->buf, (size_t)j->bytes);
        if (!rc && j->last) rc = lr_writer_end(w);
        if (rc) {
            fail(g, rc);
            return -1;
        }
        if (g->o->progress) lr_progress_add(g->o->progress, j->bytes);
        pthread_mutex_lock(&g->lock);
        s->ready = 0;
        s->turn = jn + g->nslots;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
    }
    return 0;
}

/* How the artifact stores tokenizer bytes: gzip'd (by their magic) or plain JSON. */
static int tokenizer_kind(const void *blob, size_t n, const char *path, int *kind)
{
    const uint8_t *b = blob;
    *kind = LR_TOK_NONE;
    if (n == 0) return LR_FAIL(LR_EINVAL, "%s: empty tokenizer file", path);
    *kind = n >= 2 && b[0] == 0x1f && b[1] == 0x8b ? LR_TOK_JSON_GZIP : LR_TOK_JSON;
    return LR_OK;
}

int lr_synth_check_tokenizer(const void *bytes, size_t n, const char *path, const lr_model_config *cfg)
{
    int kind;
    lr_tok *t = NULL;
    int rc = tokenizer_kind(bytes, n, path, &kind);
    if (!rc) rc = lr_tok_load_stored(kind, bytes, n, path, &t);
    if (rc) return lr_wrap(rc, "tokenizer %s", path);
    const int32_t nt = lr_tok_vocab_size(t);
    lr_tok_free(t);
    if (nt > (int64_t)cfg->vocab)
        return LR_FAIL(LR_EINVAL, "tokenizer %s has %d tokens, past the model's vocabulary of %u", path, nt, cfg->vocab);
    return LR_OK;
}

int lr_synth_write(const char *path, const lr_model_config *cfg, const lr_synth_opts *o)
{
    if (o->gain_bits < 0 || o->gain_bits > 2) return LR_FAIL(LR_EINVAL, "gain bits %d (0..2)", o->gain_bits);
    lr_model_config rcfg = *cfg;
    if (o->rotated_residual) {
        /* the residual's rotation is the one its Leech readers are stored against */
        rcfg.rotated_residual = 1;
        rcfg.residual_seed = lr_rot_seed_for_width(o->seed, cfg->hidden);
        /* its own name, so benchmark rows (which name the model) keep the two forms apart */
        snprintf(rcfg.name, sizeof rcfg.name, "%.*s-rotated", (int)sizeof rcfg.name - 9, cfg->name);
    }
    cfg = &rcfg;
    lr_arch_tensor *at = NULL;
    int nt = 0, rc = lr_arch_tensors(cfg, &at, &nt);
    if (rc) return rc;
    gen g;
    memset(&g, 0, sizeof g);
    g.o = o;
    g.npoints = lr_leech_ball_points(12);
    g.desc = calloc((size_t)nt, sizeof *g.desc);
    g.part_bytes = calloc((size_t)nt, sizeof *g.part_bytes);
    /* the tokenizer's bytes as they are (tests embed hostile ones on purpose; gen_synthetic
       checks a user's file with lr_synth_check_tokenizer first) */
    int tok_kind = LR_TOK_NONE;
    void *tok_read = NULL;
    const void *tok = o->tokenizer;
    size_t tok_n = o->tokenizer ? o->tokenizer_n : 0;
    lr_writer *w = NULL;
    uint64_t total = 0;
    if (!g.desc || !g.part_bytes) rc = LR_FAIL(LR_ENOMEM, "synthetic: out of memory");
    for (int t = 0; t < nt && !rc; t++) {
        make_desc(&at[t], t, o, &g.desc[t]);
        int np;
        if ((rc = lr_desc_parts(&g.desc[t], &np, g.part_bytes[t]))) rc = lr_wrap(rc, "synthetic tensor %s", at[t].name);
        for (int p = 0; p < np; p++) total += g.part_bytes[t][p];
    }
    if (!rc) rc = plan_jobs(&g, nt);
    if (!rc && !tok && o->tokenizer_path && !(rc = lr_read_file(o->tokenizer_path, &tok_read, &tok_n))) tok = tok_read;
    if (!rc && tok) rc = tokenizer_kind(tok, tok_n, o->tokenizer_path ? o->tokenizer_path : "tokenizer", &tok_kind);
    if (!rc) rc = lr_writer_open(path, cfg, tok_kind, tok, tok_n, &w);
    if (!rc) rc = lr_writer_set_default_align(w, o->align);
    if (!rc) {
        int nth = o->nthreads > 0 ? o->nthreads : lr_cpu_count();
        g.nslots = 2 * nth + 2;
        g.slots = calloc((size_t)g.nslots, sizeof *g.slots);
        pthread_t *th = calloc((size_t)nth, sizeof *th);
        if (!g.slots || !th) rc = LR_FAIL(LR_ENOMEM, "synthetic: out of memory");
        if (!rc) {
            /* Every slot holds the largest job: allocated once, so pages are
             * faulted in once rather than on every job. */
            uint64_t maxb = 1;
            for (int i = 0; i < g.njobs; i++) maxb = g.jobs[i].bytes > maxb ? g.jobs[i].bytes : maxb;
            for (int i = 0; i < g.nslots && !rc; i++) {
                g.slots[i].turn = i;
                g.slots[i].cap = (size_t)maxb;
                if (!(g.slots[i].buf = malloc((size_t)maxb))) rc = LR_FAIL(LR_ENOMEM, "synthetic: out of memory");
            }
        }
        if (!rc) {
            pthread_mutex_init(&g.lock, NULL);
            pthread_cond_init(&g.cond, NULL);
            if (o->progress) lr_progress_start(o->progress, "generate", total);
            int started = 0;
            for (; started < nth; started++)
                if (pthread_create(&th[started], NULL, worker, &g)) break;
            if (started == 0) fail(&g, LR_FAIL(LR_ENOMEM, "synthetic: cannot start threads"));
            write_all(&g, w);
            fail(&g, LR_OK); /* wake and stop the workers */
            for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
            pthread_cond_destroy(&g.cond);
            pthread_mutex_destroy(&g.lock);
            if (g.rc) rc = lr_err_restore(g.rc, g.msg);
        }
        free(th);
        for (int i = 0; g.slots && i < g.nslots; i++) free(g.slots[i].buf);
    }
    if (w) {
        if (rc) lr_writer_abort(w);
        else rc = lr_writer_finish(w);
    }
    if (!rc && o->progress) lr_progress_finish(o->progress);
    free(tok_read);
    free(g.slots);
    free(g.jobs);
    free(g.desc);
    free(g.part_bytes);
    free(at);
    return rc;
}
