/* IEEE binary16 and bfloat16 conversions on the host, round to nearest even,
 * bit-exact with the GPU's __float2half_rn / cvt.rn (a NaN becomes the
 * canonical 0x7fff, as there; it kept its sign and payload before). */
#ifndef LR_HALF_H
#define LR_HALF_H
#include <stdint.h>
#include <string.h>

static inline uint32_t lr_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float lr_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float lr_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
        if (man == 0) return lr_bits_f32(sign);
        /* subnormal: value = man * 2^-24 */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    if (exp == 31) return lr_bits_f32(sign | 0x7f800000u | (man << 13));
    return lr_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t lr_float_to_half(float f)
{
    uint32_t x = lr_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return 0x7fff;                 /* NaN */
    if (ax == 0x7f800000u) return (uint16_t)(sign | 0x7c00); /* inf */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to inf */
    if (ax < 0x38800000u) { /* subnormal or zero in half */
        if (ax < 0x33000000u) return (uint16_t)sign;
        uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        int shift = 126 - (int)e; /* 14..24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10)), rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

static inline float lr_bf16_to_float(uint16_t b) { return lr_bits_f32((uint32_t)b << 16); }

static inline uint16_t lr_float_to_bf16(float f)
{
    uint32_t x = lr_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff; /* NaN */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

#endif
