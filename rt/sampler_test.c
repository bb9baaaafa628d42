/* The sampler on hand-made logits: greedy and its ties, the top-k and top-p
 * sets (against a brute-force nucleus), the sampled frequencies, and the
 * same tokens for the same seed. */
#include "rt/sampler.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int test_greedy(void)
{
    float l[6] = { 0.5f, 2.0f, -1.0f, 2.0f, NAN, 1.0f };
    T_ASSERT(lr_argmax(l, 6) == 1, "argmax %d (ties go to the lowest id)", lr_argmax(l, 6));
    float nan[3] = { NAN, NAN, NAN };
    T_ASSERT(lr_argmax(nan, 3) == 0, "all NaN");
    lr_sampler s;
    lr_sampler_params p = { 0 };
    T_OK(lr_sampler_init(&s, 6, &p, 1));
    for (int i = 0; i < 10; i++) T_ASSERT(lr_sampler_sample(&s, l) == 1, "temperature 0 is not greedy");
    p = (lr_sampler_params){ 1.5f, 1, 0 };
    T_OK(lr_sampler_set(&s, &p));
    for (int i = 0; i < 10; i++) T_ASSERT(lr_sampler_sample(&s, l) == 1, "top-k 1 is not greedy");
    lr_sampler_free(&s);
    lr_sampler_params bad = { NAN, 0, 0 };
    T_ASSERT(lr_sampler_init(&s, 6, &bad, 1) == LR_EINVAL, "NaN temperature accepted");
    T_ASSERT(lr_sampler_init(&s, 0, &p, 1) == LR_EINVAL, "empty vocabulary accepted");
    return T_PASS;
}

/* Sampled frequencies at temperature 1 follow softmax(logits); at T = 2
 * they follow softmax(logits / 2). NaN logits are never drawn. */
static int test_frequencies(void)
{
    float l[5] = { 1.0f, 0.0f, 2.0f, -1.0f, NAN };
    for (int pass = 0; pass < 2; pass++) {
        double T = pass ? 2.0 : 1.0, z = 0, pr[4];
        for (int i = 0; i < 4; i++) z += pr[i] = exp(l[i] / T);
        lr_sampler s;
        lr_sampler_params p = { (float)T, 0, 0 };
        T_OK(lr_sampler_init(&s, 5, &p, 99));
        int cnt[5] = { 0 }, n = 40000;
        for (int i = 0; i < n; i++) cnt[lr_sampler_sample(&s, l)]++;
        lr_sampler_free(&s);
        T_ASSERT(cnt[4] == 0, "NaN logit drawn %d times", cnt[4]);
        for (int i = 0; i < 4; i++) {
            double f = (double)cnt[i] / n, e = pr[i] / z, sd = sqrt(e * (1 - e) / n);
            T_ASSERT(fabs(f - e) < 5 * sd, "T=%g token %d: frequency %.4f, expected %.4f", T, i, f, e);
        }
    }
    return T_PASS;
}

static int test_top_k(void)
{
    float l[8] = { 0.1f, 3.0f, 0.2f, 2.5f, 2.9f, -4.0f, 2.9f, 0.0f };
    lr_sampler s;
    lr_sampler_params p = { 1.0f, 3, 0 };
    T_OK(lr_sampler_init(&s, 8, &p, 5));
    int cnt[8] = { 0 }, n = 20000;
    for (int i = 0; i < n; i++) cnt[lr_sampler_sample(&s, l)]++;
    /* The top 3: 1 (3.0), then 4 and 6 tied at 2.9. */
    for (int i = 0; i < 8; i++)
        T_ASSERT((cnt[i] > 0) == (i == 1 || i == 4 || i == 6), "token %d drawn %d times", i, cnt[i]);
    double z = exp(3.0) + 2 * exp(2.9), e = exp(3.0) / z, f = (double)cnt[1] / n;
    T_ASSERT(fabs(f - e) < 5 * sqrt(e * (1 - e) / n), "top token frequency %.4f, expected %.4f", f, e);
    /* A tie at the cut keeps the lower id. */
    p.top_k = 2;
    T_OK(lr_sampler_set(&s, &p));
    for (int i = 0; i < 2000; i++) {
        int32_t t = lr_sampler_sample(&s, l);
        T_ASSERT(t == 1 || t == 4, "top-2 drew %d", t);
    }
    lr_sampler_free(&s);
    return T_PASS;
}

static int test_top_p_small(void)
{
    /* Probabilities 0.5, 0.3, 0.15, 0.05. */
    float l[4] = { (float)log(0.5), (float)log(0.3), (float)log(0.15), (float)log(0.05) };
    struct { float p; int keep; } cases[] = { { 0.45f, 1 }, { 0.75f, 2 }, { 0.9f, 3 }, { 0.99f, 4 } };
    for (int c = 0; c < 4; c++) {
        lr_sampler s;
        lr_sampler_params p = { 1.0f, 0, cases[c].p };
        T_OK(lr_sampler_init(&s, 4, &p, 3));
        int cnt[4] = { 0 };
        for (int i = 0; i < 20000; i++) cnt[lr_sampler_sample(&s, l)]++;
        lr_sampler_free(&s);
        for (int i = 0; i < 4; i++)
            T_ASSERT((cnt[i] > 0) == (i < cases[c].keep), "top-p %.2f: token %d drawn %d times", cases[c].p, i, cnt[i]);
    }
    return T_PASS;
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x > y ? -1 : x < y ? 1 : 0;
}

/* A small p over an almost flat distribution keeps only the heaviest token:
   the prefilter's bound then exceeds the heaviest weight and once dropped
   everything (the draw fell back to token 0, the lightest here). */
static int test_top_p_flat(void)
{
    static float l[151936];
    const struct { int n; float p; } cs[] = { { 10, 0.05f }, { 151936, 1e-6f }, { 1000, 0.0009f } };
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        const int n = cs[t].n;
        for (int i = 0; i < n; i++) l[i] = 1e-3f * (float)i / (float)n;
        lr_sampler s;
        lr_sampler_params p = { 1.0f, 0, cs[t].p };
        T_OK(lr_sampler_init(&s, n, &p, 5));
        for (int d = 0; d < 100; d++) {
            int32_t id = lr_sampler_sample(&s, l);
            T_ASSERT(id == n - 1, "n %d, top-p %g: drew %d, want %d (the only token of the nucleus)", n, cs[t].p, id, n - 1);
        }
        lr_sampler_free(&s);
    }
    /* and parameters that cannot give a distribution are refused */
    lr_sampler s;
    const lr_sampler_params bad[] = { { INFINITY, 0, 0.9f }, { -INFINITY, 0, 0.9f }, { NAN, 0, 0.9f }, { 1.0f, 0, NAN },
                                      { -1.0f, 0, 0.9f },     { 1.0f, -1, 0.9f },      { 1.0f, 0, -0.1f }, { 1.0f, 0, 1.5f } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        T_ASSERT(lr_sampler_init(&s, 4, &bad[i], 1) == LR_EINVAL, "parameters %zu accepted", i);
    return T_PASS;
}

/* Top-p over a large vocabulary (the prefiltered path) against the nucleus
 * computed by sorting everything; also combined with top-k. */
static int test_top_p_large(void)
{
    enum { V = 5000 };
    static float l[V], sorted[V];
    lr_rng r;
    lr_rng_seed(&r, 21);
    for (int i = 0; i < V; i++) l[i] = (float)(3 * lr_rng_gauss(&r));
    memcpy(sorted, l, sizeof l);
    qsort(sorted, V, sizeof *sorted, cmp_desc);
    double T = 0.8, z = 0;
    for (int i = 0; i < V; i++) z += exp((sorted[i] - sorted[0]) / T);
    for (int pass = 0; pass < 2; pass++) {
        double topp = 0.6;
        int k = pass ? 20 : 0;
        /* Brute force: the smallest prefix of the sorted (top-k) list with mass >= p. */
        double mass = 0, cum = 0;
        int lim = k ? k : V, keep = 0;
        for (int i = 0; i < lim; i++) mass += exp((sorted[i] - sorted[0]) / T);
        if (!k) mass = z;
        while (cum < topp * mass) cum += exp((sorted[keep++] - sorted[0]) / T);
        float cut = sorted[keep - 1];
        lr_sampler s;
        lr_sampler_params p = { (float)T, k, (float)topp };
        T_OK(lr_sampler_init(&s, V, &p, 8));
        int seen = 0;
        static int hit[V];
        memset(hit, 0, sizeof hit);
        for (int i = 0; i < 20000; i++) {
            int32_t t = lr_sampler_sample(&s, l);
            T_ASSERT(l[t] >= cut, "k=%d: drew token %d (logit %.3f) outside the nucleus (cut %.3f)", k, t, l[t], cut);
            if (!hit[t]++) seen++;
        }
        lr_sampler_free(&s);
        T_ASSERT(seen >= keep - 2 && seen <= keep, "k=%d: %d distinct tokens drawn, nucleus has %d", k, seen, keep);
    }
    return T_PASS;
}

static int test_seeded(void)
{
    enum { V = 300 };
    float l[V];
    lr_rng r;
    lr_rng_seed(&r, 4);
    for (int i = 0; i < V; i++) l[i] = (float)lr_rng_gauss(&r);
    lr_sampler_params p = { 0.9f, 50, 0.95f };
    int32_t a[64], b[64], c[64];
    lr_sampler s;
    uint64_t seeds[3] = { 1, 1, 2 };
    int32_t *out[3] = { a, b, c };
    for (int k = 0; k < 3; k++) {
        T_OK(lr_sampler_init(&s, V, &p, seeds[k]));
        for (int i = 0; i < 64; i++) out[k][i] = lr_sampler_sample(&s, l);
        lr_sampler_free(&s);
    }
    T_ASSERT(!memcmp(a, b, sizeof a), "same seed, different tokens");
    T_ASSERT(memcmp(a, c, sizeof a), "different seeds, same 64 tokens");
    return T_PASS;
}

/* The brute-force definition: every token weighted, all sorted by (weight,
 * id), the first k, the nucleus, one draw from the same random stream. */
typedef struct { double w; int id; } cand;
static int cmp_c(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    return a->w > b->w ? -1 : a->w < b->w ? 1 : a->id - b->id;
}
static int brute(const float *l, int n, double T, int k, double p, lr_rng *r, cand *c)
{
    float mx = -INFINITY;
    for (int i = 0; i < n; i++) mx = l[i] > mx ? l[i] : mx;
    for (int i = 0; i < n; i++) c[i] = (cand){ isnan(l[i]) ? 0 : l[i] == mx ? 1 : exp(((double)l[i] - mx) / T), i };
    qsort(c, (size_t)n, sizeof *c, cmp_c);
    int nc = k > 0 && k < n ? k : n;
    double mass = 0;
    for (int i = 0; i < nc; i++) mass += c[i].w;
    if (p > 0 && p < 1) {
        double cum = 0;
        int m = 0;
        while (m < nc && cum < p * mass) cum += c[m++].w;
        nc = m > 0 ? m : 1;
    }
    double kept = 0, cum = 0;
    for (int i = 0; i < nc; i++) kept += c[i].w;
    double u = lr_rng_unit(r) * kept;
    for (int i = 0; i < nc; i++)
        if (u < (cum += c[i].w)) return c[i].id;
    for (int i = nc - 1; i >= 0; i--)
        if (c[i].w > 0) return c[i].id;
    return c[0].id;
}

/* The fast top-k path (heap on logits, weights for the k kept) and the
 * two-pass argmax draw exactly what the definition draws: random logits
 * with repeated values, NaNs and -inf, several k / p / T, a 152k vocabulary. */
static int test_matches_brute_force(void)
{
    enum { V = 2000 };
    static float l[151936];
    static cand c[151936];
    lr_rng g;
    lr_rng_seed(&g, 17);
    const struct { int n, k; double T, p; } cs[] = { { V, 40, 0.7, 0.9 }, { V, 5, 1.3, 1.0 }, { V, 1999, 0.5, 0.8 },
                                                     { V, 0, 0.8, 0.9 }, { 151936, 40, 0.7, 0.9 }, { 37, 36, 2.0, 0.5 } };
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        int n = cs[t].n;
        for (int i = 0; i < n; i++) {
            double u = lr_rng_unit(&g);
            l[i] = u < 0.02 ? NAN : u < 0.03 ? -INFINITY : (float)(int)(lr_rng_gauss(&g) * 8) / 4; /* many ties */
        }
        lr_sampler s;
        lr_sampler_params p = { (float)cs[t].T, cs[t].k, (float)cs[t].p };
        T_OK(lr_sampler_init(&s, n, &p, 1234 + t));
        lr_rng r;
        lr_rng_seed(&r, 1234 + t);
        for (int d = 0; d < 200; d++) {
            int32_t a = lr_sampler_sample(&s, l), b = brute(l, n, p.temperature, cs[t].k, p.top_p, &r, c);
            T_ASSERT(a == b, "case %zu draw %d: sampler %d, brute force %d", t, d, a, b);
        }
        lr_sampler_free(&s);
        int am = lr_argmax(l, n), bm = -1;
        for (int i = 0; i < n; i++)
            if (!isnan(l[i]) && (bm < 0 || l[i] > l[bm])) bm = i;
        T_ASSERT(am == (bm < 0 ? 0 : bm), "case %zu argmax %d vs %d", t, am, bm);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_greedy), T_CASE(test_frequencies), T_CASE(test_top_k), T_CASE(test_top_p_small), T_CASE(test_top_p_flat),
       T_CASE(test_top_p_large), T_CASE(test_seeded), T_CASE(test_matches_brute_force))
