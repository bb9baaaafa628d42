#include "layouts/leech_vram/par.h"

#include "util/err.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

typedef struct {
    int (*fn)(void *, int, int);
    void *ctx;
    int i0, i1, rc;
    char msg[512];
} job;

static void *run(void *p)
{
    job *j = p;
    j->rc = j->fn(j->ctx, j->i0, j->i1);
    if (j->rc) snprintf(j->msg, sizeof j->msg, "%s", lr_errmsg()); /* errors are thread-local */
    return NULL;
}

int lr_vram_parallel(int n, int nthreads, int (*fn)(void *ctx, int i0, int i1), void *ctx)
{
    if (n <= 0) return LR_OK;
    if (nthreads <= 0) nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nthreads < 1) nthreads = 1;
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    if (nthreads > n) nthreads = n;
    if (nthreads == 1) return fn(ctx, 0, n);
    job jobs[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int created[MAX_THREADS] = { 0 };
    for (int t = 0; t < nthreads; t++)
        jobs[t] = (job){ fn, ctx, (int)((long long)n * t / nthreads), (int)((long long)n * (t + 1) / nthreads), 0, "" };
    for (int t = 1; t < nthreads; t++) created[t] = pthread_create(&th[t], NULL, run, &jobs[t]) == 0;
    run(&jobs[0]);
    for (int t = 1; t < nthreads; t++) {
        if (created[t]) pthread_join(th[t], NULL);
        else run(&jobs[t]); /* no thread: do its share here */
    }
    for (int t = 0; t < nthreads; t++)
        if (jobs[t].rc) return LR_FAIL(jobs[t].rc, "%s", jobs[t].msg);
    return LR_OK;
}
