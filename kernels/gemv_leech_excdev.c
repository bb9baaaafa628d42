#include "kernels/gemv_leech_excdev.h"

#include <string.h>

static size_t al256(size_t n) { return (n + 255) / 256 * 256; }

int lr_exc_dev_upload(lr_exc_dev *d, const lr_exc_host *h, int copies)
{
    memset(d, 0, sizeof *d);
    d->copies = copies < 1 ? 1 : copies;
    d->off_ptr = al256(h->seg_bytes);
    d->off_col = d->off_ptr + al256(sizeof(uint32_t) * ((size_t)h->rows + 1));
    d->off_dw = d->off_col + al256(sizeof(uint32_t) * ((size_t)h->nexc + 1));
    d->wbytes = d->off_dw + al256(sizeof(float) * ((size_t)h->nexc + 1));
    int rc = lr_cu_alloc(&d->w, d->wbytes * (size_t)d->copies);
    for (int c = 0; c < d->copies && !rc; c++) {
        CUdeviceptr b = d->w + (size_t)c * d->wbytes;
        rc = lr_cu_h2d(b, h->seg, h->seg_bytes);
        if (!rc) rc = lr_cu_h2d(b + d->off_ptr, h->ptr, sizeof(uint32_t) * ((size_t)h->rows + 1));
        if (!rc && h->nexc) rc = lr_cu_h2d(b + d->off_col, h->col, sizeof(uint32_t) * h->nexc);
        if (!rc && h->nexc) rc = lr_cu_h2d(b + d->off_dw, h->dw, sizeof(float) * h->nexc);
    }
    if (!rc) rc = lr_cu_alloc(&d->tab, h->tab_bytes);
    if (!rc) rc = lr_cu_h2d(d->tab, h->tab, h->tab_bytes);
    if (!rc) rc = lr_cu_alloc(&d->scale, sizeof(float) * (size_t)h->rows);
    if (!rc) rc = lr_cu_h2d(d->scale, h->row_scale, sizeof(float) * (size_t)h->rows);
    size_t tb = (size_t)h->rows * (size_t)h->tail_cols * 2;
    if (!rc && h->tail_cols) rc = lr_cu_alloc(&d->tail, tb);
    if (!rc && h->tail_cols) rc = lr_cu_h2d(d->tail, h->tail, tb);
    if (rc) lr_exc_dev_free(d);
    return rc;
}

void lr_exc_dev_free(lr_exc_dev *d)
{
    lr_cu_free(d->w), lr_cu_free(d->tab), lr_cu_free(d->scale), lr_cu_free(d->tail);
    memset(d, 0, sizeof *d);
}

void lr_exc_dev_copy(const lr_exc_dev *d, int c, CUdeviceptr *w, CUdeviceptr *ptr, CUdeviceptr *col, CUdeviceptr *dw)
{
    *w = d->w + (size_t)(c % d->copies) * d->wbytes;
    *ptr = *w + d->off_ptr, *col = *w + d->off_col, *dw = *w + d->off_dw;
}

size_t lr_exc_host_bytes(const lr_exc_host *h)
{
    return h->seg_bytes + 8 * (size_t)h->nexc + 4 * ((size_t)h->rows + 1) + sizeof(float) * (size_t)h->rows +
           (size_t)h->rows * (size_t)h->tail_cols * 2;
}
