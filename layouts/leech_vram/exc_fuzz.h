/* Fuzz-target helpers shared by the layouts with exception lists (I8x,
 * Planes14S, layouts/leech_vram/exc.h): a reader cycling over the input
 * bytes, and an exception list built from them. Header-only: each fuzz
 * target is its own program. */
#ifndef LR_LEECH_VRAM_EXC_FUZZ_H
#define LR_LEECH_VRAM_EXC_FUZZ_H
#include "layouts/leech_vram/exc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const uint8_t *p; size_t n, at; } lr_fuzz_bytes; /* n > 0 */

static inline uint32_t lr_fuzz_byte(lr_fuzz_bytes *b) { return b->p[b->at++ % b->n]; }

static inline int lr_fuzz_cmp_u64(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* ne (<= 64) draws of (row < rows, column < ncols), sorted, duplicates
 * dropped, into er/ee; each value (kind byte: odd = 4 raw bytes, even = a
 * small integer -2..2 times the scale of the table entry in [1, nentries)
 * named by 2 bytes, scale(tab, e)). Returns how many were kept. */
static inline int lr_fuzz_exceptions(lr_fuzz_bytes *b, int ne, int rows, uint32_t ncols, int nentries,
                                     float (*scale)(const uint8_t *tab, int e), const uint8_t *tab, uint32_t *er,
                                     lr_vram_exc *ee)
{
    uint64_t key[64];
    if (ne > 64) ne = 64;
    for (int i = 0; i < ne; i++) {
        uint32_t row = lr_fuzz_byte(b) % (uint32_t)rows, lo = lr_fuzz_byte(b), hi = lr_fuzz_byte(b);
        key[i] = (uint64_t)row << 32 | (lo | hi << 8) % ncols;
    }
    qsort(key, (size_t)ne, sizeof key[0], lr_fuzz_cmp_u64);
    int m = 0;
    for (int i = 0; i < ne; i++) {
        if (i && key[i] == key[i - 1]) continue;
        er[m] = (uint32_t)(key[i] >> 32);
        ee[m].col = (uint32_t)key[i];
        uint32_t kind = lr_fuzz_byte(b);
        if (kind & 1) {
            uint32_t bits = 0;
            for (int j = 0; j < 4; j++) bits |= lr_fuzz_byte(b) << 8 * j;
            memcpy(&ee[m].dw, &bits, 4);
        } else {
            uint32_t lo = lr_fuzz_byte(b), hi = lr_fuzz_byte(b);
            int e = 1 + (int)((lo | hi << 8) % (uint32_t)(nentries - 1));
            ee[m].dw = (float)((int)((kind >> 1) % 5) - 2) * scale(tab, e);
        }
        m++;
    }
    return m;
}

#endif
