/* Reference nearest point: every class, every codeword of its weight (odd
 * classes: all 4096), the best point of each computed the textbook way in
 * the original coordinates: collect the |x| of the positions, sort them, pair
 * them with the values sorted the same way (rearrangement inequality), fix
 * the sign parity. Independent of the fast path's position walk, tables and
 * tree; slow (milliseconds per block). One shortcut, itself obviously valid:
 * a class whose unconstrained pairing (all 24 |x| against all 24 values, no
 * codeword, no signs) cannot beat the best so far is skipped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/nearest_internal.h"
#include "util/err.h"

typedef struct { double key; int idx; } keyed;

static void sort_desc(keyed *k, int n)
{
    for (int i = 1; i < n; i++) {
        keyed t = k[i];
        int j = i;
        while (j > 0 && k[j - 1].key < t.key) { k[j] = k[j - 1]; j--; }
        k[j] = t;
    }
}

static void sort_int_desc(int *v, int n)
{
    for (int i = 1; i < n; i++) {
        int t = v[i], j = i;
        while (j > 0 && v[j - 1] < t) { v[j] = v[j - 1]; j--; }
        v[j] = t;
    }
}

/* The class's |values| expanded: word (= 2 mod 4) and free (= 0 mod 4). */
typedef struct {
    int odd, w, par, shell;
    int word[24], free_[24], u[24]; /* descending */
    int nword, nfree;
} expanded;

static void expand(const lr_leech_class *c, expanded *e)
{
    memset(e, 0, sizeof *e);
    e->odd = c->odd;
    e->shell = c->shell;
    int n = 0;
    for (int i = 0; i < c->nvals; i++)
        for (int r = 0; r < c->mult[i]; r++) {
            int v = c->vals[i];
            if (c->odd) {
                e->u[n++] = (v % 4 == 1) ? v : -v;
            } else if (v % 4 == 2) {
                e->word[e->nword++] = v;
                if (v % 8 == 6) e->par ^= 1;
            } else {
                e->free_[e->nfree++] = v;
                if (v % 8 == 4) e->par ^= 1;
            }
        }
    e->w = e->nword;
    sort_int_desc(e->word, e->nword);
    sort_int_desc(e->free_, e->nfree);
    sort_int_desc(e->u, n);
}

/* Best <x,v> over the points of an even class on codeword cw. */
static double even_on_word(const float *x, const expanded *e, uint32_t cw, int8_t *pt)
{
    keyed on[24], off[24];
    int non = 0, noff = 0, neg = 0;
    for (int i = 0; i < 24; i++) {
        keyed k = { fabs((double)x[i]), i };
        if (cw >> i & 1) {
            on[non++] = k;
            neg += x[i] < 0;
        } else {
            off[noff++] = k;
        }
    }
    sort_desc(on, non);
    sort_desc(off, noff);
    double s = 0;
    for (int j = 0; j < non; j++) {
        s += on[j].key * e->word[j];
        if (pt) pt[on[j].idx] = (int8_t)(x[on[j].idx] < 0 ? -e->word[j] : e->word[j]);
    }
    for (int j = 0; j < noff; j++) {
        s += off[j].key * e->free_[j];
        if (pt) pt[off[j].idx] = (int8_t)(x[off[j].idx] < 0 ? -e->free_[j] : e->free_[j]);
    }
    if (non && (neg & 1) != e->par) {
        /* Flip one word sign: cheapest on the smallest |x| (which holds the
         * smallest word value). */
        s -= 2 * on[non - 1].key * e->word[non - 1];
        if (pt) pt[on[non - 1].idx] = (int8_t)-pt[on[non - 1].idx];
    }
    return s;
}

/* Best <x,v> over the points of an odd class on codeword cw: v = eps * u with
 * eps = -1 on the codeword; <x,v> = <eps x, u>, sorted pairing. */
static double odd_on_word(const float *x, const expanded *e, uint32_t cw, int8_t *pt)
{
    keyed y[24];
    for (int i = 0; i < 24; i++) y[i] = (keyed){ (cw >> i & 1) ? -(double)x[i] : (double)x[i], i };
    sort_desc(y, 24);
    double s = 0;
    for (int j = 0; j < 24; j++) {
        s += y[j].key * e->u[j];
        if (pt) pt[y[j].idx] = (int8_t)((cw >> y[j].idx & 1) ? -e->u[j] : e->u[j]);
    }
    return s;
}

static void words_of(const expanded *e, const uint32_t **words, int *n)
{
    const uint32_t *all = lr_golay_words();
    if (e->odd) {
        *words = all;
        *n = 4096;
        return;
    }
    int start = lr_golay_bucket_start(e->w, n);
    *words = all + start;
}

double lr_leech_class_best_ref(const float x[24], const lr_leech_class *c, int8_t out[24])
{
    expanded e;
    expand(c, &e);
    const uint32_t *words;
    int nw;
    words_of(&e, &words, &nw);
    double best = -INFINITY;
    uint32_t bw = 0;
    for (int i = 0; i < nw; i++) {
        double s = e.odd ? odd_on_word(x, &e, words[i], NULL) : even_on_word(x, &e, words[i], NULL);
        if (s > best) { best = s; bw = words[i]; }
    }
    if (out) {
        if (e.odd) odd_on_word(x, &e, bw, out);
        else even_on_word(x, &e, bw, out);
    }
    return best;
}

static double score_of(int mode, double ip, int shell)
{
    double norm = 16.0 * shell;
    return mode == LR_NEAREST_ANGULAR ? ip / sqrt(norm) : 2 * ip - norm;
}

static int by_key_desc(const void *pa, const void *pb)
{
    double a = ((const keyed *)pa)->key, b = ((const keyed *)pb)->key;
    return a > b ? -1 : a < b;
}

int lr_leech_nearest_ref(const float x[24], int max_shell, int mode, int shell_lo, int shell_hi, int8_t out[24],
                         double *score)
{
    const lr_leech_class *cls;
    int n, rc = lr_leech_classes(max_shell, &cls, &n);
    if (rc) return rc;
    for (int i = 0; i < 24; i++)
        if (!isfinite(x[i])) return LR_FAIL(LR_EINVAL, "nearest_ref: x[%d] is not finite", i);
    /* Unconstrained bound per class: |x| descending against |values| descending. */
    double ax[24];
    for (int i = 0; i < 24; i++) ax[i] = fabs((double)x[i]);
    for (int i = 1; i < 24; i++) {
        double t = ax[i];
        int j = i;
        while (j > 0 && ax[j - 1] < t) { ax[j] = ax[j - 1]; j--; }
        ax[j] = t;
    }
    keyed *order = malloc(sizeof *order * (size_t)n);
    if (!order) return LR_FAIL(LR_ENOMEM, "nearest_ref: %d classes", n);
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (cls[k].shell < shell_lo || cls[k].shell > shell_hi) continue;
        int vals[24], nv = 0;
        for (int i = cls[k].nvals - 1; i >= 0; i--)
            for (int r = 0; r < cls[k].mult[i]; r++) vals[nv++] = cls[k].vals[i];
        double u = 0;
        for (int q = 0; q < 24; q++) u += ax[q] * vals[q];
        order[m++] = (keyed){ score_of(mode, u, cls[k].shell), k };
    }
    qsort(order, (size_t)m, sizeof *order, by_key_desc);

    double best = -INFINITY;
    int best_k = -1;
    if (mode == LR_NEAREST_EUCLID && shell_lo <= 0) best = 0; /* the origin */
    for (int i = 0; i < m; i++) {
        if (!(order[i].key > best)) break;
        int k = order[i].idx;
        double s = score_of(mode, lr_leech_class_best_ref(x, &cls[k], NULL), cls[k].shell);
        if (s > best) { best = s; best_k = k; }
    }
    free(order);
    if (best_k < 0) {
        memset(out, 0, 24);
        if (mode == LR_NEAREST_ANGULAR || shell_lo > 0)
            return LR_FAIL(LR_EINVAL, "nearest_ref: no class in shells %d..%d", shell_lo, shell_hi);
    } else {
        lr_leech_class_best_ref(x, &cls[best_k], out);
    }
    if (score) *score = best;
    return LR_OK;
}
