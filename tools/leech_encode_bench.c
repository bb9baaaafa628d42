/* leech_encode_bench: throughput of the exact nearest point of L24(12)
 * (lr_leech_nearest_angular, the shape search of shape-gain, and
 * lr_leech_nearest, Euclidean) on unit Gaussian blocks, per core and over
 * 1..N threads. Each thread encodes its own blocks (deterministic seeds).
 * Printed: blocks/s (all threads, wall clock), per core (that / threads),
 * per cpu-sec (blocks / CPU seconds of the encoding threads: what a core
 * does while it runs the encoder, unaffected by other processes sharing the
 * machine) and the search tree's nodes per block. The CSV's
 * blocks_per_s_per_core and us (microseconds per block) are the CPU-time
 * figures; on a machine of one's own they equal the wall-clock ones. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layouts/leech/leech.h"
#include "layouts/leech/nearest_internal.h"
#include "util/args.h"
#include "util/benchcsv.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/rng.h"
#include "util/program.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: leech_encode_bench [options]\n"
            "  --blocks N       blocks per thread per measurement (default 20000)\n"
            "  --threads LIST   thread counts, comma-separated (default 1..all cores)\n"
            "  --modes LIST     angular,euclid (default both)\n"
            "  --max-shell M    12 or 13 (default 12)\n"
            "  --portable       force the portable (non-AVX-512) tree search\n"
            "  --csv FILE       append results as CSV rows\n"
            "  -h, --help       this text\n");
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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

typedef struct {
    int mode, max_shell, nblocks;
    const float *x;          /* nblocks * 24 */
    double cpu;              /* CPU seconds spent encoding */
    uint64_t nodes;
    int rc;
    pthread_barrier_t *start;
} work;

static void *run(void *arg)
{
    work *w = arg;
    int8_t p[24];
    pthread_barrier_wait(w->start);
    uint64_t n0 = lr_nearest_stat_nodes;
    double c0 = cpu_seconds();
    for (int i = 0; i < w->nblocks && !w->rc; i++)
        w->rc = w->mode == LR_NEAREST_ANGULAR ? lr_leech_nearest_angular(w->x + 24 * (size_t)i, w->max_shell, p)
                                              : lr_leech_nearest(w->x + 24 * (size_t)i, w->max_shell, p);
    w->cpu = cpu_seconds() - c0;
    w->nodes = lr_nearest_stat_nodes - n0;
    return NULL;
}

int main(int argc, char **argv)
{
    lr_program_init("leech_encode_bench");
    int nblocks = 20000, max_shell = 12, portable = 0;
    const char *threads = NULL, *modes = "angular,euclid", *csv = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(a, "--portable")) portable = 1;
        else if (!v && !lr_arg_in(a, (const char *const[]){
                "--blocks", "--csv", "--max-shell", "--modes", "--portable", "--threads", NULL })) {
            fprintf(stderr, "leech_encode_bench: unknown option %s (see --help)\n", a);
            return 2;
        }
        else if (!v) { fprintf(stderr, "leech_encode_bench: %s needs a value\n", a); usage(stderr); return 2; }
        else if (!strcmp(a, "--blocks")) { i++; if (lr_arg_int("leech_encode_bench", a, v, 1, 1073741824, &nblocks)) return 2; }
        else if (!strcmp(a, "--threads")) threads = v, i++;
        else if (!strcmp(a, "--modes")) modes = v, i++;
        else if (!strcmp(a, "--max-shell")) { i++; if (lr_arg_int("leech_encode_bench", a, v, 12, 13, &max_shell)) return 2; }
        else if (!strcmp(a, "--csv")) csv = v, i++;
        else { fprintf(stderr, "leech_encode_bench: unknown option %s\n", a); usage(stderr); return 2; }
    }
    if (nblocks <= 0 || (max_shell != 12 && max_shell != 13)) {
        fprintf(stderr, "leech_encode_bench: bad --blocks or --max-shell\n");
        return 2;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) ncpu = 1;
    int tlist[64], nt = 0;
    if (threads) {
        if ((nt = lr_arg_int_list("leech_encode_bench", "--threads", threads, 1, 4096, tlist, 64)) < 0) return 2;
    } else {
        for (int t = 1; t <= ncpu && nt < 64; t++) tlist[nt++] = t;
    }
    int variant = lr_nearest_set_variant(portable ? 0 : 1);

    char dev[256];
    cpu_model(dev, sizeof dev);
    lr_csv out;
    if (lr_csv_open(&out, csv, LR_CSV_HEADER ",mse,blocks_per_s_per_core", dev)) {
        fprintf(stderr, "leech_encode_bench: %s\n", lr_errmsg());
        return 1;
    }
    printf("device %s, %ld cores online, tree search: %s, L24(%d), %d blocks per thread\n", dev, ncpu,
           variant ? "AVX-512" : "portable", max_shell, nblocks);
    printf("%-8s %7s %14s %14s %14s %12s\n", "mode", "threads", "blocks/s", "per core", "per cpu-sec", "nodes/block");

    /* Warm the tables (built once) outside the timing. */
    {
        float x[24] = { 1 };
        int8_t p[24];
        if (lr_leech_nearest_angular(x, max_shell, p)) { fprintf(stderr, "%s\n", lr_errmsg()); return 1; }
    }
    for (int mi = 0; mi < 2; mi++) {
        const char *mname = mi ? "euclid" : "angular";
        if (!strstr(modes, mname)) continue;
        int mode = mi ? LR_NEAREST_EUCLID : LR_NEAREST_ANGULAR;
        for (int ti = 0; ti < nt; ti++) {
            int T = tlist[ti];
            work *w = calloc((size_t)T, sizeof *w);
            pthread_t *th = calloc((size_t)T, sizeof *th);
            float *x = malloc((size_t)T * (size_t)nblocks * 24 * sizeof *x);
            if (!w || !th || !x) { fprintf(stderr, "leech_encode_bench: out of memory\n"); return 1; }
            lr_rng r;
            lr_rng_seed(&r, 1234);
            for (size_t i = 0; i < (size_t)T * (size_t)nblocks * 24; i++) x[i] = (float)lr_rng_gauss(&r);
            pthread_barrier_t start;
            pthread_barrier_init(&start, NULL, (unsigned)T + 1);
            for (int k = 0; k < T; k++) {
                w[k] = (work){ mode, max_shell, nblocks, x + (size_t)k * nblocks * 24, 0, 0, 0, &start };
                if (pthread_create(&th[k], NULL, run, &w[k])) { fprintf(stderr, "leech_encode_bench: pthread_create\n"); return 1; }
            }
            pthread_barrier_wait(&start);
            double t0 = lr_now();
            for (int k = 0; k < T; k++) pthread_join(th[k], NULL);
            double dt = lr_now() - t0, cpu = 0;
            uint64_t nodes = 0;
            for (int k = 0; k < T; k++) {
                if (w[k].rc) { fprintf(stderr, "leech_encode_bench: %s\n", lr_errmsg()); return 1; }
                cpu += w[k].cpu;
                nodes += w[k].nodes;
            }
            pthread_barrier_destroy(&start);
            double total = (double)T * nblocks, bps = total / dt, per_core = bps / T, per_cpu = total / cpu;
            printf("%-8s %7d %14.0f %14.0f %14.0f %12.0f\n", mname, T, bps, per_core, per_cpu, (double)nodes / total);
            /* CSV: CPU-time figures (see the top of the file) */
            char arm[64];
            snprintf(arm, sizeof arm, "nearest_%s_L%d%s", mname, max_shell, variant ? "" : "_portable");
            lr_csv_row(&out, "%s,gauss_unit,threads_%d,%d,24,%.4f,%.3f,,,,,%.0f", arm, T, T * nblocks,
                       (double)(64 - __builtin_clzll(lr_leech_ball_points(max_shell) - 1)) / 24, 1e6 / per_cpu,
                       per_cpu);
            free(w), free(th), free(x);
        }
    }
    if (lr_csv_close(&out)) { fprintf(stderr, "leech_encode_bench: %s\n", lr_errmsg()); return 1; }
    return 0;
}
