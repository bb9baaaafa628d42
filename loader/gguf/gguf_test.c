/* GGUF reader tests: files built in memory (gguf_build.h) with every value
 * type, nested arrays and tensors; then truncated, corrupted and hostile
 * variants, each of which must fail with a message naming the file. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/gguf/gguf.h"
#include "loader/gguf/gguf_build.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

static const float F32_DATA[6] = { 1.5f, -2.25f, 3.0f, 0.125f, -7.0f, 42.0f };

/* A file with every kind of value and three tensors; alignment 64. */
static gb_buf build_full(uint32_t version)
{
    gb_buf b = {0};
    gb_header(&b, version);
    gb_kv_u32(&b, "general.alignment", 64);
    gb_kv_str(&b, "general.architecture", "qwen3");
    gb_key(&b, "t.u8", LR_GGUF_U8); gb_le(&b, 200, 1);
    gb_key(&b, "t.i8", LR_GGUF_I8); gb_le(&b, (uint8_t)-5, 1);
    gb_key(&b, "t.u16", LR_GGUF_U16); gb_le(&b, 60000, 2);
    gb_key(&b, "t.i16", LR_GGUF_I16); gb_le(&b, (uint16_t)-30000, 2);
    gb_kv_u32(&b, "t.u32", 4000000000u);
    gb_key(&b, "t.i32", LR_GGUF_I32); gb_u32(&b, (uint32_t)-123456);
    float f = 0.5f;
    uint32_t fu;
    memcpy(&fu, &f, 4);
    gb_key(&b, "t.f32", LR_GGUF_F32); gb_u32(&b, fu);
    gb_kv_bool(&b, "t.bool", 1);
    gb_key(&b, "t.u64", LR_GGUF_U64); gb_u64(&b, 0xFEDCBA9876543210ull);
    gb_key(&b, "t.i64", LR_GGUF_I64); gb_u64(&b, (uint64_t)-9000000000ll);
    double d = -1e300;
    uint64_t du;
    memcpy(&du, &d, 8);
    gb_key(&b, "t.f64", LR_GGUF_F64); gb_u64(&b, du);
    gb_kv_str(&b, "t.empty", "");
    gb_kv_arr(&b, "t.arr_i16", LR_GGUF_I16, 3);
    gb_le(&b, 1, 2); gb_le(&b, (uint16_t)-2, 2); gb_le(&b, 300, 2);
    gb_kv_arr(&b, "t.arr_str", LR_GGUF_STR, 3);
    gb_str(&b, "alpha"); gb_str(&b, ""); gb_strn(&b, "n\0ul", 4);
    gb_kv_arr(&b, "t.arr_empty", LR_GGUF_F32, 0);
    /* [[1, 2], [], [["x"]]] as arrays of arrays */
    gb_kv_arr(&b, "t.nested", LR_GGUF_ARR, 3);
    gb_u32(&b, LR_GGUF_U8); gb_u64(&b, 2); gb_le(&b, 1, 1); gb_le(&b, 2, 1);
    gb_u32(&b, LR_GGUF_I64); gb_u64(&b, 0);
    gb_u32(&b, LR_GGUF_ARR); gb_u64(&b, 1);
    gb_u32(&b, LR_GGUF_STR); gb_u64(&b, 1); gb_str(&b, "x");
    const uint64_t d0[] = { 3, 2 }, d1[] = { 64 }, d2[] = { 2, 1, 1, 2 };
    gb_tensor(&b, "w.f32", 2, d0, 0, 0);    /* 24 bytes */
    gb_tensor(&b, "w.q8", 1, d1, 8, 64);    /* 2 blocks of 34 */
    gb_tensor(&b, "w.f16", 4, d2, 1, 192);  /* 8 bytes */
    gb_align(&b, 64);
    gb_bytes(&b, F32_DATA, sizeof F32_DATA);
    gb_align(&b, 64);
    for (int i = 0; i < 68; i++) gb_le(&b, (uint64_t)i, 1);
    gb_align(&b, 64);
    for (int i = 0; i < 8; i++) gb_le(&b, 0xA0u + (uint64_t)i, 1);
    gb_finish(&b);
    return b;
}

static int test_parse_every_type(void)
{
    gb_buf b = build_full(3);
    T_ASSERT(!b.failed, "build");
    lr_gguf *g;
    T_OK(lr_gguf_parse(b.p, b.n, "full.gguf", &g));
    T_ASSERT(g->version == 3 && g->n_kv == 18 && g->n_tensors == 3, "counts %llu %llu",
             (unsigned long long)g->n_kv, (unsigned long long)g->n_tensors);
    uint64_t u;
    int64_t i;
    int bl;
    lr_gguf_str s;
    T_OK(lr_gguf_get_uint(g, "t.u8", &u)); T_ASSERT(u == 200, "u8");
    T_OK(lr_gguf_get_int(g, "t.i8", &i)); T_ASSERT(i == -5, "i8");
    T_OK(lr_gguf_get_uint(g, "t.u16", &u)); T_ASSERT(u == 60000, "u16");
    T_OK(lr_gguf_get_int(g, "t.i16", &i)); T_ASSERT(i == -30000, "i16");
    T_OK(lr_gguf_get_uint(g, "t.u32", &u)); T_ASSERT(u == 4000000000u, "u32");
    T_OK(lr_gguf_get_int(g, "t.i32", &i)); T_ASSERT(i == -123456, "i32");
    T_OK(lr_gguf_get_uint(g, "t.u64", &u)); T_ASSERT(u == 0xFEDCBA9876543210ull, "u64");
    T_OK(lr_gguf_get_int(g, "t.i64", &i)); T_ASSERT(i == -9000000000ll, "i64");
    T_OK(lr_gguf_get_bool(g, "t.bool", &bl)); T_ASSERT(bl == 1, "bool");
    T_ASSERT(lr_gguf_find(g, "t.f32")->val.f == 0.5, "f32");
    T_ASSERT(lr_gguf_find(g, "t.f64")->val.f == -1e300, "f64");
    T_OK(lr_gguf_get_str(g, "general.architecture", &s)); T_ASSERT(lr_gguf_str_eq(s, "qwen3"), "str");
    T_OK(lr_gguf_get_str(g, "t.empty", &s)); T_ASSERT(s.len == 0, "empty str");
    const lr_gguf_val *a;
    T_OK(lr_gguf_get_arr(g, "t.arr_i16", LR_GGUF_I16, &a));
    T_ASSERT(a->arr.n == 3 && lr_gguf_arr_int(a, 0) == 1 && lr_gguf_arr_int(a, 1) == -2 && lr_gguf_arr_int(a, 2) == 300, "i16 array");
    T_OK(lr_gguf_get_arr(g, "t.arr_str", LR_GGUF_STR, &a));
    T_ASSERT(a->arr.n == 3 && lr_gguf_str_eq(a->arr.strs[0], "alpha") && a->arr.strs[1].len == 0 &&
             a->arr.strs[2].len == 4 && memcmp(a->arr.strs[2].s, "n\0ul", 4) == 0, "string array");
    T_OK(lr_gguf_get_arr(g, "t.arr_empty", -1, &a));
    T_ASSERT(a->arr.n == 0 && a->arr.type == LR_GGUF_F32, "empty array");
    T_OK(lr_gguf_get_arr(g, "t.nested", LR_GGUF_ARR, &a));
    T_ASSERT(a->arr.n == 3 && a->arr.vals[0].arr.type == LR_GGUF_U8 && a->arr.vals[0].arr.n == 2 &&
             lr_gguf_arr_int(&a->arr.vals[0], 1) == 2 && a->arr.vals[1].arr.n == 0 &&
             lr_gguf_str_eq(a->arr.vals[2].arr.vals[0].arr.strs[0], "x"), "nested arrays");
    /* getters name the file and key on a type mismatch or a missing key */
    T_ASSERT(lr_gguf_get_str(g, "t.u8", &s) == LR_EFORMAT && strstr(lr_errmsg(), "full.gguf") &&
             strstr(lr_errmsg(), "t.u8") && strstr(lr_errmsg(), "u8"), "msg: %s", lr_errmsg());
    T_ASSERT(lr_gguf_get_uint(g, "t.i8", &u) == LR_EFORMAT, "negative as uint");
    T_ASSERT(lr_gguf_get_int(g, "nope", &i) == LR_EFORMAT && strstr(lr_errmsg(), "nope is missing"), "missing");
    T_ASSERT(lr_gguf_get_arr(g, "t.arr_str", LR_GGUF_U32, &a) == LR_EFORMAT && strstr(lr_errmsg(), "array of string"), "arr type");
    /* tensors */
    T_ASSERT(g->alignment == 64 && g->data_offset % 64 == 0, "alignment %u, data at %llu", g->alignment,
             (unsigned long long)g->data_offset);
    const lr_gguf_tensor *t = lr_gguf_find_tensor(g, "w.f32");
    T_ASSERT(t && t->n_dims == 2 && t->dims[0] == 3 && t->dims[1] == 2 && t->dims[2] == 1 && t->type == 0 &&
             t->nbytes == 24, "w.f32 info");
    T_ASSERT(memcmp(lr_gguf_tensor_data(g, t), F32_DATA, 24) == 0, "w.f32 data");
    t = lr_gguf_find_tensor(g, "w.q8");
    T_ASSERT(t && t->nbytes == 68 && t->offset == 64 && ((const uint8_t *)lr_gguf_tensor_data(g, t))[67] == 67, "w.q8");
    t = lr_gguf_find_tensor(g, "w.f16");
    T_ASSERT(t && t->n_dims == 4 && t->dims[3] == 2 && t->nbytes == 8 &&
             ((const uint8_t *)lr_gguf_tensor_data(g, t))[7] == 0xA7, "w.f16");
    T_ASSERT(lr_gguf_find_tensor(g, "w") == NULL, "prefix is not a match");
    T_ASSERT(!strcmp(lr_ggml_type_name(12), "q4_K") && lr_ggml_type_name(4) == NULL, "type names");
    lr_gguf_close(g);
    /* version 2 has the same layout */
    free(b.p);
    b = build_full(2);
    T_OK(lr_gguf_parse(b.p, b.n, "v2.gguf", &g));
    T_ASSERT(g->version == 2 && g->n_tensors == 3, "v2");
    lr_gguf_close(g);
    free(b.p);
    return T_PASS;
}

/* Every truncation of a valid file fails cleanly, naming the file. */
static int test_every_truncation_fails(void)
{
    gb_buf b = build_full(3);
    for (size_t n = 0; n < b.n; n++) {
        uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan or valgrind catch overreads */
        memcpy(copy, b.p, n);
        lr_gguf *g;
        int rc = lr_gguf_parse(copy, n, "cut.gguf", &g);
        free(copy);
        T_ASSERT(rc == LR_EFORMAT, "truncated to %zu of %zu bytes: rc %d", n, b.n, rc);
        T_ASSERT(strstr(lr_errmsg(), "cut.gguf"), "message: %s", lr_errmsg());
    }
    free(b.p);
    return T_PASS;
}


/* One small file built by a function, expected to fail with a message. */
static int expect_fail(void (*build)(gb_buf *), int want, const char *needle)
{
    gb_buf b = {0};
    build(&b);
    lr_gguf *g = NULL;
    int rc = lr_gguf_parse(b.p, b.n, "bad.gguf", &g);
    free(b.p);
    lr_gguf_close(g);
    T_ASSERT(rc == want, "rc %d, want %d (%s)", rc, want, lr_errmsg());
    T_ASSERT(strstr(lr_errmsg(), needle) && strstr(lr_errmsg(), "bad.gguf"), "message '%s' lacks '%s'", lr_errmsg(), needle);
    return T_PASS;
}

static void bad_magic(gb_buf *b) { gb_bytes(b, "GGML", 4); gb_u32(b, 3); gb_u64(b, 0); gb_u64(b, 0); }
static void version1(gb_buf *b) { gb_header(b, 1); }
static void big_endian(gb_buf *b) { gb_header(b, 0x03000000); }
static void unknown_type(gb_buf *b) { gb_header(b, 3); gb_key(b, "k", 13); gb_u32(b, 0); gb_finish(b); }
static void unknown_elem(gb_buf *b) { gb_header(b, 3); gb_kv_arr(b, "k", 99, 0); gb_finish(b); }
static void dup_key(gb_buf *b) { gb_header(b, 3); gb_kv_u32(b, "a.b", 1); gb_kv_u32(b, "a.c", 1); gb_kv_u32(b, "a.b", 2); gb_finish(b); }
static void huge_kv(gb_buf *b) { gb_header(b, 3); b->n_kv = 1ull << 60; gb_kv_u32(b, "a", 1); gb_finish(b); b->n_kv = 1ull << 60; gb_finish(b); }
static void huge_arr(gb_buf *b) { gb_header(b, 3); gb_kv_arr(b, "big", LR_GGUF_U64, 1ull << 61); gb_u64(b, 1); gb_finish(b); }
static void huge_str(gb_buf *b) { gb_header(b, 3); gb_key(b, "s", LR_GGUF_STR); gb_u64(b, UINT64_MAX); gb_finish(b); }
static void deep(gb_buf *b)
{
    gb_header(b, 3);
    gb_kv_arr(b, "deep", LR_GGUF_ARR, 1);
    for (int i = 0; i < 20; i++) { gb_u32(b, LR_GGUF_ARR); gb_u64(b, 1); }
    gb_u32(b, LR_GGUF_U8); gb_u64(b, 0);
    gb_finish(b);
}
static void bad_align(gb_buf *b) { gb_header(b, 3); gb_kv_u32(b, "general.alignment", 48); gb_finish(b); }
static void align_type(gb_buf *b) { gb_header(b, 3); gb_kv_str(b, "general.alignment", "32"); gb_finish(b); }
static void tensor_dims(gb_buf *b)
{
    const uint64_t d[5] = { 1, 1, 1, 1, 1 };
    gb_header(b, 3); gb_tensor(b, "t", 5, d, 0, 0); gb_align(b, 32); gb_u64(b, 0); gb_finish(b);
}
static void tensor_dup(gb_buf *b)
{
    const uint64_t d[1] = { 2 };
    gb_header(b, 3); gb_tensor(b, "t", 1, d, 0, 0); gb_tensor(b, "t", 1, d, 0, 32); gb_align(b, 32);
    gb_u64(b, 0); gb_align(b, 32); gb_u64(b, 0); gb_finish(b);
}
static void tensor_misaligned(gb_buf *b)
{
    const uint64_t d[1] = { 2 };
    gb_header(b, 3); gb_tensor(b, "t", 1, d, 0, 4); gb_align(b, 32); gb_u64(b, 0); gb_u64(b, 0); gb_finish(b);
}
static void tensor_past_end(gb_buf *b)
{
    const uint64_t d[2] = { 1024, 1024 };
    gb_header(b, 3); gb_tensor(b, "t", 2, d, 1, 0); gb_align(b, 32); gb_u64(b, 0); gb_finish(b);
}
static void tensor_offset_huge(gb_buf *b)
{
    const uint64_t d[1] = { 2 };
    gb_header(b, 3); gb_tensor(b, "t", 1, d, 0, UINT64_MAX - 31); gb_align(b, 32); gb_u64(b, 0); gb_finish(b);
}
static void tensor_overflow(gb_buf *b)
{
    const uint64_t d[4] = { 1ull << 32, 1ull << 32, 16, 1 };
    gb_header(b, 3); gb_tensor(b, "t", 4, d, 0, 0); gb_finish(b);
}
static void tensor_block(gb_buf *b)
{
    const uint64_t d[1] = { 33 };
    gb_header(b, 3); gb_tensor(b, "t", 1, d, 8, 0); gb_align(b, 32); gb_bytes(b, "0123456789012345678901234567890123456789", 40); gb_finish(b);
}
/* b's 16 bytes start inside a's 32 (f32 dims 8 and 4 at offsets 0 and 16) */
static void tensor_overlap(gb_buf *b)
{
    const uint64_t da[1] = { 8 }, db[1] = { 4 };
    gb_header(b, 3); gb_tensor(b, "a", 1, da, 0, 0); gb_tensor(b, "b", 1, db, 0, 0); gb_align(b, 32);
    for (int i = 0; i < 8; i++) gb_u64(b, 0);
    gb_finish(b);
}
static void tensor_overlap_mid(gb_buf *b)
{
    const uint64_t da[1] = { 16 }, db[1] = { 8 };
    gb_header(b, 3); gb_tensor(b, "b", 1, db, 0, 32); gb_tensor(b, "a", 1, da, 0, 0); gb_align(b, 32);
    for (int i = 0; i < 12; i++) gb_u64(b, 0);
    gb_finish(b);
}
static void huge_tensors(gb_buf *b) { gb_header(b, 3); b->n_tensors = 1ull << 40; gb_finish(b); }

static int test_bad_files(void)
{
    static const struct { void (*fn)(gb_buf *); int rc; const char *needle; } c[] = {
        { bad_magic, LR_EFORMAT, "bad magic" },
        { version1, LR_EUNSUPPORTED, "version 1" },
        { big_endian, LR_EUNSUPPORTED, "big-endian" },
        { unknown_type, LR_EFORMAT, "key k: unknown value type 13" },
        { unknown_elem, LR_EFORMAT, "array of unknown type 99" },
        { dup_key, LR_EFORMAT, "key a.b appears twice" },
        { huge_kv, LR_EFORMAT, "key/values do not fit" },
        { huge_arr, LR_EFORMAT, "key big: array of" },
        { huge_str, LR_EFORMAT, "truncated" },
        { deep, LR_EFORMAT, "nested deeper" },
        { bad_align, LR_EFORMAT, "power of two" },
        { align_type, LR_EFORMAT, "general.alignment" },
        { tensor_dims, LR_EFORMAT, "tensor t: 5 dimensions" },
        { tensor_dup, LR_EFORMAT, "tensor t appears twice" },
        { tensor_misaligned, LR_EFORMAT, "not a multiple of the alignment" },
        { tensor_past_end, LR_EFORMAT, "past the end" },
        { tensor_offset_huge, LR_EFORMAT, "past the end" },
        { tensor_overflow, LR_EFORMAT, "overflows" },
        { tensor_block, LR_EFORMAT, "not a multiple of the q8_0 block" },
        { huge_tensors, LR_EFORMAT, "tensors do not fit" },
        { tensor_overlap, LR_EFORMAT, "[0, ...) overlap" }, /* (equal offsets: either order) */
        { tensor_overlap_mid, LR_EFORMAT, "tensors a [0, +64) and b [32, ...) overlap" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (expect_fail(c[i].fn, c[i].rc, c[i].needle) != T_PASS) {
            fprintf(stderr, "    (case %zu)\n", i);
            return T_FAIL;
        }
    return T_PASS;
}

/* Random corruption never crashes (the fuzz target does this at scale). */
static int test_random_corruption(void)
{
    gb_buf b = build_full(3);
    lr_rng rng;
    lr_rng_seed(&rng, 17);
    uint8_t *copy = malloc(b.n);
    int ok = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(copy, b.p, b.n);
        int flips = 1 + (int)lr_rng_below(&rng, 4);
        for (int k = 0; k < flips; k++) copy[lr_rng_below(&rng, b.n)] ^= (uint8_t)(1u << lr_rng_below(&rng, 8));
        lr_gguf *g;
        if (lr_gguf_parse(copy, b.n, "x.gguf", &g) == LR_OK) {
            ok++;
            for (uint64_t t = 0; t < g->n_tensors; t++)
                if (g->tensors[t].nbytes) {
                    const uint8_t *p = lr_gguf_tensor_data(g, &g->tensors[t]);
                    T_ASSERT(p && p + g->tensors[t].nbytes <= copy + b.n, "tensor data outside the file");
                }
            lr_gguf_close(g);
        }
    }
    free(copy);
    free(b.p);
    printf("    %d of 3000 corrupted files still parse\n", ok);
    return T_PASS;
}

static int test_open_file(void)
{
    gb_buf b = build_full(3);
    char path[] = "/tmp/lr_gguf_test_XXXXXX";
    int fd = mkstemp(path);
    T_ASSERT(fd >= 0, "mkstemp");
    T_ASSERT(write(fd, b.p, b.n) == (ssize_t)b.n, "write");
    close(fd);
    lr_gguf *g;
    T_OK(lr_gguf_open(path, &g));
    const lr_gguf_tensor *t = lr_gguf_find_tensor(g, "w.f32");
    T_ASSERT(t && memcmp(lr_gguf_tensor_data(g, t), F32_DATA, 24) == 0, "mapped data");
    lr_gguf_close(g);
    /* an empty file */
    fd = open(path, O_WRONLY | O_TRUNC);
    close(fd);
    T_ASSERT(lr_gguf_open(path, &g) == LR_EFORMAT && strstr(lr_errmsg(), path), "empty: %s", lr_errmsg());
    unlink(path);
    T_ASSERT(lr_gguf_open(path, &g) == LR_EIO && strstr(lr_errmsg(), path), "missing: %s", lr_errmsg());
    T_ASSERT(lr_gguf_open("/tmp", &g) == LR_EIO, "directory");
    free(b.p);
    return T_PASS;
}

T_MAIN(T_CASE(test_parse_every_type), T_CASE(test_every_truncation_fails), T_CASE(test_bad_files),
       T_CASE(test_random_corruption), T_CASE(test_open_file))
