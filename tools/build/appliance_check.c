/* Linked by tools/cache_test.c with a generated embedded-cubin table: with
 * NVRTC disabled and an empty cache folder, a warmed kernel must still load
 * (from the table compiled into this binary). Exit 0 on success. */
#include "jit/embedded.h"
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "kernels/ops.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    lr_jit_set_cache_dir(argv[1]); /* empty */
    if (lr_nvrtc_available()) { fprintf(stderr, "NVRTC still available\n"); return 3; }
    if (lr_embedded_cubin_count <= 0) { fprintf(stderr, "no embedded cubins\n"); return 4; }
    lr_jit_spec s;
    lr_op_spec(&s, "op_rope_kv", 128);
    void *cubin;
    size_t n;
    int hit = 0;
    if (lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, &hit) || !hit) { fprintf(stderr, "%s\n", lr_errmsg()); return 5; }
    free(cubin);
    printf("embedded cubins: %d, kernel served from the binary\n", lr_embedded_cubin_count);
    return 0;
}
