/* lr_leech_unrank_codes against its reference (lr_leech_unrank + the class
 * + a search of the class's values), block for block: every class's first
 * and last point and random points of every class of both balls, the
 * origin, the last ball point, ball-uniform indices, batch sizes around the
 * internal batch and queues of one problem; an index outside the ball. The
 * portable (no inline asm) form of the decoder is built into this test from
 * the same source and checked the same way. */
#include "layouts/leech/leech.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <time.h>

/* codes.c again, as its portable form, under other names */
#define LR_CODES_PORTABLE 1
#define lr_leech_unrank_codes portable_unrank_codes
#define lr_leech_unrank_codes_ref portable_unrank_codes_ref
int portable_unrank_codes(const uint64_t *idx, size_t n, int max_shell, int16_t *cls, uint8_t *codes);
int portable_unrank_codes_ref(const uint64_t *idx, size_t n, int max_shell, int16_t *cls, uint8_t *codes);
#include "layouts/leech/codes.c"
#undef lr_leech_unrank_codes
#undef lr_leech_unrank_codes_ref

typedef int (*codes_fn)(const uint64_t *, size_t, int, int16_t *, uint8_t *);

/* Both decoders (fast, and the portable one) against the reference. */
static int same(const uint64_t *idx, size_t n, int max_shell, const char *what)
{
    int16_t *cr = malloc(n * 2 + 2), *cf = malloc(n * 2 + 2);
    uint8_t *xr = malloc(24 * n + 1), *xf = malloc(24 * n + 1);
    T_ASSERT(cr && cf && xr && xf, "out of memory");
    T_OK(lr_leech_unrank_codes_ref(idx, n, max_shell, cr, xr));
    codes_fn fns[2] = { lr_leech_unrank_codes, portable_unrank_codes };
    for (int f = 0; f < 2; f++) {
        memset(cf, 0x55, n * 2), memset(xf, 0x55, 24 * n);
        T_OK(fns[f](idx, n, max_shell, cf, xf));
        for (size_t k = 0; k < n; k++) {
            T_ASSERT(cf[k] == cr[k], "%s (%s, L24(%d)) block %zu index %llu: class %d, want %d", what,
                     f ? "portable" : "fast", max_shell, k, (unsigned long long)idx[k], cf[k], cr[k]);
            T_ASSERT(!memcmp(xf + 24 * k, xr + 24 * k, 24), "%s (%s, L24(%d)) block %zu index %llu: codes differ", what,
                     f ? "portable" : "fast", max_shell, k, (unsigned long long)idx[k]);
        }
    }
    free(cr), free(cf), free(xr), free(xf);
    return T_PASS;
}

/* Every class: first, last and random points, shuffled so that the
 * batches mix classes and kind counts. */
static int test_every_class(void)
{
    for (int ms = 12; ms <= 13; ms++) {
        const lr_leech_class *cls;
        int nc;
        T_OK(lr_leech_classes(ms, &cls, &nc));
        size_t n = (size_t)nc * 10 + 2;
        uint64_t *idx = malloc(n * sizeof *idx);
        T_ASSERT(idx, "out of memory");
        lr_rng r;
        lr_rng_seed(&r, 40 + (uint64_t)ms);
        size_t k = 0;
        for (int c = 0; c < nc; c++) {
            idx[k++] = cls[c].offset, idx[k++] = cls[c].offset + cls[c].count - 1;
            for (int i = 0; i < 8; i++) idx[k++] = cls[c].offset + lr_rng_below(&r, cls[c].count);
        }
        idx[k++] = 0, idx[k++] = lr_leech_ball_points(ms) - 1;
        for (size_t i = n; i > 1; i--) {
            size_t j = (size_t)lr_rng_below(&r, i);
            uint64_t t = idx[i - 1];
            idx[i - 1] = idx[j], idx[j] = t;
        }
        if (same(idx, n, ms, "every class")) return T_FAIL;
        /* in class order too: long runs of one class */
        k = 0;
        for (int c = 0; c < nc; c++)
            for (int i = 0; i < 10; i++) idx[k++] = cls[c].offset + (i == 9 ? cls[c].count - 1 : lr_rng_below(&r, cls[c].count));
        if (same(idx, k, ms, "class runs")) return T_FAIL;
        free(idx);
    }
    return T_PASS;
}

/* Indices uniform over the ball (what the synthetic models hold), in
 * batches of every size around the decoder's batch of 64 (queues of zero,
 * one and two problems, odd lane counts). */
static int test_ball_uniform(void)
{
    lr_rng r;
    lr_rng_seed(&r, 7);
    size_t n = 20000;
    uint64_t *idx = malloc(n * sizeof *idx);
    T_ASSERT(idx, "out of memory");
    for (int ms = 12; ms <= 13; ms++) {
        for (size_t k = 0; k < n; k++) idx[k] = lr_rng_below(&r, lr_leech_ball_points(ms));
        if (same(idx, n, ms, "ball-uniform")) return T_FAIL;
        size_t at = 0;
        for (size_t len = 1; len <= 130 && at + len <= n; at += len, len++)
            if (same(idx + at, len, ms, "short batch")) return T_FAIL;
    }
    free(idx);
    return T_PASS;
}

static int test_outside_ball(void)
{
    uint64_t idx[70];
    int16_t cls[70];
    uint8_t codes[70 * 24];
    for (int i = 0; i < 70; i++) idx[i] = (uint64_t)i * 1000003;
    idx[66] = lr_leech_ball_points(12);
    T_ASSERT(lr_leech_unrank_codes(idx, 70, 12, cls, codes) == LR_ERANGE, "index past the ball accepted");
    T_ASSERT(strstr(lr_errmsg(), "block 66"), "message: %s", lr_errmsg());
    lr_clear_error();
    /* the blocks before it are decoded */
    int16_t cr[66];
    uint8_t xr[66 * 24];
    T_OK(lr_leech_unrank_codes_ref(idx, 66, 12, cr, xr));
    T_ASSERT(!memcmp(cls, cr, sizeof cr) && !memcmp(codes, xr, sizeof xr), "blocks before the bad one");
    idx[0] = UINT64_MAX;
    T_ASSERT(lr_leech_unrank_codes(idx, 1, 13, cls, codes) == LR_ERANGE, "UINT64_MAX accepted");
    T_ASSERT(lr_leech_unrank_codes(idx, 1, 11, cls, codes) == LR_EINVAL, "max_shell 11 accepted");
    lr_clear_error();
    return T_PASS;
}

/* Per-thread CPU time of both, on ball-uniform indices (informational). */
static int test_speed(void)
{
    lr_rng r;
    lr_rng_seed(&r, 9);
    size_t n = 1 << 16;
    uint64_t *idx = malloc(n * sizeof *idx);
    int16_t *cls = malloc(n * 2);
    uint8_t *codes = malloc(n * 24);
    T_ASSERT(idx && cls && codes, "out of memory");
    for (size_t k = 0; k < n; k++) idx[k] = lr_rng_below(&r, lr_leech_ball_points(12));
    double t[2];
    for (int f = 0; f < 2; f++) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        T_OK((f ? lr_leech_unrank_codes : lr_leech_unrank_codes_ref)(idx, n, 12, cls, codes));
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        t[f] = ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec)) / (double)n * 1e9;
    }
    printf("    codes: %.0f ns/block, reference %.0f ns/block (thread CPU time)\n", t[1], t[0]);
    free(idx), free(cls), free(codes);
    return T_PASS;
}

T_MAIN(T_CASE(test_every_class), T_CASE(test_ball_uniform), T_CASE(test_outside_ball), T_CASE(test_speed))
