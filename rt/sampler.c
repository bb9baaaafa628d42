/* Token sampling (rt/sampler.h). Weights are exp((logit - max) / T) in f64;
 * candidates are ordered by weight, then by id, so ties never depend on a
 * sort's whims. Top-k keeps a min-heap of the k largest logits (O(vocab log
 * k), weights for those k only);
 * top-p alone first drops every token below (1 - p) / (n - 1) of the mass:
 * all of those together weigh less than 1 - p, so the nucleus never reaches
 * them, and only the few survivors are sorted. */
#include "rt/sampler.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>

struct lr_cand {
    double w;
    int32_t id;
};

/* An infinite temperature makes (-inf - max) / T a NaN weight; a negative
 * temperature, top-k or top-p, or a top-p past 1, means nothing (they were
 * once read as greedy or off without a word). */
static int valid(const lr_sampler_params *p)
{
    return isfinite(p->temperature) && p->temperature >= 0 && p->top_k >= 0 && p->top_p >= 0 && p->top_p <= 1;
}

int lr_sampler_init(lr_sampler *s, int vocab, const lr_sampler_params *p, uint64_t seed)
{
    s->cand = NULL;
    if (vocab < 1) return LR_FAIL(LR_EINVAL, "sampler: vocabulary of %d tokens", vocab);
    if (!valid(p)) return LR_FAIL(LR_EINVAL, "sampler: temperature %g, top-k %d, top-p %g: expected a finite temperature >= 0, "
                                          "top-k >= 0, top-p in [0, 1]", (double)p->temperature, p->top_k, (double)p->top_p);
    s->p = *p;
    s->vocab = vocab;
    lr_rng_seed(&s->rng, seed);
    s->cand = malloc((size_t)vocab * sizeof *s->cand);
    if (!s->cand) return LR_FAIL(LR_ENOMEM, "sampler: out of memory");
    return LR_OK;
}

void lr_sampler_free(lr_sampler *s)
{
    free(s->cand);
    s->cand = NULL;
}

int lr_sampler_set(lr_sampler *s, const lr_sampler_params *p)
{
    if (!valid(p)) return LR_FAIL(LR_EINVAL, "sampler: temperature %g, top-k %d, top-p %g: expected a finite temperature >= 0, "
                                          "top-k >= 0, top-p in [0, 1]", (double)p->temperature, p->top_k, (double)p->top_p);
    s->p = *p;
    return LR_OK;
}

/* The first index of the largest non-NaN value (0 when all are NaN). Two
 * passes: the maximum over eight independent lanes (no loop-carried load:
 * the one-pass form compares against logits[best]), then its first
 * occurrence. NaN never compares greater, so it is skipped. */
int32_t lr_argmax(const float *logits, int n)
{
    float m[8];
    for (int j = 0; j < 8; j++) m[j] = -INFINITY;
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) m[j] = logits[i + j] > m[j] ? logits[i + j] : m[j];
    for (; i < n; i++) m[0] = logits[i] > m[0] ? logits[i] : m[0];
    float mx = m[0];
    for (int j = 1; j < 8; j++) mx = m[j] > mx ? m[j] : mx;
    for (i = 0; i < n; i++)
        if (logits[i] == mx) return i;
    return 0; /* all NaN */
}

/* a ranks before b: heavier, or as heavy with a lower id. */
static int before(const struct lr_cand *a, const struct lr_cand *b)
{
    return a->w > b->w || (a->w == b->w && a->id < b->id);
}

static int cmp_cand(const void *x, const void *y)
{
    const struct lr_cand *a = x, *b = y;
    return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* Min-heap on rank: the root is the worst of the k kept. */
static void sift_down(struct lr_cand *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && before(&h[w], &h[l])) w = l;
        if (r < n && before(&h[w], &h[r])) w = r;
        if (w == i) return;
        struct lr_cand t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void sift_up(struct lr_cand *h, int i)
{
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!before(&h[p], &h[i])) return;
        struct lr_cand t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

/* The kept candidates c[0 .. nc), sorted, weighing `mass`: top-p cut, then
 * one draw. */
static int32_t draw(lr_sampler *s, struct lr_cand *c, int nc, double mass, int use_p)
{
    double p = s->p.top_p;
    if (use_p) {
        double cum = 0;
        int m = 0;
        while (m < nc && cum < p * mass) cum += c[m++].w;
        nc = m > 0 ? m : 1;
    }
    double kept = 0;
    for (int i = 0; i < nc; i++) kept += c[i].w;
    double r = lr_rng_unit(&s->rng) * kept, cum = 0;
    for (int i = 0; i < nc; i++) {
        cum += c[i].w;
        if (r < cum) return c[i].id;
    }
    for (int i = nc - 1; i >= 0; i--) /* rounding at the very end: the last with weight */
        if (c[i].w > 0) return c[i].id;
    return c[0].id;
}

/* Top-k: the k largest logits (ties: lower id) through a min-heap on the
 * logit itself, so the vocabulary costs one compare per token and only
 * the k kept get an exp (weighting all of them first took ~1 ms per token
 * for a 152k vocabulary on one core). exp is monotonic, so these are the k
 * heaviest; two different logits whose weights round to one double rank by
 * logit here, by id before (a tie no draw can tell apart in weight). */
static int32_t sample_top_k(lr_sampler *s, const float *logits)
{
    int n = s->vocab, k = s->p.top_k, nc = 0;
    double T = s->p.temperature;
    struct lr_cand *c = s->cand; /* w holds the logit while selecting */
    for (int i = 0; i < n; i++) {
        float l = logits[i];
        if (isnan(l)) continue; /* weight 0: never drawn */
        struct lr_cand x = { l, i };
        if (nc < k) {
            c[nc] = x;
            sift_up(c, nc++);
        } else if (l > c[0].w) { /* equal logits: the kept one has the lower id */
            c[0] = x;
            sift_down(c, nc, 0);
        }
    }
    if (nc == 0) return 0; /* all NaN */
    double mx = c[0].w;    /* the largest logit is among the kept */
    for (int i = 1; i < nc; i++) mx = c[i].w > mx ? c[i].w : mx;
    double mass = 0;
    for (int i = 0; i < nc; i++) {
        c[i].w = c[i].w == mx ? 1 : exp((c[i].w - mx) / T);
        mass += c[i].w;
    }
    qsort(c, (size_t)nc, sizeof *c, cmp_cand);
    double p = s->p.top_p;
    return draw(s, c, nc, mass, p > 0 && p < 1);
}

int lr_sampler_is_greedy(const lr_sampler *s) { return s->p.temperature <= 0 || s->p.top_k == 1; }

int32_t lr_sampler_sample(lr_sampler *s, const float *logits)
{
    int n = s->vocab, k = s->p.top_k;
    double T = s->p.temperature, p = s->p.top_p;
    if (lr_sampler_is_greedy(s)) return lr_argmax(logits, n);
    int use_k = k > 0 && k < n, use_p = p > 0 && p < 1;
    if (use_k) return sample_top_k(s, logits);
    float mx = logits[lr_argmax(logits, n)];
    if (isnan(mx)) return 0;
    /* every token weighted: the mass the nucleus is a share of */
    struct lr_cand *c = s->cand;
    double total = 0;
    int nc = 0;
    for (int i = 0; i < n; i++) {
        double w = isnan(logits[i]) ? 0 : logits[i] == mx ? 1 : exp(((double)logits[i] - mx) / T);
        total += w;
        c[nc++] = (struct lr_cand){ w, i };
    }
    double mass = total;
    if (use_p && n > 1) {
        /* at most the largest weight (1): with a flat distribution and a small p
           the bound passes it, and nothing would be kept (the draw then fell back
           to token 0); capped, the largest stays and the argument above holds */
        double cut = (1 - p) / (n - 1) * total;
        if (cut > 1) cut = 1;
        int m = 0;
        for (int i = 0; i < nc; i++)
            if (c[i].w >= cut) c[m++] = c[i];
        nc = m;
    }
    if (use_p) qsort(c, (size_t)nc, sizeof *c, cmp_cand);
    return draw(s, c, nc, mass, use_p);
}
