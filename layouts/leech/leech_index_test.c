/* Index tests: the published numbering (fingerprint of format v1), round
 * trips over the whole ball and at every class edge, an exhaustive bijection
 * check of shells 0..3 against a brute-force enumeration that shares no code
 * with the codec, error paths, and the speed of unrank/rank. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layouts/leech/leech.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#define N2 196560ull
#define N3 16773120ull

/* ---- the published format's fingerprint ----
 * The published repository pins a 64-bit FNV-1a digest of its index map
 * (0x338f420f11866319): a domain tag, the Golay word table, per class its
 * first/last index and its levels (distinct |values| sorted by count then
 * value, both descending, up to 5, zero included) and 7 probe indices with the
 * points they decode to, then the origin and the first index past L24(13).
 * Recomputing it from this codec checks the whole numbering: class order and
 * sizes, codeword order, and (through the probes) every mixed-radix digit. */
#define PUBLISHED_FINGERPRINT 0x338f420f11866319ull

static void fnv_byte(uint64_t *h, uint8_t b)
{
    *h ^= b;
    *h *= 0x100000001b3ull;
}
static void fnv_u64(uint64_t *h, uint64_t v)
{
    for (int i = 0; i < 8; i++) fnv_byte(h, (uint8_t)(v >> (8 * i)));
}
static void fnv_i32(uint64_t *h, int32_t v)
{
    for (int i = 0; i < 4; i++) fnv_byte(h, (uint8_t)((uint32_t)v >> (8 * i)));
}
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static void fp_probe(uint64_t *h, uint64_t idx)
{
    int8_t x[24];
    fnv_u64(h, idx);
    if (lr_leech_unrank(idx, 13, x) == LR_OK) {
        fnv_byte(h, 1);
        for (int i = 0; i < 24; i++) fnv_i32(h, x[i]);
    } else {
        fnv_byte(h, 0);
    }
}

static int test_published_fingerprint(void)
{
    const lr_leech_class *cl;
    int n;
    T_OK(lr_leech_classes(13, &cl, &n));
    const char *domain = "llvq codebook fingerprint v1";
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = domain; *p; p++) fnv_byte(&h, (uint8_t)*p);
    fnv_u64(&h, 24);
    fnv_u64(&h, LR_LEECH_BALL13_POINTS - 1);
    fnv_u64(&h, 0xC75);
    fnv_u64(&h, 4096);
    const uint32_t *w = lr_golay_words();
    for (int i = 0; i < 4096; i++) fnv_u64(&h, w[i]);
    fnv_u64(&h, (uint64_t)n);
    for (int c = 0; c < n; c++) {
        uint64_t lo = cl[c].offset, hi = cl[c].offset + cl[c].count - 1, card = cl[c].count;
        fnv_u64(&h, lo);
        fnv_u64(&h, hi);
        int ord[LR_LEECH_MAX_VALS], k = cl[c].nvals, nonzero = 0;
        T_ASSERT(k <= 5, "class %d has %d levels", c, k);
        for (int i = 0; i < k; i++) ord[i] = i;
        for (int i = 0; i < k; i++) /* count descending, then value descending */
            for (int j = i + 1; j < k; j++) {
                int a = ord[i], b = ord[j];
                if (cl[c].mult[b] > cl[c].mult[a] || (cl[c].mult[b] == cl[c].mult[a] && cl[c].vals[b] > cl[c].vals[a]))
                    ord[i] = b, ord[j] = a;
            }
        for (int i = 0; i < k; i++)
            if (cl[c].vals[i]) nonzero += cl[c].mult[i];
        fnv_u64(&h, (uint64_t)k);
        fnv_u64(&h, (uint64_t)nonzero);
        fnv_u64(&h, cl[c].odd);
        fnv_u64(&h, cl[c].shell);
        for (int i = 0; i < 5; i++) {
            fnv_i32(&h, i < k ? cl[c].vals[ord[i]] : 0);
            fnv_byte(&h, i < k ? cl[c].mult[ord[i]] : 0);
        }
        for (uint64_t q = 0; q < 4; q++) fp_probe(&h, lo + card * q / 4);
        fp_probe(&h, hi);
        for (uint64_t s = 0; s < 2; s++) fp_probe(&h, lo + mix64((uint64_t)c ^ mix64(s)) % card);
    }
    fp_probe(&h, 0);
    fp_probe(&h, LR_LEECH_BALL13_POINTS);
    T_ASSERT(h == PUBLISHED_FINGERPRINT, "fingerprint %016llx, published %016llx", (unsigned long long)h,
             PUBLISHED_FINGERPRINT);
    return T_PASS;
}

/* ---- round trips ---- */

static int check_index(uint64_t idx, int max_shell)
{
    int8_t x[24];
    uint64_t back;
    int cls, cls2;
    const lr_leech_class *cl;
    T_OK(lr_leech_classes(max_shell, &cl, NULL));
    T_OK(lr_leech_unrank(idx, max_shell, x));
    T_OK(lr_leech_rank(x, max_shell, &back));
    T_ASSERT(back == idx, "rank(unrank(%llu)) = %llu (ball %d)", (unsigned long long)idx, (unsigned long long)back,
             max_shell);
    T_OK(lr_leech_index_class(idx, max_shell, &cls));
    T_OK(lr_leech_class_of(x, max_shell, &cls2));
    T_ASSERT(cls == cls2, "index %llu: class %d by index, %d by point", (unsigned long long)idx, cls, cls2);
    if (idx == 0) {
        T_ASSERT(cls == -1 && lr_leech_norm(x) == 0, "index 0 must be the origin");
        return T_PASS;
    }
    T_ASSERT(lr_leech_is_point(x), "unrank(%llu) is not a lattice point", (unsigned long long)idx);
    T_ASSERT(idx >= cl[cls].offset && idx - cl[cls].offset < cl[cls].count, "index %llu outside its class %d",
             (unsigned long long)idx, cls);
    T_ASSERT(lr_leech_norm(x) == 16 * cl[cls].shell, "unrank(%llu): norm %d, class shell %d", (unsigned long long)idx,
             lr_leech_norm(x), cl[cls].shell);
    int hist[16] = {0};
    for (int i = 0; i < 24; i++) hist[abs(x[i])]++;
    for (int j = 0; j < cl[cls].nvals; j++)
        T_ASSERT(hist[cl[cls].vals[j]] == cl[cls].mult[j], "unrank(%llu): values do not match class %d",
                 (unsigned long long)idx, cls);
    T_ASSERT(((x[0] & 1) != 0) == cl[cls].odd, "unrank(%llu): coset", (unsigned long long)idx);
    return T_PASS;
}

static int test_random_round_trip(void)
{
    lr_rng r;
    lr_rng_seed(&r, 0x1ee0c4);
    for (int ms = 12; ms <= 13; ms++)
        for (int i = 0; i < 300000; i++)
            if (check_index(lr_rng_below(&r, lr_leech_ball_points(ms)), ms)) return T_FAIL;
    return T_PASS;
}

static int test_class_edges(void)
{
    for (int ms = 12; ms <= 13; ms++) {
        const lr_leech_class *cl;
        int n;
        T_OK(lr_leech_classes(ms, &cl, &n));
        T_ASSERT(check_index(0, ms) == T_PASS, "origin");
        for (int c = 0; c < n; c++) {
            uint64_t a = cl[c].offset, b = cl[c].offset + cl[c].count - 1;
            uint64_t probes[] = {a, a + 1 < b ? a + 1 : a, b > a ? b - 1 : b, b, a + cl[c].count / 2};
            for (int k = 0; k < 5; k++)
                if (check_index(probes[k], ms)) return T_FAIL;
        }
        T_ASSERT(cl[n - 1].offset + cl[n - 1].count == lr_leech_ball_points(ms), "last class must end the ball");
    }
    return T_PASS;
}

/* ---- errors ---- */

static int test_errors(void)
{
    int8_t x[24];
    uint64_t idx;
    int cls;
    T_ASSERT(lr_leech_unrank(LR_LEECH_BALL12_POINTS, 12, x) == LR_ERANGE, "idx = N12");
    T_ASSERT(lr_leech_unrank(UINT64_MAX, 12, x) == LR_ERANGE, "idx = 2^64-1");
    T_ASSERT(lr_leech_unrank(LR_LEECH_BALL13_POINTS, 13, x) == LR_ERANGE, "idx = N13");
    T_ASSERT(lr_leech_index_class(LR_LEECH_BALL13_POINTS, 13, &cls) == LR_ERANGE, "index_class N13");
    T_ASSERT(lr_leech_unrank(LR_LEECH_BALL12_POINTS, 13, x) == LR_OK, "N12 is a shell-13 index");
    T_ASSERT(lr_leech_norm(x) == 16 * 13, "first index past L24(12) is on shell 13");
    T_ASSERT(lr_leech_rank(x, 12, &idx) == LR_EINVAL, "a shell-13 point is outside L24(12)");
    T_ASSERT(lr_leech_class_of(x, 12, &cls) == LR_EINVAL, "class_of outside the ball");
    T_ASSERT(lr_leech_unrank(1, 11, x) == LR_EINVAL && lr_leech_unrank(1, 14, x) == LR_EINVAL, "max_shell");
    T_ASSERT(lr_leech_classes(7, NULL, NULL) == LR_EINVAL && lr_leech_ball_points(7) == 0, "max_shell");

    /* non-points: mixed parity, bad mod-4 pattern, bad sum, and a point far out */
    int8_t bad[24] = {0};
    bad[0] = 1;
    T_ASSERT(lr_leech_rank(bad, 13, &idx) == LR_EINVAL, "mixed parity");
    memset(bad, 0, 24);
    bad[0] = bad[1] = 2;
    T_ASSERT(lr_leech_rank(bad, 13, &idx) == LR_EINVAL, "(2,2,0..) is not a point");
    memset(bad, 0, 24);
    bad[0] = 4;
    T_ASSERT(lr_leech_rank(bad, 13, &idx) == LR_EINVAL, "(4,0..) has sum 4 mod 8");
    for (int i = 0; i < 24; i++) bad[i] = 1;
    T_ASSERT(lr_leech_rank(bad, 13, &idx) == LR_EINVAL, "(1^24) has sum 0 mod 8");
    memset(bad, 0, 24);
    bad[0] = 16;
    T_ASSERT(lr_leech_is_point(bad), "(16,0..) is a lattice point");
    T_ASSERT(lr_leech_rank(bad, 13, &idx) == LR_EINVAL, "(16,0..) is on shell 16");
    bad[0] = -128;
    T_ASSERT(lr_leech_rank(bad, 13, &idx) == LR_EINVAL, "(-128,0..) is far out");
    memset(bad, 0, 24);
    bad[3] = 8, bad[9] = -8; /* shell 8: inside */
    T_OK(lr_leech_rank(bad, 12, &idx));
    T_ASSERT(idx > 0 && idx < LR_LEECH_BALL12_POINTS, "(8,-8) index");
    return T_PASS;
}

/* ---- exhaustive check of shells 0..3 ----
 * The reference enumerates, for each coset p and each codeword c (taken from
 * the Golay table, whose own test checks it), every integer vector with
 * x_i = p + 2 c_i (mod 4) and sum x^2 <= 48, and keeps those with
 * sum x = 4p (mod 8): the definition of the lattice, no classes involved. */
typedef struct {
    const lr_leech_class *cl;
    uint8_t *seen;
    uint64_t points, bad;
    uint64_t per_class[64];
    int8_t x[24];
    char msg[200];
} sweep;

static void visit(sweep *s)
{
    const int8_t *x = s->x;
    uint64_t idx;
    int8_t y[24];
    int cls;
    if (lr_leech_rank(x, 12, &idx) || idx >= 1 + N2 + N3 || (s->seen[idx >> 3] >> (idx & 7) & 1) ||
        lr_leech_unrank(idx, 12, y) || memcmp(x, y, 24) || lr_leech_class_of(x, 12, &cls) || cls >= 64 ||
        (cls < 0 ? idx != 0 : 16 * s->cl[cls].shell != lr_leech_norm(x)) || (idx > N2) != (lr_leech_norm(x) == 48)) {
        if (!s->bad++) {
            int n = snprintf(s->msg, sizeof s->msg, "point");
            for (int i = 0; i < 24; i++) n += snprintf(s->msg + n, sizeof s->msg - (size_t)n, " %d", x[i]);
        }
        return;
    }
    s->seen[idx >> 3] |= (uint8_t)(1u << (idx & 7));
    s->points++;
    if (cls >= 0) s->per_class[cls]++;
}

static void walk(sweep *s, uint32_t c, unsigned p, int i, int left, int sum, const int *minrest)
{
    if (i == 24) {
        if (((unsigned)sum & 7u) == 4u * p) visit(s);
        return;
    }
    int r = (int)(p + 2 * ((c >> i) & 1)); /* required residue mod 4 */
    for (int v = -7; v <= 7; v++) {
        if (((v % 4) + 4) % 4 != r || v * v + minrest[i + 1] > left) continue;
        s->x[i] = (int8_t)v;
        walk(s, c, p, i + 1, left - v * v, sum + v, minrest);
    }
}

static int test_exhaustive_shells_0_to_3(void)
{
    sweep *s = calloc(1, sizeof *s);
    T_ASSERT(s, "oom");
    s->seen = calloc((1 + N2 + N3 + 7) / 8, 1);
    T_ASSERT(s->seen, "oom");
    const uint32_t *w = lr_golay_words();
    T_OK(lr_leech_classes(12, &s->cl, NULL));
    for (unsigned p = 0; p <= 1; p++)
        for (int k = 0; k < 4096; k++) {
            int minrest[25];
            minrest[24] = 0;
            for (int i = 23; i >= 0; i--) { /* least square left: 1 (odd), 4 (support), 0 */
                int m = p ? 1 : ((w[k] >> i) & 1) ? 4 : 0;
                minrest[i] = minrest[i + 1] + m;
            }
            walk(s, w[k], p, 0, 48, 0, minrest);
        }
    int ok = s->bad == 0;
    if (!ok) fprintf(stderr, "    %llu bad points, first: %s\n", (unsigned long long)s->bad, s->msg);
    uint64_t pts = s->points;
    const lr_leech_class *cl;
    int n, cls_ok = 1;
    T_OK(lr_leech_classes(12, &cl, &n));
    for (int c = 0; c < n && cl[c].shell <= 3; c++)
        if (s->per_class[c] != cl[c].count) {
            fprintf(stderr, "    class %d: %llu points enumerated, table says %llu\n", c,
                    (unsigned long long)s->per_class[c], (unsigned long long)cl[c].count);
            cls_ok = 0;
        }
    free(s->seen);
    free(s);
    T_ASSERT(ok, "rank/unrank disagree with the enumeration");
    T_ASSERT(pts == 1 + N2 + N3, "%llu points enumerated, want %llu", (unsigned long long)pts, 1 + N2 + N3);
    T_ASSERT(cls_ok, "class sizes");
    return T_PASS;
}

/* The reference enumeration must itself agree with lr_leech_is_point on the
 * vectors it rejects: spot-check a few. */
static int test_membership_samples(void)
{
    int8_t x[24] = {0};
    x[0] = 4, x[1] = 4;
    T_ASSERT(lr_leech_is_point(x), "(4,4,0..)");
    x[1] = -4;
    T_ASSERT(lr_leech_is_point(x), "(4,-4,0..)");
    for (int i = 0; i < 24; i++) x[i] = 1;
    x[0] = -3;
    T_ASSERT(lr_leech_is_point(x), "(-3,1^23)");
    x[0] = 3;
    T_ASSERT(!lr_leech_is_point(x), "(3,1^23): pattern {0} is no codeword");
    return T_PASS;
}

/* ---- speed ---- */
/* thread CPU time: the build machines are shared, wall time is not ours */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int test_speed(void)
{
    enum { N = 1 << 20 };
    uint64_t *idx = malloc(N * sizeof *idx), *back = malloc(N * sizeof *back);
    int8_t(*pts)[24] = malloc(N * sizeof *pts);
    T_ASSERT(idx && back && pts, "oom");
    lr_rng r;
    lr_rng_seed(&r, 0x5eed);
    for (int i = 0; i < N; i++) idx[i] = lr_rng_below(&r, LR_LEECH_BALL12_POINTS);
    T_OK(lr_leech_unrank(1, 12, pts[0])); /* build the tables outside the timing */
    double t0 = now();
    for (int i = 0; i < N; i++)
        if (lr_leech_unrank(idx[i], 12, pts[i])) return T_FAIL;
    double t1 = now();
    for (int i = 0; i < N; i++)
        if (lr_leech_rank(pts[i], 12, &back[i])) return T_FAIL;
    double t2 = now();
    int same = !memcmp(idx, back, N * sizeof *idx);
    printf("    leech index: unrank %.0f ns, rank %.0f ns (uniform over L24(12), 1 thread, CPU time)\n", (t1 - t0) * 1e9 / N,
           (t2 - t1) * 1e9 / N);
    free(idx), free(back), free(pts);
    T_ASSERT(same, "round trip");
    return T_PASS;
}

T_MAIN(T_CASE(test_published_fingerprint), T_CASE(test_errors), T_CASE(test_membership_samples),
       T_CASE(test_class_edges), T_CASE(test_random_round_trip), T_CASE(test_exhaustive_shells_0_to_3),
       T_CASE(test_speed))
