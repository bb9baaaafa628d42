/* Fuzz target: rank/unrank of the Leech ball on arbitrary bytes.
 * byte 0: bit 0 picks the ball (12 or 13), bit 1 folds the index into a
 *         range just past the ball, bit 2 builds the point from the lattice
 *         construction (so that most inputs are points) instead of raw bytes.
 * bytes 1..8: an index; bytes 9..32: a point (or its ingredients).
 * Any disagreement between unrank, rank, class lookups and membership aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "util/err.h"

static void check_index(uint64_t idx, int ms)
{
    int8_t x[24];
    int rc = lr_leech_unrank(idx, ms, x), cls, cls2;
    if (idx >= lr_leech_ball_points(ms)) {
        if (rc != LR_ERANGE || lr_leech_index_class(idx, ms, &cls) != LR_ERANGE) abort();
        return;
    }
    uint64_t back;
    if (rc || lr_leech_rank(x, ms, &back) || back != idx) abort();
    if (lr_leech_index_class(idx, ms, &cls) || lr_leech_class_of(x, ms, &cls2) || cls != cls2) abort();
    if (idx && (!lr_leech_is_point(x) || lr_leech_norm(x) > 16 * ms)) abort();
}

static void check_point(const int8_t x[24], int ms)
{
    uint64_t idx;
    int8_t y[24];
    int point = lr_leech_is_point(x), inside = lr_leech_norm(x) <= 16 * ms;
    int rc = lr_leech_rank(x, ms, &idx);
    if (rc != (point && inside ? LR_OK : LR_EINVAL)) abort();
    if (rc) return;
    if (idx >= lr_leech_ball_points(ms) || lr_leech_unrank(idx, ms, y) || memcmp(x, y, 24)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const int ms = 12 + (data[0] & 1);
    if (size >= 9) {
        uint64_t idx;
        memcpy(&idx, data + 1, 8);
        if (data[0] & 2) idx %= lr_leech_ball_points(ms) + 1000;
        check_index(idx, ms);
    }
    if (size >= 33) {
        int8_t x[24];
        const uint8_t *b = data + 9;
        if (data[0] & 4) { /* p + 2c + 4k with small k, the sum fixed through k_0 */
            const uint32_t *w = lr_golay_words();
            unsigned p = b[0] & 1;
            uint32_t c = w[((unsigned)b[1] << 4 | b[2] >> 4) & 4095];
            int sum = 0;
            for (int i = 0; i < 24; i++) {
                int k = (int)(b[i] & 3) - 2;
                x[i] = (int8_t)((int)p + 2 * (int)((c >> i) & 1) + 4 * k);
                sum += x[i];
            }
            if ((((unsigned)sum) & 7u) != 4u * p) x[0] = (int8_t)(x[0] + 4);
        } else {
            memcpy(x, b, 24);
        }
        check_point(x, ms);
    }
    return 0;
}
