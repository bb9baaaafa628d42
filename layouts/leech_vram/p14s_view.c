/* Planes14S as the kernel sees it: header, code and weight of a position
 * read from the raw segment bytes, with the kernel's PRMT and its per-block
 * f32 scale emulated (layouts/leech_vram/p14s.h has the bit layout). The GEMV's host
 * reference and the layout tests read weights only through here. */
#include "layouts/leech_vram/p14s.h"
#include "util/half.h"

#include <string.h>

static const uint8_t *segment(const uint8_t *W, int rows, int cols, int row, int blk)
{
    int sc_n = (cols / 24 + 7) / 8;
    (void)rows;
    return W + ((size_t)(row / 16) * sc_n + blk / 8) * LR_P14S_SEG;
}

int lr_p14s_kernel_header(const uint8_t *W, int rows, int cols, int row, int blk)
{
    const uint8_t *s = segment(W, rows, cols, row, blk);
    int g = row % 8, h = (row % 16) / 8, b = blk % 8, q = b / 2, j = b % 2;
    int off = 8 * (4 * g + q) + 2 * (2 * h + j);
    return s[off] | s[off + 1] << 8;
}

/* Code word t of lane L in segment s, and the code of coordinate c (0..3)
 * of a word for a row: row g in nibbles 1, 3, 5, 7, row g + 8 in 0, 2, 4, 6. */
static uint32_t code_word(const uint8_t *s, int lane, int t)
{
    const uint8_t *w = s + LR_P14S_HDR + 512 * (t >> 2) + 16 * lane + 4 * (t & 3);
    return (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
}

static int code_in(uint32_t word, int row, int c) { return (int)(word >> (4 * (2 * c + ((row % 16) / 8 == 0)))) & 15; }

/* Block blk's words are t = 6 (blk % 2) + 0..5 of lane 4 (row % 8) + blk % 8 / 2. */
static int lane_of(int row, int blk) { return 4 * (row % 8) + (blk % 8) / 2; }

int lr_p14s_kernel_code(const uint8_t *W, int rows, int cols, int row, int col)
{
    const int blk = col / 24, k = col % 24;
    const uint32_t w = code_word(segment(W, rows, cols, row, blk), lane_of(row, blk), 6 * (blk % 2) + k / 4);
    return code_in(w, row, k % 4);
}

void lr_p14s_kernel_block_codes(const uint8_t *W, int rows, int cols, int row, int blk, int code[24])
{
    const uint8_t *s = segment(W, rows, cols, row, blk);
    const int lane = lane_of(row, blk);
    for (int tt = 0; tt < 6; tt++) {
        const uint32_t w = code_word(s, lane, 6 * (blk % 2) + tt);
        for (int c = 0; c < 4; c++) code[4 * tt + c] = code_in(w, row, c);
    }
}

void lr_p14s_kernel_block(const uint8_t *W, const uint8_t *tab, int rows, int cols, int row, int blk,
                          float w[24])
{
    const uint8_t *e = tab + lr_p14s_kernel_header(W, rows, cols, row, blk);
    float sf;
    memcpy(&sf, e + 12, 4);
    for (int k = 0; k < 24; k++) {
        int code = lr_p14s_kernel_code(W, rows, cols, row, 24 * blk + k);
        /* PRMT: nibble bit 3 = replicate the sign of the selected byte */
        uint8_t hi = code & 8 ? (e[code & 7] & 0x80 ? 0xff : 0x00) : e[code & 7];
        float v = lr_half_to_float((uint16_t)(hi << 8));
        w[k] = v * sf; /* exact */
    }
}
