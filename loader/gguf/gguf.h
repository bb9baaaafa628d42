/* A GGUF reader: header, metadata key/values of every GGUF type (arrays,
 * nested arrays included) and the tensor info list, all bounds-checked. A bad
 * file gives an error naming the file and the problem, never a crash.
 *
 * Strings and array contents point into the file's bytes (the file is
 * memory-mapped, or the caller's buffer is borrowed) and are NOT
 * NUL-terminated. GGUF versions 2 and 3 (little-endian) are read. */
#ifndef LR_GGUF_H
#define LR_GGUF_H
#include <stddef.h>
#include <stdint.h>

enum lr_gguf_type {
    LR_GGUF_U8 = 0, LR_GGUF_I8 = 1, LR_GGUF_U16 = 2, LR_GGUF_I16 = 3,
    LR_GGUF_U32 = 4, LR_GGUF_I32 = 5, LR_GGUF_F32 = 6, LR_GGUF_BOOL = 7,
    LR_GGUF_STR = 8, LR_GGUF_ARR = 9, LR_GGUF_U64 = 10, LR_GGUF_I64 = 11,
    LR_GGUF_F64 = 12,
    LR_GGUF_NTYPES
};

typedef struct {
    const char *s; /* not NUL-terminated */
    uint64_t len;
} lr_gguf_str;

typedef struct lr_gguf_val {
    uint32_t type; /* enum lr_gguf_type */
    union {
        uint64_t u;      /* U8..U64 and BOOL (0/1) */
        int64_t i;       /* I8..I64 */
        double f;        /* F32, F64 */
        lr_gguf_str str; /* STR */
        struct {
            uint32_t type; /* element type */
            uint64_t n;
            const uint8_t *raw;             /* scalar elements, little-endian, packed */
            const lr_gguf_str *strs;        /* STR elements */
            const struct lr_gguf_val *vals; /* ARR elements (nested arrays) */
        } arr;
    };
} lr_gguf_val;

typedef struct {
    lr_gguf_str key;
    lr_gguf_val val;
} lr_gguf_kv;

#define LR_GGUF_MAX_DIMS 4
typedef struct {
    lr_gguf_str name;
    uint32_t n_dims;
    uint64_t dims[LR_GGUF_MAX_DIMS]; /* dims[0] is the innermost (contiguous) one; unused = 1 */
    uint32_t type;                   /* ggml type, see lr_ggml_type_name */
    uint64_t offset;                 /* from the start of the data section */
    uint64_t nbytes;                 /* 0 when the ggml type is unknown here */
} lr_gguf_tensor;

typedef struct lr_gguf {
    char *name; /* file name, for messages */
    const uint8_t *data;
    size_t size;
    uint32_t version;
    uint64_t n_kv, n_tensors;
    lr_gguf_kv *kv;
    lr_gguf_tensor *tensors;
    uint32_t alignment;   /* general.alignment, default 32 */
    uint64_t data_offset; /* start of the tensor data section in the file */
    /* private */
    void *map;
    size_t map_size;
    void **allocs;
    size_t nallocs, allocs_cap;
} lr_gguf;

/* Maps and parses a file. */
int lr_gguf_open(const char *path, lr_gguf **out);
/* Parses size bytes at data (borrowed: it must outlive the result); name is
 * used in messages. */
int lr_gguf_parse(const void *data, size_t size, const char *name, lr_gguf **out);
void lr_gguf_close(lr_gguf *g);

/* The key/value with this key, or NULL. */
const lr_gguf_kv *lr_gguf_find(const lr_gguf *g, const char *key);
/* Typed getters: LR_EFORMAT naming the file and key when the key is missing
 * or has another type. get_uint accepts any integer type holding a value
 * >= 0, get_int any integer type that fits int64. */
int lr_gguf_get_str(const lr_gguf *g, const char *key, lr_gguf_str *out);
int lr_gguf_get_uint(const lr_gguf *g, const char *key, uint64_t *out);
int lr_gguf_get_int(const lr_gguf *g, const char *key, int64_t *out);
int lr_gguf_get_bool(const lr_gguf *g, const char *key, int *out);
/* An array whose elements have type elem_type (any, when elem_type < 0). */
int lr_gguf_get_arr(const lr_gguf *g, const char *key, int elem_type, const lr_gguf_val **out);
/* Element i of an integer or bool array, widened (caller checks i < n). */
int64_t lr_gguf_arr_int(const lr_gguf_val *arr, uint64_t i);
/* Element i of a float array (an integer array's, widened). */
double lr_gguf_arr_f64(const lr_gguf_val *arr, uint64_t i);
/* 1 when s equals the NUL-terminated c. */
int lr_gguf_str_eq(lr_gguf_str s, const char *c);

const lr_gguf_tensor *lr_gguf_find_tensor(const lr_gguf *g, const char *name);
/* Pointer to a tensor's bytes (checked to lie inside the file when its type
 * is known). */
const void *lr_gguf_tensor_data(const lr_gguf *g, const lr_gguf_tensor *t);

const char *lr_gguf_type_name(uint32_t type);
/* ggml tensor types: name ("f16", "q4_K", ...) or NULL when unknown, and the
 * block layout (elements per block, bytes per block; 0 when unknown). */
const char *lr_ggml_type_name(uint32_t type);
int lr_ggml_type_block(uint32_t type, uint32_t *block_elems, uint32_t *block_bytes);

#endif
