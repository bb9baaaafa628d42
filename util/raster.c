/* RGB canvas: rectangles and bitmap text (util/raster.h). */
#include "util/raster.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

int lr_canvas_init(lr_canvas *c, int w, int h, uint32_t rgb)
{
    c->w = c->h = 0;
    c->rgb = NULL;
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return LR_FAIL(LR_EINVAL, "canvas %dx%d", w, h);
    c->rgb = malloc((size_t)w * h * 3);
    if (!c->rgb) return LR_FAIL(LR_ENOMEM, "out of memory for a %dx%d canvas", w, h);
    c->w = w, c->h = h;
    lr_canvas_rect(c, 0, 0, w, h, rgb);
    return LR_OK;
}

void lr_canvas_free(lr_canvas *c)
{
    free(c->rgb);
    c->rgb = NULL;
    c->w = c->h = 0;
}

void lr_canvas_rect(lr_canvas *c, int x, int y, int w, int h, uint32_t rgb)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int j = y0; j < y1; j++)
        for (int i = x0; i < x1; i++) {
            uint8_t *p = c->rgb + ((size_t)j * c->w + i) * 3;
            p[0] = (uint8_t)(rgb >> 16), p[1] = (uint8_t)(rgb >> 8), p[2] = (uint8_t)rgb;
        }
}

int lr_canvas_text_width(int scale, const char *s) { return (int)strlen(s) * 6 * scale; }

int lr_canvas_text(lr_canvas *c, int x, int y, int scale, uint32_t rgb, const char *s)
{
    int x0 = x;
    for (; *s; s++, x += 6 * scale) {
        unsigned ch = (unsigned char)*s;
        if (ch < 32 || ch > 126) continue;
        const unsigned char *g = lr_font5x7[ch - 32];
        for (int r = 0; r < 7; r++)
            for (int k = 0; k < 5; k++)
                if (g[r] >> (4 - k) & 1) lr_canvas_rect(c, x + k * scale, y + r * scale, scale, scale, rgb);
    }
    return x - x0;
}
