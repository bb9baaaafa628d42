/* The safetensors reader: every dtype read back, partial reads, lookups,
 * and hostile headers rejected with an error naming the file and tensor. */
#include "loader/import/import_testlib.h"
#include "loader/import/safetensors.h"
#include "test/t.h"
#include "util/err.h"

static uint8_t *build(stb *b, size_t *n) { return stb_bytes(b, NULL, n); }

static int test_dtypes_round_trip(void)
{
    lr_rng r;
    lr_rng_seed(&r, 7);
    float v[3][60];
    for (int i = 0; i < 60; i++) v[0][i] = (float)lr_rng_signed(&r), v[1][i] = (float)lr_rng_signed(&r) * 8,
                                 v[2][i] = (float)lr_rng_signed(&r) * 1e-3f;
    stb b = { 0 };
    uint64_t s2[2] = { 6, 10 }, s1[1] = { 60 };
    stb_add(&b, "a.f32", "F32", 2, s2, v[0], 60);
    stb_add(&b, "b.f16", "F16", 1, s1, v[1], 60);
    stb_add(&b, "c.bf16", "BF16", 2, s2, v[2], 60);
    int32_t ints[3] = { 1, -2, 3 };
    uint64_t s3[1] = { 3 };
    stb_add_raw(&b, "d.i32", "I32", 1, s3, ints, sizeof ints);
    float one = 2.5f;
    stb_add_raw(&b, "e.scalar", "F32", 0, NULL, &one, 4);
    uint64_t s0[2] = { 0, 7 };
    stb_add_raw(&b, "f.empty", "F16", 2, s0, NULL, 0);
    size_t n;
    uint8_t *file = stb_bytes(&b, "{\"format\": \"pt\"}", &n);
    lr_st_file *f;
    T_OK(lr_st_parse(file, n, "round.safetensors", &f));
    T_ASSERT(f->n == 6, "%d tensors", f->n);
    const lr_st_tensor *a = lr_st_find(f, "a.f32"), *h = lr_st_find(f, "b.f16"), *bf = lr_st_find(f, "c.bf16");
    T_ASSERT(a && h && bf && !lr_st_find(f, "zzz") && !lr_st_find(f, "__metadata__"), "lookups");
    T_ASSERT(a->dtype == LR_ST_F32 && a->ndim == 2 && a->shape[0] == 6 && a->shape[1] == 10 && a->nelem == 60, "a");
    T_ASSERT(h->dtype == LR_ST_F16 && h->ndim == 1 && h->nelem == 60, "b");
    float out[60];
    T_OK(lr_st_read_f32(f, a, 0, 60, out));
    for (int i = 0; i < 60; i++) T_ASSERT(out[i] == v[0][i], "f32 %d", i);
    T_OK(lr_st_read_f32(f, h, 0, 60, out));
    for (int i = 0; i < 60; i++) T_ASSERT(out[i] == lr_half_to_float(lr_float_to_half(v[1][i])), "f16 %d", i);
    T_OK(lr_st_read_f32(f, bf, 0, 60, out));
    for (int i = 0; i < 60; i++) T_ASSERT(out[i] == lr_bf16_to_float(lr_float_to_bf16(v[2][i])), "bf16 %d", i);
    /* partial reads at an offset */
    T_OK(lr_st_read_f32(f, a, 17, 5, out));
    for (int i = 0; i < 5; i++) T_ASSERT(out[i] == v[0][17 + i], "f32 partial %d", i);
    T_OK(lr_st_read_f32(f, h, 59, 1, out));
    T_ASSERT(out[0] == lr_half_to_float(lr_float_to_half(v[1][59])), "f16 last");
    T_ASSERT(lr_st_read_f32(f, a, 58, 3, out) == LR_ERANGE, "read past the end");
    const lr_st_tensor *d = lr_st_find(f, "d.i32"), *e = lr_st_find(f, "e.scalar"), *z = lr_st_find(f, "f.empty");
    T_ASSERT(d && lr_st_read_f32(f, d, 0, 3, out) == LR_EUNSUPPORTED && strstr(lr_errmsg(), "d.i32"), "i32: %s", lr_errmsg());
    T_ASSERT(e && e->ndim == 0 && e->nelem == 1, "scalar");
    T_OK(lr_st_read_f32(f, e, 0, 1, out));
    T_ASSERT(out[0] == 2.5f, "scalar value");
    T_ASSERT(z && z->nelem == 0 && z->begin == z->end, "empty tensor");
    lr_st_close(f);
    free(file);
    return T_PASS;
}

static int test_open_file(void)
{
    char dir[256], path[300];
    tl_tmpdir(dir, sizeof dir, "st");
    T_ASSERT(dir[0], "mkdtemp");
    snprintf(path, sizeof path, "%s/x.safetensors", dir);
    stb b = { 0 };
    float v[4] = { 1.5f, -2.0f, 0.25f, 3.0f };
    uint64_t s[1] = { 4 };
    stb_add(&b, "w", "F32", 1, s, v, 4);
    size_t n;
    uint8_t *file = build(&b, &n);
    T_ASSERT(tl_write(path, file, n) == 0, "write");
    free(file);
    lr_st_file *f;
    T_OK(lr_st_open(path, &f));
    float out[4];
    T_OK(lr_st_read_f32(f, lr_st_find(f, "w"), 0, 4, out));
    T_ASSERT(!memcmp(out, v, sizeof v), "values");
    lr_st_close(f);
    snprintf(path, sizeof path, "%s/missing.safetensors", dir);
    T_ASSERT(lr_st_open(path, &f) == LR_EIO && strstr(lr_errmsg(), "missing.safetensors"), "missing file: %s", lr_errmsg());
    tl_rmrf(dir);
    return T_PASS;
}

/* A file made of a raw header text and data_bytes bytes of data. */
static uint8_t *raw_file(const char *hdr, size_t data_bytes, size_t *n)
{
    size_t hn = strlen(hdr);
    *n = 8 + hn + data_bytes;
    uint8_t *p = calloc(1, *n);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)hn >> (8 * i));
    memcpy(p + 8, hdr, hn);
    for (size_t i = 0; i < data_bytes; i++) p[8 + hn + i] = (uint8_t)(i * 37 + 1);
    return p;
}

static int expect_bad(const uint8_t *p, size_t n, const char *want1, const char *want2)
{
    lr_st_file *f = NULL;
    int rc = lr_st_parse(p, n, "hostile.safetensors", &f);
    if (rc != LR_EFORMAT) {
        fprintf(stderr, "    expected LR_EFORMAT, got %d (%s) for [%s]\n", rc, rc ? lr_errmsg() : "accepted", want1);
        if (!rc) lr_st_close(f);
        return 0;
    }
    const char *m = lr_errmsg();
    if (!strstr(m, "hostile.safetensors") || (want1 && !strstr(m, want1)) || (want2 && !strstr(m, want2))) {
        fprintf(stderr, "    message \"%s\" lacks \"%s\" / \"%s\"\n", m, want1 ? want1 : "", want2 ? want2 : "");
        return 0;
    }
    return 1;
}

static int test_hostile_headers(void)
{
    static const struct { const char *hdr; size_t data; const char *w1, *w2; } cases[] = {
        { "{", 0, "JSON", NULL },
        { "[1, 2]", 0, "not an object", NULL },
        { "{\"w\": 3}", 0, "w", "not an object" },
        { "{\"w\": {\"shape\": [2], \"data_offsets\": [0, 8]}}", 8, "w", "dtype" },
        { "{\"w\": {\"dtype\": \"Q4\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 8, "w", "unknown dtype" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [-2], \"data_offsets\": [0, 8]}}", 8, "w", "shape[0]" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2.0], \"data_offsets\": [0, 8]}}", 8, "w", "shape[0]" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": 2, \"data_offsets\": [0, 8]}}", 8, "w", "shape" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 4]}}", 4, "w", "dimensions" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, 4]}}", 4, "w", "too many" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 16]}}", 8, "w", "past the end" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 0]}}", 8, "w", "end before" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}", 8, "w", "need 8" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0]}}", 8, "w", "data_offsets" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, -8]}}", 8, "w", "data_offsets" },
        { "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 99999999999999999999]}}", 8, "JSON", NULL },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
          " \"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}", 12, "overlap", "[4, 12)" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]},"
          " \"b\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [4, 8]}}", 16, "overlap", "b" },
        { "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
          " \"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", 8, "JSON", "duplicate" },
        { "{\"__metadata__\": 5}", 0, "__metadata__", NULL },
        { "{\"\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "name", NULL },
        { "{} trailing", 0, "JSON", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n;
        uint8_t *p = raw_file(cases[i].hdr, cases[i].data, &n);
        int ok = expect_bad(p, n, cases[i].w1, cases[i].w2);
        free(p);
        T_ASSERT(ok, "case %zu: %s", i, cases[i].hdr);
    }
    /* Header lengths that do not fit, and short files. */
    uint8_t small[8] = { 4, 0, 0, 0, 0, 0, 0, 0 };
    T_ASSERT(expect_bad(small, 5, "too short", NULL), "5 bytes");
    T_ASSERT(expect_bad(small, 8, "does not fit", NULL), "header past the end");
    uint8_t zero[10] = { 0 };
    T_ASSERT(expect_bad(zero, 10, "header length 0", NULL), "zero header");
    uint8_t huge[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}' };
    T_ASSERT(expect_bad(huge, 16, "does not fit", NULL), "huge header length");
    /* A valid header with trailing spaces (the writers pad to 8) is fine. */
    size_t n;
    uint8_t *p = raw_file("{\"w\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4]}}   ", 4, &n);
    lr_st_file *f;
    T_OK(lr_st_parse(p, n, "padded.safetensors", &f));
    lr_st_close(f);
    free(p);
    return T_PASS;
}

T_MAIN(T_CASE(test_dtypes_round_trip), T_CASE(test_open_file), T_CASE(test_hostile_headers))
