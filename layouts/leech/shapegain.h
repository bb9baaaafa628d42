/* Shape-gain quantization of a weight matrix with the Leech ball (the
 * published "leech1c12" recipe): per-row scale = RMS block norm of the row;
 * blocks of 24 columns; each block = shape (a ball point p, unit-normalized)
 * x gain centroid (0, 1 or 2 gain bits, Lloyd-Max per matrix) x row scale;
 * the last cols % 24 columns kept dense (f16).
 *   w[r][24b+i] = p_i / sqrt(16 m(p)) * centroid[g] * row_scale[r]
 * where m(p) is p's shell (sum p^2 = 16 m). With 0 gain bits there is one
 * centroid. */
#ifndef LR_LEECH_SHAPEGAIN_H
#define LR_LEECH_SHAPEGAIN_H
#include <stddef.h>
#include <stdint.h>

typedef struct lr_leech_matrix {
    int rows, cols;         /* cols = 24 * nblk + tail */
    int nblk, tail;         /* blocks per row, dense tail columns */
    int max_shell;          /* 12 */
    int gain_bits;          /* 0, 1 or 2 */
    float centroid[4];      /* 1 << gain_bits used */
    float *row_scale;       /* [rows] */
    uint8_t *archive;       /* rows*nblk blocks, row-major, lr_leech_archive_pack format */
    size_t archive_bytes;
    uint16_t *tail_f16;     /* [rows][tail] */
} lr_leech_matrix;

/* Quantizes W (row-major f32 rows x cols) with nthreads (0 = all cores);
 * progress may be NULL. */
struct lr_progress;
int lr_leech_quantize(const float *W, int rows, int cols, int gain_bits, int max_shell, int nthreads,
                      struct lr_progress *progress, lr_leech_matrix *out);
/* Dense reconstruction (rows x cols f32). */
int lr_leech_reconstruct(const lr_leech_matrix *m, float *W);
void lr_leech_matrix_free(lr_leech_matrix *m);

#endif
