/* bench_gemv: every GEMV arm side by side in one process, on Qwen3 projection
 * shapes, per matrix and per layer, with the DRAM read bound measured first.
 * Each arm is verified (every output row against the f64 host reference)
 * before it is timed, and every copy the timing launches must then give the
 * verified output bit for bit (lr_gemv_arm_check_launch); weights rotate through distinct copies so the L2 does
 * not serve them; times are medians of CUDA-graph replays. */
#include "kernels/gemv_arm.h"
#include "kernels/gemv_leech.h"
#include "kernels/kernels.h"
#include "kernels/read_bound.h"
#include "kernels/tuning.h"
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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_gemv [options]\n"
            "  --models LIST    Qwen3 sizes, comma-separated (default 4B,8B,14B,32B)\n"
            "  --arms LIST      arms to run (default: all registered; see --list)\n"
            "  --matrices LIST  q,k,v,o,gate,up,down,qkv,gateup,layer,layer_fused (default all)\n"
            "  --csv FILE       append results as CSV rows\n"
            "  --reps N         graph replays per timing (default 30)\n"
            "  --geom T,R,U,TL  launch geometry override: threads, rows/warp, unroll, tile\n"
            "  --extra A,B,C,D,E  arm-specific knobs\n"
            "  --ball           Leech arms: random blocks drawn over the ball like real weights (rows\n"
            "                   named ARM@ball) instead of class-uniform\n"
            "  --smem-budget B  act as if the card's opt-in shared memory were B bytes\n"
            "  --list           list the arms and exit\n"
            "  -h, --help       this text\n"
            "Environment: LEECHRT_GEMV_EARLY=0|1|2, Planes14S's loads before the PDL wait (as in\n"
            "the engine; default 1, kernels/gemv_leech.h). LEECHRT_GEMV_SIDE=0-4, Planes14S's side warps\n"
            "where the tuning table does not set them (default 0). LEECHRT_GEMV_I8=0|1, Planes14S's int8 mode\n"
            "where the table does not set it (default 0), LEECHRT_GEMV_C3=0|1 the same over the 3-bit form.\n"
            "LEECHRT_TUNE=ARM:ROWSxCOLS=K1,...,K10[;...]:\n"
            "launch geometries ahead of the tuning table (kernels/tuning.h).\n");
}

typedef struct { const lr_gemv_arm *arm; void *st; int copies; } mat;
typedef struct { mat *m; int nm; CUdeviceptr x, y; } layer_run;

static int layer_enqueue(void *arg, int i, void *stream)
{
    layer_run *L = arg;
    for (int k = 0; k < L->nm; k++) {
        int rc = L->m[k].arm->launch(L->m[k].st, i % L->m[k].copies, L->x, L->y, stream);
        if (rc) return rc;
    }
    return LR_OK;
}

int main(int argc, char **argv)
{
    lr_program_init("bench_gemv");
    const char *models = "4B,8B,14B,32B", *arms = NULL, *mats = NULL, *csv = NULL;
    int reps = 30;
    lr_gemv_arm_opts opts = { 0 };
    int budget = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(a, "--ball")) opts.ball = 1;
        else if (!strcmp(a, "--list")) {
            int n;
            const lr_gemv_arm *const *all = lr_gemv_arms(&n);
            for (int k = 0; k < n; k++) printf("%-14s %5.2f b/w\n", all[k]->name, all[k]->bits_per_weight);
            return 0;
        }
        else if (!v && !lr_arg_in(a, (const char *const[]){
                "--arms", "--ball", "--csv", "--extra", "--geom", "--list", "--matrices", "--models", "--reps",
                "--smem-budget", NULL })) {
            fprintf(stderr, "bench_gemv: unknown option %s (see --help)\n", a);
            return 2;
        }
        else if (!v) { fprintf(stderr, "bench_gemv: %s needs a value\n", a); usage(stderr); return 2; }
        else if (!strcmp(a, "--models")) models = v, i++;
        else if (!strcmp(a, "--arms")) arms = v, i++;
        else if (!strcmp(a, "--matrices")) mats = v, i++;
        else if (!strcmp(a, "--csv")) csv = v, i++;
        else if (!strcmp(a, "--reps")) { i++; if (lr_arg_int("bench_gemv", a, v, 1, 1000000, &reps)) return 2; }
        else if (!strcmp(a, "--smem-budget")) { i++; if (lr_arg_int("bench_gemv", a, v, 1024, 1 << 20, &budget)) return 2; }
        else if (!strcmp(a, "--geom")) {
            int g[4] = { 0 };
            if (lr_arg_int_list("bench_gemv", a, v, 0, 1024, g, 4) < 0) return 2;
            opts.threads = g[0], opts.rpw = g[1], opts.unroll = g[2], opts.tile = g[3];
            i++;
        } else if (!strcmp(a, "--extra")) {
            if (lr_arg_int_list("bench_gemv", a, v, -1024, 1024, opts.extra, 5) < 0) return 2;
            i++;
        } else { fprintf(stderr, "bench_gemv: unknown option %s\n", a); usage(stderr); return 2; }
    }
    if (reps < 3) reps = 3;
    /* the engine's comparison switch, for the same comparison in a chain of GEMVs */
    if (lr_gemv_p14s_early_set("bench_gemv: LEECHRT_GEMV_EARLY", getenv("LEECHRT_GEMV_EARLY")) ||
        lr_gemv_p14s_side_set("bench_gemv: LEECHRT_GEMV_SIDE", getenv("LEECHRT_GEMV_SIDE")) ||
        lr_gemv_p14s_i8_set("bench_gemv: LEECHRT_GEMV_I8", getenv("LEECHRT_GEMV_I8")) ||
        lr_gemv_p14s_c3_set("bench_gemv: LEECHRT_GEMV_C3", getenv("LEECHRT_GEMV_C3")) ||
        lr_tuning_override_set("bench_gemv: LEECHRT_TUNE", getenv("LEECHRT_TUNE"))) {
        fprintf(stderr, "%s\n", lr_errmsg());
        return 2;
    }
    int rc = lr_cu_init(0);
    if (rc) { fprintf(stderr, "bench_gemv: %s\n", lr_errmsg()); return 1; }
    if (budget > 0) lr_cu_set_smem_budget(budget);
    const lr_device_info *d = lr_cu_device();
    char devname[200];
    snprintf(devname, sizeof devname, "%s (%s)", d->name, d->arch);
    lr_csv out;
    if (lr_csv_open(&out, csv, NULL, devname)) { fprintf(stderr, "bench_gemv: %s\n", lr_errmsg()); return 1; }

    double bound;
    if ((rc = lr_read_bound_gbps(0, reps, &bound))) { fprintf(stderr, "bench_gemv: read bound: %s\n", lr_errmsg()); return 1; }
    printf("device %s, %d SMs, L2 %d MB, smem budget %d B\n", devname, d->sm_count, d->l2_bytes >> 20, lr_cu_smem_budget());
    printf("read bound (probe, verified): %.0f GB/s\n\n", bound);
    lr_csv_row(&out, "read_bound,,probe,,,,,%.1f,100.0,0", bound);

    CUdeviceptr x, y;
    if (lr_cu_alloc(&x, 32768 * 4 * 4) || lr_cu_alloc(&y, 65536 * 4 * 4) || lr_cu_memset8(x, 0x3c, 32768 * 4 * 4)) {
        fprintf(stderr, "bench_gemv: %s\n", lr_errmsg());
        return 1;
    }
    printf("%-10s %-5s %-7s %6s %6s %6s %9s %8s %7s %9s\n", "arm", "model", "matrix", "rows", "cols", "b/w", "us",
           "GB/s", "%bound", "max_err");
    int n_arms, failures = 0;
    const lr_gemv_arm *const *all = lr_gemv_arms(&n_arms);
    for (int ai = 0; ai < n_arms; ai++) {
        const lr_gemv_arm *arm = all[ai];
        if (arms && !lr_list_has(arms, arm->name)) continue;
        /* rows of a ball-uniform run are told apart by their arm name */
        char aname[64];
        snprintf(aname, sizeof aname, "%s%s", arm->name, opts.ball && strncmp(arm->name, "leech", 5) == 0 ? "@ball" : "");
        for (int si = 0; si < lr_qwen3_nshapes; si += 7) {
            const char *model = lr_qwen3_shapes[si].model;
            if (!lr_list_has(models, model)) continue;
            /* 7 matrices + fused qkv + fused gate/up */
            mat m[9] = { { 0 } };
            int shape_r[LR_LAYER_MATRICES], shape_c[LR_LAYER_MATRICES];
            lr_qwen3_layer_shapes(si, shape_r, shape_c);
            const char *const *names = lr_layer_matrix_names;
            int ok = 1;
            for (int k = 0; k < 9 && ok; k++) {
                /* the fused layer is q|k|v, o, gate|up, down: o (3) and down (6) too */
                int fused = lr_list_has(mats, "layer_fused");
                int want = (k < 7 && (lr_list_has(mats, names[k]) || lr_list_has(mats, "layer") ||
                                      (fused && (k == 3 || k == 6)))) ||
                           (k >= 7 && (lr_list_has(mats, names[k]) || fused));
                if (!want) continue;
                int copies = lr_bench_copies(shape_r[k], shape_c[k], arm->bits_per_weight, d->l2_bytes);
                m[k].arm = arm;
                m[k].copies = copies;
                rc = arm->prepare(shape_r[k], shape_c[k], copies, 1000 + (uint64_t)k, &opts, &m[k].st);
                if (rc == LR_EUNSUPPORTED) { printf("%-10s skipped: %s\n", aname, lr_errmsg()); ok = 0; break; }
                double err = 0;
                lr_gemv_arm_io io = { 0 };
                int nchecked = 0;
                if (!rc) rc = arm->verify(m[k].st, 77 + (uint64_t)k, &err, &io);
                if (!rc) rc = lr_gemv_arm_check_launch(arm, m[k].st, copies, &io, x, y, &nchecked);
                lr_gemv_arm_io_free(&io);
                if (rc) {
                    printf("%-10s %-5s %-7s FAILED: %s\n", aname, model, names[k], lr_errmsg());
                    failures++;
                    ok = 0;
                    break;
                }
                layer_run one = { &m[k], 1, x, y };
                double us;
                if ((rc = lr_time_graph(layer_enqueue, &one, copies, reps, &us))) {
                    printf("%-10s %-5s %-7s timing FAILED: %s\n", aname, model, names[k], lr_errmsg());
                    failures++;
                    ok = 0;
                    break;
                }
                size_t bytes = arm->bytes(m[k].st);
                double gbps = bytes ? bytes / us / 1e3 : 0;
                printf("%-10s %-5s %-7s %6d %6d %6.2f %9.2f %8.0f %7.1f %9.2e\n", aname, model, names[k], shape_r[k],
                       shape_c[k], arm->bits_per_weight, us, gbps, bytes ? 100 * gbps / bound : 0, err);
                if (bytes)
                    lr_csv_row(&out, "%s,%s,%s,%d,%d,%.3f,%.2f,%.1f,%.1f,%.2e", aname, model, names[k], shape_r[k],
                               shape_c[k], 8.0 * bytes / ((double)shape_r[k] * shape_c[k]), us, gbps, 100 * gbps / bound, err);
                else
                    lr_csv_row(&out, "%s,%s,%s,%d,%d,0,%.2f,,,%.2e", aname, model, names[k], shape_r[k], shape_c[k], us, err);
            }
            /* whole layers: 7 launches, the fused 4 (qkv, o, gateup, down), and
             * the fused 4 with programmatic dependent launch (sm_90+: each
             * kernel fetches weights while its predecessor finishes) */
            for (int variant = 0; variant < 3 && ok; variant++) {
                int fused = variant > 0, pdl = variant == 2;
                if (pdl && !lr_cu_pdl_supported()) continue;
                if (!lr_list_has(mats, fused ? "layer_fused" : "layer")) continue;
                mat seq[7];
                int ns = 0, copies = 64;
                int idx_plain[] = { 0, 1, 2, 3, 4, 5, 6 }, idx_fused[] = { 7, 3, 8, 6 };
                int *idx = fused ? idx_fused : idx_plain, cnt = fused ? 4 : 7;
                size_t bytes = 0;
                double weights = 0;
                int missing = 0;
                for (int k = 0; k < cnt; k++) missing |= !m[idx[k]].st;
                if (missing) continue;
                for (int k = 0; k < cnt; k++) {
                    seq[ns++] = m[idx[k]];
                    if (m[idx[k]].copies < copies) copies = m[idx[k]].copies;
                    bytes += arm->bytes(m[idx[k]].st);
                    weights += (double)shape_r[idx[k]] * shape_c[idx[k]];
                }
                layer_run L = { seq, ns, x, y };
                double us;
                int was = lr_cu_set_pdl(pdl);
                rc = lr_time_graph(layer_enqueue, &L, copies, reps, &us);
                lr_cu_set_pdl(was);
                if (rc) {
                    printf("%-10s layer timing FAILED: %s\n", aname, lr_errmsg());
                    failures++;
                    break;
                }
                double gbps = bytes ? bytes / us / 1e3 : 0;
                const char *mn = pdl ? "layer_fused_pdl" : fused ? "layer_fused" : "layer";
                printf("%-10s %-5s %-7s %6s %6s %6.2f %9.2f %8.0f %7.1f\n", aname, model, mn, "", "",
                       arm->bits_per_weight, us, gbps, bytes ? 100 * gbps / bound : 0);
                if (bytes)
                    lr_csv_row(&out, "%s,%s,%s,,,%.3f,%.2f,%.1f,%.1f,", aname, model, mn, 8.0 * bytes / weights, us,
                               gbps, 100 * gbps / bound);
                else
                    lr_csv_row(&out, "%s,%s,%s,,,0,%.2f,,,", aname, model, mn, us);
            }
            for (int k = 0; k < 9; k++)
                if (m[k].st) arm->destroy(m[k].st);
        }
    }
    if (lr_csv_close(&out)) { fprintf(stderr, "bench_gemv: %s\n", lr_errmsg()); return 1; }
    if (failures) { fprintf(stderr, "bench_gemv: %d failures\n", failures); return 1; }
    return 0;
}
