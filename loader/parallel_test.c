/* lr_parallel_for: every job runs once, the first error and its message
 * come back to the caller, and the restored message keeps the worker's
 * location. */
#include "loader/parallel.h"
#include "test/t.h"
#include "util/err.h"

typedef struct { int n, fail_at; int hits[1000]; } ctx;

static int job(void *arg, int j)
{
    ctx *c = arg;
    __atomic_add_fetch(&c->hits[j], 1, __ATOMIC_RELAXED);
    if (j == c->fail_at) return LR_FAIL(LR_ERANGE, "job %d refused", j);
    return LR_OK;
}

static int test_every_job_once(void)
{
    for (int th = 0; th <= 5; th++) {
        ctx c = { .n = 1000, .fail_at = -1 };
        T_OK(lr_parallel_for(th, c.n, job, &c));
        for (int j = 0; j < c.n; j++) T_ASSERT(c.hits[j] == 1, "threads %d: job %d ran %d times", th, j, c.hits[j]);
    }
    T_OK(lr_parallel_for(4, 0, job, NULL));
    return T_PASS;
}

static int test_error_crosses_threads(void)
{
    for (int th = 1; th <= 4; th++) {
        ctx c = { .n = 1000, .fail_at = 617 };
        lr_clear_error();
        int rc = lr_parallel_for(th, c.n, job, &c);
        const char *m = lr_errmsg();
        T_ASSERT(rc == LR_ERANGE, "threads %d: rc %d", th, rc);
        T_ASSERT(strstr(m, "job 617 refused") && !strncmp(m, "parallel_test.c:", 16) && !strstr(m + 16, "parallel"),
                 "threads %d: message \"%s\"", th, m);
    }
    return T_PASS;
}

static int test_restore_forms(void)
{
    T_ASSERT(lr_err_restore(LR_EIO, "x.c:12: disk gone") == LR_EIO && !strcmp(lr_errmsg(), "x.c:12: disk gone"), "%s",
             lr_errmsg());
    lr_err_restore(LR_EIO, "model.lrt: tensor a: x.c:3: inner");
    T_ASSERT(!strncmp(lr_errmsg(), "parallel_test.c:", 16) && strstr(lr_errmsg(), ": model.lrt: tensor a: x.c:3: inner"),
             "%s", lr_errmsg());
    return T_PASS;
}

static int mark_range(void *ctx, int lo, int hi)
{
    int *hits = ctx;
    if (hi <= lo || hi - lo > 7) return 1; /* ranges are non-empty and at most the chunk */
    for (int i = lo; i < hi; i++) __atomic_add_fetch(&hits[i], 1, __ATOMIC_RELAXED);
    return 0;
}

/* Ranges of 7 over 100 indices (the last one short): each index once. */
static int test_ranges_cover_once(void)
{
    int hits[100] = { 0 };
    T_OK(lr_parallel_ranges(100, 7, mark_range, hits));
    for (int i = 0; i < 100; i++) T_ASSERT(hits[i] == 1, "index %d hit %d times", i, hits[i]);
    T_OK(lr_parallel_ranges(0, 7, mark_range, hits));
    return T_PASS;
}

T_MAIN(T_CASE(test_every_job_once), T_CASE(test_error_crosses_threads), T_CASE(test_restore_forms),
       T_CASE(test_ranges_cover_once))
