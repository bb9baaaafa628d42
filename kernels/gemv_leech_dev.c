/* The engine-facing Leech GEMV: artifact tensors -> one Planes14 device
 * matrix (rows of several tensors concatenated) + its launch. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "layouts/leech_vram/p14_layout.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lr_leech_dev {
    lr_p14 geo;             /* geometry only (no image) */
    CUdeviceptr img;        /* the image: records | tables | scales | tail */
    CUdeviceptr w, tab, scale, tail;
    int rows, cols;
    CUfunction fn;
    lr_launch_geom g;
    lr_leech_geom geom;
    int rot_rc, rot_kind;
    uint64_t rot_seed;
    char rot_msg[512];
};

int lr_leech_dev_upload(const lr_tensor_view *const *parts, int nparts, int nthreads, lr_leech_dev **out)
{
    *out = NULL;
    lr_leech_dev *d = calloc(1, sizeof *d);
    if (!d) return LR_FAIL(LR_ENOMEM, "leech dev: out of memory");
    lr_p14 L;
    int rc = lr_p14_unfold_views(parts, nparts, nthreads, &L);
    if (rc) { free(d); return rc; }
    d->rot_rc = lr_p14_views_rotation(parts, nparts, &d->rot_kind, &d->rot_seed);
    if (d->rot_rc) snprintf(d->rot_msg, sizeof d->rot_msg, "%s", lr_errmsg()), lr_clear_error();
    d->rows = L.rows, d->cols = L.cols;
    d->geom = lr_gemv_leech_p14_default_geom(L.rows, L.cols);
    lr_jit_spec spec;
    rc = lr_gemv_leech_p14_spec(&spec, &d->g, L.rows, L.cols, L.nentries, d->geom, lr_cu_smem_budget());
    if (!rc) rc = lr_jit_get(&spec, &d->fn);
    if (!rc) rc = lr_cu_alloc(&d->img, L.img_bytes);
    if (!rc) rc = lr_cu_h2d(d->img, L.img, L.img_bytes);
    if (!rc) {
        d->w = d->img;
        d->tab = d->img + L.off_tab;
        d->scale = d->img + L.off_scale;
        d->tail = L.tail ? d->img + L.off_tail : d->img; /* never read without a tail */
        d->geo = L;
        d->geo.img = NULL, d->geo.owned = 0, d->geo.data = NULL, d->geo.tab = NULL;
        d->geo.row_scale = NULL, d->geo.tail_f16 = NULL;
    }
    lr_p14_free(&L);
    if (rc) {
        lr_leech_dev_free(d);
        return lr_wrap(rc, "leech dev: %d tensors starting with %s", nparts, parts[0]->name);
    }
    *out = d;
    return LR_OK;
}

int lr_leech_dev_gemv(const lr_leech_dev *m, CUdeviceptr x, CUdeviceptr y, CUstream s)
{
    CUdeviceptr w = m->w, tab = m->tab, scale = m->scale, tail = m->tail;
    int rows = m->rows, cols = m->cols;
    void *args[] = { &w, &tab, &scale, &tail, &x, &y, &rows, &cols };
    return lr_cu_launch(m->fn, m->g.grid, m->g.block, m->g.smem, s, args);
}

size_t lr_leech_dev_bytes(const lr_leech_dev *m) { return m->geo.img_bytes; }
int lr_leech_dev_rows(const lr_leech_dev *m) { return m->rows; }
int lr_leech_dev_cols(const lr_leech_dev *m) { return m->cols; }
lr_leech_geom lr_leech_dev_geom(const lr_leech_dev *m) { return m->geom; }

int lr_leech_dev_part_row(const lr_leech_dev *m, int i)
{
    return i < 0 ? 0 : i > m->geo.nparts ? m->rows : m->geo.part_row0[i];
}

int lr_leech_dev_rotation(const lr_leech_dev *m, int *kind, uint64_t *seed)
{
    if (m->rot_rc) return LR_FAIL(m->rot_rc, "%s", m->rot_msg);
    *kind = m->rot_kind;
    *seed = m->rot_seed;
    return LR_OK;
}

void lr_leech_dev_free(lr_leech_dev *m)
{
    if (!m) return;
    if (m->img) lr_cu_free(m->img);
    free(m);
}
