#include "loader/parallel.h"
#include "util/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lr_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

void lr_err_save(char *buf, unsigned n) { snprintf(buf, n, "%s", lr_errmsg()); }

/* lr_fail prefixes "file.c:line: "; a saved message that starts with one
 * keeps it (the worker's location is the useful one), any other (a wrapped
 * message) gets the caller's. */
int lr_err_restore_at(int code, const char *saved, const char *file, int line)
{
    size_t f = strcspn(saved, ": /");
    if (f > 2 && f < 128 && saved[f] == ':' && (!strncmp(saved + f - 2, ".c", 2) || !strncmp(saved + f - 2, ".h", 2))) {
        char *end;
        long l = strtol(saved + f + 1, &end, 10);
        if (end > saved + f + 1 && end[0] == ':' && end[1] == ' ') {
            char fn[128];
            snprintf(fn, sizeof fn, "%.*s", (int)f, saved);
            return lr_fail(code, fn, (int)l, "%s", end + 2);
        }
    }
    return lr_fail(code, file, line, "%s", saved);
}

typedef struct {
    int (*fn)(void *, int);
    void *ctx;
    int njobs;
    int next;          /* atomic */
    int stop;          /* atomic */
    pthread_mutex_t lock;
    int rc;
    char msg[2048];
} pool;

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) break;
        int j = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (j >= p->njobs) break;
        int rc = p->fn(p->ctx, j);
        if (rc) {
            pthread_mutex_lock(&p->lock);
            if (!p->rc) {
                p->rc = rc;
                lr_err_save(p->msg, sizeof p->msg);
            }
            pthread_mutex_unlock(&p->lock);
            __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

int lr_parallel_for(int nthreads, int njobs, int (*fn)(void *ctx, int job), void *ctx)
{
    if (njobs <= 0) return 0;
    if (nthreads <= 0) nthreads = lr_cpu_count();
    if (nthreads > njobs) nthreads = njobs;
    if (nthreads == 1) {
        for (int j = 0; j < njobs; j++) {
            int rc = fn(ctx, j);
            if (rc) return rc;
        }
        return 0;
    }
    pool p = { .fn = fn, .ctx = ctx, .njobs = njobs };
    pthread_mutex_init(&p.lock, NULL);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    if (!th) return LR_FAIL(LR_ENOMEM, "parallel_for: out of memory");
    int started = 0;
    for (; started < nthreads; started++)
        if (pthread_create(&th[started], NULL, worker, &p) != 0) break;
    if (started == 0) worker(&p); /* no thread could start: do it all here */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&p.lock);
    return p.rc ? lr_err_restore(p.rc, p.msg) : 0;
}

typedef struct { int n, chunk; int (*fn)(void *, int, int); void *ctx; } range_job;

static int range_one(void *p, int job)
{
    const range_job *r = p;
    int lo = job * r->chunk, hi = lo + r->chunk < r->n ? lo + r->chunk : r->n;
    return r->fn(r->ctx, lo, hi);
}

int lr_parallel_ranges(int n, int chunk, int (*fn)(void *ctx, int lo, int hi), void *ctx)
{
    if (n <= 0) return 0;
    if (chunk < 1) chunk = 1;
    range_job r = { n, chunk, fn, ctx };
    return lr_parallel_for(0, (n + chunk - 1) / chunk, range_one, &r);
}
