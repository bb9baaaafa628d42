/* The timed path against the verified one (lr_gemv_arm_check_launch): every
 * arm family's launch of every copy gives its verify's GPU output bit for bit,
 * a single differing bit is reported with its copy and row, the SwiGLU arm
 * compares its rows / 2 outputs, and the stream controls (no y) check nothing.
 * The io hand-over needs no GPU. */
#include "kernels/gemv_arm.h"
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

static int test_io_keep_takes_the_buffers(void)
{
    float *x = malloc(8), *y = malloc(12);
    T_ASSERT(x && y, "out of memory");
    lr_gemv_arm_io io = { 0 };
    lr_gemv_arm_io_keep(&io, &x, 2, &y, 3);
    T_ASSERT(!x && !y && io.x && io.y && io.nx == 2 && io.ny == 3, "the buffers were not handed over");
    float *x2 = malloc(4), *y2 = malloc(4);
    lr_gemv_arm_io_keep(NULL, &x2, 1, &y2, 1); /* no io: the verify keeps (and frees) its own */
    T_ASSERT(x2 && y2, "buffers taken without an io");
    free(x2), free(y2);
    lr_gemv_arm_io_free(&io);
    T_ASSERT(!io.x && !io.y && !io.ny, "io not cleared");
    /* an arm that handed over nothing: no launch, nothing checked, no error */
    int n = -1;
    T_OK(lr_gemv_arm_check_launch(lr_gemv_arm_find("f16"), NULL, 3, &io, 0, 0, &n));
    T_ASSERT(n == 0, "checked %d copies of nothing", n);
    return T_PASS;
}

static int test_every_family_checked(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    CUdeviceptr x, y;
    T_OK(lr_cu_alloc(&x, 4 << 16));
    T_OK(lr_cu_alloc(&y, 4 << 16));
    /* rows deliberately not multiples of the row groups (bounds at the end) */
    const struct { const char *arm; int rows, cols, ny, xq; } c[] = {
        { "f16", 1000, 2048, 1000, 0 },          { "noweights", 1000, 2048, 1000, 0 },     { "leech_p14", 1001, 2064, 1001, 0 },
        { "leech_p14s", 1001, 2064, 1001, 0 },   { "leech_p14s3", 1001, 2064, 1001, 0 },   { "leech_p14s_swiglu", 2048, 2048, 1024, 0 },
        { "leech_i8", 1001, 2064, 1001, 0 },     { "leech_p14rec", 1001, 2064, 1001, 0 },  { "leech_p14s_loads", 1001, 2064, 1001, 0 },
        { "leech_p14s3_decode", 1001, 2064, 1001, 0 }, { "cublas", 1000, 2048, 1000, 0 }, { "stream_p14s", 1000, 2048, 0, 0 },
        { "leech_i8", 1001, 2064, 1001, 1 }, /* x quantized by its own launch first (the H200 table's 14B rows) */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const lr_gemv_arm *a = lr_gemv_arm_find(c[i].arm);
        T_ASSERT(a, "arm %s not registered", c[i].arm);
        void *st = NULL;
        const lr_gemv_arm_opts xq = { .extra = { 0, 1 } }; /* leech_i8's knob 1: the x quantizer launch */
        int rc = a->prepare(c[i].rows, c[i].cols, 3, 70 + i, c[i].xq ? &xq : NULL, &st);
        if (rc == LR_EUNSUPPORTED) { printf("    %s: %s\n", c[i].arm, lr_errmsg()); continue; } /* cuBLAS absent */
        T_OK(rc);
        double err = 0;
        lr_gemv_arm_io io = { 0 };
        int n = -1;
        T_OK(a->verify(st, 5, &err, &io));
        T_ASSERT(io.ny == (size_t)c[i].ny, "%s hands over %zu outputs, want %d", c[i].arm, io.ny, c[i].ny);
        T_OK(lr_gemv_arm_check_launch(a, st, 3, &io, x, y, &n));
        T_ASSERT(n == (c[i].ny ? 3 : 0), "%s: %d copies checked", c[i].arm, n);
        if (c[i].ny) {
            /* one bit of one row off: the check must name copy 0 and that row */
            unsigned u;
            memcpy(&u, &io.y[c[i].ny - 1], 4), u ^= 1, memcpy(&io.y[c[i].ny - 1], &u, 4);
            rc = lr_gemv_arm_check_launch(a, st, 3, &io, x, y, &n);
            char want[64];
            snprintf(want, sizeof want, "copy 0 of 3 gives row %d ", c[i].ny - 1);
            T_ASSERT(rc == LR_EVERIFY && n == 0 && strstr(lr_errmsg(), want), "%s: a flipped bit passed (rc %d): %s",
                     c[i].arm, rc, lr_errmsg());
        }
        printf("    %-18s %5d x %5d%s: %d copies equal to the verified launch\n", c[i].arm, c[i].rows, c[i].cols,
               c[i].xq ? " (xq)" : "", c[i].ny ? 3 : 0);
        lr_gemv_arm_io_free(&io);
        a->destroy(st);
    }
    lr_cu_free(x), lr_cu_free(y);
    return T_PASS;
}

T_MAIN(T_CASE(test_io_keep_takes_the_buffers), T_CASE(test_every_family_checked))
