#include "layouts/leech_vram/p14_layout.h"

#include "layouts/leech_vram/par.h"
#include "util/err.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int lr_leech_views_to_matrices(const lr_tensor_view *const *views, int n, int max, const char *who, lr_leech_matrix *ms)
{
    if (n < 1 || n > max) return LR_FAIL(LR_EINVAL, "%s: %d tensors (1..%d)", who, n, max);
    for (int i = 0; i < n; i++) {
        const lr_tensor_view *v = views[i], *v0 = views[0];
        if (v->codec != LR_CODEC_LEECH || v->ndim != 2)
            return LR_FAIL(LR_EINVAL, "%s: tensor %s is %s with %d dims, not a Leech matrix", who, v->name,
                           lr_codec_name(v->codec), v->ndim);
        if (v->u.leech.gain_bits != v0->u.leech.gain_bits)
            return LR_FAIL(LR_EINVAL,
                           "%s: tensors %s (%d gain bits) and %s (%d gain bits) cannot share one layout: "
                           "gain widths differ",
                           who, v0->name, v0->u.leech.gain_bits, v->name, v->u.leech.gain_bits);
        if (v->cols != v0->cols)
            return LR_FAIL(LR_EINVAL, "%s: tensors %s (%llu columns) and %s (%llu columns): only rows concatenate", who,
                           v0->name, (unsigned long long)v0->cols, v->name, (unsigned long long)v->cols);
        if (v->u.leech.max_shell != v0->u.leech.max_shell)
            return LR_FAIL(LR_EINVAL, "%s: tensors %s (L24(%d)) and %s (L24(%d)): balls differ", who, v0->name,
                           v0->u.leech.max_shell, v->name, v->u.leech.max_shell);
        int rc = lr_tensor_leech_matrix(v, &ms[i]);
        if (rc) return rc;
    }
    return LR_OK;
}

int lr_p14_unfold_views(const lr_tensor_view *const *views, int nviews, int nthreads, lr_p14 *L)
{
    memset(L, 0, sizeof *L);
    lr_leech_matrix ms[LR_P14_MAX_PARTS];
    const lr_leech_matrix *ps[LR_P14_MAX_PARTS];
    int rc = lr_leech_views_to_matrices(views, nviews, LR_P14_MAX_PARTS, "planes14", ms);
    if (rc) return rc;
    for (int i = 0; i < nviews; i++) ps[i] = &ms[i];
    rc = lr_p14_unfold_parts(ps, nviews, nthreads, L);
    return rc ? lr_wrap(rc, "planes14: tensor%s %s%s", nviews > 1 ? "s" : "", views[0]->name, nviews > 1 ? "..." : "")
              : LR_OK;
}

int lr_p14_views_rotation(const lr_tensor_view *const *views, int nviews, int *kind, uint64_t *seed)
{
    if (nviews < 1) return LR_FAIL(LR_EINVAL, "planes14: no tensors");
    const lr_leech_params *p0 = &views[0]->u.leech;
    for (int i = 1; i < nviews; i++) {
        const lr_leech_params *p = &views[i]->u.leech;
        if (p->rot_kind != p0->rot_kind || (p->rot_kind != LR_ROT_NONE && p->rot_seed != p0->rot_seed))
            return LR_FAIL(LR_EINVAL,
                           "tensors %s (rotation %d, seed %016llx) and %s (rotation %d, seed %016llx) rotate their "
                           "input differently: one x cannot feed both",
                           views[0]->name, p0->rot_kind, (unsigned long long)p0->rot_seed, views[i]->name, p->rot_kind,
                           (unsigned long long)p->rot_seed);
    }
    *kind = p0->rot_kind;
    *seed = p0->rot_seed;
    return LR_OK;
}

/* ---- the loader layout ---- */

static int supports(const lr_tensor_view *t)
{
    return t->codec == LR_CODEC_LEECH && t->ndim == 2 && t->cols >= 24 && t->rows >= 1 && t->rows <= (1 << 24) &&
           t->cols <= (1 << 24) && (t->u.leech.max_shell == 12 || t->u.leech.max_shell == 13) &&
           t->u.leech.gain_bits >= 0 && t->u.leech.gain_bits <= 2;
}

static int plan(const lr_tensor_view *t, lr_layout_plan *p)
{
    memset(p, 0, sizeof *p);
    lr_leech_matrix m;
    int rc = lr_leech_views_to_matrices(&t, 1, LR_P14_MAX_PARTS, "planes14", &m);
    if (rc) return rc;
    lr_p14 *L = malloc(sizeof *L);
    if (!L) return LR_FAIL(LR_ENOMEM, "planes14: out of memory");
    const lr_leech_matrix *ps[1] = { &m };
    if ((rc = lr_p14_plan(ps, 1, L))) { free(L); return rc; }
    p->bytes = L->img_bytes;
    p->units = (uint64_t)L->rg;
    p->nparts = 4;
    p->parts[0] = (lr_layout_part){ "records", 0, L->bytes };
    p->parts[1] = (lr_layout_part){ "ctab", L->off_tab, (size_t)L->nentries * 16 };
    p->parts[2] = (lr_layout_part){ "scale", L->off_scale, (size_t)L->rg * LR_P14_ROWS * sizeof(float) };
    p->parts[3] = (lr_layout_part){ "tail", L->off_tail, (size_t)L->rows * L->tail * 2 };
    p->state = L;
    return LR_OK;
}

static int unfold(const lr_tensor_view *t, const lr_layout_plan *p, uint64_t u0, uint64_t u1, void *dst)
{
    if (!dst) return LR_OK;
    lr_leech_matrix m;
    int rc = lr_leech_views_to_matrices(&t, 1, LR_P14_MAX_PARTS, "planes14", &m);
    if (rc) return rc;
    lr_p14 L = *(const lr_p14 *)p->state;
    lr_p14_bind(&L, dst);
    const lr_leech_matrix *ps[1] = { &m };
    return lr_p14_fill(ps, &L, (int)u0, (int)u1);
}

static void release(lr_layout_plan *p)
{
    free(p->state);
    p->state = NULL;
}

const lr_layout lr_layout_planes14 = { "planes14", supports, plan, unfold, NULL, release };

static pthread_mutex_t g_reg = PTHREAD_MUTEX_INITIALIZER;

int lr_leech_vram_register_layouts(void)
{
    pthread_mutex_lock(&g_reg);
    int rc = lr_layout_find(lr_layout_planes14.name) ? LR_OK : lr_layout_register(&lr_layout_planes14);
    pthread_mutex_unlock(&g_reg);
    return rc;
}
