/* tune_gemv: the launch-geometry sweep. For each shape, every candidate
 * geometry of an arm is prepared, verified (every row against the f64 host
 * reference) and timed (graph replays over distinct weight copies); the
 * winners are written as a new kernels/tuning_table.c (keeping entries for
 * other devices, arms and shapes) and every candidate as CSV. */
#include "kernels/gemv_arm.h"
#include "kernels/kernels.h"
#include "kernels/read_bound.h"
#include "kernels/tuning.h"
#include "rt/cu.h"
#include "util/args.h"
#include "util/atomic_file.h"
#include "util/benchcsv.h"
#include "util/err.h"
#include "util/read_file.h"
#include "util/strlist.h"
#include "util/program.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: tune_gemv --arm NAME [options]\n"
               "  --models LIST     Qwen3 sizes (default 14B)\n"
               "  --matrices LIST   q,k,v,o,gate,up,down,qkv,gateup (default all)\n"
               "  --threads LIST    candidate CTA sizes (default 128,256)\n"
               "  --rpw LIST        rows per warp (default 1,2,4)\n"
               "  --unroll LIST     loads in flight (default 2,4)\n"
               "  --tile LIST       x tile (f16) / accumulator chains (leech_p14); default 0 = the arm's\n"
               "  --extra0 LIST     arm knob 0 (f16: ksplit; default 1,2,4)\n"
               "  --extra1 LIST     arm knob 1 (f16: 1 = x via L1, 2 = x in smem; default 1,2)\n"
               "  --extra2 LIST     arm knob 2 (leech_p14s: unused since the L2 prefetch was removed)\n"
               "  --extra3 LIST     arm knob 3 (leech_p14s: 1 = x staged per warp, 2 = epilogue fetched ahead,\n"
               "                    3 = both, -1 = none; + 8 x warp groups, 512 balanced split, 1024 split\n"
               "                    over segments, 2048 segments round-robin, 4096 prologue loads\n"
               "                    batched, 65536 x side warps (1-4), 524288 the int8 mode,\n"
               "                    1048576 the int8 mode over the 3-bit form; in [-1024, 1900543];\n"
               "                    bits 13 and 14, removed features, do nothing)\n"
               "  --extra4 LIST     arm knob 4 (leech_p14s: unused since the split over CTAs was removed)\n"
               "  --minb LIST       Leech arms: CTAs per SM the registers must allow (0 = the arm's rule;\n"
               "                    the compiler caps registers, spilling if it must); default 0\n"
               "  --table FILE      merge the new rows into this tuning table (C source, as tune_gemv writes\n"
               "                    it; where FILE does not exist, into the table compiled in)\n"
               "  --from-csv FILE   no sweep (no GPU needed): the table's rows for --arm are the fastest\n"
               "                    candidate per device and shape in this tune CSV (e.g. several sweeps\n"
               "                    of different candidate sets, or bench/results/h200_tune_ARM.csv)\n"
               "  --commits LIST    with --from-csv: only rows of these commits\n"
               "  --ball            Leech arms: blocks drawn over the ball, like real weights and the\n"
               "                    synthetic models (CSV rows named ARM@ball; with --from-csv, only\n"
               "                    those rows) instead of class-uniform (6x the exceptions)\n"
               "  --model FILE      Planes14S arms: time on the layer-0 weights of this artifact (the\n"
               "                    engine's; each shape its fused projections) instead of random blocks\n"
               "                    (CSV rows named ARM@model; with --from-csv, only those rows)\n"
               "  --pdl             time the copies as a chain of programmatic dependent launches, as the\n"
               "                    engine's step runs its kernels (CSV rows named ARM@pdl; sm_90)\n"
               "  --csv FILE        append every candidate as CSV\n"
               "  --reps N          graph replays per timing (default 10)\n"
               "  --vary-side       Planes14S arms: instead of the lists above, the tuning table's geometry\n"
               "                    for each shape with 0-4 side warps (the engine's sweep: with --model\n"
               "                    and --pdl; tools/gpu/h200.sh tune-engine); prints the geometry in\n"
               "                    use as \"now ARM:RxC=KNOBS own|fallback\" (fallback: another arm's row)\n"
               "  --copies N        distinct weight copies the timing rotates through (default: at least\n"
               "                    40, like an engine's layers, and 4x the L2 in all; at most 64)\n"
               "  -h, --help\n");
}

typedef struct { const lr_gemv_arm *arm; void *st; int copies; CUdeviceptr x, y; } one_run;
static int enqueue(void *a, int i, void *stream)
{
    one_run *r = a;
    return r->arm->launch(r->st, i % r->copies, r->x, r->y, stream);
}

#define MAXW 256
/* new rows, each holding its own device and arm strings (row.device/arm point into it) */
static lr_tuning_pick g_new[MAXW];
static int g_nnew;

/* Appends to buf (cap bytes) at *len; past cap only *len grows, so the
 * caller sees the overflow instead of a write past the buffer. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*len < cap ? buf + *len : NULL, *len < cap ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) *len += (size_t)k;
}

static void put_row(char *buf, size_t cap, size_t *len, const lr_tuning_row *t)
{
    put(buf, cap, len, "    { \"%s\", %d, \"%s\", %d, %d, { %d, %d, %d, %d, %d, %d, %d, %d, %d, %d }, %.2f },\n", t->device,
        t->cc, t->arm, t->rows, t->cols, t->knobs[0], t->knobs[1], t->knobs[2], t->knobs[3], t->knobs[4], t->knobs[5],
        t->knobs[6], t->knobs[7], t->knobs[8], t->knobs[9], t->us);
}

/* The table in `path` (as tune_gemv wrote it) with the rows of g_new (each
 * with its own device and cc) replacing those of the same device, arm and
 * shape; where path does not exist yet, the table compiled into this
 * program. Merging into the file itself keeps what an earlier merge (another
 * arm, no rebuild between) put there. */
static int write_table(const char *path)
{
    int nbase = lr_tuning_table_n, rc;
    lr_tuning_pick *file_rows = NULL; /* the file's rows, else NULL: the compiled-in table */
    if (access(path, F_OK) == 0) {
        void *text;
        size_t tl;
        if ((rc = lr_read_file(path, &text, &tl))) return rc;
        enum { MAXT = 4096 };
        file_rows = malloc(MAXT * sizeof *file_rows);
        rc = file_rows ? lr_tuning_table_parse(text, tl, path, file_rows, MAXT, &nbase) : LR_FAIL(LR_ENOMEM, "out of memory");
        free(text);
        if (rc) { free(file_rows); return rc; }
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    if (!buf) { free(file_rows); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    put(buf, cap, &len,
        "/* Generated by tools/tune_gemv from sweeps on the GPU machine; do not edit by\n"
        " * hand. Columns: device, cc, arm, rows, cols, {threads, rpw, unroll, tile,\n"
        " * extra0, extra1, minb, extra2, extra3, extra4}, microseconds. */\n#include \"kernels/tuning.h\"\n\nconst lr_tuning_row lr_tuning_table[] = {\n");
    int n = 0;
    for (int i = 0; i < nbase; i++) {
        const lr_tuning_row *t = file_rows ? &file_rows[i].row : &lr_tuning_table[i];
        int replaced = 0;
        for (int k = 0; k < g_nnew; k++)
            if (t->cc == g_new[k].row.cc && !strcmp(t->device, g_new[k].device) && !strcmp(t->arm, g_new[k].arm) &&
                t->rows == g_new[k].row.rows && t->cols == g_new[k].row.cols)
                replaced = 1;
        if (replaced) continue;
        put_row(buf, cap, &len, t);
        n++;
    }
    free(file_rows);
    for (int k = 0; k < g_nnew; k++, n++) {
        lr_tuning_row t = g_new[k].row;
        t.device = g_new[k].device, t.arm = g_new[k].arm;
        put_row(buf, cap, &len, &t);
    }
    if (n == 0) put(buf, cap, &len, "    { 0, 0, 0, 0, 0, { 0 }, 0 },\n");
    put(buf, cap, &len, "};\nconst int lr_tuning_table_n = %d;\n", n);
    rc = len < cap ? lr_write_file_atomic(path, buf, len) : LR_FAIL(LR_ERANGE, "%s: table text past %zu bytes", path, cap);
    free(buf);
    return rc;
}

#define MAXC 4096
static int cand[MAXC][LR_TUNE_KNOBS];

int main(int argc, char **argv)
{
    lr_program_init("tune_gemv");
    const char *armname = NULL, *models = "14B", *mats = NULL, *table = NULL, *csv = NULL, *from = NULL, *commits = NULL,
               *model_path = NULL;
    int th[8] = { 128, 256 }, nth = 2, rp[8] = { 1, 2, 4 }, nrp = 3, un[8] = { 2, 4 }, nun = 2;
    int e0[8] = { 1, 2, 4 }, ne0 = 3, e1[8] = { 1, 2 }, ne1 = 2, tl[8] = { 0 }, ntl = 1, mb[8] = { 0 }, nmb = 1, reps = 10;
    int e2[8] = { 0 }, ne2 = 1, e3[8] = { 0 }, ne3 = 1, e4[8] = { 0 }, ne4 = 1, ball = 0, pdl = 0, ncopies = 0,
        vary_side = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--ball")) { ball = 1; continue; }
        if (!strcmp(a, "--pdl")) { pdl = 1; continue; }
        if (!strcmp(a, "--vary-side")) { vary_side = 1; continue; }
        if (!v && !lr_arg_in(a, (const char *const[]){
                "--arm", "--ball", "--commits", "--copies", "--csv", "--extra0", "--extra1", "--extra2",
                "--extra3", "--extra4", "--from-csv", "--matrices", "--minb", "--model", "--models", "--pdl",
                "--reps", "--rpw", "--table", "--threads", "--tile", "--unroll", "--vary-side", NULL })) {
            fprintf(stderr, "tune_gemv: unknown option %s (see --help)\n", a);
            return 2;
        }
        if (!v) { fprintf(stderr, "tune_gemv: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--arm")) armname = v;
        else if (!strcmp(a, "--models")) models = v;
        else if (!strcmp(a, "--matrices")) mats = v;
        else if (!strcmp(a, "--table")) table = v;
        else if (!strcmp(a, "--csv")) csv = v;
        else if (!strcmp(a, "--from-csv")) from = v;
        else if (!strcmp(a, "--commits")) commits = v;
        else if (!strcmp(a, "--model")) model_path = v;
        else if (!strcmp(a, "--reps")) { if (lr_arg_int("tune_gemv", a, v, 1, 1000000, &reps)) return 2; }
        else if (!strcmp(a, "--copies")) { if (lr_arg_int("tune_gemv", a, v, 1, 1024, &ncopies)) return 2; }
        else if (!strcmp(a, "--threads")) { if ((nth = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, th, 8)) < 0) return 2; }
        else if (!strcmp(a, "--rpw")) { if ((nrp = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, rp, 8)) < 0) return 2; }
        else if (!strcmp(a, "--unroll")) { if ((nun = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, un, 8)) < 0) return 2; }
        else if (!strcmp(a, "--tile")) { if ((ntl = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, tl, 8)) < 0) return 2; }
        else if (!strcmp(a, "--extra0")) { if ((ne0 = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, e0, 8)) < 0) return 2; }
        else if (!strcmp(a, "--minb")) { if ((nmb = lr_arg_int_list("tune_gemv", a, v, 0, 64, mb, 8)) < 0) return 2; }
        else if (!strcmp(a, "--extra2")) { if ((ne2 = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, e2, 8)) < 0) return 2; }
        else if (!strcmp(a, "--extra3")) {
            if ((ne3 = lr_arg_int_list("tune_gemv", a, v, -1024, 1900543, e3, 8)) < 0) return 2;
            /* bits 16-18: 0-4 side warps */
            for (int i = 0; i < ne3; i++)
                if (e3[i] > 0 && ((e3[i] >> 16) & 7) > 4) {
                    fprintf(stderr, "tune_gemv: --extra3 %d: %d side warps (at most 4)\n", e3[i], (e3[i] >> 16) & 7);
                    return 2;
                }
        }
        else if (!strcmp(a, "--extra4")) { if ((ne4 = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, e4, 8)) < 0) return 2; }
        else if (!strcmp(a, "--extra1")) { if ((ne1 = lr_arg_int_list("tune_gemv", a, v, -1024, 1024, e1, 8)) < 0) return 2; }
        else { fprintf(stderr, "tune_gemv: unknown option %s\n", a); usage(stderr); return 2; }
    }
    const lr_gemv_arm *arm = armname ? lr_gemv_arm_find(armname) : NULL;
    if (!arm) { fprintf(stderr, "tune_gemv: --arm names no registered arm\n"); return 2; }
    if (ball && strncmp(arm->name, "leech", 5)) { fprintf(stderr, "tune_gemv: --ball is for the Leech arms\n"); return 2; }
    if (model_path && strncmp(arm->name, "leech_p14s", 10)) { fprintf(stderr, "tune_gemv: --model is for the Planes14S arms\n"); return 2; }
    const long long ncand = (long long)nth * nrp * nun * ne0 * ne1 * ntl * nmb * ne2 * ne3 * ne4;
    if (!vary_side && ncand > MAXC) { fprintf(stderr, "tune_gemv: %lld candidates per shape (at most %d)\n", ncand, MAXC); return 2; }
    if (vary_side && strncmp(arm->name, "leech_p14s", 10)) { fprintf(stderr, "tune_gemv: --vary-side is for the Planes14S arms\n"); return 2; }
    if (model_path && ball) { fprintf(stderr, "tune_gemv: --model and --ball: the model's weights or ball-drawn ones, not both\n"); return 2; }
    /* rows of a ball-drawn sweep are told apart by their arm name, as in bench_gemv */
    char csv_arm[64];
    snprintf(csv_arm, sizeof csv_arm, "%s%s%s%s", arm->name, ball ? "@ball" : "", model_path ? "@model" : "", pdl ? "@pdl" : "");
    if (from) {
        int n;
        if (!table) { fprintf(stderr, "tune_gemv: --from-csv needs --table\n"); return 2; }
        if (lr_tuning_csv_best(from, csv_arm, commits, g_new, MAXW, &n)) {
            fprintf(stderr, "tune_gemv: %s\n", lr_errmsg());
            return 1;
        }
        if (!n) { fprintf(stderr, "tune_gemv: %s has no %s rows%s%s\n", from, csv_arm, commits ? " of " : "", commits ? commits : ""); return 1; }
        for (int i = 0; i < n; i++) {
            const lr_tuning_row *t = &g_new[i].row;
            const int *k = t->knobs;
            printf("%-10s %-24s %6d x %-6d best %8.2f us  threads %d rpw %d unroll %d tile %d extra %d,%d,%d,%d,%d minb %d\n",
                   arm->name, g_new[i].device, t->rows, t->cols, t->us, k[0], k[1], k[2], k[3], k[4], k[5], k[7], k[8],
                   k[9], k[6]);
        }
        g_nnew = n;
        if (write_table(table)) { fprintf(stderr, "tune_gemv: %s\n", lr_errmsg()); return 1; }
        return 0;
    }
    if (lr_cu_init(0)) { fprintf(stderr, "tune_gemv: %s\n", lr_errmsg()); return 1; }
    if (pdl && !lr_cu_pdl_supported()) { fprintf(stderr, "tune_gemv: --pdl: this device has no programmatic dependent launch\n"); return 1; }
    const lr_device_info *d = lr_cu_device();
    char devname[200];
    snprintf(devname, sizeof devname, "%s (%s)", d->name, d->arch);
    lr_csv out;
    if (lr_csv_open(&out, csv, LR_CSV_HEADER ",threads,rpw,unroll,extra0,extra1,tile,minb,extra2,extra3,extra4", devname)) {
        fprintf(stderr, "tune_gemv: %s\n", lr_errmsg());
        return 1;
    }
    double bound;
    if (lr_read_bound_gbps(0, 10, &bound)) { fprintf(stderr, "tune_gemv: %s\n", lr_errmsg()); return 1; }
    printf("read bound %.0f GB/s\n", bound);
    /* the bound each row's % is of, as bench_gemv writes it */
    lr_csv_row(&out, "read_bound,,probe,,,,,%.1f,100.0,,,,,,,,,,,", bound);
    CUdeviceptr x, y;
    if (lr_cu_alloc(&x, 1 << 20) || lr_cu_alloc(&y, 1 << 20) || lr_cu_memset8(x, 0x3c, 1 << 20)) {
        fprintf(stderr, "tune_gemv: %s\n", lr_errmsg());
        return 1;
    }
    const char *const *names = lr_layer_matrix_names;
    for (int si = 0; si < lr_qwen3_nshapes; si += 7) {
        const char *model = lr_qwen3_shapes[si].model;
        if (!lr_list_has(models, model)) continue;
        int R[LR_LAYER_MATRICES], C[LR_LAYER_MATRICES];
        lr_qwen3_layer_shapes(si, R, C);
        for (int k = 0; k < 9; k++) {
            if (!lr_list_has(mats, names[k])) continue;
            int dup = 0; /* k and v share a shape; up and gate too */
            for (int j = 0; j < g_nnew; j++) dup |= g_new[j].row.rows == R[k] && g_new[j].row.cols == C[k];
            if (dup) continue;
            double best = 1e30;
            int bk[LR_TUNE_KNOBS] = { 0 };
            int copies = ncopies ? ncopies : lr_bench_copies(R[k], C[k], arm->bits_per_weight, d->l2_bytes);
            /* the candidates, knobs in table order: the lists' product, or the
             * table's geometry with 0-4 side warps */
            int nc = 0;
            if (vary_side) {
                int now;
                nc = lr_tuning_side_candidates(arm->name, R[k], C[k], cand, &now);
                if (!nc) { printf("  %s %s %dx%d: no tuning-table row to vary\n", model, names[k], R[k], C[k]); continue; }
                /* the geometry in use as a LEECHRT_TUNE entry, and whether it is the arm's own
                   row or another arm's it falls back to: tune-engine hands fallbacks to the
                   engine as the arm's own rows (for the 3-bit arms, the form made the default) */
                if (now >= 0) {
                    const int *g = cand[now];
                    int own[LR_TUNE_KNOBS];
                    printf("now %s:%dx%d=%d/%d/%d/%d/%d/%d/%d/%d/%d/%d %s\n", arm->name, R[k], C[k], g[0], g[1], g[2], g[3],
                           g[4], g[5], g[6], g[7], g[8], g[9], lr_tuning_lookup(arm->name, R[k], C[k], own) ? "own" : "fallback");
                }
            } else {
                for (int a = 0; a < nth; a++) for (int b = 0; b < nrp; b++) for (int c = 0; c < nun; c++)
                for (int e = 0; e < ne0; e++) for (int f = 0; f < ne1; f++) for (int h = 0; h < ntl; h++)
                for (int m = 0; m < nmb; m++) for (int i2 = 0; i2 < ne2; i2++) for (int i3 = 0; i3 < ne3; i3++)
                for (int i4 = 0; i4 < ne4 && nc < MAXC; i4++) {
                    const int kn[LR_TUNE_KNOBS] = { th[a], rp[b], un[c], tl[h], e0[e], e1[f], mb[m], e2[i2], e3[i3], e4[i4] };
                    memcpy(cand[nc++], kn, sizeof kn);
                }
            }
            for (int ci = 0; ci < nc; ci++) {
                const int *kn = cand[ci];
                lr_gemv_arm_opts o = { kn[0], kn[1], kn[2], kn[3], { kn[4], kn[5], kn[7], kn[8], kn[9] }, kn[6], ball, model_path };
                one_run r = { arm, NULL, copies, x, y };
                double err = 0, us = 0;
                int rc = arm->prepare(R[k], C[k], copies, 4242, &o, &r.st);
                lr_gemv_arm_io io = { 0 };
                int nchecked = 0;
                if (!rc) rc = arm->verify(r.st, 99, &err, &io);
                /* the timed launches against the verified one, every copy */
                if (!rc) rc = lr_gemv_arm_check_launch(arm, r.st, copies, &io, x, y, &nchecked);
                lr_gemv_arm_io_free(&io);
                if (!rc) {
                    /* the launches captured into the graph carry the PDL attribute */
                    const int was = lr_cu_set_pdl(pdl);
                    rc = lr_time_graph(enqueue, &r, copies, reps, &us);
                    lr_cu_set_pdl(was);
                }
                /* the weight bytes one launch reads, as bench_gemv counts them */
                const size_t bytes = r.st ? arm->bytes(r.st) : 0;
                if (r.st) arm->destroy(r.st);
                if (rc) { printf("  %s %dx%d t%d r%d u%d e%d/%d/%d/%d/%d m%d: %s\n", model, R[k], C[k], kn[0], kn[1], kn[2], kn[4], kn[5], kn[7], kn[8], kn[9], kn[6], lr_errmsg()); continue; }
                const double gbps = bytes ? bytes / us / 1e3 : 0;
                char rate[64] = ",";
                if (bytes) snprintf(rate, sizeof rate, "%.1f,%.1f", gbps, 100 * gbps / bound);
                lr_csv_row(&out, "%s,%s,%s,%d,%d,%.3f,%.2f,%s,%.2e,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", csv_arm, model, names[k], R[k],
                           C[k], arm->bits_per_weight, us, rate, err, kn[0], kn[1], kn[2], kn[4], kn[5], kn[3], kn[6], kn[7],
                           kn[8], kn[9]);
                if (us < best) {
                    best = us;
                    memcpy(bk, kn, sizeof bk);
                }
            }
            if (best < 1e30 && g_nnew < MAXW) {
                lr_tuning_pick *p = &g_new[g_nnew];
                lr_tuning_row *t = &p->row;
                snprintf(p->arm, sizeof p->arm, "%s", arm->name);
                /* the table is keyed by the device name alone (no arch suffix) */
                snprintf(p->device, sizeof p->device, "%s", d->name);
                t->device = p->device, t->arm = p->arm, t->cc = d->cc_major * 10 + d->cc_minor;
                t->rows = R[k], t->cols = C[k];
                memcpy(t->knobs, bk, sizeof bk);
                t->us = best;
                g_nnew++;
                printf("%-10s %-5s %-7s %6d x %-6d best %8.2f us  threads %d rpw %d unroll %d tile %d extra %d,%d,%d,%d,%d minb %d\n",
                       arm->name, model, names[k], R[k], C[k], best, bk[0], bk[1], bk[2], bk[3], bk[4], bk[5], bk[7], bk[8], bk[9], bk[6]);
                fflush(stdout);
            }
        }
    }
    if (lr_csv_close(&out)) { fprintf(stderr, "tune_gemv: %s\n", lr_errmsg()); return 1; }
    if (table && write_table(table)) {
        fprintf(stderr, "tune_gemv: %s\n", lr_errmsg());
        return 1;
    }
    return 0;
}
