/* Fuzz target: arbitrary bytes as LEECHRT_ROT_SLAB. lr_rot_slab_set either
 * takes them or refuses with LR_EINVAL naming the setting and leaves the list
 * empty; what it takes, lr_rot_shape_for returns for the first item's width:
 * a slab of 0 or a power of two in [4, 32768], threads 0 or a multiple of 32
 * in [32, 1024], registers 0 or in [16, 255], as the item says. */
#include "kernels/rotation.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    /* a known list first: a refusal must clear it */
    if (lr_rot_slab_set("LEECHRT_ROT_SLAB", "5120:128") != LR_OK) __builtin_trap();
    int rc = lr_rot_slab_set("LEECHRT_ROT_SLAB", s);
    if (rc != LR_OK) {
        if (rc != LR_EINVAL || !strstr(lr_errmsg(), "LEECHRT_ROT_SLAB")) __builtin_trap();
        if (lr_rot_slab_for(5120) != 0) __builtin_trap();
    } else {
        /* the first item, parsed again by hand: its shape is found for its width */
        int n, sl, th = 0, rg = 0;
        if (sscanf(s, "%d:%d:%d:%d", &n, &sl, &th, &rg) < 2) __builtin_trap();
        const lr_rot_shape got = lr_rot_shape_for(n);
        if (got.s != sl || lr_rot_slab_for(n) != sl || got.threads != th || got.regs != rg) __builtin_trap();
        if (got.s && (got.s < 4 || got.s > 32768 || (got.s & (got.s - 1)))) __builtin_trap();
        if (got.threads && (got.threads < 32 || got.threads > 1024 || got.threads % 32)) __builtin_trap();
        if (got.regs && (got.regs < 16 || got.regs > 255 || !got.threads)) __builtin_trap();
    }
    lr_clear_error();
    lr_rot_slab_set("LEECHRT_ROT_SLAB", NULL);
    free(s);
    return 0;
}
