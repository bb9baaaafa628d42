#include "layouts/leech_vram/random.h"

#include "layouts/leech/leech.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <stdlib.h>
#include <string.h>

void lr_leech_random_free(lr_leech_matrix *m)
{
    if (!m) return;
    free(m->row_scale), free(m->archive), free(m->tail_f16);
    memset(m, 0, sizeof *m);
}

int lr_leech_random_matrix(int rows, int cols, int max_shell, int gain_bits, int mode, uint64_t seed,
                           lr_leech_matrix *m)
{
    const int adversarial = mode == LR_RANDOM_ADVERSARIAL;
    memset(m, 0, sizeof *m);
    const lr_leech_class *cls;
    int nc, rc = lr_leech_classes(max_shell, &cls, &nc);
    if (rc) return rc;
    if (rows <= 0 || cols <= 0 || gain_bits < 0 || gain_bits > 2 || mode < 0 || mode > LR_RANDOM_BALL)
        return LR_FAIL(LR_EINVAL, "random matrix %dx%d, %d gain bits, mode %d", rows, cols, gain_bits, mode);
    m->rows = rows, m->cols = cols, m->nblk = cols / 24, m->tail = cols % 24;
    m->max_shell = max_shell, m->gain_bits = gain_bits;
    size_t n = (size_t)rows * m->nblk;
    lr_rng r;
    lr_rng_seed(&r, seed);
    uint64_t *idx = malloc((n ? n : 1) * sizeof *idx);
    uint8_t *gain = malloc(n ? n : 1);
    m->row_scale = malloc(sizeof(float) * (size_t)rows);
    m->archive_bytes = lr_leech_archive_bytes(n, gain_bits);
    m->archive = malloc(m->archive_bytes ? m->archive_bytes : 1);
    m->tail_f16 = m->tail ? malloc((size_t)rows * m->tail * 2) : NULL;
    if (!idx || !gain || !m->row_scale || !m->archive || (m->tail && !m->tail_f16)) {
        free(idx), free(gain), lr_leech_random_free(m);
        return LR_FAIL(LR_ENOMEM, "random matrix: out of memory");
    }
    uint64_t last = lr_leech_ball_points(max_shell) - 1;
    size_t special = adversarial ? 2 * (size_t)nc + 2 : (size_t)nc;
    for (size_t k = 0; k < n; k++) {
        if (k < special && adversarial) {
            if (k == 2 * (size_t)nc) idx[k] = 0;
            else if (k == 2 * (size_t)nc + 1) idx[k] = last;
            else idx[k] = cls[k / 2].offset + (k & 1 ? cls[k / 2].count - 1 : 0);
        } else if (mode == LR_RANDOM_BALL && k >= special) {
            idx[k] = lr_rng_below(&r, last + 1);
        } else {
            const lr_leech_class *c = &cls[k < special ? k : lr_rng_below(&r, (uint64_t)nc)];
            idx[k] = c->offset + lr_rng_below(&r, c->count);
        }
        gain[k] = (uint8_t)lr_rng_below(&r, 1u << gain_bits);
    }
    /* spread the cycled blocks over the matrix so every row group sees some */
    for (size_t k = n; k > 1; k--) {
        size_t j = (size_t)lr_rng_below(&r, k);
        uint64_t t = idx[k - 1]; idx[k - 1] = idx[j]; idx[j] = t;
    }
    for (int g = 0; g < 4; g++) m->centroid[g] = (float)(0.5 + lr_rng_unit(&r));
    for (int i = 0; i < rows; i++) m->row_scale[i] = (float)(0.25 + 1.75 * lr_rng_unit(&r));
    for (size_t i = 0; i < (size_t)rows * m->tail; i++) m->tail_f16[i] = lr_float_to_half((float)lr_rng_signed(&r));
    rc = lr_leech_archive_pack(idx, gain, n, gain_bits, m->archive, m->archive_bytes);
    free(idx), free(gain);
    if (rc) lr_leech_random_free(m);
    return rc;
}

int lr_leech_random_indices(const lr_leech_matrix *m, uint64_t **idx, uint8_t **gain)
{
    size_t n = (size_t)m->rows * m->nblk;
    *idx = malloc((n ? n : 1) * sizeof **idx);
    *gain = malloc(n ? n : 1);
    if (!*idx || !*gain) { free(*idx), free(*gain); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    int rc = lr_leech_archive_unpack(m->archive, m->archive_bytes, n, m->gain_bits, *idx, *gain);
    if (rc) { free(*idx), free(*gain); *idx = NULL, *gain = NULL; }
    return rc;
}
