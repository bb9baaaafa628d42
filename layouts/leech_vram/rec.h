/* The published Leech VRAM records (github pjmalandrino/llvq, the system
 * seed 000 describes), rebuilt as baselines so the benchmark can time them
 * beside our fragment-ordered layouts. docs/layouts.md ("Published record
 * layouts") has the bit formats; the host decoders here are their single
 * source of truth, tied to lr_leech_unrank by the tests.
 *
 * Common to the three: blocks in flat row-major order (b = row * nblk +
 * blk); every record starts with [class id : 9][gain : 1] where class id 0 =
 * the origin and 1 + c = class c of lr_leech_classes (the published v1
 * order); bits are packed LSB-first within a byte, bytes ascending, so a
 * little-endian u32 read gives the words. A slot's level indexes the class's
 * distinct |values| in the published canonical order: descending count, ties
 * by descending |value| (lr_rec_levels). The gain field is one bit wide
 * (as published): 0 or 1 gain bits, never 2.
 *
 *   Planes14 (LR_REC_P14): 14-byte records [id 9][gain 1][sign 24][p0 24]
 *     [p1 24][p2 24][0 : 6], level = p0 | p1 << 1 | p2 << 2.
 *   Planes12x (LR_REC_P12X): 12-byte records [id 9][gain 1][sign 24][p0 24]
 *     [p1 24][0 : 14], level = p0 | p1 << 1; a block of a five-level class
 *     is an exception: its exact Planes14 record goes to a side channel
 *     (u32 flat block index ascending + 14-byte record = 18 bytes) and the
 *     main record holds an approximation (see p12x.c) the kernel corrects
 *     in the row's own warp (exc_ptr[rows + 1]: the row's exceptions).
 *   Slot32 (LR_REC_SLOT32): variable records [id 9][gain 1][sign 24]
 *     [mask of level 1 : 24] ... [mask of level L-1 : 24] (level 0 = no mask
 *     bit set); groups of 32 blocks share a stride (the group's widest
 *     record, rounded up to bytes), record b at bases[b / 32] + (b % 32) *
 *     stride, bases[ngroups] = the stream's length.
 * Signs: bit i = coordinate i negative; zero coordinates store 0. Unused
 * bits are 0 (the decoders reject anything else). */
#ifndef LR_LEECH_VRAM_REC_H
#define LR_LEECH_VRAM_REC_H
#include <stddef.h>
#include <stdint.h>

#include "layouts/leech/shapegain.h"

typedef enum { LR_REC_P14 = 0, LR_REC_P12X = 1, LR_REC_SLOT32 = 2 } lr_rec_kind;

#define LR_REC14_BYTES 14
#define LR_REC12_BYTES 12
#define LR_REC_EXC_BYTES 18      /* Planes12x exception: u32 index + 14-byte record */
#define LR_REC_GROUP 32          /* Slot32 blocks per stride group */
#define LR_REC_PAD 32            /* zero bytes after every stream: the kernels' read windows */
#define LR_REC_TAB_ENTRIES 512   /* every 9-bit class id indexes the table */
#define LR_REC_TAB_STRIDE 8      /* floats per entry: vals[5], len (u32 bits), 0, 0 */

typedef struct lr_rec {
    int kind, rows, cols, nblk, tail, max_shell, gain_bits;
    size_t nblocks;              /* rows * nblk */
    uint8_t *data;               /* records: `bytes` + LR_REC_PAD zero bytes */
    size_t bytes;
    uint32_t *bases;             /* Slot32: ngroups + 1 byte offsets; else NULL */
    size_t ngroups;
    uint32_t *exc_ptr;           /* Planes12x: [rows + 1]; else NULL */
    uint32_t *exc_idx;           /* [nexc] flat block indices, ascending */
    uint8_t *exc_rec;            /* nexc * 14 bytes + LR_REC_PAD */
    uint32_t nexc;
    float *tab;                  /* LR_REC_TAB_ENTRIES * LR_REC_TAB_STRIDE */
    float gscale[2];             /* the gain centroids (gain_bits 0: gscale[1] = 0) */
    float *row_scale;            /* [rows] */
    uint16_t *tail_f16;          /* [rows][tail] or NULL */
} lr_rec;

/* The class's distinct |values| in canonical order (descending count, ties
 * by descending value); cls -1 = the origin (one level, 0). */
int lr_rec_levels(int max_shell, int cls, uint8_t vals[5], int *nlev);
/* The device class table: entry 0 = origin (len 1, value 0), entry 1 + c =
 * class c (vals / sqrt(16 m) in f32, canonical order, len); the rest zero. */
int lr_rec_tab_build(int max_shell, float *tab);

/* An empty layout of a kind and shape (no records yet): table, centroids,
 * row scales 1, tail zero. */
int lr_rec_alloc(lr_rec *L, int kind, int rows, int cols, int max_shell, int gain_bits, const float *centroid);
void lr_rec_free(lr_rec *L);
/* Allocates the record stream (bytes + pad, zeroed). */
int lr_rec_alloc_data(lr_rec *L, size_t bytes);
/* Shape, centroids, row scales and tail of an archive's matrix. */
int lr_rec_from_matrix(lr_rec *L, int kind, const lr_leech_matrix *m);
/* Every block's index and gain, unpacked on nthreads threads. */
int lr_rec_unpack(const lr_leech_matrix *m, int nthreads, uint64_t **idx, uint8_t **gain);

/* Bits LSB-first: n <= 32 bits at bit offset `bit` of p. */
uint32_t lr_rec_bits(const uint8_t *p, size_t bit, int n);
void lr_rec_put_bits(uint8_t *p, size_t bit, int n, uint32_t v);

/* A point as (class id, per-coordinate canonical level, sign mask);
 * LR_EINVAL when x is not in the ball. */
int lr_rec_split(const int8_t x[24], int max_shell, int *id, uint8_t lvl[24], uint32_t *signs, int *nlev);
/* Back: LR_EFORMAT unless (id, levels, signs) spell a point of class id
 * (id in range, every level < the class's count, no sign on a zero). */
int lr_rec_join(int max_shell, int id, const uint8_t lvl[24], uint32_t signs, int8_t x[24]);

/* ---- Planes14 (rec14.c) ---- */
/* One 14-byte record of (x, gain); rec is fully written. */
int lr_rec14_encode(const int8_t x[24], int max_shell, int gain, uint8_t rec[14]);
/* LR_EFORMAT for bytes no block produces (gain >= 1 << gain_bits too). */
int lr_rec14_decode(const uint8_t rec[14], int max_shell, int gain_bits, int8_t x[24], int *gain);
int lr_rec14_unfold(const lr_leech_matrix *m, int nthreads, lr_rec *L);

/* ---- Planes12x (p12x.c) ---- */
/* The main record of (x, gain): exact for <= 4 levels; *exc = 1 when the
 * class has five levels (then rec holds the approximation). */
int lr_p12x_encode(const int8_t x[24], int max_shell, int gain, uint8_t rec[12], int *exc);
/* The point a main record spells (the approximation on exceptions: not a
 * lattice point); *id = its class id. */
int lr_p12x_decode_main(const uint8_t rec[12], int max_shell, int gain_bits, int8_t x[24], int *gain, int *id);
int lr_p12x_unfold(const lr_leech_matrix *m, int nthreads, lr_rec *L);

/* ---- Slot32 (slot32.c) ---- */
/* Record width in bits of a class id: 34 + 24 (levels - 1); 10 for the origin. */
int lr_slot32_width(int max_shell, int id, int *bits);
/* Writes the record of (x, gain) at rec (zeroed, >= width / 8 rounded up bytes). */
int lr_slot32_encode(const int8_t x[24], int max_shell, int gain, uint8_t *rec);
/* Decodes a record of `stride` bytes (bits past the width must be 0). */
int lr_slot32_decode(const uint8_t *rec, size_t stride, int max_shell, int gain_bits, int8_t x[24], int *gain);
int lr_slot32_unfold(const lr_leech_matrix *m, int nthreads, lr_rec *L);

/* ---- any kind (rec_get.c) ---- */
/* Block (row, blk) back to its lattice point and gain (Planes12x: the exact
 * block, exceptions resolved). LR_EFORMAT for anything an unfold cannot
 * produce. */
int lr_rec_get(const lr_rec *L, int row, int blk, int8_t x[24], int *gain);
/* Exact weights x_i / sqrt(16 m) * centroid[g] * row_scale (f64). */
int lr_rec_get_f64(const lr_rec *L, int row, int blk, double w[24]);
/* Checks a whole layout (bases, exception lists, every record). */
int lr_rec_validate(const lr_rec *L);
/* Bits per weight read by the kernel: records, Slot32 bases, Planes12x
 * exceptions (18 bytes each) and row pointers; over rows x 24 nblk weights.
 * *nominal (may be NULL) excludes the row pointers (the published count). */
double lr_rec_bits_per_weight(const lr_rec *L, double *nominal);

/* ---- the kernel's view of raw bytes (rec_view.c) ----
 * What the GEMV's row pass multiplies for flat block b: signed table values
 * (before gain, row scale) chosen by the kernel's select tree, and the gain
 * bit. Planes12x: the main record (the approximation on exceptions). No
 * validation: call on validated layouts. */
void lr_rec_view_block(int kind, const uint8_t *W, const uint32_t *bases, const float *tab, size_t b, float v[24],
                       int *gain);
/* The same for one 14-byte record (Planes12x exceptions). */
void lr_rec_view_rec14(const uint8_t *rec, const float *tab, float v[24], int *gain);

#endif
