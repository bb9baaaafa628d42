/* LEECHRT_TUNE: launch geometries given by hand ahead of the tuning table.
 * Why: the table's winners were timed standalone (tools/tune_gemv, no kernel
 * before them); inside the engine a GEMV's first loads overlap the op before
 * it (PDL), which may favour another geometry. bench_engine --env
 * LEECHRT_TUNE=... times candidates inside the step, in one process. */
#include "kernels/tuning.h"
#include "util/err.h"
#include "util/setting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OVR 16

typedef struct {
    char arm[32];
    int rows, cols;
    int knobs[LR_TUNE_KNOBS];
} ovr;

static ovr g_ovr[MAX_OVR];
static int g_novr;

/* One integer of the setting at *p, then the separator sep (0: end of entry). */
static int num(const char **p, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(*p, &end, 10);
    if (end == *p || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    *p = end;
    return 0;
}

/* ARM:ROWSxCOLS=K1,...,K10; the knobs may be separated by '/' too
 * (bench_engine --env splits its values at commas). */
static int parse_entry(const char *what, const char *e, size_t len, ovr *o)
{
    char buf[256];
    if (len >= sizeof buf) return LR_FAIL(LR_EINVAL, "%s: entry of %zu characters (at most 255)", what, len);
    memcpy(buf, e, len);
    buf[len] = 0;
    const char *colon = strchr(buf, ':');
    if (!colon || colon == buf || (size_t)(colon - buf) >= sizeof o->arm)
        return LR_FAIL(LR_EINVAL, "%s: '%s': want ARM:ROWSxCOLS=K1,...,K%d", what, buf, LR_TUNE_KNOBS);
    memset(o, 0, sizeof *o);
    memcpy(o->arm, buf, (size_t)(colon - buf));
    const char *p = colon + 1;
    if (num(&p, 1, 1 << 24, &o->rows) || *p++ != 'x' || num(&p, 1, 1 << 24, &o->cols) || *p++ != '=')
        return LR_FAIL(LR_EINVAL, "%s: '%s': want ARM:ROWSxCOLS=K1,...,K%d", what, buf, LR_TUNE_KNOBS);
    for (int k = 0; k < LR_TUNE_KNOBS; k++) {
        const int last = k + 1 == LR_TUNE_KNOBS;
        /* (Planes14S's extra3 uses bits 0-20: the 3-bit form is bit 20) */
        if (num(&p, -(1 << 24), 1 << 24, &o->knobs[k]) || (last ? *p != 0 : *p != ',' && *p != '/'))
            return LR_FAIL(LR_EINVAL, "%s: '%s': knob %d: want %d integers separated by , or /", what, buf, k + 1,
                           LR_TUNE_KNOBS);
        if (*p) p++;
    }
    return LR_OK;
}

int lr_tuning_override_set(const char *what, const char *s)
{
    ovr tmp[MAX_OVR];
    int n = 0;
    const char *item;
    size_t len;
    for (const char *cur = s; lr_setting_next(&cur, &item, &len);) {
        if (n == MAX_OVR) return LR_FAIL(LR_EINVAL, "%s: more than %d entries", what, MAX_OVR);
        int rc = parse_entry(what, item, len, &tmp[n]);
        if (rc) return rc; /* nothing changed */
        n++;
    }
    memcpy(g_ovr, tmp, (size_t)n * sizeof tmp[0]);
    g_novr = n;
    return LR_OK;
}

int lr_tuning_override_lookup(const char *arm, int rows, int cols, int knobs[LR_TUNE_KNOBS])
{
    for (int i = 0; i < g_novr; i++)
        if (g_ovr[i].rows == rows && g_ovr[i].cols == cols && !strcmp(g_ovr[i].arm, arm)) {
            memcpy(knobs, g_ovr[i].knobs, sizeof g_ovr[i].knobs);
            return 1;
        }
    return 0;
}
