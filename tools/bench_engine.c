/* bench_engine: decode tokens/s of the GPU engine on synthetic Qwen3 models
 * (or a given artifact), greedy, batch 1, step graph replayed per token.
 * Writes CSV rows with the common columns plus tok_s. */
#include "jit/timeline.h"
#include "kernels/gemv_leech.h"
#include "kernels/read_bound.h"
#include "kernels/tuning.h"
#include "loader/synthetic.h"
#include "rt/cu.h"
#include "rt/engine.h"
#include "rt/sampler.h"
#include "rt/timeline.h"
#include "util/args.h"
#include "util/benchcsv.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/strlist.h"
#include "util/program.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_engine [-c CONFIGS | -m MODEL] [-n TOKENS] [--csv FILE]\n"
               "  -c LIST      synthetic Qwen3 configs to generate and time (default 4B)\n"
               "  -m MODEL     time this artifact instead (CSV rows name its model, e.g. qwen3-14B-synthetic)\n"
               "  -n TOKENS    decode steps timed (default 128, after 8 warm-up steps)\n"
               "  --proj P     synthetic projections: leech (2-bit Leech), f16, or both (default)\n"
               "  --residual R synthetic models' residual stream: rotated (default, as gen_synthetic's; rows\n"
               "               name the config CONFIG-rotated) or plain\n"
               "  --layout L   VRAM layouts of the Leech matrices, comma-separated: planes14s3, planes14s,\n"
               "               planes14, default (the engine's per-matrix choice; arm engine_leech)\n"
               "               (default planes14s)\n"
               "  --csv FILE   append results (columns of bench_gemv plus tok_s, variant and tuning_rows:\n"
               "               whose tuning-table rows the GEMVs got); refused when FILE has another header\n"
               "  --env NAME=V1,V2,...  run each once per value with the environment variable NAME set\n"
               "               (e.g. LEECHRT_FUSE=0,1), same artifact and process; the variant column names it.\n"
               "               Given up to 4 times: every combination (e.g. --env LEECHRT_ATT_THREADS=256,1024\n"
               "               --env LEECHRT_ATT_SPLITS=1,16 runs 4 variants). A value - leaves NAME unset\n"
               "               (its default)\n"
               "  --timeline FILE  also run the timeline probe (rt/timeline.h): the greedy step's graph with\n"
               "               every kernel's timeline twin, one replay recorded per CTA; one row per kernel\n"
               "               launch appended to FILE (when its first CTA entered, when the PDL wait let it\n"
               "               go, when its last CTA left, how much it moved the step's end)\n"
               "  --timeline-ctas FILE  with --timeline: one row per CTA appended to FILE\n"
               "  -h, --help\n");
}

static double g_bound; /* GB/s, measured in this process */
static lr_csv g_tl, g_tl_ctas; /* --timeline, --timeline-ctas (f NULL: off) */

#define TL_HEADER "date,commit,device,arm,model,variant,seq,phase,kernel,grid,entry0_us,entry1_us,wait_us,exit_med_us,exit1_us,exposed_us,late_ctas"
#define TL_CTAS_HEADER "date,commit,device,arm,model,variant,seq,block,smid,entry_us,wait_us,exit_us"

/* The timeline probe on e's greedy step (--timeline): rows per launch (and
 * per CTA), and per phase on stdout: the time it moved the step's end, the
 * handoff (its first CTA past the wait after the launch before it ended)
 * and its CTAs that entered after that. vq: the variant, quoted, or "". */
static int timeline(lr_engine *e, const char *arm, const char *label, const char *vq, double graph_us, lr_csv *csv,
                    const char *vc)
{
    uint64_t *raw;
    size_t n, nph, nl = 0;
    int *ph;
    double us = 0;
    int rc = lr_engine_gpu_timeline(e, 20, &raw, &n, &ph, &nph, &us);
    if (rc) return rc;
    lr_tl_cta *c = malloc(sizeof *c * (n + 1));
    lr_tl_launch *L = NULL;
    if (!c) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    if (!rc) lr_tl_unpack(raw, n, c), rc = lr_tl_launches(c, n, &L, &nl);
    if (!rc && nl != nph) rc = LR_FAIL(LR_EINVAL, "timeline: %zu launches recorded, %zu captured", nl, nph);
    if (!rc) {
        double exp_ph[32] = { 0 }, hand[32] = { 0 }, span = 0;
        unsigned cnt[32] = { 0 }, late[32] = { 0 };
        for (size_t i = 0; i < nl; i++) {
            const int p = ph[i] >= 0 && ph[i] < 32 ? ph[i] : 31;
            const char *pn = lr_engine_gpu_phase_name(p);
            const double hd = i ? L[i].wait - L[i - 1].exit1 : 0;
            exp_ph[p] += L[i].exposed, hand[p] += hd, cnt[p]++, late[p] += L[i].late, span += L[i].exposed;
            lr_csv_row(&g_tl, "%s,%s,%s,%zu,%s,%s,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%u", arm, label, vq, i, pn ? pn : "?",
                       lr_jit_timeline_name(L[i].mod), L[i].grid, L[i].entry0, L[i].entry1, L[i].wait, L[i].exit_med,
                       L[i].exit1, L[i].exposed, L[i].late);
        }
        if (g_tl_ctas.f) {
            const uint64_t t_start = lr_tl_start(c, n);
            for (size_t i = 0; i < nl; i++)
                for (size_t j = L[i].first; j < L[i].first + L[i].grid; j++) {
                    const double t = 1e-3 * (double)(c[j].t0 - t_start);
                    lr_csv_row(&g_tl_ctas, "%s,%s,%s,%zu,%u,%u,%.3f,%.3f,%.3f", arm, label, vq, i, c[j].block, c[j].smid, t,
                               c[j].dwait == LR_TL_NO_WAIT ? t : t + 1e-3 * c[j].dwait, t + 1e-3 * c[j].dexit);
                }
        }
        /* the probe's own graph, replayed like the real one: what it costs */
        lr_csv_row(csv, "%s,%s,graph_timeline,,,,%.1f,,,,%s", arm, label, us, vc);
        printf("  timeline (one greedy step, every kernel's CTAs timed; the probe's graph %.1f us against %.1f): "
               "%zu launches, %zu CTAs, %.1f us from the first CTA in to the last out\n",
               us, graph_us, nl, n, span);
        printf("  per phase: us the step's end moved / us from the launch before ending to the first CTA past "
               "the wait (sum) / CTAs in after that:\n   ");
        for (int p = 0; p < 32; p++)
            if (cnt[p]) {
                const char *pn = lr_engine_gpu_phase_name(p);
                printf(" %s %.0f/%.0f/%u", pn ? pn : "?", exp_ph[p], hand[p], late[p]);
            }
        printf("\n");
    }
    free(L), free(c), free(raw), free(ph);
    return rc;
}


/* --env NAME=V1,V2,... (up to MAX_ENV of them): see run_variants_from */
#define MAX_ENV 4
#define ENV_LEN 1024
static char g_env[MAX_ENV][ENV_LEN];
static int g_nenv;

/* variant: the variant column (",\"NAME=V\"" under --env), or "" */
static int run(const char *path, const char *label, const char *arm, int layout, int n, lr_csv *csv,
               const char *variant)
{
    lr_model *m;
    double t0 = lr_now();
    int rc = lr_model_open(path, LR_MODEL_SKIP_DATA, &m);
    if (rc) return rc;
    lr_engine_opts o = { .max_context = n + 16, .leech_layout = layout };
    lr_engine *e;
    rc = lr_engine_gpu_ops.open(m, &o, &e);
    if (rc) { lr_model_close(m); return rc; }
    double t_open = lr_now() - t0;
    /* the columns after tok_s: the variant (empty without --env), then whose
       tuning rows the GEMVs got, read after the open (a variant may set
       LEECHRT_TUNE_SIBLING) */
    char rows_desc[160], vc[sizeof rows_desc + MAX_ENV * (128 + ENV_LEN + 2) + 16];
    lr_tuning_current_rows_desc(rows_desc, sizeof rows_desc);
    snprintf(vc, sizeof vc, "%s,%s", *variant ? variant : ",", rows_desc);
    const lr_model_config *c = lr_model_cfg(m);
    const float *lg;
    int32_t tok = 1, nx = 0;
    /* The step that brings the logits back for a host sampler, then (from
       position 0 again, so both see the same contexts) the greedy step the
       launcher runs: argmax on the device, 8 bytes back. The graph replays
       below repeat the last greedy step's position, as before the greedy
       step existed. */
    for (int i = 0; i < 8 && !rc; i++) rc = e->ops->step(e, tok, &lg), tok = rc ? tok : lr_argmax(lg, (int)c->vocab);
    double t2 = lr_now();
    for (int i = 0; i < n && !rc; i++) rc = e->ops->step(e, tok, &lg), tok = rc ? tok : lr_argmax(lg, (int)c->vocab);
    double dt2 = lr_now() - t2;
    if (!rc) rc = e->ops->reset(e);
    tok = 1;
    for (int i = 0; i < 8 && !rc; i++) rc = e->ops->step_greedy(e, tok, &nx), tok = rc ? tok : nx;
    double t1 = lr_now();
    for (int i = 0; i < n && !rc; i++) rc = e->ops->step_greedy(e, tok, &nx), tok = rc ? tok : nx;
    double dt = lr_now() - t1;
    if (!rc) {
        double tps = n / dt, us = 1e6 * dt / n, gbps = e->bytes_per_step / (us * 1e3);
        double us2 = 1e6 * dt2 / n, gbps2 = e->bytes_per_step / (us2 * 1e3);
        printf("%-16s %-6s %3u layers: open %.1f s, %.1f tok/s greedy (%.3f ms/token, %.0f launches/token with the argmax, %s), "
               "%.2f GB weights/token = %.0f GB/s = %.1f%% of the read bound; %.1f tok/s with the logits to the host\n",
               arm, label, c->n_layers, t_open, tps, 1e-3 * us, e->launches_per_step + 1, e->pdl ? "PDL" : "no PDL",
               e->bytes_per_step / 1e9, gbps, 100 * gbps / g_bound, 1e6 / us2);
        printf("  tuning rows: %s\n", rows_desc);
        lr_csv_row(csv, "%s,%s,step,,,,%.1f,%.1f,%.2f,,%.2f%s", arm, label, us, gbps, 100 * gbps / g_bound, tps, vc);
        lr_csv_row(csv, "%s,%s,step_logits,,,,%.1f,%.1f,%.2f,,%.2f%s", arm, label, us2, gbps2, 100 * gbps2 / g_bound,
                   1e6 / us2, vc);
        /* the open (parse, unfold, form conversion, JIT, upload, graph capture) in us */
        lr_csv_row(csv, "%s,%s,open,,,,%.1f,,,,%s", arm, label, 1e6 * t_open, vc);
        double gus = 0, gus2 = 0;
        if (!(rc = lr_engine_gpu_graph_greedy_us(e, 20, &gus)) && !(rc = lr_engine_gpu_graph_us(e, 20, &gus2))) {
            printf("  step graph replayed back to back: %.1f us greedy, %.1f with the logits' copy (GPU time; the "
                   "steps add %.1f / %.1f us of host work)\n", gus, gus2, us - gus, us2 - gus2);
            lr_csv_row(csv, "%s,%s,graph,,,,%.1f,,,,%s", arm, label, gus, vc);
            lr_csv_row(csv, "%s,%s,graph_logits,,,,%.1f,,,,%s", arm, label, gus2, vc);
        }
        if (!rc && g_tl.f) {
            /* the timeline's variant column alone (variant: ,"NAME=V"; vc also carries
               tuning_rows, which the timeline CSVs do not have) */
            const char *vq = variant[0] ? variant + 1 : "";
            if ((rc = timeline(e, arm, label, vq, gus, csv, vc))) {
                printf("  timeline: not measured: %s\n", lr_errmsg());
                lr_clear_error(), rc = 0;
            }
        }
        /* the launch floor: the same graph with every kernel an empty one of
           its shape (a failure here is reported, not fatal: it is a control) */
        double fus = 0;
        if (!rc) {
            if (!lr_engine_gpu_graph_floor_us(e, 20, &fus)) {
                printf("  launch floor: %.1f us, the greedy graph with every kernel an empty one of its shape "
                       "(%.0f launches, %.2f us each; %.0f%% of the graph)\n",
                       fus, e->launches_per_step + 1, fus / (e->launches_per_step + 1), gus > 0 ? 100 * fus / gus : 0);
                lr_csv_row(csv, "%s,%s,graph_floor,,,,%.1f,,,,%s", arm, label, fus, vc);
            } else {
                printf("  launch floor: not measured: %s\n", lr_errmsg());
                lr_clear_error();
            }
            /* the same with a flag handoff (a counter in memory) in place of
               the PDL wait: what a flag-chained or persistent step would pay */
            double flus = 0;
            unsigned ctas = 0, counted = 0;
            const int frc = lr_engine_gpu_graph_floor_flag_us(e, 20, &flus, &ctas, &counted);
            if (!frc && counted == ctas) {
                printf("  launch floor, flag handoff: %.1f us (%u CTAs counted; %+.2f us per launch against the PDL "
                       "floor)\n",
                       flus, counted, fus > 0 ? (flus - fus) / (e->launches_per_step + 1) : 0);
                lr_csv_row(csv, "%s,%s,graph_floor_flag,,,,%.1f,,,,%s", arm, label, flus, vc);
            } else {
                printf("  launch floor, flag handoff: not measured: %s\n",
                       frc ? lr_errmsg() : "the counter disagrees with the CTAs launched");
                lr_clear_error();
            }
        }
        /* Where the time goes: each phase of every layer replayed alone, and
           the whole graph without it (what it costs inside the chain). */
        double ph[16] = { 0 }, sum = 0;
        if (!rc && !(rc = lr_engine_gpu_phases(e, 20, ph, 16))) {
            printf("  phases (us/token, each alone):");
            for (int i = 0; lr_engine_gpu_phase_name(i); i++) {
                printf(" %s %.0f", lr_engine_gpu_phase_name(i), ph[i]);
                sum += ph[i];
                lr_csv_row(csv, "%s,%s,%s,,,,%.1f,,,,%s", arm, label, lr_engine_gpu_phase_name(i), ph[i], vc);
            }
            printf("; sum %.0f vs step %.0f\n", sum, us);
            printf("  phases (us/token, the graph minus the graph without it):");
            for (int i = 0; lr_engine_gpu_phase_name(i) && !rc; i++) {
                double w = 0;
                if (ph[i] == 0) continue; /* no launches in this engine */
                if ((rc = lr_engine_gpu_graph_without_us(e, i, 20, &w))) break;
                printf(" %s %.0f", lr_engine_gpu_phase_name(i), gus - w);
                lr_csv_row(csv, "%s,%s,without_%s,,,,%.1f,,,,%s", arm, label, lr_engine_gpu_phase_name(i), w, vc);
            }
            printf("\n");
        }
    }
    e->ops->close(e);
    lr_model_close(m);
    return rc;
}

/* --env NAME=V1,V2,... (up to MAX_ENV of them): each run repeated once per
 * combination of values, on the same artifact in the same process (a
 * side-by-side comparison); the variant column lists the settings. */
static int run_variants_from(int d, char *vc, size_t vlen, const char *path, const char *label, const char *arm,
                             int layout, int n, lr_csv *csv)
{
    if (d == g_nenv) {
        if (!g_nenv) return run(path, label, arm, layout, n, csv, "");
        char col[MAX_ENV * (128 + sizeof g_env[0] + 2) + 8];
        printf("-- %s\n", vc);
        snprintf(col, sizeof col, ",\"%s\"", vc);
        return run(path, label, arm, layout, n, csv, col);
    }
    const char *eq = strchr(g_env[d], '=');
    char name[128], vals[sizeof g_env[0]];
    snprintf(name, sizeof name, "%.*s", (int)(eq - g_env[d]), g_env[d]);
    snprintf(vals, sizeof vals, "%s", eq + 1);
    size_t at = strlen(vc);
    int rc = 0;
    for (char *save = NULL, *v = strtok_r(vals, ",", &save); v && !rc; v = strtok_r(NULL, ",", &save)) {
        if (!strcmp(v, "-")) unsetenv(name); /* the default */
        else setenv(name, v, 1);
        snprintf(vc + at, vlen - at, "%s%s=%s", at ? " " : "", name, v);
        rc = run_variants_from(d + 1, vc, vlen, path, label, arm, layout, n, csv);
    }
    vc[at] = 0;
    return rc;
}

static int run_variants(const char *path, const char *label, const char *arm, int layout, int n, lr_csv *csv)
{
    char vc[MAX_ENV * (128 + sizeof g_env[0] + 2)] = "";
    return run_variants_from(0, vc, sizeof vc, path, label, arm, layout, n, csv);
}

/* The synthetic artifact being timed (GBs: 64 GB for 32B f16), removed when
 * a run is interrupted or killed by a time limit, not only at its end. */
static char g_artifact[256];

static void on_signal(int sig)
{
    if (g_artifact[0]) unlink(g_artifact); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    lr_program_init("bench_engine");
    const char *cfgs = "4B", *model = NULL, *csvp = NULL, *proj = "both", *layouts = "planes14s", *tlp = NULL, *tlcp = NULL;
    int n = 128, rres = -1; /* --residual: -1 unset (rotated), 0 plain, 1 rotated */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        static const char *const known[] = { "-c", "-m", "-n", "--csv", "--timeline", "--timeline-ctas", "--env",
                                             "--layout", "--residual", "--proj", NULL };
        if (!lr_arg_in(a, known)) { fprintf(stderr, "bench_engine: unknown option %s (see --help)\n", a); return 2; }
        if (!v) { fprintf(stderr, "bench_engine: %s needs a value\n", a); usage(stderr); return 2; }
        i++;
        if (!strcmp(a, "-c")) cfgs = v;
        else if (!strcmp(a, "-m")) model = v;
        else if (!strcmp(a, "-n")) { if (lr_arg_int("bench_engine", a, v, 1, 1048576, &n)) return 2; }
        else if (!strcmp(a, "--csv")) csvp = v;
        else if (!strcmp(a, "--timeline")) tlp = v;
        else if (!strcmp(a, "--timeline-ctas")) tlcp = v;
        else if (!strcmp(a, "--env")) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1] || strlen(v) >= sizeof g_env[0] || (size_t)(eq - v) >= 128) {
                fprintf(stderr, "bench_engine: --env %s: expected NAME=V1,V2,...\n", v);
                return 2;
            }
            if (g_nenv == MAX_ENV) {
                fprintf(stderr, "bench_engine: --env %s: at most %d settings\n", v, MAX_ENV);
                return 2;
            }
            snprintf(g_env[g_nenv++], sizeof g_env[0], "%s", v);
        }
        else if (!strcmp(a, "--layout")) {
            char l[256];
            snprintf(l, sizeof l, "%s", v);
            for (char *t = strtok(l, ","); t; t = strtok(NULL, ","))
                if (strcmp(t, "planes14s3") && strcmp(t, "planes14s") && strcmp(t, "planes14") && strcmp(t, "default")) {
                    fprintf(stderr, "bench_engine: --layout %s: expected planes14s3, planes14s, planes14 or default\n", t);
                    return 2;
                }
            layouts = v;
        }
        else if (!strcmp(a, "--residual")) {
            if (strcmp(v, "plain") && strcmp(v, "rotated")) { fprintf(stderr, "bench_engine: --residual plain|rotated\n"); return 2; }
            rres = !strcmp(v, "rotated");
        }
        else if (!strcmp(a, "--proj")) {
            if (strcmp(v, "leech") && strcmp(v, "f16") && strcmp(v, "both")) { fprintf(stderr, "bench_engine: --proj leech|f16|both\n"); return 2; }
            proj = v;
        }
        else { fprintf(stderr, "bench_engine: unknown option %s\n", a); usage(stderr); return 2; }
    }
    if (n < 1) n = 1;
    if (tlcp && !tlp) { fprintf(stderr, "bench_engine: --timeline-ctas needs --timeline\n"); return 2; }
    if (model && rres >= 0) { fprintf(stderr, "bench_engine: --residual is for -c (an artifact given with -m has its own)\n"); return 2; }
    if (rres < 0) rres = 1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (lr_cu_init(0)) { fprintf(stderr, "bench_engine: %s\n", lr_errmsg()); return 1; }
    if (lr_read_bound_gbps(0, 10, &g_bound)) { fprintf(stderr, "bench_engine: read bound: %s\n", lr_errmsg()); return 1; }
    printf("read bound (probe, verified): %.0f GB/s\n", g_bound);
    const lr_device_info *d = lr_cu_device();
    /* whose tuning rows the engine's opens will take (kernels/tuning.h) */
    if (lr_tuning_sibling_set("bench_engine: LEECHRT_TUNE_SIBLING", getenv("LEECHRT_TUNE_SIBLING"))) {
        fprintf(stderr, "bench_engine: %s\n", lr_errmsg());
        return 2;
    }
    char rows_desc[160];
    lr_tuning_current_rows_desc(rows_desc, sizeof rows_desc);
    printf("tuning rows: %s\n", rows_desc);
    char dev[200];
    snprintf(dev, sizeof dev, "%s (%s)", d->name, d->arch);
    lr_csv csv;
    if (lr_csv_open(&csv, csvp, LR_CSV_HEADER ",tok_s,variant,tuning_rows", dev)) { fprintf(stderr, "bench_engine: %s\n", lr_errmsg()); return 1; }
    /* the bound the rows' % are of, as bench_gemv writes it (the tables read rows by matrix name) */
    lr_csv_row(&csv, "read_bound,,probe,,,,,%.1f,100.0,,,,", g_bound);
    if (tlp && lr_csv_open(&g_tl, tlp, TL_HEADER, dev)) { fprintf(stderr, "bench_engine: %s\n", lr_errmsg()); return 1; }
    if (tlcp && lr_csv_open(&g_tl_ctas, tlcp, TL_CTAS_HEADER, dev)) { fprintf(stderr, "bench_engine: %s\n", lr_errmsg()); return 1; }
    int rc = 0;
    static const struct { const char *name, *arm; int layout; } lays[] = {
        { "planes14s3", "engine_leech_p14s3", LR_LEECH_DEV_P14S3 },
        { "planes14s", "engine_leech_p14s", LR_LEECH_DEV_P14S },
        { "planes14", "engine_leech_p14", LR_LEECH_DEV_P14 },
        { "default", "engine_leech", LR_LEECH_DEV_DEFAULT } };
    if (model) {
        /* rows are labelled with the artifact's model name (commas would split the CSV) */
        char label[64] = "model";
        lr_model *m;
        if (lr_model_open(model, LR_MODEL_SKIP_DATA, &m) == LR_OK) { /* the header only */
            snprintf(label, sizeof label, "%s", lr_model_cfg(m)->name);
            for (char *c = label; *c; c++)
                if (*c == ',' || *c == '"' || *c == '\n') *c = ' ';
            lr_model_close(m);
        }
        for (int k = 0; k < 4 && !rc; k++)
            if (lr_list_has(layouts, lays[k].name)) rc = run_variants(model, label, lays[k].arm, lays[k].layout, n, &csv);
    }
    else {
        char list[256];
        snprintf(list, sizeof list, "%s", cfgs);
        for (char *s = strtok(list, ","); s && !rc; s = strtok(NULL, ",")) {
            lr_model_config c;
            if ((rc = lr_synth_config(s, &c))) break;
            char path[256], label[64];
            snprintf(path, sizeof path, "/tmp/bench_engine_%s_%d.lrt", s, (int)getpid());
            snprintf(label, sizeof label, "%s%s", s, rres ? "-rotated" : "");
            snprintf(g_artifact, sizeof g_artifact, "%s", path);
            for (int f16 = 0; f16 < 2 && !rc; f16++) {
                if ((f16 && !strcmp(proj, "leech")) || (!f16 && !strcmp(proj, "f16"))) continue;
                lr_synth_opts o = { .seed = 1, .gain_bits = 1, .proj_f16 = f16, .rotated_residual = rres };
                if ((rc = lr_synth_write(path, &c, &o))) break;
                if (f16) rc = run_variants(path, label, "engine_f16", 0, n, &csv);
                for (int k = 0; k < 4 && !f16 && !rc; k++)
                    if (lr_list_has(layouts, lays[k].name)) rc = run_variants(path, label, lays[k].arm, lays[k].layout, n, &csv);
                unlink(path);
            }
            g_artifact[0] = 0;
        }
    }
    const int w1 = lr_csv_close(&csv), w2 = tlp ? lr_csv_close(&g_tl) : 0, w3 = tlcp ? lr_csv_close(&g_tl_ctas) : 0;
    if (!rc) rc = w1 ? w1 : w2 ? w2 : w3; /* (a failed write: the message is the last one's) */
    if (rc) { fprintf(stderr, "bench_engine: %s\n", lr_errmsg()); return 1; }
    return 0;
}
