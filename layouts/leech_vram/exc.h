/* Per-row exception lists of the Leech VRAM layouts that store some
 * coordinates approximately (I8x: a class's fifth value; Planes14S: values
 * the f16 high byte cannot hold): (column, dw) pairs the GEMV adds as
 * dw * x[col] before the row scale, kept as CSR (exc_ptr[rows + 1],
 * columns strictly ascending within a row). One module, so both layouts
 * build, install and check their lists the same way. */
#ifndef LR_LEECH_VRAM_EXC_H
#define LR_LEECH_VRAM_EXC_H
#include <stddef.h>
#include <stdint.h>

typedef struct lr_vram_exc { uint32_t col; float dw; } lr_vram_exc;

/* A growing list of (row, exception) pairs (an unfold thread's). */
typedef struct lr_exc_list {
    uint32_t *row;
    lr_vram_exc *e;
    size_t n, cap;
} lr_exc_list;

/* Appends n exceptions of one row; `who` names the layout in errors. */
int lr_exc_push(lr_exc_list *xl, uint32_t row, const lr_vram_exc *e, size_t n, const char *who);
/* Sorts the last n entries (one row's) by column. */
void lr_exc_sort_tail(lr_exc_list *xl, size_t n);
void lr_exc_list_free(lr_exc_list *xl);

/* The CSR of a layout with `rows` rows. */
typedef struct lr_exc_csr {
    uint32_t *ptr; /* [rows + 1], owned by the layout */
    uint32_t **col;
    float **dw;
    uint32_t *n;
} lr_exc_csr;

/* Installs n pairs sorted by (row, column): new col / dw arrays (the old
 * ones freed), ptr rebuilt. LR_EINVAL for pairs out of order or rows out of
 * range (ptr zeroed, arrays untouched). */
int lr_exc_install(lr_exc_csr c, int rows, const uint32_t *row, const lr_vram_exc *e, size_t n, const char *who);
/* Installs the concatenation of nlists lists (each in row order, lists in
 * row order: one per row group of an unfold). */
int lr_exc_install_lists(lr_exc_csr c, int rows, const lr_exc_list *lists, int nlists, const char *who);
/* Block blk's exceptions by coordinate (out[i] = its dw, NULL: none), row's
 * list checked on the way: pointers inside [0, n], columns strictly
 * ascending, and below ncols unless ncols is 0; LR_EFORMAT naming the row. */
int lr_exc_block(const uint32_t *ptr, const uint32_t *col, const float *dw, uint32_t n, int row, int blk,
                 uint32_t ncols, const float *out[24], const char *who);
/* Checks the pointers of a loaded list: ptr[0] = 0, ptr[rows] = n, never
 * decreasing; LR_EFORMAT naming the row. */
int lr_exc_check_ptr(const uint32_t *ptr, int rows, uint32_t n, const char *who);

#endif
