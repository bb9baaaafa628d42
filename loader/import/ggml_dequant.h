/* Dequantization of GGML tensor rows to f32 for import: f32, f16, bf16 and
 * the 32-weight block formats q8_0, q4_0, q4_1 (the layouts of ggml's
 * block_q8_0 / block_q4_0 / block_q4_1; docs/import.md spells them out).
 * Source bytes are little-endian and may be misaligned. */
#ifndef LR_GGML_DEQUANT_H
#define LR_GGML_DEQUANT_H
#include <stddef.h>
#include <stdint.h>

enum {
    LR_GGML_F32 = 0, LR_GGML_F16 = 1, LR_GGML_Q4_0 = 2, LR_GGML_Q4_1 = 3, LR_GGML_Q8_0 = 8, LR_GGML_BF16 = 30,
};

/* 1 when lr_ggml_dequant handles the ggml type. */
int lr_ggml_dequant_supported(uint32_t type);
/* Bytes of n elements of type (n a multiple of the block), 0 if unsupported. */
uint64_t lr_ggml_row_bytes(uint32_t type, uint64_t n);
/* n elements (a multiple of the type's block) from src to out.
 * LR_EUNSUPPORTED for other types, LR_EINVAL for n not a whole block count. */
int lr_ggml_dequant(uint32_t type, const void *src, uint64_t n, float *out);

#endif
