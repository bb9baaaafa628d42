/* bench_unfold: what unfolding a Leech archive into the VRAM layouts costs
 * per block on one core, split into its parts: the reference path
 * (lr_leech_unrank, then lr_p14_put / lr_i8_put per block) and the fast one
 * (lr_leech_unrank_codes straight to codes, segments written once), and the
 * whole fills (lr_p14_fill vs lr_p14_fill_ref, lr_i8_unfold vs
 * lr_i8_unfold_ref, lr_p14s_unfold vs lr_p14s_unfold_ref, and the 3-bit form from Planes14S,
 * lr_p14s_c3_form vs lr_p14s_c3_form_ref) on one thread. Times are per-thread CPU time, best of
 * --reps, so other processes sharing the machine change them little.
 * Indices are uniform over the ball (what the synthetic models hold; the
 * shell-12 classes dominate) or, with --class-uniform, a uniform class then
 * a uniform point of it (what the layout tests use). */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/i8.h"
#include "layouts/leech_vram/p14.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech_vram/random.h"
#include "util/args.h"
#include "util/err.h"
#include "util/rng.h"
#include "util/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_unfold [--rows N] [--cols N] [--reps N] [--class-uniform] [--help]\n"
            "Per-block cost (ns per block per core, thread CPU time, best of the repetitions) of\n"
            "unfolding one rows x cols Leech matrix (1 gain bit) into Planes14, I8x and Planes14S, reference\n"
            "and fast paths, with the reference's unrank and layout-write parts apart.\n"
            "  --rows N         matrix rows (default 256)\n"
            "  --cols N         matrix columns (default 12288: 512 blocks a row)\n"
            "  --reps N         repetitions, the best counts (default 5)\n"
            "  --class-uniform  a uniform class, then a uniform point of it (default: uniform over the ball)\n");
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const lr_leech_matrix *m;
    const uint64_t *idx;
    const uint8_t *gain;
    int8_t *x;          /* unranked points, [n][24] */
    int16_t *cls;
    uint8_t *codes;
    lr_p14 *p14;        /* bound to an image */
    lr_p14s *p14s;      /* the matrix in Planes14S, for its 3-bit form */
} bench;

enum { UNRANK, CODES_REF, CODES, P14_PUT, P14_REF, P14_FAST, I8_REF, I8_FAST, P14S_REF, P14S_FAST, C3_REF, C3_FAST, NSTEP };
static const char *k_name[NSTEP] = {
    "lr_leech_unrank (reference decode)",
    "lr_leech_unrank_codes_ref",
    "lr_leech_unrank_codes (fast decode)",
    "lr_p14_put (reference layout write)",
    "lr_p14_fill_ref (whole, reference)",
    "lr_p14_fill (whole, fast)",
    "lr_i8_unfold_ref (whole, reference)",
    "lr_i8_unfold (whole, fast)",
    "lr_p14s_unfold_ref (whole, reference)",
    "lr_p14s_unfold (whole, fast)",
    "lr_p14s_c3_form_ref (Planes14S -> 3-bit)",
    "lr_p14s_c3_form (Planes14S -> 3-bit, fast)",
};

static int run(bench *b, int step)
{
    const lr_leech_matrix *m = b->m;
    size_t n = (size_t)m->rows * m->nblk;
    const lr_leech_matrix *ps[1] = { m };
    lr_i8 L;
    int rc = LR_OK;
    switch (step) {
    case UNRANK:
        for (size_t k = 0; k < n && !rc; k++) rc = lr_leech_unrank(b->idx[k], m->max_shell, b->x + 24 * k);
        return rc;
    case CODES_REF: return lr_leech_unrank_codes_ref(b->idx, n, m->max_shell, b->cls, b->codes);
    case CODES: return lr_leech_unrank_codes(b->idx, n, m->max_shell, b->cls, b->codes);
    case P14_PUT:
        for (size_t k = 0; k < n && !rc; k++)
            rc = lr_p14_put(b->p14, (int)(k / m->nblk), (int)(k % m->nblk), b->x + 24 * k, b->gain[k]);
        return rc;
    case P14_REF: return lr_p14_fill_ref(ps, b->p14, 0, b->p14->rg);
    case P14_FAST: return lr_p14_fill(ps, b->p14, 0, b->p14->rg);
    case I8_REF:
    case I8_FAST:
        rc = (step == I8_REF ? lr_i8_unfold_ref : lr_i8_unfold)(m, 1, &L);
        if (!rc) lr_i8_free(&L);
        return rc;
    case P14S_REF:
    case P14S_FAST: {
        lr_p14s S;
        rc = (step == P14S_REF ? lr_p14s_unfold_ref : lr_p14s_unfold)(m, 1, &S);
        if (!rc) lr_p14s_free(&S);
        return rc;
    }
    case C3_REF:
    case C3_FAST: {
        lr_p14s_c3 F;
        rc = (step == C3_REF ? lr_p14s_c3_form_ref : lr_p14s_c3_form)(b->p14s, 1, &F);
        if (!rc) lr_p14s_c3_free(&F);
        return rc;
    }
    }
    return LR_OK;
}

int main(int argc, char **argv)
{
    lr_program_init("bench_unfold");
    int rows = 256, cols = 24 * 512, reps = 5, class_uniform = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--class-uniform")) { class_uniform = 1; continue; }
        if (strcmp(a, "--rows") && strcmp(a, "--cols") && strcmp(a, "--reps")) {
            fprintf(stderr, "bench_unfold: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (!v) { fprintf(stderr, "bench_unfold: %s needs a value\n", a); usage(stderr); return 2; }
        if (!strcmp(a, "--rows")) { if (lr_arg_int("bench_unfold", a, v, 1, 1048576, &rows)) return 2; }
        else if (!strcmp(a, "--cols")) { if (lr_arg_int("bench_unfold", a, v, 1, 1048576, &cols)) return 2; }
        else if (!strcmp(a, "--reps")) { if (lr_arg_int("bench_unfold", a, v, 1, 1000000, &reps)) return 2; }
        i++;
    }
    if (cols < 24) {
        /* a Leech block is 24 weights */
        fprintf(stderr, "bench_unfold: --cols %d: at least 24 (one Leech block)\n", cols);
        return 2;
    }
    if (rows < 1 || reps < 1) { usage(stderr); return 2; }
    lr_leech_matrix m;
    if (lr_leech_random_matrix(rows, cols, 12, 1, 0, 1, &m)) { fprintf(stderr, "bench_unfold: %s\n", lr_errmsg()); return 1; }
    size_t n = (size_t)rows * m.nblk;
    uint64_t *idx = malloc(n * sizeof *idx);
    uint8_t *gain = malloc(n);
    bench b = { &m, idx, gain, malloc(24 * n), malloc(2 * n), malloc(24 * n), NULL, NULL };
    if (!idx || !gain || !b.x || !b.cls || !b.codes) { fprintf(stderr, "bench_unfold: out of memory\n"); return 1; }
    if (!class_uniform) { /* re-draw the archive uniformly over the ball */
        lr_rng r;
        lr_rng_seed(&r, 2);
        for (size_t k = 0; k < n; k++) idx[k] = lr_rng_below(&r, lr_leech_ball_points(12)), gain[k] = (uint8_t)(k & 1);
        if (lr_leech_archive_pack(idx, gain, n, 1, m.archive, m.archive_bytes)) {
            fprintf(stderr, "bench_unfold: %s\n", lr_errmsg());
            return 1;
        }
    }
    if (lr_leech_archive_unpack(m.archive, m.archive_bytes, n, 1, idx, gain)) {
        fprintf(stderr, "bench_unfold: %s\n", lr_errmsg());
        return 1;
    }
    const lr_leech_matrix *ps[1] = { &m };
    lr_p14 L;
    if (lr_p14_plan(ps, 1, &L)) { fprintf(stderr, "bench_unfold: %s\n", lr_errmsg()); return 1; }
    void *img = calloc(L.img_bytes, 1);
    if (!img) { fprintf(stderr, "bench_unfold: out of memory\n"); return 1; }
    lr_p14_bind(&L, img);
    b.p14 = &L;
    lr_p14s S;
    if (lr_p14s_unfold(&m, 1, &S)) { fprintf(stderr, "bench_unfold: %s\n", lr_errmsg()); return 1; }
    b.p14s = &S;
    if (run(&b, P14_REF)) { fprintf(stderr, "bench_unfold: %s\n", lr_errmsg()); return 1; } /* tables; warm-up */

    printf("%d x %d (%zu blocks), indices %s, best of %d, ns per block per core (thread CPU time)\n", rows, cols, n,
           class_uniform ? "class-uniform" : "uniform over the ball", reps);
    double best[NSTEP];
    for (int s = 0; s < NSTEP; s++) {
        best[s] = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = cpu_now();
            if (run(&b, s)) { fprintf(stderr, "bench_unfold: %s: %s\n", k_name[s], lr_errmsg()); return 1; }
            double t = cpu_now() - t0;
            if (t < best[s]) best[s] = t;
        }
        printf("  %-40s %8.1f\n", k_name[s], 1e9 * best[s] / (double)n);
    }
    printf("Planes14: %.2fx faster, I8x: %.2fx faster, Planes14S: %.2fx faster, its 3-bit form: %.2fx faster\n",
           best[P14_REF] / best[P14_FAST], best[I8_REF] / best[I8_FAST], best[P14S_REF] / best[P14S_FAST],
           best[C3_REF] / best[C3_FAST]);
    lr_p14s_free(&S);
    free(img), free(idx), free(gain), free(b.x), free(b.cls), free(b.codes);
    lr_leech_random_free(&m);
    return 0;
}
