/* Fuzz target: arbitrary bytes as a cubin (lr_cubin_regcount) and as an
 * nvdisasm listing (lr_sass_mma_loop, lr_sass_prewait_loads). Either reads a
 * value or refuses with LR_EFORMAT; never a read outside the input. A loop it
 * finds holds at least one mma and its per-weight count is positive and
 * finite; the loads before a wait are counted only when there is one, and a
 * first narrow opcode is named exactly when some load was narrow. */
#include "jit/sass.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int regs = -1;
    int rc = lr_cubin_regcount(data, size, &regs);
    if (rc != LR_OK && rc != LR_EFORMAT) __builtin_trap();
    /* the listing is read by length, not to a NUL: a copy without one */
    char *l = malloc(size ? size : 1);
    if (!l) return 0;
    memcpy(l, data, size);
    lr_sass_loop loop;
    rc = lr_sass_mma_loop(l, size, &loop);
    lr_sass_prewait w;
    int rw = lr_sass_prewait_loads(l, size, &w);
    free(l);
    if (rw != LR_OK || w.wide < 0 || w.narrow < 0 || (!w.has_wait && (w.wide || w.narrow)) ||
        !memchr(w.first_narrow, 0, sizeof w.first_narrow) || (w.narrow > 0) != (w.first_narrow[0] != 0))
        __builtin_trap();
    if (rc != LR_OK && rc != LR_EFORMAT && rc != LR_ENOMEM) __builtin_trap();
    if (rc == LR_OK && (loop.mma < 1 || loop.instrs < loop.mma || !(loop.per_weight > 0) || !isfinite(loop.per_weight) ||
                        loop.begin >= loop.end || loop.end > size))
        __builtin_trap();
    return 0;
}
