/* Planes14S: the Planes14 information in a form the GEMV decodes with about
 * one ALU-pipe instruction per weight (docs/layouts.md, "Planes14S").
 *
 * Why: Nsight Compute on the Planes14 kernel shows the ALU pipe (LOP3, SHF,
 * PRMT: half rate on sm_90) as its limiter, at 2.5 ALU instructions per
 * weight (level selector, bias, sign), and 16 class-table loads per lane per
 * segment because mma's fragment order spreads every row over four lanes.
 * Planes14S fixes both:
 *  - signed class table: a weight is a 4-bit code; codes 0..7 pick a byte of
 *    the entry's 8-byte pool = the f16 high byte of a signed value, code 8 is
 *    zero (PRMT's sign-replicate of pool byte 0, which is never negative).
 *    One PRMT with selector nibbles (8, cA, 8, cB) yields half2(vA, vB)
 *    exactly (low bytes 0); the kernel scales each block's dot by s once;
 *  - permuted k: inside a 192-column super-chunk, lane q of the mma owns
 *    blocks 2q and 2q+1 (tiles 0-5 and 6-11), so each lane needs 4 table
 *    entries per segment instead of 16, and x in natural order is already
 *    the B fragment.
 * Values the f16 high byte cannot hold exactly (9, 11, 13: 4 significant
 * bits) and the fifth distinct nonzero magnitude of a class (the pool has 4
 * magnitudes x 2 signs) go to a per-row exception list, as in I8x.
 *
 * Segment (16 rows x 8 blocks = 192 columns), 1,792 bytes, row-group-major
 * like Planes14 (segment (rg, sc) at (rg * sc_n + sc) * 1792):
 *   [0, 256)     headers, u16 = byte offset of the block's class-table entry
 *                (entry * 16): lane L = 4 g + q (g < 8, q < 4) at 8 L + 2 i,
 *                i = 2 h + j -> row 16 rg + g + 8 h, block 8 sc + 2 q + j;
 *   [256, 1792)  codes: word t (tile 0..11) of lane L at
 *                256 + 512 (t >> 2) + 16 L + 4 (t & 3).
 * Word t of lane (g, q) covers block b = 2 q + (t >= 6), coordinates
 * c = 4 (t % 6) + 0..3; its eight 4-bit codes (nibble n at bits 4n..4n+3):
 *   nibble 1 / 3: row g,     coordinates c / c + 1
 *   nibble 0 / 2: row g + 8, coordinates c / c + 1
 *   nibble 5 / 7: row g,     coordinates c + 2 / c + 3
 *   nibble 4 / 6: row g + 8, coordinates c + 2 / c + 3
 * so the four PRMT selectors are (w & 0xF0F0) | 0x0808, ((w << 4) & ...) |
 * ..., ((w >> 16) & ...) | ..., ((w >> 12) & ...) | ....
 * Class-table entry (16 bytes; indices as layouts/leech_vram/ctab.h:
 * lr_ctab_entry(class, gain, gain_bits), entry 0 = the origin):
 *   bytes 0..3   f16 high bytes of +u0, +u1, +u2, +u3
 *   bytes 4..7   f16 high bytes of -u0, -u1, -u2, -u3
 *   bytes 8..11  half2 (s, s), s = f16(centroid[g] / sqrt(16 m)) (as ctab)
 *   bytes 12..15 the same s as f32 (what the GEMV multiplies by)
 * u = the class's stored magnitudes: its distinct nonzero |coordinates|
 * ascending, each mapped by st(v) = v - 1 for v in {9, 11, 13}, else v; a
 * class with five distinct nonzero magnitudes keeps the first four and
 * stores its largest (which appears once in every point) as st(v3). Unused
 * pool bytes are 0; the origin's entry is all zero. Code of coordinate x:
 * 8 if x = 0, else (index of its stored magnitude in u) + 4 (x < 0).
 * Codes 9..15 are invalid. Every coordinate whose stored magnitude differs
 * from |x| is an exception of its row: (column, dw = f32(sign(x) (|x| - u))
 * * s), added by the kernel as dw * x[col] before the row scale.
 * Rows pad to 16 and blocks to a multiple of 8 with the origin (header 0,
 * codes 8). Dense f16 tail and f32 row scales beside it, as Planes14 and
 * I8x. */
#ifndef LR_LEECH_VRAM_P14S_H
#define LR_LEECH_VRAM_P14S_H
#include <stddef.h>
#include <stdint.h>

#include "layouts/leech/shapegain.h"
#include "layouts/leech_vram/exc.h"

#define LR_P14S_SEG 1792
#define LR_P14S_HDR 256
#define LR_P14S_ROWS 16
#define LR_P14S_BLKS 8
#define LR_P14S_ZERO 8 /* the code of a zero coordinate */
#define LR_P14S_MAX_PARTS 8

typedef struct lr_p14s {
    int rows, cols, nblk, tail, max_shell, gain_bits;
    int rg, sc;            /* row groups of 16 rows, super-chunks of 8 blocks */
    size_t bytes;          /* rg * sc * LR_P14S_SEG */
    uint8_t *data;
    int nentries;          /* lr_ctab_entries */
    uint8_t *tab;          /* nentries * 16 */
    float *row_scale;      /* [rg * 16], 0 on pad rows */
    uint16_t *tail_f16;    /* [rows][tail] or NULL */
    uint32_t *exc_ptr;     /* [rows + 1] (CSR) */
    uint32_t *exc_col;     /* [nexc], ascending within a row */
    float *exc_dw;         /* [nexc] */
    uint32_t nexc;
    /* Several matrices with the same columns, rows concatenated (fused
     * q|k|v, gate|up: lr_p14s_unfold_parts): every distinct centroid vector
     * gets its own class table (table t = entries [t nent1, (t + 1) nent1));
     * a block's header points into its part's table, header 0 (entry 0 of
     * table 0) is the origin of every part. One matrix: nparts = ntabs = 1. */
    int nparts, ntabs, nent1;
    int part_row0[LR_P14S_MAX_PARTS + 1]; /* part p = rows [part_row0[p], part_row0[p + 1]) */
    int part_tab[LR_P14S_MAX_PARTS];      /* its table */
    /* 1: two parts of equal rows interleaved instead (lr_p14s_unfold_pair):
     * row 2i is part 0's row i, row 2i + 1 part 1's; part_row0 still counts
     * the parts' rows (0, R, 2R). Why: gate|up so that a row's gate and up
     * values meet in one row group, where the GEMV's end multiplies them
     * (SwiGLU) instead of a kernel of its own. */
    int pair;
} lr_p14s;

typedef lr_vram_exc lr_p14s_exc; /* (column, dw): layouts/leech_vram/exc.h */

/* An empty (all-origin) layout for a shape; no exceptions. */
int lr_p14s_alloc(lr_p14s *L, int rows, int cols, int max_shell, int gain_bits);
void lr_p14s_free(lr_p14s *L);
/* The class table for centroid[1 << gain_bits] (lr_ctab_entries entries). */
int lr_p14s_tab_build(int max_shell, int gain_bits, const float *centroid, uint8_t *tab, size_t tab_bytes);
/* The stored magnitude of value v (>= 0) in class c of L24(max_shell): what
 * its pool holds for v (v itself unless an exception is needed). */
int lr_p14s_stored(int max_shell, int cls, int v);
/* Stores a block's codes and header (the table must be built); the
 * coordinates needing an exception come back in exc[0 .. *nexc) (24 max).
 * LR_EINVAL when x is not a point of the ball. Concurrent puts must be on
 * distinct row groups. */
int lr_p14s_put(lr_p14s *L, int row, int blk, const int8_t x[24], int gain, lr_p14s_exc exc[24], int *nexc);
/* Installs the exception list: n pairs sorted by (row, col). */
int lr_p14s_set_exceptions(lr_p14s *L, const uint32_t *row, const lr_p14s_exc *e, size_t n);
/* Decodes a block (with its exceptions) to its lattice point and gain;
 * LR_EFORMAT for anything the unfolder cannot produce. */
int lr_p14s_get(const lr_p14s *L, int row, int blk, int8_t x[24], int *gain);
/* Exact weights x_i * s * row_scale (f64) of a block (s the entry's f16
 * scale, as the kernel uses it). */
int lr_p14s_get_f64(const lr_p14s *L, int row, int blk, double w[24]);
/* Archive -> layout on nthreads threads (0 = all cores): blocks decoded
 * straight to their codes (lr_leech_unrank_codes) through per-class level
 * tables, exceptions gathered per row. lr_p14s_unfold_ref, the reference it
 * is tested against byte for byte and error for error, unranks every block
 * and stores it with lr_p14s_put. */
int lr_p14s_unfold(const lr_leech_matrix *m, int nthreads, lr_p14s *L);
int lr_p14s_unfold_ref(const lr_leech_matrix *m, int nthreads, lr_p14s *L);
/* The same for parts (same columns, ball and gain width; rows concatenated
 * in order; LR_EINVAL naming the part otherwise, LR_ERANGE when the tables
 * outgrow the 16-bit headers). */
int lr_p14s_unfold_parts(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14s *L);
int lr_p14s_unfold_parts_ref(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14s *L);
/* Two parts of equal rows interleaved (lr_p14s.pair; rows 2i, 2i + 1 =
 * row i of parts 0, 1); LR_EINVAL unless both have the same rows. */
int lr_p14s_unfold_pair(const lr_leech_matrix *const parts[2], int nthreads, lr_p14s *L);
int lr_p14s_unfold_pair_ref(const lr_leech_matrix *const parts[2], int nthreads, lr_p14s *L);
/* The part holding a row, and the first entry of its table. */
int lr_p14s_part_of(const lr_p14s *L, int row);
/* Every record and exception decodes; the lists are well formed. */
int lr_p14s_validate(const lr_p14s *L);
/* Row r's exception list alone: its pointers in range, its columns
 * ascending and on the blocks (none on the dense tail, which no block reads
 * but the f16 GEMV's row end would add). LR_EFORMAT naming row and column. */
int lr_p14s_check_row_exceptions(const lr_p14s *L, int r);
/* Bits per weight (segments + exceptions + row pointers; scales, tail and
 * table excluded), over rows x 24 nblk weights. */
double lr_p14s_bits_per_weight(const lr_p14s *L);

/* ---- the kernel's view of raw bytes (layouts/leech_vram/p14s_view.c) ---- */
/* Byte offset of the segment word / header of (row, col) and the code. */
int lr_p14s_kernel_header(const uint8_t *W, int rows, int cols, int row, int blk);
int lr_p14s_kernel_code(const uint8_t *W, int rows, int cols, int row, int col);
/* The 24 codes of block (row, blk), a code word per four. */
void lr_p14s_kernel_block_codes(const uint8_t *W, int rows, int cols, int row, int blk, int code[24]);
/* The weights the kernel applies for block (row, blk): PRMT of the entry's
 * pool by the code (code 8 and invalid codes >= 8 give what PRMT gives: the
 * sign-replicated pool byte) as f16 v, times the entry's f32 scale s (bytes
 * 12..15): the kernel sums v x over the block on tensor cores and scales the
 * block's sum by s in f32, so v * s here is exact (3 + 11 significant bits). */
void lr_p14s_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, float w[24]);

/* ---- the int8 form (layouts/leech_vram/p14s_i8.c) ----
 * The same information for the GEMV's int8 tensor-core mode (LR_I8,
 * templates/gemv_leech_p14s.cu): headers, exceptions, row scales and tail
 * unchanged; in every code word the nibbles regrouped so each 16-bit half
 * is one row's four coordinates, and the pool bytes of every class-table
 * entry as int8 values. Why: a PRMT whose selector is the half word as it
 * is then yields four int8 weights (the f16 form needs a LOP3 and shifts
 * for two), one PRMT per four weights against one per two.
 *   word t of lane (g, q) (same place as above): nibble n (0..3) = row g,
 *   coordinate 4 (t % 6) + n; nibble 4 + n = row g + 8, the same coordinate
 *   (the f16 form's nibbles 2n + 1 and 2n);
 *   table entry: bytes 0..7 = int8 of the f16 pool value (+u0..+u3,
 *   -u0..-u3), bytes 8..11 = 0, bytes 12..15 = the f32 scale s. */
/* Writes L's segments (L->bytes) and class table (nentries * 16 bytes) in
 * the int8 form; LR_EFORMAT when a pool byte is not an integer in
 * [-127, 127] (the unfolder never writes one). data and tab may be L's own
 * (in place). */
int lr_p14s_i8_form(const lr_p14s *L, uint8_t *data, uint8_t *tab);
/* The int8 form's word from the f16 form's, and back. */
uint32_t lr_p14s_i8_word(uint32_t w);
uint32_t lr_p14s_i8_word_inv(uint32_t w);
/* The weights the int8 kernel applies for block (row, blk) of int8-form
 * bytes: PRMT of the entry's int8 pool by the code (code 8 and invalid codes
 * >= 8: the sign-replicated pool byte, 0 or -1) times the entry's f32 scale
 * (exact). Equal to lr_p14s_kernel_block of the f16 form it came from for
 * every code the unfolder writes (0..8). */
void lr_p14s_i8_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, float w[24]);

#endif
