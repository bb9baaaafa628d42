/* Index -> layout codes: what the VRAM layouts store for a block (its class
 * and, per coordinate, the level of |x_i| in the class's ascending values and
 * the sign), decoded straight from the index without forming x or searching
 * for levels and the class afterwards (lr_leech_unrank_codes_ref does that:
 * the reference this is tested against, block for block).
 *
 * The arithmetic is lr_leech_unrank's (index.c: the same class split, the
 * same slot-by-slot multiset unrank in the published kind order), arranged
 * for a short dependency chain per slot, which is what bounds the decode:
 *   - with M arrangements of `left` slots, the ranks taken by kinds <= j
 *     number P_j = M * C_j / left (C_j: items of kinds <= j left), an exact
 *     quotient formed as ((M * inv(odd part of left)) * C_j) >> tz(left);
 *     r is compared with the P_j directly (index.c scales r by left), the
 *     pick's range [P_{pick-1}, P_pick) is taken with conditional moves, and
 *     the next r and M are differences: no division, no search, no branch on
 *     the data;
 *   - the class comes from a table of 4096 index buckets (a search only
 *     where a class starts inside the bucket); the splits by the
 *     arrangement counts are multiply-highs by precomputed reciprocals;
 *   - a batch of blocks is split first (no data-dependent branch, so
 *     consecutive blocks overlap), its arrangement problems queued by kind
 *     count and parity (an odd point's slots are all 24, in order, all
 *     signed) and run two at a time in lockstep (two independent chains);
 *   - a slot writes its code byte from a per-class (kind, next sign bit)
 *     table; an odd point's final run of its last kind is written eight
 *     bytes at a time.
 * Cost: docs/layouts.md, "Unfold cost" (tools/bench_unfold). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/leech_tab.h"
#include "util/err.h"

typedef unsigned __int128 u128;

/* The kinds of one arrangement problem (a class's "on" or "off" part):
 * counts in the published kind order, and per kind and next sign bit the
 * code byte a slot gets: level | negative << 3, plus 0x10 when the value is
 * nonzero (it takes that sign bit). */
typedef struct {
    uint8_t nk, cnt[8];
    uint8_t e[8][2];
    uint8_t ea[8][2]; /* e by the number of kinds above the pick: ea[a] = e[nk - 1 - a] */
    uint8_t run;  /* the slots left after the loop: 0 zeros (nothing to write), 1 any, 2 the last ones (odd) */
} dkinds;

/* One class as the decoder sees it; odd classes are cast in the even form
 * (no free or word sign bits, a_off = 1, no off part) so the split needs no
 * branch. */
typedef struct {
    uint64_t start;             /* idx - 1 of the first point */
    uint64_t a_on, a_off;       /* arrangement counts (odd: a_off = 1) */
    uint64_t m_on, m_off;       /* floor((2^64 - 1) / a): x / a by multiply-high */
    const uint32_t *words;
    uint32_t all;               /* odd: 0xFFFFFF (on = every slot, signs = the codeword); even: 0 */
    uint8_t left_on, left_off;  /* slots of each part (odd: 24, 0) */
    uint8_t p_req, nsw, nfree;
    uint8_t kon, koff;          /* queue of each part: kinds - 1 (0 when absent), + 5 for an odd point's */
} dclass;

/* What the split reads (one cache line a class) apart from what the
 * arrangements read. */
static dclass g_c[LR_LEECH_NCLASS13] __attribute__((aligned(64)));
static dkinds g_k[LR_LEECH_NCLASS13][2]; /* on, off */
/* Per ball (L24(12), L24(13)): class starts padded with UINT64_MAX, and the
 * class holding the first L of each of 4096 equal buckets of the index
 * range (bucket b = L >> shift), so a class is found with one lookup where
 * a bucket holds no class start (all but a few percent of the points). */
#define NBUCKET 4096
typedef struct {
    uint64_t starts[512];
    uint16_t bucket[NBUCKET + 1];
    unsigned shift;
} ball_index;
static ball_index g_ball[2];
static uint64_t g_inv[25];
static uint8_t g_tz[25];
static int g_status = -1;
static char g_err[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int level_of(const lr_leech_class *p, unsigned v)
{
    for (int l = 0; l < p->nvals; l++)
        if (p->vals[l] == v) return l;
    return -1;
}

static int kinds(const lr_leech_class *pub, int n, const uint8_t *val, const uint8_t *cnt, const uint8_t *flip,
                 dkinds *k)
{
    memset(k, 0, sizeof *k);
    k->nk = (uint8_t)n;
    for (int j = 0; j < n; j++) {
        /* a kind with no items (the zero run of a class without zeros) is never picked */
        int l = cnt[j] ? level_of(pub, val[j]) : 0;
        if (l < 0) return -1;
        k->cnt[j] = cnt[j];
        for (unsigned s = 0; s < 2; s++) {
            unsigned nz = val[j] != 0, neg = (s ^ (flip ? flip[j] & 1u : 0u)) & nz;
            k->e[j][s] = (uint8_t)(l | neg << 3 | nz << 4);
        }
    }
    for (int a = 0; a < n; a++) memcpy(k->ea[a], k->e[n - 1 - a], 2);
    return 0;
}

static void codes_init(void)
{
    const lr_leech_ctab *tab;
    const lr_leech_class *pub;
    if ((g_status = lr_leech_tab(&tab, &pub))) {
        snprintf(g_err, sizeof g_err, "%s", lr_errmsg());
        return;
    }
    for (int bi = 0; bi < 2; bi++) {
        ball_index *B = &g_ball[bi];
        int nc = bi ? LR_LEECH_NCLASS13 : LR_LEECH_NCLASS12;
        uint64_t n = lr_leech_ball_points(bi ? 13 : 12) - 1; /* L < n */
        for (int i = 0; i < 512; i++) B->starts[i] = i < nc ? tab[i].start : UINT64_MAX;
        B->shift = 0;
        while ((n - 1) >> B->shift >= NBUCKET) B->shift++;
        for (int b = 0, c = 0; b <= NBUCKET; b++) {
            uint64_t L = (uint64_t)b << B->shift;
            while (c + 1 < nc && B->starts[c + 1] <= L) c++;
            B->bucket[b] = (uint16_t)c;
        }
    }
    for (int n = 1; n <= 24; n++) {
        int tz = __builtin_ctz((unsigned)n);
        uint64_t o = (uint64_t)(n >> tz), inv = o;
        for (int k = 0; k < 6; k++) inv *= 2 - o * inv;
        g_inv[n] = inv, g_tz[n] = (uint8_t)tz;
    }
    for (int c = 0; c < LR_LEECH_NCLASS13; c++) {
        const lr_leech_ctab *t = &tab[c];
        dclass *d = &g_c[c];
        dkinds *on = &g_k[c][0], *off = &g_k[c][1];
        memset(d, 0, sizeof *d);
        d->start = t->start, d->a_on = t->a_on, d->a_off = t->a_off;
        d->m_on = UINT64_MAX / t->a_on, d->m_off = UINT64_MAX / t->a_off;
        d->words = t->words;
        d->all = t->odd ? 0xFFFFFFu : 0;
        d->left_on = t->odd ? 24 : t->w, d->left_off = t->odd ? 0 : (uint8_t)(24 - t->w);
        d->p_req = t->odd ? 0 : t->p_req, d->nsw = t->nsw, d->nfree = t->nfree;
        int bad = pub[c].nvals > 8 || kinds(&pub[c], t->n_on, t->on_val, t->on_cnt, t->odd ? t->on_flip : NULL, on) ||
                  kinds(&pub[c], t->odd ? 0 : t->n_off, t->off_val, t->off_cnt, NULL, off);
        int lon = on->nk ? on->nk - 1 : 0, loff = off->nk ? off->nk - 1 : 0;
        on->run = (uint8_t)(!(on->e[lon][0] & 0x10) ? 0 : t->odd ? 2 : 1);
        off->run = (uint8_t)(!(off->e[loff][0] & 0x10) ? 0 : 1);
        d->kon = (uint8_t)(lon + (t->odd ? 5 : 0)), d->koff = (uint8_t)loff;
        if (bad) {
            g_status = LR_FAIL(LR_EINVAL, "leech codes: class %d: a kind's value is not among the class's", c);
            snprintf(g_err, sizeof g_err, "%s", lr_errmsg());
            return;
        }
    }
}

static int ready(int max_shell, int *nclass)
{
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "leech: max_shell %d (12 or 13)", max_shell);
    pthread_once(&g_once, codes_init);
    if (g_status) return LR_FAIL(g_status, "%s", g_err);
    *nclass = max_shell == 12 ? LR_LEECH_NCLASS12 : LR_LEECH_NCLASS13;
    return LR_OK;
}

/* x / a for x < 2^64 with m = floor((2^64 - 1) / a): the multiply-high is
 * the quotient or one less. */
static inline uint64_t div_by(uint64_t x, uint64_t a, uint64_t m)
{
    uint64_t q = (uint64_t)(((u128)x * m) >> 64);
    return q + (x - q * a >= a);
}

/* One arrangement problem: the multiset of k over `left` slots (the set
 * bits of pos, ascending), rank r of M; nonzero values take the bits of
 * signs in slot order. */
typedef struct {
    uint64_t r, M, signs;
    const dkinds *k;
    uint8_t *out;
    uint32_t pos, left;
} prob;

/* One kind j of a slot: below = (r < P_j); if so, hi = P_j and lo = P_{j-1};
 * C_j -= below, above += below. Selects, not branches (the data mispredicts
 * them), which GCC does not promise for C ternaries: cmov on x86-64, masks
 * elsewhere (LR_CODES_PORTABLE forces them; layouts/leech/codes_test.c
 * checks both). */
static inline __attribute__((always_inline)) void kind_step(uint64_t r, uint64_t P, uint64_t Pprev, uint64_t *hi,
                                                            uint64_t *lo, uint64_t *C, uint64_t *above)
{
#if defined(__x86_64__) && !defined(LR_CODES_PORTABLE)
    uint64_t t;
    __asm__("cmp %[P], %[r]\n\t"
            "cmovb %[P], %[hi]\n\t"
            "cmovb %[Pp], %[lo]\n\t"
            "sbb %[t], %[t]\n\t"
            "add %[t], %[C]\n\t"
            "sub %[t], %[ab]"
            : [hi] "+r"(*hi), [lo] "+r"(*lo), [C] "+r"(*C), [ab] "+r"(*above), [t] "=&r"(t)
            : [r] "r"(r), [P] "r"(P), [Pp] "r"(Pprev)
            : "cc");
#else
    const uint64_t m = 0 - (uint64_t)(r < P);
    *hi ^= (*hi ^ P) & m;
    *lo ^= (*lo ^ Pprev) & m;
    *C += m;
    *above -= m;
#endif
}

/* Slots s0..23 of an odd point all take the last kind (code e0 for sign
 * bit 0): level e0 & 7 and sign = signs bit (slot - s0) XOR the flip, which
 * e0 carries in bit 3. Eight slots per word, no branch: the bits spread to
 * bytes with a multiply. */
static inline void odd_run(uint8_t *out, unsigned s0, uint64_t signs, unsigned e0)
{
    const uint64_t lv = (uint64_t)(e0 & 7u) * 0x0101010101010101ull;
    const uint64_t sg = ((signs << s0) ^ (0 - (uint64_t)((e0 >> 3) & 1u))) & 0xFFFFFFu;
    for (unsigned w = 0; w < 3; w++) {
        uint64_t b = (sg >> (8 * w)) & 0xFF, x;
        b = ((((b * 0x0101010101010101ull) & 0x8040201008040201ull) + 0x7F7F7F7F7F7F7F7Full) & 0x8080808080808080ull) >> 4;
        int t = (int)s0 - 8 * (int)w; /* bytes below t keep their codes */
        uint64_t keep = t <= 0 ? 0 : t >= 8 ? ~0ull : ~(~0ull << (8 * t));
        memcpy(&x, out + 8 * w, 8);
        x = (x & keep) | ((lv | b) & ~keep);
        memcpy(out + 8 * w, &x, 8);
    }
}

/* An arrangement in progress. */
typedef struct {
    uint64_t r, M, signs, C[4]; /* C_j: items of kinds <= j still to place (j < nk - 1) */
    uint32_t pos, left;
    const dkinds *k;
    uint8_t *out;
} lane;

static inline __attribute__((always_inline)) void lane_load(const int nk, lane *a, const prob *p)
{
    a->r = p->r, a->M = p->M, a->signs = p->signs, a->pos = p->pos, a->left = p->left, a->k = p->k, a->out = p->out;
    unsigned c = 0;
#pragma GCC unroll 8
    for (int j = 0; j < nk - 1; j++) a->C[j] = c += p->k->cnt[j];
}

/* More than the last kind left to place (index.c's loop condition). */
static inline __attribute__((always_inline)) int lane_busy(const int nk, const lane *a) { return nk > 1 && a->C[nk - 2]; }

/* One slot, as index.c: the kind whose ranks hold r. An odd point's slots
 * are all 24 in order and all nonzero: its slot is 24 - left, and every
 * slot takes a sign bit. */
static inline __attribute__((always_inline)) void lane_step(const int nk, const int odd, lane *a)
{
    const uint64_t y = a->M * g_inv[a->left];
    const unsigned tz = g_tz[a->left];
    /* P_j = M * C_j / left, ascending in j, P_{-1} = 0, P_{nk-1} = M.
     * Descending over the kinds, the last one with r < P_j is the pick:
     * the ranks it takes are [lo, hi) = [P_{pick-1}, P_pick), and every
     * kind from the pick on loses one item. */
    uint64_t P[4], hi = a->M, lo, above = 0;
#pragma GCC unroll 8
    for (int j = 0; j < nk - 1; j++) P[j] = (y * a->C[j]) >> tz;
    lo = P[nk - 2];
#pragma GCC unroll 8
    for (int j = nk - 2; j >= 0; j--) kind_step(a->r, P[j], j ? P[j - 1] : 0, &hi, &lo, &a->C[j], &above);
    a->r -= lo;
    a->M = hi - lo;
    const unsigned e = a->k->ea[above][a->signs & 1];
    if (odd) {
        a->out[24 - a->left] = (uint8_t)(e & 15u);
        a->signs >>= 1;
    } else {
        a->out[__builtin_ctz(a->pos)] = (uint8_t)(e & 15u);
        a->signs >>= e >> 4;
        a->pos &= a->pos - 1;
    }
    a->left--;
}

/* The slots left all take the last kind; a zero run (code 0) is already there. */
static inline __attribute__((always_inline)) void lane_finish(const int nk, lane *a)
{
    const dkinds *k = a->k;
    const unsigned e0 = k->e[nk - 1][0], e1 = k->e[nk - 1][1];
    uint64_t signs = a->signs;
    if (k->run == 2)
        odd_run(a->out, 24 - a->left, signs, e0);
    else if (k->run == 1)
        for (uint32_t pos = a->pos; pos; pos &= pos - 1, signs >>= 1)
            a->out[__builtin_ctz(pos)] = (uint8_t)((signs & 1 ? e1 : e0) & 15u);
}

/* The problems p[0..n) of nk kinds, two at a time in lockstep: one slot is a
 * chain of dependent multiplies and selects, so two independent chains
 * keep the core busier; a lane that finishes takes the next problem. */
static inline __attribute__((always_inline)) void arr_codes_k(const int nk, const int odd, const prob *p,
                                                              const uint8_t *ord, size_t n)
{
    lane a, b;
    size_t i = 2;
    if (n == 0) return;
    lane_load(nk, &a, &p[ord[0]]);
    if (n == 1) {
        while (lane_busy(nk, &a)) lane_step(nk, odd, &a);
        lane_finish(nk, &a);
        return;
    }
    lane_load(nk, &b, &p[ord[1]]);
    for (;;) {
        while (lane_busy(nk, &a) && lane_busy(nk, &b)) {
            lane_step(nk, odd, &a);
            lane_step(nk, odd, &b);
        }
        if (!lane_busy(nk, &a)) {
            lane_finish(nk, &a);
            if (i < n) {
                lane_load(nk, &a, &p[ord[i++]]);
                continue;
            }
            while (lane_busy(nk, &b)) lane_step(nk, odd, &b);
            lane_finish(nk, &b);
            return;
        }
        lane_finish(nk, &b); /* a is busy, b is not */
        if (i < n) {
            lane_load(nk, &b, &p[ord[i++]]);
            continue;
        }
        while (lane_busy(nk, &a)) lane_step(nk, odd, &a);
        lane_finish(nk, &a);
        return;
    }
}

#define ARR_SPECIAL(NK)                                                                                             \
    static void arr_codes_##NK(const prob *p, const uint8_t *ord, size_t n) { arr_codes_k(NK, 0, p, ord, n); }       \
    static void arr_codes_odd_##NK(const prob *p, const uint8_t *ord, size_t n) { arr_codes_k(NK, 1, p, ord, n); }
ARR_SPECIAL(1)
ARR_SPECIAL(2)
ARR_SPECIAL(3)
ARR_SPECIAL(4)
ARR_SPECIAL(5)

/* The class of L (idx - 1): the bucket's class, or a binary search
 * between the classes at the bucket's ends when a class starts inside it. */
static inline int find_class(uint64_t L, const ball_index *B)
{
    const uint64_t bk = L >> B->shift;
    unsigned base = B->bucket[bk], len = B->bucket[bk + 1] - base + 1u;
    while (len > 1) {
        unsigned half = len >> 1;
        base += B->starts[base + half] <= L ? half : 0;
        len -= half;
    }
    return (int)base;
}

static inline unsigned parity64(uint64_t x)
{
    x ^= x >> 32, x ^= x >> 16, x ^= x >> 8, x ^= x >> 4;
    return (0x6996u >> (x & 15)) & 1u;
}

#define BATCH 64

/* Valid indices (< ball points) idx[0..n), n <= BATCH: first every block's
 * class and split into its arrangement problems (no data-dependent branch,
 * so consecutive blocks overlap), queued by kind count and parity; then the
 * problems, one queue at a time (one well-predicted call per queue). */
static void decode_batch(const uint64_t *idx, size_t n, const ball_index *B, int16_t *cls, uint8_t *codes)
{
    prob pr[2 * BATCH];
    uint8_t qid[2 * BATCH], ord[2 * BATCH];
    unsigned np = 0, nq[10] = { 0 }, at[11] = { 0 };
    memset(codes, 0, 24 * n);
    for (size_t b = 0; b < n; b++) {
        const unsigned live = idx[b] != 0;
        uint64_t L = idx[b] - live; /* the origin: class 0's first point, queued nowhere */
        const int c = find_class(L, B);
        const dclass *t = &g_c[c];
        L -= t->start;
        const uint64_t rsf = L & ((1ull << t->nfree) - 1);
        L >>= t->nfree;
        const uint64_t rsw = L & ((1ull << t->nsw) - 1);
        L >>= t->nsw;
        const uint64_t qq = div_by(L, t->a_off, t->m_off), roff = L - qq * t->a_off;
        const uint64_t g = div_by(qq, t->a_on, t->m_on), ron = qq - g * t->a_on;
        const uint32_t cw = t->words[g];
        const uint64_t smask = rsw | (uint64_t)((t->p_req ^ parity64(rsw)) & 1u) << t->nsw;
        const uint64_t odd = 0 - (uint64_t)(t->all != 0);
        cls[b] = (int16_t)(live ? c : -1);
        uint8_t *out = codes + 24 * b;
        pr[np] = (prob){ ron, t->a_on, (cw & odd) | (smask & ~odd), &g_k[c][0], out, cw | t->all, t->left_on };
        qid[np] = t->kon;
        np += live & (t->left_on != 0);
        pr[np] = (prob){ roff, t->a_off, rsf, &g_k[c][1], out, ~cw & 0xFFFFFFu, t->left_off };
        qid[np] = t->koff;
        np += live & (t->left_off != 0);
    }
    /* the problems in queue order */
    for (unsigned i = 0; i < np; i++) nq[qid[i]]++;
    for (int j = 0; j < 10; j++) at[j + 1] = at[j] + nq[j];
    for (unsigned i = 0; i < np; i++) ord[at[qid[i]]++] = (uint8_t)i;
    const uint8_t *o = ord;
    arr_codes_1(pr, o, nq[0]), o += nq[0];
    arr_codes_2(pr, o, nq[1]), o += nq[1];
    arr_codes_3(pr, o, nq[2]), o += nq[2];
    arr_codes_4(pr, o, nq[3]), o += nq[3];
    arr_codes_5(pr, o, nq[4]), o += nq[4];
    arr_codes_odd_1(pr, o, nq[5]), o += nq[5];
    arr_codes_odd_2(pr, o, nq[6]), o += nq[6];
    arr_codes_odd_3(pr, o, nq[7]), o += nq[7];
    arr_codes_odd_4(pr, o, nq[8]), o += nq[8];
    arr_codes_odd_5(pr, o, nq[9]);
}

int lr_leech_unrank_codes(const uint64_t *idx, size_t n, int max_shell, int16_t *cls, uint8_t *codes)
{
    int nclass = 0, rc = ready(max_shell, &nclass);
    if (rc) return rc;
    const uint64_t np = lr_leech_ball_points(max_shell);
    const ball_index *B = &g_ball[nclass != LR_LEECH_NCLASS12];
    for (size_t k0 = 0; k0 < n; k0 += BATCH) {
        size_t nb = n - k0 < BATCH ? n - k0 : BATCH;
        for (size_t k = k0; k < k0 + nb; k++)
            if (idx[k] >= np) {
                decode_batch(idx + k0, k - k0, B, cls + k0, codes + 24 * k0);
                return LR_FAIL(LR_ERANGE, "leech: block %zu: index %llu outside L24(%d) (%llu points)", k,
                               (unsigned long long)idx[k], max_shell, (unsigned long long)np);
            }
        decode_batch(idx + k0, nb, B, cls + k0, codes + 24 * k0);
    }
    return LR_OK;
}

int lr_leech_unrank_codes_ref(const uint64_t *idx, size_t n, int max_shell, int16_t *cls, uint8_t *codes)
{
    const lr_leech_class *pub;
    int nc, rc = lr_leech_classes(max_shell, &pub, &nc);
    if (rc) return rc;
    for (size_t k = 0; k < n; k++) {
        int8_t x[24];
        int c;
        if ((rc = lr_leech_unrank(idx[k], max_shell, x)) || (rc = lr_leech_index_class(idx[k], max_shell, &c)))
            return lr_wrap(rc, "leech codes: block %zu", k);
        cls[k] = (int16_t)c;
        for (int i = 0; i < 24; i++) {
            int a = x[i] < 0 ? -x[i] : x[i], l = 0;
            if (c >= 0) l = level_of(&pub[c], (unsigned)a);
            if (l < 0) return LR_FAIL(LR_EINVAL, "leech codes: block %zu: |x[%d]| = %d not in class %d", k, i, a, c);
            codes[24 * k + i] = (uint8_t)(l | (x[i] < 0) << 3);
        }
    }
    return LR_OK;
}
