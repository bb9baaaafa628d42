/* Layer-0 projections of an artifact as a Leech arm's weights
 * (kernels/leech_arm_model.h). */
#include "kernels/leech_arm_model.h"

#include "layouts/leech_vram/p14s_layout.h"
#include "loader/model.h"
#include "util/err.h"

#include <stdio.h>
#include <string.h>

/* the fused groups in the order a shape is matched */
static const char *const k_groups[][4] = {
    { "attn_q", "attn_k", "attn_v", NULL }, { "attn_output", NULL }, { "ffn_gate", "ffn_up", NULL },
    { "ffn_down", NULL },                   { "attn_q", NULL },      { "attn_k", NULL },
    { "attn_v", NULL },                     { "ffn_gate", NULL },    { "ffn_up", NULL },
};

/* The group's views if every projection is there with cols columns and the
 * rows add up to rows; returns how many (0: not this group). */
static int match(const lr_model *m, const char *const *roles, int rows, int cols, const lr_tensor_view *v[4])
{
    long long sum = 0;
    int n = 0;
    for (; roles[n]; n++) {
        v[n] = lr_model_layer_tensor(m, 0, roles[n]);
        if (!v[n] || v[n]->ndim != 2 || (long long)v[n]->dims[1] != cols) return 0;
        sum += (long long)v[n]->dims[0];
    }
    return sum == rows ? n : 0;
}

int lr_leech_arm_model_p14s(const char *path, int rows, int cols, int pair, lr_p14s *L)
{
    memset(L, 0, sizeof *L);
    lr_model *m;
    /* the structure only: the data pass would read every tensor of the file
     * (GBs, at every sweep candidate); the projections used are verified below */
    int rc = lr_model_open(path, LR_MODEL_SKIP_DATA, &m);
    if (rc) return rc;
    const lr_tensor_view *v[4];
    int n = 0;
    if (pair) {
        const char *const gu[] = { "ffn_gate", "ffn_up", NULL };
        n = match(m, gu, rows, cols, v) == 2 && v[0]->dims[0] == v[1]->dims[0] ? 2 : 0;
    } else {
        for (size_t g = 0; g < sizeof k_groups / sizeof k_groups[0] && !n; g++) n = match(m, k_groups[g], rows, cols, v);
    }
    if (!n) {
        rc = LR_FAIL(LR_EINVAL, "%s: layer 0 has no %sprojection of %d x %d", path, pair ? "gate|up pair " : "", rows, cols);
    } else {
        for (int i = 0; i < n && !rc; i++)
            if (v[i]->codec != LR_CODEC_LEECH)
                rc = LR_FAIL(LR_EINVAL, "%s: %s is not Leech-coded (a Leech arm needs Leech weights)", path, v[i]->name);
            else if ((rc = lr_model_verify_tensor(m, v[i])))
                rc = lr_wrap(rc, "%s", path);
        if (!rc && (rc = pair ? lr_p14s_unfold_views_pair(v, 0, L) : lr_p14s_unfold_views(v, n, 0, L)))
            rc = lr_wrap(rc, "%s", path);
    }
    lr_model_close(m);
    return rc;
}
