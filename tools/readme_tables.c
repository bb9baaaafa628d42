/* readme_tables: the README's result tables, generated from the CSVs in
 * bench/results/ (every number in the README comes from a committed CSV; a
 * test regenerates the tables and fails if the README drifted).
 *   readme_tables [RESULTS_DIR]          print the tables (markdown)
 *   readme_tables --check README [DIR]   exit 1 if README's block differs */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt/engine.h"
#include "util/benchcsv.h"
#include "util/atomic_file.h"
#include "util/err.h"
#include "util/results_csv.h"
#include "util/program.h"
#include "util/stdout_check.h"
#include "util/strlist.h"

typedef lr_rcsv csv;

static char *g_dir = "bench/results";
static char g_out[1 << 19];
static size_t g_len;
static int g_full; /* the tables outgrew g_out: refuse rather than write a cut block */

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!g_full) {
        const int k = vsnprintf(g_out + g_len, sizeof g_out - g_len, fmt, ap);
        if (k < 0 || (size_t)k >= sizeof g_out - g_len) g_full = 1, g_out[g_len] = 0; /* (keeps what fitted whole) */
        else g_len += (size_t)k;
    }
    va_end(ap);
}

/* s as one markdown table cell in dst: '|' escaped (a variant such as "gate|up" would
 * otherwise split the cell); longer than max characters, its first max - 4 and " ..." */
static void md_cell(char *dst, size_t cap, const char *s, size_t max)
{
    const size_t keep = strlen(s) > max ? max - 4 : max;
    size_t n = 0, i = 0;
    for (; s[i] && i < keep && n + 3 < cap; i++) {
        if (s[i] == '|') dst[n++] = '\\';
        dst[n++] = s[i];
    }
    dst[n] = 0;
    if (s[i] && n + 5 < cap) memcpy(dst + n, " ...", 5);
}

/* bench/results/NAME (a table whose file is missing is left out) */
static int g_loaded; /* CSVs found: none means a wrong folder, not empty tables */

static int load(const char *name, csv *c)
{
    if (lr_rcsv_load_in(g_dir, name, c)) { lr_clear_error(); return -1; }
    g_loaded++;
    return 0;
}

static const char *get(const csv *c, int r, const char *col) { return lr_rcsv_get(c, r, col); }

/* Appends " V |" (or " - |" when !have) to the row's cells; a cell that does
 * not fit (a hostile CSV's 1e300) ends the row with " ... |" instead of
 * writing past the buffer. */
static void add_cell(char *cells, size_t cap, int *len, int have, double v)
{
    if (*len < 0 || (size_t)*len >= cap) return;
    char cell[48];
    const int k = snprintf(cell, sizeof cell, have ? " %.0f |" : " - |", v);
    if (k > 0 && (size_t)k < sizeof cell && (size_t)(*len + k) < cap - 8) {
        memcpy(cells + *len, cell, (size_t)k + 1);
        *len += k;
    } else {
        *len += snprintf(cells + *len, cap - (size_t)*len, " ... |");
        *len = (int)cap; /* full: nothing more is appended */
    }
}

/* Names the file, device, date and every commit its rows come from (rows of
 * several runs may share a file; each row carries its own commit). */
static void source(const csv *c, const char *name)
{
    if (!c->n) return;
    char commits[1024] = ""; /* every commit (h200_gemv_14b_ball.csv has 59; 256 cut three lists short) */
    int k = lr_rcsv_commits(c, commits, sizeof commits);
    /* the first and last date (ISO dates compare as strings) */
    const char *d0 = get(c, 0, "date"), *d1 = d0;
    for (int r = 1; r < c->n; r++) {
        const char *d = get(c, r, "date");
        if (strcmp(d, d0) < 0) d0 = d;
        if (strcmp(d, d1) > 0) d1 = d;
    }
    out("\n_Source: `bench/results/%s` (%s, %s %s, %s%s%s)._\n\n", name, get(c, 0, "device"),
        k > 1 ? "commits" : "commit", commits, d0, strcmp(d0, d1) ? " to " : "", strcmp(d0, d1) ? d1 : "");
}

static void gemv_table(const char *file, const char *title, const char *models, const char *arms)
{
    csv c;
    if (load(file, &c)) return;
    out("\n### %s\n", title);
    source(&c, file);
    /* one process per commit: its own read bound, its own f16 control */
    out("Read bound measured in the same process:");
    int nb = 0;
    for (int r = 0; r < c.n; r++)
        if (!strcmp(get(&c, r, "arm"), "read_bound"))
            out("%s %.0f GB/s (%s)", nb++ ? "," : "", atof(get(&c, r, "gbps")), get(&c, r, "commit"));
    out(".\n\n");
    out("| commit | model | arm | launches | b/w | µs | GB/s | %% of read bound | vs f16 |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++) {
        const char *m = get(&c, r, "matrix"), *a = get(&c, r, "arm"), *model = get(&c, r, "model");
        const char *commit = get(&c, r, "commit");
        if (strncmp(m, "layer", 5) || !lr_list_has(arms, a) || !lr_list_has(models, model)) continue;
        double f16 = 0;
        for (int k = 0; k < c.n; k++)
            if (!strcmp(get(&c, k, "arm"), "f16") && !strcmp(get(&c, k, "matrix"), m) &&
                !strcmp(get(&c, k, "model"), model) && !strcmp(get(&c, k, "commit"), commit))
                f16 = atof(get(&c, k, "us"));
        double us = atof(get(&c, r, "us"));
        const char *gb = get(&c, r, "gbps"), *pct = get(&c, r, "pct_read_bound");
        out("| %s | %s | %s | %s | %s | %.1f | %s | %s | ", commit, model, a,
            !strcmp(m, "layer") ? "7" : !strcmp(m, "layer_fused_pdl") ? "4 (fused, PDL)" : "4 (fused)",
            atof(get(&c, r, "bits_per_weight")) > 0 ? get(&c, r, "bits_per_weight") : "-", us, *gb ? gb : "-",
            *pct ? pct : "-");
        if (f16 > 0 && us > 0) out("%.2fx |\n", f16 / us);
        else out("- |\n");
    }
}

/* Per matrix (not per layer): one row per (commit, model, matrix, arm) of the listed arms. */
static void matrix_table(const char *file, const char *title, const char *arms)
{
    csv c;
    if (load(file, &c)) return;
    out("\n### %s\n", title);
    source(&c, file);
    out("| commit | model | matrix | rows x cols | arm | µs | GB/s | %% of read bound |\n|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++) {
        const char *a = get(&c, r, "arm");
        if (!lr_list_has(arms, a)) continue;
        out("| %s | %s | %s | %s x %s | %s | %s | %s | %s |\n", get(&c, r, "commit"), get(&c, r, "model"),
            get(&c, r, "matrix"), get(&c, r, "rows"), get(&c, r, "cols"), a, get(&c, r, "us"), get(&c, r, "gbps"),
            get(&c, r, "pct_read_bound"));
    }
}

/* SMs of the cards the committed CSVs name (0: not known here). */
static int sm_count_of(const char *device)
{
    return strstr(device, "H200") || strstr(device, "H100 80GB HBM3") || strstr(device, "H100 SXM") ? 132 : 0;
}

/* The CTAs the stream control launches for a matrix (kernels/gemv_arm_stream.c,
 * prepare): its Planes14S bytes (segments of 1,792 B over 16 rows x 192
 * columns) over the bytes one CTA has in flight, at least 1, at most
 * per_sm per SM: a small matrix gets fewer than asked. */
static double stream_ctas(int rows, int cols, int threads, int unroll, int per_sm, int sms)
{
    const double bytes = (double)((rows + 15) / 16) * ((cols / 24 + 7) / 8) * 1792;
    const double fit = (double)(long long)(bytes / ((double)threads * unroll * 16)), most = (double)sms * per_sm;
    return fit < 1 ? 1 : fit > most ? most : fit;
}

/* The stream control at swept geometries (tune_gemv rows: threads, unroll =
 * 16-byte loads in flight per thread, extra0 = CTAs per SM asked): the
 * fastest of each geometry's repeats (the sweep's other knobs do not reach
 * the arm), with the CTAs per SM launched and the bytes they keep in flight. */
static void inflight_table(const char *file, const char *title)
{
    csv c;
    if (load(file, &c)) return;
    out("\n### %s\n", title);
    source(&c, file);
    out("| arm | matrix | threads | loads in flight per thread | CTAs per SM asked | CTAs per SM launched | KB in flight per SM | µs (best) |\n"
        "|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++) {
        const char *a = get(&c, r, "arm"), *m = get(&c, r, "matrix"), *t = get(&c, r, "threads"),
                   *u = get(&c, r, "unroll"), *e = get(&c, r, "extra0");
        int first = 1;
        double best = atof(get(&c, r, "us"));
        for (int k = 0; k < c.n; k++) {
            if (strcmp(get(&c, k, "arm"), a) || strcmp(get(&c, k, "matrix"), m) || strcmp(get(&c, k, "threads"), t) ||
                strcmp(get(&c, k, "unroll"), u) || strcmp(get(&c, k, "extra0"), e) ||
                strcmp(get(&c, k, "device"), get(&c, r, "device")))
                continue;
            if (k < r) first = 0;
            if (atof(get(&c, k, "us")) < best) best = atof(get(&c, k, "us"));
        }
        if (!first) continue;
        const int sms = sm_count_of(get(&c, r, "device"));
        if (!sms) {
            out("| %s | %s | %s | %s | %s | ? | ? | %.2f |\n", a, m, t, u, e, best);
            continue;
        }
        const double per_sm =
            stream_ctas(atoi(get(&c, r, "rows")), atoi(get(&c, r, "cols")), atoi(t), atoi(u), atoi(e), sms) / sms;
        out("| %s | %s | %s | %s | %s | %.2f | %.0f | %.2f |\n", a, m, t, u, e, per_sm, atof(t) * atof(u) * per_sm * 16 / 1024,
            best);
    }
}

static void codec_table(void)
{
    csv c;
    if (load("leech_codec_cpu.csv", &c)) return;
    out("\n### Leech codec on the CPU\n");
    source(&c, "leech_codec_cpu.csv");
    out("| arm | data | setting | b/w | MSE per weight | blocks/s/core |\n|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++)
        out("| %s | %s | %s | %s | %s | %s |\n", get(&c, r, "arm"), get(&c, r, "model"), get(&c, r, "matrix"),
            get(&c, r, "bits_per_weight"), *get(&c, r, "mse") ? get(&c, r, "mse") : "-",
            *get(&c, r, "blocks_per_s_per_core") ? get(&c, r, "blocks_per_s_per_core") : "-");
}

static void rotation_table(void)
{
    csv c;
    if (load("h200_rotation.csv", &c)) return;
    out("\n### Rotation, 4 per layer (separate launches)\n");
    source(&c, "h200_rotation.csv");
    out("| arm | model | smem budget (B) | µs per layer | %% of the FP16 layer |\n|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++)
        if (!strcmp(get(&c, r, "matrix"), "layer") && !strncmp(get(&c, r, "arm"), "rot_", 4))
            out("| %s | %s | %s | %s | %s |\n", get(&c, r, "arm"), get(&c, r, "model"), get(&c, r, "smem_budget"),
                get(&c, r, "us"), get(&c, r, "share_pct"));
}

/* us of the last row (arm, model, matrix, commit, variant) of an engine CSV;
 * -1 when none. arm or variant NULL: any. */
static double row_us(csv *c, const char *arm, const char *model, const char *matrix, const char *commit,
                     const char *variant)
{
    double v = -1;
    for (int k = 0; k < c->n; k++)
        if ((!arm || !strcmp(get(c, k, "arm"), arm)) && !strcmp(get(c, k, "model"), model) &&
            !strcmp(get(c, k, "matrix"), matrix) && !strcmp(get(c, k, "commit"), commit) &&
            (!variant || !strcmp(get(c, k, "variant"), variant)))
            v = atof(get(c, k, "us"));
    return v;
}

static double engine_us(csv *c, const char *arm, const char *model, const char *matrix, const char *commit)
{
    return row_us(c, arm, model, matrix, commit, NULL);
}

/* Whether any row's matrix column is `matrix`. */
static int has_matrix(const csv *c, const char *matrix)
{
    for (int r = 0; r < c->n; r++)
        if (!strcmp(get(c, r, "matrix"), matrix)) return 1;
    return 0;
}

/* The header of a table with a column per engine phase, then ntail more. */
static void phase_table_head(const char *const *ph, int nph, const char *tail, int ntail)
{
    out("| commit | arm | model |");
    for (int i = 0; i < nph; i++) out(" %s |", ph[i]);
    out("%s\n|---|---|---|", tail);
    for (int i = 0; i < nph + ntail; i++) out("---|");
    out("\n");
}

static void engine_table(void)
{
    csv c;
    if (!load("h200_engine.csv", &c)) {
        out("\n### Decode (GPU engine, synthetic Qwen3, greedy, batch 1)\n");
        source(&c, "h200_engine.csv");
        out("| commit | arm | model | ms per token | tok/s | weight GB/s | %% of read bound |\n|---|---|---|---|---|---|---|\n");
        for (int r = 0; r < c.n; r++) {
            if (strcmp(get(&c, r, "matrix"), "step")) continue;
            const char *gb = get(&c, r, "gbps"), *pct = get(&c, r, "pct_read_bound");
            out("| %s | %s | %s | %.3f | %s | %s | %s |\n", get(&c, r, "commit"), get(&c, r, "arm"), get(&c, r, "model"),
                atof(get(&c, r, "us")) / 1e3,
                get(&c, r, "tok_s"), *gb ? gb : "-", *pct ? pct : "-");
        }
        /* Per-phase µs per token (each phase of every layer replayed alone). */
        /* the engine's own phase names, in its order */
        const char *ph[32];
        int nph = 0;
        while (nph < 32 && (ph[nph] = lr_engine_gpu_phase_name(nph))) nph++;
        if (has_matrix(&c, "gemv_qkv")) {
            out("\nµs per token by phase (each phase's launches for every layer replayed alone as one graph); "
                "graph = the whole step's graph replayed back to back (GPU time), step = one decode step as the "
                "host sees it (graph launch, wait, and from 2026-12-01 the greedy token: the argmax runs on the "
                "device; before, the logits' copy and a host argmax, which the head phase then included):\n\n");
            phase_table_head(ph, nph, " sum | graph | step |", 3);
            for (int r = 0; r < c.n; r++) {
                if (strcmp(get(&c, r, "matrix"), "step")) continue;
                const char *arm = get(&c, r, "arm"), *model = get(&c, r, "model"), *commit = get(&c, r, "commit");
                double sum = 0;
                char cells[1024] = "";
                int len = 0, found = 0;
                for (int i = 0; i < nph; i++) {
                    double v = engine_us(&c, arm, model, ph[i], commit);
                    if (v >= 0) sum += v, found = 1;
                    add_cell(cells, sizeof cells, &len, v >= 0, v);
                }
                double graph = engine_us(&c, arm, model, "graph", commit);
                char gcell[32];
                snprintf(gcell, sizeof gcell, graph >= 0 ? "%.0f" : "-", graph);
                if (found)
                    out("| %s | %s | %s |%s %.0f | %s | %.0f |\n", get(&c, r, "commit"), arm, model, cells, sum, gcell,
                        atof(get(&c, r, "us")));
            }
        }
    }
    if (!load("h200_engine.csv", &c)) {
        /* What each phase costs inside the whole graph: the greedy graph
           minus the graph without that phase's launches. */
        const char *ph[32];
        int nph = 0;
        while (nph < 32 && (ph[nph] = lr_engine_gpu_phase_name(nph))) nph++;
        int any = 0;
        for (int r = 0; r < c.n && !any; r++) any = !strncmp(get(&c, r, "matrix"), "without_", 8);
        if (any) {
            out("\nµs per token each phase costs inside the whole step's graph: the graph minus the graph without "
                "that phase's launches (its overlap with its neighbours taken off; - = no such launches):\n\n");
            phase_table_head(ph, nph, " graph |", 1);
            for (int r = 0; r < c.n; r++) {
                if (strcmp(get(&c, r, "matrix"), "graph")) continue;
                const char *arm = get(&c, r, "arm"), *model = get(&c, r, "model"), *commit = get(&c, r, "commit");
                double graph = atof(get(&c, r, "us"));
                char cells[1024] = "";
                int len = 0, found = 0;
                for (int i = 0; i < nph; i++) {
                    char name[64];
                    snprintf(name, sizeof name, "without_%s", ph[i]);
                    double v = engine_us(&c, arm, model, name, commit);
                    found |= v >= 0;
                    add_cell(cells, sizeof cells, &len, v >= 0, graph - v);
                }
                if (found) out("| %s | %s | %s |%s %.0f |\n", commit, arm, model, cells, graph);
            }
        }
    }
    if (!load("h200_engine.csv", &c)) {
        /* The launch floor: the greedy graph with every kernel an empty one
           of its shape (what the launch structure alone costs). */
        if (has_matrix(&c, "graph_floor")) {
            out("\nThe launch floor: the greedy step's graph with every kernel replaced by an empty one of the same "
                "grid, block, cluster and shared memory (µs per token; what the launches and their handoffs cost "
                "with no work in them, the most a single persistent kernel could win back from them):\n\n"
                "| commit | arm | model | launch floor µs | graph µs | floor %% of graph |\n|---|---|---|---|---|---|\n");
            for (int r = 0; r < c.n; r++) {
                if (strcmp(get(&c, r, "matrix"), "graph_floor")) continue;
                const char *arm = get(&c, r, "arm"), *model = get(&c, r, "model"), *commit = get(&c, r, "commit");
                const double fl = atof(get(&c, r, "us")), graph = engine_us(&c, arm, model, "graph", commit);
                if (graph > 0)
                    out("| %s | %s | %s | %.1f | %.0f | %.1f |\n", commit, arm, model, fl, graph, 100 * fl / graph);
                else
                    out("| %s | %s | %s | %.1f | - | - |\n", commit, arm, model, fl);
            }
        }
    }
    if (!load("h200_load.csv", &c)) {
        out("\n### Load (parse, validate, verify, upload; page cache)\n");
        source(&c, "h200_load.csv");
        out("| model | whole-model b/w | wall s (median) |\n|---|---|---|\n");
        for (int r = 0; r < c.n; r++)
            out("| %s | %s | %.3f |\n", get(&c, r, "model"), get(&c, r, "bits_per_weight"), atof(get(&c, r, "us")) / 1e6);
    }
}

/* The decode step on the H100 (until 2026-12-06 no tuning rows of its own): the H200's rows
 * borrowed (kernels/tuning.h) against the rule-of-thumb geometries, with the
 * launch floor and its flag-handoff twin of each. */
static void h100_table(void)
{
    csv c;
    if (load("h100_engine_variants.csv", &c)) return;
    out("\n### Decode on the H100 (synthetic Qwen3, greedy, batch 1, default layout)\n");
    source(&c, "h100_engine_variants.csv");
    out("Launch floor: every kernel an empty one of its shape, chained by the PDL wait (the engine's handoff) or by a "
        "counter in memory (flag handoff, `templates/op_empty_flag.cu`).\n\n"
        "| commit | model | tuning rows | variant | tok/s | ms per token | %% of read bound | launch floor µs | "
        "flag-handoff floor µs |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++) {
        if (strcmp(get(&c, r, "matrix"), "step")) continue;
        const char *model = get(&c, r, "model"), *commit = get(&c, r, "commit"), *v = get(&c, r, "variant");
        /* (the sweep's rows repeat the first variant's step: one table row each) */
        int dup = 0;
        for (int k = 0; k < r && !dup; k++)
            dup = !strcmp(get(&c, k, "matrix"), "step") && !strcmp(get(&c, k, "model"), model) &&
                  !strcmp(get(&c, k, "commit"), commit) && !strcmp(get(&c, k, "variant"), v);
        if (dup) continue;
        const double fl = row_us(&c, NULL, model, "graph_floor", commit, v),
                     ff = row_us(&c, NULL, model, "graph_floor_flag", commit, v);
        /* whose rows: bench_engine's tuning_rows column where a row has it; older rows say it
           in their variant (the sibling rule is the default since cfa5caa, so rows that do not
           turn it off borrow; since d906e03 the H100 has rows of its own for 14B's plain
           gate|up, which only the 4-bit layout's SwiGLU falls back to, and such runs say so) */
        const char *tr = get(&c, r, "tuning_rows");
        const char *rows = *tr ? tr
                           : strstr(v, "SIBLING=0") || strstr(v, "no tuning rows") ? "none (rule of thumb)"
                           : strstr(v, "H100's own") ? "the H100's own for 14B's gate\\|up, else the H200's"
                                                     : "the H200's (borrowed)";
        char a[32] = "-", b[32] = "-";
        if (fl >= 0) snprintf(a, sizeof a, "%.1f", fl);
        if (ff >= 0) snprintf(b, sizeof b, "%.1f", ff);
        char vv[220];
        md_cell(vv, sizeof vv, *v ? v : "-", 100); /* a LEECHRT_TUNE value: whole in the CSV */
        out("| %s | %s | %s | %s | %s | %.3f | %s | %s | %s |\n", commit, model, rows, vv, get(&c, r, "tok_s"),
            atof(get(&c, r, "us")) / 1e3, get(&c, r, "pct_read_bound"), a, b);
    }
}

/* The fused 14B layer (four launches with PDL) of each arm on the H100 beside
 * the H200's newest row of that arm run at a commit as committed (no
 * "+variant"), from the H200 files in order (later date, then later file and
 * row, wins). Why: the two cards have the same SMs and clocks and ~1.5x
 * different read bounds, so an arm whose time moves less than the bound is
 * held by something other than bytes. The commits differ; each is named. */
static void device_table(const char *h100_file, const char *blocks, const char *const *h200_files, int nfiles,
                         const char *arms)
{
    csv a, b[8];
    if (nfiles > 8 || load(h100_file, &a)) return;
    int nb = 0;
    for (int i = 0; i < nfiles; i++)
        if (!load(h200_files[i], &b[nb])) nb++;
    if (!nb) { lr_rcsv_free(&a); return; }
    out("\n### GEMV, one Qwen3-14B layer (4 launches, PDL), %s: the H100 beside the H200\n", blocks);
    source(&a, h100_file);
    out("H200 rows: the newest of each arm at a commit as committed in `bench/results/");
    for (int i = 0; i < nfiles; i++) out("%s%s", i ? "`, `" : "", h200_files[i]);
    out("` (commits differ; each is named). Read bounds are each process's own.\n\n"
        "| arm | b/w | H200 commit | H200 µs | %% of H200 bound | H100 commit | H100 µs | %% of H100 bound | "
        "H100 / H200 time | H200 / H100 read bound |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < a.n; r++) {
        const char *arm = get(&a, r, "arm");
        if (strcmp(get(&a, r, "matrix"), "layer_fused_pdl") || strcmp(get(&a, r, "model"), "14B") ||
            !lr_list_has(arms, arm))
            continue;
        int bi, br;
        if (lr_rcsv_newest(b, nb, arm, "14B", "layer_fused_pdl", &bi, &br)) continue;
        const double ua = atof(get(&a, r, "us")), ub = atof(get(&b[bi], br, "us"));
        const double ga = lr_rcsv_process_bound(&a, r), gb = lr_rcsv_process_bound(&b[bi], br);
        const char *pa = get(&a, r, "pct_read_bound"), *pb = get(&b[bi], br, "pct_read_bound");
        const char *bw = get(&a, r, "bits_per_weight");
        char rb[32] = "-";
        if (ga > 0 && gb > 0) snprintf(rb, sizeof rb, "%.2f", gb / ga);
        out("| %s | %s | %s | %.1f | %s | %s | %.1f | %s | %.2f | %s |\n", arm, atof(bw) > 0 ? bw : "-",
            get(&b[bi], br, "commit"), ub, *pb ? pb : "-", get(&a, r, "commit"), ua, *pa ? pa : "-",
            ub > 0 ? ua / ub : 0, rb);
    }
    lr_rcsv_free(&a);
    for (int i = 0; i < nb; i++) lr_rcsv_free(&b[i]);
}

static void quality_table(void)
{
    csv c;
    if (load("cpu_quality_smollm2.csv", &c)) return;
    out("\n### Quality on a real model (SmolLM2-135M-Instruct from its Q4_1 GGUF, CPU engine)\n");
    source(&c, "cpu_quality_smollm2.csv");
    out("| commit | arm | projection b/w | evaluation text | perplexity | eval tokens |\n|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++)
        out("| %s | %s | %s | %s | %s | %s |\n", get(&c, r, "commit"), get(&c, r, "arm"), get(&c, r, "bits_per_weight"),
            get(&c, r, "matrix"), get(&c, r, "ppl"), get(&c, r, "eval_tokens"));
}

static void sass_table(void)
{
    csv c;
    if (load("sass_instr_per_weight.csv", &c)) return;
    out("\n### Instructions per weight in the GEMV main loops (SASS, docs/layouts.md)\n");
    source(&c, "sass_instr_per_weight.csv");
    out("Rows with a spec are what `tools/sass_count` reads from NVRTC's cubin now (`sass_count_test` fails when a "
        "template change moves them); the others are earlier templates' counts, kept as history.\n\n");
    out("| commit | arm | shape | b/w | threads | row groups/CTA | instructions/weight | registers | checked |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < c.n; r++)
        out("| %s | %s | %sx%s | %s | %s | %s | %s | %s | %s |\n", get(&c, r, "commit"), get(&c, r, "arm"),
            get(&c, r, "rows"), get(&c, r, "cols"), get(&c, r, "bits_per_weight"), get(&c, r, "threads"),
            get(&c, r, "row_groups"), get(&c, r, "instr_per_weight"),
            *get(&c, r, "registers") ? get(&c, r, "registers") : "-", *get(&c, r, "spec") ? "yes" : "");
}

static void ncu_table(void)
{
    csv c;
    if (load("h200_ncu_leech_p14.csv", &c)) return;
    out("\n### Nsight Compute: the Planes14 fused gate|up kernel\n");
    source(&c, "h200_ncu_leech_p14.csv");
    out("Kernel: `%s` (one launch, `ncu --clock-control none`).\n\n| metric | value |\n|---|---|\n",
        get(&c, 0, "kernel"));
    for (int r = 0; r < c.n; r++)
        out("| %s | %s %s |\n", get(&c, r, "metric"), get(&c, r, "value"), get(&c, r, "unit"));
}

/* Several kernels side by side: a metric per row, a kernel per column (the
 * kernel's name up to its specialization, "__", and the label the CSV gives
 * it in a closing parenthesis: "... (14B down: loads only)"). */
static void ncu_compare_table(const char *file, const char *title)
{
    csv c;
    if (load(file, &c)) return;
    out("\n### %s\n", title);
    source(&c, file);
    const char *kern[8];
    const char *met[64];
    int nk = 0, nm = 0;
    for (int r = 0; r < c.n; r++) {
        const char *k = get(&c, r, "kernel"), *m = get(&c, r, "metric");
        int i;
        for (i = 0; i < nk && strcmp(kern[i], k); i++) {}
        if (i == nk && nk < 8) kern[nk++] = k;
        for (i = 0; i < nm && strcmp(met[i], m); i++) {}
        if (i == nm && nm < 64) met[nm++] = m;
    }
    out("\n| metric |");
    for (int i = 0; i < nk; i++) {
        const char *e = strstr(kern[i], "__");
        const char *lab = strrchr(kern[i], '(');
        size_t kl = strlen(kern[i]);
        if (!lab || kern[i][kl - 1] != ')') lab = "";
        out(" `%.*s`%s%s |", e ? (int)(e - kern[i]) : (int)kl, kern[i], *lab ? " " : "", lab);
    }
    out("\n|---|");
    for (int i = 0; i < nk; i++) out("---|");
    out("\n");
    for (int m = 0; m < nm; m++) {
        out("| %s |", met[m]);
        for (int k = 0; k < nk; k++) {
            const char *v = "", *u = "";
            for (int r = 0; r < c.n; r++)
                if (!strcmp(get(&c, r, "kernel"), kern[k]) && !strcmp(get(&c, r, "metric"), met[m]))
                    v = get(&c, r, "value"), u = get(&c, r, "unit");
            out(" %s%s%s |", v, *v && *u ? " " : "", *v ? u : "");
        }
        out("\n");
    }
    out("\nKernels (specializations): ");
    for (int i = 0; i < nk; i++) out("%s`%s`", i ? ", " : "", kern[i]);
    out(".\n");
}

static void generate(void)
{
    g_len = 0;
    gemv_table("h200_gemv_14b.csv", "GEMV, one Qwen3-14B decoder layer (one process)", "14B",
               "f16,cublas,noweights,stream_p14s,leech_p14,leech_p14s,leech_p14s_loads,leech_i8,leech_p14rec,leech_p12x,leech_slot32");
    /* the newest Planes14S kernel against its controls, when only those were re-run */
    gemv_table("h200_gemv_14b_p14s.csv", "GEMV, Qwen3-14B layer: the newest Planes14S and its controls (one process)", "14B",
               "f16,stream_p14s,leech_p14s,leech_p14s_loads,leech_p14s_decode");
    /* the same kernels on ball-uniform blocks (exceptions as rare as in imported models) */
    gemv_table("h200_gemv_14b_ball.csv", "GEMV, Qwen3-14B layer, blocks drawn over the ball like real weights (one process)",
               "14B", "f16,stream_p14s,stream_p14s3,leech_p14s@ball,leech_p14s_loads@ball,leech_p14s_decode@ball,leech_p14s3@ball,"
               "leech_p14s3_loads@ball,leech_p14s3_loads_nox@ball,leech_p14s3_loads_nopro@ball,leech_p14s3_decode@ball,"
               "leech_p14s3_smem@ball");
    gemv_table("h200_gemv_controls.csv", "GEMV controls per model (one process)", "4B,8B,14B,32B", "f16,cublas,noweights");
    /* a pure stream over one contiguous range per SM (the split's partition) beside the grid-stride stream */
    matrix_table("h200_stream_ranges.csv",
                 "Qwen3-14B matrices: the stream control grid-stride and in one contiguous range per SM, beside "
                 "Planes14S and its loads-only control (one process)",
                 "stream_p14s,stream_p14s_ranges,leech_p14s_loads,leech_p14s");
    inflight_table("h200_stream_inflight.csv",
                   "The stream control against the bytes it keeps in flight per SM (14B matrices, one process)");
    codec_table();
    rotation_table();
    sass_table();
    ncu_table();
    ncu_compare_table("h200_ncu_leech_p14s.csv",
                      "Nsight Compute: the fused gate|up kernels of Planes14, Planes14S and I8x (before the all-rows epilogue)");
    ncu_compare_table("h200_ncu_p14s_controls.csv",
                      "Nsight Compute: Planes14S on 14B shapes beside its decode-only and loads-only controls "
                      "(ball-uniform blocks, one CTA per row group)");
    ncu_compare_table("h200_ncu_head_o.csv",
                      "Nsight Compute: the int8 output head (two loops) and the 14B o GEMV at the tuning table's geometry "
                      "(the verify launch)");
    ncu_compare_table("h200_p14s_split_controls_ncu.csv",
                      "Nsight Compute: the 14B down with warp groups (107 CTAs) and with the split over segments (132 CTAs), "
                      "GEMV and loads-only control (the verify launch)");
    engine_table();
    /* the same arms on the H100 (the H200's tuning rows borrowed): bytes a third slower to
     * arrive than on the H200, so what scales less than the read bound is not bytes */
#define H100_ARMS                                                                                                  \
    "f16,cublas,noweights,stream_p14s,stream_p14s3,leech_p14,leech_p14s,leech_p14s_loads,leech_p14s_decode,"       \
    "leech_p14s3,leech_i8,leech_p12x,leech_slot32,leech_p14rec"
#define H100_BALL_ARMS                                                                                             \
    "stream_p14s3,leech_p14s@ball,leech_p14s_loads@ball,leech_p14s_decode@ball,leech_p14s3@ball,"                  \
    "leech_p14s3_loads@ball,leech_p14s3_loads_nox@ball,leech_p14s3_loads_nopro@ball,leech_p14s3_decode@ball,"      \
    "leech_p14s3_smem@ball"
    gemv_table("h100_gemv_14b.csv", "GEMV, one Qwen3-14B decoder layer on the H100 (one process per commit)", "14B",
               H100_ARMS);
    gemv_table("h100_gemv_14b_ball.csv",
               "GEMV, Qwen3-14B layer on the H100, blocks drawn over the ball (one process per commit)", "14B",
               "f16," H100_BALL_ARMS);
    {
        const char *h200[] = { "h200_gemv_14b_p14s.csv", "h200_gemv_14b.csv", "h200_gemv_14b_ball.csv" };
        device_table("h100_gemv_14b.csv", "class-uniform blocks", h200, 3, H100_ARMS);
        device_table("h100_gemv_14b_ball.csv", "blocks drawn over the ball", h200, 3, H100_BALL_ARMS);
    }
    h100_table();
    quality_table();
}

#define BEGIN "<!-- tables:begin (generated by tools/readme_tables from bench/results; do not edit) -->\n"
#define END "<!-- tables:end -->"

static void usage(FILE *f)
{
    fprintf(f, "usage: readme_tables [RESULTS_DIR] | readme_tables --check README [RESULTS_DIR] | --update README [DIR]\n"
               "The README's tables from the CSVs in RESULTS_DIR (default bench/results): printed, checked\n"
               "against README's tables block (exit 1 when they differ), or written into it.\n");
}

int main(int argc, char **argv)
{
    lr_program_init("readme_tables");
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    const int check = argc > 1 && !strcmp(argv[1], "--check"), update = argc > 1 && !strcmp(argv[1], "--update");
    const int first = check || update ? 2 : 1; /* README's index for --check / --update */
    if ((check || update) && argc < 3) {
        fprintf(stderr, "readme_tables: %s needs the README file\n", argv[1]);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && i >= first) {
            fprintf(stderr, "readme_tables: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    if (argc > first + (check || update ? 2 : 1)) {
        fprintf(stderr, "readme_tables: too many arguments (%s)\n", argv[argc - 1]);
        usage(stderr);
        return 2;
    }
    if (argc > first + (check || update ? 1 : 0)) g_dir = argv[argc - 1];
    struct stat st;
    if (stat(g_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "readme_tables: %s: %s\n", g_dir, stat(g_dir, &st) != 0 ? strerror(errno) : "not a folder");
        return 2;
    }
    generate();
    if (!g_loaded) {
        fprintf(stderr, "readme_tables: %s holds none of the results CSVs the tables are made from\n", g_dir);
        return 2;
    }
    if (g_full) {
        fprintf(stderr, "readme_tables: the tables outgrew their %zu-byte buffer (tools/readme_tables.c g_out)\n",
                sizeof g_out);
        return 2;
    }
    if (!check && !update) {
        fputs(g_out, stdout);
        return lr_stdout_check("readme_tables", 0);
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) { fprintf(stderr, "readme_tables: cannot read %s\n", argv[2]); return 2; }
    static char readme[1 << 20];
    size_t n = fread(readme, 1, sizeof readme - 1, f);
    const int more = fgetc(f) != EOF;
    fclose(f);
    if (more) { fprintf(stderr, "readme_tables: %s is larger than %zu bytes\n", argv[2], sizeof readme - 1); return 2; }
    readme[n] = 0;
    char *b = strstr(readme, BEGIN), *e = b ? strstr(b, END) : NULL;
    if (!b || !e) { fprintf(stderr, "readme_tables: %s has no tables block\n", argv[2]); return 2; }
    b += strlen(BEGIN);
    if (check) {
        if ((size_t)(e - b) != g_len || memcmp(b, g_out, g_len)) {
            fprintf(stderr, "readme_tables: %s tables differ from bench/results: run tools/readme_tables --update %s\n",
                    argv[2], argv[2]);
            return 1;
        }
        return 0;
    }
    /* whole or not at all: a full disk once cut the README short here */
    lr_afile o;
    if (lr_afile_open(&o, argv[2])) {
        fprintf(stderr, "readme_tables: %s\n", lr_errmsg());
        return 2;
    }
    fwrite(readme, 1, (size_t)(b - readme), o.f);
    fwrite(g_out, 1, g_len, o.f);
    fputs(e, o.f);
    if (lr_afile_commit(&o)) {
        fprintf(stderr, "readme_tables: %s\n", lr_errmsg());
        return 2;
    }
    return 0;
}
