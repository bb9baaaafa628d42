#include "kernels/ops.h"
#include "kernels/rotation.h"
#include "util/args.h"
#include "util/err.h"
#include "util/half.h"
#include "util/setting.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* op_head_int8g's rows per warp (kernels/ops.h) */
#define HEAD_RPW 2

#define P(n, t) { n, t, 0, 0 }
#define B(n, e, d) { n, LR_T_PTR, e, d }

static void embed_mag(const int8_t *q, const uint16_t *sb, const int32_t *tok, float *out, int32_t hidden, int32_t group);
static void rmsnorm_mag(float *x, const float *y, const float *w, float *out, int32_t n, float eps);
static void rope_mag(float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc, const int32_t *pos,
                     int32_t n_heads, int32_t n_kv, int32_t head_dim, float eps, float theta);
static void attention_mag(const float *q, const uint16_t *kc, const uint16_t *vc, float *out, const int32_t *pos,
                          int32_t n_heads, int32_t n_kv, float scale, const uint32_t *odbits, const float *oq);
static void silu_mag(const float *gu, float *h, int32_t n);
static void rope_attention_mag(const float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc,
                               float *out, const int32_t *pos, const double *rope, int32_t n_heads, int32_t n_kv,
                               float eps, float theta, float scale, const uint32_t *odbits, const float *oq);
static void head_mag(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab, int32_t hidden);
static void head_mma_mag(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab,
                         int32_t hidden);

const lr_kernel_desc lr_op_embed_desc = {
    "op_embed_int8g", 6,
    { B("q", LR_E_I8, LR_IN), B("sb", LR_E_F16, LR_IN), B("tok", LR_E_I32, LR_IN), B("out", LR_E_F32, LR_OUT),
      P("hidden", LR_T_I32), P("group", LR_T_I32) },
    (lr_host_fn)lr_op_embed_host, (lr_host_fn)embed_mag,
};
const lr_kernel_desc lr_op_add_rmsnorm_desc = {
    "op_add_rmsnorm", 6,
    { B("x", LR_E_F32, LR_INOUT), B("y", LR_E_F32, LR_IN), B("w", LR_E_F32, LR_IN), B("out", LR_E_F32, LR_OUT),
      P("n", LR_T_I32), P("eps", LR_T_F32) },
    (lr_host_fn)lr_op_add_rmsnorm_host, (lr_host_fn)rmsnorm_mag,
};
const lr_kernel_desc lr_op_rope_kv_desc = {
    "op_rope_kv", 11,
    { B("qkv", LR_E_F32, LR_INOUT), B("qn", LR_E_F32, LR_IN), B("kn", LR_E_F32, LR_IN), B("kcache", LR_E_F16, LR_INOUT),
      B("vcache", LR_E_F16, LR_INOUT), B("pos", LR_E_I32, LR_IN), P("n_heads", LR_T_I32), P("n_kv", LR_T_I32),
      P("head_dim", LR_T_I32), P("eps", LR_T_F32), P("theta", LR_T_F32) },
    (lr_host_fn)lr_op_rope_kv_host, (lr_host_fn)rope_mag,
};
const lr_kernel_desc lr_op_attention_desc = {
    "op_attention", 10,
    { B("q", LR_E_F32, LR_IN), B("kcache", LR_E_F16, LR_IN), B("vcache", LR_E_F16, LR_IN), B("out", LR_E_F32, LR_OUT),
      B("pos", LR_E_I32, LR_IN), P("n_heads", LR_T_I32), P("n_kv", LR_T_I32), P("scale", LR_T_F32),
      B("odbits", LR_E_U32, LR_IN), B("oq", LR_E_F32, LR_IN) },
    (lr_host_fn)lr_op_attention_host, (lr_host_fn)attention_mag,
};
const lr_kernel_desc lr_op_rope_attention_desc = {
    "op_rope_attention", 15,
    { B("qkv", LR_E_F32, LR_IN), B("qn", LR_E_F32, LR_IN), B("kn", LR_E_F32, LR_IN), B("kcache", LR_E_F16, LR_INOUT),
      B("vcache", LR_E_F16, LR_INOUT), B("out", LR_E_F32, LR_OUT), B("pos", LR_E_I32, LR_IN),
      B("rope", LR_E_F64, LR_IN), P("n_heads", LR_T_I32),
      P("n_kv", LR_T_I32), P("eps", LR_T_F32), P("theta", LR_T_F32), P("scale", LR_T_F32),
      B("odbits", LR_E_U32, LR_IN), B("oq", LR_E_F32, LR_IN) },
    (lr_host_fn)lr_op_rope_attention_host, (lr_host_fn)rope_attention_mag,
};
const lr_kernel_desc lr_op_silu_mul_desc = {
    "op_silu_mul", 3, { B("gu", LR_E_F32, LR_IN), B("h", LR_E_F32, LR_OUT), P("n", LR_T_I32) },
    (lr_host_fn)lr_op_silu_mul_host, (lr_host_fn)silu_mag,
};
const lr_kernel_desc lr_op_head_desc = {
    "op_head_int8g", 6,
    { B("q", LR_E_I8, LR_IN), B("sb", LR_E_F16, LR_IN), B("x", LR_E_F32, LR_IN), B("logits", LR_E_F32, LR_OUT),
      P("vocab", LR_T_I32), P("hidden", LR_T_I32) },
    (lr_host_fn)lr_op_head_host, (lr_host_fn)head_mag,
};
const lr_kernel_desc lr_op_head_mma_desc = {
    "op_head_int8g_mma", 6,
    { B("q", LR_E_I8, LR_IN), B("sb", LR_E_F16, LR_IN), B("x", LR_E_F32, LR_IN), B("logits", LR_E_F32, LR_OUT),
      P("vocab", LR_T_I32), P("hidden", LR_T_I32) },
    (lr_host_fn)lr_op_head_mma_host, (lr_host_fn)head_mma_mag,
};
const lr_kernel_desc lr_op_argmax_desc = {
    "op_argmax", 3, { B("logits", LR_E_F32, LR_IN), P("n", LR_T_I32), B("best", LR_E_U64, LR_INOUT) },
    (lr_host_fn)lr_op_argmax_host, NULL,
};

void lr_op_spec(lr_jit_spec *s, const char *op, int head_dim)
{
    static const struct { const char *op, *tmpl; int threads; } t[] = {
        { "op_embed_int8g", "op_embed_int8g.cu", 256 }, { "op_add_rmsnorm", "op_add_rmsnorm.cu", 1024 },
        { "op_rope_kv", "op_rope_kv.cu", 128 },         { "op_attention", "op_attention.cu", 256 },
        { "op_silu_mul", "op_silu_mul.cu", 256 },       { "op_head_int8g", "op_head_int8g.cu", 256 },
        { "op_argmax", "op_argmax.cu", 256 },      { "op_rope_attention", "op_rope_attention.cu", 256 },
        { "op_head_int8g_mma", "op_head_int8g_mma.cu", 256 }, { "op_empty_pdl", "op_empty_pdl.cu", 1024 },
        { "op_empty_flag", "op_empty_flag.cu", 1024 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(op, t[i].op)) {
            lr_jit_spec_init(s, t[i].tmpl, t[i].op);
            lr_jit_spec_set(s, "threads", !strcmp(op, "op_rope_kv") ? (head_dim > 128 ? head_dim : 128) : t[i].threads);
            if (!strcmp(op, "op_attention")) lr_jit_spec_set(s, "head_dim", head_dim);
            if (!strcmp(op, "op_head_int8g_mma")) {
                lr_jit_spec_set(s, "threads", lr_op_head_mma_threads(head_dim));
                lr_jit_spec_set(s, "hidden", head_dim);
                if (lr_op_head_mma > 1) lr_jit_spec_set(s, "rb", lr_op_head_mma);
            }
            if (!strcmp(op, "op_rope_attention")) {
                lr_op_rope_attention_spec(s, head_dim, (int)lr_op_rope_attention_threads(head_dim), lr_op_att_splits);
                return;
            }
            if (!strcmp(op, "op_head_int8g")) {
                lr_jit_spec_set(s, "rpw", HEAD_RPW), lr_jit_spec_set(s, "group", 64);
                if (lr_op_head_unroll > 1 && lr_op_head_unroll <= 8) lr_jit_spec_set(s, "unroll", lr_op_head_unroll);
            }
            return;
        }
    lr_jit_spec_init(s, "no_such_op.cu", "no_such_op");
}

int lr_op_attention_head_dim = 128;
int lr_op_head_unroll = 1;
int lr_op_head_mma = 1; /* 226-229 us of the 14B step against 259 for the scalar head (h200_engine_variants.csv) */

int lr_op_head_mma_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 4, &lr_op_head_mma); }

int lr_op_head_warps = 8;

int lr_op_head_warps_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 32, &lr_op_head_warps); }

unsigned lr_op_head_mma_threads(int hidden)
{
    /* 0: as many warps as the row has 512-column chunks (one each, loaded at once), at most 32 */
    const int chunks = (hidden / 64 + 7) / 8;
    const int w = lr_op_head_warps ? lr_op_head_warps : chunks < 1 ? 1 : chunks > 32 ? 32 : chunks;
    return 32u * (unsigned)w;
}

/* 16 warps x 4 positions: a 64-position context in one round trip. 1024 was
 * the default until the GEMVs shrank; at 512 the q|k|v GEMV costs the chain
 * 327-336 us per 14B token against 354-358 (inferred: the smaller CTAs fit
 * beside the GEMV's last ones and start sooner). Graph at positions 8-72:
 * 14B 2909-2916 us against 2923-2932 at 1024 (4 pairs, 2 processes), 8B
 * 1972 against 1979, 4B 1700 against 1712; 14B over 224 steps 3026 against
 * 3036 (h200_engine_variants.csv, d762822 and d7299aa). */
int lr_op_att_threads = LR_ATT_THREADS_DEFAULT;

int lr_op_att_threads_set(const char *what, const char *s)
{
    int v;
    if (!s) return LR_OK;
    if (lr_parse_int(s, 64, 1024, &v) || v % 32)
        return LR_FAIL(LR_EINVAL, "%s=%s: want a multiple of 32 in 64..1024", what, s);
    lr_op_att_threads = v;
    return LR_OK;
}

int lr_op_att_splits = 1;

int lr_op_att_splits_set(const char *what, const char *s) { return lr_setting_int(what, s, 1, 16, &lr_op_att_splits); }

void lr_op_rope_attention_spec(lr_jit_spec *s, int head_dim, int threads, int splits)
{
    lr_jit_spec_init(s, "op_rope_attention.cu", "op_rope_attention");
    lr_jit_spec_set(s, "threads", (long long)lr_op_rope_attention_threads_at(head_dim, threads));
    if (splits > 1) lr_jit_spec_set(s, "splits", splits);
    lr_jit_spec_set(s, "head_dim", head_dim);
}

void lr_op_rope_attention_long_spec(lr_jit_spec *s, int head_dim)
{
    lr_op_rope_attention_spec(s, head_dim, LR_ATT_LONG_THREADS, LR_ATT_LONG_SPLITS);
}

/* threads 0..hd-1 take q, hd..2hd-1 k: never fewer than 2 * head_dim */
unsigned lr_op_rope_attention_threads_at(int head_dim, int threads)
{
    return (unsigned)(2 * head_dim > threads ? 2 * head_dim : threads);
}

unsigned lr_op_rope_attention_threads(int head_dim) { return lr_op_rope_attention_threads_at(head_dim, lr_op_att_threads); }

unsigned lr_op_head_mma_rows_per_cta(int blocks) { return 16u * (unsigned)(blocks > 1 ? blocks : 1); }

/* 256 threads: 8 warps of HEAD_RPW rows */
unsigned lr_op_head_rows_per_cta(void) { return 8u * HEAD_RPW; }

int lr_op_head_unroll_set(const char *what, const char *s) { return lr_setting_int(what, s, 1, 8, &lr_op_head_unroll); }

/* ---- host references (f64) ---- */

void lr_op_embed_host(const int8_t *q, const uint16_t *sb, const int32_t *tok, float *out, int32_t hidden, int32_t group)
{
    size_t t = (size_t)tok[0], ng = (size_t)(hidden / group);
    for (int i = 0; i < hidden; i++) {
        size_t g = (size_t)(i / group);
        out[i] = (float)((double)q[t * hidden + i] * lr_half_to_float(sb[(t * ng + g) * 2]) +
                         lr_half_to_float(sb[(t * ng + g) * 2 + 1]));
    }
}
static void embed_mag(const int8_t *q, const uint16_t *sb, const int32_t *tok, float *out, int32_t hidden, int32_t group)
{
    lr_op_embed_host(q, sb, tok, out, hidden, group);
    for (int i = 0; i < hidden; i++) out[i] = fabsf(out[i]) + 1e-3f;
}

void lr_op_add_rmsnorm_host(float *x, const float *y, const float *w, float *out, int32_t n, float eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++) {
        if (y) x[i] = (float)((double)x[i] + y[i]);
        ss += (double)x[i] * x[i];
    }
    double r = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) out[i] = (float)(x[i] * r * w[i]);
}
static void rmsnorm_mag(float *x, const float *y, const float *w, float *out, int32_t n, float eps)
{
    lr_op_add_rmsnorm_host(x, y, w, out, n, eps);
    for (int i = 0; i < n; i++) {
        out[i] = fabsf(out[i]) + 1e-6f;
        x[i] = fabsf(x[i]) + (y ? fabsf(y[i]) : 0) + 1e-6f;
    }
}

void lr_rope_table(double *cs_sn, int head_dim, int pos, float theta)
{
    for (int j = 0; j < head_dim / 2; j++) {
        double a = (double)pos * pow((double)theta, -2.0 * j / head_dim);
        cs_sn[2 * j] = cos(a), cs_sn[2 * j + 1] = sin(a);
    }
}

static void head_norm_rope(const float *src, const float *nw, int hd, float eps, int pos, float theta, double *dst)
{
    double v[1024], ss = 0;
    for (int i = 0; i < hd; i++) v[i] = src[i], ss += v[i] * v[i];
    if (nw) {
        double r = 1.0 / sqrt(ss / hd + eps);
        for (int i = 0; i < hd; i++) v[i] = (float)(v[i] * r * nw[i]); /* the kernel rounds here too */
    }
    int half = hd / 2;
    for (int i = 0; i < hd; i++) {
        int j = i < half ? i : i - half;
        double inv = pow((double)theta, -2.0 * j / hd), a = (double)pos * inv;
        double partner = i < half ? -v[i + half] : v[i - half];
        dst[i] = v[i] * cos(a) + partner * sin(a);
    }
}

void lr_op_rope_kv_host(float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc, const int32_t *pos,
                        int32_t n_heads, int32_t n_kv, int32_t hd, float eps, float theta)
{
    double d[1024];
    for (int h = 0; h < n_heads + n_kv; h++) {
        int is_q = h < n_heads, kvh = h - n_heads;
        float *src = qkv + (size_t)h * hd;
        head_norm_rope(src, is_q ? qn : kn, hd, eps, pos[0], theta, d);
        for (int i = 0; i < hd; i++) {
            if (is_q) src[i] = (float)d[i];
            else {
                size_t row = (size_t)pos[0] * n_kv * hd + (size_t)kvh * hd + i;
                kc[row] = lr_float_to_half((float)d[i]);
                vc[row] = lr_float_to_half(qkv[(size_t)(n_heads + n_kv + kvh) * hd + i]);
            }
        }
    }
}
/* The f16 cache's scale: |entry| plus a floor of a few f16 steps of a unit
 * entry (the row written is one rounding of the head's values). */
static void cache_mag(uint16_t *kc, uint16_t *vc, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kc[i] = lr_float_to_half(fabsf(lr_half_to_float(kc[i])) + 0.05f);
        vc[i] = lr_float_to_half(fabsf(lr_half_to_float(vc[i])) + 0.05f);
    }
}

/* Scale: each head's RMS, so a rounding step of f16 or f32 is judged against
 * the head's size rather than a near-zero element. */
static void rope_mag(float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc, const int32_t *pos,
                     int32_t n_heads, int32_t n_kv, int32_t hd, float eps, float theta)
{
    lr_op_rope_kv_host(qkv, qn, kn, kc, vc, pos, n_heads, n_kv, hd, eps, theta);
    for (int h = 0; h < n_heads + 2 * n_kv; h++) {
        double ss = 0;
        for (int i = 0; i < hd; i++) ss += (double)qkv[(size_t)h * hd + i] * qkv[(size_t)h * hd + i];
        float r = (float)sqrt(ss / hd) + 1e-6f;
        for (int i = 0; i < hd; i++) qkv[(size_t)h * hd + i] = r;
    }
    cache_mag(kc, vc, (size_t)(pos[0] + 1) * n_kv * hd);
}

static void attention(const float *q, const uint16_t *kc, const uint16_t *vc, float *out, const int32_t *pos,
                      int32_t n_heads, int32_t n_kv, float scale, int mag)
{
    int hd = lr_op_attention_head_dim, T = pos[0] + 1;
    /* the scores on the heap, as long as the context (a fixed 65,536 here
       overran at longer positions, and took 512 KB of a thread's stack) */
    double *s = malloc((size_t)T * sizeof *s);
    if (!s) { /* a reference that cannot run fails the comparison, not the process */
        for (size_t i = 0; i < (size_t)n_heads * hd; i++) out[i] = NAN;
        return;
    }
    for (int h = 0; h < n_heads; h++) {
        int kvh = h / (n_heads / n_kv);
        double m = -INFINITY, l = 0;
        for (int t = 0; t < T; t++) {
            double d = 0;
            for (int i = 0; i < hd; i++)
                d += (double)q[(size_t)h * hd + i] * scale * lr_half_to_float(kc[((size_t)t * n_kv + kvh) * hd + i]);
            s[t] = d;
            if (d > m) m = d;
        }
        for (int t = 0; t < T; t++) s[t] = exp(s[t] - m), l += s[t];
        for (int i = 0; i < hd; i++) {
            double o = 0;
            for (int t = 0; t < T; t++) {
                double v = lr_half_to_float(vc[((size_t)t * n_kv + kvh) * hd + i]);
                o += s[t] * (mag ? fabs(v) : v);
            }
            out[(size_t)h * hd + i] = (float)(o / l);
        }
    }
    free(s);
}
/* Each head's row of out through the per-head rotation (value or, with mag,
 * the l2 size of its terms: lr_rotate_row_f64). */
static void rotate_heads(float *out, int32_t n_heads, const uint32_t *odbits, const float *oq, int mag)
{
    const int hd = lr_op_attention_head_dim;
    double x[1024], y[1024];
    for (int h = 0; h < n_heads; h++) {
        for (int i = 0; i < hd; i++) x[i] = out[(size_t)h * hd + i];
        lr_rotate_row_f64(x, y, odbits + (size_t)h * hd / 32, oq, hd, mag);
        for (int i = 0; i < hd; i++) out[(size_t)h * hd + i] = (float)y[i];
    }
}
void lr_op_attention_host(const float *q, const uint16_t *kc, const uint16_t *vc, float *out, const int32_t *pos,
                          int32_t n_heads, int32_t n_kv, float scale, const uint32_t *odbits, const float *oq)
{
    attention(q, kc, vc, out, pos, n_heads, n_kv, scale, 0);
    if (odbits) rotate_heads(out, n_heads, odbits, oq, 0);
}
static void attention_mag(const float *q, const uint16_t *kc, const uint16_t *vc, float *out, const int32_t *pos,
                          int32_t n_heads, int32_t n_kv, float scale, const uint32_t *odbits, const float *oq)
{
    attention(q, kc, vc, out, pos, n_heads, n_kv, scale, 1);
    if (odbits) rotate_heads(out, n_heads, odbits, oq, 1);
}

/* The composition it fuses: RoPE (and the cache write) on a copy of qkv,
 * then attention over the rotated q. */
static void rope_attention(const float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc, float *out,
                           const int32_t *pos, int32_t n_heads, int32_t n_kv, float eps, float theta, float scale,
                           int mag)
{
    int hd = lr_op_attention_head_dim;
    size_t n = (size_t)(n_heads + 2 * n_kv) * hd;
    float *q = malloc(n * sizeof *q);
    if (!q) return;
    memcpy(q, qkv, n * sizeof *q);
    lr_op_rope_kv_host(q, qn, kn, kc, vc, pos, n_heads, n_kv, hd, eps, theta);
    attention(q, kc, vc, out, pos, n_heads, n_kv, scale, mag);
    free(q);
}
void lr_op_rope_attention_host(const float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc,
                               float *out, const int32_t *pos, const double *rope, int32_t n_heads, int32_t n_kv,
                               float eps, float theta, float scale, const uint32_t *odbits, const float *oq)
{
    (void)rope; /* the reference takes its own angles (head_norm_rope) */
    rope_attention(qkv, qn, kn, kc, vc, out, pos, n_heads, n_kv, eps, theta, scale, 0);
    if (odbits) rotate_heads(out, n_heads, odbits, oq, 0);
}
/* Scales: attention's for out; rope's for the cache (the row written). */
static void rope_attention_mag(const float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc,
                               float *out, const int32_t *pos, const double *rope, int32_t n_heads, int32_t n_kv,
                               float eps, float theta, float scale, const uint32_t *odbits, const float *oq)
{
    (void)rope;
    rope_attention(qkv, qn, kn, kc, vc, out, pos, n_heads, n_kv, eps, theta, scale, 1);
    if (odbits) rotate_heads(out, n_heads, odbits, oq, 1);
    cache_mag(kc, vc, (size_t)(pos[0] + 1) * n_kv * lr_op_attention_head_dim);
}

void lr_op_silu_mul_host(const float *gu, float *h, int32_t n)
{
    for (int i = 0; i < n; i++) {
        double g = gu[i];
        h[i] = (float)(g / (1 + exp(-g)) * gu[n + i]);
    }
}
static void silu_mag(const float *gu, float *h, int32_t n)
{
    for (int i = 0; i < n; i++) h[i] = fabsf(gu[i] * gu[n + i]) + 1e-12f;
}

/* Both heads' reference, mode bits: HEAD_MAG the magnitudes (the
 * comparison's scale), HEAD_MMA the tensor-core head's arithmetic: the
 * weights' dot over f16(x) (its B operand) and the bias term over x. */
enum { HEAD_MAG = 1, HEAD_MMA = 2 };
static void head(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab, int32_t hidden,
                 int mode)
{
    const int ng = hidden / 64, mag = mode & HEAD_MAG;
    for (int r = 0; r < vocab; r++) {
        double acc = 0;
        for (int G = 0; G < ng; G++) {
            const size_t gi = (size_t)r * ng + (size_t)G;
            const double sc = lr_half_to_float(sb[gi * 2]), bi = lr_half_to_float(sb[gi * 2 + 1]);
            for (int i = 64 * G; i < 64 * G + 64; i++) {
                const double qi = q[(size_t)r * hidden + i];
                if (mode & HEAD_MMA) {
                    const double wx = qi * sc * lr_half_to_float(lr_float_to_half(x[i])), bx = bi * x[i];
                    acc += mag ? fabs(wx) + fabs(bx) : wx + bx;
                } else {
                    const double w = qi * sc + bi;
                    acc += mag ? fabs(w * x[i]) : w * x[i];
                }
            }
        }
        logits[r] = (float)acc;
    }
}
void lr_op_head_host(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab, int32_t hidden)
{
    head(q, sb, x, logits, vocab, hidden, 0);
}
static void head_mag(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab, int32_t hidden)
{
    head(q, sb, x, logits, vocab, hidden, HEAD_MAG);
}
void lr_op_head_mma_host(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab,
                         int32_t hidden)
{
    head(q, sb, x, logits, vocab, hidden, HEAD_MMA);
}
static void head_mma_mag(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab,
                         int32_t hidden)
{
    head(q, sb, x, logits, vocab, hidden, HEAD_MMA | HEAD_MAG);
}

/* The slot's key (templates/op_argmax.cu): order-preserving bits of the
 * value above ~index, 0 for NaN; -0 keyed as +0. */
static uint64_t argmax_key(float x, int32_t i)
{
    if (x != x) return 0;
    uint32_t b;
    if (x == 0.f) x = 0.f;
    memcpy(&b, &x, 4);
    uint32_t ord = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return ((uint64_t)ord << 32) | (uint32_t)~(uint32_t)i;
}

/* lr_argmax's contract (rt/sampler.h) folded into the slot: the first index
 * of the largest non-NaN value, as the largest key. */
void lr_op_argmax_host(const float *logits, int32_t n, uint64_t *best)
{
    for (int32_t i = 0; i < n; i++) {
        uint64_t k = argmax_key(logits[i], i);
        if (k > *best) *best = k;
    }
}

int32_t lr_op_argmax_token(uint64_t best) { return best ? (int32_t)~(uint32_t)best : 0; }

unsigned lr_op_argmax_grid(int n) { return (unsigned)((n + 4 * 256 - 1) / (4 * 256)); }
