/* bench_rotation: the incoherence rotation per width, per plan (single CTA /
 * slab) and per shared-memory budget, and the rotation's share of a Qwen3
 * layer's projection time; then one rotation feeding the row-concatenated
 * q|k|v and gate|up GEMVs, separate vs fused into the GEMV prologue. Every
 * kernel is verified (f64 reference, rel err <= 1e-6) before it is timed;
 * times are medians of CUDA-graph replays. */
#include "kernels/gemv_arm.h"
#include "kernels/kernels.h"
#include "kernels/read_bound.h"
#include "kernels/rotation.h"
#include "rt/cu.h"
#include "util/args.h"
#include "util/benchcsv.h"
#include "util/err.h"
#include "util/strlist.h"
#include "util/program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER LR_CSV_HEADER ",smem_budget,share_pct"
#define NMODELS 4

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_rotation [options]\n"
            "  --widths LIST     widths (default 2560,4096,5120,8192,9728,12288,17408,25600,27648,32768)\n"
            "  --budgets LIST    shared-memory budgets in bytes; 0 = the device's bound\n"
            "                    (default 49152,101376,0)\n"
            "  --modes LIST      single,slab (default both; single only where the vector fits)\n"
            "  --s N             slab width override (columns per CTA; power of two)\n"
            "  --threads N       threads per CTA override\n"
            "  --models LIST     Qwen3 sizes for shares and the fused runs (default 4B,8B,14B,32B)\n"
            "  --layer-us LIST   FP16 layer projection times, e.g. 4B=97,14B=191 (default: measured\n"
            "                    here with the FP16 control, all 7 projections in one graph)\n"
            "  --no-fused        skip the separate-vs-fused GEMV runs\n"
            "  --csv FILE        append CSV rows (" HEADER ")\n"
            "  --reps N          graph replays per timing (default 30)\n"
            "  --per-graph N     launches per graph (default 20)\n"
            "  -h, --help        this text\n"
            "arms: rot_single, rot_slab (rotation alone); gemv_f16 (no rotation), rot+gemv_f16\n"
            "(one rotation launch + the row-concatenated GEMV), gemv_f16_rot (fused prologue).\n");
}

/* A model's three input widths and its 7 projection shapes. */
typedef struct { const char *name; int hidden, attn, inter; const lr_shape *sh; double layer_us; } model;

static void models_of(model *m)
{
    for (int i = 0; i < NMODELS; i++) {
        const lr_shape *s = &lr_qwen3_shapes[7 * i];
        m[i] = (model){ s[0].model, s[0].cols, s[3].cols, s[6].cols, s, 0 };
    }
}

/* An unknown name in --models / --modes (a typo) once measured nothing and exited 0. */
static int names_known(const char *flag, const char *list, const char *const *names, int n)
{
    size_t len;
    const char *p = lr_list_unknown(list, names, n, &len);
    if (p) fprintf(stderr, "bench_rotation: %s: unknown name '%.*s'\n", flag, (int)len, p);
    return p ? -1 : 0;
}

/* --layer-us NAME=US,...: the value for name exactly ("4B" is not inside "14B=191", as a
   substring search once found it); 1 found, 0 not given, -1 malformed (message printed). */
static int layer_us_of(const char *list, const char *name, double *us)
{
    for (const char *p = list; p && *p;) {
        const size_t len = strcspn(p, ","), nl = strlen(name);
        if (len > nl && !strncmp(p, name, nl) && p[nl] == '=') {
            char v[64], *end;
            snprintf(v, sizeof v, "%.*s", (int)(len - nl - 1), p + nl + 1);
            *us = strtod(v, &end);
            if (end == v || *end || !(*us > 0) || !isfinite(*us)) {
                fprintf(stderr, "bench_rotation: --layer-us: %s=%s is not a positive time in us\n", name, v);
                return -1;
            }
            return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

typedef struct { const lr_gemv_arm *arm; void *st[7]; int copies; CUdeviceptr x, y; } layer_run;

static int layer_enqueue(void *arg, int i, void *stream)
{
    layer_run *L = arg;
    for (int k = 0; k < 7; k++) {
        int rc = L->arm->launch(L->st[k], i % L->copies, L->x, L->y, stream);
        if (rc) return rc;
    }
    return LR_OK;
}

/* FP16 control: the 7 projections of one layer, verified, in one graph. */
static int measure_layer(model *m, CUdeviceptr x, CUdeviceptr y, int reps)
{
    const lr_gemv_arm *arm = lr_gemv_arm_find("f16");
    if (!arm) return LR_FAIL(LR_EINVAL, "no f16 arm");
    layer_run L = { arm, { 0 }, 64, x, y };
    int rc = LR_OK;
    for (int k = 0; k < 7 && !rc; k++) {
        int c = lr_bench_copies(m->sh[k].rows, m->sh[k].cols, 16, lr_cu_device()->l2_bytes);
        if (c < L.copies) L.copies = c;
    }
    for (int k = 0; k < 7 && !rc; k++) {
        double err;
        rc = arm->prepare(m->sh[k].rows, m->sh[k].cols, L.copies, 500 + (uint64_t)k, NULL, &L.st[k]);
        lr_gemv_arm_io io = { 0 };
        int n;
        if (!rc) rc = arm->verify(L.st[k], 600 + (uint64_t)k, &err, &io);
        if (!rc) rc = lr_gemv_arm_check_launch(arm, L.st[k], L.copies, &io, x, y, &n);
        lr_gemv_arm_io_free(&io);
    }
    if (!rc) rc = lr_time_graph(layer_enqueue, &L, L.copies, reps, &m->layer_us);
    for (int k = 0; k < 7; k++)
        if (L.st[k]) arm->destroy(L.st[k]);
    return rc;
}

typedef struct { const lr_rot_dev *d; CUdeviceptr x, y; } rot_run;

static int rot_enqueue(void *arg, int i, void *stream)
{
    rot_run *R = arg;
    (void)i;
    return lr_rot_dev_launch(R->d, R->x, R->y, 1, stream);
}

typedef struct { const lr_rot_proj *p; CUdeviceptr x, y; } proj_run;

static int proj_enqueue(void *arg, int i, void *stream)
{
    proj_run *P = arg;
    return lr_rot_proj_launch(P->p, i, P->x, P->y, stream);
}

/* The plain row-concatenated GEMV (no rotation), through the f16 arm. */
typedef struct { const lr_gemv_arm *arm; void *st; int copies; CUdeviceptr x, y; } plain_run;

static int plain_enqueue(void *arg, int i, void *stream)
{
    plain_run *P = arg;
    return P->arm->launch(P->st, i % P->copies, P->x, P->y, stream);
}

int main(int argc, char **argv)
{
    lr_program_init("bench_rotation");
    const char *widths_s = "2560,4096,5120,8192,9728,12288,17408,25600,27648,32768", *budgets_s = "49152,101376,0";
    const char *modes = "single,slab", *models_s = "4B,8B,14B,32B", *csv = NULL, *layer_s = NULL;
    int reps = 30, per_graph = 20, s_over = 0, t_over = 0, fused_runs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--no-fused")) { fused_runs = 0; continue; }
        if (!v && !lr_arg_in(a, (const char *const[]){
                "--budgets", "--csv", "--layer-us", "--models", "--modes", "--no-fused", "--per-graph",
                "--reps", "--s", "--threads", "--widths", NULL })) {
            fprintf(stderr, "bench_rotation: unknown option %s (see --help)\n", a);
            return 2;
        }
        if (!v) { fprintf(stderr, "bench_rotation: %s needs a value\n", a); usage(stderr); return 2; }
        if (!strcmp(a, "--widths")) widths_s = v;
        else if (!strcmp(a, "--budgets")) budgets_s = v;
        else if (!strcmp(a, "--modes")) modes = v;
        else if (!strcmp(a, "--models")) models_s = v;
        else if (!strcmp(a, "--layer-us")) layer_s = v;
        else if (!strcmp(a, "--csv")) csv = v;
        else if (!strcmp(a, "--reps")) { if (lr_arg_int("bench_rotation", a, v, 1, 1000000, &reps)) return 2; }
        else if (!strcmp(a, "--per-graph")) { if (lr_arg_int("bench_rotation", a, v, 1, 100000, &per_graph)) return 2; }
        else if (!strcmp(a, "--s")) { if (lr_arg_int("bench_rotation", a, v, 0, 1048576, &s_over)) return 2; }
        else if (!strcmp(a, "--threads")) { if (lr_arg_int("bench_rotation", a, v, 0, 4096, &t_over)) return 2; }
        else { fprintf(stderr, "bench_rotation: unknown option %s\n", a); usage(stderr); return 2; }
        i++;
    }
    int widths[64], budgets[16];
    int nw = lr_arg_int_list("bench_rotation", "--widths", widths_s, 1, 1 << 20, widths, 64);
    int nb = nw < 0 ? -1 : lr_arg_int_list("bench_rotation", "--budgets", budgets_s, 0, 1 << 24, budgets, 16);
    if (nw < 0 || nb < 0) return 2;
    if (reps < 3) reps = 3;
    if (per_graph < 1) per_graph = 1;
    {
        model all[NMODELS];
        models_of(all);
        const char *mnames[NMODELS], *modenames[2] = { lr_rot_mode_name(LR_ROT_SINGLE), lr_rot_mode_name(LR_ROT_SLAB) };
        for (int i = 0; i < NMODELS; i++) mnames[i] = all[i].name;
        double us;
        if (names_known("--models", models_s, mnames, NMODELS) || names_known("--modes", modes, modenames, 2)) return 2;
        for (int i = 0; i < NMODELS; i++)
            if (layer_us_of(layer_s, mnames[i], &us) < 0) return 2;
    }

    int rc = lr_cu_init(0);
    if (rc) { fprintf(stderr, "bench_rotation: %s\n", lr_errmsg()); return 1; }
    const lr_device_info *d = lr_cu_device();
    char devname[200];
    snprintf(devname, sizeof devname, "%s (%s)", d->name, d->arch);
    lr_csv out;
    if (lr_csv_open(&out, csv, HEADER, devname)) { fprintf(stderr, "bench_rotation: %s\n", lr_errmsg()); return 1; }
    double bound;
    if ((rc = lr_read_bound_gbps(0, reps, &bound))) { fprintf(stderr, "bench_rotation: read bound: %s\n", lr_errmsg()); return 1; }
    printf("device %s, %d SMs, opt-in smem %d B; read bound %.0f GB/s\n", devname, d->sm_count, d->smem_optin, bound);
    lr_csv_row(&out, "read_bound,,probe,,,,,%.1f,100.0,0,%d,", bound, d->smem_optin);

    CUdeviceptr x, y;
    if (lr_cu_alloc(&x, 4 * 65536) || lr_cu_alloc(&y, 4 * 65536 * 4)) { fprintf(stderr, "%s\n", lr_errmsg()); return 1; }
    {
        float *h = malloc(4 * 65536);
        if (!h) { fprintf(stderr, "bench_rotation: out of memory\n"); return 1; }
        lr_rng g;
        lr_rng_seed(&g, 1);
        lr_fill_random(LR_E_F32, h, 65536, &g, 1.0);
        rc = lr_cu_h2d(x, h, 4 * 65536);
        free(h);
        if (rc) { fprintf(stderr, "bench_rotation: %s\n", lr_errmsg()); return 1; }
    }

    model ms[NMODELS];
    models_of(ms);
    for (int i = 0; i < NMODELS; i++) {
        if (!lr_list_has(models_s, ms[i].name)) continue;
        if (layer_us_of(layer_s, ms[i].name, &ms[i].layer_us) != 1 && (rc = measure_layer(&ms[i], x, y, reps))) {
            fprintf(stderr, "bench_rotation: FP16 layer %s: %s\n", ms[i].name, lr_errmsg());
            return 1;
        }
        printf("FP16 control layer %-4s (7 projections): %8.2f us\n", ms[i].name, ms[i].layer_us);
        lr_csv_row(&out, "f16,%s,layer,,,16,%.2f,,,,%d,100", ms[i].name, ms[i].layer_us, lr_cu_smem_budget());
    }

    int failures = 0;
    printf("\n%-10s %7s %6s %6s %6s %6s %8s %9s %9s  %s\n", "arm", "budget", "width", "s", "ctas", "thr", "smem", "us",
           "max_err", "share of layer (model:input %)");
    /* rotation us per (budget, mode, width) for the per-layer totals */
    static double rot_us[16][3][64];
    for (int bi = 0; bi < nb; bi++) {
        lr_cu_set_smem_budget(budgets[bi]);
        int budget = lr_cu_smem_budget();
        for (int mode = LR_ROT_SINGLE; mode <= LR_ROT_SLAB; mode++) {
            if (!lr_list_has(modes, lr_rot_mode_name(mode))) continue;
            char arm[32];
            snprintf(arm, sizeof arm, "rot_%s", lr_rot_mode_name(mode));
            for (int wi = 0; wi < nw; wi++) {
                int n = widths[wi];
                rot_us[bi][mode][wi] = -1;
                lr_rot r;
                lr_rot_dev dev;
                if ((rc = lr_rot_init(&r, n, 1000 + (uint64_t)n))) { printf("%s %d: %s\n", arm, n, lr_errmsg()); failures++; continue; }
                rc = lr_rot_dev_create(&dev, &r, mode, mode == LR_ROT_SLAB ? s_over : 0, t_over);
                /* does not fit this budget, or --s does not suit this width */
                if (rc == LR_ERANGE || (rc == LR_EINVAL && s_over)) {
                    if (rc == LR_EINVAL) printf("%-10s %7d %6d skipped: %s\n", arm, budget, n, lr_errmsg());
                    lr_rot_free(&r);
                    lr_clear_error();
                    continue;
                }
                double err = 0, us = 0;
                if (!rc) rc = lr_rot_dev_verify(&dev, &r, 1, (uint64_t)n, 1e-6, &err);
                rot_run R = { &dev, x, y };
                if (!rc) rc = lr_time_graph(rot_enqueue, &R, per_graph, reps, &us);
                if (rc) {
                    printf("%-10s %7d %6d FAILED: %s\n", arm, budget, n, lr_errmsg());
                    failures++;
                    lr_rot_dev_destroy(&dev);
                    lr_rot_free(&r);
                    continue;
                }
                rot_us[bi][mode][wi] = us;
                double gbps = 8.0 * n / us / 1e3;
                printf("%-10s %7d %6d %6d %6d %6d %8u %9.2f %9.2e ", arm, budget, n, dev.plan.s, dev.plan.ctas,
                       dev.plan.threads, dev.plan.smem, us, err);
                int assoc = 0;
                for (int i = 0; i < NMODELS; i++) {
                    if (!lr_list_has(models_s, ms[i].name) || !(ms[i].layer_us > 0)) continue;
                    const char *in[3] = { "hidden", "attn_out", "inter" };
                    int w3[3] = { ms[i].hidden, ms[i].attn, ms[i].inter };
                    for (int k = 0; k < 3; k++) {
                        if (w3[k] != n) continue;
                        double share = 100.0 * us / ms[i].layer_us;
                        printf(" %s:%s %.2f", ms[i].name, in[k], share);
                        lr_csv_row(&out, "%s,%s,%s,1,%d,,%.3f,%.1f,%.2f,%.2e,%d,%.3f", arm, ms[i].name, in[k], n, us,
                                   gbps, 100 * gbps / bound, err, budget, share);
                        assoc = 1;
                    }
                }
                if (!assoc)
                    lr_csv_row(&out, "%s,,rot,1,%d,,%.3f,%.1f,%.2f,%.2e,%d,", arm, n, us, gbps, 100 * gbps / bound, err,
                               budget);
                printf("\n");
                lr_rot_dev_destroy(&dev);
                lr_rot_free(&r);
            }
            /* per layer: 4 rotations (q|k|v and gate|up inputs are the same width,
             * rotated once each; o's input; down's input) */
            for (int i = 0; i < NMODELS; i++) {
                if (!lr_list_has(models_s, ms[i].name) || !(ms[i].layer_us > 0)) continue;
                double t = 0;
                int w3[4] = { ms[i].hidden, ms[i].hidden, ms[i].attn, ms[i].inter }, ok = 1;
                for (int k = 0; k < 4; k++) {
                    int found = 0;
                    for (int wi = 0; wi < nw; wi++)
                        if (widths[wi] == w3[k] && rot_us[bi][mode][wi] > 0) t += rot_us[bi][mode][wi], found = 1;
                    ok &= found;
                }
                if (!ok) continue;
                printf("%-10s %7d layer %-4s 4 rotations %8.2f us = %.2f%% of the FP16 layer (%.2f us)\n", arm, budget,
                       ms[i].name, t, 100 * t / ms[i].layer_us, ms[i].layer_us);
                lr_csv_row(&out, "%s,%s,layer,,,,%.3f,,,,%d,%.3f", arm, ms[i].name, t, budget, 100 * t / ms[i].layer_us);
            }
        }
    }

    /* one rotation feeding the row-concatenated GEMVs: plain, separate, fused */
    for (int bi = 0; bi < nb && fused_runs; bi++) {
        lr_cu_set_smem_budget(budgets[bi]);
        int budget = lr_cu_smem_budget();
        printf("\n%-13s %7s %-5s %-7s %6s %6s %9s %8s %9s %s\n", "arm", "budget", "model", "matrix", "rows", "cols", "us",
               "GB/s", "max_err", "rotation cost % of layer");
        for (int i = 0; i < NMODELS; i++) {
            if (!lr_list_has(models_s, ms[i].name)) continue;
            const lr_shape *s = ms[i].sh;
            int grows[2] = { s[0].rows + s[1].rows + s[2].rows, s[4].rows + s[5].rows };
            const char *gname[2] = { "qkv", "gateup" };
            for (int gi = 0; gi < 2; gi++) {
                int rows = grows[gi], cols = ms[i].hidden;
                int copies = lr_bench_copies(rows, cols, 16, lr_cu_device()->l2_bytes);
                double plain_us = 0, err = 0;
                const lr_gemv_arm *f16 = lr_gemv_arm_find("f16");
                plain_run P = { f16, NULL, copies, x, y };
                rc = f16->prepare(rows, cols, copies, 900, NULL, &P.st);
                lr_gemv_arm_io io = { 0 };
                int n;
                if (!rc) rc = f16->verify(P.st, 901, &err, &io);
                if (!rc) rc = lr_gemv_arm_check_launch(f16, P.st, copies, &io, x, y, &n);
                lr_gemv_arm_io_free(&io);
                if (!rc) rc = lr_time_graph(plain_enqueue, &P, copies, reps, &plain_us);
                if (P.st) f16->destroy(P.st);
                if (rc) { printf("gemv_f16 %s %s FAILED: %s\n", ms[i].name, gname[gi], lr_errmsg()); failures++; continue; }
                double bytes = 2.0 * rows * cols, gbps = bytes / plain_us / 1e3;
                printf("%-13s %7d %-5s %-7s %6d %6d %9.2f %8.0f %9.2e\n", "gemv_f16", budget, ms[i].name, gname[gi], rows,
                       cols, plain_us, gbps, err);
                lr_csv_row(&out, "gemv_f16,%s,%s,%d,%d,16,%.3f,%.1f,%.2f,%.2e,%d,", ms[i].name, gname[gi], rows, cols,
                           plain_us, gbps, 100 * gbps / bound, err, budget);
                lr_rot r;
                if ((rc = lr_rot_init(&r, cols, 1000 + (uint64_t)cols))) { failures++; continue; }
                for (int fused = 0; fused < 2; fused++) {
                    const char *arm = fused ? "gemv_f16_rot" : "rot+gemv_f16";
                    lr_rot_proj p;
                    double us = 0;
                    rc = lr_rot_proj_create(&p, &r, rows, copies, fused, 902);
                    if (rc == LR_ERANGE && fused) {
                        printf("%-13s %7d %-5s %-7s does not fit: %s\n", arm, budget, ms[i].name, gname[gi], lr_errmsg());
                        lr_clear_error();
                        continue;
                    }
                    if (!rc) rc = lr_rot_proj_verify(&p, &r, 903, &err);
                    proj_run PR = { &p, x, y };
                    if (!rc) rc = lr_time_graph(proj_enqueue, &PR, copies, reps, &us);
                    if (rc) {
                        printf("%-13s %7d %-5s %-7s FAILED: %s\n", arm, budget, ms[i].name, gname[gi], lr_errmsg());
                        failures++;
                    } else {
                        gbps = bytes / us / 1e3;
                        double share = ms[i].layer_us > 0 ? 100 * (us - plain_us) / ms[i].layer_us : NAN;
                        printf("%-13s %7d %-5s %-7s %6d %6d %9.2f %8.0f %9.2e %.2f\n", arm, budget, ms[i].name, gname[gi],
                               rows, cols, us, gbps, err, share);
                        lr_csv_row(&out, "%s,%s,%s,%d,%d,16,%.3f,%.1f,%.2f,%.2e,%d,%.3f", arm, ms[i].name, gname[gi], rows,
                                   cols, us, gbps, 100 * gbps / bound, err, budget, share);
                    }
                    lr_rot_proj_destroy(&p);
                }
                lr_rot_free(&r);
            }
        }
    }
    lr_cu_set_smem_budget(0);
    lr_cu_free(x);
    lr_cu_free(y);
    if (lr_csv_close(&out)) { fprintf(stderr, "bench_rotation: %s\n", lr_errmsg()); return 1; }
    if (failures) { fprintf(stderr, "bench_rotation: %d failures\n", failures); return 1; }
    return 0;
}
