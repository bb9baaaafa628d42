#include "layouts/leech_vram/p14s_layout.h"

#include "layouts/leech_vram/p14_layout.h"
#include "util/err.h"

#include <string.h>

static int unfold_views(const lr_tensor_view *const *views, int nviews, int nthreads, int pair, lr_p14s *L)
{
    memset(L, 0, sizeof *L);
    lr_leech_matrix ms[LR_P14S_MAX_PARTS];
    const lr_leech_matrix *ps[LR_P14S_MAX_PARTS];
    int rc = lr_leech_views_to_matrices(views, nviews, LR_P14S_MAX_PARTS, "planes14s", ms);
    if (rc) return rc;
    for (int i = 0; i < nviews; i++) ps[i] = &ms[i];
    rc = pair ? lr_p14s_unfold_pair(ps, nthreads, L) : lr_p14s_unfold_parts(ps, nviews, nthreads, L);
    return rc ? lr_wrap(rc, "planes14s: tensor%s %s%s", nviews > 1 ? "s" : "", views[0]->name, nviews > 1 ? "..." : "")
              : LR_OK;
}

int lr_p14s_unfold_views(const lr_tensor_view *const *views, int nviews, int nthreads, lr_p14s *L)
{
    return unfold_views(views, nviews, nthreads, 0, L);
}

int lr_p14s_unfold_views_pair(const lr_tensor_view *const views[2], int nthreads, lr_p14s *L)
{
    return unfold_views(views, 2, nthreads, 1, L);
}
