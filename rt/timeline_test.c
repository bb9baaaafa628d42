/* The timeline records grouped into launches: a hand-made step of three
 * kernels (one launched twice) with known times, packed as the device packs
 * them, shuffled; and records that are not whole launches refused. */
#include "rt/timeline.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Packs one record the way templates/lr_common.cuh's lr_tl_scope does. */
static void pack(uint64_t *r, uint64_t t0, uint32_t dwait, uint32_t dexit, uint32_t mod, uint32_t sm, uint32_t block,
                 uint32_t grid)
{
    r[0] = t0;
    r[1] = (uint64_t)dwait | (uint64_t)dexit << 32;
    r[2] = (uint64_t)mod | (uint64_t)sm << 32;
    r[3] = (uint64_t)block | (uint64_t)grid << 32;
}

#define NREC (4 + 2 + 4)
/* Kernel 1 (4 CTAs) at 1000 ns, kernel 2 (2 CTAs) at 5000 with a wait,
 * kernel 1 again at 9000; times relative to the first entry, 1e6 ns. */
static size_t make(uint64_t *raw)
{
    const uint64_t T = 1000000;
    size_t k = 0;
    for (uint32_t b = 0; b < 4; b++) pack(raw + 4 * k++, T + 1000 + 100 * b, LR_TL_NO_WAIT, 3000 + 500 * b, 1, b, b, 4);
    /* kernel 2: block 1 enters after block 0 passed its wait (late) */
    pack(raw + 4 * k++, T + 5000, 2000, 4000, 2, 7, 0, 2);
    pack(raw + 4 * k++, T + 7500, 100, 1000, 2, 8, 1, 2);
    for (uint32_t b = 0; b < 4; b++) pack(raw + 4 * k++, T + 9000 + 10 * b, 50, 1000, 1, b, 3 - b, 4);
    return k;
}

static int test_launches(void)
{
    uint64_t raw[4 * NREC];
    size_t n = make(raw);
    T_ASSERT(n == NREC, "made %zu", n);
    lr_rng g;
    lr_rng_seed(&g, 7);
    for (int pass = 0; pass < 3; pass++) {
        lr_tl_cta c[NREC];
        lr_tl_unpack(raw, n, c);
        T_ASSERT(c[4].dwait == 2000 && c[4].dexit == 4000 && c[4].mod == 2 && c[4].smid == 7 && c[4].grid == 2, "unpack");
        for (size_t i = n - 1; i > 0 && pass; i--) { /* the device appends in exit order: any order */
            size_t j = (size_t)(lr_rng_u64(&g) % (i + 1));
            lr_tl_cta t = c[i];
            c[i] = c[j], c[j] = t;
        }
        lr_tl_launch *L;
        size_t nl;
        T_OK(lr_tl_launches(c, n, &L, &nl));
        T_ASSERT(nl == 3, "%zu launches", nl);
        T_ASSERT(L[0].mod == 1 && L[1].mod == 2 && L[2].mod == 1, "order %u %u %u", L[0].mod, L[1].mod, L[2].mod);
        /* first: entries 0..0.3 us, exits at 3.0, 3.6, 4.2, 4.8 */
        T_ASSERT(fabs(L[0].entry0) < 1e-9 && fabs(L[0].entry1 - 0.3) < 1e-9, "entries %g %g", L[0].entry0, L[0].entry1);
        T_ASSERT(fabs(L[0].exit1 - 4.8) < 1e-9 && fabs(L[0].exit_med - 3.9) < 1e-9, "exits %g %g", L[0].exit1, L[0].exit_med);
        T_ASSERT(L[0].wait == L[0].entry0 && L[0].late == 0, "no wait: %g %u", L[0].wait, L[0].late);
        /* second: waits released at 6.0 (block 0) and 6.6 (block 1): 6.0; block 1 entered at 6.5, late */
        T_ASSERT(fabs(L[1].wait - 6.0) < 1e-9 && L[1].late == 1, "wait %g late %u", L[1].wait, L[1].late);
        T_ASSERT(fabs(L[1].exit1 - 8.0) < 1e-9 && fabs(L[1].exposed - 3.2) < 1e-9, "exit %g exposed %g", L[1].exit1,
                 L[1].exposed);
        T_ASSERT(fabs(L[2].exit1 - 9.03) < 1e-9, "third exit %g", L[2].exit1);
        double sum = 0;
        for (size_t i = 0; i < nl; i++) sum += L[i].exposed;
        T_ASSERT(fabs(sum - L[2].exit1) < 1e-9, "exposed sums to %g, the step to %g", sum, L[2].exit1);
        /* the CTAs of launch i are ctas[first .. first + grid) */
        for (size_t i = 0; i < nl; i++)
            for (size_t j = L[i].first; j < L[i].first + L[i].grid; j++) T_ASSERT(c[j].mod == L[i].mod, "launch %zu's CTAs", i);
        free(L);
    }
    return T_PASS;
}

static int test_refused(void)
{
    uint64_t raw[4 * NREC];
    size_t n = make(raw);
    lr_tl_cta c[NREC];
    lr_tl_launch *L;
    size_t nl;
    /* a record dropped: kernel 1 has 7 */
    lr_tl_unpack(raw, n - 1, c);
    T_ASSERT(lr_tl_launches(c, n - 1, &L, &nl) == LR_EINVAL && !L && !nl, "a missing record accepted");
    T_ASSERT(strstr(lr_errmsg(), "timeline"), "message: %s", lr_errmsg());
    /* a block twice in one launch */
    lr_tl_unpack(raw, n, c);
    c[5].block = 0;
    T_ASSERT(lr_tl_launches(c, n, &L, &nl) == LR_EINVAL, "a repeated block accepted");
    /* a block index past the grid */
    lr_tl_unpack(raw, n, c);
    c[1].block = 9;
    T_ASSERT(lr_tl_launches(c, n, &L, &nl) == LR_EINVAL, "a block past the grid accepted");
    T_OK(lr_tl_launches(c, 0, &L, &nl));
    T_ASSERT(!L && !nl, "no records, no launches");
    return T_PASS;
}

T_MAIN(T_CASE(test_launches), T_CASE(test_refused))
