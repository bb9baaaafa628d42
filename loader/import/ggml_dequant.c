/* GGML block formats (32 weights per block, little-endian):
 *   q8_0: f16 d, int8 q[32]                    w[j] = q[j] * d
 *   q4_0: f16 d, u8 qs[16]                     w[j] = (lo(qs[j]) - 8) * d,  w[j+16] = (hi(qs[j]) - 8) * d
 *   q4_1: f16 d, f16 m, u8 qs[16]              w[j] = lo(qs[j]) * d + m,    w[j+16] = hi(qs[j]) * d + m
 * lo / hi are the low and high nibbles: the low nibbles hold weights 0..15,
 * the high nibbles weights 16..31 of the block. */
#include "loader/import/ggml_dequant.h"
#include "util/err.h"
#include "util/half.h"

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

int lr_ggml_dequant_supported(uint32_t type)
{
    return type == LR_GGML_F32 || type == LR_GGML_F16 || type == LR_GGML_BF16 || type == LR_GGML_Q8_0 ||
           type == LR_GGML_Q4_0 || type == LR_GGML_Q4_1;
}

static int block_of(uint32_t type, uint32_t *elems, uint32_t *bytes)
{
    switch (type) {
    case LR_GGML_F32: *elems = 1, *bytes = 4; return 1;
    case LR_GGML_F16:
    case LR_GGML_BF16: *elems = 1, *bytes = 2; return 1;
    case LR_GGML_Q8_0: *elems = 32, *bytes = 34; return 1;
    case LR_GGML_Q4_0: *elems = 32, *bytes = 18; return 1;
    case LR_GGML_Q4_1: *elems = 32, *bytes = 20; return 1;
    }
    return 0;
}

uint64_t lr_ggml_row_bytes(uint32_t type, uint64_t n)
{
    uint32_t e, b;
    if (!block_of(type, &e, &b) || n % e) return 0;
    return n / e * b;
}

int lr_ggml_dequant(uint32_t type, const void *src, uint64_t n, float *out)
{
    uint32_t be, bb;
    if (!block_of(type, &be, &bb)) return LR_FAIL(LR_EUNSUPPORTED, "ggml type %u is not dequantized here", type);
    if (n % be) return LR_FAIL(LR_EINVAL, "%llu elements is not a whole number of %u-element blocks",
                               (unsigned long long)n, be);
    const uint8_t *p = src;
    switch (type) {
    case LR_GGML_F32:
        for (uint64_t i = 0; i < n; i++, p += 4)
            out[i] = lr_bits_f32((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        break;
    case LR_GGML_F16:
        for (uint64_t i = 0; i < n; i++, p += 2) out[i] = lr_half_to_float(rd16(p));
        break;
    case LR_GGML_BF16:
        for (uint64_t i = 0; i < n; i++, p += 2) out[i] = lr_bf16_to_float(rd16(p));
        break;
    case LR_GGML_Q8_0:
        for (uint64_t b = 0; b < n / 32; b++, p += 34, out += 32) {
            float d = lr_half_to_float(rd16(p));
            for (int j = 0; j < 32; j++) out[j] = (float)(int8_t)p[2 + j] * d;
        }
        break;
    case LR_GGML_Q4_0:
        for (uint64_t b = 0; b < n / 32; b++, p += 18, out += 32) {
            float d = lr_half_to_float(rd16(p));
            for (int j = 0; j < 16; j++) {
                out[j] = (float)((p[2 + j] & 15) - 8) * d;
                out[j + 16] = (float)((p[2 + j] >> 4) - 8) * d;
            }
        }
        break;
    case LR_GGML_Q4_1:
        for (uint64_t b = 0; b < n / 32; b++, p += 20, out += 32) {
            float d = lr_half_to_float(rd16(p)), m = lr_half_to_float(rd16(p + 2));
            for (int j = 0; j < 16; j++) {
                out[j] = (float)(p[4 + j] & 15) * d + m;
                out[j + 16] = (float)(p[4 + j] >> 4) * d + m;
            }
        }
        break;
    }
    return LR_OK;
}
