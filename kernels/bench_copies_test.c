/* lr_bench_copies: how many distinct weight copies a timing loop rotates
 * through (kernels/kernels.h). At least 40 (an engine's layers: the side
 * arrays must not stay in L2), 4x the L2 of weights for small matrices'
 * sake up to 64, never past 16 GB of weights, never fewer than 2. */
#include "kernels/kernels.h"
#include "test/t.h"

static int test_copies(void)
{
    const int l2 = 60 << 20;
    /* 14B gate|up at 4.8 b/w (107 MB): 4x the L2 is 3 copies; the engine rule makes 40 */
    T_ASSERT(lr_bench_copies(34816, 5120, 4.8, l2) == 40, "14B gate|up: %d", lr_bench_copies(34816, 5120, 4.8, l2));
    /* k (1024 x 5120 f16, 10 MB): 4x the L2 needs 24; 40 */
    T_ASSERT(lr_bench_copies(1024, 5120, 0, l2) == 40, "14B k f16: %d", lr_bench_copies(1024, 5120, 0, l2));
    /* a tiny matrix: 4x the L2 would be thousands; capped at 64 */
    T_ASSERT(lr_bench_copies(64, 256, 16, l2) == 64, "tiny: %d", lr_bench_copies(64, 256, 16, l2));
    /* 32B gate|up f16 (524 MB): 40 would be 21 GB; 16 GB allow 30 */
    T_ASSERT(lr_bench_copies(51200, 5120, 16, l2) == 30, "32B gate|up f16: %d", lr_bench_copies(51200, 5120, 16, l2));
    /* a matrix past 8 GB: still 2 */
    T_ASSERT(lr_bench_copies(1 << 20, 1 << 13, 16, l2) == 2, "16 GB matrix: %d", lr_bench_copies(1 << 20, 1 << 13, 16, l2));
    return T_PASS;
}

T_MAIN(T_CASE(test_copies))
