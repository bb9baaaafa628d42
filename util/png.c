/* PNG writer and (own-form) reader for the plots (util/png.h). */
#include "util/png.h"
#include "util/atomic_file.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void be32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v; }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static const uint8_t SIG[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

/* length | type | data | crc(type | data) at p; returns the bytes written */
static size_t chunk(uint8_t *p, const char *type, const uint8_t *data, uint32_t n)
{
    be32(p, n);
    memcpy(p + 4, type, 4);
    if (n) memcpy(p + 8, data, n);
    be32(p + 8 + n, (uint32_t)crc32(crc32(0L, Z_NULL, 0), p + 4, n + 4));
    return 12 + (size_t)n;
}

int lr_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *len)
{
    *out = NULL, *len = 0;
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return LR_FAIL(LR_EINVAL, "png: %dx%d", w, h);
    const size_t stride = (size_t)w * 3 + 1, raw_n = stride * h;
    uint8_t *raw = malloc(raw_n);
    uLongf zn = compressBound((uLong)raw_n);
    uint8_t *z = malloc(zn), *png = malloc(zn + 64);
    if (!raw || !z || !png) { free(raw), free(z), free(png); return LR_FAIL(LR_ENOMEM, "png: out of memory"); }
    for (int y = 0; y < h; y++) {
        raw[y * stride] = 0; /* filter: none */
        memcpy(raw + y * stride + 1, rgb + (size_t)y * w * 3, (size_t)w * 3);
    }
    int zr = compress2(z, &zn, raw, (uLong)raw_n, 9);
    free(raw);
    if (zr != Z_OK) { free(z), free(png); return LR_FAIL(LR_EINVAL, "png: deflate failed (%d)", zr); }
    uint8_t ihdr[13];
    be32(ihdr, (uint32_t)w), be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0; /* 8-bit RGB, deflate, filter 0, no interlace */
    size_t n = 0;
    memcpy(png, SIG, 8), n = 8;
    n += chunk(png + n, "IHDR", ihdr, 13);
    n += chunk(png + n, "IDAT", z, (uint32_t)zn);
    n += chunk(png + n, "IEND", NULL, 0);
    free(z);
    *out = png, *len = n;
    return LR_OK;
}

int lr_png_write(const char *path, const uint8_t *rgb, int w, int h)
{
    uint8_t *png;
    size_t n;
    int rc = lr_png_encode(rgb, w, h, &png, &n);
    if (rc) return lr_wrap(rc, "%s", path);
    rc = lr_write_file_atomic(path, png, n);
    free(png);
    return rc;
}

int lr_png_decode(const char *what, const uint8_t *png, size_t len, uint8_t **rgb, int *w, int *h)
{
    *rgb = NULL, *w = *h = 0;
    if (len < 8 + 25 + 12 || memcmp(png, SIG, 8)) return LR_FAIL(LR_EFORMAT, "%s: not a PNG file", what);
    size_t p = 8;
    uint32_t W = 0, H = 0;
    uint8_t *z = NULL;
    size_t zn = 0;
    int seen_end = 0;
    while (p + 12 <= len && !seen_end) {
        uint32_t n = rd32(png + p);
        if (n > len - p - 12) { free(z); return LR_FAIL(LR_EFORMAT, "%s: chunk at byte %zu runs past the end", what, p); }
        const uint8_t *type = png + p + 4, *data = png + p + 8;
        if (rd32(data + n) != (uint32_t)crc32(crc32(0L, Z_NULL, 0), type, n + 4)) {
            free(z);
            return LR_FAIL(LR_EFORMAT, "%s: bad CRC in the %.4s chunk at byte %zu", what, (const char *)type, p);
        }
        if (!memcmp(type, "IHDR", 4)) {
            if (n != 13 || data[8] != 8 || data[9] != 2 || data[10] || data[11] || data[12]) {
                free(z);
                return LR_FAIL(LR_EFORMAT, "%s: only 8-bit RGB, non-interlaced PNGs are read here", what);
            }
            W = rd32(data), H = rd32(data + 4);
            if (!W || !H || W > 16384 || H > 16384) { free(z); return LR_FAIL(LR_EFORMAT, "%s: size %ux%u", what, W, H); }
        } else if (!memcmp(type, "IDAT", 4)) {
            uint8_t *t = realloc(z, zn + n + 1);
            if (!t) { free(z); return LR_FAIL(LR_ENOMEM, "%s: out of memory", what); }
            z = t;
            memcpy(z + zn, data, n), zn += n;
        } else if (!memcmp(type, "IEND", 4)) seen_end = 1;
        p += 12 + (size_t)n;
    }
    if (!W || !zn || !seen_end) { free(z); return LR_FAIL(LR_EFORMAT, "%s: missing IHDR, IDAT or IEND", what); }
    const size_t stride = (size_t)W * 3 + 1;
    uLongf rn = (uLongf)(stride * H);
    uint8_t *raw = malloc(rn), *out = malloc((size_t)W * H * 3);
    if (!raw || !out) { free(z), free(raw), free(out); return LR_FAIL(LR_ENOMEM, "%s: out of memory", what); }
    int zr = uncompress(raw, &rn, z, (uLong)zn);
    free(z);
    if (zr != Z_OK || rn != stride * H) {
        free(raw), free(out);
        return LR_FAIL(LR_EFORMAT, "%s: image data does not inflate to %ux%u pixels", what, W, H);
    }
    for (uint32_t y = 0; y < H; y++) {
        if (raw[y * stride] != 0) {
            free(raw), free(out);
            return LR_FAIL(LR_EFORMAT, "%s: row %u uses a PNG filter (only 0 is read here)", what, y);
        }
        memcpy(out + (size_t)y * W * 3, raw + y * stride + 1, (size_t)W * 3);
    }
    free(raw);
    *rgb = out, *w = (int)W, *h = (int)H;
    return LR_OK;
}
