/* Fuzz target: arbitrary indices through lr_leech_unrank_codes against its
 * reference (lr_leech_unrank_codes_ref): the same status, and where both
 * succeed the same classes and codes. Indices are taken modulo a little
 * more than the ball, so most decode and some are rejected.
 * Input: [ball: 12 + byte % 2] then 8 bytes per index (little-endian). */
#include "layouts/leech/leech.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int ms = 12 + data[0] % 2;
    size_t n = (size - 1) / 8;
    if (n > 4096) n = 4096;
    uint64_t *idx = malloc((n + 1) * sizeof *idx), span = lr_leech_ball_points(ms) + 64;
    int16_t *c1 = malloc((n + 1) * 2), *c2 = malloc((n + 1) * 2);
    uint8_t *x1 = malloc(24 * n + 1), *x2 = malloc(24 * n + 1);
    if (idx && c1 && c2 && x1 && x2) {
        for (size_t k = 0; k < n; k++) {
            uint64_t v;
            memcpy(&v, data + 1 + 8 * k, 8);
            idx[k] = v % span;
        }
        int r1 = lr_leech_unrank_codes(idx, n, ms, c1, x1), r2 = lr_leech_unrank_codes_ref(idx, n, ms, c2, x2);
        if ((r1 == LR_OK) != (r2 == LR_OK)) __builtin_trap();
        if (r1 == LR_OK && (memcmp(c1, c2, n * 2) || memcmp(x1, x2, 24 * n))) __builtin_trap();
        lr_clear_error();
    }
    free(idx), free(c1), free(c2), free(x1), free(x2);
    return 0;
}
