/* Exact nearest point of the ball L24(M), Euclidean and angular.
 *
 * Both reduce to: for every class K (shell m, coset, multiset of |values|),
 * the best inner product B(K) = max <x,v> over the class's points; then
 * angular maximizes B(K)/sqrt(16 m) and Euclidean maximizes 2 B(K) - 16 m
 * (the origin scores 0). For one class and one Golay codeword the best point
 * has a closed form (nearest_internal.h): sort |x| once per block, walk the
 * positions, give each the next value of one of two descending lists
 * (rearrangement inequality), fix the sign parity of even classes by
 * flipping the smallest word term. The codeword enters only through which
 * positions sit on list 1, so the search is a tree over codewords built bit
 * by bit in |x|-descending order (the code in reduced echelon form on the
 * sorted positions: branch at the 12 pivots, forced bits elsewhere), with an
 * exact prefix and an admissible bound for the suffix (nearest_tree_impl.h).
 *
 * Per block (what the hot loop costs and why), measured on unit Gaussian
 * blocks, angular, one AMD EPYC (Zen 4) core, AVX-512 build: ~25 us/block,
 * 39,000 blocks per CPU second (the published exact encoder: 1,470); the
 * Euclidean search: 61,000 (tools/leech_encode_bench, CSV in
 * bench/results/leech_codec_cpu.csv). Where the time goes (perf):
 *   1. sort |x| (rank counting, 576 branch-free compares) and put the Golay
 *      basis in reduced echelon form on the sorted positions (12 rows of 24
 *      bits): ~5%. In 83% of blocks the 12 largest |x| are independent
 *      positions (the pivots); the 12 smallest are then forced bits.
 *   2. the unconstrained bound of every class (sorted |x| against its sorted
 *      |values|: no codeword, no signs): 24 FMAs per 16 classes (2%), then
 *      the class loop (10%): a class whose bound cannot beat the best so far
 *      is never searched. Angular starts from 0.95 x the largest bound
 *      (aspiration, see run_classes): that cuts the tree from ~2,200 to
 *      ~1,420 nodes per block; the optimum lies at 0.97-1.0 of it.
 *   3. the surviving classes (~30 of 301), best bound first, in chunks of 16
 *      classes of one coset, one class per float lane (2.95 chunks per block
 *      angular, 1.95 Euclidean): a DP table of the suffix bound R[d][ip]
 *      (300 vector FMA+max per chunk, 7%), then the tree (70%). The 16
 *      lanes share the tree: the state (depth, list-1 count, codeword
 *      prefix) is the same for every class of a coset. A node costs two
 *      FMAs for the children's exact prefixes, two bound loads and compares
 *      into lane masks, and a data-dependent branch: ~33 cycles with the
 *      mispredictions. ~1,000 internal nodes (growing ~1.4x per level to
 *      depth 11) and ~330 leaves, whose forced 12-position suffix is walked
 *      with branch-free row selection before the few surviving lanes are
 *      re-checked exactly in double (2%).
 * Why not 4096 codewords x classes: ~1.2M closed forms per block (the
 * reference, nearest_ref.c, does a pruned version of that in milliseconds).
 * The tree is small because the exact prefix on the largest |x| decides
 * almost everything: a wrong bit at the top costs more than any suffix can
 * return, and the suffix bound R is tight on the small |x|. With oracle
 * knowledge of the optimum the same bounds would visit ~1,000 nodes: the
 * rest is the price of finding it. The portable build (no AVX-512) runs
 * the same tree at ~8,700 blocks per CPU second.
 *
 * Exactness: bounds are computed in float on x scaled by a power of two,
 * with a slack of 1e-4 * sum|x| (well above the worst float rounding of
 * sums of 24 products) so that no lane is pruned by rounding; the winner is
 * decided on exact double values. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/nearest_internal.h"
#include "util/err.h"

/* ---- tables, once per max_shell ---- */

static lr_nearest_table g_tab[2];
static int g_tab_rc[2];
static pthread_once_t g_once[2] = { PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT };

static void sort_i8_desc(int8_t *v, int n)
{
    for (int i = 1; i < n; i++) {
        int8_t t = v[i];
        int j = i;
        while (j > 0 && v[j - 1] < t) { v[j] = v[j - 1]; j--; }
        v[j] = t;
    }
}

static int build_table(lr_nearest_table *t, int max_shell)
{
    const lr_leech_class *cls;
    int n, rc = lr_leech_classes(max_shell, &cls, &n);
    if (rc) return rc;
    if (n > LR_NEAREST_MAXCLASS) return LR_FAIL(LR_ERANGE, "nearest: %d classes", n);
    memset(t, 0, sizeof *t);
    t->max_shell = max_shell;
    t->n = n;
    for (int id = 0; id < n; id++) {
        const lr_leech_class *c = &cls[id];
        lr_nearest_class *k = &t->cls[id];
        k->id = id;
        k->shell = c->shell;
        k->odd = c->odd;
        k->norm = 16.0 * c->shell;
        k->len = sqrt(k->norm);
        int na = 0;
        int8_t u[24];
        for (int i = 0; i < c->nvals; i++)
            for (int r = 0; r < c->mult[i]; r++) {
                int v = c->vals[i];
                k->all[na] = (int8_t)v;
                if (c->odd) {
                    u[na] = (int8_t)(v % 4 == 1 ? v : -v);
                } else if (v % 4 == 2) {
                    k->one[k->n1++] = (int8_t)v;
                    k->par ^= (v % 8 == 6);
                } else {
                    k->zero[k->n0++] = (int8_t)v;
                    k->par ^= (v % 8 == 4);
                }
                na++;
            }
        if (na != 24) return LR_FAIL(LR_EFORMAT, "nearest: class %d has %d coordinates", id, na);
        sort_i8_desc(k->all, 24);
        if (c->odd) {
            sort_i8_desc(u, 24);
            for (int j = 0; j < 24; j++) {
                k->one[j] = u[j];
                k->zero[j] = (int8_t)-u[23 - j];
            }
            k->n1 = k->n0 = 24;
        } else {
            sort_i8_desc(k->one, k->n1);
            sort_i8_desc(k->zero, k->n0);
            k->w = k->n1;
            if (k->w != c->word_weight)
                return LR_FAIL(LR_EFORMAT, "nearest: class %d word weight %d, values say %d", id, c->word_weight,
                               k->w);
        }
        for (int j = 0; j < 25; j++) {
            t->one_f[id][j] = j < k->n1 ? k->one[j] : -1e30f;
            t->zero_f[id][j] = j < k->n0 ? k->zero[j] : -1e30f;
        }
        for (int q = 0; q < 24; q++) t->all_t[q][id] = k->all[q];
        t->inv_len_f[id] = (float)(1.0 / k->len);
        t->norm_f[id] = (float)k->norm;
    }
    /* A basis of the code: the first 12 independent words. */
    const uint32_t *words = lr_golay_words();
    uint32_t red[24] = { 0 }; /* reduced basis by leading bit */
    int nb = 0;
    for (int i = 0; i < 4096 && nb < 12; i++) {
        uint32_t v = words[i];
        for (int bit = 23; bit >= 0 && v; bit--)
            if (v >> bit & 1) {
                if (!red[bit]) {
                    red[bit] = v;
                    t->gen[nb++] = words[i];
                    break;
                }
                v ^= red[bit];
            }
    }
    if (nb != 12) return LR_FAIL(LR_EFORMAT, "nearest: Golay code of rank %d", nb);
    return LR_OK;
}

static void build12(void) { g_tab_rc[0] = build_table(&g_tab[0], 12); }
static void build13(void) { g_tab_rc[1] = build_table(&g_tab[1], 13); }

int lr_nearest_table_get(int max_shell, const lr_nearest_table **t)
{
    if (max_shell != 12 && max_shell != 13)
        return LR_FAIL(LR_EINVAL, "nearest: max_shell %d (12 or 13)", max_shell);
    int i = max_shell - 12;
    pthread_once(&g_once[i], i ? build13 : build12);
    if (g_tab_rc[i]) return LR_FAIL(g_tab_rc[i], "nearest: class table for L24(%d) failed to build", max_shell);
    *t = &g_tab[i];
    return LR_OK;
}

/* ---- one block ---- */

int lr_nearest_block_init(lr_nearest_block *b, const lr_nearest_table *t, const float x[24])
{
    double ax[24];
    for (int i = 0; i < 24; i++) {
        if (!isfinite(x[i])) return LR_FAIL(LR_EINVAL, "nearest: x[%d] = %g is not finite", i, (double)x[i]);
        ax[i] = fabs((double)x[i]);
    }
    /* Rank counting: stable descending order, no data-dependent branches. */
    for (int i = 0; i < 24; i++) {
        int r = 0;
        for (int j = 0; j < 24; j++) r += (ax[j] > ax[i]) | ((ax[j] == ax[i]) & (j < i));
        b->perm[r] = (uint8_t)i;
    }
    b->neg = 0;
    for (int q = 0; q < 24; q++) {
        b->a[q] = ax[b->perm[q]];
        b->neg |= (uint32_t)(x[b->perm[q]] < 0) << q;
    }
    int e = 0;
    if (b->a[0] > 0) frexp(b->a[0], &e);
    b->scale = ldexp(1.0, 1 - e); /* a[0] * scale in [1, 2) */
    for (int q = 0; q < 24; q++) b->af[q] = (float)(b->a[q] * b->scale);

    /* The basis on the positions, then reduced echelon form by position. */
    uint32_t rows[12] = { 0 };
    for (int q = 0; q < 24; q++) {
        int i = b->perm[q];
        for (int r = 0; r < 12; r++) rows[r] |= (t->gen[r] >> i & 1) << q;
    }
    int np = 0;
    memset(b->pivrow, -1, sizeof b->pivrow);
    b->lastpiv = 0;
    for (int q = 0; q < 24 && np < 12; q++) {
        int r = np;
        while (r < 12 && !(rows[r] >> q & 1)) r++;
        if (r == 12) continue;
        uint32_t p = rows[r];
        rows[r] = rows[np];
        rows[np] = p;
        for (int j = 0; j < 12; j++)
            if (j != np && (rows[j] >> q & 1)) rows[j] ^= p;
        b->pivrow[q] = (int8_t)np;
        b->lastpiv = q;
        np++;
    }
    memcpy(b->rows, rows, sizeof rows);
    return LR_OK;
}

double lr_nearest_value(const lr_nearest_class *k, const lr_nearest_block *b, uint32_t cw)
{
    if (!k->odd && __builtin_popcount(cw) != k->w) return -INFINITY;
    uint32_t on = k->odd ? ~(b->neg ^ cw) : cw;
    double s = 0;
    int i1 = 0, i0 = 0;
    for (int q = 0; q < 24; q++) s += b->a[q] * (on >> q & 1 ? k->one[i1++] : k->zero[i0++]);
    if (!k->odd && k->w && (__builtin_popcount(cw & b->neg) & 1) != k->par)
        s -= 2 * b->a[31 - __builtin_clz(cw)] * k->one[k->w - 1];
    return s;
}

void lr_nearest_point(const lr_nearest_class *k, const lr_nearest_block *b, uint32_t cw, int8_t out[24])
{
    uint32_t on = k->odd ? ~(b->neg ^ cw) : cw;
    int i1 = 0, i0 = 0;
    for (int q = 0; q < 24; q++) {
        int v;
        if (k->odd) {
            /* v = +u off the codeword, -u on it; zero[] holds -u. */
            int u = on >> q & 1 ? k->one[i1++] : -k->zero[i0++];
            v = cw >> q & 1 ? -u : u;
        } else {
            v = on >> q & 1 ? k->one[i1++] : k->zero[i0++];
            if (b->neg >> q & 1) v = -v;
        }
        out[b->perm[q]] = (int8_t)v;
    }
    if (!k->odd && k->w && (__builtin_popcount(cw & b->neg) & 1) != k->par) {
        int q = 31 - __builtin_clz(cw);
        out[b->perm[q]] = (int8_t)-out[b->perm[q]];
    }
}

/* ---- the class loop ---- */

_Thread_local uint64_t lr_nearest_stat_nodes, lr_nearest_stat_chunks, lr_nearest_stat_retries;

/* Angular aspiration: the search starts from a best score of ASPIRATION x
 * the largest class bound instead of nothing, which prunes from the first
 * node on. Exact either way: anything above the start is found, and if
 * nothing is (never seen on Gaussian blocks, whose optimum sits at 0.97-1.0
 * of the bound), the search runs again from nothing. */
#define ASPIRATION 0.95

typedef struct { float key; int id; } cand;

static void chunk(lr_nearest_search *s, const int *ids, int n)
{
    lr_nearest_tree(s, ids, n);
    lr_nearest_stat_chunks++;
}

/* One pass over the classes whose key (the class bound as a scaled score)
 * can beat s->best: the top 16 of the best key's coset first, then the
 * survivors by key in chunks of one coset. */
static void run_classes(lr_nearest_search *s, const float *key)
{
    const lr_nearest_table *t = s->t;
    cand c[LR_NEAREST_MAXCLASS];
    int nc = 0, first = -1;
    float lim = (float)(s->best * s->b.scale) - 2 * s->slack;
    for (int id = 0; id < t->n; id++) {
        if (!(key[id] > lim)) continue;
        if (first < 0 || key[id] > c[first].key) first = nc;
        c[nc++] = (cand){ key[id], id };
    }
    if (first < 0) return;
    int odd = t->cls[c[first].id].odd, nt = 0, ids[LR_NEAREST_LANES] = { 0 };
    cand top[LR_NEAREST_LANES];
    for (int i = 0; i < nc; i++) {
        if (t->cls[c[i].id].odd != odd) continue;
        if (nt == LR_NEAREST_LANES && !(c[i].key > top[nt - 1].key)) continue;
        int j = nt < LR_NEAREST_LANES ? nt++ : nt - 1;
        while (j > 0 && top[j - 1].key < c[i].key) { top[j] = top[j - 1]; j--; }
        top[j] = c[i];
    }
    for (int i = 0; i < nt; i++) ids[i] = top[i].id;
    chunk(s, ids, nt);

    /* The survivors (not searched, still able to win), sorted. */
    uint8_t done[LR_NEAREST_MAXCLASS] = { 0 };
    for (int i = 0; i < nt; i++) done[ids[i]] = 1;
    lim = (float)(s->best * s->b.scale) - 2 * s->slack;
    int m = 0;
    for (int i = 0; i < nc; i++) {
        if (done[c[i].id] || !(c[i].key > lim)) continue;
        cand v = c[i];
        int j = m++;
        while (j > 0 && c[j - 1].key < v.key) { c[j] = c[j - 1]; j--; }
        c[j] = v;
    }
    nc = m;
    while (nc > 0) {
        lim = (float)(s->best * s->b.scale) - 2 * s->slack;
        odd = t->cls[c[0].id].odd;
        nt = m = 0;
        for (int i = 0; i < nc; i++) {
            if (!(c[i].key > lim)) break; /* sorted: the rest is dead too */
            if (t->cls[c[i].id].odd == odd && nt < LR_NEAREST_LANES) ids[nt++] = c[i].id;
            else c[m++] = c[i];
        }
        nc = m;
        if (nt) chunk(s, ids, nt);
    }
}

int lr_nearest_search_run(const float x[24], int max_shell, int mode, int shell_lo, int shell_hi, int8_t out[24],
                          double *score)
{
    const lr_nearest_table *t;
    int rc = lr_nearest_table_get(max_shell, &t);
    if (rc) return rc;
    if (!x || !out) return LR_FAIL(LR_EINVAL, "nearest: NULL argument");
    lr_nearest_search s;
    s.t = t;
    s.mode = mode;
    s.nodes = 0;
    rc = lr_nearest_block_init(&s.b, t, x);
    if (rc) return rc;
    double base = (mode == LR_NEAREST_EUCLID && shell_lo <= 0) ? 0.0 : -INFINITY;
    s.best = base;
    s.best_cls = -1;
    s.best_cw = 0;
    float sum = 0;
    for (int q = 0; q < 24; q++) sum += s.b.af[q];
    s.slack = 1e-4f * sum + 1e-30f;

    /* Class keys: the unconstrained bound as a score, in scaled units. */
    float u[LR_NEAREST_MAXCLASS] __attribute__((aligned(64)));
    float key[LR_NEAREST_MAXCLASS];
    lr_nearest_class_bounds(t, s.b.af, u);
    float sc = (float)s.b.scale, maxkey = -INFINITY;
    for (int id = 0; id < t->n; id++) {
        float k = mode == LR_NEAREST_ANGULAR ? u[id] * t->inv_len_f[id] : 2 * u[id] - t->norm_f[id] * sc;
        int sh = t->cls[id].shell;
        key[id] = sh < shell_lo || sh > shell_hi ? -INFINITY : k;
        maxkey = key[id] > maxkey ? key[id] : maxkey;
    }
    if (mode == LR_NEAREST_ANGULAR && maxkey > 0) s.best = ASPIRATION * (double)maxkey / s.b.scale;
    run_classes(&s, key);
    if (s.best_cls < 0 && s.best != base) {
        lr_nearest_stat_retries++;
        s.best = base;
        run_classes(&s, key);
    }
    lr_nearest_stat_nodes += s.nodes;

    if (s.best_cls >= 0) {
        lr_nearest_point(&t->cls[s.best_cls], &s.b, s.best_cw, out);
    } else {
        memset(out, 0, 24);
        if (base != 0.0) return LR_FAIL(LR_EINVAL, "nearest: no class in shells %d..%d", shell_lo, shell_hi);
    }
    if (score) *score = s.best;
    return LR_OK;
}

int lr_leech_nearest(const float x[24], int max_shell, int8_t out[24])
{
    return lr_nearest_search_run(x, max_shell, LR_NEAREST_EUCLID, 0, max_shell, out, NULL);
}

int lr_leech_nearest_angular(const float x[24], int max_shell, int8_t out[24])
{
    return lr_nearest_search_run(x, max_shell, LR_NEAREST_ANGULAR, 0, max_shell, out, NULL);
}
