/* The stream_p14s control arms (grid-stride, and one contiguous range per
 * CTA): the bytes of a Planes14S matrix of the shape (segments only), the
 * probe verified against its host reference, small and large shapes (fewer
 * CTAs than SMs, and the capped grid). */
#include "kernels/gemv_arm.h"
#include "kernels/kernels.h"
#include "test/t.h"
#include "util/err.h"

static int check_arm(const char *name, int seg)
{
    const lr_gemv_arm *a = lr_gemv_arm_find(name);
    const double bpw = seg * 8.0 / 3072;
    T_ASSERT(a && a->bits_per_weight > bpw - 0.001 && a->bits_per_weight < bpw + 0.001, "%s not registered as %.3f b/w",
             name, bpw);
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const int shapes[][2] = { { 77, 1001 }, { 5120, 5120 }, { 34816, 5120 }, { 5121, 17413 } };
    for (int i = 0; i < 4; i++) {
        void *st;
        T_OK(a->prepare(shapes[i][0], shapes[i][1], 2, 50 + i, NULL, &st));
        const size_t want = (size_t)((shapes[i][0] + 15) / 16) * ((shapes[i][1] / 24 + 7) / 8) * (size_t)seg;
        T_ASSERT(a->bytes(st) == want, "%dx%d: %zu bytes, want %zu", shapes[i][0], shapes[i][1], a->bytes(st), want);
        double err = 1;
        T_OK(a->verify(st, 0, &err, NULL));
        T_OK(a->launch(st, 1, 0, 0, NULL));
        T_OK(lr_cu_sync()); /* (a fault in the timed path's launch shows here, not in a later case) */
        printf("    %s %5d x %5d: %zu bytes, verified\n", name, shapes[i][0], shapes[i][1], want);
        a->destroy(st);
    }
    return T_PASS;
}

static int test_bytes_and_verify(void) { return check_arm("stream_p14s", 1792); }

/* The 3-bit form's segments: 1,344 bytes per 16 x 192 weights (3.5 b/w). */
static int test_c3_bytes_and_verify(void) { return check_arm("stream_p14s3", 1344); }

/* One contiguous range per CTA: ranges that are not multiples of the
 * threads (the last words of 5121 x 17413), one CTA for 77 x 1001. */
static int test_ranges_bytes_and_verify(void) { return check_arm("stream_p14s_ranges", 1792); }

/* The ranges form's host reference on a tiny buffer, by hand: 3 blocks over
 * 7 words read [0, 2), [2, 4), [4, 7). No GPU needed. */
static int test_ranges_host(void)
{
    uint32_t w[28], out[3];
    for (int i = 0; i < 28; i++) w[i] = (uint32_t)i + 1;
    lr_probe_ranges_host(w, 7, out, 3, 768);
    uint32_t want[3] = { 0, 0, 0 };
    const int lo[3] = { 0, 2, 4 }, hi[3] = { 2, 4, 7 };
    for (int b = 0; b < 3; b++)
        for (int i = 4 * lo[b]; i < 4 * hi[b]; i++) want[b] += (uint32_t)i + 1;
    for (int b = 0; b < 3; b++) T_ASSERT(out[b] == want[b], "block %d: %u, want %u", b, out[b], want[b]);
    return T_PASS;
}

/* Impossible swept geometries are refused by name, before any device is
 * asked for (no GPU needed). */
static int test_bad_geometries(void)
{
    const lr_gemv_arm *a = lr_gemv_arm_find("stream_p14s"), *r = lr_gemv_arm_find("stream_p14s_ranges");
    T_ASSERT(a && r, "arms not registered");
    const lr_gemv_arm_opts bad[] = { { .threads = 100 }, { .unroll = 33 }, { .extra = { 33 } }, { .threads = 2048 } };
    void *st = NULL;
    for (int i = 0; i < 4; i++) {
        T_ASSERT(a->prepare(5120, 5120, 1, 1, &bad[i], &st) == LR_EINVAL && !st, "bad geometry %d accepted", i);
        T_ASSERT(strstr(lr_errmsg(), "stream_p14s"), "bad geometry %d: %s", i, lr_errmsg());
    }
    const lr_gemv_arm_opts two = { .extra = { 2 } }; /* the ranges form is one CTA per SM */
    T_ASSERT(r->prepare(5120, 5120, 1, 1, &two, &st) == LR_EINVAL && !st, "ranges with 2 CTAs per SM accepted");
    lr_clear_error();
    return T_PASS;
}

/* Swept geometries (threads, loads in flight, CTAs per SM) verify as the
 * default does. */
static int test_geometries(void)
{
    T_SKIP_IF(lr_cu_init(0) != LR_OK, "no GPU");
    const lr_gemv_arm *a = lr_gemv_arm_find("stream_p14s");
    T_ASSERT(a, "arm not registered");
    const lr_gemv_arm_opts ok[] = { { .threads = 768, .unroll = 4, .extra = { 1 } },
                                    { .threads = 1024, .unroll = 16, .extra = { 2 } },
                                    { .threads = 96, .unroll = 1, .extra = { 32 } } };
    for (int i = 0; i < 3; i++) {
        void *st;
        double err = 1;
        T_OK(a->prepare(5121, 17413, 1, 60 + i, &ok[i], &st));
        int rc = a->verify(st, 0, &err, NULL);
        a->destroy(st);
        T_OK(rc);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_ranges_host), T_CASE(test_bytes_and_verify), T_CASE(test_c3_bytes_and_verify),
       T_CASE(test_ranges_bytes_and_verify),
       T_CASE(test_bad_geometries), T_CASE(test_geometries))
