/* A small RGB canvas for the benchmark plots: filled rectangles and text in
 * a 5x7 bitmap font scaled by an integer factor. Enough for bar charts; no
 * anti-aliasing, so the pixels (and the PNG) are the same on every machine. */
#ifndef LR_RASTER_H
#define LR_RASTER_H
#include <stdint.h>

typedef struct lr_canvas {
    int w, h;
    uint8_t *rgb; /* w * h * 3, row-major */
} lr_canvas;

extern const unsigned char lr_font5x7[95][7];

/* A canvas filled with colour 0xRRGGBB; LR_ENOMEM on failure. */
int lr_canvas_init(lr_canvas *c, int w, int h, uint32_t rgb);
void lr_canvas_free(lr_canvas *c);
/* Clipped to the canvas. */
void lr_canvas_rect(lr_canvas *c, int x, int y, int w, int h, uint32_t rgb);
/* Text with its top-left corner at (x, y), glyphs 6 * scale wide; returns the width drawn. */
int lr_canvas_text(lr_canvas *c, int x, int y, int scale, uint32_t rgb, const char *s);
int lr_canvas_text_width(int scale, const char *s);

#endif
