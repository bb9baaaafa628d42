/* plots: the README's pictures, drawn from the CSVs in bench/results/ (like
 * the tables, nothing in them is typed by hand; a test fails if a committed
 * PNG no longer matches its CSVs).
 *   plots [--out DIR] [RESULTS_DIR]     write the PNGs into DIR (default bench/plots)
 *   plots --check DIR [RESULTS_DIR]     exit 1 if a PNG in DIR differs */
#include "util/err.h"
#include "util/png.h"
#include "util/raster.h"
#include "util/read_file.h"
#include "util/results_csv.h"
#include "util/program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 960
#define INK 0x202020u
#define GRID 0xdcdcdcu
#define TARGET 0xc0392bu
#define LEECH 0x2f6fb0u
#define BEST 0x173f6eu
#define CONTROL 0x9a9a9au
#define F16 0xe08a2cu

typedef struct {
    char label[48], value[48];
    double v;
    uint32_t colour;
} bar;

/* Horizontal bars on a fresh canvas: title, source line, one bar per row
 * with its value text, grid lines every `tick`, a red line at `target`. */
static int chart(lr_canvas *c, const char *title, const char *source, const bar *b, int n, double vmax, double tick,
                 const char *unit, double target, const char *target_label)
{
    /* an axis the CSV's values make unplottable (inf, 1e300: the tick loop below never ends) */
    if (!(vmax > 0 && isfinite(vmax) && tick > 0 && vmax / tick <= 1000))
        return LR_FAIL(LR_EFORMAT, "%s: the values give an axis to %g in steps of %g: a non-finite or absurd value in %s",
                       title, vmax, tick, source);
    const int row = 26, top = 64, lw0 = 12;
    int lw = 0;
    for (int i = 0; i < n; i++) {
        int t = lr_canvas_text_width(2, b[i].label);
        if (t > lw) lw = t;
    }
    const int x0 = lw0 + lw + 12, x1 = W - 150, h = top + n * row + 44;
    int rc = lr_canvas_init(c, W, h, 0xffffffu);
    if (rc) return rc;
    lr_canvas_text(c, 12, 10, 2, INK, title);
    lr_canvas_text(c, 12, 36, 1, 0x606060u, source);
    const double sx = (x1 - x0) / vmax;
    for (double t = 0; t <= vmax + 1e-9; t += tick) {
        int x = x0 + (int)lround(t * sx);
        lr_canvas_rect(c, x, top - 4, 1, n * row + 4, GRID);
        char s[32];
        snprintf(s, sizeof s, "%g%s", t, unit);
        lr_canvas_text(c, x - lr_canvas_text_width(1, s) / 2, top + n * row + 6, 1, 0x606060u, s);
    }
    for (int i = 0; i < n; i++) {
        int y = top + i * row, len = (int)lround((b[i].v < vmax ? b[i].v : vmax) * sx);
        lr_canvas_text(c, lw0, y + 4, 2, INK, b[i].label);
        lr_canvas_rect(c, x0, y + 2, len > 0 ? len : 1, row - 6, b[i].colour);
        lr_canvas_text(c, x0 + len + 6, y + 8, 1, INK, b[i].value);
    }
    if (target > 0) {
        int x = x0 + (int)lround(target * sx);
        lr_canvas_rect(c, x, top - 8, 2, n * row + 8, TARGET);
        lr_canvas_text(c, x + 6, top + n * row + 20, 1, TARGET, target_label);
    }
    return LR_OK;
}

static char g_dir[1024] = "bench/results";

static int load(const char *name, lr_rcsv *c) { return lr_rcsv_load_in(g_dir, name, c); }

/* "bench/results/A.csv (device; commits x, y)" */
static void source_line(char *s, size_t n, const char *names, const lr_rcsv *c, int ncsv)
{
    char commits[160] = "";
    int k = 0;
    for (int i = 0; i < ncsv; i++) k = lr_rcsv_commits(&c[i], commits, sizeof commits);
    snprintf(s, n, "Source: %s (%s; commit%s %s)", names, lr_rcsv_get(&c[0], 0, "device"), k > 1 ? "s" : "", commits);
}

static int cmp_bar(const void *a, const void *b)
{
    double d = ((const bar *)b)->v - ((const bar *)a)->v;
    return d > 0 ? 1 : d < 0 ? -1 : strcmp(((const bar *)a)->label, ((const bar *)b)->label);
}

/* Every arm's fused 14B layer under PDL as % of the read bound measured in
 * its process: the newest run of each arm (by date, then the later file:
 * class-uniform blocks, the Planes14S re-runs, ball-drawn blocks (@ball)),
 * labelled with its commit. Rows of experiments (a commit "X+variant":
 * branch code or a setting main does not run) are left out (lr_rcsv_newest):
 * the chart shows what main's code measured. */
static int plot_gemv(lr_canvas *c)
{
    static const char *files[] = { "h200_gemv_14b.csv", "h200_gemv_14b_p14s.csv", "h200_gemv_14b_ball.csv" };
    enum { NF = sizeof files / sizeof files[0] };
    lr_rcsv f[NF];
    memset(f, 0, sizeof f);
    int rc = load(files[0], &f[0]);
    if (rc) return rc;
    for (int k = 1; k < NF; k++) /* the later files are optional */
        if (load(files[k], &f[k])) lr_clear_error(), memset(&f[k], 0, sizeof f[k]);
    /* each arm's newest row by lr_rcsv_newest's rule; arms without a % (the
       no-weights control) are not drawn */
    struct { const lr_rcsv *f; int r; } pick[32];
    int n = 0;
    for (int k = 0; k < NF; k++)
        for (int r = 0; r < f[k].n && n < 32; r++) {
            const char *arm = lr_rcsv_get(&f[k], r, "arm");
            if (strcmp(lr_rcsv_get(&f[k], r, "matrix"), "layer_fused_pdl")) continue;
            int i = 0, fi, row;
            while (i < n && strcmp(lr_rcsv_get(pick[i].f, pick[i].r, "arm"), arm)) i++;
            if (i < n || lr_rcsv_newest(f, NF, arm, "14B", "layer_fused_pdl", &fi, &row) ||
                !*lr_rcsv_get(&f[fi], row, "pct_read_bound"))
                continue;
            pick[n].f = &f[fi], pick[n].r = row, n++;
        }
    bar b[32];
    for (int i = 0; i < n; i++) {
        const char *arm = lr_rcsv_get(pick[i].f, pick[i].r, "arm");
        bar *x = &b[i];
        snprintf(x->label, sizeof x->label, "%s @%s", arm, lr_rcsv_get(pick[i].f, pick[i].r, "commit"));
        x->v = atof(lr_rcsv_get(pick[i].f, pick[i].r, "pct_read_bound"));
        snprintf(x->value, sizeof x->value, "%.1f%%  %.1f us", x->v, atof(lr_rcsv_get(pick[i].f, pick[i].r, "us")));
        const int control = strstr(arm, "_loads") || strstr(arm, "_decode") || strstr(arm, "_smem") || !strncmp(arm, "stream", 6);
        x->colour = !strcmp(arm, "f16") || !strcmp(arm, "cublas") ? F16
                    : control || strncmp(arm, "leech_", 6)        ? CONTROL
                    : strstr(arm, "@ball")                         ? BEST
                                                                   : LEECH;
    }
    qsort(b, (size_t)n, sizeof *b, cmp_bar);
    char src[400];
    source_line(src, sizeof src, "bench/results/h200_gemv_14b.csv, _14b_p14s.csv, _14b_ball.csv", f, NF);
    rc = chart(c, "Qwen3-14B layer (fused, PDL), H200: % of the DRAM read bound", src, b, n, 100, 10, "%", 85,
               "target 85% (issue #4)");
    for (int k = 0; k < NF; k++) lr_rcsv_free(&f[k]);
    return rc;
}

/* Decode tokens/s per model size: the engine's default layout (arm
 * engine_leech: the 3-bit form or Planes14S per shape), Planes14S and f16,
 * each the newest run (the file's last step row of that arm and model, not an
 * experiment's "X+variant" row; on the rotated-residual models too; a
 * model is "14B" in early rows, "qwen3-14B-synthetic" since). */
static int same_model(const char *csv_model, const char *m)
{
    char synth[48];
    snprintf(synth, sizeof synth, "qwen3-%s-synthetic", m);
    return !strcmp(csv_model, m) || !strcmp(csv_model, synth);
}

static int plot_engine(lr_canvas *c)
{
    lr_rcsv f;
    int rc = load("h200_engine.csv", &f);
    if (rc) return rc;
    static const char *models[] = { "4B", "8B", "14B", "32B" };
    /* rotated: the model with its residual stream held rotated (the
       rotation folded into the weights at import, docs/engine.md "the rotated
       residual"), synthetic rows "qwen3-XB-synthetic-rotated" */
    static const struct { const char *arm, *label; uint32_t colour; int rotated; } arms[] = {
        { "engine_leech", "default, rotated", BEST, 1 }, { "engine_leech", "default", BEST, 0 },
        { "engine_leech_p14s", "Planes14S", LEECH, 0 }, { "engine_f16", "f16", F16, 0 } };
    enum { NA = sizeof arms / sizeof arms[0] };
    bar b[4 * NA];
    int n = 0;
    double vmax = 0;
    for (int m = 0; m < 4; m++)
        for (int a = 0; a < NA; a++) {
            int last = -1;
            char rot[48];
            snprintf(rot, sizeof rot, "qwen3-%s-synthetic-rotated", models[m]);
            for (int r = 0; r < f.n; r++)
                if (!strcmp(lr_rcsv_get(&f, r, "arm"), arms[a].arm) && !strcmp(lr_rcsv_get(&f, r, "matrix"), "step") &&
                    !lr_rcsv_is_experiment(&f, r) &&
                    (arms[a].rotated ? !strcmp(lr_rcsv_get(&f, r, "model"), rot)
                                     : same_model(lr_rcsv_get(&f, r, "model"), models[m])))
                    last = r;
            if (last < 0) continue;
            bar *x = &b[n++];
            snprintf(x->label, sizeof x->label, "%s %s", models[m], arms[a].label);
            x->v = atof(lr_rcsv_get(&f, last, "tok_s"));
            snprintf(x->value, sizeof x->value, "%.1f tok/s @%s", x->v, lr_rcsv_get(&f, last, "commit"));
            x->colour = arms[a].colour;
            if (x->v > vmax) vmax = x->v;
        }
    char src[400];
    source_line(src, sizeof src, "bench/results/h200_engine.csv", &f, 1);
    vmax = ceil((vmax > 400 ? vmax : 400) / 100) * 100;
    rc = chart(c, "Decode tok/s, H200, synthetic Qwen3, greedy (default: the engine's layout)",
               src, b, n, vmax, 100, "", 400, "14B target 400 tok/s (issue #7)");
    lr_rcsv_free(&f);
    return rc;
}

/* Planes14S with and without side warps per Qwen3 shape: of each shape's
 * newest sweep that tried side warps (extra3 bits 16-18) in
 * h200_tune_leech_p14s.csv, the fastest candidate without and with them. */
static int side_of(const lr_rcsv *f, int r) { return (atoi(lr_rcsv_get(f, r, "extra3")) >> 16) & 7; }
/* a class-uniform sweep row (arm leech_p14s; not @ball, @model or @pdl rows) of this shape */
static int shape_row(const lr_rcsv *f, int r, const char *model, const char *mat)
{
    return !strcmp(lr_rcsv_get(f, r, "arm"), "leech_p14s") && !strcmp(lr_rcsv_get(f, r, "model"), model) &&
           !strcmp(lr_rcsv_get(f, r, "matrix"), mat);
}

static int plot_side(lr_canvas *c)
{
    lr_rcsv f;
    int rc = load("h200_tune_leech_p14s.csv", &f);
    if (rc) return rc;
    static const char *models[] = { "4B", "8B", "14B", "32B" }, *mats[] = { "qkv", "o", "gateup", "down" };
    bar b[32];
    int n = 0;
    double vmax = 0;
    for (int m = 0; m < 4; m++)
        for (int k = 0; k < 4; k++) {
            /* the shape's newest commit with a side-warp candidate, among the
               class-uniform sweeps */
            const char *commit = NULL;
            for (int r = 0; r < f.n; r++)
                if (shape_row(&f, r, models[m], mats[k]) && side_of(&f, r) > 0) commit = lr_rcsv_get(&f, r, "commit");
            if (!commit) continue;
            int best[2] = { -1, -1 };
            for (int r = 0; r < f.n; r++) {
                if (!shape_row(&f, r, models[m], mats[k]) || strcmp(lr_rcsv_get(&f, r, "commit"), commit)) continue;
                const int w = side_of(&f, r) > 0;
                if (best[w] < 0 || atof(lr_rcsv_get(&f, r, "us")) < atof(lr_rcsv_get(&f, best[w], "us"))) best[w] = r;
            }
            for (int w = 0; w < 2 && n < 32; w++) {
                if (best[w] < 0) continue;
                bar *x = &b[n++];
                const int r = best[w];
                x->v = atof(lr_rcsv_get(&f, r, "us"));
                snprintf(x->label, sizeof x->label, "%s %s %s", models[m], mats[k], w ? "side" : "     ");
                if (w)
                    snprintf(x->value, sizeof x->value, "%.2f us  %s + %d warps", x->v, lr_rcsv_get(&f, r, "threads"),
                             side_of(&f, r));
                else
                    snprintf(x->value, sizeof x->value, "%.2f us  %s threads", x->v, lr_rcsv_get(&f, r, "threads"));
                x->colour = w ? LEECH : CONTROL;
                if (x->v > vmax) vmax = x->v;
            }
        }
    char src[400];
    source_line(src, sizeof src, "bench/results/h200_tune_leech_p14s.csv, class-uniform blocks", &f, 1);
    rc = n ? chart(c, "Planes14S GEMV per Qwen3 shape, H200: without and with side warps (us)", src, b, n,
                   ceil(vmax / 10) * 10, 10, "", 0, "")
           : LR_FAIL(LR_EINVAL, "h200_tune_leech_p14s.csv: no sweep with side warps");
    lr_rcsv_free(&f);
    return rc;
}

/* One 14B layer of the engine's greedy step as the timeline probe saw it
 * (h200_timeline.csv, the newest run without a variant): a row per launch,
 * from its first CTA in to the first past the PDL wait (resident, waiting),
 * to the median CTA out, to the last out. Layer 20 (of 40), from its first
 * norm + rotation to the next layer's. */
static int plot_timeline(lr_canvas *c)
{
    lr_rcsv f;
    int rc = load("h200_timeline.csv", &f);
    if (rc) return rc;
    const char *commit = NULL;
    for (int r = 0; r < f.n; r++)
        if (!strcmp(lr_rcsv_get(&f, r, "model"), "qwen3-14B-synthetic") && !*lr_rcsv_get(&f, r, "variant"))
            commit = lr_rcsv_get(&f, r, "commit");
    int first = -1, last = -1, k = 0;
    for (int r = 0; commit && r < f.n; r++) {
        if (strcmp(lr_rcsv_get(&f, r, "model"), "qwen3-14B-synthetic") || *lr_rcsv_get(&f, r, "variant") ||
            strcmp(lr_rcsv_get(&f, r, "commit"), commit) || strcmp(lr_rcsv_get(&f, r, "phase"), "norm_rotation"))
            continue;
        if (k == 40) first = r;
        if (k++ == 42) { last = r; break; }
    }
    if (first < 0 || last < 0) {
        lr_rcsv_free(&f);
        return LR_FAIL(LR_EINVAL, "h200_timeline.csv: no 14B step without a variant, 21 layers long");
    }
    static const struct { const char *phase, *label; } names[] = {
        { "norm_rotation", "norm + rotation" }, { "gemv_qkv", "q|k|v GEMV" }, { "rope_attention", "RoPE + attention" },
        { "rotation", "rotation" }, { "gemv_o", "o GEMV" }, { "gemv_gateup", "gate|up GEMV" }, { "gemv_down", "down GEMV" } };
    const int n = last - first + 1, row = 26, top = 84, lw0 = 12, lw = 250, x0 = lw0 + lw, x1 = W - 40;
    const double t0 = atof(lr_rcsv_get(&f, first, "entry0_us"));
    const double span = atof(lr_rcsv_get(&f, last, "exit1_us")) - t0, vmax = ceil(span / 10) * 10, sx = (x1 - x0) / vmax;
    if (!(vmax > 0 && vmax <= 10000)) { /* (the tick loop below: inf or 1e300 never ended) */
        lr_rcsv_free(&f);
        return LR_FAIL(LR_EFORMAT, "h200_timeline.csv: the 14B layer spans %g us: a non-finite or absurd time", span);
    }
    if ((rc = lr_canvas_init(c, W, top + n * row + 44, 0xffffffu))) { lr_rcsv_free(&f); return rc; }
    char src[400];
    source_line(src, sizeof src, "bench/results/h200_timeline.csv", &f, 1);
    char title[160];
    snprintf(title, sizeof title, "One 14B layer inside the greedy step (H200, timeline probe @%s, us)", commit);
    lr_canvas_text(c, 12, 10, 2, INK, title);
    lr_canvas_text(c, 12, 36, 1, 0x606060u, src);
    lr_canvas_rect(c, 12, 56, 14, 10, 0xb8cde3u);
    lr_canvas_text(c, 30, 56, 1, INK, "in, waiting for the kernel before");
    lr_canvas_rect(c, 300, 56, 14, 10, BEST);
    lr_canvas_text(c, 318, 56, 1, INK, "past the wait, to the median CTA out");
    lr_canvas_rect(c, 600, 56, 14, 10, TARGET);
    lr_canvas_text(c, 618, 56, 1, INK, "to the last CTA out");
    for (double t = 0; t <= vmax + 1e-9; t += 10) {
        int x = x0 + (int)lround(t * sx);
        lr_canvas_rect(c, x, top - 4, 1, n * row + 4, GRID);
        char s[32];
        snprintf(s, sizeof s, "%g", t);
        lr_canvas_text(c, x - lr_canvas_text_width(1, s) / 2, top + n * row + 6, 1, 0x606060u, s);
    }
    for (int i = 0; i < n; i++) {
        const int r = first + i, y = top + i * row;
        const char *ph = lr_rcsv_get(&f, r, "phase"), *lab = ph;
        for (size_t j = 0; j < sizeof names / sizeof names[0]; j++)
            if (!strcmp(ph, names[j].phase)) lab = names[j].label;
        char l[96];
        snprintf(l, sizeof l, "%s (%s)", lab, lr_rcsv_get(&f, r, "grid"));
        lr_canvas_text(c, lw0, y + 4, 2, INK, l);
        const double e = atof(lr_rcsv_get(&f, r, "entry0_us")) - t0, w = atof(lr_rcsv_get(&f, r, "wait_us")) - t0,
                     m = atof(lr_rcsv_get(&f, r, "exit_med_us")) - t0, x = atof(lr_rcsv_get(&f, r, "exit1_us")) - t0;
        const int pe = x0 + (int)lround(e * sx), pw = x0 + (int)lround(w * sx), pm = x0 + (int)lround(m * sx),
                  px = x0 + (int)lround(x * sx);
        lr_canvas_rect(c, pe, y + 2, pw - pe > 0 ? pw - pe : 1, row - 6, 0xb8cde3u);
        lr_canvas_rect(c, pw, y + 2, pm - pw > 0 ? pm - pw : 1, row - 6, BEST);
        if (px > pm) lr_canvas_rect(c, pm, y + 2, px - pm, row - 6, TARGET);
    }
    lr_rcsv_free(&f);
    return LR_OK;
}

/* The same arm's fused 14B layer on the H100 over its time on the H200 (each
 * card's newest row at a commit as committed, lr_rcsv_newest; both commits on
 * the label), beside the ratio of the two cards' read bounds: bytes-bound arms
 * sit near that line, arms held by on-chip work (decode, latency) near 1. Each
 * bar's own processes' bound ratio is in its value; the line is their mean and
 * its label their range. (Until the sixty-seventh session a bar paired the
 * arm's oldest H100 row with the newest H200 one, and the line was the first
 * bar's bounds.) */
static int plot_devices(lr_canvas *c)
{
    static const char *h100[] = { "h100_gemv_14b.csv", "h100_gemv_14b_ball.csv" };
    static const char *h200[] = { "h200_gemv_14b_p14s.csv", "h200_gemv_14b.csv", "h200_gemv_14b_ball.csv" };
    lr_rcsv a[2], b[3];
    memset(a, 0, sizeof a), memset(b, 0, sizeof b);
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) rc = load(h100[k], &a[k]);
    for (int k = 0; k < 3 && !rc; k++) rc = load(h200[k], &b[k]);
    bar x[32];
    const char *drawn[32]; /* x[i]'s arm */
    int n = 0;
    double rsum = 0, rmin = 0, rmax = 0;
    int nr = 0;
    for (int k = 0; k < 2 && !rc; k++)
        for (int r = 0; r < a[k].n && n < 32; r++) {
            const char *arm = lr_rcsv_get(&a[k], r, "arm");
            if (strcmp(lr_rcsv_get(&a[k], r, "matrix"), "layer_fused_pdl") || !strcmp(arm, "f16")) continue;
            int ai, ar, bi, br, dup = 0;
            for (int i = 0; i < n; i++) dup |= !strcmp(drawn[i], arm);
            if (dup || lr_rcsv_newest(a, 2, arm, "14B", "layer_fused_pdl", &ai, &ar) ||
                lr_rcsv_newest(b, 3, arm, "14B", "layer_fused_pdl", &bi, &br))
                continue;
            const double ua = atof(lr_rcsv_get(&a[ai], ar, "us")), ub = atof(lr_rcsv_get(&b[bi], br, "us"));
            const double ga = lr_rcsv_process_bound(&a[ai], ar), gb = lr_rcsv_process_bound(&b[bi], br);
            if (ub <= 0 || ua <= 0) continue;
            const double q = ga > 0 && gb > 0 ? gb / ga : 0;
            if (q > 0) {
                rsum += q, nr++;
                if (!rmin || q < rmin) rmin = q;
                if (q > rmax) rmax = q;
            }
            drawn[n] = arm;
            bar *y = &x[n++];
            snprintf(y->label, sizeof y->label, "%s %s/%s", arm, lr_rcsv_get(&a[ai], ar, "commit"),
                     lr_rcsv_get(&b[bi], br, "commit"));
            y->v = ua / ub;
            if (q > 0) snprintf(y->value, sizeof y->value, "%.2fx  %.1f/%.1f us  bounds %.2fx", y->v, ua, ub, q);
            else snprintf(y->value, sizeof y->value, "%.2fx  %.1f/%.1f us", y->v, ua, ub);
            const int control = strstr(arm, "_loads") || strstr(arm, "_decode") || strstr(arm, "_smem") ||
                                !strncmp(arm, "stream", 6) || !strcmp(arm, "noweights");
            y->colour = !strcmp(arm, "cublas") ? F16 : control ? CONTROL : strstr(arm, "@ball") ? BEST : LEECH;
        }
    if (!rc) {
        qsort(x, (size_t)n, sizeof *x, cmp_bar);
        char src[400], tl[64];
        source_line(src, sizeof src, "bench/results/h100_gemv_14b.csv, h100_gemv_14b_ball.csv (H200: h200_gemv_14b*.csv)", a, 2);
        const double ratio = nr ? rsum / nr : 0;
        snprintf(tl, sizeof tl, "read bounds %.2f-%.2fx", rmin, rmax);
        rc = chart(c, "Qwen3-14B layer (fused, PDL): H100 time / H200 time (labels: H100/H200 commits)", src, x, n,
                   2.2, 0.4, "x", ratio, tl);
    }
    for (int k = 0; k < 2; k++) lr_rcsv_free(&a[k]);
    for (int k = 0; k < 3; k++) lr_rcsv_free(&b[k]);
    return rc;
}

static const struct { const char *file; int (*draw)(lr_canvas *); } g_plots[] = {
    { "gemv_14b.png", plot_gemv },
    { "engine_tok_s.png", plot_engine },
    { "p14s_side.png", plot_side },
    { "timeline_14b_layer.png", plot_timeline },
    { "gemv_devices.png", plot_devices },
};

int main(int argc, char **argv)
{
    lr_program_init("plots");
    const char *outdir = "bench/plots";
    int check = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: plots [--out DIR] [RESULTS_DIR]    write the README's PNGs (default DIR bench/plots)\n"
                   "       plots --check DIR [RESULTS_DIR]   exit 1 if a PNG in DIR no longer matches the CSVs\n");
            return 0;
        }
        if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "--check")) && i + 1 < argc) {
            check = !strcmp(argv[i], "--check");
            outdir = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "plots: unknown option %s (see --help)\n", argv[i]);
            return 2;
        } else snprintf(g_dir, sizeof g_dir, "%s", argv[i]);
    }
    int bad = 0;
    for (size_t k = 0; k < sizeof g_plots / sizeof g_plots[0]; k++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", outdir, g_plots[k].file);
        lr_canvas c;
        int rc = g_plots[k].draw(&c);
        if (rc) { fprintf(stderr, "plots: %s: %s\n", g_plots[k].file, lr_errmsg()); return 1; }
        if (!check) {
            rc = lr_png_write(path, c.rgb, c.w, c.h);
            if (rc) fprintf(stderr, "plots: %s\n", lr_errmsg()), bad = 1;
        } else {
            void *png;
            size_t n;
            uint8_t *rgb = NULL;
            int w, h;
            rc = lr_read_file(path, &png, &n);
            if (!rc) rc = lr_png_decode(path, png, n, &rgb, &w, &h);
            if (rc) fprintf(stderr, "plots: %s\n", lr_errmsg()), bad = 1;
            else if (w != c.w || h != c.h || memcmp(rgb, c.rgb, (size_t)w * h * 3)) {
                fprintf(stderr, "plots: %s differs from what %s draws: run build/bin/plots --out %s\n", path, g_dir, outdir);
                bad = 1;
            }
            if (!rc) free(png);
            free(rgb);
        }
        lr_canvas_free(&c);
    }
    return bad;
}
