/* Private to the Leech codec (golay.c, classes.c, index.c): the per-class
 * tables that rank/unrank run on, in the published ("format v1") kind order.
 * Not part of the public API; include layouts/leech/leech.h for that. */
#ifndef LR_LEECH_TAB_H
#define LR_LEECH_TAB_H
#include <stdint.h>

#include "layouts/leech/leech.h"

#define LR_LEECH_NCLASS12 301
#define LR_LEECH_NCLASS13 383
#define LR_LEECH_MAX_SHELL 13

/* One class as the index sees it. A kind is one distinct |value| of one
 * arrangement problem; kinds are ordered by value DESCENDING (the published
 * order), and the zero run is the last off-support kind of an even class.
 *   even: problem "on" = word values on the w support positions,
 *         problem "off" = free values then zero on the 24 - w others;
 *   odd:  problem "on" = all values over the 24 positions, no "off". */
typedef struct lr_leech_ctab {
    uint64_t start;          /* idx - 1 of the class's first point */
    uint64_t count;          /* points in the class */
    uint64_t a_on, a_off;    /* arrangement counts (odd: a_off = 1) */
    const uint32_t *words;   /* even: the weight-w codeword bucket; odd: all 4096 */
    uint8_t odd, shell, w, p_req; /* p_req: parity of the minus count on the support */
    uint8_t nfree;           /* even: nonzero off-support coordinates (free sign bits) */
    uint8_t nsw;             /* even: free word-sign bits, w - 1 (0 when w = 0) */
    uint8_t n_on, n_off;     /* kinds in each problem (off includes the zero run) */
    uint8_t on_val[8], on_cnt[8];
    uint8_t on_flip[8];      /* odd: 1 for |values| = 3 (mod 4), positive on the codeword */
    uint8_t off_val[8], off_cnt[8];
    uint8_t kind_of[16];     /* |value| -> kind index in its problem (0xFF: absent) */
} lr_leech_ctab;

/* Builds (once, thread-safe) and returns the 383 classes of L24(13); the
 * first 301 are L24(12). Never fails after the first successful call. */
int lr_leech_tab(const lr_leech_ctab **tab, const lr_leech_class **pub);
/* Class id of a |value| histogram key (built with lr_leech_class_key_add), or -1. */
int lr_leech_find_class(uint64_t key);
/* The key: 5 bits per nonzero |value| v in 1..14, field (v-1)/2, plus bit 40
 * for the odd coset. Zero counts are implied (24 - the rest). */
static inline uint64_t lr_leech_class_key_add(uint64_t key, unsigned absval)
{
    return absval ? key + (1ull << (5 * ((absval - 1) >> 1))) : key;
}
#define LR_LEECH_KEY_ODD (1ull << 40)

/* golay.c: position of cw in lr_golay_words() without the lazy-init check
 * (callers have already called lr_golay_words()), or -1. */
int lr_golay_index_ready(uint32_t cw);

#endif
