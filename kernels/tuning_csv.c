/* The tuning table's rows from committed sweep CSVs (tools/tune_gemv
 * --from-csv): per (device, arm, shape) the fastest candidate. Why: a
 * tune_gemv run replaces each shape's row by the winner of its own
 * candidates, so sweeps of different candidate sets could not be combined,
 * and the table could not be rebuilt from bench/results. */
#include "kernels/tuning.h"
#include "util/err.h"
#include "util/results_csv.h"
#include "util/strlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Planes14S candidates that used a removed feature (measured slower,
 * docs/layouts.md): x's f16 copy read from global memory (extra3 bit 2),
 * the class table's eight lane copies (extra3 bit 7), ping-pong segment registers (extra3 bit 8),
 * batches handed out by a counter (extra3 bit 13, 02db962; the bit is not reused),
 * the split's walk started at a point of each CTA's own (extra3 bit 14, ilv 2,
 * f851ed0), the segments stored in the warp groups' walk order (extra3 bit
 * 15, 433b397),
 * a cp.async ring (extra0 >= 3), an L2 prefetch distance (extra2 > 0), a
 * split over CTAs (extra4 > 1), the balanced split's cp.async ring (extra3
 * bits 21-23, eb43a30; the bits are not reused), two round-robin walks per
 * warp (extra3 bit 24, af28064). The kernel would ignore
 * the knob and run another geometry than the one measured; the table holds
 * what runs. The rows stay in the CSV. Every Planes14S arm (leech_p14s*:
 * the int8 and 3-bit forms' arms share the template). */
int lr_tuning_engine_runs(const char *arm, const int knobs[LR_TUNE_KNOBS])
{
    if (strncmp(arm, "leech_p14s", 10)) return 1;
    const int removed3 = 4 | 128 | 256 | 8192 | 16384 | 32768 | (7 << 21) | (1 << 24);
    return !((knobs[8] > 0 && (knobs[8] & removed3)) || knobs[4] >= 3 || knobs[7] > 0 || knobs[9] > 1);
}

/* a finite number in [lo, hi] (no cast of an out-of-range double below) */
static int num(const char *s, double lo, double hi, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end && *v >= lo && *v <= hi;
}

/* a decimal integer in [lo, hi]: shapes and knobs ("5120.9", "0x1400" and
 * "767.99" were taken by num and cast, a row for another shape or geometry) */
static int whole(const char *s, long lo, long hi, double *v)
{
    char *end;
    errno = 0;
    const long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) return 0;
    *v = (double)x;
    return 1;
}

/* "NVIDIA H200 (sm_90)" -> "NVIDIA H200", 90 */
static int device_cc(const char *s, char *dev, size_t n, int *cc)
{
    const char *p = strstr(s, " (sm_");
    if (!p || p == s || (size_t)(p - s) >= n) return 0;
    char *end;
    long v = strtol(p + 5, &end, 10);
    if (end == p + 5 || strcmp(end, ")") || v <= 0 || v > 1000) return 0;
    memcpy(dev, s, (size_t)(p - s)), dev[p - s] = 0;
    *cc = (int)v;
    return 1;
}

int lr_tuning_csv_best_stream(FILE *f, const char *path, const char *arm, const char *commits, lr_tuning_pick *picks,
                              int max, int *n)
{
    /* "ARM@ball" selects the rows of sweeps over ball-drawn blocks, "ARM@model"
     * those on a model artifact's weights (and "ARM@pdl", "ARM@ball@pdl",
     * "ARM@model@pdl" those timed as a PDL chain); the table rows
     * keep the arm's own name (the table is keyed by it). */
    char base[32];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(arm, "@"), arm);
    static const char *cols[5 + LR_TUNE_KNOBS] = { "commit", "device", "arm",    "rows",   "cols",
                                                   "threads", "rpw",   "unroll", "tile",   "extra0",
                                                   "extra1",  "minb",  "extra2", "extra3", "extra4" };
    static const char *us_col = "us";
    *n = 0;
    lr_rcsv c;
    int rc = lr_rcsv_read(f, path, &c), ci[5 + LR_TUNE_KNOBS], cus = -1;
    if (rc) return rc;
    if (!c.nh) rc = LR_FAIL(LR_EFORMAT, "%s: empty", path);
    for (int i = 0; i < 5 + LR_TUNE_KNOBS && !rc; i++)
        if ((ci[i] = lr_rcsv_col(&c, cols[i])) < 0) rc = LR_FAIL(LR_EFORMAT, "%s: no column %s", path, cols[i]);
    if (!rc && (cus = lr_rcsv_col(&c, us_col)) < 0) rc = LR_FAIL(LR_EFORMAT, "%s: no column %s", path, us_col);
    for (int r = 0; r < c.n && !rc; r++) {
        char **fl = c.f[r];
        if (c.nf[r] != c.nh) { rc = LR_FAIL(LR_EFORMAT, "%s:%d: %d fields, header has %d", path, c.line[r], c.nf[r], c.nh); break; }
        if (strcmp(fl[ci[2]], arm) || !lr_list_has(commits, fl[ci[0]])) continue;
        lr_tuning_pick p = { 0 };
        double v[2 + 1 + LR_TUNE_KNOBS];
        int ok = device_cc(fl[ci[1]], p.device, sizeof p.device, &p.row.cc) && whole(fl[ci[3]], 1, 1 << 30, &v[0]) &&
                 whole(fl[ci[4]], 1, 1 << 30, &v[1]) && num(fl[cus], 0, 1e12, &v[2]);
        /* (knobs as LEECHRT_TUNE takes them: extra3 bit 20 is past 1e6) */
        for (int k = 0; ok && k < LR_TUNE_KNOBS; k++) ok = whole(fl[ci[5 + k]], -16777216, 16777216, &v[3 + k]);
        if (!ok) {
            rc = LR_FAIL(LR_EFORMAT, "%s:%d: a device, shape, time or knob field is malformed", path, c.line[r]);
            break;
        }
        p.row.rows = (int)v[0], p.row.cols = (int)v[1], p.row.us = v[2];
        for (int k = 0; k < LR_TUNE_KNOBS; k++) p.row.knobs[k] = (int)v[3 + k];
        if (!lr_tuning_engine_runs(base, p.row.knobs)) continue; /* measured, but no table row */
        snprintf(p.arm, sizeof p.arm, "%s", base);
        int i;
        for (i = 0; i < *n; i++)
            if (picks[i].row.cc == p.row.cc && !strcmp(picks[i].device, p.device) && picks[i].row.rows == p.row.rows &&
                picks[i].row.cols == p.row.cols)
                break;
        if (i < *n) {
            if (p.row.us < picks[i].row.us) picks[i] = p; /* ties keep the first */
        } else if (*n < max) {
            picks[(*n)++] = p;
        } else {
            rc = LR_FAIL(LR_ERANGE, "%s: more than %d shapes", path, max);
        }
    }
    lr_rcsv_free(&c);
    for (int i = 0; i < *n; i++) picks[i].row.device = picks[i].device, picks[i].row.arm = picks[i].arm;
    return rc;
}

int lr_tuning_csv_best(const char *path, const char *arm, const char *commits, lr_tuning_pick *picks, int max, int *n)
{
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return LR_FAIL(LR_EIO, "%s: cannot open", path);
    int rc = lr_tuning_csv_best_stream(f, path, arm, commits, picks, max, n);
    fclose(f);
    return rc;
}
