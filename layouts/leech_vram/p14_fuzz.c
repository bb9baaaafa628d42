/* Fuzz target: arbitrary bytes as a Planes14 layout. Every block either
 * decodes to a lattice point of the class its header names or is rejected
 * with LR_EFORMAT; whatever decodes also survives the kernel-view decoder.
 * Input: [rows-1][nblk-1][tail][gain_bits] then layout bytes (cycled). */
#include "kernels/gemv_leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/p14.h"
#include "util/err.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    int rows = 1 + data[0] % 40, nblk = 1 + data[1] % 20, tail = data[2] % 24, gb = data[3] % 3;
    lr_p14 L;
    if (lr_p14_alloc(&L, rows, 24 * nblk + tail, 12, gb)) return 0;
    float cent[4] = { 0.5f, 0.75f, 1.0f, 1.25f };
    if (lr_ctab_build(12, gb, cent, L.tab, (size_t)L.nentries * 16)) { lr_p14_free(&L); return 0; }
    const uint8_t *p = data + 4;
    size_t n = size - 4;
    for (size_t i = 0; i < L.bytes; i++) L.data[i] = p[i % n];
    for (int r = 0; r < rows; r++) L.row_scale[r] = 1.0f;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nblk; b++) {
            int8_t x[24];
            int g;
            int rc = lr_p14_get(&L, r, b, x, &g);
            if (rc == LR_OK) {
                float w[24];
                if (lr_p14_get_kernel(&L, r, b, w) != LR_OK) __builtin_trap();
                for (int i = 0; i < 24; i++)
                    if (lr_gemv_leech_p14_weight(L.data, L.tab, rows, L.cols, r, 24 * b + i) != w[i]) __builtin_trap();
            } else if (rc != LR_EFORMAT) {
                __builtin_trap();
            }
        }
    lr_clear_error();
    lr_p14_free(&L);
    return 0;
}
