/* The load pipeline. Jobs in file order: per tensor one verify job
 * (checksum + payload checks) and its unfold jobs (unit ranges of about
 * 2 MB of output). Worker threads run them; the calling thread, which owns
 * the CUDA context, uploads each tensor as soon as all its jobs are done.
 * Staging memory for layouts that are not direct copies is capped: a
 * tensor's buffer is allocated (under the lock, before any of its jobs is
 * handed out) only when it fits beside what is still waiting for upload. */
#include "loader/load.h"
#include "loader/parallel.h"
#include "rt/cu.h"
#include "util/err.h"
#include "util/progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOB_BYTES (2u << 20)
#define ARENA_ALIGN 256

typedef struct {
    int tensor;
    int verify;          /* 1: checksum + payload; 0: unfold [u0, u1) */
    uint64_t u0, u1;
} ljob;

typedef struct {
    void *staging;       /* unfold target for non-direct plans */
    int pending;         /* jobs not yet done */
    size_t dev_off;
} tstate;

typedef struct {
    lr_loaded_model *lm;
    const lr_load_opts *o;
    tstate *ts;
    ljob *jobs;
    int njobs, next;
    int *ready, nready_in, nready_out;
    size_t staged, cap;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop, rc;
    char msg[2048];
} lctx;

static void fail(lctx *c, int rc)
{
    pthread_mutex_lock(&c->lock);
    if (!c->rc && rc) {
        c->rc = rc;
        lr_err_save(c->msg, sizeof c->msg);
    }
    c->stop = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static int needs_staging(const lr_loaded_tensor *t) { return !t->plan.direct && t->plan.bytes; }

/* Takes the next job, allocating its tensor's staging buffer first when it
 * is the tensor's first job. Returns -1 when there is nothing left. */
static int claim(lctx *c)
{
    pthread_mutex_lock(&c->lock);
    for (;;) {
        if (c->stop || c->next >= c->njobs) {
            pthread_mutex_unlock(&c->lock);
            return -1;
        }
        const ljob *j = &c->jobs[c->next];
        lr_loaded_tensor *t = &c->lm->t[j->tensor];
        tstate *s = &c->ts[j->tensor];
        if (!needs_staging(t) || s->staging) break;
        if (c->staged && c->staged + t->plan.bytes > c->cap) {
            pthread_cond_wait(&c->cond, &c->lock);
            continue;
        }
        s->staging = malloc(t->plan.bytes);
        if (!s->staging) {
            pthread_mutex_unlock(&c->lock);
            fail(c, LR_FAIL(LR_ENOMEM, "%s: tensor %s: cannot allocate %zu staging bytes", lr_model_path(c->lm->model),
                            t->view->name, t->plan.bytes));
            return -1;
        }
        c->staged += t->plan.bytes;
        if (c->staged > c->lm->report.staging_peak) c->lm->report.staging_peak = c->staged;
        break;
    }
    int jn = c->next++;
    pthread_mutex_unlock(&c->lock);
    return jn;
}

static int run_job(lctx *c, const ljob *j)
{
    lr_loaded_tensor *t = &c->lm->t[j->tensor];
    if (j->verify) return lr_model_verify_tensor(c->lm->model, t->view);
    int rc = t->layout->unfold(t->view, &t->plan, j->u0, j->u1, c->ts[j->tensor].staging);
    return rc ? lr_wrap(rc, "%s: tensor %s: layout %s", lr_model_path(c->lm->model), t->view->name, t->layout->name)
              : LR_OK;
}

static void *worker(void *arg)
{
    lctx *c = arg;
    int jn;
    while ((jn = claim(c)) >= 0) {
        const ljob *j = &c->jobs[jn];
        int rc = run_job(c, j);
        if (rc) {
            fail(c, rc);
            break;
        }
        pthread_mutex_lock(&c->lock);
        int last = --c->ts[j->tensor].pending == 0;
        pthread_mutex_unlock(&c->lock);
        if (!last) continue;
        lr_loaded_tensor *t = &c->lm->t[j->tensor];
        if (t->layout->finish && (rc = t->layout->finish(t->view, &t->plan, c->ts[j->tensor].staging))) {
            fail(c, lr_wrap(rc, "%s: tensor %s: layout %s", lr_model_path(c->lm->model), t->view->name,
                            t->layout->name));
            break;
        }
        pthread_mutex_lock(&c->lock);
        c->ready[c->nready_in++] = j->tensor;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

/* The calling thread: upload (or keep) each tensor as it becomes ready. */
static void upload_loop(lctx *c)
{
    lr_loaded_model *lm = c->lm;
    for (int k = 0; k < lm->n; k++) {
        pthread_mutex_lock(&c->lock);
        while (!c->stop && c->nready_out == c->nready_in) pthread_cond_wait(&c->cond, &c->lock);
        if (c->stop) {
            pthread_mutex_unlock(&c->lock);
            return;
        }
        int i = c->ready[c->nready_out++];
        pthread_mutex_unlock(&c->lock);
        lr_loaded_tensor *t = &lm->t[i];
        tstate *s = &c->ts[i];
        const void *src = t->plan.direct ? t->plan.direct : s->staging;
        if (lm->on_device) {
            int rc = t->plan.bytes ? lr_cu_h2d(lm->arena + s->dev_off, src, t->plan.bytes) : LR_OK;
            if (rc) {
                fail(c, lr_wrap(rc, "%s: tensor %s: upload", lr_model_path(lm->model), t->view->name));
                return;
            }
            t->dev = lm->arena + s->dev_off;
            if (s->staging && !c->o->keep_host) {
                free(s->staging);
                s->staging = NULL;
                src = t->plan.direct;
                pthread_mutex_lock(&c->lock);
                c->staged -= t->plan.bytes;
                pthread_cond_broadcast(&c->cond);
                pthread_mutex_unlock(&c->lock);
            }
        }
        t->host = src;
        s->staging = NULL; /* now owned by t->host (freed by lr_loaded_free) */
        if (c->o->progress) lr_progress_add(c->o->progress, t->file_bytes);
    }
}

static int is_projection(const lr_tensor_view *v) { return v->ndim == 2 && !strncmp(v->name, "blk.", 4); }

static void fill_report(lr_loaded_model *lm)
{
    lr_load_report *r = &lm->report;
    for (int i = 0; i < lm->n; i++) {
        const lr_loaded_tensor *t = &lm->t[i];
        r->params += t->view->nelem;
        r->file_bytes += t->file_bytes;
        r->device_bytes += t->plan.bytes;
        if (is_projection(t->view)) {
            r->proj_params += t->view->nelem;
            r->proj_file_bytes += t->file_bytes;
            r->proj_device_bytes += t->plan.bytes;
        }
    }
    if (r->params) {
        r->bpw_file = 8.0 * (double)r->file_bytes / (double)r->params;
        r->bpw_device = 8.0 * (double)r->device_bytes / (double)r->params;
    }
    if (r->proj_params) {
        r->bpw_proj_file = 8.0 * (double)r->proj_file_bytes / (double)r->proj_params;
        r->bpw_proj_device = 8.0 * (double)r->proj_device_bytes / (double)r->proj_params;
    }
}

/* Chooses layouts, plans every tensor, lays out the device arena and the jobs. */
static int plan_all(lctx *c)
{
    lr_loaded_model *lm = c->lm;
    const char *path = lr_model_path(lm->model);
    size_t off = 0;
    int cap = 0;
    for (int i = 0; i < lm->n; i++) {
        lr_loaded_tensor *t = &lm->t[i];
        t->view = lr_model_tensor_at(lm->model, i);
        t->file_bytes = lr_tensor_payload_bytes(t->view);
        t->layout = lr_layout_choose(t->view, c->o->layouts);
        if (!t->layout)
            return LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s: no layout for codec %s", path, t->view->name,
                           lr_codec_name(t->view->codec));
        int rc = t->layout->plan(t->view, &t->plan);
        if (rc) return lr_wrap(rc, "%s: tensor %s: layout %s", path, t->view->name, t->layout->name);
        if (t->plan.units < 1) t->plan.units = 1;
        c->ts[i].dev_off = off;
        off += (t->plan.bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
        /* Jobs: verify, then units in pieces of about JOB_BYTES of output. */
        uint64_t per = t->plan.direct ? t->plan.units
                                      : (uint64_t)((double)t->plan.units * JOB_BYTES / ((double)t->plan.bytes + 1)) + 1;
        uint64_t nj = 1 + (t->plan.units + per - 1) / per;
        if (c->njobs + (int)nj > cap) {
            cap = (c->njobs + (int)nj) * 2;
            ljob *n = realloc(c->jobs, (size_t)cap * sizeof *n);
            if (!n) return LR_FAIL(LR_ENOMEM, "%s: out of memory", path);
            c->jobs = n;
        }
        c->jobs[c->njobs++] = (ljob){ i, 1, 0, 0 };
        for (uint64_t u = 0; u < t->plan.units; u += per)
            c->jobs[c->njobs++] = (ljob){ i, 0, u, u + per < t->plan.units ? u + per : t->plan.units };
        c->ts[i].pending = (int)nj;
    }
    lm->arena_bytes = off;
    return LR_OK;
}

static void device_setup(lr_loaded_model *lm, const lr_load_opts *o)
{
    if (o->host_only) {
        snprintf(lm->device_status, sizeof lm->device_status, "upload skipped: host-only load requested");
        return;
    }
    if (lr_cu_init(0) != LR_OK) {
        snprintf(lm->device_status, sizeof lm->device_status, "upload skipped: no GPU (%s)", lr_errmsg());
        lr_clear_error();
        return;
    }
    lm->on_device = 1;
    snprintf(lm->device_status, sizeof lm->device_status, "uploaded to %s", lr_cu_device()->name);
}

int lr_load_model(lr_model *m, const lr_load_opts *o, lr_loaded_model **out)
{
    static const lr_load_opts defaults;
    if (!o) o = &defaults;
    *out = NULL;
    double t0 = lr_now();
    lr_loaded_model *lm = calloc(1, sizeof *lm);
    lctx c;
    memset(&c, 0, sizeof c);
    if (!lm) {
        const int rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", lr_model_path(m)); /* before m's label is freed */
        lr_model_close(m);
        return rc;
    }
    lm->model = m;
    lm->n = lr_model_tensor_count(m);
    lm->t = calloc((size_t)lm->n, sizeof *lm->t);
    c.lm = lm;
    c.o = o;
    c.ts = calloc((size_t)lm->n, sizeof *c.ts);
    c.ready = calloc((size_t)lm->n, sizeof *c.ready);
    int rc = !lm->t || !c.ts || !c.ready ? LR_FAIL(LR_ENOMEM, "%s: out of memory", lr_model_path(m)) : LR_OK;
    if (!rc) rc = plan_all(&c);
    if (!rc) {
        device_setup(lm, o);
        if (lm->on_device && lm->arena_bytes) rc = lr_cu_alloc(&lm->arena, lm->arena_bytes);
        if (rc) rc = lr_wrap(rc, "%s: %zu bytes of device memory", lr_model_path(m), lm->arena_bytes);
    }
    if (!rc) {
        /* Kept host copies are never released, so only a pure upload is capped. */
        c.cap = !lm->on_device || o->keep_host ? (size_t)-1 : o->staging_bytes ? o->staging_bytes : (size_t)1 << 30;
        pthread_mutex_init(&c.lock, NULL);
        pthread_cond_init(&c.cond, NULL);
        uint64_t total = 0;
        for (int i = 0; i < lm->n; i++) total += lm->t[i].file_bytes;
        if (o->progress) lr_progress_start(o->progress, "load", total);
        int nth = o->nthreads > 0 ? o->nthreads : lr_cpu_count();
        pthread_t *th = calloc((size_t)nth, sizeof *th);
        int started = 0;
        for (; th && started < nth; started++)
            if (pthread_create(&th[started], NULL, worker, &c)) break;
        if (started == 0) fail(&c, LR_FAIL(LR_ENOMEM, "%s: cannot start loader threads", lr_model_path(m)));
        upload_loop(&c);
        fail(&c, LR_OK); /* stops the workers if the upload loop ended early */
        for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
        free(th);
        if (c.rc) rc = lr_err_restore(c.rc, c.msg);
        if (!rc && lm->on_device) rc = lr_cu_sync();
        if (!rc && o->progress) lr_progress_finish(o->progress);
        pthread_cond_destroy(&c.cond);
        pthread_mutex_destroy(&c.lock);
    }
    /* Staging buffers never handed to a tensor (an error stopped the run). */
    for (int i = 0; c.ts && i < lm->n; i++) free(c.ts[i].staging);
    free(c.ts);
    free(c.ready);
    free(c.jobs);
    if (rc) {
        lr_loaded_free(lm);
        return rc;
    }
    fill_report(lm);
    lm->report.s_unfold = lr_now() - t0;
    lm->report.s_total = lm->report.s_unfold;
    *out = lm;
    return LR_OK;
}

int lr_load(const char *path, const lr_load_opts *o, lr_loaded_model **out)
{
    *out = NULL;
    double t0 = lr_now();
    lr_model *m;
    /* The data pass runs in the loader's threads, tensor by tensor. */
    int rc = lr_model_open(path, LR_MODEL_SKIP_DATA, &m);
    if (rc) return rc;
    double t1 = lr_now();
    if ((rc = lr_load_model(m, o, out))) return rc;
    (*out)->report.s_open = t1 - t0;
    (*out)->report.s_total = lr_now() - t0;
    return LR_OK;
}

void lr_loaded_free(lr_loaded_model *lm)
{
    if (!lm) return;
    for (int i = 0; lm->t && i < lm->n; i++) {
        lr_loaded_tensor *t = &lm->t[i];
        if (t->host && t->host != t->plan.direct) free((void *)t->host);
        if (t->layout && t->layout->release) t->layout->release(&t->plan);
    }
    if (lm->arena) lr_cu_free(lm->arena);
    free(lm->t);
    lr_model_close(lm->model);
    free(lm);
}

const lr_loaded_tensor *lr_loaded_find(const lr_loaded_model *lm, const char *name)
{
    const lr_tensor_view *v = lr_model_tensor(lm->model, name);
    return v ? &lm->t[v - lr_model_tensor_at(lm->model, 0)] : NULL;
}

static const lr_layout_part *find_part(const lr_loaded_tensor *t, const char *part)
{
    for (int i = 0; i < t->plan.nparts; i++)
        if (!strcmp(t->plan.parts[i].name, part)) return &t->plan.parts[i];
    return NULL;
}

CUdeviceptr lr_loaded_part_dev(const lr_loaded_tensor *t, const char *part)
{
    const lr_layout_part *p = find_part(t, part);
    return p && t->dev ? t->dev + p->offset : 0;
}

const void *lr_loaded_part_host(const lr_loaded_tensor *t, const char *part)
{
    const lr_layout_part *p = find_part(t, part);
    return p && t->host ? (const uint8_t *)t->host + p->offset : NULL;
}
