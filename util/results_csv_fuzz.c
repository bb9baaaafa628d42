/* Fuzz target: arbitrary bytes as a results CSV (util/results_csv.c): read
 * without undefined behaviour, every cell a piece of the input (together no
 * longer than it), lookups by every header name answer, and the commit list
 * stays terminated within its buffer. */
#include "util/err.h"
#include "util/results_csv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f) return 0;
    lr_rcsv c;
    if (lr_rcsv_read(f, "fuzz", &c) == LR_OK) {
        size_t sum = 0;
        for (int i = 0; i < c.nh; i++) sum += strlen(c.hdr[i]);
        for (int r = 0; r < c.n; r++) {
            for (int i = 0; i < c.nf[r]; i++) sum += strlen(c.f[r][i]);
            for (int i = 0; i < c.nh; i++) (void)strlen(lr_rcsv_get(&c, r, c.hdr[i]));
        }
        char list[40] = "";
        lr_rcsv_commits(&c, list, sizeof list);
        if (sum > size || strnlen(list, sizeof list) == sizeof list) abort();
        lr_rcsv_free(&c);
    }
    fclose(f);
    lr_clear_error();
    return 0;
}
