/* Shared pieces of the published record layouts: canonical level order,
 * the f32 class table, LSB-first bit fields, point <-> (id, levels, signs),
 * allocation and archive unpacking. */
#include "layouts/leech_vram/rec.h"

#include "layouts/leech/leech.h"
#include "layouts/leech_vram/par.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int lr_rec_levels(int max_shell, int cls, uint8_t vals[5], int *nlev)
{
    memset(vals, 0, 5);
    if (cls < 0) { *nlev = 1; return LR_OK; }
    const lr_leech_class *cl;
    int nc, rc = lr_leech_classes(max_shell, &cl, &nc);
    if (rc) return rc;
    if (cls >= nc) return LR_FAIL(LR_EINVAL, "rec: class %d of %d", cls, nc);
    const lr_leech_class *c = cl + cls;
    if (c->nvals > 5) return LR_FAIL(LR_EINVAL, "rec: class %d has %d values", cls, c->nvals);
    int ord[5];
    for (int i = 0; i < c->nvals; i++) ord[i] = i;
    /* descending count, ties by descending value (insertion sort, <= 5) */
    for (int i = 1; i < c->nvals; i++)
        for (int j = i; j > 0; j--) {
            int a = ord[j - 1], b = ord[j];
            int after = c->mult[b] > c->mult[a] || (c->mult[b] == c->mult[a] && c->vals[b] > c->vals[a]);
            if (!after) break;
            ord[j - 1] = b, ord[j] = a;
        }
    for (int i = 0; i < c->nvals; i++) vals[i] = c->vals[ord[i]];
    *nlev = c->nvals;
    return LR_OK;
}

int lr_rec_tab_build(int max_shell, float *tab)
{
    const lr_leech_class *cl;
    int nc, rc = lr_leech_classes(max_shell, &cl, &nc);
    if (rc) return rc;
    if (nc + 1 > LR_REC_TAB_ENTRIES) return LR_FAIL(LR_ERANGE, "rec: %d classes overflow the 9-bit class id", nc);
    memset(tab, 0, sizeof(float) * LR_REC_TAB_ENTRIES * LR_REC_TAB_STRIDE);
    uint32_t one = 1;
    memcpy(tab + 5, &one, 4); /* origin: len 1, value 0 */
    for (int c = 0; c < nc; c++) {
        uint8_t v[5];
        int n;
        if ((rc = lr_rec_levels(max_shell, c, v, &n))) return rc;
        float *e = tab + (size_t)(1 + c) * LR_REC_TAB_STRIDE;
        for (int l = 0; l < n; l++) e[l] = (float)(v[l] / sqrt(16.0 * cl[c].shell));
        uint32_t len = (uint32_t)n;
        memcpy(e + 5, &len, 4);
    }
    return LR_OK;
}

void lr_rec_free(lr_rec *L)
{
    if (!L) return;
    free(L->data), free(L->bases), free(L->exc_ptr), free(L->exc_idx), free(L->exc_rec);
    free(L->tab), free(L->row_scale), free(L->tail_f16);
    memset(L, 0, sizeof *L);
}

int lr_rec_alloc(lr_rec *L, int kind, int rows, int cols, int max_shell, int gain_bits, const float *centroid)
{
    memset(L, 0, sizeof *L);
    if (kind < LR_REC_P14 || kind > LR_REC_SLOT32) return LR_FAIL(LR_EINVAL, "rec: kind %d", kind);
    if (rows <= 0 || cols < 0 || rows > (1 << 24) || cols > (1 << 24))
        return LR_FAIL(LR_EINVAL, "rec: shape %dx%d", rows, cols);
    if (max_shell != 12 && max_shell != 13) return LR_FAIL(LR_EINVAL, "rec: max_shell %d", max_shell);
    if (gain_bits < 0 || gain_bits > 1)
        return LR_FAIL(LR_EINVAL, "rec: %d gain bits: the published records have a 1-bit gain field", gain_bits);
    for (int g = 0; g < 1 << gain_bits; g++)
        if (!isfinite(centroid[g])) return LR_FAIL(LR_EINVAL, "rec: centroid %d not finite", g);
    L->kind = kind, L->rows = rows, L->cols = cols, L->nblk = cols / 24, L->tail = cols % 24;
    L->max_shell = max_shell, L->gain_bits = gain_bits;
    L->nblocks = (size_t)rows * L->nblk;
    if (L->nblocks > 0xffffffffu) return LR_FAIL(LR_ERANGE, "rec: %zu blocks overflow u32 indices", L->nblocks);
    L->gscale[0] = centroid[0], L->gscale[1] = gain_bits ? centroid[1] : 0.0f;
    L->tab = malloc(sizeof(float) * LR_REC_TAB_ENTRIES * LR_REC_TAB_STRIDE);
    L->row_scale = malloc(sizeof(float) * (size_t)rows);
    L->tail_f16 = L->tail ? calloc((size_t)rows * L->tail, 2) : NULL;
    if (kind == LR_REC_P12X) L->exc_ptr = calloc((size_t)rows + 1, sizeof(uint32_t));
    if (!L->tab || !L->row_scale || (L->tail && !L->tail_f16) || (kind == LR_REC_P12X && !L->exc_ptr)) {
        lr_rec_free(L);
        return LR_FAIL(LR_ENOMEM, "rec: out of memory for %dx%d", rows, cols);
    }
    for (int r = 0; r < rows; r++) L->row_scale[r] = 1.0f;
    int rc = lr_rec_tab_build(max_shell, L->tab);
    if (rc) lr_rec_free(L);
    return rc;
}

int lr_rec_alloc_data(lr_rec *L, size_t bytes)
{
    free(L->data);
    L->data = calloc(bytes + LR_REC_PAD, 1);
    L->bytes = L->data ? bytes : 0;
    return L->data ? LR_OK : LR_FAIL(LR_ENOMEM, "rec: out of memory for %zu bytes of records", bytes);
}

int lr_rec_from_matrix(lr_rec *L, int kind, const lr_leech_matrix *m)
{
    if (m->nblk != m->cols / 24 || m->tail != m->cols % 24)
        return LR_FAIL(LR_EINVAL, "rec: matrix %dx%d with %d blocks and tail %d", m->rows, m->cols, m->nblk, m->tail);
    int rc = lr_rec_alloc(L, kind, m->rows, m->cols, m->max_shell, m->gain_bits, m->centroid);
    if (rc) return rc;
    for (int r = 0; r < m->rows; r++) {
        if (!isfinite(m->row_scale[r])) { lr_rec_free(L); return LR_FAIL(LR_EINVAL, "rec: row %d scale not finite", r); }
        L->row_scale[r] = m->row_scale[r];
    }
    if (L->tail) memcpy(L->tail_f16, m->tail_f16, (size_t)m->rows * m->tail * 2);
    return LR_OK;
}

typedef struct {
    const lr_leech_matrix *m;
    uint64_t *idx;
    uint8_t *gain;
} unpack_ctx;

/* Rows [r0, r1): block r0 * nblk starts at bit r0 * nblk * (47 + g); unpack
 * from the byte-aligned block at or before it (multiples of 8 are). */
static int unpack_rows(void *p, int r0, int r1)
{
    unpack_ctx *c = p;
    const lr_leech_matrix *m = c->m;
    size_t k0 = (size_t)r0 * m->nblk, n = (size_t)(r1 - r0) * m->nblk;
    size_t k8 = k0 & ~(size_t)7, skip = k0 - k8, at = k8 * (size_t)(47 + m->gain_bits) / 8;
    if (!n) return LR_OK;
    if (at > m->archive_bytes) return LR_FAIL(LR_EFORMAT, "rec unfold: archive of %zu bytes too short", m->archive_bytes);
    uint64_t *idx = malloc((n + skip) * sizeof *idx);
    uint8_t *gain = malloc(n + skip);
    int rc = idx && gain ? LR_OK : LR_FAIL(LR_ENOMEM, "rec unfold: out of memory");
    if (!rc) rc = lr_leech_archive_unpack(m->archive + at, m->archive_bytes - at, n + skip, m->gain_bits, idx, gain);
    if (!rc) {
        memcpy(c->idx + k0, idx + skip, n * sizeof *idx);
        memcpy(c->gain + k0, gain + skip, n);
    }
    free(idx), free(gain);
    return rc;
}

int lr_rec_unpack(const lr_leech_matrix *m, int nthreads, uint64_t **idx, uint8_t **gain)
{
    size_t n = (size_t)m->rows * m->nblk;
    *idx = malloc((n ? n : 1) * sizeof **idx);
    *gain = malloc(n ? n : 1);
    if (!*idx || !*gain) { free(*idx), free(*gain); *idx = NULL, *gain = NULL; return LR_FAIL(LR_ENOMEM, "rec: out of memory"); }
    unpack_ctx c = { m, *idx, *gain };
    int rc = lr_vram_parallel(m->rows, nthreads, unpack_rows, &c);
    if (rc) { free(*idx), free(*gain); *idx = NULL, *gain = NULL; }
    return rc;
}

uint32_t lr_rec_bits(const uint8_t *p, size_t bit, int n)
{
    uint64_t v = 0;
    size_t b0 = bit / 8;
    int sh = (int)(bit % 8), nb = (sh + n + 7) / 8;
    for (int i = 0; i < nb; i++) v |= (uint64_t)p[b0 + i] << (8 * i);
    return (uint32_t)((v >> sh) & ((n == 32) ? 0xffffffffu : ((1u << n) - 1)));
}

void lr_rec_put_bits(uint8_t *p, size_t bit, int n, uint32_t v)
{
    for (int i = 0; i < n; i++) {
        size_t k = bit + (size_t)i;
        p[k / 8] = (uint8_t)((p[k / 8] & ~(1u << (k % 8))) | ((v >> i) & 1u) << (k % 8));
    }
}

int lr_rec_split(const int8_t x[24], int max_shell, int *id, uint8_t lvl[24], uint32_t *signs, int *nlev)
{
    int cls, rc = lr_leech_class_of(x, max_shell, &cls);
    if (rc) return rc;
    uint8_t v[5];
    if ((rc = lr_rec_levels(max_shell, cls, v, nlev))) return rc;
    *id = cls + 1, *signs = 0;
    for (int i = 0; i < 24; i++) {
        int a = x[i] < 0 ? -x[i] : x[i], l = 0;
        while (l < *nlev && v[l] != a) l++;
        if (l == *nlev) return LR_FAIL(LR_EINVAL, "rec: |x[%d]| = %d not in class %d", i, a, cls);
        lvl[i] = (uint8_t)l;
        *signs |= (uint32_t)(x[i] < 0) << i;
    }
    return LR_OK;
}

int lr_rec_join(int max_shell, int id, const uint8_t lvl[24], uint32_t signs, int8_t x[24])
{
    const lr_leech_class *cl;
    int nc, rc = lr_leech_classes(max_shell, &cl, &nc);
    if (rc) return rc;
    if (id < 0 || id > nc) return LR_FAIL(LR_EFORMAT, "rec: class id %d outside 0..%d", id, nc);
    uint8_t v[5];
    int n;
    if ((rc = lr_rec_levels(max_shell, id - 1, v, &n))) return rc;
    for (int i = 0; i < 24; i++) {
        if (lvl[i] >= n) return LR_FAIL(LR_EFORMAT, "rec: coordinate %d: level %d of class id %d with %d", i, lvl[i], id, n);
        int neg = (signs >> i) & 1;
        if (neg && v[lvl[i]] == 0) return LR_FAIL(LR_EFORMAT, "rec: coordinate %d: negative zero", i);
        x[i] = (int8_t)(neg ? -v[lvl[i]] : v[lvl[i]]);
    }
    /* the levels and signs must spell a point of the class the id names */
    int got;
    if ((rc = lr_leech_class_of(x, max_shell, &got)) || got != id - 1) {
        lr_clear_error();
        return LR_FAIL(LR_EFORMAT, "rec: record is not a point of class id %d", id);
    }
    return LR_OK;
}
