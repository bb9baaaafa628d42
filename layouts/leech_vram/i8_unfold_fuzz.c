/* Fuzz target: arbitrary archives through the I8x unfolder. An archive
 * with an index outside the ball is rejected (LR_ERANGE); every accepted one
 * unfolds to a layout that validates, whose blocks decode to the archive's
 * points and gains, and which equals the reference unfold
 * (lr_i8_unfold_ref) byte for byte, exceptions included; the reference
 * fails with the same status where the fast one does.
 * Input: [rows-1][nblk-1][gain_bits] then archive bytes (zero-padded). */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/i8.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    lr_leech_matrix m;
    memset(&m, 0, sizeof m);
    m.rows = 1 + data[0] % 20, m.nblk = 1 + data[1] % 12, m.tail = 0, m.cols = 24 * m.nblk;
    m.max_shell = 12, m.gain_bits = data[2] % 3;
    m.centroid[0] = 0.5f, m.centroid[1] = 1.0f, m.centroid[2] = 1.5f, m.centroid[3] = 2.0f;
    float scale[20];
    for (int i = 0; i < 20; i++) scale[i] = 1.0f;
    m.row_scale = scale;
    size_t nb = (size_t)m.rows * m.nblk;
    m.archive_bytes = lr_leech_archive_bytes(nb, m.gain_bits);
    m.archive = calloc(m.archive_bytes, 1);
    if (!m.archive) return 0;
    memcpy(m.archive, data + 3, size - 3 < m.archive_bytes ? size - 3 : m.archive_bytes);
    lr_i8 L, R;
    int rc = lr_i8_unfold(&m, 1 + data[0] % 3, &L), rr = lr_i8_unfold_ref(&m, 1, &R);
    if (rr != rc) __builtin_trap();
    if (rc == LR_OK) {
        if (R.bytes != L.bytes || memcmp(R.data, L.data, L.bytes) || R.nexc != L.nexc ||
            memcmp(R.exc_ptr, L.exc_ptr, ((size_t)L.rows + 1) * 4) || memcmp(R.exc_col, L.exc_col, (size_t)L.nexc * 4) ||
            memcmp(R.exc_dw, L.exc_dw, (size_t)L.nexc * 4))
            __builtin_trap();
        lr_i8_free(&R);
    }
    if (rc == LR_OK) {
        uint64_t *idx = malloc(nb * sizeof *idx);
        uint8_t *gain = malloc(nb);
        if (lr_i8_validate(&L) != LR_OK) __builtin_trap();
        if (idx && gain && lr_leech_archive_unpack(m.archive, m.archive_bytes, nb, m.gain_bits, idx, gain) == LR_OK)
            for (size_t k = 0; k < nb; k++) {
                int8_t want[24], got[24];
                int g;
                if (lr_leech_unrank(idx[k], 12, want) || lr_i8_get(&L, (int)(k / m.nblk), (int)(k % m.nblk), got, &g) ||
                    memcmp(want, got, 24) || (idx[k] && g != gain[k]))
                    __builtin_trap();
            }
        free(idx), free(gain);
        lr_i8_free(&L);
    } else if (rc != LR_ERANGE && rc != LR_EINVAL) {
        __builtin_trap();
    }
    lr_clear_error();
    free(m.archive);
    return 0;
}
