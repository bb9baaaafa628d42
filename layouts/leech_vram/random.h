/* Random valid Leech matrices for tests, fuzz seeds and benchmark arms. */
#ifndef LR_LEECH_VRAM_RANDOM_H
#define LR_LEECH_VRAM_RANDOM_H
#include <stdint.h>

#include "layouts/leech/shapegain.h"

/* How the blocks past the first ones are drawn. Class-uniform makes rare
 * classes as common as any (the tests' and, so far, the benchmark's
 * matrices); ball-uniform draws points like real weights do (the share of
 * blocks needing an exception, Planes14S 1.6-1.8% and I8x 3.5%, matches
 * what imported models show; class-uniform gives 10% and 5%). */
enum { LR_RANDOM_CLASSES = 0, LR_RANDOM_ADVERSARIAL = 1, LR_RANDOM_BALL = 2 };

/* rows x cols with every class present: the first blocks cycle through the
 * classes (LR_RANDOM_ADVERSARIAL: each class's first and last point, the
 * origin and the last ball point), the rest take a random class and a random
 * local index (LR_RANDOM_BALL: a random point of the whole ball). Random
 * gains, two or four centroids in [0.5, 1.5], row scales in [0.25, 2], f16
 * tail in [-1, 1]. Free with lr_leech_random_free. */
int lr_leech_random_matrix(int rows, int cols, int max_shell, int gain_bits, int mode, uint64_t seed,
                           lr_leech_matrix *m);
/* The indices and gains behind it (rows * nblk each), for bit-exactness tests. */
int lr_leech_random_indices(const lr_leech_matrix *m, uint64_t **idx, uint8_t **gain);
void lr_leech_random_free(lr_leech_matrix *m);

#endif
