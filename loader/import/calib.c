/* Calibration forward pass and Hessians (calib.h). The state is a position
 * (layer, stage) in the pass:
 *   stage 0: X holds the residual stream entering the layer
 *   stage 1: XN = attn_norm(X), H = attention input        (q, k, v use it)
 *   stage 2: A = attention(q, k, v of XN), H = A's          (o uses it)
 *   stage 3: X += o(A); XN = ffn_norm(X), H = FFN input     (gate, up)
 *   stage 4: F = silu(gate(XN)) * up(XN), H = F's           (down)
 *   then X += down(F) and the next layer starts at stage 0.
 * Activations are f32 arrays over all N tokens ([N][width]). */
#include "loader/import/calib.h"
#include "loader/parallel.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/read_file.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NROLES 7
static const char *const k_roles[NROLES] = { "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down" };
static const int k_stage[NROLES] = { 1, 1, 1, 2, 3, 3, 4 }; /* the stage whose H is the role's input */

struct lr_calib {
    const lr_src *src;
    lr_model_config c;
    int nthreads, N, seq, qdim, kvdim;
    int32_t *ids;
    float *X, *XN, *A, *F;
    double *H;
    int hn;
    /* The teacher (lr_calib_set_teacher): the same pass over the source's
     * weights only, and M = Z^T Z_teacher / N beside each H. */
    int teacher;
    float *TX, *TXN, *TA, *TF;
    double *M;
    int layer, stage;
    float *W[NROLES]; /* weights handed back for the current layer */
};

/* ---- f32 products: Y[t][r] = sum_i X[t][i] W[r][i] ---- */

static int g_avx2 = -1;

__attribute__((target("avx2,fma"))) static float dot_avx2(const float *a, const float *b, int n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    s0 = _mm256_add_ps(s0, s1);
    float t[8];
    _mm256_storeu_ps(t, s0);
    float s = ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

static float dot_plain(const float *a, const float *b, int n)
{
    float s[4] = { 0 };
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) s[k] += a[i + k] * b[i + k];
    for (; i < n; i++) s[0] += a[i] * b[i];
    return (s[0] + s[2]) + (s[1] + s[3]);
}

static float dotf(const float *a, const float *b, int n) { return g_avx2 ? dot_avx2(a, b, n) : dot_plain(a, b, n); }

__attribute__((target("avx2,fma"))) static inline float hsum(__m256 v)
{
    float t[8];
    _mm256_storeu_ps(t, v);
    return ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
}

/* A 4 x 4 tile: rows x[0..4) of X against rows w[0..4) of W, n a multiple of 8. */
__attribute__((target("avx2,fma"))) static void tile_avx2(const float *X, const float *W, int n, int ldy, float *Y)
{
    __m256 acc[4][4];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) acc[a][b] = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) {
        __m256 x0 = _mm256_loadu_ps(X + i), x1 = _mm256_loadu_ps(X + n + i), x2 = _mm256_loadu_ps(X + 2 * n + i),
               x3 = _mm256_loadu_ps(X + 3 * n + i);
        for (int b = 0; b < 4; b++) {
            __m256 w = _mm256_loadu_ps(W + b * n + i);
            acc[0][b] = _mm256_fmadd_ps(x0, w, acc[0][b]);
            acc[1][b] = _mm256_fmadd_ps(x1, w, acc[1][b]);
            acc[2][b] = _mm256_fmadd_ps(x2, w, acc[2][b]);
            acc[3][b] = _mm256_fmadd_ps(x3, w, acc[3][b]);
        }
    }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) Y[a * ldy + b] = hsum(acc[a][b]);
}

typedef struct {
    const float *X, *W;
    float *Y;
    int N, in, out, ldy, sym; /* sym: X == W, only tiles on or above the diagonal */
} mm_job;

#define MM_TOK 64  /* tokens per job */
#define MM_ROWS 64 /* W rows kept hot in cache */

static int mm_fn(void *ctx, int job)
{
    mm_job *j = ctx;
    int t0 = job * MM_TOK, t1 = t0 + MM_TOK < j->N ? t0 + MM_TOK : j->N, n = j->in;
    int fast = g_avx2 && n % 8 == 0;
    for (int r0 = 0; r0 < j->out; r0 += MM_ROWS) {
        int r1 = r0 + MM_ROWS < j->out ? r0 + MM_ROWS : j->out;
        for (int t = t0; t < t1; t += 4)
            for (int r = r0; r < r1; r += 4) {
                if (j->sym && r + 4 <= t) continue;
                if (fast && t + 4 <= t1 && r + 4 <= r1) {
                    tile_avx2(j->X + (size_t)t * n, j->W + (size_t)r * n, n, j->ldy, j->Y + (size_t)t * j->ldy + r);
                    continue;
                }
                for (int a = t; a < t + 4 && a < t1; a++)
                    for (int b = r; b < r + 4 && b < r1; b++)
                        j->Y[(size_t)a * j->ldy + b] = dotf(j->X + (size_t)a * n, j->W + (size_t)b * n, n);
            }
    }
    return LR_OK;
}

static int matmul(const lr_calib *c, const float *X, int N, int in, const float *W, int out, float *Y, int ldy, int sym)
{
    mm_job j = { X, W, Y, N, in, out, ldy, sym };
    return lr_parallel_for(c->nthreads, (N + MM_TOK - 1) / MM_TOK, mm_fn, &j);
}

/* *dst = Z^T Z2 / N (n x n, row-major) for Z, Z2 [N][n]: per chunk of tokens
 * the transposes multiplied in f32, summed into f64. Z2 == Z is the
 * symmetric second moment (tiles on and above the diagonal, mirrored). */
#define H_CHUNK 512
static int moment(const lr_calib *c, const float *Z, const float *Z2, int n, double **dst)
{
    const int sym = Z2 == Z;
    free(*dst);
    double *D = *dst = calloc((size_t)n * n, sizeof *D);
    float *T = malloc((size_t)n * H_CHUNK * sizeof *T), *T2 = sym ? T : malloc((size_t)n * H_CHUNK * sizeof *T2),
          *G = malloc((size_t)n * n * sizeof *G);
    int rc = !D || !T || !T2 || !G ? LR_FAIL(LR_ENOMEM, "calibration: moment %d x %d", n, n) : LR_OK;
    for (int t0 = 0; t0 < c->N && !rc; t0 += H_CHUNK) {
        int m = c->N - t0 < H_CHUNK ? c->N - t0 : H_CHUNK, mp = (m + 7) & ~7;
        for (int pass = 0; pass < 2 - sym; pass++) {
            const float *S = pass ? Z2 : Z;
            float *Tp = pass ? T2 : T;
            for (int i = 0; i < n; i++) {
                for (int t = 0; t < m; t++) Tp[(size_t)i * mp + t] = S[(size_t)(t0 + t) * n + i];
                for (int t = m; t < mp; t++) Tp[(size_t)i * mp + t] = 0;
            }
        }
        if ((rc = matmul(c, T, n, mp, T2, n, G, n, sym))) break;
        for (int i = 0; i < n; i++)
            for (int k = sym ? i & ~3 : 0; k < n; k++) D[(size_t)i * n + k] += G[(size_t)i * n + k];
    }
    for (int i = 0; i < n && !rc; i++)
        for (int k = sym ? i : 0; k < n; k++) {
            D[(size_t)i * n + k] /= c->N;
            if (sym) D[(size_t)k * n + i] = D[(size_t)i * n + k];
        }
    if (sym) T2 = NULL;
    free(T), free(T2), free(G);
    return rc;
}

/* H of the pass's Z (n wide) and, with the teacher, M of Z against its TZ. */
static int moments(lr_calib *c, const float *Z, const float *TZ, int n)
{
    c->hn = n;
    int rc = moment(c, Z, Z, n, &c->H);
    if (!rc && c->teacher) rc = moment(c, Z, TZ, n, &c->M);
    return rc;
}

/* ---- pieces of the layer ---- */

static int read_vec(const lr_calib *c, int layer, const char *role, int optional, uint64_t n, float **out)
{
    char name[64];
    snprintf(name, sizeof name, "blk.%d.%s", layer, role);
    *out = NULL;
    const lr_src_tensor *t = lr_src_find(c->src, name);
    if (!t) return optional ? LR_OK : LR_FAIL(LR_EFORMAT, "calibration: no tensor %s", name);
    if (t->rows * t->cols != n) return LR_FAIL(LR_EFORMAT, "calibration: tensor %s has the wrong size", name);
    if (!(*out = malloc((size_t)n * sizeof **out))) return LR_FAIL(LR_ENOMEM, "calibration: out of memory");
    int rc = lr_src_read(c->src, t, 0, t->rows, *out);
    if (rc) free(*out), *out = NULL;
    return rc;
}

/* The weights of role i: the handed-back copy (unless source) or the source's
 * (*own set). */
static int weights(const lr_calib *c, int i, int source, const float **W, float **own)
{
    *own = NULL;
    if (c->W[i] && !source) {
        *W = c->W[i];
        return LR_OK;
    }
    char name[64];
    snprintf(name, sizeof name, "blk.%d.%s", c->layer, k_roles[i]);
    const lr_src_tensor *t = lr_src_find(c->src, name);
    if (!t) return LR_FAIL(LR_EFORMAT, "calibration: no tensor %s", name);
    if (!(*own = malloc((size_t)(t->rows * t->cols) * sizeof **own))) return LR_FAIL(LR_ENOMEM, "calibration: out of memory");
    int rc = lr_src_read(c->src, t, 0, t->rows, *own);
    *W = *own;
    return rc;
}

/* Y = Z W_i^T over all tokens (source: the source's W_i, the teacher's). */
static int project(lr_calib *c, int i, int source, const float *Z, int in, float *Y, int out)
{
    const float *W = NULL;
    float *own;
    int rc = weights(c, i, source, &W, &own);
    if (!rc) rc = matmul(c, Z, c->N, in, W, out, Y, out, 0);
    free(own);
    return rc;
}

static void rmsnorm_all(const lr_calib *c, const float *X, const float *w, float *out)
{
    int h = (int)c->c.hidden;
    for (int t = 0; t < c->N; t++) {
        const float *x = X + (size_t)t * h;
        double ss = 0;
        for (int i = 0; i < h; i++) ss += (double)x[i] * x[i];
        double s = 1.0 / sqrt(ss / h + c->c.norm_eps);
        for (int i = 0; i < h; i++) out[(size_t)t * h + i] = (float)((double)x[i] * s * w[i]);
    }
}

static void head_norm(float *v, int nheads, int hd, const float *w, double eps)
{
    for (int h = 0; h < nheads; h++) {
        float *p = v + (size_t)h * hd;
        double ss = 0;
        for (int i = 0; i < hd; i++) ss += (double)p[i] * p[i];
        double s = 1.0 / sqrt(ss / hd + eps);
        for (int i = 0; i < hd; i++) p[i] = (float)((double)p[i] * s * w[i]);
    }
}

/* rotate_half RoPE, as rt/engine_cpu.c. */
static void rope(float *v, int nheads, int hd, int pos, double theta)
{
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        double a = pos * pow(theta, -2.0 * i / hd), cs = cos(a), sn = sin(a);
        for (int h = 0; h < nheads; h++) {
            float *p = v + (size_t)h * hd;
            double x1 = p[i], x2 = p[i + half];
            p[i] = (float)(x1 * cs - x2 * sn);
            p[i + half] = (float)(x2 * cs + x1 * sn);
        }
    }
}

typedef struct {
    lr_calib *c;
    float *Q, *K, *V, *A;
    const float *qn, *kn;
} att_job;

/* One sequence: norms and RoPE on its q/k rows, then causal attention into A. */
static int att_fn(void *ctx, int job)
{
    att_job *j = ctx;
    lr_calib *c = j->c;
    int s0 = job * c->seq, s1 = s0 + c->seq < c->N ? s0 + c->seq : c->N, L = s1 - s0;
    int hd = (int)c->c.head_dim, nh = (int)c->c.n_heads, nkv = (int)c->c.n_kv_heads, group = nh / nkv;
    double scale = 1.0 / sqrt((double)hd), theta = c->c.rope_theta;
    for (int t = s0; t < s1; t++) {
        float *q = j->Q + (size_t)t * c->qdim, *k = j->K + (size_t)t * c->kvdim;
        if (j->qn) head_norm(q, nh, hd, j->qn, c->c.norm_eps);
        if (j->kn) head_norm(k, nkv, hd, j->kn, c->c.norm_eps);
        rope(q, nh, hd, t - s0, theta);
        rope(k, nkv, hd, t - s0, theta);
    }
    double *sc = malloc((size_t)L * sizeof *sc), *acc = malloc((size_t)hd * sizeof *acc);
    if (!sc || !acc) {
        free(sc), free(acc);
        return LR_FAIL(LR_ENOMEM, "calibration: out of memory");
    }
    for (int t = s0; t < s1; t++)
        for (int h = 0; h < nh; h++) {
            const float *q = j->Q + (size_t)t * c->qdim + (size_t)h * hd;
            size_t kvo = (size_t)(h / group) * hd;
            double mx = -INFINITY, sum = 0;
            for (int u = s0; u <= t; u++) {
                sc[u - s0] = dotf(j->K + (size_t)u * c->kvdim + kvo, q, hd) * scale;
                mx = sc[u - s0] > mx ? sc[u - s0] : mx;
            }
            for (int i = 0; i < hd; i++) acc[i] = 0;
            for (int u = s0; u <= t; u++) {
                double p = exp(sc[u - s0] - mx);
                sum += p;
                const float *v = j->V + (size_t)u * c->kvdim + kvo;
                for (int i = 0; i < hd; i++) acc[i] += p * v[i];
            }
            float *a = j->A + (size_t)t * c->qdim + (size_t)h * hd;
            for (int i = 0; i < hd; i++) a[i] = (float)(acc[i] / sum);
        }
    free(sc), free(acc);
    return LR_OK;
}

/* ---- advancing ---- */

/* Stage 1's projections of Z and the attention over them into A. */
static int attention(lr_calib *c, int source, const float *Z, float *Q, float *K, float *V, const float *qn,
                     const float *kn, float *A)
{
    int h = (int)c->c.hidden;
    int rc = project(c, 0, source, Z, h, Q, c->qdim);
    if (!rc) rc = project(c, 1, source, Z, h, K, c->kvdim);
    if (!rc) rc = project(c, 2, source, Z, h, V, c->kvdim);
    att_job j = { c, Q, K, V, A, qn, kn };
    if (!rc) rc = lr_parallel_for(c->nthreads, (c->N + c->seq - 1) / c->seq, att_fn, &j);
    return rc;
}

/* Stage 3's F = silu(gate(Z)) * up(Z); U is scratch. */
static int swiglu(lr_calib *c, int source, const float *Z, float *U, float *F)
{
    int h = (int)c->c.hidden, ff = (int)c->c.intermediate;
    int rc = project(c, 4, source, Z, h, F, ff);
    if (!rc) rc = project(c, 5, source, Z, h, U, ff);
    for (size_t i = 0; !rc && i < (size_t)c->N * (size_t)ff; i++) {
        double g = F[i];
        F[i] = (float)(g / (1.0 + exp(-g)) * U[i]);
    }
    return rc;
}

/* X += Z W_i^T (o or down), through T as scratch. */
static int add_projection(lr_calib *c, int i, int source, const float *Z, int in, float *T, float *X)
{
    size_t n = (size_t)c->N * c->c.hidden;
    int rc = project(c, i, source, Z, in, T, (int)c->c.hidden);
    for (size_t k = 0; !rc && k < n; k++) X[k] += T[k];
    return rc;
}

/* One stage of the pass, and of the teacher's beside it. */
static int step(lr_calib *c)
{
    int h = (int)c->c.hidden, ff = (int)c->c.intermediate, rc = LR_OK, tch = c->teacher;
    size_t N = (size_t)c->N;
    float *w = NULL;
    if (c->stage == 0) {
        if (!(rc = read_vec(c, c->layer, "attn_norm", 0, (uint64_t)h, &w))) {
            rmsnorm_all(c, c->X, w, c->XN);
            if (tch) rmsnorm_all(c, c->TX, w, c->TXN);
            rc = moments(c, c->XN, c->TXN, h);
        }
    } else if (c->stage == 1) {
        float *Q = malloc(N * c->qdim * sizeof *Q), *K = malloc(N * c->kvdim * sizeof *K),
              *V = malloc(N * c->kvdim * sizeof *V), *qn = NULL, *kn = NULL;
        if (!Q || !K || !V) rc = LR_FAIL(LR_ENOMEM, "calibration: out of memory");
        if (!rc) rc = read_vec(c, c->layer, "attn_q_norm", 1, c->c.head_dim, &qn);
        if (!rc) rc = read_vec(c, c->layer, "attn_k_norm", 1, c->c.head_dim, &kn);
        if (!rc) rc = attention(c, 0, c->XN, Q, K, V, qn, kn, c->A);
        if (!rc && tch) rc = attention(c, 1, c->TXN, Q, K, V, qn, kn, c->TA);
        if (!rc) rc = moments(c, c->A, c->TA, c->qdim);
        free(Q), free(K), free(V), free(qn), free(kn);
    } else if (c->stage == 2) {
        rc = add_projection(c, 3, 0, c->A, c->qdim, c->XN, c->X);
        if (!rc && tch) rc = add_projection(c, 3, 1, c->TA, c->qdim, c->TXN, c->TX);
        if (!rc) rc = read_vec(c, c->layer, "ffn_norm", 0, (uint64_t)h, &w);
        if (!rc) {
            rmsnorm_all(c, c->X, w, c->XN);
            if (tch) rmsnorm_all(c, c->TX, w, c->TXN);
            rc = moments(c, c->XN, c->TXN, h);
        }
    } else if (c->stage == 3) {
        float *U = malloc(N * ff * sizeof *U);
        if (!U) rc = LR_FAIL(LR_ENOMEM, "calibration: out of memory");
        if (!rc) rc = swiglu(c, 0, c->XN, U, c->F);
        if (!rc && tch) rc = swiglu(c, 1, c->TXN, U, c->TF);
        if (!rc) rc = moments(c, c->F, c->TF, ff);
        free(U);
    } else {
        rc = add_projection(c, 6, 0, c->F, ff, c->XN, c->X);
        if (!rc && tch) rc = add_projection(c, 6, 1, c->TF, ff, c->TXN, c->TX);
        for (int i = 0; i < NROLES; i++) free(c->W[i]), c->W[i] = NULL;
        c->layer++;
        c->stage = -1;
    }
    free(w);
    c->stage++;
    return rc ? lr_wrap(rc, "calibration: layer %d", c->layer) : LR_OK;
}

static int role_index(const char *role)
{
    for (int i = 0; i < NROLES; i++)
        if (!strcmp(role, k_roles[i])) return i;
    return -1;
}

int lr_calib_hessian(lr_calib *c, int layer, const char *role, const double **H, int *n)
{
    int i = role_index(role);
    if (i < 0 || layer < 0 || layer >= (int)c->c.n_layers) return LR_FAIL(LR_EINVAL, "calibration: blk.%d.%s", layer, role);
    int want = layer * 5 + k_stage[i];
    if (c->layer * 5 + c->stage > want)
        return LR_FAIL(LR_EINVAL, "calibration: blk.%d.%s asked after the pass moved on", layer, role);
    while (c->layer * 5 + c->stage < want) {
        int rc = step(c);
        if (rc) return rc;
    }
    *H = c->H;
    *n = c->hn;
    return LR_OK;
}

int lr_calib_set_weights(lr_calib *c, int layer, const char *role, const float *W)
{
    int i = role_index(role);
    if (i < 0 || layer != c->layer || c->stage > k_stage[i])
        return LR_FAIL(LR_EINVAL, "calibration: weights of blk.%d.%s come too late (or unknown)", layer, role);
    char name[64];
    snprintf(name, sizeof name, "blk.%d.%s", layer, role);
    const lr_src_tensor *t = lr_src_find(c->src, name);
    if (!t) return LR_FAIL(LR_EINVAL, "calibration: no tensor %s", name);
    size_t n = (size_t)(t->rows * t->cols);
    free(c->W[i]);
    if (!(c->W[i] = malloc(n * sizeof *W))) return LR_FAIL(LR_ENOMEM, "calibration: out of memory");
    memcpy(c->W[i], W, n * sizeof *W);
    return LR_OK;
}

int lr_calib_set_teacher(lr_calib *c)
{
    if (c->teacher) return LR_OK;
    if (c->layer || c->stage || c->H) return LR_FAIL(LR_EINVAL, "calibration: the teacher must start with the pass");
    size_t N = (size_t)c->N, h = c->c.hidden;
    c->TX = malloc(N * h * sizeof *c->TX);
    c->TXN = malloc(N * h * sizeof *c->TXN);
    c->TA = malloc(N * (size_t)c->qdim * sizeof *c->TA);
    c->TF = malloc(N * c->c.intermediate * sizeof *c->TF);
    if (!c->TX || !c->TXN || !c->TA || !c->TF) {
        free(c->TX), free(c->TXN), free(c->TA), free(c->TF);
        c->TX = c->TXN = c->TA = c->TF = NULL;
        return LR_FAIL(LR_ENOMEM, "calibration: the teacher's activations for %d tokens", c->N);
    }
    memcpy(c->TX, c->X, N * h * sizeof *c->TX); /* the embedding: both start from the source's */
    c->teacher = 1;
    return LR_OK;
}

int lr_calib_cross(lr_calib *c, int layer, const char *role, const double **M, int *n)
{
    int i = role_index(role);
    if (!c->teacher) return LR_FAIL(LR_EINVAL, "calibration: cross moment without the teacher");
    if (i < 0 || layer != c->layer || c->stage != k_stage[i] || !c->M)
        return LR_FAIL(LR_EINVAL, "calibration: cross moment of blk.%d.%s is not the current stage's", layer, role);
    *M = c->M;
    *n = c->hn;
    return LR_OK;
}

/* ---- open / close ---- */

int lr_calib_tokens(const lr_calib *c) { return c->N; }

void lr_calib_close(lr_calib *c)
{
    if (!c) return;
    free(c->ids), free(c->X), free(c->XN), free(c->A), free(c->F), free(c->H);
    free(c->TX), free(c->TXN), free(c->TA), free(c->TF), free(c->M);
    for (int i = 0; i < NROLES; i++) free(c->W[i]);
    free(c);
}

int lr_calib_open_ids(const lr_src *src, const lr_model_config *cfg, const int32_t *ids, int n, int seq_len,
                      int nthreads, lr_calib **out)
{
    *out = NULL;
    if (g_avx2 < 0) g_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (n < 2 || seq_len < 2) return LR_FAIL(LR_EINVAL, "calibration: %d tokens (at least 2)", n);
    lr_calib *c = calloc(1, sizeof *c);
    if (!c) return LR_FAIL(LR_ENOMEM, "calibration: out of memory");
    c->src = src, c->c = *cfg, c->N = n, c->seq = seq_len;
    c->nthreads = nthreads > 0 ? nthreads : lr_cpu_count();
    c->qdim = (int)(cfg->n_heads * cfg->head_dim), c->kvdim = (int)(cfg->n_kv_heads * cfg->head_dim);
    size_t N = (size_t)n, h = cfg->hidden;
    c->ids = malloc(N * sizeof *c->ids);
    c->X = malloc(N * h * sizeof *c->X);
    c->XN = malloc(N * h * sizeof *c->XN);
    c->A = malloc(N * (size_t)c->qdim * sizeof *c->A);
    c->F = malloc(N * cfg->intermediate * sizeof *c->F);
    int rc = !c->ids || !c->X || !c->XN || !c->A || !c->F ? LR_FAIL(LR_ENOMEM, "calibration: %d tokens", n) : LR_OK;
    const lr_src_tensor *e = rc ? NULL : lr_src_find(src, "token_embd");
    if (!rc && !e) rc = LR_FAIL(LR_EFORMAT, "calibration: no token_embd");
    for (int t = 0; t < n && !rc; t++) {
        if (ids[t] < 0 || (uint64_t)ids[t] >= e->rows) {
            rc = LR_FAIL(LR_EINVAL, "calibration: token %d outside the vocabulary", ids[t]);
            break;
        }
        c->ids[t] = ids[t];
        rc = lr_src_read(src, e, (uint64_t)ids[t], 1, c->X + (size_t)t * h);
    }
    if (rc) {
        lr_calib_close(c);
        return rc;
    }
    *out = c;
    return LR_OK;
}

int lr_calib_open(const lr_src *src, const lr_model_config *cfg, const char *text_path, int max_tokens, int nthreads,
                  lr_calib **out)
{
    *out = NULL;
    if (src->tok_kind != LR_TOK_JSON && src->tok_kind != LR_TOK_JSON_GZIP)
        return LR_FAIL(LR_EINVAL, "%s: no tokenizer to read the calibration text with", src->label);
    lr_tok *tok = NULL;
    int rc = lr_tok_load_stored(src->tok_kind, src->tok, src->tok_bytes, "calibration: the source's tokenizer", &tok);
    if (rc) return lr_wrap(rc, "%s", src->label);
    /* ~4 bytes a token: what max_tokens needs, with margin (a longer text,
       or a pipe, is read only that far) */
    const lr_read_opts ro = { .max = (size_t)max_tokens * 16 + 4096, .truncate = 1 };
    void *text = NULL;
    size_t len = 0;
    if ((rc = lr_read_file_opts(text_path, &ro, &text, &len))) rc = lr_wrap(rc, "calibration text");
    lr_tok_ids ids = { 0 };
    if (!rc) rc = lr_tok_encode(tok, text, len, 0, &ids);
    free(text);
    lr_tok_free(tok);
    int n = ids.n < (size_t)max_tokens ? (int)ids.n : max_tokens;
    if (!rc && n < 2) rc = LR_FAIL(LR_EINVAL, "%s: %d tokens; calibration needs at least 2", text_path, n);
    if (!rc) rc = lr_calib_open_ids(src, cfg, ids.ids, n, LR_CALIB_SEQ, nthreads, out);
    lr_tok_ids_free(&ids);
    return rc;
}
