/* Int8 tensor-core Leech layout ("I8x", docs/layouts.md): 3 bits per weight
 * (2-bit level + sign) in MMA-fragment order for mma.m16n8k32.s8 with W as
 * A, 12-bit class-table headers, and a per-row exception list for the
 * coordinates a 4-entry class table cannot hold. About 3.6 bits per weight.
 *
 * A matrix is cut into row groups of 16 rows and super-chunks of 8 blocks
 * (192 columns); one block is one k32 step (k 0..23 real, 24..31 zero in x).
 * Each (row group, super-chunk) is one 1,344-byte segment:
 *   [0, 192)     headers: 24 bytes per g < 8 (rows g, g + 8), six LE words
 *                H0..H5 holding 16 12-bit entry indices j = h * 8 + b
 *                (row g + 8 h, block b of the super-chunk):
 *                  j < 6:       word j, bits 4..15
 *                  6 <= j < 12: word j - 6, bits 20..31
 *                  j = 12, 13:  index bits 0-3 / 4-7 / 8-11 in bits 0-3 (j 12)
 *                               or 16-19 (j 13) of words 0 / 1 / 2
 *                  j = 14, 15:  the same in words 3 / 4 / 5
 *                so the kernel gets entry byte offsets (index << 4) with one
 *                or two instructions for j < 12.
 *   [192, 1344)  codes: lane L = 4 g + q owns words w0..w11 (q < 2) or
 *                w0..w5 (q >= 2): w0..w3 at 192 + 16 L; w4..w7 at
 *                704 + 48 g + 16 q (q < 2), w4, w5 at 704 + 48 g + 32 + 8 (q - 2);
 *                w8..w11 at 1088 + 32 g + 16 q (q < 2).
 * Group G < 4 = words (A, B, C) = (w[3G], w[3G+1], w[3G+2]) holds eight
 * PRMT selectors of four 3-bit nibbles (bit 3 of each nibble zero):
 *   s = 0..5: word 3G + s / 2, nibble n at bits (s % 2) * 16 + 4 n + 0..2;
 *   s = 6, 7: nibble n, code bit j from word 3G + j, bit (s - 6) * 16 + 4 n + 3.
 * Selector index of (block b, A register r): r < 2: 2 b + r (groups 0, 1),
 * r >= 2: 16 + 2 b + r - 2 (groups 2, 3). Register r of lane (g, q) is row
 * g + 8 (r & 1), columns k = 16 (r >> 1) + 4 q + n (n = nibble) of the block;
 * columns 24..31 are not stored. Code = level | sign << 2 picks byte code of
 * the 8-byte pair (e.x, e.y) of the class-table entry:
 *   entry (16 bytes): e.x = int8 (+v0, +v1, +v2, +v3), e.y = (-v0, -v1, -v2,
 *   -v3), e.z = f32 s = centroid[g] / sqrt(16 m), e.w = 0; v = the class's
 *   distinct |coordinates| ascending (fewer than 4: zero-filled).
 * Entry indices as in layouts/leech_vram/ctab.h (0 = origin). A class with
 * five values (3.5% of the ball, the largest appearing once) stores its
 * v4 coordinates as level 3 and lists them as exceptions of the row:
 * exc_ptr[rows + 1] (CSR), exc_col (column, ascending in a row), exc_dw =
 * f32 (sign * (v4 - v3)) * s, added as dw * x[col] before the row scale.
 * Rows pad to 16 and blocks to 8 with the origin. Dense f16 tail and f32 row
 * scales beside it, as Planes14. */
#ifndef LR_LEECH_VRAM_I8_H
#define LR_LEECH_VRAM_I8_H
#include <stddef.h>
#include <stdint.h>

#include "layouts/leech/shapegain.h"
#include "layouts/leech_vram/exc.h"

#define LR_I8_SEG 1344
#define LR_I8_HDR 192
#define LR_I8_ROWS 16
#define LR_I8_BLKS 8
#define LR_I8_X_RANGE 32639 /* |x| quantized to 127 * 256 + 127: two int8 digits */

typedef struct lr_i8 {
    int rows, cols, nblk, tail, max_shell, gain_bits;
    int rg, sc;
    size_t bytes;          /* rg * sc * LR_I8_SEG */
    uint8_t *data;
    int nentries;
    uint8_t *tab;          /* nentries * 16 */
    float *row_scale;      /* [rg * 16] */
    uint16_t *tail_f16;    /* [rows][tail] or NULL */
    uint32_t *exc_ptr;     /* [rows + 1] */
    uint32_t *exc_col;     /* [nexc] */
    float *exc_dw;         /* [nexc] */
    uint32_t nexc;
} lr_i8;

typedef lr_vram_exc lr_i8_exc; /* (column, dw): layouts/leech_vram/exc.h */

int lr_i8_alloc(lr_i8 *L, int rows, int cols, int max_shell, int gain_bits);
void lr_i8_free(lr_i8 *L);
/* The class table for centroid[1 << gain_bits] (lr_ctab_entries entries). */
int lr_i8_tab_build(int max_shell, int gain_bits, const float *centroid, uint8_t *tab, size_t tab_bytes);

/* Stores a block's codes and header; the coordinates needing an exception
 * (|x_i| = v4 of a five-valued class) come back in exc[0 .. *nexc) (24 max)
 * with the class table's scale (the table must be built). Concurrent puts
 * must be on distinct row groups. */
int lr_i8_put(lr_i8 *L, int row, int blk, const int8_t x[24], int gain, lr_i8_exc exc[24], int *nexc);
/* Installs the exception list: n triples sorted by (row, col). */
int lr_i8_set_exceptions(lr_i8 *L, const uint32_t *row, const lr_i8_exc *e, size_t n);
/* Decodes a block (with its exceptions) to its lattice point and gain;
 * LR_EFORMAT for anything the unfolder cannot produce. */
int lr_i8_get(const lr_i8 *L, int row, int blk, int8_t x[24], int *gain);
/* Exact weights x_i * s * row_scale (f64) of a block. */
int lr_i8_get_f64(const lr_i8 *L, const float *centroid, int row, int blk, double w[24]);

/* The kernel's view of the raw bytes: the int8 it multiplies at (row, col <
 * 24 nblk) and the f32 scale of its block (before row scale, x scale and
 * exceptions). */
int lr_i8_kernel_value(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int col, float *scale);
/* The same for the 24 coordinates of block (row, blk). */
void lr_i8_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, int8_t v[24],
                        float *scale);
/* Entry index of block (row, blk) read from the raw bytes. */
int lr_i8_kernel_header(const uint8_t *W, int rows, int cols, int row, int blk);

/* Archive -> layout on nthreads threads (0 = all cores). Blocks are decoded
 * straight to their codes (lr_leech_unrank_codes) and each segment is
 * written once; lr_i8_unfold_ref, the reference it is tested against byte
 * for byte (segments, exceptions) and error for error, unranks every block
 * and stores it with lr_i8_put (6x slower). */
int lr_i8_unfold(const lr_leech_matrix *m, int nthreads, lr_i8 *L);
int lr_i8_unfold_ref(const lr_leech_matrix *m, int nthreads, lr_i8 *L);
/* Every record and exception decodes; the lists are well formed. */
int lr_i8_validate(const lr_i8 *L);
/* Bits per weight of the layout (segments + exceptions + row pointers;
 * scales, tail and table excluded), over rows x 24 nblk weights. */
double lr_i8_bits_per_weight(const lr_i8 *L);

#endif
