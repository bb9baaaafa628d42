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
