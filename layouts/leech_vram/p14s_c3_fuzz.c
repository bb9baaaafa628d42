/* Fuzz target: arbitrary bytes as Planes14S's 3-bit form (segments, an
 * exception list, sometimes a damaged class-table byte) over a shape whose
 * f16-form table is built. Every block either decodes to a lattice point of
 * the class its header names or is rejected with LR_EFORMAT; whatever
 * decodes agrees with the kernel view (the header's entry or its mirror,
 * the weight +-v s of the stored value exactly, the row's exception exactly
 * where a five-valued class's top is stored as v3); a form that validates has every
 * block decodable and its pads the origin; validate never crashes.
 * Input: [rows-1][nblk-1][tail][gain_bits + 3 (max_shell - 12)][nexc]
 * [table damage: byte index + 1, 0 none] then bytes (cycled): the
 * exceptions' (row, column) and values, then the segments. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/exc_fuzz.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float tab_f32(const uint8_t *tab, int e)
{
    float s;
    memcpy(&s, tab + (size_t)e * 16 + 12, 4);
    return s;
}

static const float *exc_at(const lr_p14s_c3 *F, int r, int col)
{
    for (uint32_t j = F->exc_ptr[r]; j < F->exc_ptr[r + 1]; j++)
        if (F->exc_col[j] == (uint32_t)col) return &F->exc_dw[j];
    return NULL;
}

/* The entry a decoded block must have come from: its class's, or (a class
 * with a top code, five values with 0) the mirror of it, where the form has
 * mirrors (p14s_c3.h). A mirror's code 4 is the negative top. */
static int entry_of(const lr_p14s *L, int c, int g, int mirror)
{
    if (c < 0) return 0;
    if (!mirror) return 1 + (c << L->gain_bits) + g;
    const lr_leech_class *all;
    int n, i = 0;
    if (lr_leech_classes(L->max_shell, &all, &n)) __builtin_trap();
    for (int k = 0; k < c; k++) i += all[k].nvals == 5 && all[k].vals[0] == 0;
    return L->nentries + (i << L->gain_bits) + g;
}

static void check_block(const lr_p14s *L, const lr_p14s_c3 *F, int r, int b, const int8_t x[24], int g)
{
    int c;
    if (lr_leech_class_of(x, L->max_shell, &c) != LR_OK || !lr_leech_is_point(x)) __builtin_trap();
    if (g < 0 || g >= 1 << L->gain_bits || (c < 0 && g)) __builtin_trap();
    const int h = lr_p14s_c3_kernel_header(F->data, L->rows, L->cols, r, b), mir = h >= L->nentries;
    const lr_leech_class *cl = NULL;
    int nc;
    if (c >= 0) {
        if (lr_leech_classes(L->max_shell, &cl, &nc)) __builtin_trap();
        cl += c;
    }
    if (mir && (!cl || cl->nvals != 5 || cl->vals[0] != 0 || F->nentries == L->nentries)) __builtin_trap();
    const int e = entry_of(L, c, g, mir);
    if (h != e) __builtin_trap();
    float w[24];
    lr_p14s_c3_kernel_block(F->data, F->tab, L->rows, L->cols, r, b, w);
    const float s = tab_f32(F->tab, e);
    for (int k = 0; k < 24; k++) {
        const int a = abs(x[k]), sign = x[k] < 0 ? -1 : 1;
        const int top = cl && cl->nvals == 5 && a == cl->vals[4] && !(cl->vals[0] == 0 && (sign > 0) != mir);
        const int stored = top ? cl->vals[3] : a;
        if (w[k] != (float)(sign * stored) * s) __builtin_trap();
        const float *dw = exc_at(F, r, 24 * b + k);
        if (!dw != !top) __builtin_trap();
        if (dw) {
            const float want = (float)(sign * (a - stored)) * s;
            if (memcmp(dw, &want, 4)) __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 7) return 0;
    const int rows = 1 + data[0] % 40, nblk = 1 + data[1] % 20, tail = data[2] % 24, gb = data[3] % 3;
    const int ms = 12 + (data[3] / 3) % 2, ne = data[4] % 64, damage = data[5];
    lr_p14s L;
    lr_p14s_c3 F;
    if (lr_p14s_alloc(&L, rows, 24 * nblk + tail, ms, gb)) __builtin_trap();
    const float cent[4] = { 0.5f, 0.75f, 1.0f, 1.25f };
    if (lr_p14s_tab_build(ms, gb, cent, L.tab, (size_t)L.nentries * 16)) __builtin_trap();
    if (lr_p14s_c3_form(&L, 1, &F) || lr_p14s_c3_validate(&L, &F)) __builtin_trap(); /* all origin */
    lr_fuzz_bytes fb = { data + 6, size - 6, 0 };
    uint32_t er[64];
    lr_vram_exc ee[64];
    const int m = lr_fuzz_exceptions(&fb, ne, rows, (uint32_t)(24 * nblk + tail), L.nentries, tab_f32, F.tab, er, ee);
    lr_exc_csr csr = { F.exc_ptr, &F.exc_col, &F.exc_dw, &F.nexc };
    if (lr_exc_install(csr, rows, er, ee, (size_t)m, "p14s_c3")) __builtin_trap();
    for (size_t i = 0; i < F.bytes; i++) F.data[i] = (uint8_t)lr_fuzz_byte(&fb);
    if (damage && (size_t)(damage - 1) < (size_t)F.nentries * 16) F.tab[damage - 1] ^= (uint8_t)lr_fuzz_byte(&fb) | 1u;
    int all_ok = 1;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nblk; b++) {
            int8_t x[24];
            int g, rc = lr_p14s_c3_get(&L, &F, r, b, x, &g);
            if (rc == LR_OK) check_block(&L, &F, r, b, x, g);
            else if (rc != LR_EFORMAT) __builtin_trap();
            else all_ok = 0;
        }
    const int rc = lr_p14s_c3_validate(&L, &F);
    if (rc != LR_OK && rc != LR_EFORMAT) __builtin_trap();
    if (rc == LR_OK) {
        if (!all_ok) __builtin_trap();
        for (int r = 0; r < L.rg * LR_P14S_ROWS; r++)
            for (int b = r < rows ? nblk : 0; b < L.sc * LR_P14S_BLKS; b++) {
                if (lr_p14s_c3_kernel_header(F.data, rows, L.cols, r, b)) __builtin_trap();
                for (int k = 0; k < 24; k++)
                    if (lr_p14s_c3_kernel_code(F.data, rows, L.cols, r, b, k)) __builtin_trap();
            }
    }
    lr_clear_error();
    lr_p14s_c3_free(&F);
    lr_p14s_free(&L);
    return 0;
}
