/* Fuzz target: arbitrary bytes as the timeline probe's device records (32
 * bytes each, a partial one ignored). lr_tl_launches either refuses them
 * with LR_EINVAL or groups every record into exactly one launch: the grids
 * sum to the records, each launch's CTAs are its kernel's, the launches come
 * in entry order with sane spans, and the exposed times sum to the step. */
#include "rt/timeline.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const size_t n = size / (8 * LR_TL_WORDS);
    if (n > 4096) return 0;
    uint64_t *raw = malloc(n * 8 * LR_TL_WORDS + 1);
    lr_tl_cta *c = malloc(sizeof *c * n + 1);
    if (!raw || !c) __builtin_trap();
    memcpy(raw, data, n * 8 * LR_TL_WORDS);
    lr_tl_unpack(raw, n, c);
    lr_tl_launch *L = NULL;
    size_t nl = 0;
    int rc = lr_tl_launches(c, n, &L, &nl);
    if (rc != LR_OK && rc != LR_EINVAL) __builtin_trap();
    if (rc != LR_OK && (L || nl)) __builtin_trap();
    if (rc == LR_OK) {
        size_t ctas = 0;
        double end = 0, sum = 0;
        for (size_t i = 0; i < nl; i++) {
            const lr_tl_launch *l = &L[i];
            ctas += l->grid;
            if (l->first + l->grid > n || l->entry0 < 0 || l->entry1 < l->entry0 || l->exit_med > l->exit1 ||
                l->exposed < 0 || l->late > l->grid)
                __builtin_trap();
            if (i && L[i - 1].entry0 > l->entry0) __builtin_trap();
            for (size_t j = l->first; j < l->first + l->grid; j++)
                if (c[j].mod != l->mod || c[j].grid != l->grid) __builtin_trap();
            sum += l->exposed;
            end = l->exit1 > end ? l->exit1 : end;
        }
        if (ctas != n || fabs(sum - end) > 1e-6 * (end > 1 ? end : 1)) __builtin_trap();
    }
    free(L), free(c), free(raw);
    lr_clear_error();
    return 0;
}
