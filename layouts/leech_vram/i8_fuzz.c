/* Fuzz target: arbitrary bytes as an I8x layout with an arbitrary
 * exception list. Every block either decodes to a lattice point of the class
 * its header names or is rejected with LR_EFORMAT; whatever decodes agrees
 * with the kernel-view decoder (the int8 the MMA multiplies, plus the
 * exception); validate never crashes.
 * Input: [rows-1][nblk-1][tail][gain_bits][nexc] then bytes (cycled): the
 * exceptions' (row, column, value) first, then the segments. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/exc_fuzz.h"
#include "layouts/leech_vram/i8.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Entry e's f32 scale (bytes 8..11). */
static float tab_scale(const uint8_t *tab, int e)
{
    float s;
    memcpy(&s, tab + (size_t)e * 16 + 8, 4);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6) return 0;
    int rows = 1 + data[0] % 40, nblk = 1 + data[1] % 20, tail = data[2] % 24, gb = data[3] % 3, ne = data[4] % 16;
    lr_i8 L;
    if (lr_i8_alloc(&L, rows, 24 * nblk + tail, 12, gb)) return 0;
    float cent[4] = { 0.5f, 0.75f, 1.0f, 1.25f };
    if (lr_i8_tab_build(12, gb, cent, L.tab, (size_t)L.nentries * 16)) { lr_i8_free(&L); return 0; }
    lr_fuzz_bytes fb = { data + 5, size - 5, 0 };
    uint32_t er[16];
    lr_i8_exc ee[16];
    int m = lr_fuzz_exceptions(&fb, ne, rows, (uint32_t)(24 * nblk), L.nentries, tab_scale, L.tab, er, ee);
    if (lr_i8_set_exceptions(&L, er, ee, (size_t)m)) __builtin_trap();
    for (size_t i = 0; i < L.bytes; i++) L.data[i] = (uint8_t)lr_fuzz_byte(&fb);
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
