/* Test helper: builds GGUF files in memory (header-only; used by the GGUF
 * and tokenizer tests). Not a general writer: no error handling beyond
 * marking the buffer failed when out of memory. */
#ifndef LR_GGUF_BUILD_H
#define LR_GGUF_BUILD_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader/gguf/gguf.h"

typedef struct {
    uint8_t *p;
    size_t n, cap;
    int failed;
    uint64_t n_kv, n_tensors;
} gb_buf;

static inline void gb_bytes(gb_buf *b, const void *s, size_t n)
{
    if (b->failed) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) { b->failed = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}

static inline void gb_le(gb_buf *b, uint64_t v, int n)
{
    uint8_t t[8];
    for (int i = 0; i < n; i++) t[i] = (uint8_t)(v >> (8 * i));
    gb_bytes(b, t, (size_t)n);
}
static inline void gb_u32(gb_buf *b, uint32_t v) { gb_le(b, v, 4); }
static inline void gb_u64(gb_buf *b, uint64_t v) { gb_le(b, v, 8); }
static inline void gb_strn(gb_buf *b, const char *s, size_t n) { gb_u64(b, n); gb_bytes(b, s, n); }
static inline void gb_str(gb_buf *b, const char *s) { gb_strn(b, s, strlen(s)); }

/* Header with placeholder counts; gb_finish patches them in. */
static inline void gb_header(gb_buf *b, uint32_t version)
{
    gb_bytes(b, "GGUF", 4);
    gb_u32(b, version);
    gb_u64(b, 0);
    gb_u64(b, 0);
}

static inline void gb_finish(gb_buf *b)
{
    if (b->failed || b->n < 24) return;
    for (int i = 0; i < 8; i++) {
        b->p[8 + i] = (uint8_t)(b->n_tensors >> (8 * i));
        b->p[16 + i] = (uint8_t)(b->n_kv >> (8 * i));
    }
}

/* A key and its type; the caller writes the value. */
static inline void gb_key(gb_buf *b, const char *key, uint32_t type)
{
    gb_str(b, key);
    gb_u32(b, type);
    b->n_kv++;
}

static inline void gb_kv_u32(gb_buf *b, const char *key, uint32_t v) { gb_key(b, key, LR_GGUF_U32); gb_u32(b, v); }
static inline void gb_kv_str(gb_buf *b, const char *key, const char *v) { gb_key(b, key, LR_GGUF_STR); gb_str(b, v); }
static inline void gb_kv_bool(gb_buf *b, const char *key, int v) { gb_key(b, key, LR_GGUF_BOOL); gb_le(b, v != 0, 1); }

/* Array header: the caller writes n elements of type et. */
static inline void gb_kv_arr(gb_buf *b, const char *key, uint32_t et, uint64_t n)
{
    gb_key(b, key, LR_GGUF_ARR);
    gb_u32(b, et);
    gb_u64(b, n);
}

static inline void gb_tensor(gb_buf *b, const char *name, uint32_t n_dims, const uint64_t *dims,
                             uint32_t type, uint64_t offset)
{
    gb_str(b, name);
    gb_u32(b, n_dims);
    for (uint32_t i = 0; i < n_dims; i++) gb_u64(b, dims[i]);
    gb_u32(b, type);
    gb_u64(b, offset);
    b->n_tensors++;
}

/* Zero padding up to a multiple of align. */
static inline void gb_align(gb_buf *b, size_t align)
{
    static const uint8_t zero[64] = {0};
    while (!b->failed && b->n % align) gb_bytes(b, zero, align - b->n % align < 64 ? align - b->n % align : 64);
}

#endif
