/* The bit-exactness check every VRAM layout's test runs (i8_test.c,
 * p14_test.c): a random or adversarial archive matrix is unfolded, and every
 * block must decode to the codec's unrank and gain, with every class of the
 * ball present once the matrix is large enough; the layout adds its own
 * per-block checks (kernel view) and whole-layout checks (pads, validate)
 * through the hooks. Header-only: static functions for test programs. */
#ifndef LR_LAYOUT_TESTLIB_H
#define LR_LAYOUT_TESTLIB_H
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/random.h"
#include "test/t.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

typedef struct lt_layout {
    const char *name;
    /* archive -> layout (an allocated object the hooks receive) */
    int (*unfold)(const lr_leech_matrix *m, int nthreads, void **L);
    int (*get)(const void *L, int row, int blk, int8_t x[24], int *gain);
    /* layout-specific checks of block (row, blk) holding point x with gain g */
    int (*check_block)(const void *L, const lr_leech_matrix *m, int row, int blk, const int8_t x[24], int g);
    /* after every block: pads, validate */
    int (*check_all)(const void *L, const lr_leech_matrix *m);
    void (*destroy)(void *L);
} lt_layout;

static inline int lt_exact(const lt_layout *ops, int rows, int cols, int max_shell, int gain_bits, int adversarial,
                           uint64_t seed)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(rows, cols, max_shell, gain_bits, adversarial, seed, &m));
    uint64_t *idx;
    uint8_t *gain;
    T_OK(lr_leech_random_indices(&m, &idx, &gain));
    void *L;
    T_OK(ops->unfold(&m, 2, &L));
    int nc;
    const lr_leech_class *cls;
    T_OK(lr_leech_classes(max_shell, &cls, &nc));
    char *seen = calloc((size_t)nc, 1);
    T_ASSERT(seen, "out of memory");
    int rc = T_PASS;
    for (int r = 0; r < rows && rc == T_PASS; r++)
        for (int b = 0; b < m.nblk && rc == T_PASS; b++) {
            size_t k = (size_t)r * m.nblk + b;
            int8_t want[24], got[24];
            int g, c;
            T_OK(lr_leech_unrank(idx[k], max_shell, want));
            T_OK(ops->get(L, r, b, got, &g));
            T_ASSERT(!memcmp(want, got, 24), "%s: row %d block %d (index %llu) decodes differently", ops->name, r, b,
                     (unsigned long long)idx[k]);
            T_ASSERT(idx[k] == 0 || g == gain[k], "%s: row %d block %d: gain %d, want %d", ops->name, r, b, g, gain[k]);
            T_OK(lr_leech_index_class(idx[k], max_shell, &c));
            if (c >= 0) seen[c] = 1;
            rc = ops->check_block(L, &m, r, b, want, gain[k]);
        }
    int missing = 0;
    for (int c = 0; c < nc; c++) missing += !seen[c];
    free(seen);
    if (rc == T_PASS) {
        T_ASSERT(rows * m.nblk < (adversarial ? 2 * nc + 2 : nc) || missing == 0, "%s: %d classes never exercised",
                 ops->name, missing);
        rc = ops->check_all(L, &m);
    }
    ops->destroy(L);
    lr_leech_random_free(&m);
    free(idx), free(gain);
    return rc;
}

#endif
