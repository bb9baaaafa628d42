/* The extended binary Golay code [24,12,8] from the cyclic generator
 * g(x) = x^11 + x^10 + x^6 + x^5 + x^4 + x^2 + 1 (0xC75): the 4096 products
 * m(x) g(x), deg m <= 11, fill bits 0..22, and bit 23 is the overall parity.
 * Coordinate i is bit i of the mask.
 *
 * Order (part of the index format): weight-major (0, 8, 12, 16, 24), and
 * ascending as unsigned integers inside a weight.
 *
 * Lookup: the low 12 bits of m(x) g(x) are a unit-triangular function of the
 * 12 message bits (g has constant term 1), so they identify the codeword. An
 * 8 KiB table from those bits to the position, plus one compare, decides
 * membership and rank of any 32-bit word. */
#include <pthread.h>
#include <stdlib.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/leech_tab.h"

#define GOLAY_GEN 0xC75u

static uint32_t g_words[4096];
static uint16_t g_by_low12[4096];
static int g_start[25], g_count[25];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_mul(uint32_t a, uint32_t b)
{
    uint32_t r = 0;
    for (; b; b >>= 1, a <<= 1)
        if (b & 1) r ^= a;
    return r;
}

static int by_weight_then_value(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int wa = __builtin_popcount(a), wb = __builtin_popcount(b);
    if (wa != wb) return wa < wb ? -1 : 1;
    return a < b ? -1 : a > b;
}

static void golay_build(void)
{
    for (uint32_t m = 0; m < 4096; m++) {
        uint32_t c = gf2_mul(m, GOLAY_GEN);
        g_words[m] = c | (uint32_t)(__builtin_popcount(c) & 1) << 23;
    }
    qsort(g_words, 4096, sizeof g_words[0], by_weight_then_value);
    for (int i = 0; i < 4096; i++) {
        int w = __builtin_popcount(g_words[i]);
        if (g_count[w]++ == 0) g_start[w] = i;
        g_by_low12[g_words[i] & 0xFFF] = (uint16_t)i;
    }
}

const uint32_t *lr_golay_words(void)
{
    pthread_once(&g_once, golay_build);
    return g_words;
}

int lr_golay_index_ready(uint32_t cw)
{
    int i = g_by_low12[cw & 0xFFF];
    return g_words[i] == cw ? i : -1;
}

int lr_golay_index(uint32_t cw)
{
    pthread_once(&g_once, golay_build);
    return lr_golay_index_ready(cw);
}

int lr_golay_bucket_start(int weight, int *count)
{
    pthread_once(&g_once, golay_build);
    if (weight < 0 || weight > 24 || g_count[weight] == 0) {
        if (count) *count = 0;
        return -1;
    }
    if (count) *count = g_count[weight];
    return g_start[weight];
}
