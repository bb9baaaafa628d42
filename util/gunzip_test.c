/* util/gunzip: round trips, the bound, truncated and corrupt streams,
 * trailing bytes, and an input far larger than what it holds. */
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

T_MAIN(T_CASE(test_round_trip_and_bound), T_CASE(test_trailing_bytes))
