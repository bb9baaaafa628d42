/* Device copies of a Leech layout with per-row exception lists (I8x,
 * Planes14S) for the benchmark arms: `copies` copies of segments | exc_ptr
 * | exc_col | exc_dw (256-aligned sections, distinct addresses, same bytes:
 * what a launch streams, rotated so nothing is served from L2) plus one
 * class table, row scales and dense tail. */
#ifndef LR_GEMV_LEECH_EXCDEV_H
#define LR_GEMV_LEECH_EXCDEV_H
#include "rt/cu.h"

#include <stddef.h>
#include <stdint.h>

/* What a layout holds on the host. */
typedef struct lr_exc_host {
    const void *seg;
    size_t seg_bytes;
    int rows;
    const uint32_t *ptr, *col; /* ptr [rows + 1], col [nexc] */
    const float *dw;
    uint32_t nexc;
    const void *tab;
    size_t tab_bytes;
    const float *row_scale;    /* [rows] */
    const uint16_t *tail;      /* [rows][tail_cols] or NULL */
    int tail_cols;
} lr_exc_host;

typedef struct lr_exc_dev {
    int copies;
    size_t wbytes, off_ptr, off_col, off_dw; /* one copy and its sections */
    CUdeviceptr w, tab, scale, tail;
} lr_exc_dev;

/* Allocates and uploads; on error everything is freed. */
int lr_exc_dev_upload(lr_exc_dev *d, const lr_exc_host *h, int copies);
void lr_exc_dev_free(lr_exc_dev *d);
/* Copy c's segments and lists. */
void lr_exc_dev_copy(const lr_exc_dev *d, int c, CUdeviceptr *w, CUdeviceptr *ptr, CUdeviceptr *col, CUdeviceptr *dw);
/* Bytes one launch reads: segments, exceptions (8 each), row pointers,
 * row scales and tail (the class table excluded: it stays in L2). */
size_t lr_exc_host_bytes(const lr_exc_host *h);

#endif
