/* The tuning table's rows from committed sweep CSVs (tools/tune_gemv
 * --from-csv): per (device, arm, shape) the fastest candidate. Why: a
 * tune_gemv run replaces each shape's row by the winner of its own
 * candidates, so sweeps of different candidate sets could not be combined,
 * and the table could not be rebuilt from bench/results. */
#include "kernels/tuning.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 32

/* Splits a line at commas in place (no quoting in these files). */
static int split(char *line, char **f)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *p = line; n < MAXF;) {
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0, p = c + 1;
    }
    return n;
}

static int col(char **hdr, int nh, const char *name)
{
    for (int i = 0; i < nh; i++)
        if (!strcmp(hdr[i], name)) return i;
    return -1;
}

static int num(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end;
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

static int in_list(const char *list, const char *s)
{
    size_t n = strlen(s);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t k = c ? (size_t)(c - p) : strlen(p);
        if (k == n && !strncmp(p, s, n)) return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

int lr_tuning_csv_best(const char *path, const char *arm, const char *commits, lr_tuning_pick *picks, int max, int *n)
{
    static const char *knob_cols[LR_TUNE_KNOBS] = { "threads", "rpw",  "unroll", "tile",   "extra0",
                                                    "extra1",  "minb", "extra2", "extra3", "extra4" };
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return LR_FAIL(LR_EIO, "%s: cannot open", path);
    char hline[4096], line[4096], *hdr[MAXF], *fl[MAXF];
    int rc = LR_OK, lineno = 1;
    if (!fgets(hline, sizeof hline, f)) {
        fclose(f);
        return LR_FAIL(LR_EFORMAT, "%s: empty", path);
    }
    int nh = split(hline, hdr), ci[4 + LR_TUNE_KNOBS];
    const char *need[4] = { "commit", "device", "arm", "us" };
    for (int i = 0; i < 4 + LR_TUNE_KNOBS && !rc; i++) {
        const char *name = i < 4 ? need[i] : knob_cols[i - 4];
        if ((ci[i] = col(hdr, nh, name)) < 0) rc = LR_FAIL(LR_EFORMAT, "%s: no column %s", path, name);
    }
    const int crows = col(hdr, nh, "rows"), ccols = col(hdr, nh, "cols");
    if (!rc && (crows < 0 || ccols < 0)) rc = LR_FAIL(LR_EFORMAT, "%s: no rows/cols columns", path);
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strncmp(line, "date,", 5)) continue; /* the header of an appended run */
        int nf = split(line, fl);
        if (nf != nh) { rc = LR_FAIL(LR_EFORMAT, "%s:%d: %d fields, header has %d", path, lineno, nf, nh); break; }
        if (strcmp(fl[ci[2]], arm) || (commits && !in_list(commits, fl[ci[0]]))) continue;
        lr_tuning_pick p = { 0 };
        double v[2 + 1 + LR_TUNE_KNOBS];
        int ok = device_cc(fl[ci[1]], p.device, sizeof p.device, &p.row.cc) && num(fl[crows], &v[0]) &&
                 num(fl[ccols], &v[1]) && num(fl[ci[3]], &v[2]);
        for (int k = 0; ok && k < LR_TUNE_KNOBS; k++) ok = num(fl[ci[4 + k]], &v[3 + k]);
        if (!ok) { rc = LR_FAIL(LR_EFORMAT, "%s:%d: a device, shape, time or knob field is malformed", path, lineno); break; }
        p.row.rows = (int)v[0], p.row.cols = (int)v[1], p.row.us = v[2];
        for (int k = 0; k < LR_TUNE_KNOBS; k++) p.row.knobs[k] = (int)v[3 + k];
        snprintf(p.arm, sizeof p.arm, "%s", arm);
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
    fclose(f);
    for (int i = 0; i < *n; i++) picks[i].row.device = picks[i].device, picks[i].row.arm = picks[i].arm;
    return rc;
}
