/* leech_mse_bench: MSE per weight of shape-gain Leech quantization
 * (lr_leech_quantize, L24(12)) on unit Gaussian matrices at 0, 1 and 2 gain
 * bits, i.e. (47 + g)/24 = 1.96, 2.00 and 2.04 bits per weight, beside the
 * best scalar 2-bit quantizer (Lloyd-Max on the same data; 0.1175 in
 * theory) and the Shannon bound of a Gaussian source, D(R) = 2^(-2R)
 * (0.0625 at 2 bits). The published LLVQ figure at 1 gain bit is 0.078.
 * Speed columns: blocks per CPU second of the quantizer (process CPU time,
 * so other load on a shared machine does not count) and, in the CSV's us,
 * CPU microseconds per block. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/shapegain.h"
#include "util/args.h"
#include "util/benchcsv.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/rng.h"
#include "util/program.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: leech_mse_bench [options]\n"
            "  --rows R         matrix rows (default 1024)\n"
            "  --cols C         matrix columns (default 2400: 100 blocks a row)\n"
            "  --gain-bits LIST gain bits to run, comma-separated (default 0,1,2)\n"
            "  --threads N      quantizer threads (default 0: all cores)\n"
            "  --seed S         data seed (default 1)\n"
            "  --csv FILE       append results as CSV rows\n"
            "  -h, --help       this text\n");
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                p[strcspn(p, "\r\n")] = 0;
                snprintf(out, n, "%s", p);
            }
            break;
        }
    fclose(f);
}

static double process_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *pa, const void *pb)
{
    float a = *(const float *)pa, b = *(const float *)pb;
    return a < b ? -1 : a > b;
}

/* Scalar Lloyd-Max with 4 levels on the data itself: MSE per value. */
static double scalar_lloyd_mse(const float *w, size_t n)
{
    float *v = malloc(n * sizeof *v);
    double *cs = malloc((n + 1) * sizeof *cs), *cq = malloc((n + 1) * sizeof *cq);
    if (!v || !cs || !cq) { free(v), free(cs), free(cq); return NAN; }
    memcpy(v, w, n * sizeof *v);
    qsort(v, n, sizeof *v, by_value);
    cs[0] = cq[0] = 0;
    for (size_t i = 0; i < n; i++) cs[i + 1] = cs[i] + v[i], cq[i + 1] = cq[i] + (double)v[i] * v[i];
    double c[4] = { -1.5, -0.5, 0.5, 1.5 };
    size_t e[5];
    for (int it = 0; it < 500; it++) {
        e[0] = 0, e[4] = n;
        for (int j = 1; j < 4; j++) {
            double th = 0.5 * (c[j - 1] + c[j]);
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (v[mid] < th) lo = mid + 1;
                else hi = mid;
            }
            e[j] = lo;
        }
        for (int j = 0; j < 4; j++)
            if (e[j + 1] > e[j]) c[j] = (cs[e[j + 1]] - cs[e[j]]) / (double)(e[j + 1] - e[j]);
    }
    double err = 0; /* sum over cells of sum (v - c)^2 */
    for (int j = 0; j < 4; j++) {
        double k = (double)(e[j + 1] - e[j]), s = cs[e[j + 1]] - cs[e[j]], q = cq[e[j + 1]] - cq[e[j]];
        err += q - 2 * c[j] * s + c[j] * c[j] * k;
    }
    free(v), free(cs), free(cq);
    return err / (double)n;
}

int main(int argc, char **argv)
{
    lr_program_init("leech_mse_bench");
    int rows = 1024, cols = 2400, nthreads = 0;
    uint64_t seed = 1;
    const char *gains = "0,1,2", *csv = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!v && !lr_arg_in(a, (const char *const[]){
                "--cols", "--csv", "--gain-bits", "--rows", "--seed", "--threads", NULL })) {
            fprintf(stderr, "leech_mse_bench: unknown option %s (see --help)\n", a);
            return 2;
        }
        else if (!v) { fprintf(stderr, "leech_mse_bench: %s needs a value\n", a); usage(stderr); return 2; }
        else if (!strcmp(a, "--rows")) { i++; if (lr_arg_int("leech_mse_bench", a, v, 1, 1048576, &rows)) return 2; }
        else if (!strcmp(a, "--cols")) { i++; if (lr_arg_int("leech_mse_bench", a, v, 1, 1048576, &cols)) return 2; }
        else if (!strcmp(a, "--gain-bits")) gains = v, i++;
        else if (!strcmp(a, "--threads")) { i++; if (lr_arg_int("leech_mse_bench", a, v, 0, 4096, &nthreads)) return 2; }
        else if (!strcmp(a, "--seed")) {
            unsigned long long x;
            i++;
            if (lr_arg_u64("leech_mse_bench", a, v, &x)) return 2;
            seed = x;
        }
        else if (!strcmp(a, "--csv")) csv = v, i++;
        else { fprintf(stderr, "leech_mse_bench: unknown option %s\n", a); usage(stderr); return 2; }
    }
    if (rows <= 0 || cols < 24 || nthreads < 0) { fprintf(stderr, "leech_mse_bench: bad sizes\n"); return 2; }
    int glist[8], ng = lr_arg_int_list("leech_mse_bench", "--gain-bits", gains, 0, 2, glist, 8);
    if (ng < 0) return 2;
    int used = nthreads;
    if (!used) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        used = n > 0 ? (int)n : 1;
    }
    if (used > rows) used = rows;

    size_t n = (size_t)rows * (size_t)cols;
    float *W = malloc(n * sizeof *W), *R = malloc(n * sizeof *R);
    if (!W || !R) { fprintf(stderr, "leech_mse_bench: out of memory\n"); return 1; }
    lr_rng r;
    lr_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) W[i] = (float)lr_rng_gauss(&r);

    char dev[256];
    cpu_model(dev, sizeof dev);
    lr_csv out;
    if (lr_csv_open(&out, csv, LR_CSV_HEADER ",mse,blocks_per_s_per_core", dev)) {
        fprintf(stderr, "leech_mse_bench: %s\n", lr_errmsg());
        return 1;
    }
    printf("unit Gaussian %d x %d (%d blocks of 24, %d tail columns), %d threads, %s\n", rows, cols, rows * (cols / 24),
           cols % 24, used, dev);
    printf("%-26s %6s %9s %11s %10s %14s\n", "arm", "b/w", "MSE", "D(R) bound", "wall s", "blocks/cpu-s");

    for (int gi = 0; gi < ng; gi++) {
        int g = glist[gi];
        lr_leech_matrix m;
        lr_progress prog = { 0 };
        prog.label = "quantize";
        double t0 = lr_now(), c0 = process_cpu();
        if (lr_leech_quantize(W, rows, cols, g, 12, nthreads, &prog, &m)) {
            fprintf(stderr, "leech_mse_bench: %s\n", lr_errmsg());
            return 1;
        }
        double dt = lr_now() - t0, dc = process_cpu() - c0;
        if (lr_leech_reconstruct(&m, R)) { fprintf(stderr, "leech_mse_bench: %s\n", lr_errmsg()); return 1; }
        double err = 0;
        for (size_t i = 0; i < n; i++) err += ((double)W[i] - R[i]) * ((double)W[i] - R[i]);
        double mse = err / (double)n, bpw = (47.0 + g) / 24, bound = pow(2.0, -2 * bpw);
        double bps = (double)rows * m.nblk / dc;
        char arm[64];
        snprintf(arm, sizeof arm, "leech_shapegain_g%d", g);
        printf("%-26s %6.3f %9.5f %11.5f %10.2f %14.0f   centroids", arm, bpw, mse, bound, dt, bps);
        for (int j = 0; j < (1 << g); j++) printf(" %.4f", (double)m.centroid[j]);
        printf("\n");
        lr_csv_row(&out, "%s,gauss_unit,gaussian,%d,%d,%.4f,%.2f,,,,%.6f,%.0f", arm, rows, cols, bpw, 1e6 / bps, mse, bps);
        lr_leech_matrix_free(&m);
    }
    double smse = scalar_lloyd_mse(W, n);
    printf("%-26s %6.3f %9.5f %11.5f\n", "scalar_lloyd_max_2bit", 2.0, smse, 0.0625);
    lr_csv_row(&out, "scalar_lloyd_max_2bit,gauss_unit,gaussian,%d,%d,2.0000,,,,,%.6f,", rows, cols, smse);
    printf("%-26s %6.3f %9.5f   (2^-4, not a measurement)\n", "shannon_bound", 2.0, 0.0625);
    lr_csv_row(&out, "shannon_bound,gauss_unit,gaussian,,,2.0000,,,,,0.062500,");
    printf("%-26s %6.3f %9.5f   (published, arXiv:2603.11021)\n", "llvq_published_g1", 2.0, 0.078);
    const int wrc = lr_csv_close(&out);
    free(W), free(R);
    if (wrc) { fprintf(stderr, "leech_mse_bench: %s\n", lr_errmsg()); return 1; }
    return 0;
}
