/* The packed archive of the published format: per block, the 47-bit index
 * (ball L24(12)) then g gain bits (g = 0, 1 or 2), each value most
 * significant bit first, blocks back to back across byte boundaries; only the
 * last byte is padded, with zero bits (ignored when reading). A stream does
 * not carry its length: the caller knows the block count. */
#include "layouts/leech/leech.h"
#include "util/err.h"

#define IDX_BITS LR_LEECH_INDEX_BITS

size_t lr_leech_archive_bytes(uint64_t nblocks, int gain_bits)
{
    if (gain_bits < 0 || gain_bits > 2) return 0;
    uint64_t per = (uint64_t)(IDX_BITS + gain_bits);
    if (nblocks > (UINT64_MAX - 7) / per) return 0;
    uint64_t bytes = (nblocks * per + 7) / 8;
    if (bytes > SIZE_MAX) return 0;
    return (size_t)bytes;
}

int lr_leech_archive_pack(const uint64_t *idx, const uint8_t *gain, uint64_t n, int gain_bits, uint8_t *out,
                          size_t outlen)
{
    if (gain_bits < 0 || gain_bits > 2) return LR_FAIL(LR_EINVAL, "leech archive: gain_bits %d (0, 1 or 2)", gain_bits);
    size_t need = lr_leech_archive_bytes(n, gain_bits);
    if (n && !need) return LR_FAIL(LR_EINVAL, "leech archive: %llu blocks do not fit in memory", (unsigned long long)n);
    if (outlen < need)
        return LR_FAIL(LR_EINVAL, "leech archive: %llu blocks need %zu bytes, buffer has %zu", (unsigned long long)n,
                       need, outlen);
    if (n && (!idx || !out || (gain_bits && !gain))) return LR_FAIL(LR_EINVAL, "leech archive: NULL buffer");
    const unsigned width = IDX_BITS + (unsigned)gain_bits;
    uint64_t acc = 0; /* pending bits, fewer than 8 between blocks */
    unsigned nbits = 0;
    size_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (idx[i] >= LR_LEECH_BALL12_POINTS)
            return LR_FAIL(LR_ERANGE, "leech archive: block %llu: index %llu outside L24(12)", (unsigned long long)i,
                           (unsigned long long)idx[i]);
        unsigned g = gain_bits ? gain[i] : 0;
        if (g >> gain_bits)
            return LR_FAIL(LR_EINVAL, "leech archive: block %llu: gain %u does not fit in %d bits", (unsigned long long)i,
                           g, gain_bits);
        acc = acc << width | idx[i] << gain_bits | g; /* nbits + width <= 7 + 49 < 64 */
        nbits += width;
        while (nbits >= 8) {
            nbits -= 8;
            out[pos++] = (uint8_t)(acc >> nbits);
        }
        acc &= (1ull << nbits) - 1;
    }
    if (nbits) out[pos++] = (uint8_t)(acc << (8 - nbits));
    return LR_OK;
}

int lr_leech_archive_unpack(const uint8_t *in, size_t inlen, uint64_t n, int gain_bits, uint64_t *idx, uint8_t *gain)
{
    if (gain_bits < 0 || gain_bits > 2) return LR_FAIL(LR_EINVAL, "leech archive: gain_bits %d (0, 1 or 2)", gain_bits);
    size_t need = lr_leech_archive_bytes(n, gain_bits);
    if (n && !need) return LR_FAIL(LR_EFORMAT, "leech archive: %llu blocks cannot be stored", (unsigned long long)n);
    if (inlen < need)
        return LR_FAIL(LR_EFORMAT, "leech archive: %llu blocks need %zu bytes, stream has %zu", (unsigned long long)n,
                       need, inlen);
    if (n && (!in || !idx)) return LR_FAIL(LR_EINVAL, "leech archive: NULL buffer");
    const unsigned width = IDX_BITS + (unsigned)gain_bits;
    uint64_t acc = 0;
    unsigned nbits = 0;
    size_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        while (nbits < width) { /* at most 48 + 8 bits held */
            acc = acc << 8 | in[pos++];
            nbits += 8;
        }
        nbits -= width;
        uint64_t v = acc >> nbits;
        acc &= (1ull << nbits) - 1;
        uint64_t ix = v >> gain_bits;
        if (ix >= LR_LEECH_BALL12_POINTS)
            return LR_FAIL(LR_ERANGE, "leech archive: block %llu: index %llu outside L24(12)", (unsigned long long)i,
                           (unsigned long long)ix);
        idx[i] = ix;
        if (gain) gain[i] = (uint8_t)(v & ((1u << gain_bits) - 1));
    }
    return LR_OK;
}
