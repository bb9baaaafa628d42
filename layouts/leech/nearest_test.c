/* Exactness of the nearest-point search (nearest.c, nearest_tree.c):
 *  - against brute force over every point of shells 2 and 3 (16,969,680
 *    points enumerated from the lattice's definition, not from the class
 *    table), per shell and both objectives;
 *  - against the reference search (every class x every codeword, textbook
 *    closed forms: nearest_ref.c) on randomized inputs: near lattice points,
 *    near the ball boundary, far outside the ball, Gaussian blocks, ties and
 *    zeros; L24(12) and L24(13); the AVX-512 and the portable builds;
 *  - the closed form itself against random members of high-shell classes
 *    (no member beats its class's maximum, which is attained by a member).
 * Every returned point is checked to be a lattice point of the ball whose
 * inner product gives the reported score. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/nearest_internal.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

static double dot(const float *x, const int8_t *v)
{
    double s = 0;
    for (int i = 0; i < 24; i++) s += (double)x[i] * v[i];
    return s;
}

static double score_of(int mode, double ip, int norm)
{
    return mode == LR_NEAREST_ANGULAR ? ip / sqrt((double)norm) : 2 * ip - norm;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b)); }

/* The point is in the ball, a lattice point, and its score is `score`. */
static int check_point(const float *x, const int8_t *p, int max_shell, int mode, double score, int allow_origin)
{
    int norm = lr_leech_norm(p);
    if (norm == 0) return allow_origin && close_to(score, 0);
    if (!lr_leech_is_point(p) || norm > 16 * max_shell) return 0;
    return close_to(score, score_of(mode, dot(x, p), norm));
}

/* ---- brute force over shells 2 and 3 ---- */

#define NQ 16

typedef struct {
    double X[NQ][24];
    double best[2][NQ]; /* max <x,v> over shell 2, shell 3 */
    uint64_t count[2];
} brute;

/* The Golay code again, from its generator, independently of golay.c. */
static void golay_words(uint32_t *w)
{
    for (uint32_t m = 0; m < 4096; m++) {
        uint32_t c = 0;
        for (int i = 0; i < 12; i++)
            if (m >> i & 1) c ^= 0xC75u << i;
        w[m] = c | (uint32_t)(__builtin_popcount(c) & 1) << 23;
    }
}

/* Coordinates with a given residue mod 4 and square <= 48. */
static const int8_t RES[4][4] = { { 0, 4, -4, 0 }, { 1, -3, 5, -7 }, { 2, -2, 6, -6 }, { -1, 3, -5, 7 } };
static const int NRES[4] = { 3, 4, 4, 4 };

/* Every x with x = r_i (mod 4) coordinatewise (r from the coset and the
 * codeword), sum x^2 in {32, 48} and sum x = 0 (even) / 4 (odd) mod 8: the
 * definition of the lattice. Partial inner products with all queries ride
 * along the recursion. */
static void enumerate(brute *B, const int *res, int i, int norm, int sum, int minrest, int odd, const double *d)
{
    if (i == 24) {
        if ((norm != 32 && norm != 48) || (sum & 7) != (odd ? 4 : 0)) return;
        int s = norm == 48;
        B->count[s]++;
        for (int q = 0; q < NQ; q++)
            if (d[q] > B->best[s][q]) B->best[s][q] = d[q];
        return;
    }
    int r = res[i], mymin = r == 0 ? 0 : r == 2 ? 4 : 1;
    double nd[NQ];
    for (int j = 0; j < NRES[r]; j++) {
        int v = RES[r][j], n = norm + v * v;
        if (n + minrest - mymin > 48) continue;
        for (int q = 0; q < NQ; q++) nd[q] = d[q] + v * B->X[q][i];
        enumerate(B, res, i + 1, n, sum + v, minrest - mymin, odd, nd);
    }
}

static void brute_force(brute *B)
{
    static uint32_t w[4096];
    golay_words(w);
    for (int s = 0; s < 2; s++)
        for (int q = 0; q < NQ; q++) B->best[s][q] = -INFINITY;
    B->count[0] = B->count[1] = 0;
    double d0[NQ] = { 0 };
    for (int odd = 0; odd < 2; odd++)
        for (int c = 0; c < 4096; c++) {
            int res[24], minrest = 0;
            if (!odd && __builtin_popcount(w[c]) > 12) continue; /* 16 x 2^2 > 48 */
            for (int i = 0; i < 24; i++) {
                int bit = w[c] >> i & 1;
                res[i] = odd ? (bit ? 3 : 1) : (bit ? 2 : 0);
                minrest += res[i] == 0 ? 0 : res[i] == 2 ? 4 : 1;
            }
            enumerate(B, res, 0, 0, 0, minrest, odd, d0);
        }
}

static void make_queries(float X[NQ][24], lr_rng *r)
{
    for (int q = 0; q < NQ; q++) {
        float *x = X[q];
        int8_t v[24], v2[24];
        switch (q) {
        case 0: case 1: case 2: case 3: case 4: case 5: { /* near a shell 2 or 3 point */
            uint64_t idx = 1 + lr_rng_below(r, 196560 + 16773120);
            lr_leech_unrank(idx, 12, v);
            for (int i = 0; i < 24; i++) x[i] = v[i] + (float)(q < 3 ? 0.3 : 1.5) * (float)lr_rng_gauss(r);
            break;
        }
        case 6: case 7: case 8: case 9: /* Gaussian blocks at two scales */
            for (int i = 0; i < 24; i++) x[i] = (float)(q < 8 ? 1.0 : 4.0) * (float)lr_rng_gauss(r);
            break;
        case 10: /* all |x| equal: every order is a tie */
            for (int i = 0; i < 24; i++) x[i] = lr_rng_u64(r) & 1 ? 1.0f : -1.0f;
            break;
        case 11: /* half the coordinates exactly zero */
            for (int i = 0; i < 24; i++) x[i] = i % 2 ? 0.0f : (float)lr_rng_gauss(r);
            break;
        case 12: case 13: /* midway between two lattice points */
            lr_leech_unrank(1 + lr_rng_below(r, 196560), 12, v);
            lr_leech_unrank(1 + lr_rng_below(r, 196560), 12, v2);
            for (int i = 0; i < 24; i++) x[i] = 0.5f * (float)(v[i] + v2[i]);
            break;
        default: /* far away */
            for (int i = 0; i < 24; i++) x[i] = 100.0f * (float)lr_rng_gauss(r);
            break;
        }
    }
}

static int test_brute_force_shells_2_and_3(void)
{
    static brute B;
    static float X[NQ][24];
    lr_rng r;
    lr_rng_seed(&r, 23);
    make_queries(X, &r);
    for (int q = 0; q < NQ; q++)
        for (int i = 0; i < 24; i++) B.X[q][i] = X[q][i];
    brute_force(&B);
    T_ASSERT(B.count[0] == 196560 && B.count[1] == 16773120, "enumerated %llu and %llu points",
             (unsigned long long)B.count[0], (unsigned long long)B.count[1]);
    for (int variant = 0; variant < 2; variant++) {
        lr_nearest_set_variant(variant);
        for (int q = 0; q < NQ; q++) {
            for (int shell = 2; shell <= 3; shell++) {
                double want = B.best[shell - 2][q], len = sqrt(16.0 * shell);
                for (int mode = 0; mode < 2; mode++) {
                    int8_t p[24];
                    double s, sr;
                    T_OK(lr_nearest_search_run(X[q], 12, mode, shell, shell, p, &s));
                    double got = mode == LR_NEAREST_ANGULAR ? s * len : 0.5 * (s + 16 * shell);
                    T_ASSERT(close_to(got, want), "query %d shell %d mode %d: search %.12g, brute force %.12g", q,
                             shell, mode, got, want);
                    T_ASSERT(check_point(X[q], p, 12, mode, s, 0) && lr_leech_norm(p) == 16 * shell,
                             "query %d shell %d mode %d: bad point", q, shell, mode);
                    if (variant == 0) {
                        T_OK(lr_leech_nearest_ref(X[q], 12, mode, shell, shell, p, &sr));
                        T_ASSERT(close_to(s, sr), "query %d shell %d: reference %.12g", q, shell, sr);
                    }
                }
            }
            /* Both shells at once, both objectives. */
            for (int mode = 0; mode < 2; mode++) {
                int8_t p[24];
                double s, want = -INFINITY;
                for (int shell = 2; shell <= 3; shell++) {
                    double v = score_of(mode, B.best[shell - 2][q], 16 * shell);
                    if (v > want) want = v;
                }
                T_OK(lr_nearest_search_run(X[q], 12, mode, 2, 3, p, &s));
                T_ASSERT(close_to(s, want), "query %d shells 2-3 mode %d: %.12g vs %.12g", q, mode, s, want);
            }
        }
    }
    lr_nearest_set_variant(1);
    return T_PASS;
}

/* ---- randomized, against the reference ---- */

enum { NEAR_POINT, NEAR_BOUNDARY, FAR_OUTSIDE, GAUSS_UNIT, GAUSS_WIDE, NEAR_ORIGIN, TIES, NKIND };

static void random_input(float *x, int kind, int max_shell, lr_rng *r)
{
    int8_t v[24];
    uint64_t n = lr_leech_ball_points(max_shell);
    switch (kind) {
    case NEAR_POINT:
        lr_leech_unrank(lr_rng_below(r, n), max_shell, v);
        for (int i = 0; i < 24; i++) x[i] = v[i] + 0.7f * (float)lr_rng_gauss(r);
        break;
    case NEAR_BOUNDARY: { /* the outer shell: most points are there */
        const lr_leech_class *c;
        int nc;
        lr_leech_classes(max_shell, &c, &nc);
        int k = nc - 1 - (int)lr_rng_below(r, 20);
        lr_leech_unrank(c[k].offset + lr_rng_below(r, c[k].count), max_shell, v);
        double f = 0.9 + 0.25 * lr_rng_unit(r);
        for (int i = 0; i < 24; i++) x[i] = (float)(f * v[i] + 0.5 * lr_rng_gauss(r));
        break;
    }
    case FAR_OUTSIDE:
        lr_leech_unrank(1 + lr_rng_below(r, n - 1), max_shell, v);
        for (int i = 0; i < 24; i++) x[i] = (float)(3.0 * v[i] + 4.0 * lr_rng_gauss(r));
        break;
    case GAUSS_UNIT:
        for (int i = 0; i < 24; i++) x[i] = (float)lr_rng_gauss(r);
        break;
    case GAUSS_WIDE:
        for (int i = 0; i < 24; i++) x[i] = (float)(6.0 * lr_rng_gauss(r));
        break;
    case NEAR_ORIGIN: /* Euclidean: the origin competes with shells 2 and 3 */
        for (int i = 0; i < 24; i++) x[i] = (float)(0.6 * lr_rng_gauss(r));
        break;
    default: /* few distinct magnitudes, some zeros */
        for (int i = 0; i < 24; i++) x[i] = (float)((int)lr_rng_below(r, 5) - 2) * 1.5f;
        break;
    }
}

static int run_vs_ref(int max_shell, int per_kind, uint64_t seed)
{
    lr_rng r;
    lr_rng_seed(&r, seed);
    for (int kind = 0; kind < NKIND; kind++)
        for (int it = 0; it < per_kind; it++) {
            float x[24];
            random_input(x, kind, max_shell, &r);
            for (int mode = 0; mode < 2; mode++) {
                int8_t p[24], pr[24];
                double sr, s[2];
                T_OK(lr_leech_nearest_ref(x, max_shell, mode, 0, max_shell, pr, &sr));
                T_ASSERT(check_point(x, pr, max_shell, mode, sr, mode == LR_NEAREST_EUCLID), "reference point");
                for (int variant = 0; variant < 2; variant++) {
                    lr_nearest_set_variant(variant);
                    T_OK(lr_nearest_search_run(x, max_shell, mode, 0, max_shell, p, &s[variant]));
                    T_ASSERT(close_to(s[variant], sr), "L24(%d) kind %d #%d mode %d variant %d: %.12g, reference %.12g",
                             max_shell, kind, it, mode, variant, s[variant], sr);
                    T_ASSERT(check_point(x, p, max_shell, mode, s[variant], mode == LR_NEAREST_EUCLID),
                             "L24(%d) kind %d #%d mode %d: bad point", max_shell, kind, it, mode);
                }
                /* The public entry points return the same point. */
                int8_t q[24];
                if (mode == LR_NEAREST_ANGULAR) T_OK(lr_leech_nearest_angular(x, max_shell, q));
                else T_OK(lr_leech_nearest(x, max_shell, q));
                T_ASSERT(memcmp(p, q, 24) == 0, "public entry point differs");
            }
        }
    lr_nearest_set_variant(1);
    return T_PASS;
}

static int test_random_vs_reference_ball12(void) { return run_vs_ref(12, 6, 101); }
static int test_random_vs_reference_ball13(void) { return run_vs_ref(13, 3, 202); }

/* Many Gaussian blocks: the two builds agree to the last bit of the score
 * (they differ only in float rounding inside the bounds). */
static int test_variants_agree(void)
{
    lr_rng r;
    lr_rng_seed(&r, 5);
    for (int it = 0; it < 3000; it++) {
        float x[24];
        random_input(x, it % NKIND, 12, &r);
        int mode = it & 1;
        double s0, s1;
        int8_t p0[24], p1[24];
        lr_nearest_set_variant(0);
        T_OK(lr_nearest_search_run(x, 12, mode, 0, 12, p0, &s0));
        lr_nearest_set_variant(1);
        T_OK(lr_nearest_search_run(x, 12, mode, 0, 12, p1, &s1));
        T_ASSERT(close_to(s0, s1), "#%d: %.12g vs %.12g", it, s0, s1);
        T_ASSERT(check_point(x, p1, 12, mode, s1, mode == LR_NEAREST_EUCLID), "#%d: bad point", it);
    }
    return T_PASS;
}

/* The closed form against random members of random classes: no member
 * beats the class maximum, the maximizer is a member of the class, and the
 * search's own per-codeword value agrees with the reference. */
static int test_closed_form_vs_members(void)
{
    const lr_leech_class *c;
    const lr_nearest_table *t;
    int nc;
    T_OK(lr_leech_classes(12, &c, &nc));
    T_OK(lr_nearest_table_get(12, &t));
    const uint32_t *words = lr_golay_words();
    lr_rng r;
    lr_rng_seed(&r, 77);
    for (int it = 0; it < 60; it++) {
        float x[24];
        random_input(x, it % 2 ? GAUSS_UNIT : NEAR_POINT, 12, &r);
        int k = (int)lr_rng_below(&r, (uint64_t)nc);
        int8_t best_pt[24];
        double best = lr_leech_class_best_ref(x, &c[k], best_pt);
        int kk;
        T_OK(lr_leech_class_of(best_pt, 12, &kk));
        T_ASSERT(kk == k, "maximizer of class %d is in class %d", k, kk);
        T_ASSERT(close_to(dot(x, best_pt), best), "class %d: maximizer gives %.12g, claimed %.12g", k,
                 dot(x, best_pt), best);
        for (int j = 0; j < 2000; j++) {
            int8_t v[24];
            T_OK(lr_leech_unrank(c[k].offset + lr_rng_below(&r, c[k].count), 12, v));
            T_ASSERT(dot(x, v) <= best + 1e-9 * (1 + fabs(best)), "class %d: member beats the maximum", k);
        }
        /* The search's closed form, codeword by codeword (on positions). */
        lr_nearest_block b;
        T_OK(lr_nearest_block_init(&b, t, x));
        int inv[24];
        for (int q = 0; q < 24; q++) inv[b.perm[q]] = q;
        double mx = -INFINITY;
        for (int w = 0; w < 4096; w++) {
            uint32_t cw = 0;
            for (int i = 0; i < 24; i++) cw |= (words[w] >> i & 1) << inv[i];
            double v = lr_nearest_value(&t->cls[k], &b, cw);
            if (v > mx) {
                mx = v;
                int8_t p[24];
                lr_nearest_point(&t->cls[k], &b, cw, p);
                T_ASSERT(close_to(dot(x, p), v) && lr_leech_is_point(p), "class %d: point of the closed form", k);
            }
        }
        T_ASSERT(close_to(mx, best), "class %d: search closed form %.12g, reference %.12g", k, mx, best);
    }
    return T_PASS;
}

static int test_scale_and_degenerate_inputs(void)
{
    lr_rng r;
    lr_rng_seed(&r, 9);
    /* Angular is scale-invariant, down to tiny and up to huge inputs. */
    for (int it = 0; it < 50; it++) {
        float x[24], y[24];
        random_input(x, GAUSS_UNIT, 12, &r);
        int8_t p[24], q[24];
        double s, sy;
        T_OK(lr_nearest_search_run(x, 12, LR_NEAREST_ANGULAR, 0, 12, p, &s));
        float f = it % 2 ? 0x1p-100f : 0x1p+100f;
        for (int i = 0; i < 24; i++) y[i] = x[i] * f;
        T_OK(lr_nearest_search_run(y, 12, LR_NEAREST_ANGULAR, 0, 12, q, &sy));
        T_ASSERT(close_to(sy / f, s), "scale %g: %.12g vs %.12g", (double)f, sy / f, s);
    }
    /* x = 0: angular returns some nonzero ball point, Euclidean the origin. */
    float z[24] = { 0 };
    int8_t p[24];
    T_OK(lr_leech_nearest_angular(z, 12, p));
    T_ASSERT(lr_leech_is_point(p) && lr_leech_norm(p) > 0, "angular of 0");
    T_OK(lr_leech_nearest(z, 12, p));
    T_ASSERT(lr_leech_norm(p) == 0, "euclidean of 0");
    /* One nonzero coordinate, against the reference. */
    for (int i = 0; i < 24; i += 7) {
        memset(z, 0, sizeof z);
        z[i] = -2.5f;
        for (int mode = 0; mode < 2; mode++) {
            double s, sr;
            int8_t pr[24];
            T_OK(lr_nearest_search_run(z, 12, mode, 0, 12, p, &s));
            T_OK(lr_leech_nearest_ref(z, 12, mode, 0, 12, pr, &sr));
            T_ASSERT(close_to(s, sr), "e_%d mode %d: %.12g vs %.12g", i, mode, s, sr);
        }
    }
    return T_PASS;
}

static int test_bad_inputs(void)
{
    float x[24] = { 0 };
    int8_t p[24];
    x[3] = NAN;
    T_ASSERT(lr_leech_nearest(x, 12, p) == LR_EINVAL, "NaN accepted");
    x[3] = INFINITY;
    T_ASSERT(lr_leech_nearest_angular(x, 12, p) == LR_EINVAL, "inf accepted");
    x[3] = 1;
    T_ASSERT(lr_leech_nearest(x, 11, p) == LR_EINVAL, "max_shell 11 accepted");
    T_ASSERT(lr_leech_nearest_angular(x, 14, p) == LR_EINVAL, "max_shell 14 accepted");
    T_ASSERT(lr_leech_nearest(NULL, 12, p) == LR_EINVAL, "NULL accepted");
    return T_PASS;
}

T_MAIN(T_CASE(test_bad_inputs), T_CASE(test_scale_and_degenerate_inputs), T_CASE(test_closed_form_vs_members),
       T_CASE(test_variants_agree), T_CASE(test_random_vs_reference_ball12), T_CASE(test_random_vs_reference_ball13),
       T_CASE(test_brute_force_shells_2_and_3))
