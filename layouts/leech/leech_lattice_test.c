/* Lattice membership in sqrt(8)*L24 and the norm: known points and
 * non-points, the group structure (sums and negatives of points are points),
 * and single-coordinate moves that must leave the lattice. */
#include <stdint.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "test/t.h"
#include "util/rng.h"

/* A random point p + 2c + 4k, the sum fixed through k_0 (small coordinates). */
static void random_point(lr_rng *r, int8_t x[24])
{
    const uint32_t *w = lr_golay_words();
    unsigned p = (unsigned)lr_rng_below(r, 2);
    uint32_t c = w[lr_rng_below(r, 4096)];
    int sum = 0;
    for (int i = 0; i < 24; i++) {
        int k = (int)lr_rng_below(r, 4) - 2;
        x[i] = (int8_t)((int)p + 2 * (int)((c >> i) & 1) + 4 * k);
        sum += x[i];
    }
    if ((((unsigned)sum) & 7u) != 4u * p) x[0] = (int8_t)(x[0] + 4);
}

static int test_known_vectors(void)
{
    int8_t x[24] = {0};
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 0, "origin");
    x[5] = 4, x[17] = -4;
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 32, "(4,-4) on shell 2");
    x[17] = 0;
    T_ASSERT(!lr_leech_is_point(x), "(4,0..): sum = 4 mod 8");
    x[5] = 8;
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 64, "(8,0..) on shell 4");
    /* an octad of 2s with an even number of minus signs */
    const uint32_t *w = lr_golay_words();
    int s8 = lr_golay_bucket_start(8, NULL);
    memset(x, 0, 24);
    for (int i = 0, m = 0; i < 24; i++)
        if ((w[s8] >> i) & 1) x[i] = (int8_t)(m++ < 2 ? -2 : 2);
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 32, "2^8 on an octad, two minus");
    for (int i = 0; i < 24; i++)
        if (x[i] == 2) {
            x[i] = -2; /* three minus signs: sum = 4 mod 8 */
            break;
        }
    T_ASSERT(!lr_leech_is_point(x), "2^8 with an odd minus count");
    /* odd: (-3, 1^23) and (5, 1^23) with the codeword {0} replaced: pattern must be a codeword */
    for (int i = 0; i < 24; i++) x[i] = 1;
    x[0] = -3;
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 32, "(-3,1^23)");
    x[0] = 5;
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 48, "(5,1^23)");
    x[0] = 1;
    T_ASSERT(!lr_leech_is_point(x), "(1^24): sum 24 = 0 mod 8");
    x[0] = 2;
    T_ASSERT(!lr_leech_is_point(x), "mixed parity");
    memset(x, 0, 24);
    x[0] = -128, x[1] = -128; /* even, pattern 0, sum -256 = 0 mod 8 */
    T_ASSERT(lr_leech_is_point(x) && lr_leech_norm(x) == 2 * 16384, "extreme coordinates");
    return T_PASS;
}

static int test_group_and_moves(void)
{
    lr_rng r;
    lr_rng_seed(&r, 0x1a771ce);
    for (int it = 0; it < 20000; it++) {
        int8_t a[24], b[24], s[24];
        random_point(&r, a);
        random_point(&r, b);
        T_ASSERT(lr_leech_is_point(a) && lr_leech_is_point(b), "constructed points");
        int n = 0;
        for (int i = 0; i < 24; i++) {
            s[i] = (int8_t)(a[i] + b[i]);
            n += a[i] * a[i];
        }
        T_ASSERT(lr_leech_norm(a) == n && n % 16 == 0, "norm %d", n);
        T_ASSERT(lr_leech_is_point(s), "a + b");
        for (int i = 0; i < 24; i++) s[i] = (int8_t)(-a[i]);
        T_ASSERT(lr_leech_is_point(s), "-a");
        int i = (int)lr_rng_below(&r, 24);
        memcpy(s, a, 24);
        s[i] = (int8_t)(s[i] + 2); /* flips one bit of the mod-4 pattern */
        T_ASSERT(!lr_leech_is_point(s), "a + 2e_i");
        s[i] = (int8_t)(s[i] + 2); /* a + 4e_i: sum moves by 4 */
        T_ASSERT(!lr_leech_is_point(s), "a + 4e_i");
        s[i] = (int8_t)(s[i] + 4); /* a + 8e_i is in the lattice */
        T_ASSERT(lr_leech_is_point(s), "a + 8e_i");
        s[i] = (int8_t)(s[i] - 7); /* a + e_i: parity */
        T_ASSERT(!lr_leech_is_point(s), "a + e_i");
        int j = (i + 1 + (int)lr_rng_below(&r, 23)) % 24;
        memcpy(s, a, 24);
        s[i] = (int8_t)(s[i] + 4), s[j] = (int8_t)(s[j] - 4); /* 4(e_i - e_j) is in the lattice */
        T_ASSERT(lr_leech_is_point(s), "a + 4e_i - 4e_j");
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_known_vectors), T_CASE(test_group_and_moves))
