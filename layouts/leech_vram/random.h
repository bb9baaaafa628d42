/* Random valid Leech matrices for tests, fuzz seeds and benchmark arms. */
#ifndef LR_LEECH_VRAM_RANDOM_H
#define LR_LEECH_VRAM_RANDOM_H
#include <stdint.h>

#include "layouts/leech/shapegain.h"

/* rows x cols with every class present: the first blocks cycle through the
 * classes (adversarial mode: each class's first and last point, the origin
 * and the last ball point), the rest take a random class and a random local
 * index. Random gains, two or four centroids in [0.5, 1.5], row scales in
 * [0.25, 2], f16 tail in [-1, 1]. Free with lr_leech_random_free. */
int lr_leech_random_matrix(int rows, int cols, int max_shell, int gain_bits, int adversarial, uint64_t seed,
                           lr_leech_matrix *m);
/* The indices and gains behind it (rows * nblk each), for bit-exactness tests. */
int lr_leech_random_indices(const lr_leech_matrix *m, uint64_t **idx, uint8_t **gain);
void lr_leech_random_free(lr_leech_matrix *m);

#endif
