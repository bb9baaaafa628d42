/* Fuzz target: arbitrary bytes through the PNG reader (util/png.c). It
 * returns pixels or a refusal, never reads past the input; what it accepts
 * re-encodes and decodes to the same pixels. */
#include "util/err.h"
#include "util/png.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *rgb = NULL, *png = NULL, *again = NULL;
    int w, h, w2, h2;
    if (lr_png_decode("fuzz", data, size, &rgb, &w, &h) == LR_OK && (size_t)w * h <= (1u << 22)) {
        size_t n;
        if (lr_png_encode(rgb, w, h, &png, &n) || lr_png_decode("again", png, n, &again, &w2, &h2) || w2 != w ||
            h2 != h || memcmp(again, rgb, (size_t)w * h * 3))
            abort();
    }
    lr_clear_error();
    free(rgb), free(png), free(again);
    return 0;
}
