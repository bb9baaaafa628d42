/* bench_load: times loading a model artifact (parse, validate, verify,
 * unfold, upload) from the page cache and writes a CSV row (arm=load). */
#include "layouts/leech_vram/p14_layout.h"
#include "loader/load.h"
#include "loader/synthetic.h"
#include "rt/cu.h"
#include "util/args.h"
#include "util/benchcsv.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/program.h"

#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_load [-m MODEL.lrt] [-c CONFIG] [--csv PATH] [--runs N] [--threads N]\n"
            "                  [--layouts L1,L2] [--host-only] [--per-tensor] [--help]\n"
            "Loads a model artifact end to end (parse, validate, verify every tensor, unfold into the\n"
            "VRAM layouts, upload) from the page cache and reports the wall time of each run; the CSV\n"
            "row (arm=load) carries the median in the us column.\n"
            "  -m MODEL     artifact (default /tmp/leechrt-synthetic-CONFIG.lrt, generated if missing)\n"
            "  -c CONFIG    synthetic config of the default model, and its CSV model column (default 4B);\n"
            "               with -m the column is the artifact's own name, and a missing MODEL is an error\n"
            "  --csv PATH   append the CSV row there (header written if the file is new)\n"
            "  --runs N     timed loads after one page-cache warm-up read (default 3)\n"
            "  --threads N  unfold threads (default: all cores)\n"
            "  --layouts L  preferred VRAM layouts, e.g. planes14 (default: passthroughs: leech-archive,\n"
            "               int8g, dense)\n"
            "  --host-only  unfold into host memory, no GPU\n"
            "  --per-tensor list every tensor's layout, file bytes and device bytes (last run)\n");
}

/* Reads the file once so the timed runs start from the page cache. */
static double warm(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    static char buf[8 << 20];
    double t0 = lr_now();
    while (read(fd, buf, sizeof buf) > 0) {}
    close(fd);
    return lr_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    lr_program_init("bench_load");
    const char *model = NULL, *config = "4B", *csv = NULL;
    lr_load_opts o = { 0 };
    int runs = 3, per_tensor = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--host-only")) { o.host_only = 1; continue; }
        if (!strcmp(a, "--per-tensor")) { per_tensor = 1; continue; }
        if (!v && !lr_arg_in(a, (const char *const[]){
                "--csv", "--host-only", "--layouts", "--per-tensor", "--runs", "--threads", "-c", "-m", NULL })) {
            fprintf(stderr, "bench_load: unknown option %s (see --help)\n", a);
            return 2;
        }
        if (!v) { fprintf(stderr, "bench_load: %s needs a value\n", a); usage(stderr); return 2; }
        if (!strcmp(a, "-m")) model = v;
        else if (!strcmp(a, "-c")) config = v;
        else if (!strcmp(a, "--csv")) csv = v;
        else if (!strcmp(a, "--runs")) { if (lr_arg_int("bench_load", a, v, 1, 100, &runs)) return 2; }
        else if (!strcmp(a, "--threads")) { if (lr_arg_int("bench_load", a, v, 0, 4096, &o.nthreads)) return 2; }
        else if (!strcmp(a, "--layouts")) o.layouts = v;
        else { fprintf(stderr, "bench_load: unknown option %s\n", a); usage(stderr); return 2; }
        i++;
    }
    if (lr_leech_vram_register_layouts()) { fprintf(stderr, "bench_load: %s\n", lr_errmsg()); return 1; }
    lr_model_config c;
    if (lr_synth_config(config, &c)) { fprintf(stderr, "bench_load: -c: %s\n", lr_errmsg()); return 2; }
    char defpath[256];
    const int given = model != NULL;
    if (!model) {
        snprintf(defpath, sizeof defpath, "/tmp/leechrt-synthetic-%s.lrt", config);
        model = defpath;
    }
    struct stat st;
    if (stat(model, &st) != 0 && given) { /* a mistyped -m once got a synthetic model timed in its place */
        fprintf(stderr, "bench_load: %s: %s\n", model, strerror(errno));
        return 1;
    }
    if (stat(model, &st) != 0) {
        lr_progress p;
        lr_synth_opts so = { .seed = 1, .gain_bits = 1, .progress = &p };
        double t0 = lr_now();
        if (lr_synth_write(model, &c, &so)) { fprintf(stderr, "bench_load: %s\n", lr_errmsg()); return 1; }
        printf("generated %s in %.2f s\n", model, lr_now() - t0);
    }
    printf("warm-up read: %.2f s\n", warm(model));

    double *wall = calloc((size_t)runs, sizeof *wall);
    lr_load_report rep = { 0 };
    char status[320] = "";
    int ntensors = 0;
    char name[sizeof c.name] = "";
    for (int r = 0; r < runs; r++) {
        lr_loaded_model *lm;
        lr_progress p;
        o.progress = r == 0 ? &p : NULL;
        if (lr_load(model, &o, &lm)) { fprintf(stderr, "bench_load: %s\n", lr_errmsg()); return 1; }
        wall[r] = lm->report.s_total;
        rep = lm->report;
        ntensors = lm->n;
        snprintf(name, sizeof name, "%s", lr_model_cfg(lm->model)->name);
        snprintf(status, sizeof status, "%s", lm->device_status);
        printf("run %d: %.3f s (validate %.1f ms, verify+unfold+upload %.3f s)\n", r + 1, wall[r], 1e3 * rep.s_open,
               rep.s_unfold);
        if (per_tensor && r == runs - 1)
            for (int i = 0; i < lm->n; i++) {
                const lr_loaded_tensor *t = &lm->t[i];
                printf("  %-24s %-14s %12llu file %12zu device %7.3f b/w\n", t->view->name, t->layout->name,
                       (unsigned long long)t->file_bytes, t->plan.bytes,
                       8.0 * (double)t->plan.bytes / (double)t->view->nelem);
            }
        lr_loaded_free(lm);
    }
    qsort(wall, (size_t)runs, sizeof *wall, cmp_double);
    double med = wall[runs / 2];
    printf("%s: %d tensors, %llu parameters; %s\n", model, ntensors, (unsigned long long)rep.params, status);
    printf("file   %.3f GB payload, %.3f b/w whole model (embedding included), %.3f b/w projections\n",
           (double)rep.file_bytes / 1e9, rep.bpw_file, rep.bpw_proj_file);
    printf("device %.3f GB, %.3f b/w whole model, %.3f b/w projections\n", (double)rep.device_bytes / 1e9,
           rep.bpw_device, rep.bpw_proj_device);
    printf("load   median %.3f s, best %.3f s (%.2f GB/s of file payload)\n", med, wall[0],
           (double)rep.file_bytes / 1e9 / med);

    char dev[200] = "host";
    if (!o.host_only && lr_cu_available()) snprintf(dev, sizeof dev, "%s (%s)", lr_cu_device()->name, lr_cu_device()->arch);
    lr_csv out;
    if (lr_csv_open(&out, csv, NULL, dev)) { fprintf(stderr, "bench_load: %s\n", lr_errmsg()); return 1; }
    /* arm "load" for the passthroughs, "load:<layouts>" otherwise (a comma would split the column). */
    char arm[96] = "load";
    if (o.layouts) {
        snprintf(arm, sizeof arm, "load:%s", o.layouts);
        for (char *q = arm; *q; q++)
            if (*q == ',') *q = '+';
    }
    /* the model column: -c's name for the default synthetic model, else the artifact's own
       (it was -c's, "4B", whatever -m loaded), commas out */
    const char *mcol = given ? name : config;
    char mbuf[sizeof name];
    snprintf(mbuf, sizeof mbuf, "%s", mcol);
    for (char *q = mbuf; *q; q++)
        if (*q == ',') *q = ';';
    lr_csv_row(&out, "%s,%s,all,,,%.3f,%.1f,%.2f,,", arm, mbuf, rep.bpw_device, 1e6 * med,
               (double)rep.file_bytes / 1e9 / med);
    const int wrc = lr_csv_close(&out);
    free(wall);
    if (wrc) { fprintf(stderr, "bench_load: %s\n", lr_errmsg()); return 1; }
    return 0;
}
