/* The calibration pass (calib.c) against the CPU reference engine: the
 * Hessian of layer 1's attention input equals the one built from the
 * engine's layer-0 output (so the whole layer-0 forward -- attention with
 * GQA, RoPE, Qwen3's q/k norms, the FFN -- matches); handed-back weights
 * change what follows and only what follows; out-of-order calls fail; and
 * an import with GPTQ on a tiny model runs end to end and writes a valid
 * artifact. */
#include "loader/import/calib.h"
#include "loader/import/import.h"
#include "loader/import/import_testlib.h"
#include "loader/model.h"
#include "rt/engine_cpu.h"
#include "test/t.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEQ 20
#define NSEQ 3

typedef struct {
    float *x; /* [NSEQ*SEQ][hidden]: layer 0's output per token */
    int base, h;
} trace_ctx;

static void on_layer(void *user, int layer, int pos, const float *x, int n)
{
    trace_ctx *t = user;
    if (layer == 0) memcpy(t->x + (size_t)(t->base + pos) * t->h, x, (size_t)n * sizeof *x);
}

static int check_arch(const char *arch)
{
    char dir[256], sub[300], out[400];
    tl_tmpdir(dir, sizeof dir, "calib");
    T_ASSERT(dir[0], "mkdtemp");
    lr_model_config cfg = tm_config(arch, 1);
    tmodel m;
    tm_make(&m, &cfg, 5);
    snprintf(sub, sizeof sub, "%s/m", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F32", 1, NULL) == 0, "write");
    lr_src *s;
    T_OK(lr_src_open_hf(sub, &s));
    /* The reference: an all-f16 artifact (the test weights are f16-exact). */
    snprintf(out, sizeof out, "%s/f16.lrt", dir);
    lr_import_opts o = { .keep_f16 = 1, .embed_f16 = 1, .seed = 1, .nthreads = 1 };
    T_OK(lr_import_write(s, out, &o, NULL));
    int32_t ids[NSEQ * SEQ];
    lr_rng r;
    lr_rng_seed(&r, 9);
    for (int i = 0; i < NSEQ * SEQ; i++) ids[i] = (int32_t)lr_rng_below(&r, cfg.vocab);
    lr_model *md;
    T_OK(lr_model_open(out, 0, &md));
    lr_engine *e;
    lr_engine_opts eo = { .nthreads = 1 };
    T_OK(lr_engine_cpu_open(md, &eo, &e));
    int h = (int)cfg.hidden;
    trace_ctx tc = { malloc((size_t)NSEQ * SEQ * h * sizeof(float)), 0, h };
    e->on_layer = on_layer, e->on_layer_user = &tc;
    for (int q = 0; q < NSEQ; q++) {
        T_OK(e->ops->reset(e));
        tc.base = q * SEQ;
        const float *logits;
        for (int i = 0; i < SEQ; i++) T_OK(e->ops->step(e, ids[q * SEQ + i], &logits));
    }
    e->ops->close(e);
    lr_model_close(md);
    /* H of layer 1's attention input from the trace. */
    const float *nw = tm_find(&m, "blk.1.attn_norm")->v;
    double *ref = calloc((size_t)h * h, sizeof *ref), *xn = malloc((size_t)h * sizeof *xn);
    for (int t = 0; t < NSEQ * SEQ; t++) {
        const float *x = tc.x + (size_t)t * h;
        double ss = 0;
        for (int i = 0; i < h; i++) ss += (double)x[i] * x[i];
        double sc = 1.0 / sqrt(ss / h + cfg.norm_eps);
        for (int i = 0; i < h; i++) xn[i] = (double)(float)((double)x[i] * sc * nw[i]);
        for (int i = 0; i < h; i++)
            for (int k = 0; k < h; k++) ref[(size_t)i * h + k] += xn[i] * xn[k] / (NSEQ * SEQ);
    }
    lr_calib *c;
    T_OK(lr_calib_open_ids(s, &cfg, ids, NSEQ * SEQ, SEQ, 2, &c));
    T_ASSERT(lr_calib_tokens(c) == NSEQ * SEQ, "tokens");
    const double *H;
    int n;
    T_OK(lr_calib_hessian(c, 1, "attn_k", &H, &n));
    T_ASSERT(n == h, "width %d", n);
    double worst = 0, scale = 0;
    for (int i = 0; i < h * h; i++) {
        worst = fmax(worst, fabs(H[i] - ref[i]));
        scale = fmax(scale, fabs(ref[i]));
    }
    printf("    %s: layer-1 Hessian vs the engine: max |diff| %.3g of max %.3g\n", arch, worst, scale);
    T_ASSERT(worst < 1e-4 * scale, "%s: Hessian differs by %g (max %g)", arch, worst, scale);
    /* Asking for a passed stage, or handing back weights already used, fails. */
    T_ASSERT(lr_calib_hessian(c, 0, "ffn_down", &H, &n) == LR_EINVAL, "stage passed");
    float *W = calloc((size_t)h * h, sizeof *W);
    T_ASSERT(lr_calib_set_weights(c, 0, "attn_q", W) == LR_EINVAL, "late weights");
    T_OK(lr_calib_set_weights(c, 1, "attn_output", W)); /* not yet used: fine */
    lr_calib_close(c);

    /* Handed-back weights are what the pass uses: zero attn_v of layer 0
     * -> the attention output (o's input) is zero. */
    T_OK(lr_calib_open_ids(s, &cfg, ids, NSEQ * SEQ, SEQ, 2, &c));
    T_OK(lr_calib_hessian(c, 0, "attn_q", &H, &n));
    T_OK(lr_calib_set_weights(c, 0, "attn_v", W));
    T_OK(lr_calib_hessian(c, 0, "attn_output", &H, &n));
    double mx = 0;
    for (int i = 0; i < n * n; i++) mx = fmax(mx, fabs(H[i]));
    T_ASSERT(mx == 0, "attention output with v = 0: %g", mx);
    lr_calib_close(c);
    free(W), free(ref), free(xn), free(tc.x);
    lr_src_close(s);
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

static int test_forward_llama(void) { return check_arch("llama"); }
static int test_forward_qwen3(void) { return check_arch("qwen3"); }

/* The importer with GPTQ: a valid artifact, every projection Leech, and the
 * calibration tokens reported. */
static int test_import_gptq(void)
{
    char dir[256], sub[300], out[400], txt[400];
    tl_tmpdir(dir, sizeof dir, "gptqimp");
    T_ASSERT(dir[0], "mkdtemp");
    lr_model_config cfg = tm_config("qwen3", 0);
    tmodel m;
    tm_make(&m, &cfg, 6);
    snprintf(sub, sizeof sub, "%s/m", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F32", 1, NULL) == 0, "write");
    /* A byte-level tokenizer the calibration text can go through. */
    static const char tokjson[] = "{\"version\": \"1.0\", \"pre_tokenizer\": {\"type\": \"ByteLevel\", "
                                  "\"add_prefix_space\": false, \"use_regex\": true}, \"model\": {\"type\": \"BPE\", "
                                  "\"vocab\": {\"a\": 0, \"aa\": 1, \"aaa\": 2}, \"merges\": [\"a a\", \"aa a\"]}}";
    snprintf(txt, sizeof txt, "%s/tokenizer.json", sub);
    T_ASSERT(tl_write(txt, tokjson, sizeof tokjson - 1) == 0, "write tokenizer");
    snprintf(txt, sizeof txt, "%s/calib.txt", dir);
    char text[700];
    for (size_t i = 0; i < sizeof text; i++) text[i] = i % 7 == 6 ? ' ' : 'a'; /* words: "aaaaaa " */
    T_ASSERT(tl_write(txt, text, sizeof text) == 0, "write text");
    lr_src *s;
    T_OK(lr_src_open_hf(sub, &s));
    snprintf(out, sizeof out, "%s/g.lrt", dir);
    lr_import_opts o = { .gain_bits = 1, .seed = 1, .nthreads = 2, .gptq_calib = txt, .calib_tokens = 600 };
    lr_import_stats st;
    T_OK(lr_import_write(s, out, &o, &st));
    T_ASSERT(st.leech == 2 * 7 && st.calib_tokens > 1 && st.calib_tokens <= 600, "%d leech, %d tokens", st.leech,
             st.calib_tokens);
    lr_model *md;
    T_OK(lr_model_open(out, 0, &md));
    lr_model_close(md);
    /* A missing calibration file fails and leaves nothing behind. */
    snprintf(txt, sizeof txt, "%s/none.txt", dir);
    snprintf(out, sizeof out, "%s/h.lrt", dir);
    T_ASSERT(lr_import_write(s, out, &o, &st) != LR_OK && access(out, F_OK) != 0, "missing calibration text");
    lr_src_close(s);
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

T_MAIN(T_CASE(test_forward_llama), T_CASE(test_forward_qwen3), T_CASE(test_import_gptq))
