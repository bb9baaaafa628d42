/* Fuzz target: arbitrary bytes as LEECHRT_ROT_SLAB. lr_rot_slab_set either
 * takes them or refuses with LR_EINVAL naming the setting and leaves the list
 * empty; what it takes, lr_rot_slab_for returns for the first pair's width:
 * a power of two in [4, 32768]. */
#include "kernels/rotation.h"
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
    /* a known list first: a refusal must clear it */
    if (lr_rot_slab_set("LEECHRT_ROT_SLAB", "5120:128") != LR_OK) __builtin_trap();
    int rc = lr_rot_slab_set("LEECHRT_ROT_SLAB", s);
    if (rc != LR_OK) {
        if (rc != LR_EINVAL || !strstr(lr_errmsg(), "LEECHRT_ROT_SLAB")) __builtin_trap();
        if (lr_rot_slab_for(5120) != 0) __builtin_trap();
    } else {
        /* the first pair, parsed again by hand: its slab is found for its width */
        int n, sl;
        if (sscanf(s, "%d:%d", &n, &sl) != 2) __builtin_trap();
        const int got = lr_rot_slab_for(n);
        if (got != sl || got < 4 || got > 32768 || (got & (got - 1))) __builtin_trap();
    }
    lr_clear_error();
    lr_rot_slab_set("LEECHRT_ROT_SLAB", NULL);
    free(s);
    return 0;
}
