/* The packed archive: exact sizes, hand-checked bit layouts, agreement with a
 * bit-at-a-time reference writer, round trips for odd and even block counts
 * and every gain width, and the error paths. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#define N12 LR_LEECH_BALL12_POINTS

/* Reference: bit k of the stream is bit (7 - k%8) of byte k/8. */
static void ref_pack(const uint64_t *idx, const uint8_t *gain, uint64_t n, int g, uint8_t *out, size_t len)
{
    memset(out, 0, len);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        for (int b = 46; b >= 0; b--, k++)
            if ((idx[i] >> b) & 1) out[k / 8] |= (uint8_t)(0x80 >> (k % 8));
        for (int b = g - 1; b >= 0; b--, k++)
            if ((gain[i] >> b) & 1) out[k / 8] |= (uint8_t)(0x80 >> (k % 8));
    }
}

static int test_sizes(void)
{
    static const struct { uint64_t n; int g; size_t bytes; } t[] = {
        {0, 0, 0}, {1, 0, 6}, {1, 1, 6}, {1, 2, 7}, {2, 0, 12}, {2, 1, 12}, {2, 2, 13}, {3, 0, 18},
        {3, 1, 18}, {3, 2, 19}, {7, 0, 42}, {8, 0, 47}, {8, 1, 48}, {8, 2, 49}, {9, 2, 56}, {1000001, 1, 6000006},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        T_ASSERT(lr_leech_archive_bytes(t[i].n, t[i].g) == t[i].bytes, "%llu blocks, %d gain bits: %zu bytes",
                 (unsigned long long)t[i].n, t[i].g, lr_leech_archive_bytes(t[i].n, t[i].g));
    T_ASSERT(lr_leech_archive_bytes(1, 3) == 0 && lr_leech_archive_bytes(1, -1) == 0, "bad gain_bits");
    T_ASSERT(lr_leech_archive_bytes(UINT64_MAX, 1) == 0, "overflow");
    return T_PASS;
}

static int test_hand_layouts(void)
{
    uint8_t out[16], gain[2] = {1, 0};
    uint64_t idx[2] = {1, 0};
    /* index 1 (46 zero bits, a one) then gain 1: 0x000000000003 */
    T_OK(lr_leech_archive_pack(idx, gain, 1, 1, out, 6));
    static const uint8_t a[6] = {0, 0, 0, 0, 0, 3};
    T_ASSERT(!memcmp(out, a, 6), "index 1 gain 1");
    /* index 2^46 alone: the first bit, then 46 zeros and one zero pad bit */
    idx[0] = 1ull << 46;
    T_OK(lr_leech_archive_pack(idx, NULL, 1, 0, out, 6));
    static const uint8_t b[6] = {0x80, 0, 0, 0, 0, 0};
    T_ASSERT(!memcmp(out, b, 6), "index 2^46");
    /* two blocks of 49 bits: 2^46 + 5 with gain 2, then 3 with gain 1 */
    idx[0] = (1ull << 46) + 5, idx[1] = 3, gain[0] = 2, gain[1] = 1;
    T_OK(lr_leech_archive_pack(idx, gain, 2, 2, out, 13));
    /* bits 0-48: 1 0^43 101 10; bits 49-97: 0^45 11 01; bits 98-103: pad */
    static const uint8_t c[13] = {0x80, 0, 0, 0, 0, 0x0B, 0, 0, 0, 0, 0, 0x03, 0x40};
    for (int i = 0; i < 13; i++) T_ASSERT(out[i] == c[i], "byte %d: %02x, want %02x", i, out[i], c[i]);
    return T_PASS;
}

static int test_round_trips(void)
{
    enum { MAXN = 257 };
    uint64_t idx[MAXN], back[MAXN];
    uint8_t gain[MAXN], gback[MAXN], buf[MAXN * 7 + 16], ref[MAXN * 7 + 16];
    lr_rng r;
    lr_rng_seed(&r, 0xa4c1);
    for (int g = 0; g <= 2; g++)
        for (uint64_t n = 0; n <= MAXN; n += (n < 20 ? 1 : 37)) {
            for (uint64_t i = 0; i < n; i++) {
                uint64_t k = lr_rng_below(&r, 4);
                idx[i] = k == 0 ? 0 : k == 1 ? N12 - 1 : lr_rng_below(&r, N12);
                gain[i] = (uint8_t)lr_rng_below(&r, 1u << g);
            }
            size_t len = lr_leech_archive_bytes(n, g);
            T_ASSERT(len == (n * (47 + (uint64_t)g) + 7) / 8, "size");
            memset(buf, 0xA5, sizeof buf);
            T_OK(lr_leech_archive_pack(idx, gain, n, g, buf, len));
            for (size_t i = len; i < sizeof buf; i++) T_ASSERT(buf[i] == 0xA5, "pack wrote past %zu bytes", len);
            ref_pack(idx, gain, n, g, ref, len);
            T_ASSERT(!memcmp(buf, ref, len), "n=%llu g=%d: differs from the reference", (unsigned long long)n, g);
            memset(back, 0xFF, sizeof back);
            T_OK(lr_leech_archive_unpack(buf, len, n, g, back, gback));
            for (uint64_t i = 0; i < n; i++)
                T_ASSERT(back[i] == idx[i] && gback[i] == (g ? gain[i] : 0), "n=%llu g=%d block %llu",
                         (unsigned long long)n, g, (unsigned long long)i);
        }
    return T_PASS;
}

static int test_errors(void)
{
    uint64_t idx[3] = {5, N12, 7}, back[3];
    uint8_t gain[3] = {0, 1, 1}, buf[32];
    T_ASSERT(lr_leech_archive_pack(idx, gain, 3, 1, buf, sizeof buf) == LR_ERANGE, "pack idx = N12");
    idx[1] = UINT64_MAX;
    T_ASSERT(lr_leech_archive_pack(idx, gain, 3, 1, buf, sizeof buf) == LR_ERANGE, "pack idx = 2^64-1");
    idx[1] = N12 - 1;
    T_ASSERT(lr_leech_archive_pack(idx, gain, 3, 1, buf, 17) == LR_EINVAL, "pack short buffer");
    T_ASSERT(lr_leech_archive_pack(idx, gain, 3, 3, buf, sizeof buf) == LR_EINVAL, "pack gain_bits 3");
    T_ASSERT(lr_leech_archive_pack(idx, gain, 3, -1, buf, sizeof buf) == LR_EINVAL, "pack gain_bits -1");
    gain[2] = 2;
    T_ASSERT(lr_leech_archive_pack(idx, gain, 3, 1, buf, sizeof buf) == LR_EINVAL, "pack gain 2 in 1 bit");
    gain[2] = 3;
    T_OK(lr_leech_archive_pack(idx, gain, 3, 2, buf, sizeof buf));
    T_OK(lr_leech_archive_pack(NULL, NULL, 0, 1, NULL, 0));
    T_OK(lr_leech_archive_unpack(NULL, 0, 0, 1, NULL, NULL));

    T_ASSERT(lr_leech_archive_unpack(buf, 18, 3, 2, back, gain) == LR_EFORMAT, "unpack short stream");
    T_ASSERT(lr_leech_archive_unpack(buf, 19, 3, 3, back, gain) == LR_EINVAL, "unpack gain_bits 3");
    T_OK(lr_leech_archive_unpack(buf, 19, 3, 2, back, NULL)); /* gains may be dropped */
    T_ASSERT(back[0] == 5 && back[1] == N12 - 1 && back[2] == 7, "unpack");
    /* an index >= N12 in the stream: all ones, and exactly N12 */
    memset(buf, 0xFF, sizeof buf);
    T_ASSERT(lr_leech_archive_unpack(buf, 6, 1, 0, back, NULL) == LR_ERANGE, "unpack all ones");
    uint64_t n12 = N12;
    uint8_t one[6] = {0};
    for (int b = 0; b < 47; b++)
        if ((n12 >> (46 - b)) & 1) one[b / 8] |= (uint8_t)(0x80 >> (b % 8));
    T_ASSERT(lr_leech_archive_unpack(one, 6, 1, 0, back, NULL) == LR_ERANGE, "unpack N12");
    idx[0] = N12 - 1; /* the padding bit is ignored */
    T_OK(lr_leech_archive_pack(idx, NULL, 1, 0, buf, 6));
    buf[5] |= 1;
    T_OK(lr_leech_archive_unpack(buf, 6, 1, 0, back, NULL));
    T_ASSERT(back[0] == N12 - 1, "padding ignored");
    return T_PASS;
}

T_MAIN(T_CASE(test_sizes), T_CASE(test_hand_layouts), T_CASE(test_round_trips), T_CASE(test_errors))
