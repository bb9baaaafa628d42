/* Planes14 in MMA-fragment order: the VRAM layout the gemv_leech_p14 kernel
 * reads (docs/layouts.md has the bit-level description).
 *
 * The information of the published 14-byte record (class + gain, a sign
 * plane, three level planes) arranged for mma.m16n8k16 with the weights as
 * the A operand: a matrix is cut into row groups of 16 rows and super-chunks
 * of 8 blocks (192 columns, the LCM of the 24-column block and two 16-column
 * k-tiles... 12 k-tiles); each (row group, super-chunk) is one 1,792-byte
 * segment:
 *   [0, 256)     128 u16 headers: byte offset of the block's class-table entry
 *                (lr_ctab_entry * 16), at index (g * 2 + h) * 8 + b for row
 *                16 rg + g + 8 h, block 8 sc + b (g < 8, h < 2, b < 8);
 *   [256, 1792)  the 32 lanes' A fragments, 12 words per lane, stored as three
 *                16-byte chunks: chunk j of lane L at 256 + 512 j + 16 L.
 * Word t (k-tile t) of lane L = 4 g + q holds 8 weights as 4 pairs:
 *   pair 0 (row g,   cols c, c+1), pair 1 (row g+8, cols c, c+1),
 *   pair 2 (row g,   cols c+8, c+9), pair 3 (row g+8, cols c+8, c+9),
 *   with c = 16 t + 2 q inside the super-chunk;
 *   3-bit level of the pair's first weight at bit LA[p] = {0, 4, 16, 20}, of
 *   its second at LA[p] + 8; sign bits at SA[p] = {15, 11, 7, 3} and SA[p] + 16.
 * Rows pad to a multiple of 16 and blocks to a multiple of 8 with the origin
 * (header 0, weights 0). 4.667 bits per weight before padding. */
#ifndef LR_LEECH_VRAM_P14_H
#define LR_LEECH_VRAM_P14_H
#include <stddef.h>
#include <stdint.h>

#include "layouts/leech/shapegain.h"

#define LR_P14_SEG 1792
#define LR_P14_HDR 256
#define LR_P14_ROWS 16
#define LR_P14_BLKS 8
#define LR_P14_MAX_PARTS 8
#define LR_P14_ALIGN 256 /* image sections start at multiples of this */

/* A layout, possibly of several matrices with the same columns whose rows
 * are concatenated (fused q|k|v, gate|up). Gain centroids are per matrix, so
 * every distinct centroid vector gets its own copy of the class table
 * ("table" t = entries [t * nent1, (t + 1) * nent1)); a block's header
 * points into its own matrix's table, entry 0 of table 0 is the origin of
 * every part. The kernel sees one table of nentries entries and one
 * matrix: nothing else changes.
 *
 * The image: one buffer (what goes to the device in one copy), sections at
 * multiples of LR_P14_ALIGN: segments | class tables | row scales (f32,
 * rg * 16) | tail (f16 [rows][tail]). */
typedef struct lr_p14 {
    int rows, cols, nblk, tail, max_shell, gain_bits;
    int rg, sc;          /* row groups of 16 rows, super-chunks of 8 blocks */
    size_t bytes;        /* rg * sc * LR_P14_SEG */
    uint8_t *data;
    int nentries;        /* class-table entries, all tables (ntabs * nent1) */
    int nent1, ntabs;    /* entries of one table (layouts/leech_vram/ctab.h); tables */
    uint8_t *tab;        /* nentries * 16 */
    float *row_scale;    /* [rg * 16], 0 on pad rows */
    uint16_t *tail_f16;  /* [rows][tail], NULL when tail == 0 */
    int nparts;          /* >= 1 */
    int part_row0[LR_P14_MAX_PARTS + 1]; /* part p = rows [part_row0[p], part_row0[p + 1]) */
    int part_tab[LR_P14_MAX_PARTS];      /* its table */
    float tab_centroid[LR_P14_MAX_PARTS][4]; /* table t's centroids */
    size_t img_bytes, off_tab, off_scale, off_tail; /* the image (offsets of its sections) */
    uint8_t *img;
    int owned;           /* img is ours (lr_p14_free frees it) */
} lr_p14;

/* Allocates an empty (all-origin, one part) layout for a shape. */
int lr_p14_alloc(lr_p14 *L, int rows, int cols, int max_shell, int gain_bits);
void lr_p14_free(lr_p14 *L);

/* Geometry of the layout of parts (same cols, max_shell and gain_bits; rows
 * concatenated in order) without memory: sizes, sections, tables (parts with
 * bit-identical centroid vectors share one). LR_EINVAL naming the part for
 * mismatched columns, ball or gain widths; LR_ERANGE when the tables outgrow
 * the 16-bit headers (ntabs * nent1 > 4096). */
int lr_p14_plan(const lr_leech_matrix *const *parts, int nparts, lr_p14 *L);
/* Points a planned layout at an image of L->img_bytes (not owned). */
void lr_p14_bind(lr_p14 *L, void *img);
/* Fills row groups [rg0, rg1) of a bound image from the parts (their
 * segments, row scales and tail rows: disjoint bytes per row group, so
 * ranges may run concurrently); the range starting at 0 also writes the
 * class tables and the padding between sections. Any prior content of the
 * image is overwritten. Blocks are decoded straight to their codes
 * (lr_leech_unrank_codes) and each segment is written once.
 * lr_p14_fill_ref is the reference it is tested against, byte for byte and
 * error for error: lr_leech_unrank + lr_p14_put per block (5x slower). */
int lr_p14_fill(const lr_leech_matrix *const *parts, const lr_p14 *L, int rg0, int rg1);
int lr_p14_fill_ref(const lr_leech_matrix *const *parts, const lr_p14 *L, int rg0, int rg1);

/* Stores one block (lattice point x, gain g) at (row, blk). LR_EINVAL when x
 * is not a point of the ball. Rows g and g + 8 of a row group share words:
 * concurrent puts must be on distinct row groups. */
int lr_p14_put(lr_p14 *L, int row, int blk, const int8_t x[24], int gain);
/* Decodes one block back to its lattice point and gain. LR_EFORMAT for a
 * record no valid block produces (bad header, a header into another part's
 * table, level past the class's values, sign on a zero, wrong class). */
int lr_p14_get(const lr_p14 *L, int row, int blk, int8_t x[24], int *gain);
/* The part holding a row. */
int lr_p14_part_of(const lr_p14 *L, int row);
/* The 24 dequantized weights of a block exactly: x_i / sqrt(16 m) *
 * centroid[g] * row_scale[row] (centroids of the row's part); and as the
 * kernel forms them (f16 rounding of the per-entry scale and of
 * |x_i| * scale, row scale applied in f32). */
int lr_p14_get_f64(const lr_p14 *L, const float *centroid, int row, int blk, double w[24]);
int lr_p14_get_kernel(const lr_p14 *L, int row, int blk, float w[24]);

/* Archive -> layout: unranks every block with nthreads threads (0 = all
 * cores), builds the class table(s) and copies row scales and the dense
 * tail. The _parts form concatenates rows (see lr_p14_plan). */
int lr_p14_unfold(const lr_leech_matrix *m, int nthreads, lr_p14 *L);
int lr_p14_unfold_parts(const lr_leech_matrix *const *parts, int nparts, int nthreads, lr_p14 *L);

/* Checks a whole layout as loaded from untrusted bytes: every record decodes. */
int lr_p14_validate(const lr_p14 *L);

#endif
