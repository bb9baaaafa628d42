/* Internal to the exact nearest-point search (nearest.c, nearest_tree.c,
 * nearest_ref.c) and its tests; the public API is in leech.h.
 *
 * The search works on the coordinates sorted by |x| descending ("positions"
 * q = 0..23). For a class and a Golay codeword c, the best inner product
 * <x,v> over the class's points built on c is a walk over the positions:
 * each position is either "on list 1" or not, takes the next value of the
 * class's list one[] or zero[] (both descending), and adds |x_q| * value.
 *   even class: on list 1 = on c's support; one[] = the word values (w of
 *     them), zero[] = the free values and zeros (24 - w). Every sign is free
 *     except that the minus count on the support has a fixed parity: when
 *     the signs of x give the wrong one, the smallest word term is flipped
 *     (cost 2 |x_q| v at the last support position).
 *   odd class: the codeword fixes every sign: v_i = +u_i off c, -u_i on c,
 *     where u = +|v| for |v| = 1 (mod 4) and -|v| otherwise. A position is on
 *     list 1 when x's sign there agrees with the codeword's sign; one[] = u
 *     descending, zero[j] = -u[23 - j] (the most negative u meets the
 *     largest |x| of opposite sign).
 * Both are the rearrangement inequality inside each list. */
#ifndef LR_LEECH_NEAREST_INTERNAL_H
#define LR_LEECH_NEAREST_INTERNAL_H
#include <stdint.h>

#include "layouts/leech/leech.h"

enum { LR_NEAREST_EUCLID = 0, LR_NEAREST_ANGULAR = 1 };

#define LR_NEAREST_LANES 16      /* classes searched together (one 512-bit vector of floats) */
#define LR_NEAREST_MAXCLASS 384  /* >= 383 classes of L24(13), a multiple of the lanes */

typedef struct lr_nearest_class {
    int id;              /* index in lr_leech_classes() */
    int shell, odd, w, par;
    int n1, n0;          /* lengths of one[] and zero[] */
    double len, norm;    /* |v| = sqrt(16 m) and |v|^2 = 16 m */
    int8_t one[24], zero[24];
    int8_t all[24];      /* |values| descending (the unconstrained pairing) */
} lr_nearest_class;

/* Prepared once per max_shell (12 or 13). */
typedef struct lr_nearest_table {
    int max_shell, n;
    lr_nearest_class cls[LR_NEAREST_MAXCLASS];
    /* float lists for the vector search, by rank, -1e30 past the end */
    float one_f[LR_NEAREST_MAXCLASS][25], zero_f[LR_NEAREST_MAXCLASS][25];
    /* |values| by rank, transposed (classes contiguous), for the class bounds */
    float all_t[24][LR_NEAREST_MAXCLASS] __attribute__((aligned(64)));
    float inv_len_f[LR_NEAREST_MAXCLASS], norm_f[LR_NEAREST_MAXCLASS];
    uint32_t gen[12];    /* a basis of the Golay code (coordinate masks) */
} lr_nearest_table;

int lr_nearest_table_get(int max_shell, const lr_nearest_table **t);

/* One input block, prepared. */
typedef struct lr_nearest_block {
    double a[24];        /* |x| descending */
    float af[24];        /* a * scale (a power of two putting a[0] in [1, 2)) */
    double scale;
    uint8_t perm[24];    /* perm[q]: the coordinate holding a[q] */
    uint32_t neg;        /* bit q: x[perm[q]] < 0 */
    uint32_t rows[12];   /* the Golay basis on positions, reduced echelon form */
    int8_t pivrow[24];   /* row whose pivot is position q, or -1 */
    int lastpiv;         /* the last pivot position: every later bit is forced */
} lr_nearest_block;

/* Sorts x and reduces the code; LR_EINVAL for a non-finite input. */
int lr_nearest_block_init(lr_nearest_block *b, const lr_nearest_table *t, const float x[24]);
/* The exact best inner product of class k on codeword cw (a mask over
 * positions), in double; -INFINITY when cw's weight does not fit an even
 * class. */
double lr_nearest_value(const lr_nearest_class *k, const lr_nearest_block *b, uint32_t cw);
/* The point achieving it, in the original coordinates. */
void lr_nearest_point(const lr_nearest_class *k, const lr_nearest_block *b, uint32_t cw, int8_t out[24]);

/* The search state shared by the class loop and the tree search. */
typedef struct lr_nearest_search {
    const lr_nearest_table *t;
    lr_nearest_block b;
    int mode;
    double best;         /* best score so far (angular <x,v>/|v|, euclid 2<x,v> - |v|^2) */
    int best_cls;        /* -1: none (euclid: the origin) */
    uint32_t best_cw;
    float slack;         /* float rounding allowance on scaled inner products */
    uint64_t nodes;      /* tree nodes visited (statistics) */
} lr_nearest_search;

/* Searches up to 16 classes of one coset together over all codewords,
 * updating s->best. */
void lr_nearest_tree(lr_nearest_search *s, const int *cls, int n);
/* Tests and benchmarks: 0 forces the portable build of the tree search, 1
 * the AVX-512 one when the CPU has it; returns the variant in use. */
int lr_nearest_set_variant(int v);
/* Unconstrained sorted-pairing bound sum_q af[q] * all[q] for every class
 * (scaled units), out[LR_NEAREST_MAXCLASS], 64-byte aligned. */
void lr_nearest_class_bounds(const lr_nearest_table *t, const float af[24], float *out);

/* Tree nodes and chunks visited by this thread's searches (statistics for
 * the benchmark; never reset by the library); retries: angular searches
 * whose aspiration start was too high (nearest.c). */
extern _Thread_local uint64_t lr_nearest_stat_nodes, lr_nearest_stat_chunks, lr_nearest_stat_retries;

/* The search over classes with shell_lo <= shell <= shell_hi (tests narrow
 * it; the public functions use 2..max_shell). Returns the score through
 * *score when not NULL. */
int lr_nearest_search_run(const float x[24], int max_shell, int mode, int shell_lo, int shell_hi, int8_t out[24],
                          double *score);

/* Reference: every class, every codeword, each closed form computed the
 * textbook way (collect, sort, pair) in the original coordinates. Slow
 * (milliseconds per block); the oracle for the tests. */
int lr_leech_nearest_ref(const float x[24], int max_shell, int mode, int shell_lo, int shell_hi, int8_t out[24],
                         double *score);
/* Reference best inner product over one class's points (and the point). */
double lr_leech_class_best_ref(const float x[24], const lr_leech_class *c, int8_t out[24]);

#endif
