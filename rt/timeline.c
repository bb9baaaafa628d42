#include "rt/timeline.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

void lr_tl_unpack(const uint64_t *raw, size_t n, lr_tl_cta *out)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t *r = raw + LR_TL_WORDS * i;
        out[i] = (lr_tl_cta){ r[0], (uint32_t)r[1], (uint32_t)(r[1] >> 32), (uint32_t)r[2], (uint32_t)(r[2] >> 32),
                              (uint32_t)r[3], (uint32_t)(r[3] >> 32) };
    }
}

uint64_t lr_tl_start(const lr_tl_cta *c, size_t n)
{
    uint64_t t = c[0].t0;
    for (size_t i = 1; i < n; i++)
        if (c[i].t0 < t) t = c[i].t0;
    return t;
}

static int by_mod_entry(const void *a, const void *b)
{
    const lr_tl_cta *x = a, *y = b;
    if (x->mod != y->mod) return x->mod < y->mod ? -1 : 1;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return x->block < y->block ? -1 : x->block > y->block;
}

static int by_entry(const void *a, const void *b)
{
    const lr_tl_launch *x = a, *y = b;
    if (x->entry0 != y->entry0) return x->entry0 < y->entry0 ? -1 : 1;
    return x->mod < y->mod ? -1 : x->mod > y->mod;
}

static int by_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int lr_tl_launches(lr_tl_cta *c, size_t n, lr_tl_launch **out, size_t *nl)
{
    *out = NULL, *nl = 0;
    if (!n) return LR_OK;
    qsort(c, n, sizeof *c, by_mod_entry);
    const uint64_t t_start = lr_tl_start(c, n);
    lr_tl_launch *L = malloc(sizeof *L * n); /* at most one per record */
    double *ex = malloc(sizeof *ex * n);
    unsigned char *seen = NULL;
    size_t cap_seen = 0, k = 0;
    int rc = L && ex ? LR_OK : LR_FAIL(LR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc;) {
        const uint32_t g = c[i].grid, mod = c[i].mod;
        if (!g || i + g > n) {
            rc = LR_FAIL(LR_EINVAL, "timeline: kernel %u has %zu records left, not a launch of %u", mod, n - i, g);
            break;
        }
        if (g > cap_seen) {
            unsigned char *s = realloc(seen, g);
            if (!s) { rc = LR_FAIL(LR_ENOMEM, "out of memory"); break; }
            seen = s, cap_seen = g;
        }
        memset(seen, 0, g);
        lr_tl_launch *l = &L[k];
        memset(l, 0, sizeof *l);
        l->mod = mod, l->grid = g, l->first = i;
        double e0 = 1e300, e1 = -1e300, w = 1e300, x1 = -1e300;
        for (size_t j = i; j < i + g; j++) {
            if (c[j].mod != mod || c[j].grid != g || c[j].block >= g || seen[c[j].block]) {
                rc = LR_FAIL(LR_EINVAL, "timeline: launch %zu of kernel %u lacks or repeats a block (records dropped, or "
                             "launches of one kernel overlapping)", k, mod);
                break;
            }
            seen[c[j].block] = 1;
            const double t = 1e-3 * (double)(c[j].t0 - t_start);
            e0 = t < e0 ? t : e0, e1 = t > e1 ? t : e1;
            if (c[j].dwait != LR_TL_NO_WAIT && t + 1e-3 * c[j].dwait < w) w = t + 1e-3 * c[j].dwait;
            ex[j - i] = t + 1e-3 * c[j].dexit;
            x1 = ex[j - i] > x1 ? ex[j - i] : x1;
        }
        if (rc) break;
        qsort(ex, g, sizeof *ex, by_double);
        l->entry0 = e0, l->entry1 = e1, l->wait = w < 1e299 ? w : e0, l->exit1 = x1;
        l->exit_med = g % 2 ? ex[g / 2] : 0.5 * (ex[g / 2 - 1] + ex[g / 2]);
        for (size_t j = i; j < i + g && w < 1e299; j++) /* (no wait: no CTA is late for it) */
            if (1e-3 * (double)(c[j].t0 - t_start) > l->wait) l->late++;
        k++, i += g;
    }
    free(ex), free(seen);
    if (rc) return free(L), rc;
    qsort(L, k, sizeof *L, by_entry);
    double end = 0;
    for (size_t i = 0; i < k; i++) {
        L[i].exposed = L[i].exit1 > end ? L[i].exit1 - end : 0;
        if (L[i].exit1 > end) end = L[i].exit1;
    }
    *out = L, *nl = k;
    return LR_OK;
}
