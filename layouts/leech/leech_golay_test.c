/* The extended Golay code: generator, size, weight distribution, the
 * published order (weight-major, ascending inside a weight), linearity, the
 * cyclic structure of the first 23 coordinates, and the index lookup over
 * every 24-bit word. */
#include <stdint.h>
#include <stdlib.h>

#include "layouts/leech/leech.h"
#include "test/t.h"

static uint64_t gf2_mul(uint64_t a, uint64_t b)
{
    uint64_t r = 0;
    for (; b; b >>= 1, a <<= 1)
        if (b & 1) r ^= a;
    return r;
}

/* 0xC75 and its reciprocal 0xAE3 are the two degree-11 factors of
 * x^23 + 1 = (x + 1) g1 g2: the code is the quadratic-residue code. */
static int test_generator_divides_x23_plus_1(void)
{
    uint32_t rev = 0;
    for (int i = 0; i < 12; i++) rev |= ((0xC75u >> i) & 1u) << (11 - i);
    T_ASSERT(rev == 0xAE3, "reciprocal %x", rev);
    T_ASSERT(gf2_mul(gf2_mul(0xC75, 0xAE3), 3) == ((1ull << 23) | 1), "(x+1) g1 g2 != x^23 + 1");
    return T_PASS;
}

static int test_weights_and_order(void)
{
    const uint32_t *w = lr_golay_words();
    int hist[25] = {0};
    for (int i = 0; i < 4096; i++) {
        T_ASSERT(w[i] < (1u << 24), "word %d = %x has bits above 23", i, w[i]);
        hist[__builtin_popcount(w[i])]++;
        if (i) {
            int a = __builtin_popcount(w[i - 1]), b = __builtin_popcount(w[i]);
            T_ASSERT(a < b || (a == b && w[i - 1] < w[i]), "order broken at %d", i);
        }
    }
    T_ASSERT(hist[0] == 1 && hist[8] == 759 && hist[12] == 2576 && hist[16] == 759 && hist[24] == 1,
             "weights %d/%d/%d/%d/%d", hist[0], hist[8], hist[12], hist[16], hist[24]);
    T_ASSERT(w[0] == 0 && w[4095] == 0xFFFFFF, "first/last word");
    int total = 0;
    for (int wt = 0; wt <= 24; wt++) {
        int cnt, start = lr_golay_bucket_start(wt, &cnt);
        T_ASSERT(cnt == hist[wt], "bucket %d count %d", wt, cnt);
        if (!cnt) {
            T_ASSERT(start == -1, "empty bucket %d start %d", wt, start);
            continue;
        }
        T_ASSERT(start == total, "bucket %d starts at %d, want %d", wt, start, total);
        T_ASSERT(__builtin_popcount(w[start]) == wt && __builtin_popcount(w[start + cnt - 1]) == wt, "bucket %d", wt);
        total += cnt;
    }
    T_ASSERT(lr_golay_bucket_start(-1, NULL) == -1 && lr_golay_bucket_start(25, NULL) == -1, "bad weights");
    return T_PASS;
}

static int test_linear_and_cyclic(void)
{
    const uint32_t *w = lr_golay_words();
    for (int i = 0; i < 4096; i++)
        for (int j = i; j < 4096; j++)
            if (lr_golay_index(w[i] ^ w[j]) < 0) T_ASSERT(0, "%x ^ %x is not a codeword", w[i], w[j]);
    for (int i = 0; i < 4096; i++) { /* rotate the cyclic part, recompute the parity bit */
        uint32_t c = w[i] & 0x7FFFFF, rot = ((c << 1) | (c >> 22)) & 0x7FFFFF;
        rot |= (uint32_t)(__builtin_popcount(rot) & 1) << 23;
        T_ASSERT(lr_golay_index(rot) >= 0, "rotation of %x is not a codeword", w[i]);
    }
    return T_PASS;
}

static int test_index_every_word(void)
{
    const uint32_t *w = lr_golay_words();
    int found = 0;
    for (uint32_t m = 0; m < (1u << 24); m++) {
        int i = lr_golay_index(m);
        if (i < 0) continue;
        T_ASSERT(i < 4096 && w[i] == m, "index(%x) = %d", m, i);
        found++;
    }
    T_ASSERT(found == 4096, "%d words indexed", found);
    T_ASSERT(lr_golay_index(1u << 24) == -1 && lr_golay_index(0xFFFFFFFFu) == -1 && lr_golay_index(0x1000000u | w[5]) == -1,
             "words above 24 bits");
    return T_PASS;
}

T_MAIN(T_CASE(test_generator_divides_x23_plus_1), T_CASE(test_weights_and_order), T_CASE(test_linear_and_cyclic),
       T_CASE(test_index_every_word))
