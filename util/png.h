/* PNG files of an RGB canvas: 8-bit truecolour, not interlaced, one IDAT
 * chunk, deflate by zlib (already a dependency for the tokenizer/loader).
 * The reader takes exactly that form (it checks the plots this project
 * wrote, in tests); anything else is refused with a message. */
#ifndef LR_PNG_H
#define LR_PNG_H
#include <stddef.h>
#include <stdint.h>

/* *out (malloc'd, *len bytes) = the PNG of w x h RGB pixels. */
int lr_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *len);
/* Written to path through a temporary file renamed into place. */
int lr_png_write(const char *path, const uint8_t *rgb, int w, int h);
/* *rgb (malloc'd) = the pixels of a PNG in the form above; `what` names
 * the file in messages. */
int lr_png_decode(const char *what, const uint8_t *png, size_t len, uint8_t **rgb, int *w, int *h);

#endif
