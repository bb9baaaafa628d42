#include "loader/import/safetensors.h"
#include "util/err.h"
#include "util/half.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TENSORS 1000000
#define MAX_NAME 1024

static const struct { const char *name; int size; } k_dtypes[LR_ST_NDTYPES] = {
    [LR_ST_BOOL] = { "BOOL", 1 },     [LR_ST_U8] = { "U8", 1 },     [LR_ST_I8] = { "I8", 1 },
    [LR_ST_F8_E4M3] = { "F8_E4M3", 1 }, [LR_ST_F8_E5M2] = { "F8_E5M2", 1 },
    [LR_ST_I16] = { "I16", 2 },       [LR_ST_U16] = { "U16", 2 },   [LR_ST_F16] = { "F16", 2 },
    [LR_ST_BF16] = { "BF16", 2 },     [LR_ST_I32] = { "I32", 4 },   [LR_ST_U32] = { "U32", 4 },
    [LR_ST_F32] = { "F32", 4 },       [LR_ST_F64] = { "F64", 8 },   [LR_ST_I64] = { "I64", 8 },
    [LR_ST_U64] = { "U64", 8 },
};

const char *lr_st_dtype_name(int dtype) { return dtype >= 0 && dtype < LR_ST_NDTYPES ? k_dtypes[dtype].name : "?"; }
int lr_st_dtype_size(int dtype) { return dtype >= 0 && dtype < LR_ST_NDTYPES ? k_dtypes[dtype].size : 0; }

static int by_name(const void *a, const void *b)
{
    return strcmp(((const lr_st_tensor *)a)->name, ((const lr_st_tensor *)b)->name);
}

/* A JSON integer in [0, 2^62] (jansson's integers are signed 64-bit). */
static int get_u62(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v)) return 0;
    json_int_t i = json_integer_value(v);
    if (i < 0 || (unsigned long long)i > (1ull << 62)) return 0;
    *out = (uint64_t)i;
    return 1;
}

static int parse_tensor(lr_st_file *f, const char *name, json_t *v, lr_st_tensor *t)
{
    const char *L = f->label;
    if (!json_is_object(v)) return LR_FAIL(LR_EFORMAT, "%s: tensor %s: header entry is not an object", L, name);
    json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"), *off = json_object_get(v, "data_offsets");
    if (!json_is_string(dt)) return LR_FAIL(LR_EFORMAT, "%s: tensor %s: dtype missing or not a string", L, name);
    t->dtype = -1;
    for (int i = 0; i < LR_ST_NDTYPES; i++)
        if (!strcmp(json_string_value(dt), k_dtypes[i].name)) t->dtype = i;
    if (t->dtype < 0)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: unknown dtype \"%.32s\"", L, name, json_string_value(dt));
    if (!json_is_array(sh)) return LR_FAIL(LR_EFORMAT, "%s: tensor %s: shape missing or not an array", L, name);
    if (json_array_size(sh) > LR_ST_MAX_DIMS)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: %zu dimensions (at most %d)", L, name, json_array_size(sh),
                       LR_ST_MAX_DIMS);
    t->ndim = (int)json_array_size(sh);
    /* Bytes = nelem * size must fit below 2^62: check as the product grows. */
    uint64_t n = 1, limit = (1ull << 62) / (uint64_t)k_dtypes[t->dtype].size;
    for (int d = 0; d < t->ndim; d++) {
        if (!get_u62(json_array_get(sh, (size_t)d), &t->shape[d]))
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: shape[%d] is not a non-negative integer", L, name, d);
        if (t->shape[d] && n > limit / t->shape[d])
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: shape has too many elements", L, name);
        n *= t->shape[d];
    }
    t->nelem = n;
    if (!json_is_array(off) || json_array_size(off) != 2 || !get_u62(json_array_get(off, 0), &t->begin) ||
        !get_u62(json_array_get(off, 1), &t->end))
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: data_offsets is not [begin, end] of non-negative integers", L, name);
    if (t->begin > t->end)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: data_offsets [%llu, %llu] end before they begin", L, name,
                       (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > f->data_bytes)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: data_offsets [%llu, %llu] past the end of the data (%llu bytes)", L,
                       name, (unsigned long long)t->begin, (unsigned long long)t->end,
                       (unsigned long long)f->data_bytes);
    uint64_t want = n * (uint64_t)k_dtypes[t->dtype].size;
    if (t->end - t->begin != want)
        return LR_FAIL(LR_EFORMAT, "%s: tensor %s: data_offsets span %llu bytes but %llu %s elements need %llu", L,
                       name, (unsigned long long)(t->end - t->begin), (unsigned long long)n,
                       k_dtypes[t->dtype].name, (unsigned long long)want);
    return LR_OK;
}

static int by_begin(const void *a, const void *b)
{
    const lr_st_tensor *x = *(const lr_st_tensor *const *)a, *y = *(const lr_st_tensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : x->end < y->end ? -1 : x->end > y->end;
}

static int check_overlaps(lr_st_file *f)
{
    if (f->n < 2) return LR_OK;
    const lr_st_tensor **o = malloc((size_t)f->n * sizeof *o);
    if (!o) return LR_FAIL(LR_ENOMEM, "%s: out of memory", f->label);
    for (int i = 0; i < f->n; i++) o[i] = &f->t[i];
    qsort(o, (size_t)f->n, sizeof *o, by_begin);
    int rc = LR_OK;
    const lr_st_tensor *prev = NULL; /* the non-empty tensor reaching furthest so far */
    for (int i = 0; i < f->n && !rc; i++) {
        if (o[i]->begin == o[i]->end) continue; /* empty tensors own no bytes */
        if (prev && o[i]->begin < prev->end)
            rc = LR_FAIL(LR_EFORMAT, "%s: tensors %s [%llu, %llu) and %s [%llu, %llu) overlap", f->label, prev->name,
                         (unsigned long long)prev->begin, (unsigned long long)prev->end, o[i]->name,
                         (unsigned long long)o[i]->begin, (unsigned long long)o[i]->end);
        if (!prev || o[i]->end > prev->end) prev = o[i];
    }
    free(o);
    return rc;
}

static int parse_header(lr_st_file *f, const uint8_t *buf, size_t size)
{
    const char *L = f->label;
    if (size < 8) return LR_FAIL(LR_EFORMAT, "%s: %zu bytes is too short for a safetensors file", L, size);
    uint64_t hn = 0;
    for (int i = 7; i >= 0; i--) hn = hn << 8 | buf[i];
    if (hn == 0 || hn > size - 8)
        return LR_FAIL(LR_EFORMAT, "%s: header length %llu does not fit in the file (%zu bytes)", L,
                       (unsigned long long)hn, size);
    if (hn > LR_ST_MAX_HEADER)
        return LR_FAIL(LR_EFORMAT, "%s: header length %llu is over the 100 MiB limit", L, (unsigned long long)hn);
    f->data = buf + 8 + hn;
    f->data_bytes = size - 8 - hn;
    json_error_t je;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hn, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return LR_FAIL(LR_EFORMAT, "%s: header JSON: %s (line %d, column %d)", L, je.text, je.line, je.column);
    int rc = LR_OK;
    if (!json_is_object(root)) {
        rc = LR_FAIL(LR_EFORMAT, "%s: header JSON is not an object", L);
        goto done;
    }
    json_t *meta = json_object_get(root, "__metadata__");
    if (meta && !json_is_object(meta)) {
        rc = LR_FAIL(LR_EFORMAT, "%s: __metadata__ is not an object", L);
        goto done;
    }
    size_t n = json_object_size(root) - (meta ? 1 : 0), names_len = 0;
    if (n > MAX_TENSORS) {
        rc = LR_FAIL(LR_EFORMAT, "%s: %zu tensors (at most %d)", L, n, MAX_TENSORS);
        goto done;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        size_t kl = strlen(key);
        if (v == meta) continue;
        if (kl == 0 || kl > MAX_NAME) {
            rc = LR_FAIL(LR_EFORMAT, "%s: tensor name of %zu bytes (1..%d)", L, kl, MAX_NAME);
            goto done;
        }
        names_len += kl + 1;
    }
    f->t = calloc(n ? n : 1, sizeof *f->t);
    f->names = malloc(names_len ? names_len : 1);
    if (!f->t || !f->names) {
        rc = LR_FAIL(LR_ENOMEM, "%s: out of memory for %zu tensors", L, n);
        goto done;
    }
    char *np = f->names;
    json_object_foreach(root, key, v) {
        if (v == meta) continue;
        lr_st_tensor *t = &f->t[f->n];
        size_t kl = strlen(key);
        memcpy(np, key, kl + 1);
        t->name = np;
        np += kl + 1;
        if ((rc = parse_tensor(f, t->name, v, t))) goto done;
        f->n++;
    }
    qsort(f->t, (size_t)f->n, sizeof *f->t, by_name);
    rc = check_overlaps(f);
done:
    json_decref(root);
    return rc;
}

int lr_st_parse(const void *buf, size_t n, const char *label, lr_st_file **out)
{
    *out = NULL;
    lr_st_file *f = calloc(1, sizeof *f);
    if (!f || !(f->label = strdup(label ? label : "safetensors"))) {
        free(f);
        return LR_FAIL(LR_ENOMEM, "%s: out of memory", label ? label : "safetensors");
    }
    int rc = parse_header(f, buf, n);
    if (rc) {
        lr_st_close(f);
        return rc;
    }
    *out = f;
    return LR_OK;
}

int lr_st_open(const char *path, lr_st_file **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return LR_FAIL(LR_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return LR_FAIL(LR_EIO, "%s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (size && map == MAP_FAILED) return LR_FAIL(LR_EIO, "%s: mmap failed: %s", path, strerror(errno));
    int rc = lr_st_parse(map, size, path, out);
    if (rc) {
        if (map) munmap(map, size);
        return rc;
    }
    (*out)->map = map;
    (*out)->map_size = size;
    return LR_OK;
}

void lr_st_close(lr_st_file *f)
{
    if (!f) return;
    if (f->map) munmap(f->map, f->map_size);
    free(f->t);
    free(f->names);
    free(f->label);
    free(f);
}

const lr_st_tensor *lr_st_find(const lr_st_file *f, const char *name)
{
    lr_st_tensor key = { .name = name };
    return f->n ? bsearch(&key, f->t, (size_t)f->n, sizeof *f->t, by_name) : NULL;
}

int lr_st_read_f32(const lr_st_file *f, const lr_st_tensor *t, uint64_t first, uint64_t n, float *out)
{
    if (first > t->nelem || n > t->nelem - first)
        return LR_FAIL(LR_ERANGE, "%s: tensor %s: elements [%llu, +%llu) past its %llu", f->label, t->name,
                       (unsigned long long)first, (unsigned long long)n, (unsigned long long)t->nelem);
    const uint8_t *p = f->data + t->begin;
    /* Elements are little-endian and may be misaligned: assemble bytes. */
    switch (t->dtype) {
    case LR_ST_F32:
        p += first * 4;
        for (uint64_t i = 0; i < n; i++, p += 4)
            out[i] = lr_bits_f32((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        return LR_OK;
    case LR_ST_F16:
        p += first * 2;
        for (uint64_t i = 0; i < n; i++, p += 2) out[i] = lr_half_to_float((uint16_t)(p[0] | p[1] << 8));
        return LR_OK;
    case LR_ST_BF16:
        p += first * 2;
        for (uint64_t i = 0; i < n; i++, p += 2) out[i] = lr_bf16_to_float((uint16_t)(p[0] | p[1] << 8));
        return LR_OK;
    }
    return LR_FAIL(LR_EUNSUPPORTED, "%s: tensor %s: dtype %s (only F32, F16 and BF16 weights are read)", f->label,
                   t->name, lr_st_dtype_name(t->dtype));
}
