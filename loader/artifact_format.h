/* The on-disk layout of a leechrt model artifact (docs/format.md is the
 * prose version of this file; keep the two in step). Every field is
 * fixed-width little-endian at a fixed offset, read and written through the
 * byte helpers below, never by casting a struct onto the mapping: the file
 * is untrusted and may be misaligned or short. */
#ifndef LR_ARTIFACT_FORMAT_H
#define LR_ARTIFACT_FORMAT_H
#include <stdint.h>
#include <string.h>

#define LRA_MAGIC "LEECHRT\x1a"  /* 8 bytes; \x1a stops `type` on old systems */
#define LRA_MAGIC_BYTES 8
#define LRA_VERSION 1

/* ---- header: 128 bytes at offset 0 ---- */
#define LRA_HEADER_BYTES 128
#define LRA_H_MAGIC 0          /* u8[8] */
#define LRA_H_VERSION 8        /* u32 */
#define LRA_H_HEADER_BYTES 12  /* u32 = 128 */
#define LRA_H_FILE_BYTES 16    /* u64: exact file length (catches truncation first) */
#define LRA_H_SECT_OFFSET 24   /* u64: section table offset */
#define LRA_H_SECT_COUNT 32    /* u32 */
#define LRA_H_SECT_ENTRY 36    /* u32 = 32 */
#define LRA_H_SECT_SUM 40      /* u64: XXH3-64 of the section table */
#define LRA_H_FLAGS 48         /* u32 = 0 */
/* 52..120 reserved, zero */
#define LRA_H_SUM 120          /* u64: XXH3-64 of header bytes [0, 120) */

/* ---- section table: count entries of 32 bytes ---- */
#define LRA_SECT_ENTRY_BYTES 32
#define LRA_S_TYPE 0     /* u32 */
#define LRA_S_SUBTYPE 4  /* u32 (tokenizer: blob kind) */
#define LRA_S_OFFSET 8   /* u64 absolute */
#define LRA_S_LENGTH 16  /* u64 */
#define LRA_S_SUM 24     /* u64: XXH3-64 of the section's bytes */
#define LRA_MAX_SECTIONS 16

enum lra_section_type {
    LRA_SECT_CONFIG = 1,
    LRA_SECT_TOKENIZER = 2,
    LRA_SECT_TENSORS = 3, /* the tensor table */
    LRA_SECT_DATA = 4,    /* every tensor's bytes */
};

/* ---- config section: 256 bytes ---- */
#define LRA_CONFIG_BYTES 256
#define LRA_C_ARCH 0          /* char[32], NUL-terminated */
#define LRA_C_NAME 32         /* char[64], NUL-terminated */
#define LRA_C_HIDDEN 96       /* u32 ... */
#define LRA_C_LAYERS 100
#define LRA_C_HEADS 104
#define LRA_C_KV_HEADS 108
#define LRA_C_HEAD_DIM 112
#define LRA_C_INTER 116
#define LRA_C_VOCAB 120
#define LRA_C_MAX_CTX 124
#define LRA_C_BOS 128         /* u32, 0xffffffff = none */
#define LRA_C_EOS 132
#define LRA_C_TIED 136        /* u32 0 or 1 */
#define LRA_C_FLAGS 140       /* u32: LRA_CFG_* bits, the rest 0 */
#define LRA_C_ROPE_THETA 144  /* f64 */
#define LRA_C_NORM_EPS 152    /* f64 */
#define LRA_C_RESID_SEED 160  /* u64: the residual rotation's seed (0 without the flag) */
/* 168..256 reserved, zero */
#define LRA_CFG_ROTATED_RESIDUAL 1u /* config flag: the residual stream is held rotated */
#define LRA_ARCH_LEN 32
#define LRA_MODEL_NAME_LEN 64

/* ---- tensor table section: 16-byte head + count records of 256 bytes ---- */
#define LRA_TT_HEAD_BYTES 16
#define LRA_TT_COUNT 0        /* u32 */
#define LRA_TT_RECORD 4       /* u32 = 256 */
/* 8..16 reserved, zero */
#define LRA_TENSOR_BYTES 256
#define LRA_T_NAME 0          /* char[64], NUL-terminated, zero-padded */
#define LRA_T_CODEC 64        /* u32 */
#define LRA_T_NDIM 68         /* u32, 1..4 */
#define LRA_T_DIMS 72         /* u64[4], outermost first; unused = 0 */
#define LRA_T_ALIGN 104       /* u32: 64 or 4096 */
#define LRA_T_FLAGS 108       /* u32 = 0 */
#define LRA_T_OFFSET 112      /* u64 absolute, multiple of align */
#define LRA_T_LENGTH 120      /* u64 */
#define LRA_T_SUM 128         /* u64: XXH3-64 of [offset, offset + length) */
#define LRA_T_NPARTS 136      /* u32 */
/* 140..144 reserved, zero */
#define LRA_T_PARTS 144       /* {u64 rel offset, u64 length}[4] */
#define LRA_T_PARAMS 208      /* 48 bytes of codec parameters */
#define LRA_NAME_LEN 64
#define LRA_MAX_PARTS 4
#define LRA_PARAMS_BYTES 48
#define LRA_PART_ALIGN 64     /* parts start at multiples of 64 inside a tensor */

/* Leech codec parameters (offsets inside the 48-byte params block). */
#define LRA_P_LEECH_MAX_SHELL 0   /* u32 (12) */
#define LRA_P_LEECH_GAIN_BITS 4   /* u32 (0..2) */
#define LRA_P_LEECH_ROT_KIND 8    /* u32 */
#define LRA_P_LEECH_INDEX_BITS 12 /* u32 (47) */
#define LRA_P_LEECH_ROT_SEED 16   /* u64 */
#define LRA_P_LEECH_CENTROID 24   /* f32[4] */
/* 40..48 reserved, zero */

/* Int8 group codec parameters. */
#define LRA_P_I8_GROUP 0          /* u32: weights per group (64) */
#define LRA_P_I8_SB_KIND 4        /* u32: 1 = f16 scale + f16 bias per group */
/* 8..48 reserved, zero */

/* ---- little-endian field access ---- */
static inline uint32_t lra_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t lra_rd64(const uint8_t *p) { return lra_rd32(p) | (uint64_t)lra_rd32(p + 4) << 32; }
static inline float lra_rdf32(const uint8_t *p)
{
    uint32_t u = lra_rd32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline double lra_rdf64(const uint8_t *p)
{
    uint64_t u = lra_rd64(p);
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static inline void lra_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void lra_wr64(uint8_t *p, uint64_t v) { lra_wr32(p, (uint32_t)v); lra_wr32(p + 4, (uint32_t)(v >> 32)); }
static inline void lra_wrf32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    lra_wr32(p, u);
}
static inline void lra_wrf64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    lra_wr64(p, u);
}

#endif
