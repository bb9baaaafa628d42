/* Fuzz target: arbitrary archives through the Planes14 unfolder. An archive
 * with an index outside the ball is rejected (LR_ERANGE); every accepted one
 * unfolds to a layout whose blocks decode to the archive's points, and to
 * the same image as the reference fill (lr_p14_fill_ref), which fails with
 * the same status where the fast one does.
 * Input: [rows-1][nblk-1][gain_bits] then archive bytes (zero-padded). */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/p14.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    lr_leech_matrix m;
    memset(&m, 0, sizeof m);
    m.rows = 1 + data[0] % 8, m.nblk = 1 + data[1] % 8, m.tail = 0, m.cols = 24 * m.nblk;
    m.max_shell = 12, m.gain_bits = data[2] % 3;
    m.centroid[0] = 0.5f, m.centroid[1] = 1.0f, m.centroid[2] = 1.5f, m.centroid[3] = 2.0f;
    float scale[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    m.row_scale = scale;
    size_t nb = (size_t)m.rows * m.nblk;
    m.archive_bytes = lr_leech_archive_bytes(nb, m.gain_bits);
    m.archive = calloc(m.archive_bytes, 1);
    if (!m.archive) return 0;
    memcpy(m.archive, data + 3, size - 3 < m.archive_bytes ? size - 3 : m.archive_bytes);
    lr_p14 L;
    int rc = lr_p14_unfold(&m, 1, &L);
    const lr_leech_matrix *ps[1] = { &m };
    lr_p14 R;
    if (lr_p14_plan(ps, 1, &R) == LR_OK) {
        uint8_t *img = malloc(R.img_bytes);
        if (img) {
            lr_p14_bind(&R, img);
            int rr = lr_p14_fill_ref(ps, &R, 0, R.rg);
            if (rr != rc || (rc == LR_OK && memcmp(img, L.img, R.img_bytes))) __builtin_trap();
            free(img);
        }
    }
    if (rc == LR_OK) {
        uint64_t *idx = malloc(nb * sizeof *idx);
        uint8_t *gain = malloc(nb);
        if (idx && gain && lr_leech_archive_unpack(m.archive, m.archive_bytes, nb, m.gain_bits, idx, gain) == LR_OK)
            for (size_t k = 0; k < nb; k++) {
                int8_t want[24], got[24];
                int g;
                if (lr_leech_unrank(idx[k], 12, want) || lr_p14_get(&L, (int)(k / m.nblk), (int)(k % m.nblk), got, &g) ||
                    memcmp(want, got, 24) || (idx[k] && g != gain[k]))
                    __builtin_trap();
            }
        free(idx), free(gain);
        lr_p14_free(&L);
    } else if (rc != LR_ERANGE && rc != LR_EINVAL) {
        __builtin_trap();
    }
    lr_clear_error();
    free(m.archive);
    return 0;
}
