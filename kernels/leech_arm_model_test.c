/* A Leech arm's weights from a model artifact (kernels/leech_arm_model.h):
 * every fused shape of a synthetic model's layer 0 finds its projections and
 * unfolds byte for byte as the engine's upload does (lr_p14s_unfold_views,
 * _pair); shapes it lacks, missing files, f16 projections and a corrupted
 * projection are refused with the file named. CPU only. */
#include "kernels/leech_arm_model.h"

#include "layouts/leech_vram/p14s_layout.h"
#include "loader/model.h"
#include "loader/synthetic.h"
#include "test/t.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[64], g_leech[128], g_f16[128];

static int make_models(void)
{
    if (g_dir[0]) return 0;
    snprintf(g_dir, sizeof g_dir, "/tmp/lr-arm-model.XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    snprintf(g_leech, sizeof g_leech, "%s/tiny.lrt", g_dir);
    snprintf(g_f16, sizeof g_f16, "%s/tiny-f16.lrt", g_dir);
    lr_model_config c;
    if (lr_synth_config("tiny", &c)) return -1;
    lr_synth_opts o = { .seed = 5, .nthreads = 2, .gain_bits = 1 };
    if (lr_synth_write(g_leech, &c, &o)) return -1;
    o.proj_f16 = 1;
    return lr_synth_write(g_f16, &c, &o) ? -1 : 0;
}

static int same(const lr_p14s *a, const lr_p14s *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->bytes == b->bytes && a->nexc == b->nexc &&
           a->nentries == b->nentries && a->pair == b->pair && !memcmp(a->data, b->data, a->bytes) &&
           !memcmp(a->tab, b->tab, (size_t)a->nentries * 16) &&
           !memcmp(a->exc_ptr, b->exc_ptr, sizeof(uint32_t) * ((size_t)a->rows + 1)) &&
           (!a->nexc || (!memcmp(a->exc_col, b->exc_col, sizeof(uint32_t) * a->nexc) &&
                         !memcmp(a->exc_dw, b->exc_dw, sizeof(float) * a->nexc))) &&
           !memcmp(a->row_scale, b->row_scale, sizeof(float) * (size_t)a->rg * 16);
}

static int test_shapes_match_the_engines_unfold(void)
{
    T_ASSERT(make_models() == 0, "synthetic models: %s", lr_errmsg());
    lr_model *m;
    T_OK(lr_model_open(g_leech, 0, &m));
    const struct { const char *roles[3]; int n, pair; } g[] = {
        { { "attn_q", "attn_k", "attn_v" }, 3, 0 }, { { "attn_output" }, 1, 0 }, { { "ffn_gate", "ffn_up" }, 2, 0 },
        { { "ffn_down" }, 1, 0 }, { { "ffn_gate", "ffn_up" }, 2, 1 }, { { "ffn_gate" }, 1, 0 },
        { { "attn_k" }, 1, 0 }, // (q alone has o's shape, v k's: the first in the documented order is taken)
    };
    int rc = T_PASS;
    for (size_t i = 0; i < sizeof g / sizeof g[0] && rc == T_PASS; i++) {
        const lr_tensor_view *v[3];
        int rows = 0;
        for (int k = 0; k < g[i].n; k++) v[k] = lr_model_layer_tensor(m, 0, g[i].roles[k]), rows += (int)v[k]->rows;
        lr_p14s want, got;
        T_OK(g[i].pair ? lr_p14s_unfold_views_pair(v, 1, &want) : lr_p14s_unfold_views(v, g[i].n, 1, &want));
        int r = lr_leech_arm_model_p14s(g_leech, rows, (int)v[0]->cols, g[i].pair, &got);
        printf("    %s%s: %d x %d, %u exceptions\n", g[i].roles[0], g[i].pair ? " (pair)" : "", rows, (int)v[0]->cols,
               r ? 0 : got.nexc);
        if (r) printf("    error: %s\n", lr_errmsg()), rc = T_FAIL;
        else if (!same(&want, &got)) printf("    %s: not the engine's layout\n", g[i].roles[0]), rc = T_FAIL;
        lr_p14s_free(&want);
        if (!r) lr_p14s_free(&got);
    }
    lr_model_close(m);
    return rc;
}

static int test_refusals_name_the_file(void)
{
    T_ASSERT(make_models() == 0, "synthetic models: %s", lr_errmsg());
    lr_p14s L;
    T_ASSERT(lr_leech_arm_model_p14s(g_leech, 999, 256, 0, &L) == LR_EINVAL && strstr(lr_errmsg(), g_leech) &&
                 strstr(lr_errmsg(), "999 x 256"),
             "a shape the model lacks: %s", lr_errmsg());
    /* q|k|v's shape is no gate|up pair */
    T_ASSERT(lr_leech_arm_model_p14s(g_leech, 512, 256, 1, &L) == LR_EINVAL && strstr(lr_errmsg(), "pair"),
             "q|k|v as a pair: %s", lr_errmsg());
    T_ASSERT(lr_leech_arm_model_p14s(g_f16, 256, 256, 0, &L) == LR_EINVAL && strstr(lr_errmsg(), g_f16) &&
                 strstr(lr_errmsg(), "not Leech"),
             "f16 projections: %s", lr_errmsg());
    /* a payload byte flipped in the projection used: its checksum refuses it */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/corrupt.lrt", g_dir);
    {
        lr_model *m;
        T_OK(lr_model_open(g_leech, 0, &m));
        const uint64_t at = lr_model_layer_tensor(m, 0, "ffn_down")->file_offset + 100;
        lr_model_close(m);
        FILE *in = fopen(g_leech, "rb"), *out = fopen(bad, "wb");
        T_ASSERT(in && out, "copy %s", g_leech);
        int ch;
        for (uint64_t i = 0; (ch = fgetc(in)) != EOF; i++) fputc(i == at ? ch ^ 0x40 : ch, out);
        fclose(in), fclose(out);
    }
    int rc = lr_leech_arm_model_p14s(bad, 256, 768, 0, &L);
    unlink(bad);
    T_ASSERT(rc != LR_OK && strstr(lr_errmsg(), "corrupt.lrt") && strstr(lr_errmsg(), "ffn_down"),
             "a corrupted projection: %s", lr_errmsg());
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.lrt", g_dir);
    T_ASSERT(lr_leech_arm_model_p14s(missing, 256, 256, 0, &L) != LR_OK && strstr(lr_errmsg(), "none.lrt"),
             "a missing file: %s", lr_errmsg());
    return T_PASS;
}

static int cleanup(void)
{
    if (g_dir[0]) {
        unlink(g_leech), unlink(g_f16);
        rmdir(g_dir);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_shapes_match_the_engines_unfold), T_CASE(test_refusals_name_the_file), T_CASE(cleanup))
