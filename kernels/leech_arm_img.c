/* The Leech benchmark arms' device images (kernels/leech_arm_img.h). */
#include "kernels/leech_arm_img.h"

#include <stdlib.h>
#include <string.h>

static size_t al256(size_t n) { return (n + 255) / 256 * 256; }

int lr_leech_arm_img_upload(lr_leech_arm_img *img, const lr_leech_arm_src *src, int copies)
{
    memset(img, 0, sizeof *img);
    img->copies = copies < 1 ? 1 : copies;
    const size_t rows = (size_t)src->rows, n_tail = src->tail_f16 && src->tail ? rows * (size_t)src->tail * 2 : 0;
    img->off_tab = al256(src->bytes);
    /* experiment (branch xrep): LEECHRT_GTREP copies of the table, al256 apart */
    const char *et = getenv("LEECHRT_GTREP");
    const int tr = et && atoi(et) > 1 && atoi(et) <= 8 ? atoi(et) : 1;
    img->off_scale = img->off_tab + (size_t)tr * al256((size_t)src->nentries * 16);
    img->off_tail = img->off_scale + al256(sizeof(float) * rows);
    img->wbytes = img->off_tail + al256(n_tail);
    if (src->exc_ptr) {
        img->off_ptr = img->wbytes;
        img->off_col = img->off_ptr + al256(sizeof(uint32_t) * (rows + 1));
        img->off_dw = img->off_col + al256(sizeof(uint32_t) * (src->nexc + 1));
        img->wbytes = img->off_dw + al256(sizeof(float) * (src->nexc + 1));
    }
    int rc = lr_cu_alloc(&img->w, img->wbytes * (size_t)img->copies);
    for (int c = 0; c < img->copies && !rc; c++) {
        CUdeviceptr b = img->w + (size_t)c * img->wbytes;
        rc = lr_cu_h2d(b, src->data, src->bytes);
        for (int k = 0; k < tr && !rc; k++)
            rc = lr_cu_h2d(b + img->off_tab + (size_t)k * al256((size_t)src->nentries * 16), src->tab, (size_t)src->nentries * 16);
        if (!rc) rc = lr_cu_h2d(b + img->off_scale, src->row_scale, sizeof(float) * rows);
        if (!rc && n_tail) rc = lr_cu_h2d(b + img->off_tail, src->tail_f16, n_tail);
        if (!rc && src->exc_ptr) rc = lr_cu_h2d(b + img->off_ptr, src->exc_ptr, sizeof(uint32_t) * (rows + 1));
        if (!rc && src->exc_ptr && src->nexc) rc = lr_cu_h2d(b + img->off_col, src->exc_col, sizeof(uint32_t) * src->nexc);
        if (!rc && src->exc_ptr && src->nexc) rc = lr_cu_h2d(b + img->off_dw, src->exc_dw, sizeof(float) * src->nexc);
    }
    if (rc) lr_leech_arm_img_free(img);
    return rc;
}

void lr_leech_arm_img_free(lr_leech_arm_img *img)
{
    lr_cu_free(img->w);
    img->w = 0;
}

lr_leech_arm_ptrs lr_leech_arm_img_copy(const lr_leech_arm_img *img, int copy)
{
    const CUdeviceptr b = img->w + (size_t)(copy % img->copies) * img->wbytes;
    lr_leech_arm_ptrs p = { b, b + img->off_tab, b + img->off_scale, b + img->off_tail, b + img->off_ptr,
                            b + img->off_col, b + img->off_dw };
    return p;
}
