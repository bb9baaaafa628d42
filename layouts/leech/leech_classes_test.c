/* The classes of the ball: counts (301 / 383 classes, 79 on shell 12), ball
 * sizes, table invariants and order, and every shell 0..13 against the Leech
 * theta series computed independently from modular forms:
 *   Theta_L24 = E12 - (65520/691) Delta, so for m >= 1
 *   N(m) = (65520/691) (sigma_11(m) - tau(m)),
 * with tau from Delta = q prod (1 - q^n)^24, all in exact integers. */
#include <stdint.h>

#include "layouts/leech/leech.h"
#include "test/t.h"
#include "util/err.h"

typedef __int128 i128;

static void tau_upto(int nmax, i128 *tau)
{
    i128 p[64] = {1}; /* prod (1 - q^n)^24 mod q^nmax */
    for (int n = 1; n < nmax; n++)
        for (int rep = 0; rep < 24; rep++)
            for (int k = nmax - 1; k >= n; k--) p[k] -= p[k - n];
    tau[0] = 0;
    for (int m = 1; m <= nmax; m++) tau[m] = p[m - 1];
}

static i128 sigma11(int m)
{
    i128 s = 0;
    for (int d = 1; d <= m; d++)
        if (m % d == 0) {
            i128 p = 1;
            for (int k = 0; k < 11; k++) p *= d;
            s += p;
        }
    return s;
}

static int test_theta_series(void)
{
    i128 tau[16];
    tau_upto(13, tau);
    static const long long tau_known[14] = {0,       1,       -24,     252,     -1472,    4830,   -6048,
                                            -16744,  84480,   -113643, -115920, 534612,   -370944, -577738};
    for (int m = 1; m <= 13; m++) T_ASSERT(tau[m] == tau_known[m], "tau(%d)", m);
    uint64_t theta[14];
    theta[0] = 1;
    for (int m = 1; m <= 13; m++) {
        i128 num = (i128)65520 * (sigma11(m) - tau[m]);
        T_ASSERT(num % 691 == 0, "691 must divide shell %d", m);
        theta[m] = (uint64_t)(num / 691);
    }
    T_ASSERT(theta[1] == 0 && theta[2] == 196560 && theta[3] == 16773120 && theta[4] == 398034000,
             "N(2..4) = %llu %llu %llu", (unsigned long long)theta[2], (unsigned long long)theta[3],
             (unsigned long long)theta[4]);

    const lr_leech_class *cl;
    int n;
    T_OK(lr_leech_classes(13, &cl, &n));
    uint64_t shell[14] = {1};
    for (int c = 0; c < n; c++) shell[cl[c].shell] += cl[c].count;
    uint64_t ball12 = 0, ball13 = 0;
    for (int m = 0; m <= 13; m++) {
        T_ASSERT(shell[m] == theta[m], "shell %d: classes give %llu, theta %llu", m, (unsigned long long)shell[m],
                 (unsigned long long)theta[m]);
        if (m <= 12) ball12 += theta[m];
        ball13 += theta[m];
    }
    T_ASSERT(ball12 == LR_LEECH_BALL12_POINTS && ball13 == LR_LEECH_BALL13_POINTS, "ball sizes");
    T_ASSERT(lr_leech_ball_points(12) == ball12 && lr_leech_ball_points(13) == ball13, "lr_leech_ball_points");
    T_ASSERT(ball12 - 1 < (1ull << LR_LEECH_INDEX_BITS) && ball12 - 1 >= (1ull << (LR_LEECH_INDEX_BITS - 1)),
             "47 bits index L24(12), and no fewer");
    return T_PASS;
}

static int test_class_table(void)
{
    const lr_leech_class *cl;
    int n12, n13, per_shell[14] = {0};
    T_OK(lr_leech_classes(12, &cl, &n12));
    T_OK(lr_leech_classes(13, &cl, &n13));
    T_ASSERT(n12 == 301 && n13 == 383, "%d / %d classes", n12, n13);
    uint64_t next = 1;
    for (int c = 0; c < n13; c++) {
        const lr_leech_class *k = &cl[c];
        per_shell[k->shell]++;
        T_ASSERT(k->offset == next, "class %d offset", c);
        T_ASSERT(k->count > 0, "class %d empty", c);
        next += k->count;
        if (c) { /* shell ascending, even before odd */
            const lr_leech_class *p = &cl[c - 1];
            T_ASSERT(p->shell < k->shell || (p->shell == k->shell && p->odd <= k->odd), "class %d out of order", c);
        }
        int sum = 0, norm = 0, word = 0, s = 0;
        T_ASSERT(k->nvals >= 1 && k->nvals <= 5, "class %d: %d values", c, k->nvals);
        for (int j = 0; j < k->nvals; j++) {
            T_ASSERT(j == 0 || k->vals[j - 1] < k->vals[j], "class %d values not ascending", c);
            T_ASSERT((k->vals[j] & 1) == k->odd, "class %d: value %d in the wrong coset", c, k->vals[j]);
            sum += k->mult[j];
            norm += k->mult[j] * k->vals[j] * k->vals[j];
            s += k->mult[j] * k->vals[j];
            if (!k->odd && k->vals[j] % 4 == 2) word += k->mult[j];
        }
        T_ASSERT(sum == 24 && norm == 16 * k->shell, "class %d: %d coordinates, norm %d", c, sum, norm);
        if (k->odd) { /* n1 + n7 + n9 odd (the values = +-1 mod 8) */
            int n = 0;
            for (int j = 0; j < k->nvals; j++)
                if (k->vals[j] % 8 == 1 || k->vals[j] % 8 == 7) n += k->mult[j];
            T_ASSERT(n % 2 == 1 && k->word_weight == 0, "odd class %d", c);
        } else {
            T_ASSERT(k->word_weight == word && (word == 0 || word == 8 || word == 12 || word == 16 || word == 24),
                     "even class %d: word weight %d", c, word);
            T_ASSERT(word > 0 || (s / 4) % 2 == 0, "even class %d: w = 0 needs an even sum / 4", c);
        }
    }
    T_ASSERT(next == LR_LEECH_BALL13_POINTS, "classes cover the ball");
    T_ASSERT(per_shell[0] == 0 && per_shell[1] == 0 && per_shell[2] == 3 && per_shell[3] == 4, "shells 2, 3");
    T_ASSERT(per_shell[12] == 79, "shell 12 has %d classes", per_shell[12]);
    T_ASSERT(cl[300].shell == 12 && cl[301].shell == 13, "L24(12) is a prefix of L24(13)");
    T_ASSERT(lr_leech_classes(11, NULL, NULL) != 0, "max_shell 11");
    return T_PASS;
}

/* The published order inside shells 2 and 3 (even by (n14,n10,n6,n2,n12,n8,n4)
 * ascending, then odd by (n13,n11,n9,n7,n5,n3) ascending), spelled out. */
static int test_first_classes(void)
{
    const lr_leech_class *cl;
    T_OK(lr_leech_classes(12, &cl, NULL));
    /* shell 2: 4^2 0^22 (n2 = 0 first), 2^8 0^16, then odd 3 1^23 */
    T_ASSERT(!cl[0].odd && cl[0].nvals == 2 && cl[0].vals[1] == 4 && cl[0].mult[1] == 2 && cl[0].count == 1104, "c0");
    T_ASSERT(!cl[1].odd && cl[1].vals[1] == 2 && cl[1].mult[1] == 8 && cl[1].count == 97152, "c1");
    T_ASSERT(cl[2].odd && cl[2].vals[1] == 3 && cl[2].mult[1] == 1 && cl[2].count == 98304, "c2");
    /* shell 3: 2^8 4 0^15, 2^12 0^12, then odd 3^3 1^21, 5 1^23 */
    T_ASSERT(!cl[3].odd && cl[3].nvals == 3 && cl[3].mult[1] == 8 && cl[3].count == 3108864, "c3");
    T_ASSERT(!cl[4].odd && cl[4].mult[1] == 12 && cl[4].count == 5275648, "c4");
    T_ASSERT(cl[5].odd && cl[5].vals[1] == 3 && cl[5].mult[1] == 3 && cl[5].count == 8290304, "c5");
    T_ASSERT(cl[6].odd && cl[6].vals[1] == 5 && cl[6].count == 98304, "c6");
    T_ASSERT(cl[7].shell == 4, "c7");
    return T_PASS;
}

T_MAIN(T_CASE(test_theta_series), T_CASE(test_class_table), T_CASE(test_first_classes))
