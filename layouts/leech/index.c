/* Index <-> point for the ball L24(M), M = 12 or 13, in the published
 * numbering ("format v1", docs/leech-index.md):
 *   idx 0 = origin; otherwise idx = 1 + start(class) + local, with
 *   even: local = ((((g*A_on + r_on)*A_off + r_off) << (w-1)) | r_sw) << f | r_sf
 *   odd:  local = g*M + r
 * g the codeword rank (even: inside its weight bucket; odd: of all 4096),
 * r_on / r_off / r the lexicographic ranks of the multiset arrangements
 * (positions ascending, kinds by |value| descending, zeros last), r_sw the
 * signs of the first w-1 support coordinates (bit j = support slot j,
 * 1 = negative; the last sign follows from the parity), r_sf the signs of the
 * f nonzero off-support coordinates in position order.
 *
 * Speed: an arrangement is (un)ranked slot by slot with the count M of the
 * arrangements of what is left: those starting with kind j number M*c_j/n,
 * an exact quotient, done as a shift and a multiply by the inverse of the odd
 * part of n mod 2^64 (no divide, no factorial, no u128). Unrank picks the
 * kind without data-dependent branches and writes the point directly (see
 * ms_unrank_k); the class of an index is a branch-free binary search. The
 * reference these fast paths are checked against is the brute-force
 * enumeration of shells 0..3 in leech_index_test.c and the published
 * format's fingerprint (docs/leech-index.md). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/leech_tab.h"
#include "util/err.h"

static const lr_leech_ctab *g_tab;
static const uint32_t *g_words;
static uint64_t g_starts[512]; /* class starts, padded with UINT64_MAX */
static uint64_t g_inv[25];     /* inverse of the odd part of n, mod 2^64 */
static uint8_t g_tz[25];       /* trailing zero bits of n */
static uint64_t g_key_inc[16]; /* class key increment per |value| */
static int g_status = -1;
static char g_err[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void index_init(void)
{
    g_status = lr_leech_tab(&g_tab, NULL);
    if (g_status) {
        snprintf(g_err, sizeof g_err, "%s", lr_errmsg());
        return;
    }
    g_words = lr_golay_words();
    for (int i = 0; i < 512; i++) g_starts[i] = i < LR_LEECH_NCLASS13 ? g_tab[i].start : UINT64_MAX;
    for (unsigned a = 0; a < 16; a++) g_key_inc[a] = lr_leech_class_key_add(0, a);
    for (int n = 1; n <= 24; n++) {
        int tz = __builtin_ctz((unsigned)n);
        uint64_t o = (uint64_t)(n >> tz), inv = o; /* Newton: each step doubles the correct bits */
        for (int k = 0; k < 6; k++) inv *= 2 - o * inv;
        g_inv[n] = inv, g_tz[n] = (uint8_t)tz;
    }
}

/* |v| for an int8 of the ball (|v| <= 14 once the norm is checked), no branch */
static inline unsigned abs8(int8_t v)
{
    int m = v >> 7;
    return (unsigned)((v ^ m) - m);
}

static inline uint64_t exact_div(uint64_t x, int n) { return (x >> g_tz[n]) * g_inv[n]; }

static int ready(int max_shell, int *nclass)
{
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "leech: max_shell %d (12 or 13)", max_shell);
    pthread_once(&g_once, index_init);
    if (g_status) return LR_FAIL(g_status, "%s", g_err);
    *nclass = max_shell == 12 ? LR_LEECH_NCLASS12 : LR_LEECH_NCLASS13;
    return LR_OK;
}

/* Unranking an arrangement of the multiset cnt[0..nk) (kind j has |value|
 * val[j]) over `left` slots, straight into the point.
 * At a slot with `left` slots to go, kind j takes the ranks
 * [M*C(j-1)/left, M*C(j)/left), C the cumulative counts. Scaled by `left`:
 * with R = r*left and T(j) = M*C(j), the kind is the number of T(j) <= R, and
 * the next rank and count are (R - T(pick-1))/left and M*cnt(pick)/left,
 * two independent exact divisions. No branch depends on the data (typical
 * classes such as 1^12 3^9 5^2 7^1 carry ~36 bits of arrangement, which a
 * branchy search pays in mispredictions: ~22% slower measured); nk is a
 * compile-time constant in each specialization so C stays in registers.
 * The loop stops once only the last kind is left (zeros: nothing to write).
 * Slot s is the s-th lowest bit of `pos`; each nonzero value takes the next
 * bit of `signs` (1 = negative), XORed with flip[j] (odd classes: signs = the
 * codeword bits, and flip marks the values that are positive on it). */
static const uint8_t k_noflip[8];

/* v or -v without a branch (neg is 0 or 1) */
static inline int8_t signed_val(unsigned v, unsigned neg) { return (int8_t)((v ^ (0u - neg)) + neg); }

static inline __attribute__((always_inline)) void ms_unrank_k(const int nk, uint64_t r, uint64_t M, const uint8_t *cnt,
                                                              int left, uint32_t pos, uint64_t signs,
                                                              const uint8_t *val, const uint8_t *flip, int8_t *x)
{
    uint64_t C[8];
    uint8_t left_of[8]; /* items of each kind still to place */
    unsigned c = 0;
    memcpy(left_of, cnt, sizeof left_of);
#pragma GCC unroll 8
    for (int j = 0; j < nk - 1; j++) C[j] = c += cnt[j];
    while (nk > 1 && C[nk - 2]) {
        const uint64_t R = r * (uint64_t)left;
        uint64_t lo = 0;
        unsigned pick = 0;
        /* selects as masks: the compiler must not turn them into branches */
#pragma GCC unroll 8
        for (int j = 0; j < nk - 1; j++) {
            uint64_t T = M * C[j], ge = R >= T;
            pick += (unsigned)ge;
            lo ^= (lo ^ T) & (0 - ge);
        }
        r = exact_div(R - lo, left);
        M = exact_div(M * left_of[pick], left);
        left_of[pick]--;
#pragma GCC unroll 8
        for (int j = 0; j < nk - 1; j++) C[j] -= (unsigned)j >= pick;
        left--;
        unsigned v = val[pick], nz = v != 0;
        x[__builtin_ctz(pos)] = signed_val(v, ((unsigned)signs ^ flip[pick]) & nz);
        signs >>= nz;
        pos &= pos - 1;
    }
    const unsigned vl = val[nk - 1], fl = flip[nk - 1];
    if (vl) /* the rest is the last kind (zeros are already there) */
        for (; pos; pos &= pos - 1, signs >>= 1) x[__builtin_ctz(pos)] = signed_val(vl, ((unsigned)signs ^ fl) & 1u);
}

#define MS_UNRANK_SPECIAL(NK)                                                                                       \
    static void ms_unrank_##NK(uint64_t r, uint64_t M, const uint8_t *cnt, int left, uint32_t pos, uint64_t signs,  \
                               const uint8_t *val, const uint8_t *flip, int8_t *x)                                  \
    {                                                                                                               \
        ms_unrank_k(NK, r, M, cnt, left, pos, signs, val, flip, x);                                                 \
    }
MS_UNRANK_SPECIAL(1)
MS_UNRANK_SPECIAL(2)
MS_UNRANK_SPECIAL(3)
MS_UNRANK_SPECIAL(4)
MS_UNRANK_SPECIAL(5)

static inline void ms_unrank(uint64_t r, uint64_t M, const uint8_t *cnt, int nk, int left, uint32_t pos,
                             uint64_t signs, const uint8_t *val, const uint8_t *flip, int8_t *x)
{
    switch (nk) { /* the class table guarantees 1 <= nk <= 5 */
    case 1: ms_unrank_1(r, M, cnt, left, pos, signs, val, flip, x); break;
    case 2: ms_unrank_2(r, M, cnt, left, pos, signs, val, flip, x); break;
    case 3: ms_unrank_3(r, M, cnt, left, pos, signs, val, flip, x); break;
    case 4: ms_unrank_4(r, M, cnt, left, pos, signs, val, flip, x); break;
    default: ms_unrank_5(r, M, cnt, left, pos, signs, val, flip, x); break;
    }
}

/* Rank of the arrangement kind[0..n): at each slot the arrangements that put
 * a smaller kind there number M * (items of smaller kinds left) / left. */
static inline uint64_t ms_rank(const uint8_t *kind, uint64_t M, uint8_t *cnt, int nk, int n)
{
    uint64_t r = 0;
    for (int s = 0; s < n && M > 1; s++) {
        int left = n - s, k = kind[s];
        unsigned before = 0;
        for (int j = 0; j < nk; j++) before += cnt[j] & (0u - (unsigned)(j < k)); /* no branch */
        r += exact_div(M * before, left);
        M = exact_div(M * cnt[k], left);
        cnt[k]--;
    }
    return r;
}

static void unrank_local(const lr_leech_ctab *t, uint64_t L, int8_t x[24])
{
    memset(x, 0, 24);
    if (t->odd) {
        uint64_t g = L / t->a_on, r = L - g * t->a_on;
        ms_unrank(r, t->a_on, t->on_cnt, t->n_on, 24, 0xFFFFFFu, t->words[g], t->on_val, t->on_flip, x);
        return;
    }
    uint64_t rsf = L & ((1ull << t->nfree) - 1);
    L >>= t->nfree;
    uint64_t rsw = L & ((1ull << t->nsw) - 1);
    L >>= t->nsw;
    uint64_t q = L / t->a_off, roff = L - q * t->a_off;
    uint64_t g = q / t->a_on, ron = q - g * t->a_on;
    uint32_t c = t->words[g];
    /* support signs: the free w-1 bits, then the one the parity forces */
    uint64_t smask = rsw | (uint64_t)((t->p_req ^ (unsigned)__builtin_parityll(rsw)) & 1u) << t->nsw;
    if (t->w) ms_unrank(ron, t->a_on, t->on_cnt, t->n_on, t->w, c, smask, t->on_val, k_noflip, x);
    ms_unrank(roff, t->a_off, t->off_cnt, t->n_off, 24 - t->w, ~c & 0xFFFFFFu, rsf, t->off_val, k_noflip, x);
}

static inline int find_class(uint64_t L, int nclass)
{
    const uint64_t *s = g_starts;
    int base = 0, len = nclass;
    while (len > 1) {
        int half = len >> 1;
        base = s[base + half] <= L ? base + half : base;
        len -= half;
    }
    return base;
}

int lr_leech_unrank(uint64_t idx, int max_shell, int8_t x[24])
{
    int nclass = 0, rc = ready(max_shell, &nclass);
    if (rc) return rc;
    if (idx >= lr_leech_ball_points(max_shell))
        return LR_FAIL(LR_ERANGE, "leech: index %llu outside L24(%d) (%llu points)", (unsigned long long)idx,
                       max_shell, (unsigned long long)lr_leech_ball_points(max_shell));
    if (idx == 0) {
        memset(x, 0, 24);
        return LR_OK;
    }
    uint64_t L = idx - 1;
    const lr_leech_ctab *t = &g_tab[find_class(L, nclass)];
    unrank_local(t, L - t->start, x);
    return LR_OK;
}

int lr_leech_index_class(uint64_t idx, int max_shell, int *cls)
{
    int nclass = 0, rc = ready(max_shell, &nclass);
    if (rc) return rc;
    if (idx >= lr_leech_ball_points(max_shell))
        return LR_FAIL(LR_ERANGE, "leech: index %llu outside L24(%d)", (unsigned long long)idx, max_shell);
    *cls = idx ? find_class(idx - 1, nclass) : -1;
    return LR_OK;
}

/* Checks membership and the ball, finds the class. *cls = -1 for the origin. */
typedef struct {
    int cls, gi; /* class, flat Golay position */
    uint32_t word;
} point_info;

static int analyze(const int8_t x[24], int max_shell, int nclass, point_info *pi)
{
    unsigned p = (uint8_t)x[0] & 1u, sum = 0;
    uint32_t word = 0;
    int norm = 0;
    uint64_t key = p ? LR_LEECH_KEY_ODD : 0;
    for (int i = 0; i < 24; i++) {
        unsigned u = (uint8_t)x[i];
        if ((u & 1u) != p) return LR_FAIL(LR_EINVAL, "leech: not a lattice point (mixed parity at %d)", i);
        word |= (((u - p) >> 1) & 1u) << i;
        sum += u;
        norm += x[i] * x[i];
    }
    if ((sum & 7u) != 4u * p) return LR_FAIL(LR_EINVAL, "leech: not a lattice point (sum = %u mod 8)", sum & 7u);
    int gi = lr_golay_index_ready(word);
    if (gi < 0) return LR_FAIL(LR_EINVAL, "leech: not a lattice point (mod-4 pattern %06x not a codeword)", word);
    if (norm > 16 * max_shell)
        return LR_FAIL(LR_EINVAL, "leech: point of norm %d outside the ball L24(%d)", norm, max_shell);
    pi->word = word, pi->gi = gi, pi->cls = -1;
    if (norm == 0) return LR_OK;
    for (int i = 0; i < 24; i++) key += g_key_inc[abs8(x[i])];
    int c = lr_leech_find_class(key);
    if (c < 0 || c >= nclass) /* cannot happen for a lattice point in the ball */
        return LR_FAIL(LR_EINVAL, "leech: lattice point of norm %d in no class", norm);
    pi->cls = c;
    return LR_OK;
}

int lr_leech_class_of(const int8_t x[24], int max_shell, int *cls)
{
    int nclass = 0, rc = ready(max_shell, &nclass);
    if (rc) return rc;
    point_info pi;
    if ((rc = analyze(x, max_shell, nclass, &pi))) return rc;
    *cls = pi.cls;
    return LR_OK;
}

int lr_leech_rank(const int8_t x[24], int max_shell, uint64_t *idx)
{
    int nclass = 0, rc = ready(max_shell, &nclass);
    if (rc) return rc;
    point_info pi;
    if ((rc = analyze(x, max_shell, nclass, &pi))) return rc;
    if (pi.cls < 0) {
        *idx = 0;
        return LR_OK;
    }
    const lr_leech_ctab *t = &g_tab[pi.cls];
    uint8_t cnt[8], on[25], off[25];
    uint64_t local;
    if (t->odd) {
        for (int i = 0; i < 24; i++) on[i] = t->kind_of[abs8(x[i])];
        memcpy(cnt, t->on_cnt, sizeof cnt);
        local = (uint64_t)pi.gi * t->a_on + ms_rank(on, t->a_on, cnt, t->n_on, 24);
    } else {
        /* split into support / off-support slots without branching on the
         * codeword bit: write both cursors, advance one */
        uint64_t g = (uint64_t)(pi.gi - (int)(t->words - g_words)), smask = 0, fmask = 0;
        unsigned jo = 0, jf = 0, fb = 0;
        for (int i = 0; i < 24; i++) {
            unsigned b = (pi.word >> i) & 1u, neg = (uint8_t)x[i] >> 7, a = abs8(x[i]);
            unsigned k = t->kind_of[a], nz = (a != 0) & (b ^ 1u);
            on[jo] = off[jf] = (uint8_t)k;
            smask |= (uint64_t)(neg & b) << jo;
            fmask |= (uint64_t)(neg & nz) << fb;
            jo += b, jf += b ^ 1u, fb += nz;
        }
        memcpy(cnt, t->on_cnt, sizeof cnt);
        uint64_t ron = ms_rank(on, t->a_on, cnt, t->n_on, t->w);
        memcpy(cnt, t->off_cnt, sizeof cnt);
        uint64_t roff = ms_rank(off, t->a_off, cnt, t->n_off, 24 - t->w);
        local = ((g * t->a_on + ron) * t->a_off + roff) << t->nsw;
        local = (local | (smask & ((1ull << t->nsw) - 1))) << t->nfree | fmask;
    }
    *idx = 1 + t->start + local;
    return LR_OK;
}
