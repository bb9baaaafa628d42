/* util/gunzip: round trips, the bound, truncated and corrupt streams,
 * trailing bytes, an input far larger than what it holds, and inputs of
 * several members. */
#include "test/t.h"
#include "util/err.h"
#include "util/gunzip.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* text gzipped (one member) into a new buffer of *n bytes, pad zero bytes after it */
static unsigned char *gz(const char *text, size_t tn, size_t pad, size_t *n)
{
    size_t cap = compressBound((uLong)tn) + 64 + pad;
    unsigned char *b = calloc(1, cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!b || deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return free(b), NULL;
    z.next_in = (Bytef *)text, z.avail_in = (uInt)tn, z.next_out = b, z.avail_out = (uInt)(cap - pad);
    int zr = deflate(&z, Z_FINISH);
    *n = cap - pad - z.avail_out + pad;
    deflateEnd(&z);
    return zr == Z_STREAM_END ? b : (free(b), NULL);
}

static int test_round_trip_and_bound(void)
{
    /* a text that inflates to 64x its gzip size: the buffer must grow from 4 n + 4096 */
    size_t tn = 1 << 20, n;
    char *text = malloc(tn);
    T_ASSERT(text != NULL, "malloc");
    for (size_t i = 0; i < tn; i++) text[i] = "leech lattice "[i % 14];
    unsigned char *b = gz(text, tn, 0, &n);
    T_ASSERT(b && n < tn / 64, "gzip of %zu bytes: %zu", tn, n);
    char *out;
    size_t on;
    T_OK(lr_gunzip(b, n, tn, "t", &out, &on));
    T_ASSERT(on == tn && !memcmp(out, text, tn) && out[on] == 0, "round trip: %zu bytes", on);
    free(out);
    /* one byte under what it inflates to: refused, naming what and the bound */
    T_ASSERT(lr_gunzip(b, n, tn - 1, "tok.lrt: tokenizer", &out, &on) == LR_EFORMAT && !out && !on &&
                 strstr(lr_errmsg(), "tok.lrt: tokenizer") && strstr(lr_errmsg(), "1048575"),
             "past the bound: %s", lr_errmsg());
    /* every truncation refused */
    for (size_t k = 0; k < n; k += 1 + k / 4)
        T_ASSERT(lr_gunzip(b, k, tn, "t", &out, &on) == LR_EFORMAT && !out, "truncated at %zu of %zu accepted", k, n);
    /* a flipped byte in the deflate data: refused (the CRC or the code catches it) */
    b[n / 2] ^= 0x5a;
    T_ASSERT(lr_gunzip(b, n, tn, "t", &out, &on) == LR_EFORMAT && !out, "corrupt stream accepted");
    free(b);
    free(text);
    T_ASSERT(lr_gunzip("x", 1, (size_t)1 << 32, "t", &out, &on) == LR_EINVAL, "a bound past 4 GiB accepted");
    return T_PASS;
}

/* Bytes after the stream's end are ignored; a small stream in a large section
   inflates to its own size (the buffer starts at min(4 n + 4096, max)). */
static int test_trailing_bytes(void)
{
    static const char js[] = "{\"model\":{\"type\":\"BPE\"}}";
    size_t n;
    unsigned char *b = gz(js, sizeof js - 1, (size_t)64 << 20, &n);
    T_ASSERT(b != NULL && n > (size_t)64 << 20, "gzip");
    char *out;
    size_t on;
    T_OK(lr_gunzip(b, n, 1 << 20, "t", &out, &on));
    T_ASSERT(on == sizeof js - 1 && !strcmp(out, js), "inflated %zu bytes: %s", on, out);
    free(out);
    free(b);
    return T_PASS;
}

/* the gzip members of parts[0..k) one after another, then pad zero bytes */
static unsigned char *members(const char *const *parts, int k, size_t pad, size_t *n)
{
    unsigned char *all = NULL;
    *n = 0;
    for (int i = 0; i < k; i++) {
        size_t mn;
        unsigned char *m = gz(parts[i], strlen(parts[i]), 0, &mn), *b = m ? realloc(all, *n + mn + pad) : NULL;
        if (!b) return free(m), free(all), NULL;
        memcpy(b + *n, m, mn);
        free(m);
        all = b, *n += mn;
    }
    memset(all + *n, 0, pad);
    *n += pad;
    return all;
}

/* Every member inflated in turn (cat a.gz b.gz, bgzip), as gzread and gzip -d
   do, within one bound over them all; zero padding or other bytes that are
   not a member after the last ignored; a later member cut short or spoiled
   refused. */
static int test_members(void)
{
    static const char *const parts[] = { "{\"model\":", "", "{\"type\":\"BPE\"}}" }, whole[] = "{\"model\":{\"type\":\"BPE\"}}";
    const size_t wn = sizeof whole - 1;
    char *out;
    size_t on, n, n1;
    unsigned char *b = members(parts, 3, 0, &n), *first = members(parts, 1, 0, &n1);
    T_ASSERT(b && first, "gzip");
    T_OK(lr_gunzip(b, n, wn, "t", &out, &on));
    T_ASSERT(on == wn && !strcmp(out, whole), "three members (one empty): %zu bytes: %s", on, out);
    free(out);
    /* the bound is over them all: exactly it taken (an empty member after), one byte under refused */
    T_ASSERT(lr_gunzip(b, n, wn - 1, "t", &out, &on) == LR_EFORMAT && !out && strstr(lr_errmsg(), "past"),
             "past the bound: %s", lr_errmsg());
    static const char *const tail[] = { "{\"a\":1}", "" };
    size_t tn;
    unsigned char *t = members(tail, 2, 0, &tn);
    T_ASSERT(t != NULL, "gzip");
    T_OK(lr_gunzip(t, tn, 7, "t", &out, &on));
    T_ASSERT(on == 7 && !strcmp(out, "{\"a\":1}"), "exactly the bound, then an empty member: %s", out);
    free(out);
    free(t);
    free(b);
    /* a second member cut anywhere past its magic: refused (where the first
       member alone is not); or with its CRC spoiled */
    static const char *const two[] = { "{\"model\":", "{\"type\":\"BPE\"}}" };
    b = members(two, 2, 0, &n);
    T_ASSERT(b != NULL, "gzip");
    T_OK(lr_gunzip(b, n1, wn, "t", &out, &on));
    free(out);
    T_OK(lr_gunzip(b, n, wn, "t", &out, &on));
    T_ASSERT(on == wn && !strcmp(out, whole), "two members: %s", out);
    free(out);
    for (size_t k = n1 + 2; k < n; k++)
        T_ASSERT(lr_gunzip(b, k, wn, "t", &out, &on) == LR_EFORMAT && !out, "cut at %zu of %zu (first member %zu) accepted", k, n, n1);
    b[n - 5] ^= 1;
    T_ASSERT(lr_gunzip(b, n, wn, "t", &out, &on) == LR_EFORMAT && !out, "second member's CRC spoiled, accepted");
    free(b);
    /* after the last member: zero padding, a lone 1f, other bytes, all ignored */
    static const char *const pads[] = { "\0\0\0\0\0\0\0\0", "\x1f", "garbage!" };
    static const size_t padn[] = { 8, 1, 8 };
    for (int i = 0; i < 3; i++) {
        b = members(parts, 3, padn[i], &n);
        T_ASSERT(b != NULL, "gzip");
        memcpy(b + n - padn[i], pads[i], padn[i]);
        T_OK(lr_gunzip(b, n, wn, "t", &out, &on));
        T_ASSERT(on == wn && !strcmp(out, whole), "with trailing bytes %d: %s", i, out);
        free(out);
        free(b);
    }
    free(first);
    return T_PASS;
}

T_MAIN(T_CASE(test_round_trip_and_bound), T_CASE(test_trailing_bytes), T_CASE(test_members))
