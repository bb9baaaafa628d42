#include "util/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double lr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw(lr_progress *p, uint64_t done)
{
    double el = lr_now() - p->t0;
    double frac = p->total ? (double)done / (double)p->total : 1.0;
    if (frac > 1) frac = 1;
    int w = 30, fill = (int)(frac * w);
    char bar[64];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
    bar[w] = 0;
    double eta = frac > 0 ? el / frac - el : 0;
    fprintf(stderr, "\r%-16s [%s] %5.1f%%  %6.1fs  eta %5.1fs", p->label, bar, 100 * frac, el, eta);
    fflush(stderr);
}

void lr_progress_start(lr_progress *p, const char *label, uint64_t total)
{
    p->label = label;
    p->total = total;
    p->done = 0;
    p->t0 = lr_now();
    p->last_draw = 0;
    p->enabled = isatty(2);
}

void lr_progress_add(lr_progress *p, uint64_t n)
{
    uint64_t d = __atomic_add_fetch(&p->done, n, __ATOMIC_RELAXED);
    if (!p->enabled) return;
    double t = lr_now();
    /* Redraw at most 10 times a second; a racing redraw is harmless. */
    if (t - p->last_draw < 0.1) return;
    p->last_draw = t;
    draw(p, d);
}

void lr_progress_finish(lr_progress *p)
{
    if (!p->enabled) return;
    draw(p, p->total);
    fputc('\n', stderr);
}
