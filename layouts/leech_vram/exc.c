#include "layouts/leech_vram/exc.h"

#include "util/err.h"

#include <stdlib.h>
#include <string.h>

int lr_exc_push(lr_exc_list *xl, uint32_t row, const lr_vram_exc *e, size_t n, const char *who)
{
    if (xl->n + n > xl->cap) {
        size_t cap = xl->cap ? 2 * xl->cap : 64;
        while (cap < xl->n + n) cap *= 2;
        uint32_t *nr = realloc(xl->row, cap * sizeof *nr);
        if (nr) xl->row = nr;
        lr_vram_exc *ne = realloc(xl->e, cap * sizeof *ne);
        if (ne) xl->e = ne;
        if (!nr || !ne) return LR_FAIL(LR_ENOMEM, "%s unfold: out of memory", who);
        xl->cap = cap;
    }
    for (size_t i = 0; i < n; i++) xl->row[xl->n] = row, xl->e[xl->n++] = e[i];
    return LR_OK;
}

static int by_col(const void *a, const void *b)
{
    uint32_t x = ((const lr_vram_exc *)a)->col, y = ((const lr_vram_exc *)b)->col;
    return x < y ? -1 : x > y;
}

void lr_exc_sort_tail(lr_exc_list *xl, size_t n)
{
    if (n > 1) qsort(xl->e + xl->n - n, n, sizeof *xl->e, by_col);
}

void lr_exc_list_free(lr_exc_list *xl)
{
    free(xl->row), free(xl->e);
    memset(xl, 0, sizeof *xl);
}

int lr_exc_install(lr_exc_csr c, int rows, const uint32_t *row, const lr_vram_exc *e, size_t n, const char *who)
{
    if (n > 0xffffffffu) return LR_FAIL(LR_ERANGE, "%s: %zu exceptions", who, n);
    uint32_t *col = malloc((n ? n : 1) * sizeof *col);
    float *dw = malloc((n ? n : 1) * sizeof *dw);
    if (!col || !dw) {
        free(col), free(dw);
        return LR_FAIL(LR_ENOMEM, "%s: out of memory for %zu exceptions", who, n);
    }
    memset(c.ptr, 0, ((size_t)rows + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        if (row[i] >= (uint32_t)rows || (i && (row[i] < row[i - 1] || (row[i] == row[i - 1] && e[i].col <= e[i - 1].col)))) {
            free(col), free(dw);
            memset(c.ptr, 0, ((size_t)rows + 1) * sizeof(uint32_t));
            return LR_FAIL(LR_EINVAL, "%s: exception %zu (row %u, column %u) out of order", who, i, row[i], e[i].col);
        }
        c.ptr[row[i] + 1]++;
        col[i] = e[i].col, dw[i] = e[i].dw;
    }
    for (int r = 0; r < rows; r++) c.ptr[r + 1] += c.ptr[r];
    free(*c.col), free(*c.dw);
    *c.col = col, *c.dw = dw, *c.n = (uint32_t)n;
    return LR_OK;
}

int lr_exc_install_lists(lr_exc_csr c, int rows, const lr_exc_list *lists, int nlists, const char *who)
{
    size_t total = 0;
    for (int g = 0; g < nlists; g++) total += lists[g].n;
    uint32_t *row = malloc((total ? total : 1) * sizeof *row);
    lr_vram_exc *e = malloc((total ? total : 1) * sizeof *e);
    int rc = LR_OK;
    if (!row || !e) rc = LR_FAIL(LR_ENOMEM, "%s unfold: out of memory for %zu exceptions", who, total);
    if (!rc) {
        size_t at = 0;
        for (int g = 0; g < nlists; g++) {
            if (!lists[g].n) continue;
            memcpy(row + at, lists[g].row, lists[g].n * sizeof *row);
            memcpy(e + at, lists[g].e, lists[g].n * sizeof *e);
            at += lists[g].n;
        }
        rc = lr_exc_install(c, rows, row, e, total, who);
    }
    free(row), free(e);
    return rc;
}

int lr_exc_check_ptr(const uint32_t *ptr, int rows, uint32_t n, const char *who)
{
    if (ptr[0] != 0 || ptr[rows] != n)
        return LR_FAIL(LR_EFORMAT, "%s: exception pointers %u..%u for %u exceptions", who, ptr[0], ptr[rows], n);
    for (int r = 0; r < rows; r++)
        if (ptr[r + 1] < ptr[r]) return LR_FAIL(LR_EFORMAT, "%s: exception pointers decrease at row %d", who, r);
    return LR_OK;
}

int lr_exc_block(const uint32_t *ptr, const uint32_t *col, const float *dw, uint32_t n, int row, int blk,
                 uint32_t ncols, const float *out[24], const char *who)
{
    const uint32_t a = ptr[row], b = ptr[row + 1], c0 = (uint32_t)(24 * blk);
    if (a > b || b > n) return LR_FAIL(LR_EFORMAT, "%s: row %d: exception pointers %u..%u (of %u)", who, row, a, b, n);
    for (int i = 0; i < 24; i++) out[i] = NULL;
    for (uint32_t k = a; k < b; k++) {
        const uint32_t c = col[k];
        if (k > a && c <= col[k - 1])
            return LR_FAIL(LR_EFORMAT, "%s: row %d: exception columns not ascending (%u after %u)", who, row, c,
                           col[k - 1]);
        if (ncols && c >= ncols)
            return LR_FAIL(LR_EFORMAT, "%s: row %d exception %u: column %u past the blocks (%u columns)", who, row, k, c,
                           ncols);
        if (c >= c0 && c < c0 + 24) out[c - c0] = &dw[k];
    }
    return LR_OK;
}
