/* A safetensors reader: the file is memory-mapped (or a caller's buffer
 * borrowed) and its JSON header validated completely before anything is
 * read: header length, JSON syntax, every tensor's dtype, shape and
 * data_offsets (inside the data, size = elements x dtype size, no two
 * tensors overlapping), names unique. Every error names the file and the
 * tensor. Layout: u64 little-endian header length N, N bytes of JSON
 * ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
 * "__metadata__": {...}}), then the data; offsets are relative to the data. */
#ifndef LR_SAFETENSORS_H
#define LR_SAFETENSORS_H
#include <stddef.h>
#include <stdint.h>

#define LR_ST_MAX_DIMS 8
#define LR_ST_MAX_HEADER (100u << 20) /* the format's own limit */

enum lr_st_dtype {
    LR_ST_BOOL, LR_ST_U8, LR_ST_I8, LR_ST_F8_E4M3, LR_ST_F8_E5M2, LR_ST_I16, LR_ST_U16, LR_ST_F16,
    LR_ST_BF16, LR_ST_I32, LR_ST_U32, LR_ST_F32, LR_ST_F64, LR_ST_I64, LR_ST_U64,
    LR_ST_NDTYPES
};

typedef struct lr_st_tensor {
    const char *name;   /* NUL-terminated, owned by the file */
    int dtype;          /* enum lr_st_dtype */
    int ndim;           /* 0 (a scalar) .. LR_ST_MAX_DIMS */
    uint64_t shape[LR_ST_MAX_DIMS];
    uint64_t nelem;
    uint64_t begin, end; /* byte range in the data */
} lr_st_tensor;

typedef struct lr_st_file {
    char *label;         /* the path, for messages */
    const uint8_t *data; /* the data section (after the header) */
    uint64_t data_bytes;
    int n;
    lr_st_tensor *t;     /* sorted by name */
    /* private */
    void *map;
    size_t map_size;
    char *names;
} lr_st_file;

/* Maps and validates path. LR_EIO for the file system, LR_EFORMAT for a
 * malformed file. */
int lr_st_open(const char *path, lr_st_file **out);
/* The same over buf (borrowed: it must outlive the result). */
int lr_st_parse(const void *buf, size_t n, const char *label, lr_st_file **out);
void lr_st_close(lr_st_file *f);

/* By name (binary search); NULL if absent. */
const lr_st_tensor *lr_st_find(const lr_st_file *f, const char *name);
const char *lr_st_dtype_name(int dtype); /* "F16", ...; "?" if unknown */
int lr_st_dtype_size(int dtype);         /* bytes per element; 0 if unknown */

/* Elements [first, first + n) of t converted to f32. F32, F16 and BF16 only
 * (LR_EUNSUPPORTED naming the tensor otherwise); LR_ERANGE past the end. */
int lr_st_read_f32(const lr_st_file *f, const lr_st_tensor *t, uint64_t first, uint64_t n, float *out);

#endif
