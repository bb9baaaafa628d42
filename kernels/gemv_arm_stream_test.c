/* The stream_p14s control arm: the bytes of a Planes14S matrix of the shape
 * (segments only), its probe verified against the host reference, small and
 * large shapes (fewer CTAs than 4 per SM, and the capped grid). */
#include "kernels/gemv_arm.h"
#include "test/t.h"
#include "util/err.h"

static int test_bytes_and_verify(void)
{
    const lr_gemv_arm *a = lr_gemv_arm_find("stream_p14s");
    T_ASSERT(a && a->bits_per_weight > 4.66 && a->bits_per_weight < 4.67, "stream_p14s not registered as 4.667 b/w");
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int shapes[][2] = { { 77, 1001 }, { 5120, 5120 }, { 34816, 5120 } };
    for (int i = 0; i < 3; i++) {
        void *st;
        T_OK(a->prepare(shapes[i][0], shapes[i][1], 2, 50 + i, NULL, &st));
        const size_t want = (size_t)((shapes[i][0] + 15) / 16) * ((shapes[i][1] / 24 + 7) / 8) * 1792;
        T_ASSERT(a->bytes(st) == want, "%dx%d: %zu bytes, want %zu", shapes[i][0], shapes[i][1], a->bytes(st), want);
        double err = 1;
        T_OK(a->verify(st, 0, &err));
        T_OK(a->launch(st, 1, 0, 0, NULL));
        printf("    stream_p14s %5d x %5d: %zu bytes, verified\n", shapes[i][0], shapes[i][1], want);
        a->destroy(st);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_bytes_and_verify))
