/* The device class table shared by the Leech VRAM layouts: one 16-byte entry
 * per (class, gain centroid) of a matrix, plus entry 0 for the origin. A
 * record's header holds the byte offset of its entry (entry * 16), so the
 * kernel needs no multiply to find it. Entry layout (little-endian words):
 *   w0: bytes |v0| |v1| |v2| |v3|      (the class's distinct |coordinates|,
 *   w1: bytes |v4|  0    0   0x64       ascending, as integers; byte 7 is the
 *                                       f16 high byte of 1024, so a PRMT with
 *                                       selector nibbles (l, 7, l', 7) yields
 *                                       the half2 (1024+|v_l|, 1024+|v_l'|))
 *   w2: half2 (s, s)          s = f16(centroid[g] / sqrt(16 m))
 *   w3: half2 (-1024 s, -1024 s)
 * so one HFMA2 (h * s + (-1024 s)) gives |v_l| * s rounded once to f16. */
#ifndef LR_LEECH_VRAM_CTAB_H
#define LR_LEECH_VRAM_CTAB_H
#include <stddef.h>
#include <stdint.h>

#define LR_CTAB_ENTRY 16

/* Entries needed for a ball and gain width: 1 + nclass << gain_bits. */
int lr_ctab_entries(int max_shell, int gain_bits, int *n);
/* Fills tab (entries * 16 bytes). centroid[1 << gain_bits]. */
int lr_ctab_build(int max_shell, int gain_bits, const float *centroid, uint8_t *tab, size_t tab_bytes);
/* Entry index of (class, gain); class -1 = the origin. */
static inline int lr_ctab_entry(int cls, int gain, int gain_bits) { return cls < 0 ? 0 : 1 + (cls << gain_bits) + gain; }
/* The f16 scale of an entry as the kernel uses it, and as an exact double. */
float lr_ctab_scale_f16(const uint8_t *tab, int entry);

#endif
