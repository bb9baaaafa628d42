/* The published record layouts as their GEMV kernel reads them: fields at
 * fixed bit offsets, the table entry of the class id, and the kernel's
 * select tree per coordinate (templates/gemv_leech_rec.cu). The host
 * references and the tests read the raw bytes through these, never through
 * the layout decoders. */
#include "layouts/leech_vram/rec.h"

#include <string.h>

static void entry(const float *tab, int id, float v[5], uint32_t *len)
{
    const float *e = tab + (size_t)id * LR_REC_TAB_STRIDE;
    memcpy(v, e, 5 * sizeof(float));
    memcpy(len, e + 5, 4);
}

static float sign(float v, uint32_t s, int i) { return (s >> i) & 1 ? -v : v; }

/* Planes14 / Planes12x planes (np 3 or 2) at rec. */
static void planes(const uint8_t *rec, int np, const float *tab, float out[24], int *gain)
{
    int id = (int)lr_rec_bits(rec, 0, 9);
    float v[5];
    uint32_t len, s = lr_rec_bits(rec, 10, 24), p0 = lr_rec_bits(rec, 34, 24), p1 = lr_rec_bits(rec, 58, 24);
    uint32_t p2 = np == 3 ? lr_rec_bits(rec, 82, 24) : 0;
    *gain = (int)lr_rec_bits(rec, 9, 1);
    entry(tab, id, v, &len);
    for (int i = 0; i < 24; i++) {
        int b0 = (p0 >> i) & 1, b1 = (p1 >> i) & 1, b2 = (p2 >> i) & 1;
        float lo = b1 ? (b0 ? v[3] : v[2]) : (b0 ? v[1] : v[0]);
        out[i] = sign(b2 ? v[4] : lo, s, i);
    }
}

void lr_rec_view_rec14(const uint8_t *rec, const float *tab, float v[24], int *gain) { planes(rec, 3, tab, v, gain); }

void lr_rec_view_block(int kind, const uint8_t *W, const uint32_t *bases, const float *tab, size_t b, float out[24],
                       int *gain)
{
    if (kind == LR_REC_P14) { planes(W + LR_REC14_BYTES * b, 3, tab, out, gain); return; }
    if (kind == LR_REC_P12X) { planes(W + LR_REC12_BYTES * b, 2, tab, out, gain); return; }
    /* Slot32: masks past the class's levels belong to the next record */
    size_t g = b / LR_REC_GROUP, stride = (bases[g + 1] - bases[g]) / LR_REC_GROUP;
    const uint8_t *rec = W + bases[g] + (b % LR_REC_GROUP) * stride;
    int id = (int)lr_rec_bits(rec, 0, 9);
    float v[5];
    uint32_t len, s = lr_rec_bits(rec, 10, 24), m[5] = { 0, 0, 0, 0, 0 };
    *gain = (int)lr_rec_bits(rec, 9, 1);
    entry(tab, id, v, &len);
    for (uint32_t k = 1; k < 5; k++)
        if (len > k) m[k] = lr_rec_bits(rec, 34 + 24 * (size_t)(k - 1), 24);
    for (int i = 0; i < 24; i++) {
        uint32_t bi = 1u << i;
        float a = (m[1] & bi) ? v[1] : (m[2] & bi) ? v[2] : (m[3] & bi) ? v[3] : (m[4] & bi) ? v[4] : v[0];
        out[i] = sign(a, s, i);
    }
}
