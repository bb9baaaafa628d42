/* The coordinate-permutation classes of the ball L24(13) and their exact
 * sizes, laid out in the published index order (docs/leech-index.md).
 *
 * A class is a coset plus a multiset of |values| (norm sum x^2 = 16 m).
 *   even: coordinates = 2 (mod 4) ("word values" 2, 6, 10, 14) sit exactly
 *     on a Golay codeword of weight w; coordinates = 0 (mod 4) ("free
 *     values" 4, 8, 12, and zeros) fill the rest. Flipping a word value moves
 *     sum(x) by 4 (mod 8), a free value by 0, so the minus count on the
 *     support has the fixed parity p_req = (sum of |values| / 4) mod 2; a
 *     w = 0 class needs p_req = 0.
 *       count = gamma(w) * w!/prod(word mult!) * (24-w)!/(n0! prod(free mult!))
 *               * 2^(w-1, or 0 when w = 0) * 2^(nonzero free coordinates)
 *   odd: all coordinates odd; the codeword (positions = 3 mod 4) fixes every
 *     sign, and sum(x) = 4 (mod 8) reduces to "the number of coordinates with
 *     |x| = 1, 7 or 9 (mod 8: +-1) is odd", a property of the class alone.
 *       count = 4096 * 24!/prod(mult!)
 * Enumeration order (the published one, which the index inherits): even
 * classes by (n14, n10, n6, n2, n12, n8, n4) lexicographically ascending, odd
 * classes by (n13, n11, n9, n7, n5, n3) ascending; then grouped by shell
 * ascending, even before odd, stable. Products are formed in unsigned
 * __int128 (24! > 2^64) and every class size is checked to fit in 2^63. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/leech_tab.h"
#include "util/err.h"

#define MAX_NORM (16 * LR_LEECH_MAX_SHELL)
#define KEY_SLOTS 1024

typedef unsigned __int128 u128;

static lr_leech_ctab g_tab[LR_LEECH_NCLASS13];
static lr_leech_class g_pub[LR_LEECH_NCLASS13];
static uint64_t g_keys[KEY_SLOTS];
static int16_t g_key_class[KEY_SLOTS];
static int g_n;
static int g_status = -1;
static char g_err[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static u128 fact(int n)
{
    u128 f = 1;
    for (int i = 2; i <= n; i++) f *= (u128)i;
    return f;
}

/* n! / prod(c_i!) with n = sum c_i. */
static u128 arrangements(const uint8_t *c, int k)
{
    int n = 0;
    for (int i = 0; i < k; i++) n += c[i];
    u128 r = fact(n);
    for (int i = 0; i < k; i++) r /= fact(c[i]);
    return r;
}

static unsigned key_hash(uint64_t key) { return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 54); }

/* A candidate class before the shell grouping. */
typedef struct {
    uint8_t odd, shell, w, p_req;
    uint8_t cnt[16]; /* multiplicity of each |value| 0..15 */
} cand;

static int enumerate(cand *out, int cap)
{
    int n = 0;
    /* even: word values 14, 10, 6, 2; free values 12, 8, 4 */
    for (int n14 = 0; 196 * n14 <= MAX_NORM; n14++)
        for (int n10 = 0; 100 * n10 <= MAX_NORM; n10++)
            for (int n6 = 0; 36 * n6 <= MAX_NORM; n6++)
                for (int n2 = 0; 4 * n2 <= MAX_NORM; n2++) {
                    int w = n14 + n10 + n6 + n2;
                    int base = 196 * n14 + 100 * n10 + 36 * n6 + 4 * n2;
                    if (base > MAX_NORM || w > 24) continue;
                    if (lr_golay_bucket_start(w, NULL) < 0) continue;
                    for (int n12 = 0; base + 144 * n12 <= MAX_NORM; n12++)
                        for (int n8 = 0; base + 144 * n12 + 64 * n8 <= MAX_NORM; n8++)
                            for (int n4 = 0; base + 144 * n12 + 64 * n8 + 16 * n4 <= MAX_NORM; n4++) {
                                int norm = base + 144 * n12 + 64 * n8 + 16 * n4;
                                if (w + n12 + n8 + n4 > 24 || norm % 16) continue;
                                int m = norm / 16;
                                if (m < 2) continue;
                                int s = 14 * n14 + 10 * n10 + 6 * n6 + 2 * n2 + 12 * n12 + 8 * n8 + 4 * n4;
                                int p_req = (s / 4) & 1;
                                if (w == 0 && p_req) continue;
                                if (n == cap) return -1;
                                cand *c = &out[n++];
                                memset(c, 0, sizeof *c);
                                c->shell = (uint8_t)m, c->w = (uint8_t)w, c->p_req = (uint8_t)p_req;
                                c->cnt[14] = (uint8_t)n14, c->cnt[10] = (uint8_t)n10;
                                c->cnt[6] = (uint8_t)n6, c->cnt[2] = (uint8_t)n2;
                                c->cnt[12] = (uint8_t)n12, c->cnt[8] = (uint8_t)n8, c->cnt[4] = (uint8_t)n4;
                                c->cnt[0] = (uint8_t)(24 - w - n12 - n8 - n4);
                            }
                }
    /* odd: values 13, 11, 9, 7, 5, 3 and the rest 1 */
    for (int n13 = 0; 169 * n13 <= MAX_NORM; n13++)
        for (int n11 = 0; 169 * n13 + 121 * n11 <= MAX_NORM; n11++)
            for (int n9 = 0; 169 * n13 + 121 * n11 + 81 * n9 <= MAX_NORM; n9++)
                for (int n7 = 0; 169 * n13 + 121 * n11 + 81 * n9 + 49 * n7 <= MAX_NORM; n7++)
                    for (int n5 = 0; 169 * n13 + 121 * n11 + 81 * n9 + 49 * n7 + 25 * n5 <= MAX_NORM; n5++) {
                        int heavy = n13 + n11 + n9 + n7 + n5;
                        int hnorm = 169 * n13 + 121 * n11 + 81 * n9 + 49 * n7 + 25 * n5;
                        for (int n3 = 0; heavy + n3 <= 24; n3++) {
                            int n1 = 24 - heavy - n3;
                            int norm = hnorm + 9 * n3 + n1;
                            if (norm > MAX_NORM || norm % 16) continue;
                            int m = norm / 16;
                            if (m < 2 || ((n1 + n7 + n9) & 1) == 0) continue;
                            if (n == cap) return -1;
                            cand *c = &out[n++];
                            memset(c, 0, sizeof *c);
                            c->odd = 1, c->shell = (uint8_t)m;
                            c->cnt[13] = (uint8_t)n13, c->cnt[11] = (uint8_t)n11, c->cnt[9] = (uint8_t)n9;
                            c->cnt[7] = (uint8_t)n7, c->cnt[5] = (uint8_t)n5, c->cnt[3] = (uint8_t)n3;
                            c->cnt[1] = (uint8_t)n1;
                        }
                    }
    return n;
}

static int fill(const cand *c, lr_leech_ctab *t, lr_leech_class *pub, uint64_t start)
{
    const uint32_t *words = lr_golay_words();
    memset(t, 0, sizeof *t);
    memset(pub, 0, sizeof *pub);
    memset(t->kind_of, 0xFF, sizeof t->kind_of);
    t->odd = c->odd, t->shell = c->shell, t->w = c->w, t->p_req = c->p_req;
    u128 count;
    if (c->odd) {
        for (int v = 15; v >= 1; v -= 2)
            if (c->cnt[v]) {
                if (t->n_on == 8) return LR_FAIL(LR_EINVAL, "leech class table: too many odd kinds");
                t->kind_of[v] = t->n_on;
                t->on_flip[t->n_on] = (uint8_t)((v >> 1) & 1);
                t->on_val[t->n_on] = (uint8_t)v, t->on_cnt[t->n_on++] = c->cnt[v];
            }
        u128 a = arrangements(t->on_cnt, t->n_on);
        t->a_on = (uint64_t)a, t->a_off = 1;
        t->words = words;
        count = 4096 * a;
    } else {
        int start_w, gamma;
        start_w = lr_golay_bucket_start(c->w, &gamma);
        t->words = words + start_w;
        for (int v = 14; v >= 2; v -= 4)
            if (c->cnt[v]) {
                t->kind_of[v] = t->n_on;
                t->on_val[t->n_on] = (uint8_t)v, t->on_cnt[t->n_on++] = c->cnt[v];
            }
        for (int v = 12; v >= 4; v -= 4)
            if (c->cnt[v]) {
                t->kind_of[v] = t->n_off;
                t->off_val[t->n_off] = (uint8_t)v, t->off_cnt[t->n_off++] = c->cnt[v];
                t->nfree = (uint8_t)(t->nfree + c->cnt[v]);
            }
        /* the zero run is always present as the last kind, even when empty:
         * an empty kind changes no rank */
        t->kind_of[0] = t->n_off;
        t->off_val[t->n_off] = 0, t->off_cnt[t->n_off++] = c->cnt[0];
        t->nsw = (uint8_t)(c->w ? c->w - 1 : 0);
        u128 a_on = arrangements(t->on_cnt, t->n_on), a_off = arrangements(t->off_cnt, t->n_off);
        t->a_on = (uint64_t)a_on, t->a_off = (uint64_t)a_off;
        count = (u128)gamma * a_on * a_off << (t->nsw + t->nfree);
    }
    if (t->n_on > 5 || t->n_off > 4) /* index.c's unrank is specialized for these bounds */
        return LR_FAIL(LR_EINVAL, "leech class table: %d/%d kinds", t->n_on, t->n_off);
    if (count >> 63) return LR_FAIL(LR_EINVAL, "leech class table: class size overflows");
    t->count = (uint64_t)count;
    t->start = start;

    pub->shell = c->shell, pub->odd = c->odd, pub->word_weight = c->odd ? 0 : c->w;
    for (int v = 0; v < 16; v++)
        if (c->cnt[v]) {
            if (pub->nvals == LR_LEECH_MAX_VALS) return LR_FAIL(LR_EINVAL, "leech class table: too many values");
            pub->vals[pub->nvals] = (uint8_t)v, pub->mult[pub->nvals++] = c->cnt[v];
        }
    pub->count = t->count;
    pub->offset = 1 + start;
    return LR_OK;
}

static int build(void)
{
    cand all[512];
    int n = enumerate(all, 512);
    if (n < 0) return LR_FAIL(LR_EINVAL, "leech class table: more than 512 candidate classes");
    uint64_t start = 0;
    int k = 0;
    for (int m = 2; m <= LR_LEECH_MAX_SHELL; m++)
        for (int odd = 0; odd <= 1; odd++)
            for (int i = 0; i < n; i++) {
                if (all[i].shell != m || all[i].odd != odd) continue;
                if (k == LR_LEECH_NCLASS13)
                    return LR_FAIL(LR_EINVAL, "leech class table: more than %d classes", LR_LEECH_NCLASS13);
                int rc = fill(&all[i], &g_tab[k], &g_pub[k], start);
                if (rc) return rc;
                start += g_tab[k++].count;
            }
    if (k != LR_LEECH_NCLASS13 || g_tab[LR_LEECH_NCLASS12].shell != 13 || g_tab[LR_LEECH_NCLASS12 - 1].shell != 12)
        return LR_FAIL(LR_EINVAL, "leech class table: %d classes, expected %d", k, LR_LEECH_NCLASS13);
    if (1 + g_tab[LR_LEECH_NCLASS12].start != LR_LEECH_BALL12_POINTS || 1 + start != LR_LEECH_BALL13_POINTS)
        return LR_FAIL(LR_EINVAL, "leech class table: ball sizes %llu / %llu disagree with the theta series",
                       (unsigned long long)(1 + g_tab[LR_LEECH_NCLASS12].start), (unsigned long long)(1 + start));
    g_n = k;

    memset(g_key_class, 0xFF, sizeof g_key_class);
    for (int c = 0; c < k; c++) {
        uint64_t key = g_tab[c].odd ? LR_LEECH_KEY_ODD : 0;
        for (int j = 0; j < g_pub[c].nvals; j++)
            for (int r = 0; r < g_pub[c].mult[j]; r++) key = lr_leech_class_key_add(key, g_pub[c].vals[j]);
        unsigned h = key_hash(key);
        while (g_key_class[h] >= 0) {
            if (g_keys[h] == key) return LR_FAIL(LR_EINVAL, "leech class table: duplicate class key");
            h = (h + 1) & (KEY_SLOTS - 1);
        }
        g_keys[h] = key, g_key_class[h] = (int16_t)c;
    }
    return LR_OK;
}

static void build_once(void)
{
    g_status = build();
    if (g_status) snprintf(g_err, sizeof g_err, "%s", lr_errmsg());
}

int lr_leech_tab(const lr_leech_ctab **tab, const lr_leech_class **pub)
{
    pthread_once(&g_once, build_once);
    if (g_status) return LR_FAIL(g_status, "%s", g_err);
    if (tab) *tab = g_tab;
    if (pub) *pub = g_pub;
    return LR_OK;
}

int lr_leech_find_class(uint64_t key)
{
    unsigned h = key_hash(key);
    for (;;) {
        int c = g_key_class[h];
        if (c < 0) return -1;
        if (g_keys[h] == key) return c;
        h = (h + 1) & (KEY_SLOTS - 1);
    }
}

int lr_leech_classes(int max_shell, const lr_leech_class **classes, int *n)
{
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "leech: max_shell %d (12 or 13)", max_shell);
    int rc = lr_leech_tab(NULL, classes);
    if (rc) return rc;
    if (n) *n = max_shell == 12 ? LR_LEECH_NCLASS12 : LR_LEECH_NCLASS13;
    return LR_OK;
}

uint64_t lr_leech_ball_points(int max_shell)
{
    if (max_shell == 12) return LR_LEECH_BALL12_POINTS;
    if (max_shell == 13) return LR_LEECH_BALL13_POINTS;
    return 0;
}
