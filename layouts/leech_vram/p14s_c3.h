/* Planes14S's 3-bit form: the Planes14S information at about 3.6 bits per
 * weight, for the GEMV's int8 mode (templates/gemv_leech_p14s.cu LR_C3;
 * docs/layouts.md, "The 3-bit form").
 *
 * Why: the int8 mode made the decode cheap enough that the kernel is bound by
 * its bytes; 3-bit codes and 12-bit headers cut them by a quarter. A code is
 * I8x's (level | sign << 2, a PRMT selector into the entry's 8-byte int8
 * pool: +v0..+v3 then -v0..-v3, v = the class's distinct |coordinates|
 * ascending, 0 included when present, zero-filled). A class with five values
 * (its largest, the top, appears once in every point at shell 12; class 314
 * of shell 13 has two): when 0 is one of them (15 of the 16 at shell 12),
 * pool byte 4 (the unused "-0") is +v4, so a positive top is code 4, and a
 * block whose tops are all negative takes the entry's *mirror*, the same
 * entry with -v4 in byte 4, where they are code 4; otherwise (the sixteenth
 * class, a negative top beside a positive one, or a form whose mirrors would
 * not fit the 12-bit headers) a top is stored as v3 with an exception
 * (column, dw = f32(sign (v4 - v3)) * s), as I8x does.
 * No other coordinate needs one (int8 holds 9, 11, 13 exactly). Why the
 * mirrors: a negative top was an exception in 1.8 of 100 ball-drawn blocks,
 * 8 bytes each, 0.047 bits per weight; now almost none are left.
 *
 * Same row groups, super-chunks, permuted k, row scales and tail as the f16
 * form; segment (16 rows x 8 blocks), 1,344 bytes, at (rg * sc_n + sc) *
 * 1344. Lane L = 4 g + q owns rows g (h = 0) and g + 8 (h = 1) x blocks 2q + u
 * (u = 0, 1), 96 codes in nine stored words S0..S8 and four 12-bit entry
 * indices:
 *   [0, 512)      S0..S3 of lane L at 16 L (one 16-byte load)
 *   [512, 1024)   S4..S7 at 512 + 16 L
 *   [1024, 1280)  S8 at 1024 + 8 L, the header word H at 1024 + 8 L + 4
 *   [1280, 1344)  the header half word H2 at 1280 + 2 L
 * Virtual word t (0..11) is the int8 form's word t: block 2q + (t >= 6),
 * nibble n < 4 = row g's coordinate 4 (t % 6) + n, nibble 4 + n = row g + 8's,
 * each nibble a 3-bit code (bit 3 zero). Of triple G = t / 4 (words S3G,
 * S3G+1, S3G+2), t % 4 = m < 3 is S3G+m & 0x77777777, and t % 4 = 3 has in
 * nibble n bit j bit 3 of nibble n of S3G+j: the kernel gets the four from
 * three loads with three ANDs and one gather of the spare bits.
 * Headers (entry index e[h][u] of row g + 8h, block 2q + u; entry byte offset
 * = 16 e): H bits 4-15 = e[0][0], bits 20-31 = e[0][1], H2 bits 4-15 =
 * e[1][0]; e[1][1] bits 0-3 / 4-7 / 8-11 in H bits 0-3 / 16-19 and H2 bits
 * 0-3 (so H & 0xfff0fff0 is the first two entries' byte offsets).
 * Class table entry (16 bytes): bytes 0..7 the int8 pool, 8..11 zero,
 * 12..15 the f32 scale s of the f16 form's entry. Entries 0..N-1 (N = the
 * f16 form's entries) are the f16 form's, by index (per part); then the
 * mirrors, N + (t M + i) 2^gain_bits + gain for table t, the i-th class
 * with a top code (class order) and each gain, M such classes (15 at shell
 * 12), where all of them fit 4096 entries (lr_p14s_c3_entries), else none.
 * Pads: the origin (entry 0, all zero; codes 0). */
#ifndef LR_LEECH_VRAM_P14S_C3_H
#define LR_LEECH_VRAM_P14S_C3_H
#include <stddef.h>
#include <stdint.h>

#include "layouts/leech_vram/p14s.h"

#define LR_P14S_C3_SEG 1344

typedef struct lr_p14s_c3 {
    size_t bytes;      /* rg * sc * LR_P14S_C3_SEG of the layout it came from */
    uint8_t *data;
    int nentries;      /* the layout's, plus the mirrors (lr_p14s_c3_entries) */
    uint8_t *tab;      /* nentries * 16 */
    uint32_t *exc_ptr; /* [rows + 1] (CSR, columns ascending in a row) */
    uint32_t *exc_col;
    float *exc_dw;
    uint32_t nexc;
} lr_p14s_c3;

/* The 3-bit form of a Planes14S layout (every part and pair layout; its row
 * scales and tail are shared, not copied), on nthreads threads (0 = all
 * cores), for layouts as the unfolder writes them: codes mapped per class
 * without decoding blocks (entries, codes and the exceptions' places are
 * checked, LR_EFORMAT; that blocks are lattice points and exceptions' values
 * are not). lr_p14s_c3_form_ref, the reference it is tested against byte for
 * byte, decodes every block (lr_p14s_get, refusing a malformed layout with
 * its error) and stores it again (~20x slower). On failure F is empty. */
int lr_p14s_c3_form(const lr_p14s *L, int nthreads, lr_p14s_c3 *F);
int lr_p14s_c3_form_ref(const lr_p14s *L, int nthreads, lr_p14s_c3 *F);
void lr_p14s_c3_free(lr_p14s_c3 *F);
/* The form's class-table entries for a Planes14S layout of nentries entries
 * in ntabs tables (L24(max_shell), gain_bits): what the kernel is
 * specialized on, known before converting. */
int lr_p14s_c3_entries(int max_shell, int gain_bits, int nentries, int ntabs, int *n);
/* Archive -> Planes14S -> the 3-bit form (both kept: F shares L's scales;
 * on failure neither is). */
int lr_p14s_c3_unfold(const lr_leech_matrix *m, int nthreads, lr_p14s *L, lr_p14s_c3 *F);
/* Decodes block (row, blk) of the form to its lattice point and gain, with
 * every check the form's writer implies (entry inside the row's part, pool
 * bytes, exceptions bit for bit); LR_EFORMAT otherwise. L gives the shape. */
int lr_p14s_c3_get(const lr_p14s *L, const lr_p14s_c3 *F, int row, int blk, int8_t x[24], int *gain);
/* Every block and exception of the form decodes; the lists are well formed. */
int lr_p14s_c3_validate(const lr_p14s *L, const lr_p14s_c3 *F);
/* Bits per weight (segments + exceptions + row pointers), as the f16 form's. */
double lr_p14s_c3_bits_per_weight(const lr_p14s *L, const lr_p14s_c3 *F);
/* The kernel's view of raw bytes: the entry index of block (row, blk), the
 * 3-bit code of its coordinate k, and the weights the kernel applies (int8
 * pool byte of the code times the entry's f32 scale, exact). */
int lr_p14s_c3_kernel_header(const uint8_t *W, int rows, int cols, int row, int blk);
int lr_p14s_c3_kernel_code(const uint8_t *W, int rows, int cols, int row, int blk, int k);
void lr_p14s_c3_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, float w[24]);

#endif
