/* Fuzz target: arbitrary bytes as a Planes14S layout with an arbitrary
 * exception list. Every block either decodes to a lattice point of the class
 * its header names or is rejected with LR_EFORMAT; whatever decodes agrees
 * with the kernel view (p14s_view.c: the header's entry, the weight
 * +-u s of the stored magnitude, exact in f32, the row's exception exactly where the
 * stored magnitude differs, dw = (|x| - u) s signed); a layout that
 * validates has every block decodable and its pads the origin; validate
 * never crashes. The 3-bit form's reference conversion succeeds exactly when
 * every block decodes and no exception lies on the tail, and then decodes
 * every block to the same point; the fast conversion never crashes and gives
 * the same bytes wherever the reference converts.
 * Input: [rows-1][nblk-1][tail][gain_bits + 3 (max_shell - 12)][nexc] then
 * bytes (cycled): the exceptions' (row, column) first, then their values
 * (kind byte: odd = 4 raw bytes, even = a small integer times the scale of
 * an entry named by 2 bytes), then the segments. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/exc_fuzz.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "util/err.h"
#include "util/half.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Entry e's f16 scale (bytes 8..9). */
static float tab_scale(const uint8_t *tab, int e)
{
    uint16_t s;
    memcpy(&s, tab + (size_t)e * 16 + 8, 2);
    return lr_half_to_float(s);
}

static float entry_scale(const lr_p14s *L, int e) { return tab_scale(L->tab, e); }

static const float *exc_at(const lr_p14s *L, int r, int col)
{
    for (uint32_t j = L->exc_ptr[r]; j < L->exc_ptr[r + 1]; j++)
        if (L->exc_col[j] == (uint32_t)col) return &L->exc_dw[j];
    return NULL;
}

/* A decoded block against the kernel's view of the raw bytes. */
static void check_block(const lr_p14s *L, int r, int b, const int8_t x[24], int g)
{
    int c;
    if (lr_leech_class_of(x, L->max_shell, &c) != LR_OK || !lr_leech_is_point(x)) __builtin_trap();
    int e = c < 0 ? 0 : 1 + (c << L->gain_bits) + g;
    if (g < 0 || g >= 1 << L->gain_bits || (c < 0 && g)) __builtin_trap();
    if (lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b) != 16 * e) __builtin_trap();
    float s = entry_scale(L, e);
    float wk[24];
    lr_p14s_kernel_block(L->data, L->tab, L->rows, L->cols, r, b, wk);
    double w[24];
    if (lr_p14s_get_f64(L, r, b, w) != LR_OK) __builtin_trap();
    for (int i = 0; i < 24; i++) {
        int a = abs(x[i]), sign = x[i] < 0 ? -1 : 1, col = 24 * b + i;
        int u = lr_p14s_stored(L->max_shell, c, a);
        if (u < 0 || u > a) __builtin_trap();
        int code = lr_p14s_kernel_code(L->data, L->rows, L->cols, r, col);
        if ((a == 0) != (code == LR_P14S_ZERO) || code > LR_P14S_ZERO || (a && (code >> 2 & 1) != (x[i] < 0)))
            __builtin_trap();
        if (wk[i] != (float)(sign * u) * s) __builtin_trap();
        const float *dw = exc_at(L, r, col);
        if (!dw != (u == a)) __builtin_trap();
        if (dw) {
            float want = (float)(sign * (a - u)) * s;
            if (memcmp(dw, &want, 4)) __builtin_trap();
        }
        if (w[i] != x[i] * (double)s * L->row_scale[r]) __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6) return 0;
    int rows = 1 + data[0] % 40, nblk = 1 + data[1] % 20, tail = data[2] % 24, gb = data[3] % 3;
    int ms = 12 + (data[3] / 3) % 2, ne = data[4] % 64;
    lr_p14s L;
    if (lr_p14s_alloc(&L, rows, 24 * nblk + tail, ms, gb)) __builtin_trap();
    float cent[4] = { 0.5f, 0.75f, 1.0f, 1.25f };
    if (lr_p14s_tab_build(ms, gb, cent, L.tab, (size_t)L.nentries * 16)) __builtin_trap();
    lr_fuzz_bytes fb = { data + 5, size - 5, 0 };
    uint32_t er[64];
    lr_p14s_exc ee[64];
    /* the tail's columns too: validate rejects those */
    int m = lr_fuzz_exceptions(&fb, ne, rows, (uint32_t)(24 * nblk + tail), L.nentries, tab_scale, L.tab, er, ee);
    if (lr_p14s_set_exceptions(&L, er, ee, (size_t)m)) __builtin_trap();
    for (size_t i = 0; i < L.bytes; i++) L.data[i] = (uint8_t)lr_fuzz_byte(&fb);
    for (int r = 0; r < rows; r++) L.row_scale[r] = 1.0f + 0.125f * (float)r;
    /* the int8 form (p14s_i8.c) of the same bytes: the table converts, and
       every block that decodes reads the same weights through it */
    uint8_t *d8 = malloc(L.bytes), *t8 = malloc((size_t)L.nentries * 16);
    if (!d8 || !t8 || lr_p14s_i8_form(&L, d8, t8)) __builtin_trap();
    int all_ok = 1;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nblk; b++) {
            int8_t x[24];
            int g;
            int rc = lr_p14s_get(&L, r, b, x, &g);
            if (rc == LR_OK) {
                check_block(&L, r, b, x, g);
                float w16[24], w8[24];
                lr_p14s_kernel_block(L.data, L.tab, L.rows, L.cols, r, b, w16);
                lr_p14s_i8_kernel_block(d8, t8, L.rows, L.cols, r, b, w8);
                if (memcmp(w16, w8, sizeof w16)) __builtin_trap();
            } else if (rc != LR_EFORMAT) __builtin_trap();
            else all_ok = 0;
        }
    free(d8), free(t8);
    /* the 3-bit form (p14s_c3.c): converts exactly when every block
       decodes and no exception lies past the blocks (on the tail), validates,
       and decodes every block to the same point */
    for (int r = 0; r < rows; r++)
        if (lr_p14s_check_row_exceptions(&L, r)) all_ok = 0;
    lr_p14s_c3 F;
    const int fr = lr_p14s_c3_form_ref(&L, 1, &F);
    if ((fr == LR_OK) != all_ok || (fr != LR_OK && fr != LR_EFORMAT)) __builtin_trap();
    /* the fast conversion: never crashes; the same bytes wherever the
       reference converts */
    lr_p14s_c3 G;
    const int gr = lr_p14s_c3_form(&L, 1 + rows % 2, &G);
    if (gr != LR_OK && gr != LR_EFORMAT) __builtin_trap();
    if (fr == LR_OK && (gr != LR_OK || G.bytes != F.bytes || memcmp(G.data, F.data, F.bytes) ||
                        memcmp(G.tab, F.tab, (size_t)F.nentries * 16) || G.nexc != F.nexc ||
                        memcmp(G.exc_ptr, F.exc_ptr, ((size_t)rows + 1) * 4) || memcmp(G.exc_col, F.exc_col, (size_t)F.nexc * 4) ||
                        memcmp(G.exc_dw, F.exc_dw, (size_t)F.nexc * 4)))
        __builtin_trap();
    if (gr == LR_OK) lr_p14s_c3_free(&G);
    lr_clear_error();
    if (fr == LR_OK) {
        if (lr_p14s_c3_validate(&L, &F)) __builtin_trap();
        for (int r = 0; r < rows; r++)
            for (int b = 0; b < nblk; b++) {
                int8_t x[24], y[24];
                int g, h;
                if (lr_p14s_get(&L, r, b, x, &g) || lr_p14s_c3_get(&L, &F, r, b, y, &h) || memcmp(x, y, 24) || g != h)
                    __builtin_trap();
            }
        lr_p14s_c3_free(&F);
    }
    lr_clear_error();
    int rc = lr_p14s_validate(&L);
    if (rc != LR_OK && rc != LR_EFORMAT) __builtin_trap();
    if (rc == LR_OK) {
        if (!all_ok) __builtin_trap();
        for (int r = 0; r < L.rg * LR_P14S_ROWS; r++)
            for (int b = r < rows ? nblk : 0; b < L.sc * LR_P14S_BLKS; b++) {
                if (lr_p14s_kernel_header(L.data, rows, L.cols, r, b)) __builtin_trap();
                for (int k = 0; k < 24; k++)
                    if (lr_p14s_kernel_code(L.data, rows, L.cols, r, 24 * b + k) != LR_P14S_ZERO) __builtin_trap();
            }
        for (uint32_t j = 0; j < L.nexc; j++)
            if (L.exc_col[j] >= (uint32_t)(24 * nblk)) __builtin_trap();
    }
    lr_clear_error();
    lr_p14s_free(&L);
    return 0;
}
