/* Planes14S's 3-bit form, internal: where each bit of a segment lives and
 * what a class-table entry holds, shared by the writer (p14s_c3.c) and the
 * reader (p14s_c3_get.c: decoder, validation, the kernel's view). Every
 * position is addressed through bit_of / header_bit_of, so the writer, the
 * decoder and the kernel view cannot disagree on where a bit lives. Not part
 * of the library's interface (layouts/leech_vram/p14s_c3.h is). */
#ifndef LR_LEECH_VRAM_P14S_C3_BITS_H
#define LR_LEECH_VRAM_P14S_C3_BITS_H
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "util/err.h"

#include <string.h>

static inline size_t seg_off(int cols, int row, int blk)
{
    const int sc_n = (cols / 24 + 7) / 8;
    return ((size_t)(row / 16) * sc_n + blk / 8) * LR_P14S_C3_SEG;
}

/* Byte offset in the segment of stored word S[si] of lane L. */
static inline int word_off(int lane, int si)
{
    return si < 4 ? 16 * lane + 4 * si : si < 8 ? 512 + 16 * lane + 4 * (si - 4) : 1024 + 8 * lane;
}

/* Where bit j (0..2) of the code of (row, blk, coordinate k) lives: byte
 * offset in the segment and bit in that byte. */
static inline void bit_of(int row, int blk, int k, int j, int *off, int *bit)
{
    const int g = row % 8, h = (row % 16) / 8, b = blk % 8, q = b / 2, u = b % 2, lane = 4 * g + q;
    const int t = 6 * u + k / 4, n = 4 * h + k % 4, G = t / 4, m = t % 4;
    const int si = m < 3 ? 3 * G + m : 3 * G + j, pos = m < 3 ? 4 * n + j : 4 * n + 3;
    *off = word_off(lane, si) + pos / 8, *bit = pos % 8;
}

/* Where bit i (0..11) of the entry index of (row, blk) lives. */
static inline void header_bit_of(int row, int blk, int i, int *off, int *bit)
{
    const int g = row % 8, h = (row % 16) / 8, b = blk % 8, q = b / 2, u = b % 2, lane = 4 * g + q;
    const int H = 1024 + 8 * lane + 4, H2 = 1280 + 2 * lane;
    int base, pos;
    if (h == 0) base = H, pos = (u ? 20 : 4) + i;
    else if (u == 0) base = H2, pos = 4 + i;
    else if (i < 4) base = H, pos = i;
    else if (i < 8) base = H, pos = 16 + i - 4;
    else base = H2, pos = i - 8;
    *off = base + pos / 8, *bit = pos % 8;
}

static inline int read_code(const uint8_t *seg, int row, int blk, int k)
{
    int c = 0;
    for (int j = 0; j < 3; j++) {
        int off, bit;
        bit_of(row, blk, k, j, &off, &bit);
        c |= ((seg[off] >> bit) & 1) << j;
    }
    return c;
}

static inline int read_header(const uint8_t *seg, int row, int blk)
{
    int e = 0;
    for (int i = 0; i < 12; i++) {
        int off, bit;
        header_bit_of(row, blk, i, &off, &bit);
        e |= ((seg[off] >> bit) & 1) << i;
    }
    return e;
}

/* A five-valued class with zero among its values (15 of the 16 at shell
 * 12) has a spare code, 4 ("-0"): it holds the top value v4, with its plus
 * sign in the class's entry and its minus sign in the entry's mirror
 * (p14s_c3.h), so its top needs no exception where the mirrors exist. */
static inline int top_code(const lr_leech_class *c) { return c && c->nvals == 5 && c->vals[0] == 0; }

/* The int8 pool of a class (+v0..+v3, -v0..-v3; byte 4 +v4, or -v4 in a
 * mirror, where the class has a top code; a fifth value is otherwise not
 * stored), or all zero for the origin (cls < 0). */
static inline void class_pool(const lr_leech_class *c, int mirror, int8_t pool[8])
{
    memset(pool, 0, 8);
    if (!c) return;
    for (int l = 0; l < 4 && l < c->nvals; l++) pool[l] = (int8_t)c->vals[l], pool[4 + l] = (int8_t)-c->vals[l];
    if (top_code(c)) pool[4] = (int8_t)(mirror ? -c->vals[4] : c->vals[4]);
}

/* Mirror entries: class cls's place among the classes with a top code (-1
 * for the others), their number, and the class at a place. */
static inline int mirror_index(const lr_leech_class *cl, int cls)
{
    if (!top_code(&cl[cls])) return -1;
    int m = 0;
    for (int c = 0; c < cls; c++) m += top_code(&cl[c]);
    return m;
}

static inline int mirror_count(const lr_leech_class *cl, int ncl)
{
    int m = 0;
    for (int c = 0; c < ncl; c++) m += top_code(&cl[c]);
    return m;
}

static inline int mirror_class(const lr_leech_class *cl, int ncl, int mi)
{
    for (int c = 0; c < ncl; c++)
        if (top_code(&cl[c]) && mi-- == 0) return c;
    return -1;
}

/* The layout's entry of (table t, class cls, gain g). */
static inline int layout_entry(const lr_p14s *L, int t, int cls, int g)
{
    return t * L->nent1 + 1 + (cls << L->gain_bits) + g;
}

/* The mirror of (table t, the mi-th class of nmir with a top code, gain g),
 * where the form has mirrors (F->nentries > L->nentries); the layout of the
 * mirrors is p14s_c3.h's. */
static inline int mirror_at(const lr_p14s *L, int t, int nmir, int mi, int g)
{
    return L->nentries + ((t * nmir + mi) << L->gain_bits) + g;
}

static inline int mirror_entry(const lr_p14s *L, const lr_leech_class *cl, int ncl, int t, int cls, int g)
{
    return mirror_at(L, t, mirror_count(cl, ncl), mirror_index(cl, cls), g);
}

/* mirror_at's inverse for entry e >= L->nentries: its table (the return
 * value), class and gain; -1 where no class has a top code. */
static inline int mirror_of(const lr_p14s *L, const lr_leech_class *cl, int ncl, int e, int *cls, int *gain)
{
    const int per = mirror_count(cl, ncl) << L->gain_bits, j = e - L->nentries;
    if (!per) return -1;
    *cls = mirror_class(cl, ncl, (j % per) >> L->gain_bits);
    *gain = (j % per) & ((1 << L->gain_bits) - 1);
    return j / per;
}

static inline float f32_at(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

/* The class of entry e of the form (-1 the origin), its gain, whether e is
 * a mirror and the layout's entry it has the scale of; LR_EFORMAT for an
 * entry outside the table or the row's part (p14s_c3_get.c). */
int lr_p14s_c3_entry_class(const lr_p14s *L, const lr_p14s_c3 *F, int row, int blk, int e, int *cls, int *gain,
                           int *mirror, int *base);

#endif
