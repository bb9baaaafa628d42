/* The Leech lattice codec: extended Golay code, the lattice in its integer
 * embedding sqrt(8)*L24, the coordinate-permutation classes of the ball
 * L24(M) (M = 12: 301 classes, 111,043,117,458,001 points, a 47-bit index;
 * M = 13: 383 classes), rank/unrank in the published numbering, exact nearest
 * point, and the packed archive. Host C, exact integer arithmetic; no GPU.
 *
 * Conventions: a point is int8_t x[24] in the integer embedding, so
 * sum(x^2) = 16*m for a point of shell m (the minimal vectors, shell 2, have
 * sum(x^2) = 32). Every function returns an lr_status (util/err.h). */
#ifndef LR_LEECH_H
#define LR_LEECH_H
#include <stddef.h>
#include <stdint.h>

#define LR_LEECH_DIM 24
#define LR_LEECH_BALL12_POINTS 111043117458001ULL
#define LR_LEECH_BALL13_POINTS 280974212784721ULL
#define LR_LEECH_INDEX_BITS 47
#define LR_LEECH_MAX_VALS 8

/* ---- extended Golay code (generator 0xC75) ---- */
/* All 4096 codewords as 24-bit masks, weight-major (weights 0, 8, 12, 16,
 * 24), ascending within a weight: the published codeword order. */
const uint32_t *lr_golay_words(void);
/* Position of codeword cw in lr_golay_words(), or -1 if not a codeword. */
int lr_golay_index(uint32_t cw);
/* Start of each weight bucket in lr_golay_words(): weight w in {0,8,12,16,24}. */
int lr_golay_bucket_start(int weight, int *count);

/* ---- the lattice ---- */
int lr_leech_is_point(const int8_t x[24]);   /* 1 if x is in sqrt(8)*L24 */
int lr_leech_norm(const int8_t x[24]);       /* sum x^2 (= 16 * shell) */

/* ---- classes of the ball ---- */
typedef struct lr_leech_class {
    uint8_t shell;                     /* m: sum x^2 = 16 m */
    uint8_t odd;                       /* coset: 0 even, 1 odd */
    uint8_t nvals;                     /* distinct absolute values (0 included when present; <= 5) */
    uint8_t vals[LR_LEECH_MAX_VALS];   /* distinct absolute values, ascending */
    uint8_t mult[LR_LEECH_MAX_VALS];   /* how many coordinates take each (sum 24) */
    uint8_t word_weight;               /* even: Golay weight of the support of coordinates = 2 mod 4; odd: 0 */
    uint64_t count;                    /* points in the class */
    uint64_t offset;                   /* index of the class's first point (origin is 0) */
} lr_leech_class;

/* The classes of L24(max_shell) in index order (shell ascending, even before
 * odd, then the published order inside a shell). max_shell 12 or 13. The
 * table is built once (thread-safe) and lives for the process. */
int lr_leech_classes(int max_shell, const lr_leech_class **classes, int *n);
/* Points in the ball (1 + sum of class counts). */
uint64_t lr_leech_ball_points(int max_shell);

/* Index <-> point. LR_ERANGE for idx >= ball points; LR_EINVAL for x not a
 * lattice point or outside the ball. */
int lr_leech_unrank(uint64_t idx, int max_shell, int8_t x[24]);
int lr_leech_rank(const int8_t x[24], int max_shell, uint64_t *idx);
/* Class number of a point (its index in the class table), or error; the
 * origin is in no class: *cls = -1 (LR_OK). */
int lr_leech_class_of(const int8_t x[24], int max_shell, int *cls);
/* Class number of an index without decoding it (-1 for index 0); LR_ERANGE
 * for idx >= ball points. */
int lr_leech_index_class(uint64_t idx, int max_shell, int *cls);

/* ---- index -> what a VRAM layout stores (layouts/leech/codes.c) ---- */
/* Decodes idx[0..n): cls[k] = the class (-1 for the origin), and 24 code
 * bytes per block, codes[24 k + i] = level | (x_i < 0) << 3, level = the
 * index of |x_i| in the class's ascending lr_leech_class.vals (0 for the
 * origin). Straight from the index, without forming x; bit-identical to
 * lr_leech_unrank_codes_ref (lr_leech_unrank + lr_leech_index_class + a search of
 * vals), the reference it is tested against. LR_ERANGE naming the first
 * index outside the ball (blocks before it are decoded). */
int lr_leech_unrank_codes(const uint64_t *idx, size_t n, int max_shell, int16_t *cls, uint8_t *codes);
int lr_leech_unrank_codes_ref(const uint64_t *idx, size_t n, int max_shell, int16_t *cls, uint8_t *codes);

/* ---- exact nearest point (layouts/leech/nearest.c) ---- */
/* The lattice point of the ball closest to x in Euclidean distance (x in the
 * integer embedding's units). */
int lr_leech_nearest(const float x[24], int max_shell, int8_t out[24]);
/* The nonzero ball point v maximizing <x,v>/|v| (the shape of shape-gain). */
int lr_leech_nearest_angular(const float x[24], int max_shell, int8_t out[24]);

/* ---- the packed archive: 47 index bits + g gain bits per block, MSB-first,
 * no padding ---- */
size_t lr_leech_archive_bytes(uint64_t nblocks, int gain_bits);
int lr_leech_archive_pack(const uint64_t *idx, const uint8_t *gain, uint64_t n, int gain_bits, uint8_t *out,
                          size_t outlen);
int lr_leech_archive_unpack(const uint8_t *in, size_t inlen, uint64_t n, int gain_bits, uint64_t *idx,
                            uint8_t *gain);

#endif
