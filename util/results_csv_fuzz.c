/* Fuzz target: arbitrary bytes as a results CSV (util/results_csv.c): read
 * without undefined behaviour, every cell a piece of the input (together no
 * longer than it), lookups by every header name answer, the commit list
 * stays terminated within its buffer, and the newest-row pick (over every
 * arm, model and matrix the rows name) and each row's process bound answer
 * in range. */
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
        for (int r = 0; r < c.n; r++) {
            int fi, row;
            const int rc = lr_rcsv_newest(&c, 1, lr_rcsv_get(&c, r, "arm"), lr_rcsv_get(&c, r, "model"),
                                          lr_rcsv_get(&c, r, "matrix"), &fi, &row);
            if (rc ? (fi != -1 || row != -1) : (fi != 0 || row < 0 || row >= c.n)) abort();
            (void)lr_rcsv_process_bound(&c, r);
        }
        lr_rcsv_free(&c);
    }
    fclose(f);
    lr_clear_error();
    return 0;
}
