#include "util/gunzip.h"
#include "util/err.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int lr_gunzip(const void *in, size_t n, size_t max, const char *what, char **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    if (max >= UINT_MAX) return LR_FAIL(LR_EINVAL, "%s: inflate bound %zu past 4 GiB", what, max);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK) return LR_FAIL(LR_ENOMEM, "%s: inflateInit failed", what);
    size_t cap = max > 4096 && n < (max - 4096) / 4 ? n * 4 + 4096 : max, len = 0, fed = 0;
    char *buf = malloc(cap + 1);
    int zr = Z_OK;
    while (buf && zr == Z_OK) {
        if (len == cap) {
            if (cap >= max) break; /* past the bound */
            cap = cap > max / 2 ? max : cap * 2;
            char *b = realloc(buf, cap + 1);
            if (!b) { free(buf); buf = NULL; break; }
            buf = b;
        }
        if (!z.avail_in && fed < n) { /* the input in pieces zlib's 32-bit counts can take */
            const size_t k = n - fed < (size_t)1 << 30 ? n - fed : (size_t)1 << 30;
            z.next_in = (Bytef *)(uintptr_t)in + fed, z.avail_in = (uInt)k, fed += k;
        }
        z.next_out = (Bytef *)buf + len, z.avail_out = (uInt)(cap - len);
        zr = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
        if (zr == Z_BUF_ERROR) { /* no progress: the output is full, or the input ran out */
            if (z.avail_out && (z.avail_in || fed == n)) break; /* truncated (or stuck: never loop on it) */
            zr = Z_OK;
        }
    }
    inflateEnd(&z);
    if (!buf) return LR_FAIL(LR_ENOMEM, "%s: out of memory inflating", what);
    if (zr != Z_STREAM_END) {
        free(buf);
        return LR_FAIL(LR_EFORMAT, "%s: gzip stream is corrupt, truncated or inflates past %zu bytes", what, max);
    }
    buf[len] = 0;
    *out = buf, *outn = len;
    return LR_OK;
}
