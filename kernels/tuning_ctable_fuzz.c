/* Fuzz target: arbitrary bytes as a tuning table's C source.
 * lr_tuning_table_parse either accepts them or refuses with LR_EFORMAT /
 * LR_ERANGE; what it accepts is at most max rows with positive shapes, a
 * finite non-negative time, non-empty names and row pointers into the picks. */
#include "kernels/tuning.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static lr_tuning_pick rows[8];
    int n = -1;
    int rc = lr_tuning_table_parse((const char *)data, size, "fuzz.c", rows, 8, &n);
    if (rc != LR_OK && rc != LR_EFORMAT && rc != LR_ERANGE) __builtin_trap();
    if (n < 0 || n > 8) __builtin_trap();
    for (int i = 0; rc == LR_OK && i < n; i++) {
        const lr_tuning_pick *p = &rows[i];
        if (p->row.device != p->device || p->row.arm != p->arm || !p->device[0] || !p->arm[0]) __builtin_trap();
        if (p->row.rows < 1 || p->row.cols < 1 || p->row.cc < 1 || !isfinite(p->row.us) || p->row.us < 0) __builtin_trap();
    }
    lr_clear_error();
    return 0;
}
