/* Fuzz target: arbitrary bytes as a tune_gemv CSV. lr_tuning_csv_best either
 * accepts them or refuses with LR_EFORMAT / LR_ERANGE; what it accepts is one
 * pick per (device, shape) with the arm asked for (its name before any '@'), positive shapes, a finite
 * time, and row pointers into the pick itself. */
#include "kernels/tuning.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f) return 0; /* fmemopen refuses size 0 on some libcs */
    static lr_tuning_pick picks[8];
    int n = -1;
    /* the plain arm name, or the rows of ball-drawn / PDL-chain sweeps (ARM@ball@pdl), whose picks
       carry the plain name */
    int rc = lr_tuning_csv_best_stream(f, "fuzz.csv", size % 3 ? "leech_p14s" : "leech_p14s@ball@pdl",
                                       size % 2 ? "aaa,bbb" : NULL, picks, 8, &n);
    fclose(f);
    if (rc != LR_OK && rc != LR_EFORMAT && rc != LR_ERANGE) __builtin_trap();
    if (n < 0 || n > 8) __builtin_trap();
    for (int i = 0; i < n; i++) {
        const lr_tuning_pick *p = &picks[i];
        if (p->row.device != p->device || p->row.arm != p->arm || strcmp(p->arm, "leech_p14s")) __builtin_trap();
        if (p->row.rows < 1 || p->row.cols < 1 || !isfinite(p->row.us) || p->row.us < 0) __builtin_trap();
        for (int j = 0; j < i; j++)
            if (picks[j].row.cc == p->row.cc && !strcmp(picks[j].device, p->device) && picks[j].row.rows == p->row.rows &&
                picks[j].row.cols == p->row.cols)
                __builtin_trap();
    }
    lr_clear_error();
    return 0;
}
