/* Fuzz target: arbitrary bytes as LEECHRT_TUNE. lr_tuning_override_set
 * either takes them or refuses with LR_EINVAL naming the setting, keeping the
 * overrides it had; what it takes, lr_tuning_override_lookup returns for the
 * first entry's shape, with the knobs as written. */
#include "kernels/tuning.h"
#include "test/fuzz_cstr.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = lr_fuzz_cstr(data, size);
    if (!s) return 0;
    /* a known override first: a refusal must leave it */
    if (lr_tuning_override_set("LEECHRT_TUNE", "keep:3x5=1,2,3,4,5,6,7,8,9,10") != LR_OK) __builtin_trap();
    int k[LR_TUNE_KNOBS];
    int rc = lr_tuning_override_set("LEECHRT_TUNE", s);
    if (rc != LR_OK) {
        if (rc != LR_EINVAL || !strstr(lr_errmsg(), "LEECHRT_TUNE")) __builtin_trap();
        if (!lr_tuning_override_lookup("keep", 3, 5, k) || k[9] != 10) __builtin_trap();
    } else if (s[0]) {
        /* the first entry, parsed again by hand: its arm and shape are found */
        char arm[32];
        int rows, cols, n = 0;
        if (sscanf(s, "%31[^:]:%dx%d=%n", arm, &rows, &cols, &n) == 3 && n > 0 &&
            !lr_tuning_override_lookup(arm, rows, cols, k))
            __builtin_trap();
    }
    lr_clear_error();
    lr_tuning_override_set("LEECHRT_TUNE", NULL);
    free(s);
    return 0;
}
