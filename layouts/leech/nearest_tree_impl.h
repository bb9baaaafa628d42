/* The body of the chunk search, included twice by nearest_tree.c with
 * FN(name), FN_ATTR, VEC and the v_* lane operations defined (portable C and
 * AVX-512). Not a header of its own.
 *
 * The tree: positions q = 0..23 in |x|-descending order; the Golay basis is
 * in reduced echelon form on the positions, so a codeword is built by
 * deciding its bit at each pivot (branch) while every other bit is forced by
 * the pivots before it. At depth d the first d positions are decided, and for
 * every lane (class) the inner product they contribute is exact (pre): the
 * positions on list 1 so far took the top ip values of one[], the others the
 * top d - ip of zero[]. The rest is bounded by R[d][ip], the best the class
 * can do on positions d..23 with the two lists' remainders if every later
 * position could choose its list freely (a small DP per block and chunk).
 * A lane dies when pre + R cannot beat its threshold (the best score so far
 * turned into an inner product for its class, minus the float slack); a node
 * dies with its last lane. After the last pivot the codeword is complete: the
 * remaining positions are walked, and lanes still above threshold are
 * re-evaluated exactly in double (lr_nearest_value) before they may become
 * the best. */

#define TRI(d) ((d) * ((d) + 1) / 2)

typedef struct FN(chunk) {
    /* lists[j]: one[j] for j < 25, zero[j - 25] above: one table, so that
     * the row a position takes is index arithmetic, not a branch */
    float lists[50][LR_NEAREST_LANES] __attribute__((aligned(64)));
    float thr[LR_NEAREST_LANES] __attribute__((aligned(64)));
    float R[TRI(25)][LR_NEAREST_LANES] __attribute__((aligned(64)));
    lr_nearest_search *s;
    const lr_nearest_class *k[LR_NEAREST_LANES];
    int n, odd;
} FN(chunk);

/* thr[l]: the scaled inner product class l must exceed to beat s->best. */
static void FN(set_thr)(FN(chunk) *c)
{
    const lr_nearest_search *s = c->s;
    for (int l = 0; l < LR_NEAREST_LANES; l++) {
        if (l >= c->n) { c->thr[l] = INFINITY; continue; }
        const lr_nearest_class *k = c->k[l];
        double b = s->mode == LR_NEAREST_ANGULAR ? s->best * k->len : 0.5 * (s->best + k->norm);
        c->thr[l] = (float)(b * s->b.scale) - s->slack;
    }
}

FN_ATTR static void FN(leaf)(FN(chunk) *c, int d, uint32_t cw, int ip, VEC pre, uint32_t live)
{
    lr_nearest_search *s = c->s;
    const lr_nearest_block *b = &s->b;
    uint32_t on = c->odd ? ~(b->neg ^ cw) : cw;
    /* The forced suffix: two accumulators, row chosen without a branch. */
    VEC acc = v_set1(0.0f);
    for (; d < 24; d++) {
        int o = on >> d & 1, m = -o;
        int row = (ip & m) | ((25 + d - ip) & ~m);
        if (d & 1) acc = v_fma(v_set1(b->af[d]), v_load(c->lists[row]), acc);
        else pre = v_fma(v_set1(b->af[d]), v_load(c->lists[row]), pre);
        ip += o;
    }
    pre = v_add(pre, acc);
    live &= v_gt(pre, v_load(c->thr));
    int improved = 0;
    while (live) {
        int l = __builtin_ctz(live);
        live &= live - 1;
        const lr_nearest_class *k = c->k[l];
        double v = lr_nearest_value(k, b, cw);
        if (v == -INFINITY) continue;
        double sc = s->mode == LR_NEAREST_ANGULAR ? v / k->len : 2 * v - k->norm;
        if (sc > s->best) {
            s->best = sc;
            s->best_cls = k->id;
            s->best_cw = cw;
            improved = 1;
        }
    }
    if (improved) FN(set_thr)(c);
}

FN_ATTR static void FN(node)(FN(chunk) *c, int d, uint32_t cw, int ip, VEC pre, uint32_t live)
{
    const lr_nearest_block *b = &c->s->b;
    for (;;) {
        c->s->nodes++;
        if (d > b->lastpiv) {
            FN(leaf)(c, d, cw, ip, pre, live);
            return;
        }
        VEC ad = v_set1(b->af[d]);
        int r = b->pivrow[d];
        if (r < 0) { /* forced bit */
            int one = c->odd ? !(((b->neg ^ cw) >> d) & 1) : (int)(cw >> d & 1), m = -one;
            pre = v_fma(ad, v_load(c->lists[(ip & m) | ((25 + d - ip) & ~m)]), pre);
            ip += one;
            d++;
            live &= v_gt(v_add(pre, v_load(c->R[TRI(d) + ip])), v_load(c->thr));
            if (!live) return;
            continue;
        }
        /* Pivot: the child on list 1 and the child off it. For an even
         * class list 1 is the codeword's bit; for an odd class it is the
         * bit that makes the codeword's sign agree with x's. */
        uint32_t cw_one = cw, cw_zero = cw;
        if (c->odd && (b->neg >> d & 1)) cw_one ^= b->rows[r];
        else if (c->odd) cw_zero ^= b->rows[r];
        else cw_one ^= b->rows[r];
        VEC thr = v_load(c->thr);
        VEC p1 = v_fma(ad, v_load(c->lists[ip]), pre);
        VEC p0 = v_fma(ad, v_load(c->lists[25 + d - ip]), pre);
        VEC g1 = v_sub(v_add(p1, v_load(c->R[TRI(d + 1) + ip + 1])), thr);
        VEC g0 = v_sub(v_add(p0, v_load(c->R[TRI(d + 1) + ip])), thr);
        VEC zero = v_set1(0.0f);
        uint32_t m1 = live & v_gt(g1, zero), m0 = live & v_gt(g0, zero);
        if (!m1 && !m0) return;
        d++;
        if (m1 && m0) {
            /* Both alive: first the child the lowest live lane (the chunk's
             * best-bound class still alive) prefers, then the other against
             * the (maybe raised) thresholds. */
            uint32_t pref1 = v_gt(g1, g0);
            if (pref1 >> __builtin_ctz(m1 | m0) & 1) {
                FN(node)(c, d, cw_one, ip + 1, p1, m1);
                m0 &= v_gt(v_add(p0, v_load(c->R[TRI(d) + ip])), v_load(c->thr));
                if (!m0) return;
                cw = cw_zero, pre = p0, live = m0;
            } else {
                FN(node)(c, d, cw_zero, ip, p0, m0);
                m1 &= v_gt(v_add(p1, v_load(c->R[TRI(d) + ip + 1])), v_load(c->thr));
                if (!m1) return;
                cw = cw_one, pre = p1, live = m1, ip++;
            }
        } else if (m1) {
            cw = cw_one, pre = p1, live = m1, ip++;
        } else {
            cw = cw_zero, pre = p0, live = m0;
        }
    }
}

FN_ATTR static void FN(tree)(lr_nearest_search *s, const int *cls, int n)
{
    FN(chunk) c;
    const lr_nearest_table *t = s->t;
    const lr_nearest_block *b = &s->b;
    c.s = s;
    c.n = n;
    c.odd = t->cls[cls[0]].odd;
    for (int l = 0; l < LR_NEAREST_LANES; l++) {
        int k = cls[l < n ? l : 0];
        if (l < n) c.k[l] = &t->cls[k];
        for (int j = 0; j < 25; j++) {
            c.lists[j][l] = t->one_f[k][j];
            c.lists[25 + j][l] = t->zero_f[k][j];
        }
    }
    FN(set_thr)(&c);
    /* R[d][ip]: free-choice optimum of positions d..23 (DP from the end). */
    for (int ip = 0; ip <= 24; ip++) v_store(c.R[TRI(24) + ip], v_set1(0.0f));
    for (int d = 23; d >= 0; d--) {
        VEC ad = v_set1(b->af[d]);
        for (int ip = 0; ip <= d; ip++) {
            VEC x1 = v_fma(ad, v_load(c.lists[ip]), v_load(c.R[TRI(d + 1) + ip + 1]));
            VEC x0 = v_fma(ad, v_load(c.lists[25 + d - ip]), v_load(c.R[TRI(d + 1) + ip]));
            v_store(c.R[TRI(d) + ip], v_max(x1, x0));
        }
    }
    uint32_t live = n >= 32 ? ~0u : (1u << n) - 1;
    live &= v_gt(v_load(c.R[0]), v_load(c.thr));
    if (live) FN(node)(&c, 0, 0, 0, v_set1(0.0f), live);
}

FN_ATTR static void FN(bounds)(const lr_nearest_table *t, const float af[24], float *out)
{
    for (int g = 0; g < LR_NEAREST_MAXCLASS; g += LR_NEAREST_LANES) {
        VEC acc = v_set1(0.0f);
        for (int q = 0; q < 24; q++) acc = v_fma(v_set1(af[q]), v_load(&t->all_t[q][g]), acc);
        v_store(out + g, acc);
    }
}

#undef TRI
