#include "kernels/tuning.h"
#include "rt/cu.h"

#include <string.h>

int lr_tuning_lookup(const char *arm, int rows, int cols, int knobs[LR_TUNE_KNOBS])
{
    const lr_device_info *d = lr_cu_device();
    if (!d) return 0;
    int cc = d->cc_major * 10 + d->cc_minor;
    for (int i = 0; i < lr_tuning_table_n; i++) {
        const lr_tuning_row *t = &lr_tuning_table[i];
        if (t->cc == cc && t->rows == rows && t->cols == cols && !strcmp(t->arm, arm) &&
            !strncmp(d->name, t->device, strlen(t->device))) {
            memcpy(knobs, t->knobs, sizeof t->knobs);
            return 1;
        }
    }
    return 0;
}
