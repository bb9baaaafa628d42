/* Planes14S's int8 form (layouts/leech_vram/p14s.h, "the int8 form"): the
 * f16 form's bytes regrouped for the GEMV's int8 tensor-core mode, and the
 * kernel's view of them. */
#include "layouts/leech_vram/p14s.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>
#include <string.h>

uint32_t lr_p14s_i8_word(uint32_t w)
{
    uint32_t o = 0;
    for (int n = 0; n < 4; n++) {
        o |= ((w >> (4 * (2 * n + 1))) & 15u) << (4 * n);       /* row g */
        o |= ((w >> (4 * (2 * n))) & 15u) << (4 * (4 + n));     /* row g + 8 */
    }
    return o;
}

uint32_t lr_p14s_i8_word_inv(uint32_t w)
{
    uint32_t o = 0;
    for (int n = 0; n < 4; n++) {
        o |= ((w >> (4 * n)) & 15u) << (4 * (2 * n + 1));
        o |= ((w >> (4 * (4 + n))) & 15u) << (4 * (2 * n));
    }
    return o;
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

int lr_p14s_i8_form(const lr_p14s *L, uint8_t *data, uint8_t *tab)
{
    for (int e = 0; e < L->nentries; e++) {
        const uint8_t *s = L->tab + 16 * (size_t)e;
        uint8_t *d = tab + 16 * (size_t)e;
        for (int i = 0; i < 8; i++) {
            float v = lr_half_to_float((uint16_t)(s[i] << 8));
            if (!(fabsf(v) <= 127.f) || v != floorf(v))
                return LR_FAIL(LR_EFORMAT, "Planes14S class-table entry %d: pool byte %d (0x%02x) is not an int8 value", e,
                               i, s[i]);
            d[i] = (uint8_t)(int8_t)v;
        }
        memset(d + 8, 0, 4);
        memmove(d + 12, s + 12, 4); /* (d may be s: in place) */
    }
    const size_t nseg = L->bytes / LR_P14S_SEG;
    for (size_t k = 0; k < nseg; k++) {
        const uint8_t *s = L->data + k * LR_P14S_SEG;
        uint8_t *d = data + k * LR_P14S_SEG;
        memmove(d, s, LR_P14S_HDR);
        for (int i = LR_P14S_HDR; i < LR_P14S_SEG; i += 4) wr32(d + i, lr_p14s_i8_word(rd32(s + i)));
    }
    return LR_OK;
}

void lr_p14s_i8_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk, float w[24])
{
    const uint8_t *e = tab + lr_p14s_kernel_header(W, rows, cols, row, blk); /* headers as the f16 form */
    const int sc_n = (cols / 24 + 7) / 8, g = row % 8, h = (row % 16) / 8, b = blk % 8, q = b / 2;
    const uint8_t *seg = W + ((size_t)(row / 16) * sc_n + blk / 8) * LR_P14S_SEG;
    float sf;
    memcpy(&sf, e + 12, 4);
    for (int k = 0; k < 24; k++) {
        const int t = 6 * (b % 2) + k / 4, lane = 4 * g + q;
        const uint32_t word = rd32(seg + LR_P14S_HDR + 512 * (t >> 2) + 16 * lane + 4 * (t & 3));
        const int code = (int)(word >> (4 * (4 * h + k % 4))) & 15;
        /* PRMT: nibble bit 3 = replicate the sign of the selected byte */
        const int v = code & 8 ? (e[code & 7] & 0x80 ? -1 : 0) : (int8_t)e[code & 7];
        w[k] = (float)v * sf; /* exact */
    }
}
