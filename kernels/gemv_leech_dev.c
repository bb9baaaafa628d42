/* The engine-facing Leech GEMV: artifact tensors -> one device matrix (rows
 * of several tensors concatenated) in Planes14S or Planes14, and its
 * launch. */
#include "jit/jit.h"
#include "kernels/gemv_leech.h"
#include "kernels/rotation.h"
#include "kernels/tuning.h"
#include "layouts/leech_vram/p14_layout.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech_vram/p14s_layout.h"
#include "util/args.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lr_leech_dev {
    int layout;             /* LR_LEECH_DEV_P14, _P14S or _P14S3 (what the image holds) */
    int rows, cols, nparts;
    int part_row0[LR_P14S_MAX_PARTS + 1];
    size_t bytes;           /* device bytes of the image */
    CUdeviceptr img;        /* one allocation: everything below points into it */
    CUdeviceptr w, tab, scale, tail, exc_ptr, exc_col, exc_dw;
    CUfunction fn;
    lr_launch_geom g;
    lr_leech_geom geom;
    int rot_rc, rot_kind;
    int mode;               /* bit 0 the norm end, bit 1 the residual add (lr_leech_dev_mode) */
    int trig;               /* its GEMV lets its dependents launch after the main loop (lr_leech_ends.trig) */
    uint64_t rot_seed;
    char rot_msg[512];
    int swiglu;             /* 1: gate|up pair, the GEMV writes silu(gate) up (rows / 2) */
    int ntab;               /* class-table entries (Planes14S) */
    CUfunction fn_rot;      /* the GEMV with the rotation in its prologue, once enabled */
    lr_launch_geom g_rot;
    CUfunction fn_trot;     /* the SwiGLU GEMV with h's rotation at its end, once enabled */
    lr_launch_geom g_trot;
};

const char *lr_leech_dev_layout_name(int layout)
{
    return layout == LR_LEECH_DEV_P14    ? "planes14"
           : layout == LR_LEECH_DEV_P14S  ? "planes14s"
           : layout == LR_LEECH_DEV_P14S3 ? "planes14s3"
                                          : NULL;
}

static int upload_p14(lr_leech_dev *d, const lr_tensor_view *const *parts, int nparts, int nthreads)
{
    lr_p14 L;
    int rc = lr_p14_unfold_views(parts, nparts, nthreads, &L);
    if (rc) return rc;
    _Static_assert(LR_P14_MAX_PARTS <= LR_P14S_MAX_PARTS, "part_row0 holds either layout's parts");
    d->rows = L.rows, d->cols = L.cols, d->nparts = L.nparts, d->bytes = L.img_bytes;
    for (int i = 0; i <= L.nparts; i++) d->part_row0[i] = L.part_row0[i];
    d->geom = lr_gemv_leech_p14_default_geom(L.rows, L.cols);
    lr_jit_spec spec;
    if (!rc) rc = lr_gemv_leech_p14_spec(&spec, &d->g, L.rows, L.cols, L.nentries, d->geom, lr_cu_smem_budget());
    if (!rc) rc = lr_jit_get(&spec, &d->fn);
    if (!rc) rc = lr_cu_alloc(&d->img, L.img_bytes);
    if (!rc) rc = lr_cu_h2d(d->img, L.img, L.img_bytes);
    if (!rc) {
        d->w = d->img;
        d->tab = d->img + L.off_tab;
        d->scale = d->img + L.off_scale;
        d->tail = L.tail ? d->img + L.off_tail : d->img; /* never read without a tail */
    }
    lr_p14_free(&L);
    return rc;
}

static size_t al256(size_t n) { return (n + 255) / 256 * 256; }

/* Segments | class tables | row scales | tail | exc_ptr | exc_col | exc_dw,
 * each 256-aligned, in one device allocation, each copied straight from the
 * unfolded layout (no host staging image). */
static int upload_p14s(lr_leech_dev *d, const lr_tensor_view *const *parts, int nparts, int nthreads,
                       const lr_leech_ends *ends)
{
    lr_p14s L;
    int rc = d->swiglu ? lr_p14s_unfold_views_pair(parts, nthreads, &L) : lr_p14s_unfold_views(parts, nparts, nthreads, &L);
    if (rc) return rc;
    d->rows = L.rows, d->cols = L.cols, d->nparts = L.nparts;
    for (int i = 0; i <= L.nparts; i++) d->part_row0[i] = L.part_row0[i];
    if (d->layout == LR_LEECH_DEV_P14S3)
        d->geom = d->swiglu ? lr_gemv_leech_p14s3_default_geom_swiglu(L.rows, L.cols)
                            : lr_gemv_leech_p14s3_default_geom(L.rows, L.cols);
    else
        d->geom = d->swiglu ? lr_gemv_leech_p14s_default_geom_swiglu(L.rows, L.cols)
                            : lr_gemv_leech_p14s_default_geom(L.rows, L.cols);
    /* (Planes14S with LEECHRT_GEMV_C3=1 or a c3 tuning row holds the 3-bit form too) */
    if (d->geom.c3) d->layout = LR_LEECH_DEV_P14S3;
    if (ends) d->geom.ends = *ends;
    /* (the 3-bit form's class table has the mirrors too: p14s_c3.h) */
    d->ntab = L.nentries;
    if (d->geom.c3) rc = lr_p14s_c3_entries(L.max_shell, L.gain_bits, L.nentries, L.ntabs, &d->ntab);
    lr_jit_spec spec;
    if (!rc)
        rc = lr_gemv_leech_p14s_spec_fit(&spec, &d->g, L.rows, L.cols, d->ntab, &d->geom, lr_cu_smem_budget(), d->swiglu);
    if (!rc) rc = lr_jit_get(&spec, &d->fn);
    if (!rc) d->trig = (int)lr_jit_spec_get(&spec, "trig", 0);
    if (!rc) d->mode = (lr_jit_spec_get(&spec, "norm", 0) != 0) | (lr_jit_spec_get(&spec, "res", 0) != 0) << 1;
    /* the int8 mode reads the layout's int8 form (converted in place: L is
     * only uploaded from here on), or the 3-bit form (its own segments,
     * table and exception lists; L's row scales and tail) */
    lr_p14s_c3 F;
    memset(&F, 0, sizeof F);
    if (!rc && d->geom.c3) rc = lr_p14s_c3_form(&L, nthreads, &F);
    else if (!rc && d->geom.i8) rc = lr_p14s_i8_form(&L, L.data, L.tab);
    const int c3 = !rc && d->geom.c3;
    const uint8_t *data = c3 ? F.data : L.data, *tab = c3 ? F.tab : L.tab;
    const uint32_t *exc_ptr = c3 ? F.exc_ptr : L.exc_ptr, *exc_col = c3 ? F.exc_col : L.exc_col;
    const float *exc_dw = c3 ? F.exc_dw : L.exc_dw;
    const size_t bytes = c3 ? F.bytes : L.bytes;
    size_t n_tab = (size_t)(c3 ? F.nentries : L.nentries) * 16, n_scale = sizeof(float) * (size_t)L.rg * 16,
           n_tail = (size_t)L.rows * L.tail * 2, n_ptr = sizeof(uint32_t) * ((size_t)L.rows + 1),
           n_exc = (size_t)(c3 ? F.nexc : L.nexc) * 4;
    size_t o_tab = al256(bytes), o_scale = o_tab + al256(n_tab), o_tail = o_scale + al256(n_scale),
           o_ptr = o_tail + al256(n_tail), o_col = o_ptr + al256(n_ptr), o_dw = o_col + al256(n_exc ? n_exc : 4);
    d->bytes = o_dw + al256(n_exc ? n_exc : 4);
    if (!rc) rc = lr_cu_alloc(&d->img, d->bytes);
    /* an empty tail or exception list is never read: lr_cu_h2d copies nothing for 0 bytes */
    if (!rc) rc = lr_cu_h2d(d->img, data, bytes);
    if (!rc) rc = lr_cu_h2d(d->img + o_tab, tab, n_tab);
    if (!rc) rc = lr_cu_h2d(d->img + o_scale, L.row_scale, n_scale);
    if (!rc && n_tail) rc = lr_cu_h2d(d->img + o_tail, L.tail_f16, n_tail);
    if (!rc) rc = lr_cu_h2d(d->img + o_ptr, exc_ptr, n_ptr);
    if (!rc && n_exc) rc = lr_cu_h2d(d->img + o_col, exc_col, n_exc);
    if (!rc && n_exc) rc = lr_cu_h2d(d->img + o_dw, exc_dw, n_exc);
    if (!rc) {
        d->w = d->img, d->tab = d->img + o_tab, d->scale = d->img + o_scale;
        d->tail = d->img + o_tail, d->exc_ptr = d->img + o_ptr, d->exc_col = d->img + o_col, d->exc_dw = d->img + o_dw;
    }
    lr_p14s_c3_free(&F);
    lr_p14s_free(&L);
    return rc;
}

int lr_leech_dev_default_layout(int rows, int cols)
{
    int t[LR_TUNE_KNOBS];
    return lr_tuning_lookup("leech_p14s3", rows, cols, t)  ? LR_LEECH_DEV_P14S3
           : lr_tuning_lookup("leech_p14s", rows, cols, t) ? LR_LEECH_DEV_P14S
                                                           : LR_LEECH_DEV_P14;
}

static int upload(const lr_tensor_view *const *parts, int nparts, int nthreads, int layout, int swiglu,
                  const lr_leech_ends *ends, lr_leech_dev **out)
{
    *out = NULL;
    if (layout == LR_LEECH_DEV_DEFAULT && nparts >= 1) {
        long long rows = 0;
        for (int i = 0; i < nparts; i++) rows += (long long)parts[i]->rows;
        layout = lr_leech_dev_default_layout(rows > (1 << 24) ? 1 << 24 : (int)rows, (int)parts[0]->cols);
    }
    if (!lr_leech_dev_layout_name(layout)) return LR_FAIL(LR_EINVAL, "leech dev: unknown layout %d", layout);
    if (swiglu && layout == LR_LEECH_DEV_P14)
        return LR_FAIL(LR_EINVAL, "leech dev: the SwiGLU pair needs planes14s or planes14s3, not planes14 (%s)",
                       parts[0]->name);
    lr_leech_dev *d = calloc(1, sizeof *d);
    if (!d) return LR_FAIL(LR_ENOMEM, "leech dev: out of memory");
    d->layout = layout, d->swiglu = swiglu;
    d->rot_rc = lr_p14_views_rotation(parts, nparts, &d->rot_kind, &d->rot_seed);
    if (d->rot_rc) snprintf(d->rot_msg, sizeof d->rot_msg, "%s", lr_errmsg()), lr_clear_error();
    int rc = layout == LR_LEECH_DEV_P14 ? upload_p14(d, parts, nparts, nthreads) : upload_p14s(d, parts, nparts, nthreads, ends);
    if (rc) {
        lr_leech_dev_free(d);
        return lr_wrap(rc, "leech dev (%s%s): %d tensors starting with %s", lr_leech_dev_layout_name(layout),
                       swiglu ? ", SwiGLU" : "", nparts, parts[0]->name);
    }
    *out = d;
    return LR_OK;
}

int lr_leech_dev_upload(const lr_tensor_view *const *parts, int nparts, int nthreads, int layout,
                        const lr_leech_ends *ends, lr_leech_dev **out)
{
    return upload(parts, nparts, nthreads, layout, 0, ends, out);
}

int lr_leech_dev_upload_swiglu(const lr_tensor_view *const gate_up[2], int nthreads, int layout,
                               const lr_leech_ends *ends, lr_leech_dev **out)
{
    return upload(gate_up, 2, nthreads, layout, 1, ends, out);
}


int lr_leech_dev_gemv(const lr_leech_dev *m, CUdeviceptr x, CUdeviceptr y, CUstream s)
{
    CUdeviceptr w = m->w, tab = m->tab, scale = m->scale, tail = m->tail;
    CUdeviceptr ep = m->exc_ptr, ec = m->exc_col, ed = m->exc_dw;
    int rows = m->rows, cols = m->cols;
    if (m->layout != LR_LEECH_DEV_P14) {
        void *args[] = { &w, &tab, &scale, &tail, &ep, &ec, &ed, &x, &y, &rows, &cols };
        return lr_cu_launch_ex(m->fn, m->g.grid, m->g.block, m->g.cluster, m->g.smem, s, args);
    }
    void *args[] = { &w, &tab, &scale, &tail, &x, &y, &rows, &cols };
    return lr_cu_launch(m->fn, m->g.grid, m->g.block, m->g.smem, s, args);
}

int lr_leech_dev_enable_rot(lr_leech_dev *m)
{
    if (m->fn_rot) return LR_OK;
    if (m->layout != LR_LEECH_DEV_P14S || m->swiglu || m->geom.i8)
        return LR_FAIL(LR_EUNSUPPORTED, "leech dev: the rotation in the prologue is Planes14S's plain GEMV (f16 form)");
    lr_jit_spec spec;
    lr_launch_geom g;
    int rc = lr_gemv_leech_p14s_spec_rot(&spec, &g, m->rows, m->cols, m->ntab, m->geom, lr_cu_smem_budget());
    CUfunction fn = NULL;
    if (!rc) rc = lr_jit_get(&spec, &fn);
    if (!rc) m->fn_rot = fn, m->g_rot = g;
    return rc;
}

int lr_leech_dev_gemv_rot(const lr_leech_dev *m, CUdeviceptr x, CUdeviceptr y, CUdeviceptr dbits, CUdeviceptr q,
                          CUstream s)
{
    if (!m->fn_rot) return LR_FAIL(LR_EINVAL, "leech dev: the rotation in the prologue is not enabled");
    CUdeviceptr w = m->w, tab = m->tab, scale = m->scale, tail = m->tail;
    CUdeviceptr ep = m->exc_ptr, ec = m->exc_col, ed = m->exc_dw;
    int rows = m->rows, cols = m->cols;
    void *args[] = { &w, &tab, &scale, &tail, &ep, &ec, &ed, &x, &y, &rows, &cols, &dbits, &q };
    return lr_cu_launch_ex(m->fn_rot, m->g_rot.grid, m->g_rot.block, m->g_rot.cluster, m->g_rot.smem, s, args);
}

int lr_leech_dev_enable_trot(lr_leech_dev *m, int slab, int unroll)
{
    if (m->fn_trot) return LR_OK;
    if (!m->swiglu) return LR_FAIL(LR_EUNSUPPORTED, "leech dev: the rotation at the end is the SwiGLU pair's");
    const int n = m->rows / 2;
    int mm, k;
    if (lr_rot_factor(n, &mm, &k)) {
        lr_clear_error();
        return LR_FAIL(LR_EUNSUPPORTED, "leech dev: width %d is not served by the rotation", n);
    }
    if (slab < 4 || slab > mm || mm % slab || (slab & (slab - 1)) || unroll < 1 || (mm / slab) % unroll)
        return LR_FAIL(LR_EINVAL, "leech dev: slab %d / unroll %d does not divide width %d's %d columns", slab, unroll, n, mm);
    lr_jit_spec spec;
    lr_launch_geom g;
    lr_leech_geom geom = m->geom;
    int rc = lr_gemv_leech_p14s_spec_fit(&spec, &g, m->rows, m->cols, m->ntab, &geom, lr_cu_smem_budget(), 1);
    if (rc) return rc;
    /* the last m / slab CTAs rotate one slab each: the grid must have them */
    if (g.grid.x < (unsigned)(mm / slab))
        return LR_FAIL(LR_EUNSUPPORTED, "leech dev: a grid of %u CTAs for %d slabs", g.grid.x, mm / slab);
    const unsigned need = 16 + 4u * (unsigned)(k * slab + k * k);
    if (need > (unsigned)lr_cu_smem_budget())
        return LR_FAIL(LR_ERANGE, "leech dev: the rotation at the end needs %u bytes of shared memory", need);
    if (g.smem < need) g.smem = need;
    lr_jit_spec_set(&spec, "trot", slab);
    lr_jit_spec_set(&spec, "trotu", unroll);
    CUfunction fn = NULL;
    rc = lr_jit_get(&spec, &fn);
    if (!rc) m->fn_trot = fn, m->g_trot = g;
    return rc;
}

int lr_leech_dev_gemv_trot(const lr_leech_dev *m, CUdeviceptr x, CUdeviceptr y, CUdeviceptr yrot, CUdeviceptr dbits,
                           CUdeviceptr q, CUdeviceptr cnt, CUstream s)
{
    if (!m->fn_trot) return LR_FAIL(LR_EINVAL, "leech dev: the rotation at the end is not enabled");
    CUdeviceptr w = m->w, tab = m->tab, scale = m->scale, tail = m->tail;
    CUdeviceptr ep = m->exc_ptr, ec = m->exc_col, ed = m->exc_dw;
    int rows = m->rows, cols = m->cols;
    void *args[] = { &w, &tab, &scale, &tail, &ep, &ec, &ed, &x, &y, &rows, &cols, &yrot, &dbits, &q, &cnt };
    return lr_cu_launch_ex(m->fn_trot, m->g_trot.grid, m->g_trot.block, m->g_trot.cluster, m->g_trot.smem, s, args);
}

size_t lr_leech_dev_bytes(const lr_leech_dev *m) { return m->bytes; }
int lr_leech_dev_rows(const lr_leech_dev *m) { return m->rows; }
int lr_leech_dev_cols(const lr_leech_dev *m) { return m->cols; }
int lr_leech_dev_layout(const lr_leech_dev *m) { return m->layout; }
int lr_leech_dev_trig(const lr_leech_dev *m) { return m->trig; }
int lr_leech_dev_mode(const lr_leech_dev *m) { return m->mode; }
lr_leech_geom lr_leech_dev_geom(const lr_leech_dev *m) { return m->geom; }

int lr_leech_dev_part_row(const lr_leech_dev *m, int i)
{
    return i < 0 ? 0 : i > m->nparts ? m->rows : m->part_row0[i];
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
