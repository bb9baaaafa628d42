/* The body of the record-layout fuzz targets (rec14_fuzz.c, p12x_fuzz.c,
 * slot32_fuzz.c), one kind each. Input: [rows-1][nblk-1][tail][gain_bits]
 * then bytes, cycled.
 *  1. The bytes as a layout (Planes12x: a bitmap marks exception blocks,
 *     Slot32: each group's stride from one byte): every block decodes or is
 *     rejected with LR_EFORMAT, never UB; whatever decodes equals the
 *     kernel's view of the raw bytes (exceptions: of their 14-byte record).
 *  2. The bytes as an archive: unfolded or rejected (LR_ERANGE, LR_EINVAL);
 *     an unfolded archive's blocks decode to lr_leech_unrank. */
#ifndef LR_LEECH_VRAM_REC_FUZZ_H
#define LR_LEECH_VRAM_REC_FUZZ_H
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/rec.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void rec_fuzz_fill(uint8_t *dst, size_t n, const uint8_t *p, size_t np, size_t at)
{
    for (size_t i = 0; i < n; i++) dst[i] = p[(at + i) % np];
}

static int rec_fuzz_view_ok(const lr_rec *L, size_t b, const int8_t x[24], int gain)
{
    float v[24];
    int g;
    long e = -1;
    if (L->kind == LR_REC_P12X)
        for (uint32_t i = 0; i < L->nexc; i++)
            if (L->exc_idx[i] == b) e = (long)i;
    if (e >= 0) lr_rec_view_rec14(L->exc_rec + (size_t)14 * e, L->tab, v, &g);
    else lr_rec_view_block(L->kind, L->data, L->bases, L->tab, b, v, &g);
    int n2 = lr_leech_norm(x);
    if (g != gain) return 0;
    for (int i = 0; i < 24; i++) {
        float a = n2 ? (float)((x[i] < 0 ? -x[i] : x[i]) / sqrt((double)n2)) : 0.0f;
        if (fabsf(v[i]) != a || (x[i] < 0) != (v[i] < 0)) return 0;
    }
    return 1;
}

static void rec_fuzz_layout(int kind, const uint8_t *data, size_t size)
{
    int rows = 1 + data[0] % 12, nblk = 1 + data[1] % 12, tail = data[2] % 24, gb = data[3] % 2;
    const uint8_t *p = data + 4;
    size_t n = size - 4;
    float cent[2] = { 0.5f, 1.25f };
    lr_rec L;
    if (lr_rec_alloc(&L, kind, rows, 24 * nblk + tail, 12, gb, cent)) { lr_clear_error(); return; }
    if (kind == LR_REC_SLOT32) {
        L.ngroups = (L.nblocks + 31) / 32;
        L.bases = calloc(L.ngroups + 1, 4);
        for (size_t g = 0; g < L.ngroups; g++) L.bases[g + 1] = L.bases[g] + 32 * (2 + p[(n - 1 - g % n)] % 16);
    }
    size_t bytes = kind == LR_REC_P14 ? 14 * L.nblocks : kind == LR_REC_P12X ? 12 * L.nblocks : L.bases[L.ngroups];
    if (lr_rec_alloc_data(&L, bytes)) __builtin_trap();
    rec_fuzz_fill(L.data, bytes, p, n, 0);
    if (kind == LR_REC_P12X) {
        L.exc_idx = malloc(4 * L.nblocks);
        for (int r = 0; r < rows; r++) {
            L.exc_ptr[r + 1] = L.exc_ptr[r];
            for (int b = 0; b < nblk; b++) {
                size_t k = (size_t)r * nblk + b;
                if ((p[(k / 8) % n] >> (k % 8)) & 1) L.exc_idx[L.exc_ptr[r + 1]++] = (uint32_t)k;
            }
        }
        L.nexc = L.exc_ptr[rows];
        L.exc_rec = calloc((size_t)L.nexc * 14 + LR_REC_PAD, 1);
        rec_fuzz_fill(L.exc_rec, (size_t)L.nexc * 14, p, n, 7);
    }
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nblk; b++) {
            int8_t x[24];
            int g, rc = lr_rec_get(&L, r, b, x, &g);
            if (rc == LR_OK) {
                if (!rec_fuzz_view_ok(&L, (size_t)r * nblk + b, x, g)) __builtin_trap();
            } else if (rc != LR_EFORMAT) {
                __builtin_trap();
            }
        }
    int rc = lr_rec_validate(&L);
    if (rc != LR_OK && rc != LR_EFORMAT) __builtin_trap();
    lr_clear_error();
    lr_rec_free(&L);
}

static void rec_fuzz_archive(int kind, const uint8_t *data, size_t size)
{
    lr_leech_matrix m;
    memset(&m, 0, sizeof m);
    m.rows = 1 + data[0] % 8, m.nblk = 1 + data[1] % 8, m.tail = 0, m.cols = 24 * m.nblk;
    m.max_shell = 12, m.gain_bits = data[3] % 2;
    m.centroid[0] = 0.5f, m.centroid[1] = 1.0f;
    float scale[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    m.row_scale = scale;
    size_t nb = (size_t)m.rows * m.nblk;
    m.archive_bytes = lr_leech_archive_bytes(nb, m.gain_bits);
    m.archive = calloc(m.archive_bytes, 1);
    if (!m.archive) return;
    memcpy(m.archive, data + 4, size - 4 < m.archive_bytes ? size - 4 : m.archive_bytes);
    lr_rec L;
    int rc = kind == LR_REC_P14 ? lr_rec14_unfold(&m, 1, &L) : kind == LR_REC_P12X ? lr_p12x_unfold(&m, 1, &L)
                                                                                     : lr_slot32_unfold(&m, 1, &L);
    if (rc == LR_OK) {
        uint64_t *idx = malloc(nb * sizeof *idx);
        uint8_t *gain = malloc(nb);
        if (idx && gain && lr_leech_archive_unpack(m.archive, m.archive_bytes, nb, m.gain_bits, idx, gain) == LR_OK)
            for (size_t k = 0; k < nb; k++) {
                int8_t want[24], got[24];
                int g;
                if (lr_leech_unrank(idx[k], 12, want) || lr_rec_get(&L, (int)(k / m.nblk), (int)(k % m.nblk), got, &g) ||
                    memcmp(want, got, 24) || g != gain[k])
                    __builtin_trap();
            }
        if (lr_rec_validate(&L) != LR_OK) __builtin_trap();
        free(idx), free(gain);
        lr_rec_free(&L);
    } else if (rc != LR_ERANGE && rc != LR_EINVAL) {
        __builtin_trap();
    }
    lr_clear_error();
    free(m.archive);
}

static int rec_fuzz_one(int kind, const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    rec_fuzz_layout(kind, data, size);
    rec_fuzz_archive(kind, data, size);
    return 0;
}

#endif
