/* Fuzz target: arbitrary archives through the Planes14S unfolder. An
 * archive with an index outside the ball is rejected (LR_ERANGE), a
 * non-finite row scale or centroid (LR_EINVAL) or an f16-overflowing one
 * (LR_ERANGE) too, each with a message naming p14s; every accepted archive
 * unfolds to a layout that validates, whose blocks decode to the archive's
 * points and gains, with the kernel view's weights and exceptions as
 * the stored magnitudes imply, and which the fast unfold on 1-3 threads and
 * the reference unfold (unrank + put, one thread) give byte for byte, with
 * the same status on failure. The same archive as both parts of a gate|up
 * pair (lr_p14s_unfold_pair) fails or unfolds with it, fast and reference
 * alike, each pair of rows decoding to the same blocks. Every accepted
 * archive's layout converts to the 3-bit form, which validates and decodes
 * to the archive's points and gains.
 * Input: [rows-1][nblk-1][gain_bits][flags: bits 0-1 damage, 2 max_shell
 * 13, 3.. tail] then archive bytes (zero-padded). */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int same(const lr_p14s *A, const lr_p14s *B)
{
    return A->bytes == B->bytes && !memcmp(A->data, B->data, A->bytes) &&
           !memcmp(A->tab, B->tab, (size_t)A->nentries * 16) &&
           !memcmp(A->row_scale, B->row_scale, (size_t)A->rg * LR_P14S_ROWS * sizeof(float)) &&
           (!A->tail || !memcmp(A->tail_f16, B->tail_f16, (size_t)A->rows * A->tail * 2)) && A->nexc == B->nexc &&
           !memcmp(A->exc_ptr, B->exc_ptr, ((size_t)A->rows + 1) * 4) &&
           !memcmp(A->exc_col, B->exc_col, (size_t)A->nexc * 4) && !memcmp(A->exc_dw, B->exc_dw, (size_t)A->nexc * 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    lr_leech_matrix m;
    memset(&m, 0, sizeof m);
    int damage = data[3] & 3;
    m.rows = 1 + data[0] % 20, m.nblk = 1 + data[1] % 12, m.tail = (data[3] >> 3) % 24, m.cols = 24 * m.nblk + m.tail;
    m.max_shell = 12 + (data[3] >> 2 & 1), m.gain_bits = data[2] % 3;
    m.centroid[0] = 0.5f, m.centroid[1] = 1.0f, m.centroid[2] = 1.5f, m.centroid[3] = 2.0f;
    float scale[20];
    uint16_t tail[20 * 23];
    for (int i = 0; i < 20; i++) scale[i] = 0.25f * (float)(i + 1);
    for (int i = 0; i < 20 * 23; i++) tail[i] = (uint16_t)(0x3c00 + i);
    if (damage == 1) scale[m.rows - 1] = NAN;
    if (damage == 2) m.centroid[m.gain_bits ? 1 : 0] = INFINITY;
    if (damage == 3) m.centroid[0] = 1e6f; /* 1e6 / sqrt(16 m) is past f16 */
    m.row_scale = scale;
    m.tail_f16 = m.tail ? tail : NULL;
    size_t nb = (size_t)m.rows * m.nblk;
    m.archive_bytes = lr_leech_archive_bytes(nb, m.gain_bits);
    m.archive = calloc(m.archive_bytes, 1);
    if (!m.archive) return 0;
    memcpy(m.archive, data + 4, size - 4 < m.archive_bytes ? size - 4 : m.archive_bytes);
    lr_p14s L, R;
    int rc = lr_p14s_unfold(&m, 1 + data[0] % 3, &L);
    if (rc != LR_OK && (!strstr(lr_errmsg(), "p14s") || L.data || L.tab || L.exc_ptr)) __builtin_trap();
    int rr = lr_p14s_unfold_ref(&m, 1, &R); /* the reference path: same bytes, same status */
    if (rr != rc) __builtin_trap();
    if (damage && rc == LR_OK) __builtin_trap();
    if (rc == LR_OK) {
        if (!same(&L, &R)) __builtin_trap();
        lr_p14s_free(&R);
        uint64_t *idx = malloc(nb * sizeof *idx);
        uint8_t *gain = malloc(nb);
        if (lr_p14s_validate(&L) != LR_OK) __builtin_trap();
        if (idx && gain && lr_leech_archive_unpack(m.archive, m.archive_bytes, nb, m.gain_bits, idx, gain) != LR_OK)
            __builtin_trap(); /* unfold read it */
        for (size_t k = 0; idx && gain && k < nb; k++) {
            int8_t want[24], got[24];
            int g, c, r = (int)(k / m.nblk), b = (int)(k % m.nblk);
            if (lr_leech_unrank(idx[k], m.max_shell, want) || lr_p14s_get(&L, r, b, got, &g) ||
                memcmp(want, got, 24) || (idx[k] && g != gain[k]) || lr_leech_class_of(want, m.max_shell, &c))
                __builtin_trap();
            uint16_t s16;
            float w[24];
            memcpy(&s16, L.tab + (size_t)lr_p14s_kernel_header(L.data, L.rows, L.cols, r, b) + 8, 2);
            float s = lr_half_to_float(s16);
            lr_p14s_kernel_block(L.data, L.tab, L.rows, L.cols, r, b, w);
            for (int i = 0; i < 24; i++) {
                int a = abs(want[i]), sign = want[i] < 0 ? -1 : 1, u = lr_p14s_stored(m.max_shell, c, a), hit = 0;
                if (u < 0 || w[i] != (float)(sign * u) * s) __builtin_trap();
                for (uint32_t j = L.exc_ptr[r]; j < L.exc_ptr[r + 1]; j++)
                    if (L.exc_col[j] == (uint32_t)(24 * b + i)) {
                        float want_dw = (float)(sign * (a - u)) * s;
                        hit = 1;
                        if (memcmp(&L.exc_dw[j], &want_dw, 4)) __builtin_trap();
                    }
                if (hit != (u != a)) __builtin_trap();
            }
        }
        /* the 3-bit form of it: validates, every block the archive's */
        lr_p14s_c3 F;
        if (lr_p14s_c3_form(&L, 1 + data[2] % 3, &F) || lr_p14s_c3_validate(&L, &F)) __builtin_trap();
        for (size_t k = 0; idx && gain && k < nb; k++) {
            int8_t want[24], got[24];
            int g;
            if (lr_leech_unrank(idx[k], m.max_shell, want) ||
                lr_p14s_c3_get(&L, &F, (int)(k / m.nblk), (int)(k % m.nblk), got, &g) || memcmp(want, got, 24) ||
                (idx[k] && g != gain[k]))
                __builtin_trap();
        }
        lr_p14s_c3_free(&F);
        free(idx), free(gain); /* L: compared with the pair below */
    } else if (rc != LR_ERANGE && rc != LR_EINVAL) {
        __builtin_trap();
    }
    lr_clear_error();
    /* the same archive as both parts of a pair (gate|up; the second part's
       centroids scaled: two tables): the same status; fast and reference
       agree; row 2i + p decodes to the archive's row i */
    lr_leech_matrix m2 = m;
    for (int i = 0; i < 4; i++) m2.centroid[i] *= 1.25f;
    const lr_leech_matrix *pp[2] = { &m, &m2 };
    lr_p14s P, Q;
    int rp = lr_p14s_unfold_pair(pp, 1 + data[1] % 3, &P), rq = lr_p14s_unfold_pair_ref(pp, 1, &Q);
    if (rp != rq || (rp == LR_OK) != (rc == LR_OK)) __builtin_trap();
    if (rp == LR_OK) {
        if (!same(&P, &Q) || !P.pair || P.rows != 2 * m.rows || lr_p14s_validate(&P) != LR_OK) __builtin_trap();
        for (int r = 0; r < P.rows; r++)
            for (int b = 0; b < m.nblk; b++) {
                int8_t a[24], c[24];
                int ga, gc;
                if (lr_p14s_get(&P, r, b, a, &ga) || lr_p14s_get(&L, r / 2, b, c, &gc) || memcmp(a, c, 24) || ga != gc ||
                    P.row_scale[r] != scale[r / 2])
                    __builtin_trap();
            }
        lr_p14s_free(&P), lr_p14s_free(&Q);
    }
    if (rc == LR_OK) lr_p14s_free(&L);
    lr_clear_error();
    free(m.archive);
    return 0;
}
