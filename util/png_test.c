/* PNG encode/decode round trip of a drawn canvas, and the reader's
 * refusals: not a PNG, a bad CRC, a truncated file, another pixel format. */
#include "test/t.h"
#include "util/err.h"
#include "util/png.h"
#include "util/raster.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int test_round_trip(void)
{
    lr_canvas c;
    T_OK(lr_canvas_init(&c, 123, 45, 0xffffffu));
    lr_canvas_rect(&c, 10, 5, 50, 20, 0x2f6fb0u);
    lr_canvas_rect(&c, -5, -5, 10, 10, 0x123456u); /* clipped */
    int tw = lr_canvas_text(&c, 3, 30, 1, 0x202020u, "Ab9% _x");
    T_ASSERT(tw == lr_canvas_text_width(1, "Ab9% _x") && tw == 42, "text width %d", tw);
    T_ASSERT(c.rgb[0] == 0x12 && c.rgb[1] == 0x34 && c.rgb[2] == 0x56, "clipped corner");
    const uint8_t *p = c.rgb + ((size_t)5 * 123 + 10) * 3;
    T_ASSERT(p[0] == 0x2f && p[1] == 0x6f && p[2] == 0xb0, "rectangle corner");
    uint8_t *png, *rgb;
    size_t n;
    int w, h;
    T_OK(lr_png_encode(c.rgb, c.w, c.h, &png, &n));
    T_ASSERT(n > 8 && !memcmp(png + 1, "PNG", 3), "signature");
    T_OK(lr_png_decode("t.png", png, n, &rgb, &w, &h));
    T_ASSERT(w == 123 && h == 45 && !memcmp(rgb, c.rgb, (size_t)w * h * 3), "pixels differ after the round trip");
    free(rgb);

    /* refusals name the file */
    uint8_t *bad = malloc(n);
    memcpy(bad, png, n);
    bad[40] ^= 1; /* inside IHDR or IDAT: the CRC no longer matches */
    T_ASSERT(lr_png_decode("bad.png", bad, n, &rgb, &w, &h) == LR_EFORMAT && strstr(lr_errmsg(), "bad.png") &&
                 strstr(lr_errmsg(), "CRC"), "corrupt byte: %s", lr_errmsg());
    T_ASSERT(lr_png_decode("cut.png", png, n / 2, &rgb, &w, &h) == LR_EFORMAT, "truncated file accepted");
    T_ASSERT(lr_png_decode("txt.png", (const uint8_t *)"hello, not a png at all, really not", 35, &rgb, &w, &h) ==
                 LR_EFORMAT && strstr(lr_errmsg(), "not a PNG"), "text accepted: %s", lr_errmsg());
    memcpy(bad, png, n);
    bad[8 + 8 + 9] = 6; /* colour type RGBA, with IHDR's CRC made again: refused for its format */
    const uLong crc = crc32(0, bad + 8 + 4, 4 + 13);
    for (int i = 0; i < 4; i++) bad[8 + 8 + 13 + i] = (uint8_t)(crc >> (24 - 8 * i));
    T_ASSERT(lr_png_decode("rgba.png", bad, n, &rgb, &w, &h) == LR_EFORMAT && strstr(lr_errmsg(), "only 8-bit RGB"),
             "RGBA: %s", lr_errmsg());
    lr_clear_error();
    free(bad), free(png);
    lr_canvas_free(&c);
    T_ASSERT(lr_canvas_init(&c, 0, 10, 0) == LR_EINVAL, "empty canvas accepted");
    lr_clear_error();
    return T_PASS;
}

T_MAIN(T_CASE(test_round_trip))
