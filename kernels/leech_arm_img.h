/* The device image of a Leech benchmark arm (kernels/gemv_leech_*.c):
 * `copies` copies, at distinct addresses, of everything one launch reads
 * (the segments, the class table, row scales, f16 tail and, with exception
 * lists, their CSR row pointers, columns and dw), so rotating through them
 * keeps a launch's data out of the L2 as the engine's layers do (each has
 * its own). Until the twentieth session the class table, row scales and
 * tail were one copy shared by every launch, so they came from L2, and the
 * arm timed Planes14S's side warps too fast (docs/layouts.md). */
#ifndef LR_LEECH_ARM_IMG_H
#define LR_LEECH_ARM_IMG_H
#include "rt/cu.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lr_leech_arm_src {
    const void *data;
    size_t bytes; /* the segments */
    int rows;
    const uint32_t *exc_ptr, *exc_col; /* exc_ptr NULL: a layout without exception lists */
    const float *exc_dw;
    uint32_t nexc;
    const void *tab;
    int nentries; /* 16-byte class-table entries */
    const float *row_scale;
    const uint16_t *tail_f16; /* [rows][tail], or NULL */
    int tail;
} lr_leech_arm_src;

typedef struct lr_leech_arm_img {
    int copies;
    size_t wbytes; /* one copy: segments | tab | scale | tail | exc_ptr | exc_col | exc_dw, 256-aligned */
    size_t off_tab, off_scale, off_tail, off_ptr, off_col, off_dw; /* off_ptr.. 0 without exception lists */
    CUdeviceptr w;
} lr_leech_arm_img;

/* One copy's device pointers. */
typedef struct lr_leech_arm_ptrs {
    CUdeviceptr w, tab, scale, tail, exc_ptr, exc_col, exc_dw;
} lr_leech_arm_ptrs;

/* Allocates and uploads; on error frees what it took (img stays freeable). */
int lr_leech_arm_img_upload(lr_leech_arm_img *img, const lr_leech_arm_src *src, int copies);
void lr_leech_arm_img_free(lr_leech_arm_img *img);
/* Copy `copy` (mod copies). */
lr_leech_arm_ptrs lr_leech_arm_img_copy(const lr_leech_arm_img *img, int copy);

#endif
