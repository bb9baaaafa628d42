#include "kernels/tuning.h"
#include "rt/cu.h"

#include <stdio.h>
#include <string.h>

static char g_target[256];
static int g_target_cc;

void lr_tuning_set_target(const char *device_name, int cc)
{
    snprintf(g_target, sizeof g_target, "%s", device_name ? device_name : "");
    g_target_cc = cc;
}

int lr_tuning_lookup(const char *arm, int rows, int cols, int knobs[LR_TUNE_KNOBS])
{
    if (lr_tuning_override_lookup(arm, rows, cols, knobs)) return 1;
    const lr_device_info *d = lr_cu_device();
    const char *name = d ? d->name : g_target;
    int cc = d ? d->cc_major * 10 + d->cc_minor : g_target_cc;
    if (!name[0]) return 0;
    for (int i = 0; i < lr_tuning_table_n; i++) {
        const lr_tuning_row *t = &lr_tuning_table[i];
        if (t->cc == cc && t->rows == rows && t->cols == cols && !strcmp(t->arm, arm) &&
            !strncmp(name, t->device, strlen(t->device))) {
            memcpy(knobs, t->knobs, sizeof t->knobs);
            return 1;
        }
    }
    return 0;
}

int lr_tuning_side_candidates(const char *arm, int rows, int cols, int out[5][LR_TUNE_KNOBS], int *now)
{
    /* the rows the geometry getters fall back to, in their order
       (kernels/gemv_leech_p14s.c): the 3-bit arms on Planes14S's */
    static const struct { const char *arm, *then[3]; } chain[] = {
        { "leech_p14s_swiglu", { "leech_p14s" } },
        { "leech_p14s3", { "leech_p14s" } },
        { "leech_p14s3_swiglu", { "leech_p14s_swiglu", "leech_p14s" } },
    };
    int k[LR_TUNE_KNOBS], found = lr_tuning_lookup(arm, rows, cols, k);
    for (size_t i = 0; i < sizeof chain / sizeof chain[0] && !found; i++)
        if (!strcmp(arm, chain[i].arm))
            for (int j = 0; j < 3 && chain[i].then[j] && !found; j++)
                found = lr_tuning_lookup(chain[i].then[j], rows, cols, k);
    if (!found) return 0;
    const int base = k[8] < 0 ? 0 : k[8] & ~(7 << 16);
    for (int s = 0; s <= 4; s++) {
        memcpy(out[s], k, sizeof k);
        out[s][8] = s ? base | s << 16 : k[8] < 0 ? -1 : base;
    }
    const int side = k[8] < 0 ? 0 : k[8] >> 16 & 7;
    if (now) *now = side <= 4 ? side : -1; /* more side warps than a candidate has: none is it */
    return 5;
}
