#include "util/gunzip.h"
#include "util/err.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Another member starts at in[pos]: its magic, as zlib's gzread looks for
   one (anything else after a member, zero padding included, is ignored). */
static int member_at(const uint8_t *in, size_t n, size_t pos)
{
    return n - pos >= 2 && in[pos] == 0x1f && in[pos + 1] == 0x8b;
}

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
    int done = 0;
    while (buf) {
        if (len == cap && cap < max) {
            cap = cap > max / 2 ? max : cap * 2;
            char *b = realloc(buf, cap + 1);
            if (!b) { free(buf); buf = NULL; break; }
            buf = b;
        }
        if (!z.avail_in && fed < n) { /* the input in pieces zlib's 32-bit counts can take */
            const size_t k = n - fed < (size_t)1 << 30 ? n - fed : (size_t)1 << 30;
            z.next_in = (Bytef *)(uintptr_t)in + fed, z.avail_in = (uInt)k, fed += k;
        }
        /* at the bound, room for one byte more (the NUL's): exactly max
           bytes then ends the stream, more fills it */
        const size_t room = (cap == max ? cap + 1 : cap) - len;
        z.next_out = (Bytef *)buf + len, z.avail_out = (uInt)room;
        const int zr = inflate(&z, Z_NO_FLUSH);
        len += room - z.avail_out;
        if (len > max) break; /* past the bound */
        if (zr == Z_STREAM_END) {
            /* a member ended: go on with the next one, as gzip -d and gzread do */
            if (member_at((const uint8_t *)in, n, fed - z.avail_in) && inflateReset(&z) == Z_OK) continue;
            done = 1;
            break;
        }
        if (zr == Z_BUF_ERROR) { /* no progress: the output is full, or the input ran out */
            if (z.avail_out && (z.avail_in || fed == n)) break; /* truncated (or stuck: never loop on it) */
            continue;
        }
        if (zr != Z_OK) break; /* corrupt */
    }
    inflateEnd(&z);
    if (!buf) return LR_FAIL(LR_ENOMEM, "%s: out of memory inflating", what);
    if (!done) {
        free(buf);
        if (len > max) return LR_FAIL(LR_EFORMAT, "%s: gzip data inflates past %zu bytes", what, max);
        return LR_FAIL(LR_EFORMAT, "%s: gzip data is corrupt or truncated", what);
    }
    buf[len] = 0;
    *out = buf, *outn = len;
    return LR_OK;
}
