/* Fuzz target: arbitrary bytes as an I8x layout with an arbitrary
 * exception list. Every block either decodes to a lattice point of the class
 * its header names or is rejected with LR_EFORMAT; whatever decodes agrees
 * with the kernel-view decoder (the int8 the MMA multiplies, plus the
 * exception); validate never crashes.
 * Input: [rows-1][nblk-1][tail][gain_bits][nexc] then bytes (cycled): the
 * exceptions' (row, column, value) first, then the segments. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/i8.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t next(const uint8_t *p, size_t n, size_t *at) { return p[(*at)++ % n]; }

static int cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6) return 0;
    int rows = 1 + data[0] % 40, nblk = 1 + data[1] % 20, tail = data[2] % 24, gb = data[3] % 3, ne = data[4] % 16;
    lr_i8 L;
    if (lr_i8_alloc(&L, rows, 24 * nblk + tail, 12, gb)) return 0;
    float cent[4] = { 0.5f, 0.75f, 1.0f, 1.25f };
    if (lr_i8_tab_build(12, gb, cent, L.tab, (size_t)L.nentries * 16)) { lr_i8_free(&L); return 0; }
    const uint8_t *p = data + 5;
    size_t n = size - 5, at = 0;
#define BYTE() next(p, n, &at)
    /* exceptions: sorted, unique (row, col); values either a plausible
     * correction (small integer times a table scale) or raw bits */
    uint64_t key[16];
    int k = 0;
    for (int i = 0; i < ne; i++) {
        uint32_t row = BYTE() % (uint32_t)rows, lo = BYTE(), hi = BYTE(), col = (lo | hi << 8) % (uint32_t)(24 * nblk);
        key[k++] = (uint64_t)row << 32 | col;
    }
    qsort(key, (size_t)k, sizeof key[0], cmp);
    uint32_t er[16];
    lr_i8_exc ee[16];
    int m = 0;
    for (int i = 0; i < k; i++) {
        if (i && key[i] == key[i - 1]) continue;
        er[m] = (uint32_t)(key[i] >> 32);
        ee[m].col = (uint32_t)key[i];
        uint8_t kind = BYTE();
        if (kind & 1) {
            uint32_t bits = 0;
            for (int j = 0; j < 4; j++) bits |= BYTE() << 8 * j;
            memcpy(&ee[m].dw, &bits, 4);
        } else {
            uint32_t lo = BYTE(), hi = BYTE();
            int e = 1 + (int)((lo | hi << 8) % (uint32_t)(L.nentries - 1));
            float s;
            memcpy(&s, L.tab + (size_t)e * 16 + 8, 4);
            ee[m].dw = (float)((kind >> 1) % 5 - 2) * s;
        }
        m++;
    }
    if (lr_i8_set_exceptions(&L, er, ee, (size_t)m)) __builtin_trap();
    for (size_t i = 0; i < L.bytes; i++) L.data[i] = BYTE();
    for (int r = 0; r < rows; r++) L.row_scale[r] = 1.0f;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nblk; b++) {
            int8_t x[24];
            int g;
            int rc = lr_i8_get(&L, r, b, x, &g);
            if (rc == LR_OK) {
                for (int i = 0; i < 24; i++) {
                    float s;
                    int v = lr_i8_kernel_value(L.data, L.tab, rows, L.cols, r, 24 * b + i, &s);
                    int exc = 0;
                    for (uint32_t j = L.exc_ptr[r]; j < L.exc_ptr[r + 1]; j++)
                        if (L.exc_col[j] == (uint32_t)(24 * b + i)) exc = 1;
                    if (!exc && v != x[i]) __builtin_trap();
                    if (exc && (abs(v) >= abs(x[i]) || (v < 0) != (x[i] < 0))) __builtin_trap();
                }
            } else if (rc != LR_EFORMAT) {
                __builtin_trap();
            }
        }
    int rc = lr_i8_validate(&L);
    if (rc != LR_OK && rc != LR_EFORMAT) __builtin_trap();
    lr_clear_error();
    lr_i8_free(&L);
    return 0;
}
