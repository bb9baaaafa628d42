/* GGUF parsing. Layout (little-endian):
 *   "GGUF" u32 version, u64 n_tensors, u64 n_kv,
 *   n_kv x (string key, u32 type, value),
 *   n_tensors x (string name, u32 n_dims, u64 dims[n_dims], u32 type, u64 offset),
 *   padding to general.alignment, tensor data.
 * A string is u64 length + bytes; an array is u32 element type, u64 count,
 * elements. Every read goes through a cursor that checks the remaining size,
 * and every count is checked against the bytes left before anything is
 * allocated, so a hostile file cannot make us read out of bounds or allocate
 * more than a small multiple of its size. */
#include "loader/gguf/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

#define MAX_NEST 8 /* arrays of arrays deeper than this are refused */

typedef struct {
    lr_gguf *g;
    size_t pos;
} cursor;

static int need(cursor *c, uint64_t n, const char *what)
{
    if (n > c->g->size - c->pos)
        return LR_FAIL(LR_EFORMAT, "%s: truncated at byte %zu: %s needs %llu bytes, %zu left", c->g->name,
                       c->pos, what, (unsigned long long)n, c->g->size - c->pos);
    return LR_OK;
}

static uint64_t rd_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int rd_u32(cursor *c, uint32_t *v, const char *what)
{
    int rc = need(c, 4, what);
    if (rc) return rc;
    *v = (uint32_t)rd_le(c->g->data + c->pos, 4);
    c->pos += 4;
    return LR_OK;
}

static int rd_u64(cursor *c, uint64_t *v, const char *what)
{
    int rc = need(c, 8, what);
    if (rc) return rc;
    *v = rd_le(c->g->data + c->pos, 8);
    c->pos += 8;
    return LR_OK;
}

static int rd_str(cursor *c, lr_gguf_str *s, const char *what)
{
    uint64_t n;
    int rc = rd_u64(c, &n, what);
    if (rc == LR_OK) rc = need(c, n, what);
    if (rc) return rc;
    s->s = (const char *)c->g->data + c->pos;
    s->len = n;
    c->pos += (size_t)n;
    return LR_OK;
}

static void *g_alloc(lr_gguf *g, size_t n, size_t size)
{
    if (g->nallocs == g->allocs_cap) {
        size_t cap = g->allocs_cap ? g->allocs_cap * 2 : 16;
        void **a = realloc(g->allocs, cap * sizeof *a);
        if (!a) return NULL;
        g->allocs = a;
        g->allocs_cap = cap;
    }
    void *p = calloc(n ? n : 1, size);
    if (p) g->allocs[g->nallocs++] = p;
    return p;
}

static const uint8_t SCALAR_SIZE[LR_GGUF_NTYPES] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

const char *lr_gguf_type_name(uint32_t type)
{
    static const char *names[LR_GGUF_NTYPES] = { "u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                                 "bool", "string", "array", "u64", "i64", "f64" };
    return type < LR_GGUF_NTYPES ? names[type] : "unknown";
}

static void scalar(const uint8_t *p, uint32_t type, lr_gguf_val *v)
{
    uint64_t raw = rd_le(p, SCALAR_SIZE[type]);
    switch (type) {
    case LR_GGUF_I8: v->i = (int8_t)raw; break;
    case LR_GGUF_I16: v->i = (int16_t)raw; break;
    case LR_GGUF_I32: v->i = (int32_t)raw; break;
    case LR_GGUF_I64: v->i = (int64_t)raw; break;
    case LR_GGUF_F32: { float f; uint32_t u = (uint32_t)raw; memcpy(&f, &u, 4); v->f = f; break; }
    case LR_GGUF_F64: memcpy(&v->f, &raw, 8); break;
    case LR_GGUF_BOOL: v->u = raw != 0; break;
    default: v->u = raw; break;
    }
}

static int rd_val(cursor *c, uint32_t type, lr_gguf_val *v, const char *key, int depth);

static int rd_arr(cursor *c, lr_gguf_val *v, const char *key, int depth)
{
    lr_gguf *g = c->g;
    uint32_t et;
    uint64_t n;
    int rc = rd_u32(c, &et, "array type");
    if (rc == LR_OK) rc = rd_u64(c, &n, "array length");
    if (rc) return lr_wrap(rc, "key %s", key);
    if (et >= LR_GGUF_NTYPES)
        return LR_FAIL(LR_EFORMAT, "%s: key %s: array of unknown type %u", g->name, key, et);
    if (depth >= MAX_NEST)
        return LR_FAIL(LR_EFORMAT, "%s: key %s: arrays nested deeper than %d", g->name, key, MAX_NEST);
    v->arr.type = et;
    v->arr.n = n;
    /* Each element takes at least one byte (strings 8, arrays 12). */
    uint64_t min = et == LR_GGUF_STR ? 8 : et == LR_GGUF_ARR ? 12 : SCALAR_SIZE[et];
    if (n > (g->size - c->pos) / min)
        return LR_FAIL(LR_EFORMAT, "%s: key %s: array of %llu %s does not fit in the %zu bytes left",
                       g->name, key, (unsigned long long)n, lr_gguf_type_name(et), g->size - c->pos);
    v->arr.raw = g->data + c->pos;
    if (et == LR_GGUF_STR) {
        lr_gguf_str *s = g_alloc(g, (size_t)n, sizeof *s);
        if (!s) return LR_FAIL(LR_ENOMEM, "%s: key %s: %llu strings", g->name, key, (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++)
            if ((rc = rd_str(c, &s[i], "array string"))) return lr_wrap(rc, "key %s[%llu]", key, (unsigned long long)i);
        v->arr.strs = s;
    } else if (et == LR_GGUF_ARR) {
        lr_gguf_val *a = g_alloc(g, (size_t)n, sizeof *a);
        if (!a) return LR_FAIL(LR_ENOMEM, "%s: key %s: %llu arrays", g->name, key, (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++)
            if ((rc = rd_val(c, LR_GGUF_ARR, &a[i], key, depth + 1))) return rc;
        v->arr.vals = a;
    } else {
        c->pos += (size_t)(n * min);
    }
    return LR_OK;
}

static int rd_val(cursor *c, uint32_t type, lr_gguf_val *v, const char *key, int depth)
{
    v->type = type;
    if (type == LR_GGUF_STR) {
        int rc = rd_str(c, &v->str, "string value");
        return rc ? lr_wrap(rc, "key %s", key) : LR_OK;
    }
    if (type == LR_GGUF_ARR) return rd_arr(c, v, key, depth);
    if (type >= LR_GGUF_NTYPES)
        return LR_FAIL(LR_EFORMAT, "%s: key %s: unknown value type %u", c->g->name, key, type);
    int rc = need(c, SCALAR_SIZE[type], "value");
    if (rc) return lr_wrap(rc, "key %s", key);
    scalar(c->g->data + c->pos, type, v);
    c->pos += SCALAR_SIZE[type];
    return LR_OK;
}

/* ---- ggml tensor types ---- */

static const struct { const char *name; uint16_t elems, bytes; } GGML_TYPES[] = {
    [0] = { "f32", 1, 4 },        [1] = { "f16", 1, 2 },        [2] = { "q4_0", 32, 18 },
    [3] = { "q4_1", 32, 20 },     [6] = { "q5_0", 32, 22 },     [7] = { "q5_1", 32, 24 },
    [8] = { "q8_0", 32, 34 },     [9] = { "q8_1", 32, 36 },     [10] = { "q2_K", 256, 84 },
    [11] = { "q3_K", 256, 110 },  [12] = { "q4_K", 256, 144 },  [13] = { "q5_K", 256, 176 },
    [14] = { "q6_K", 256, 210 },  [15] = { "q8_K", 256, 292 },  [16] = { "iq2_xxs", 256, 66 },
    [17] = { "iq2_xs", 256, 74 }, [18] = { "iq3_xxs", 256, 98 }, [19] = { "iq1_s", 256, 50 },
    [20] = { "iq4_nl", 32, 18 },  [21] = { "iq3_s", 256, 110 }, [22] = { "iq2_s", 256, 82 },
    [23] = { "iq4_xs", 256, 136 }, [24] = { "i8", 1, 1 },       [25] = { "i16", 1, 2 },
    [26] = { "i32", 1, 4 },       [27] = { "i64", 1, 8 },       [28] = { "f64", 1, 8 },
    [29] = { "iq1_m", 256, 56 },  [30] = { "bf16", 1, 2 },      [34] = { "tq1_0", 256, 54 },
    [35] = { "tq2_0", 256, 66 },  [39] = { "mxfp4", 32, 17 },
};
#define N_GGML_TYPES (sizeof GGML_TYPES / sizeof GGML_TYPES[0])

const char *lr_ggml_type_name(uint32_t type)
{
    return type < N_GGML_TYPES ? GGML_TYPES[type].name : NULL;
}

int lr_ggml_type_block(uint32_t type, uint32_t *elems, uint32_t *bytes)
{
    if (type >= N_GGML_TYPES || !GGML_TYPES[type].name) { *elems = *bytes = 0; return 0; }
    *elems = GGML_TYPES[type].elems;
    *bytes = GGML_TYPES[type].bytes;
    return 1;
}

/* ---- file ---- */

static int fmt_key(const lr_gguf_str *k, char *buf, size_t cap)
{
    size_t n = k->len < cap - 1 ? (size_t)k->len : cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)k->s[i];
        buf[i] = ch >= 0x20 && ch < 0x7F ? (char)ch : '?';
    }
    buf[n] = 0;
    return (int)n;
}

static int str_cmp(const void *x, const void *y)
{
    const lr_gguf_str *a = *(const lr_gguf_str *const *)x, *b = *(const lr_gguf_str *const *)y;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return a->len ? memcmp(a->s, b->s, (size_t)a->len) : 0;
}

/* Fails when two of the n names (first at `first`, `stride` bytes apart)
 * are equal; sorting keeps this O(n log n) for hostile files. */
static int check_unique(lr_gguf *g, const lr_gguf_str *first, size_t stride, uint64_t n, const char *what)
{
    if (n < 2) return LR_OK;
    const lr_gguf_str **v = malloc((size_t)n * sizeof *v);
    if (!v) return LR_FAIL(LR_ENOMEM, "%s: %llu names", g->name, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) v[i] = (const lr_gguf_str *)((const char *)first + i * stride);
    qsort(v, (size_t)n, sizeof *v, str_cmp);
    int rc = LR_OK;
    for (uint64_t i = 1; i < n && rc == LR_OK; i++)
        if (str_cmp(&v[i - 1], &v[i]) == 0) {
            char nm[80];
            fmt_key(v[i], nm, sizeof nm);
            rc = LR_FAIL(LR_EFORMAT, "%s: %s %s appears twice", g->name, what, nm);
        }
    free(v);
    return rc;
}

typedef struct {
    uint64_t off, len, i;
} span;

static int by_offset(const void *x, const void *y)
{
    const uint64_t a = ((const span *)x)->off, b = ((const span *)y)->off;
    return (a > b) - (a < b);
}

/* Two tensors of known size may not share bytes (ggml's reader wants each
 * to start where the one before it ends; a corrupt offset table otherwise
 * reads one tensor's bytes as another's, and the import goes on). */
static int check_overlaps(const lr_gguf *g)
{
    uint64_t n = 0;
    span *v = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof *v);
    if (!v) return LR_FAIL(LR_ENOMEM, "%s: out of memory", g->name);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].nbytes) v[n++] = (span){ g->tensors[i].offset, g->tensors[i].nbytes, i };
    qsort(v, (size_t)n, sizeof *v, by_offset);
    int rc = LR_OK;
    for (uint64_t k = 1; k < n && !rc; k++)
        if (v[k].off < v[k - 1].off + v[k - 1].len) {
            char a[80], b[80];
            fmt_key(&g->tensors[v[k - 1].i].name, a, sizeof a);
            fmt_key(&g->tensors[v[k].i].name, b, sizeof b);
            rc = LR_FAIL(LR_EFORMAT, "%s: tensors %s [%llu, +%llu) and %s [%llu, ...) overlap", g->name, a,
                         (unsigned long long)v[k - 1].off, (unsigned long long)v[k - 1].len, b,
                         (unsigned long long)v[k].off);
        }
    free(v);
    return rc;
}

static int parse_tensors(cursor *c)
{
    lr_gguf *g = c->g;
    /* A tensor info takes at least 8 (name) + 4 + 4 + 8 bytes. */
    if (g->n_tensors > (g->size - c->pos) / 24)
        return LR_FAIL(LR_EFORMAT, "%s: %llu tensors do not fit in the file", g->name,
                       (unsigned long long)g->n_tensors);
    g->tensors = g_alloc(g, (size_t)g->n_tensors, sizeof *g->tensors);
    if (!g->tensors) return LR_FAIL(LR_ENOMEM, "%s: tensor list", g->name);
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        lr_gguf_tensor *t = &g->tensors[i];
        char nm[80];
        int rc = rd_str(c, &t->name, "tensor name");
        if (rc) return lr_wrap(rc, "tensor %llu", (unsigned long long)i);
        fmt_key(&t->name, nm, sizeof nm);
        if ((rc = rd_u32(c, &t->n_dims, "tensor dims"))) return lr_wrap(rc, "tensor %s", nm);
        if (t->n_dims > LR_GGUF_MAX_DIMS)
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: %u dimensions (at most %d)", g->name, nm, t->n_dims, LR_GGUF_MAX_DIMS);
        uint64_t elems = 1;
        int overflow = 0;
        for (uint32_t d = 0; d < LR_GGUF_MAX_DIMS; d++) {
            t->dims[d] = 1;
            if (d < t->n_dims && (rc = rd_u64(c, &t->dims[d], "tensor dim"))) return lr_wrap(rc, "tensor %s", nm);
            if (t->dims[d] && elems > UINT64_MAX / t->dims[d]) overflow = 1;
            elems *= t->dims[d];
        }
        if (overflow || elems > ((uint64_t)1 << 60))
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: element count overflows", g->name, nm);
        if ((rc = rd_u32(c, &t->type, "tensor type")) || (rc = rd_u64(c, &t->offset, "tensor offset")))
            return lr_wrap(rc, "tensor %s", nm);
        uint32_t be, bb;
        if (lr_ggml_type_block(t->type, &be, &bb)) {
            if (t->dims[0] % be)
                return LR_FAIL(LR_EFORMAT, "%s: tensor %s: row of %llu is not a multiple of the %s block (%u)",
                               g->name, nm, (unsigned long long)t->dims[0], lr_ggml_type_name(t->type), be);
            t->nbytes = elems / be * bb;
        }
    }
    int rc = check_unique(g, &g->tensors[0].name, sizeof *g->tensors, g->n_tensors, "tensor");
    if (rc) return rc;
    uint64_t a = g->alignment;
    g->data_offset = (c->pos + a - 1) / a * a;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const lr_gguf_tensor *t = &g->tensors[i];
        char nm[80];
        fmt_key(&t->name, nm, sizeof nm);
        if (t->offset % a)
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: offset %llu is not a multiple of the alignment %u",
                           g->name, nm, (unsigned long long)t->offset, g->alignment);
        if (t->nbytes && (g->data_offset > g->size || t->offset > g->size - g->data_offset ||
                          t->nbytes > g->size - g->data_offset - t->offset))
            return LR_FAIL(LR_EFORMAT, "%s: tensor %s: data [%llu, +%llu) lies past the end of the file (%zu bytes)",
                           g->name, nm, (unsigned long long)(g->data_offset + t->offset),
                           (unsigned long long)t->nbytes, g->size);
    }
    return check_overlaps(g);
}

static int parse(lr_gguf *g)
{
    cursor c = { g, 0 };
    if (g->size < 4 || memcmp(g->data, "GGUF", 4) != 0)
        return LR_FAIL(LR_EFORMAT, "%s: not a GGUF file (bad magic)", g->name);
    c.pos = 4;
    int rc = rd_u32(&c, &g->version, "version");
    if (rc == LR_OK && g->version != 2 && g->version != 3)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: GGUF version %u is not supported (2 and 3 are%s)", g->name,
                       g->version, g->version > 0xFFFF ? "; a big-endian file?" : "");
    if (rc == LR_OK) rc = rd_u64(&c, &g->n_tensors, "tensor count");
    if (rc == LR_OK) rc = rd_u64(&c, &g->n_kv, "key/value count");
    if (rc) return rc;
    /* A key/value takes at least 8 (key) + 4 (type) + 1 bytes. */
    if (g->n_kv > (g->size - c.pos) / 13)
        return LR_FAIL(LR_EFORMAT, "%s: %llu key/values do not fit in the file", g->name, (unsigned long long)g->n_kv);
    g->kv = g_alloc(g, (size_t)g->n_kv, sizeof *g->kv);
    if (!g->kv) return LR_FAIL(LR_ENOMEM, "%s: metadata", g->name);
    for (uint64_t i = 0; i < g->n_kv; i++) {
        lr_gguf_kv *kv = &g->kv[i];
        uint32_t type;
        char key[80];
        if ((rc = rd_str(&c, &kv->key, "key"))) return lr_wrap(rc, "key/value %llu", (unsigned long long)i);
        fmt_key(&kv->key, key, sizeof key);
        if ((rc = rd_u32(&c, &type, "value type"))) return lr_wrap(rc, "key %s", key);
        if ((rc = rd_val(&c, type, &kv->val, key, 0))) return rc;
    }
    if ((rc = check_unique(g, &g->kv[0].key, sizeof *g->kv, g->n_kv, "key"))) return rc;
    g->alignment = 32;
    const lr_gguf_kv *al = lr_gguf_find(g, "general.alignment");
    if (al) {
        if (al->val.type != LR_GGUF_U32 || al->val.u == 0 || (al->val.u & (al->val.u - 1)))
            return LR_FAIL(LR_EFORMAT, "%s: general.alignment must be a u32 power of two", g->name);
        g->alignment = (uint32_t)al->val.u;
    }
    return parse_tensors(&c);
}

int lr_gguf_parse(const void *data, size_t size, const char *name, lr_gguf **out)
{
    *out = NULL;
    lr_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(name ? name : "gguf"))) {
        free(g);
        return LR_FAIL(LR_ENOMEM, "gguf");
    }
    g->data = data;
    g->size = size;
    int rc = parse(g);
    if (rc) { lr_gguf_close(g); return rc; }
    *out = g;
    return LR_OK;
}

int lr_gguf_open(const char *path, lr_gguf **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return LR_FAIL(LR_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return LR_FAIL(LR_EIO, "%s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    void *map = NULL;
    if (size) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return LR_FAIL(LR_EIO, "%s: mmap: %s", path, strerror(e));
        }
    }
    close(fd);
    int rc = lr_gguf_parse(map ? map : "", size, path, out);
    if (rc) {
        if (map) munmap(map, size);
        return rc;
    }
    (*out)->map = map;
    (*out)->map_size = size;
    return LR_OK;
}

void lr_gguf_close(lr_gguf *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->nallocs; i++) free(g->allocs[i]);
    free(g->allocs);
    if (g->map) munmap(g->map, g->map_size);
    free(g->name);
    free(g);
}

/* ---- lookups ---- */

int lr_gguf_str_eq(lr_gguf_str s, const char *c)
{
    size_t n = strlen(c);
    return s.len == n && memcmp(s.s, c, n) == 0;
}

const lr_gguf_kv *lr_gguf_find(const lr_gguf *g, const char *key)
{
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (lr_gguf_str_eq(g->kv[i].key, key)) return &g->kv[i];
    return NULL;
}

static int get(const lr_gguf *g, const char *key, const lr_gguf_kv **kv)
{
    *kv = lr_gguf_find(g, key);
    return *kv ? LR_OK : LR_FAIL(LR_EFORMAT, "%s: key %s is missing", g->name, key);
}

static int wrong_type(const lr_gguf *g, const char *key, uint32_t type, const char *want)
{
    return LR_FAIL(LR_EFORMAT, "%s: key %s is a %s, expected %s", g->name, key, lr_gguf_type_name(type), want);
}

int lr_gguf_get_str(const lr_gguf *g, const char *key, lr_gguf_str *out)
{
    const lr_gguf_kv *kv;
    int rc = get(g, key, &kv);
    if (rc) return rc;
    if (kv->val.type != LR_GGUF_STR) return wrong_type(g, key, kv->val.type, "string");
    *out = kv->val.str;
    return LR_OK;
}

static int is_signed(uint32_t t) { return t == LR_GGUF_I8 || t == LR_GGUF_I16 || t == LR_GGUF_I32 || t == LR_GGUF_I64; }
static int is_unsigned(uint32_t t) { return t == LR_GGUF_U8 || t == LR_GGUF_U16 || t == LR_GGUF_U32 || t == LR_GGUF_U64; }

int lr_gguf_get_uint(const lr_gguf *g, const char *key, uint64_t *out)
{
    const lr_gguf_kv *kv;
    int rc = get(g, key, &kv);
    if (rc) return rc;
    if (is_unsigned(kv->val.type)) { *out = kv->val.u; return LR_OK; }
    if (is_signed(kv->val.type) && kv->val.i >= 0) { *out = (uint64_t)kv->val.i; return LR_OK; }
    return wrong_type(g, key, kv->val.type, "a non-negative integer");
}

int lr_gguf_get_int(const lr_gguf *g, const char *key, int64_t *out)
{
    const lr_gguf_kv *kv;
    int rc = get(g, key, &kv);
    if (rc) return rc;
    if (is_signed(kv->val.type)) { *out = kv->val.i; return LR_OK; }
    if (is_unsigned(kv->val.type) && kv->val.u <= INT64_MAX) { *out = (int64_t)kv->val.u; return LR_OK; }
    return wrong_type(g, key, kv->val.type, "an integer");
}

int lr_gguf_get_bool(const lr_gguf *g, const char *key, int *out)
{
    const lr_gguf_kv *kv;
    int rc = get(g, key, &kv);
    if (rc) return rc;
    if (kv->val.type != LR_GGUF_BOOL) return wrong_type(g, key, kv->val.type, "bool");
    *out = (int)kv->val.u;
    return LR_OK;
}

int lr_gguf_get_arr(const lr_gguf *g, const char *key, int elem_type, const lr_gguf_val **out)
{
    const lr_gguf_kv *kv;
    int rc = get(g, key, &kv);
    if (rc) return rc;
    if (kv->val.type != LR_GGUF_ARR) return wrong_type(g, key, kv->val.type, "array");
    if (elem_type >= 0 && kv->val.arr.type != (uint32_t)elem_type)
        return LR_FAIL(LR_EFORMAT, "%s: key %s is an array of %s, expected %s", g->name, key,
                       lr_gguf_type_name(kv->val.arr.type), lr_gguf_type_name((uint32_t)elem_type));
    *out = &kv->val;
    return LR_OK;
}

int64_t lr_gguf_arr_int(const lr_gguf_val *arr, uint64_t i)
{
    uint32_t t = arr->arr.type;
    if (t >= LR_GGUF_NTYPES || !SCALAR_SIZE[t] || t == LR_GGUF_F32 || t == LR_GGUF_F64) return 0;
    lr_gguf_val v;
    scalar(arr->arr.raw + i * SCALAR_SIZE[t], t, &v);
    return is_signed(t) ? v.i : (int64_t)v.u;
}

double lr_gguf_arr_f64(const lr_gguf_val *arr, uint64_t i)
{
    uint32_t t = arr->arr.type;
    if (t != LR_GGUF_F32 && t != LR_GGUF_F64) return (double)lr_gguf_arr_int(arr, i);
    lr_gguf_val v;
    scalar(arr->arr.raw + i * SCALAR_SIZE[t], t, &v);
    return v.f;
}

const lr_gguf_tensor *lr_gguf_find_tensor(const lr_gguf *g, const char *name)
{
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if (lr_gguf_str_eq(g->tensors[i].name, name)) return &g->tensors[i];
    return NULL;
}

const void *lr_gguf_tensor_data(const lr_gguf *g, const lr_gguf_tensor *t)
{
    if (g->data_offset > g->size || t->offset > g->size - g->data_offset) return NULL;
    return g->data + g->data_offset + t->offset;
}
