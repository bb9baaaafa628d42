/* Rotation tests that need no GPU: the f64 reference is orthogonal and equals
 * the dense Q; generation is deterministic (and pinned by golden values the
 * quantizer relies on); the kernels' descriptor reference agrees; the slab
 * decomposition the kernels use, emulated in f32 on the host, meets the
 * 1e-6 bound for every width; the planner finds a valid plan for every width
 * under each budget; every planned specialization compiles (NVRTC). */
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "kernels/rotation.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int qwen_widths[] = { 2560, 4096, 5120, 8192, 9728, 12288, 17408, 25600, 27648 };
#define NQ ((int)(sizeof qwen_widths / sizeof qwen_widths[0]))
static const int budgets[] = { 49152, 101376, 232448 };

/* Golden values of seed 1, width 2560 (see test_deterministic). */
#define GOLD_FNV 0x0d96252736f0808dull
#define GOLD_Q00 0.75669451594535175
#define GOLD_Q12 -0.848775226171539
#define GOLD_Q44 -0.35106388754358558

/* Qwen widths, powers of two 4..32768, every odd k <= 31 at m = 4, 128, 1024. */
static int all_widths(int *w)
{
    int n = 0;
    for (int i = 0; i < NQ; i++) w[n++] = qwen_widths[i];
    for (int m = 4; m <= 32768; m *= 2) w[n++] = m;
    for (int k = 3; k <= 31; k += 2) {
        w[n++] = k * 4;
        w[n++] = k * 128;
        w[n++] = k * 1024;
    }
    return n;
}

static void rand_vec(double *x, int n, uint64_t seed)
{
    lr_rng r;
    lr_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) x[i] = lr_rng_signed(&r);
}

static double norm(const double *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

static int test_factor(void)
{
    int m, k;
    static const int want[][3] = { { 2560, 512, 5 }, { 9728, 512, 19 }, { 17408, 1024, 17 }, { 25600, 1024, 25 },
                                   { 12288, 4096, 3 }, { 27648, 1024, 27 }, { 4096, 4096, 1 }, { 5120, 1024, 5 } };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        T_OK(lr_rot_factor(want[i][0], &m, &k));
        T_ASSERT(m == want[i][1] && k == want[i][2], "%d -> %d x %d", want[i][0], k, m);
    }
    T_ASSERT(lr_rot_factor(33 * 1024, &m, &k) == LR_EUNSUPPORTED, "k = 33 accepted");
    T_ASSERT(lr_rot_factor(6, &m, &k) == LR_EUNSUPPORTED, "m = 2 accepted");
    T_ASSERT(lr_rot_factor(65536, &m, &k) == LR_EUNSUPPORTED, "m = 65536 accepted");
    T_ASSERT(lr_rot_factor(0, &m, &k) == LR_EINVAL, "0 accepted");
    lr_clear_error();
    return T_PASS;
}

/* |Qx| = |x| and Q^T Q x = x, to 1e-12, on every Qwen width and a few others. */
static int test_orthogonal(void)
{
    static const int extra[] = { 4, 12, 124, 32768, 31 * 1024, 3 * 8192 };
    for (int t = 0; t < NQ + 6; t++) {
        int n = t < NQ ? qwen_widths[t] : extra[t - NQ];
        lr_rot r;
        T_OK(lr_rot_init(&r, n, 0x1234 + (uint64_t)t));
        double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
        rand_vec(x, n, 99 + (uint64_t)t);
        T_OK(lr_rot_apply(&r, x, y));
        double nx = norm(x, n), ny = norm(y, n);
        T_ASSERT(fabs(nx - ny) <= 1e-12 * nx, "n=%d: |x| %.17g |Qx| %.17g", n, nx, ny);
        T_OK(lr_rot_apply_t(&r, y, z));
        double e = 0;
        for (int i = 0; i < n; i++) e = fmax(e, fabs(z[i] - x[i]));
        T_ASSERT(e <= 1e-12, "n=%d: Q^T Q x off by %.3g", n, e);
        /* and Q Q^T x = x (the quantizer's direction) */
        T_OK(lr_rot_apply_t(&r, x, y));
        T_OK(lr_rot_apply(&r, y, z));
        e = 0;
        for (int i = 0; i < n; i++) e = fmax(e, fabs(z[i] - x[i]));
        T_ASSERT(e <= 1e-12, "n=%d: Q Q^T x off by %.3g", n, e);
        free(x), free(y), free(z);
        lr_rot_free(&r);
    }
    return T_PASS;
}

/* The fast reference equals the dense (Q_odd kron H_m) D built entry by entry,
 * and the dense Q is orthogonal. */
static int test_dense(void)
{
    static const int ns[] = { 4, 8, 12, 20, 24, 40, 64, 96, 124, 448, 7 * 32 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t];
        lr_rot r;
        T_OK(lr_rot_init(&r, n, 7 + t));
        double *q = malloc(sizeof(double) * n * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
        T_OK(lr_rot_dense(&r, q));
        rand_vec(x, n, 5 + t);
        T_OK(lr_rot_apply(&r, x, y));
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < n; j++) s += q[i * n + j] * x[j];
            T_ASSERT(fabs(s - y[i]) <= 1e-13, "n=%d: row %d dense %.17g fast %.17g", n, i, s, y[i]);
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int l = 0; l < n; l++) s += q[l * n + i] * q[l * n + j];
                T_ASSERT(fabs(s - (i == j)) <= 1e-13, "n=%d: (Q^T Q)[%d][%d] = %.17g", n, i, j, s);
            }
        free(q), free(x), free(y);
        lr_rot_free(&r);
    }
    return T_PASS;
}

/* The per-head rotation (kind 2): block-diagonal, orthogonal, each block
 * the rotation of its own signs (kind 1's signs for the same seed, the
 * block's Q_odd), apply_t its inverse, aliasing allowed; a block that does
 * not divide the width or is not served is refused. */
static int test_blocks(void)
{
    static const int cases[][2] = { { 40 * 128, 128 }, { 9 * 64, 64 }, { 6 * 96, 96 }, { 3 * 12, 12 }, { 20, 20 } };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        int n = cases[t][0], bl = cases[t][1];
        lr_rot r, full;
        T_OK(lr_rot_init_blocks(&r, n, bl, 11 + t));
        T_OK(lr_rot_init(&full, n, 11 + t));
        T_ASSERT(!memcmp(r.dbits, full.dbits, (size_t)(n + 31) / 32 * 4), "n=%d: signs differ from kind 1's", n);
        double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n),
               *one = malloc(sizeof(double) * bl);
        rand_vec(x, n, 3 + t);
        T_OK(lr_rot_apply(&r, x, y));
        for (int b0 = 0; b0 < n; b0 += bl) { /* block b0 alone = the full rotation of its signs and width */
            lr_rot blk;
            T_OK(lr_rot_init(&blk, bl, 11 + t));
            memcpy(blk.qodd, r.qodd, sizeof(double) * r.k * r.k);
            for (int i = 0; i < bl; i++) {
                blk.dbits[i >> 5] &= ~(1u << (i & 31));
                if (lr_rot_sign(&r, b0 + i) < 0) blk.dbits[i >> 5] |= 1u << (i & 31);
            }
            T_OK(lr_rot_apply(&blk, x + b0, one));
            for (int i = 0; i < bl; i++)
                T_ASSERT(fabs(one[i] - y[b0 + i]) <= 1e-13, "n=%d block %d: element %d %.17g against %.17g", n, b0 / bl, i,
                         y[b0 + i], one[i]);
            lr_rot_free(&blk);
        }
        double nx = 0, ny = 0;
        for (int i = 0; i < n; i++) nx += x[i] * x[i], ny += y[i] * y[i];
        T_ASSERT(fabs(nx - ny) <= 1e-12 * nx, "n=%d: norm %.17g -> %.17g", n, nx, ny);
        memcpy(z, y, sizeof(double) * n);
        T_OK(lr_rot_apply_t(&r, z, z)); /* aliased */
        for (int i = 0; i < n; i++) T_ASSERT(fabs(z[i] - x[i]) <= 1e-12, "n=%d: Q^T Q x [%d] = %.17g, x %.17g", n, i, z[i], x[i]);
        if (n <= 1024) {
            double *q = malloc(sizeof(double) * n * n);
            T_OK(lr_rot_dense(&r, q));
            for (int i = 0; i < n; i++) {
                double s = 0;
                for (int j = 0; j < n; j++) {
                    if (i / bl != j / bl) T_ASSERT(q[i * n + j] == 0.0, "n=%d: dense (%d, %d) off the blocks", n, i, j);
                    s += q[i * n + j] * x[j];
                }
                T_ASSERT(fabs(s - y[i]) <= 1e-13, "n=%d: row %d dense %.17g fast %.17g", n, i, s, y[i]);
            }
            free(q);
        }
        free(x), free(y), free(z), free(one);
        lr_rot_free(&r), lr_rot_free(&full);
    }
    lr_rot r;
    T_ASSERT(lr_rot_init_blocks(&r, 100, 24, 1) == LR_EINVAL, "a block that does not divide the width");
    T_ASSERT(lr_rot_init_blocks(&r, 66, 33, 1) == LR_EUNSUPPORTED, "an odd block");
    T_ASSERT(lr_rot_init_blocks(&r, 64, 0, 1) == LR_EINVAL, "block 0");
    return T_PASS;
}

/* Same seed, same rotation; another seed, another one. Golden values pin
 * the generation order (docs/rotation.md): changing it silently would
 * invalidate every quantized model. */
static int test_deterministic(void)
{
    lr_rot a, b, c;
    T_OK(lr_rot_init(&a, 25600, 42));
    T_OK(lr_rot_init(&b, 25600, 42));
    T_OK(lr_rot_init(&c, 25600, 43));
    T_ASSERT(!memcmp(a.dbits, b.dbits, 25600 / 8) && !memcmp(a.qodd, b.qodd, sizeof(double) * 625), "not deterministic");
    T_ASSERT(memcmp(a.dbits, c.dbits, 25600 / 8) && memcmp(a.qodd, c.qodd, sizeof(double) * 625), "seed ignored");
    int neg = 0;
    for (int i = 0; i < 25600; i++) neg += lr_rot_sign(&a, i) < 0;
    T_ASSERT(neg > 12800 - 400 && neg < 12800 + 400, "signs unbalanced: %d of 25600", neg);
    /* golden: seed 1, width 2560 (k = 5) */
    lr_rot g;
    T_OK(lr_rot_init(&g, 2560, 1));
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 80; i++) h = (h ^ g.dbits[i]) * 1099511628211ull;
    printf("    golden: dbits fnv %016llx q00 %.17g q12 %.17g q44 %.17g\n", (unsigned long long)h, g.qodd[0], g.qodd[7],
           g.qodd[24]);
    T_ASSERT(h == GOLD_FNV, "dbits of seed 1 changed: %016llx", (unsigned long long)h);
    T_ASSERT(fabs(g.qodd[0] - GOLD_Q00) < 1e-12 && fabs(g.qodd[7] - GOLD_Q12) < 1e-12 && fabs(g.qodd[24] - GOLD_Q44) < 1e-12,
             "Q_odd of seed 1 changed");
    lr_rot_free(&a), lr_rot_free(&b), lr_rot_free(&c), lr_rot_free(&g);
    return T_PASS;
}

/* The descriptor's reference (f64 on the f32 tables) against lr_rot_apply. */
static int test_host_kernel_reference(void)
{
    static const int ns[] = { 12, 2560, 17408, 32768 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t], batch = 2;
        lr_rot r;
        T_OK(lr_rot_init(&r, n, 11 + t));
        float *x = malloc(4 * n * batch), *y = malloc(4 * n * batch), *mag = malloc(4 * n * batch), q[31 * 31];
        double *xd = malloc(8 * n), *yd = malloc(8 * n);
        lr_rng g;
        lr_rng_seed(&g, 3);
        lr_fill_random(LR_E_F32, x, (size_t)n * batch, &g, 1.0);
        lr_rot_qtable(&r, q);
        lr_rotate_host(x, y, r.dbits, q, n, batch);
        lr_rotate_host_mag(x, mag, r.dbits, q, n, batch);
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < n; i++) xd[i] = x[b * n + i];
            T_OK(lr_rot_apply(&r, xd, yd));
            for (int i = 0; i < n; i++) {
                double e = fabs(y[b * n + i] - yd[i]) / mag[b * n + i];
                T_ASSERT(e < 3e-7, "n=%d [%d][%d]: %.9g vs %.9g (rel %.3g)", n, b, i, y[b * n + i], yd[i], e);
            }
        }
        free(x), free(y), free(mag), free(xd), free(yd);
        lr_rot_free(&r);
    }
    return T_PASS;
}

/* ---- the kernels' arithmetic, emulated in f32 ---- */

static float flip(float v, int neg) { return neg ? -v : v; }

static void fwht_f32(float *v, int m)
{
    for (int h = 1; h < m; h <<= 1)
        for (int i = 0; i < m; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                float a = v[j], b = v[j + h];
                v[j] = a + b;
                v[j + h] = a - b;
            }
}

/* What CTA j of a slab plan computes, in the kernel's order of operations:
 * gather (sequential over a', per float4 lane), FWHT bits low to high (the
 * butterflies are the same whether in registers, shuffles or passes), the
 * row mix as a chain of fmaf. */
static void emulate(const lr_rot *r, const float *q, int s, int unroll, const float *x, float *y)
{
    int m = r->m, k = r->k, P = m / s, U = unroll < P ? unroll : P;
    float *u = malloc(sizeof(float) * (size_t)k * s);
    for (int j = 0; j < P; j++) {
        for (int row = 0; row < k; row++)
            for (int b = 0; b < s; b++) {
                float acc = 0, v[16];
                for (int a0 = 0; a0 < P; a0 += U) {
                    for (int t = 0; t < U; t++) {
                        int a = a0 + t, e = row * m + a * s + b;
                        int neg = lr_rot_sign(r, e) < 0;
                        neg ^= __builtin_popcount((unsigned)(j & a)) & 1;
                        v[t] = flip(x[e], neg);
                    }
                    for (int h = 1; h < U; h <<= 1)
                        for (int t = 0; t + h < U; t += 2 * h) v[t] += v[t + h];
                    acc += v[0];
                }
                u[row * s + b] = acc;
            }
        for (int row = 0; row < k; row++) fwht_f32(u + row * s, s);
        for (int row = 0; row < k; row++)
            for (int b = 0; b < s; b++) {
                float o[4] = { 0, 0, 0, 0 };
                for (int p = 0; p < k; p++) o[p & 3] = fmaf(q[row * k + p], u[p * s + b], o[p & 3]);
                y[row * m + j * s + b] = (o[0] + o[1]) + (o[2] + o[3]);
            }
    }
    free(u);
}

/* The slab decomposition is exact (it is the reference in a different
 * order) and f32 keeps every element within 1e-6 of the f64 rotation, on
 * the scale lr_call_verify uses: both the default slab and the single CTA. */
static int test_emulated_error(void)
{
    int w[128], nw = all_widths(w);
    double worst[4] = { 0, 0, 0, 0 };
    int worst_n[4] = { 0, 0, 0, 0 };
    for (int t = 0; t < nw; t++) {
        int n = w[t];
        lr_rot r;
        T_OK(lr_rot_init(&r, n, 1000 + (uint64_t)n));
        float *x = malloc(4 * n), *y = malloc(4 * n), *mag = malloc(4 * n), q[31 * 31];
        double *xd = malloc(8 * n), *yd = malloc(8 * n);
        lr_rng g;
        lr_rng_seed(&g, (uint64_t)n);
        lr_fill_random(LR_E_F32, x, (size_t)n, &g, 1.0);
        for (int i = 0; i < n; i++) xd[i] = x[i];
        T_OK(lr_rot_apply(&r, xd, yd));
        lr_rot_qtable(&r, q);
        lr_rotate_host_mag(x, mag, r.dbits, q, n, 1);
        lr_rot_plan p;
        T_OK(lr_rot_plan_make(n, 232448, LR_ROT_SLAB, 0, 0, &p));
        /* the default slab, the single CTA, and the narrowest slab the planner allows */
        int slabs[3] = { p.s, r.m, r.m / 256 > 4 ? r.m / 256 : 4 };
        for (int si = 0; si < 4; si++) {
            /* the three at 8 loads in flight, the default slab at 16 (the default, LEECHRT_ROT_UNROLL) */
            emulate(&r, q, slabs[si % 3], si < 3 ? 8 : 16, x, y);
            for (int i = 0; i < n; i++) {
                double e = fabs(y[i] - yd[i]) / mag[i];
                if (e > worst[si]) worst[si] = e, worst_n[si] = n;
                T_ASSERT(e <= 1e-6, "n=%d s=%d [%d]: f32 %.9g f64 %.17g rel %.3g", n, slabs[si % 3], i, y[i], yd[i], e);
            }
        }
        free(x), free(y), free(mag), free(xd), free(yd);
        lr_rot_free(&r);
    }
    printf("    %d widths, worst emulated f32 error: default slab %.3g (n=%d), single %.3g (n=%d), m/256 slab %.3g (n=%d), "
           "default slab with 16 loads in flight %.3g (n=%d)\n",
           nw, worst[0], worst_n[0], worst[1], worst_n[1], worst[2], worst_n[2], worst[3], worst_n[3]);
    return T_PASS;
}

/* The add + RMSNorm kernel's sum of squares of v (slab s): each float4 item
 * sums its m/s float4 in one f32 chain, the items are added pairwise (the
 * kernel: per-thread chains, warp shuffles, a tree over warps). */
static float sum_squares(const float *v, int n, int m, int s)
{
    int k = n / m, items = k * s / 4, P = m / s;
    float *part = malloc(sizeof(float) * (size_t)items);
    for (int it = 0; it < items; it++) {
        int row = it / (s / 4), c4 = it % (s / 4);
        float a = 0;
        for (int j = 0; j < P; j++)
            for (int c = 0; c < 4; c++) {
                float x = v[row * m + j * s + 4 * c4 + c];
                a += x * x;
            }
        part[it] = a;
    }
    for (int h = 1; h < items; h <<= 1)
        for (int i = 0; i + h < items; i += 2 * h) part[i] += part[i + h];
    float ss = part[0];
    free(part);
    return ss;
}

/* The fused input transform (rotate_slab.cu LR_XFORM 1), emulated: the
 * transform in f32 as the kernel makes it (1/sqrtf for rsqrtf), the norm's
 * scale folded into the f32 q table, then the slab
 * emulation, against the descriptors' f64 references on the scale
 * lr_call_verify uses: within 1e-6 like the plain rotation. The norm's scale
 * error (f32 sum of squares, rsqrt) reaches every output, and where |y_i| is
 * a few times its l2 scale it counts a few times: the sum must be a tree (one
 * f32 chain over n = 4096 already gives 1.2e-6). The GPU test allows 2e-6
 * for the device's approximate rsqrtf. */
static int test_xform_emulated_error(void)
{
    int w[128], nw = all_widths(w);
    double worst = 0;
    int worst_n = 0;
    const float eps = 1e-6f;
    for (int t = 0; t < nw; t++) {
        int n = w[t];
        lr_rot r;
        T_OK(lr_rot_init(&r, n, 2000 + (uint64_t)n));
        float *x = malloc(4 * n), *add = malloc(4 * n), *wt = malloc(4 * n), *in = malloc(4 * n), *xs = malloc(4 * n),
              *y = malloc(4 * n), *ref = malloc(4 * n), *mag = malloc(4 * n), q[31 * 31], qr[31 * 31];
        lr_rng g;
        lr_rng_seed(&g, (uint64_t)n + 7);
        lr_fill_random(LR_E_F32, x, (size_t)n, &g, 1.0);
        lr_fill_random(LR_E_F32, add, (size_t)n, &g, 1.0);
        lr_fill_random(LR_E_F32, wt, (size_t)n, &g, 1.0);
        lr_rot_qtable(&r, q);
        lr_rot_plan p;
        T_OK(lr_rot_plan_make(n, 232448, LR_ROT_SLAB, 0, 0, &p));
        int slabs[2] = { p.s, r.m };
        lr_rotate_norm_host(x, add, wt, xs, ref, r.dbits, q, n, 1, eps);
        lr_rotate_norm_host_mag(x, add, wt, xs, mag, r.dbits, q, n, 1, eps);
        for (int si = 0; si < 2; si++) {
            for (int i = 0; i < n; i++) xs[i] = x[i] + add[i], in[i] = xs[i] * wt[i];
            float rs = 1.f / sqrtf(sum_squares(xs, n, r.m, slabs[si]) / n + eps);
            for (int i = 0; i < r.k * r.k; i++) qr[i] = q[i] * rs;
            emulate(&r, qr, slabs[si], si == 0 ? p.unroll : 8, in, y); /* the plan's loads in flight */
            for (int i = 0; i < n; i++) {
                double e = fabs(y[i] - ref[i]) / mag[i];
                if (e > worst) worst = e, worst_n = n;
                T_ASSERT(e <= 1e-6, "n=%d s=%d [%d]: f32 %.9g f64 %.9g rel %.3g", n, slabs[si], i, y[i], ref[i], e);
            }
        }
        free(x), free(add), free(wt), free(in), free(xs), free(y), free(ref), free(mag);
        lr_rot_free(&r);
    }
    printf("    %d widths, default slab and single CTA: worst emulated f32 error add+rmsnorm %.3g (n=%d)\n", nw, worst,
           worst_n);
    return T_PASS;
}

/* A valid plan for every width under each budget; the single-CTA plan exactly
 * when the f32 vector (and the k*k table) fits. */
static int test_planner(void)
{
    int w[128], nw = all_widths(w);
    for (int bi = 0; bi < 3; bi++)
        for (int t = 0; t < nw; t++) {
            int n = w[t], budget = budgets[bi];
            lr_rot_plan p;
            for (int mode = LR_ROT_AUTO; mode <= LR_ROT_SLAB; mode++) {
                int rc = lr_rot_plan_make(n, budget, mode, 0, 0, &p);
                int fits = (long)(n + p.k * p.k) * 4 <= budget;
                if (mode == LR_ROT_SINGLE && !fits) {
                    T_ASSERT(rc == LR_ERANGE, "n=%d budget %d: single accepted", n, budget);
                    lr_clear_error();
                    continue;
                }
                T_ASSERT(rc == LR_OK, "n=%d budget %d mode %d: %s", n, budget, mode, lr_errmsg());
                T_ASSERT(p.smem <= (unsigned)budget && p.s >= 4 && !(p.s & (p.s - 1)) && p.s * p.ctas == p.m,
                         "n=%d: bad plan s=%d ctas=%d smem=%u", n, p.s, p.ctas, p.smem);
                T_ASSERT(p.threads % 32 == 0 && p.threads >= 32 && p.threads <= 1024, "n=%d threads %d", n, p.threads);
                T_ASSERT(p.smem == (unsigned)(p.k * p.s + p.k * p.k) * 4, "n=%d smem %u", n, p.smem);
                if (mode == LR_ROT_SINGLE) T_ASSERT(p.s == p.m && p.ctas == 1, "n=%d single is not one CTA", n);
                else T_ASSERT(p.mode == LR_ROT_SLAB, "n=%d auto did not pick slab", n);
            }
        }
    lr_rot_plan p;
    /* the default slabs: wider while more than 8 CTAs and at most 640 items
       (17408: 128 columns, 8 CTAs of 544; 25600 stays at 16 CTAs of 416;
       5120 keeps its 4 CTAs of 320) */
    static const int want[][4] = { { 5120, 256, 4, 320 },     { 17408, 128, 8, 544 }, { 25600, 64, 16, 416 },
                                   { 27648, 64, 16, 448 },    { 12288, 512, 8, 384 }, { 9728, 64, 8, 320 },
                                   { 31 * 1024, 64, 16, 512 }, { 32768, 2048, 16, 512 } };
    for (int i = 0; i < 8; i++) {
        T_OK(lr_rot_plan_make(want[i][0], 232448, LR_ROT_AUTO, 0, 0, &p));
        T_ASSERT(p.s == want[i][1] && p.ctas == want[i][2] && p.threads == want[i][3],
                 "%d: s %d, %d CTAs, %d threads (want %d, %d, %d)", want[i][0], p.s, p.ctas, p.threads, want[i][1],
                 want[i][2], want[i][3]);
    }
    /* the gather's loads in flight: min(ctas, LEECHRT_ROT_UNROLL), a divisor of ctas */
    T_OK(lr_rot_plan_make(17408, 232448, LR_ROT_SLAB, 64, 0, &p));
    T_ASSERT(p.ctas == 16 && p.unroll == 16, "17408 at 64: %d CTAs, unroll %d (want 16, 16)", p.ctas, p.unroll);
    T_OK(lr_rot_unroll_set("LEECHRT_ROT_UNROLL", "8"));
    T_OK(lr_rot_plan_make(17408, 232448, LR_ROT_SLAB, 64, 0, &p));
    T_ASSERT(p.unroll == 8, "17408 at most 8: unroll %d", p.unroll);
    T_OK(lr_rot_unroll_set("LEECHRT_ROT_UNROLL", "6"));
    T_OK(lr_rot_plan_make(17408, 232448, LR_ROT_SLAB, 64, 0, &p));
    T_ASSERT(p.unroll == 4, "17408 at most 6: unroll %d, want 4 (divides 16)", p.unroll);
    T_ASSERT(lr_rot_unroll_set("GPU engine: LEECHRT_ROT_UNROLL", "17") == LR_EINVAL &&
                 strstr(lr_errmsg(), "LEECHRT_ROT_UNROLL"), "17 accepted: %s", lr_errmsg());
    T_ASSERT(lr_rot_unroll_set("LEECHRT_ROT_UNROLL", "x") == LR_EINVAL && lr_rot_unroll_max == 6, "garbage taken");
    T_OK(lr_rot_unroll_set("LEECHRT_ROT_UNROLL", "16"));
    lr_clear_error();
    /* The cases the issue is about: 14B fits 101,376 B in one CTA, 32B does not. */
    T_OK(lr_rot_plan_make(17408, 101376, LR_ROT_SINGLE, 0, 0, &p));
    T_ASSERT(lr_rot_plan_make(25600, 101376, LR_ROT_SINGLE, 0, 0, &p) == LR_ERANGE, "25600 single under 101376");
    T_ASSERT(lr_rot_plan_make(17408, 49152, LR_ROT_SINGLE, 0, 0, &p) == LR_ERANGE, "17408 single under 49152");
    lr_clear_error();
    T_OK(lr_rot_plan_make(25600, 101376, LR_ROT_SLAB, 0, 0, &p));
    T_ASSERT(p.smem < 49152, "25600 slab needs %u B", p.smem);
    /* tiny budgets shrink the slab; below ~4 KB there is no plan */
    T_OK(lr_rot_plan_make(27648, 8192, LR_ROT_AUTO, 0, 0, &p));
    T_ASSERT(p.smem <= 8192, "8 KB budget: %u", p.smem);
    T_ASSERT(lr_rot_plan_make(31 * 1024, 2048, LR_ROT_AUTO, 0, 0, &p) == LR_ERANGE, "2 KB accepted");
    lr_clear_error();
    return T_PASS;
}

/* LEECHRT_ROT_SLAB's list: pairs taken per width, unset clears it, garbage
 * refused naming the setting (and the list left empty); a slab that does not
 * suit its width is the planner's to refuse. */
static int test_slab_setting(void)
{
    T_OK(lr_rot_slab_set("LEECHRT_ROT_SLAB", "5120:128;17408:32"));
    T_ASSERT(lr_rot_slab_for(5120) == 128 && lr_rot_slab_for(17408) == 32 && lr_rot_slab_for(4096) == 0,
             "lookup %d %d %d", lr_rot_slab_for(5120), lr_rot_slab_for(17408), lr_rot_slab_for(4096));
    T_OK(lr_rot_slab_set("X", NULL));
    T_ASSERT(lr_rot_slab_for(5120) == 0, "unset kept %d", lr_rot_slab_for(5120));
    const char *bad[] = { "", "5120", "5120:", ":128", "5120:100", "5120:128;", ";5120:128", "a:128", "5120:12x",
                          "5120:128;5120:64", "5120:2", "5120:65536", "0:128", "5120:128,17408:32",
                          "1:4;2:4;3:4;4:4;5:4;6:4;7:4;8:4;9:4" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_OK(lr_rot_slab_set("X", "5120:256"));
        T_ASSERT(lr_rot_slab_set("LEECHRT_ROT_SLAB", bad[i]) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_ROT_SLAB"), "'%s': %s", bad[i], lr_errmsg());
        T_ASSERT(lr_rot_slab_for(5120) == 0, "'%s' left a slab", bad[i]);
    }
    T_OK(lr_rot_slab_set("X", "1:4;2:4;3:4;4:4;5:4;6:4;7:4;8:4"));
    T_ASSERT(lr_rot_slab_for(8) == 4, "eighth pair");
    lr_rot_slab_set("X", NULL);
    lr_rot_plan p;
    T_ASSERT(lr_rot_plan_make(5120, 232448, LR_ROT_SLAB, 2048, 0, &p) == LR_EINVAL, "slab 2048 of m 1024 taken");
    T_OK(lr_rot_plan_make(5120, 232448, LR_ROT_SLAB, 128, 0, &p));
    T_ASSERT(p.ctas == 8 && p.threads == 160 && p.unroll == 8, "5120 at 128: %d CTAs %d threads unroll %d", p.ctas,
             p.threads, p.unroll);
    T_OK(lr_rot_plan_make(17408, 232448, LR_ROT_SLAB, 32, 0, &p));
    T_ASSERT(p.ctas == 32 && p.threads == 160 && p.unroll == 16, "17408 at 32: %d CTAs %d threads unroll %d", p.ctas,
             p.threads, p.unroll);
    lr_clear_error();
    /* the slabs the 14B step is measured at compile, plain and with the norm */
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    char dir[] = "/tmp/lrrotslab.XXXXXX";
    T_ASSERT(mkdtemp(dir), "mkdtemp");
    lr_jit_set_cache_dir(dir);
    static const int cand[][2] = { { 5120, 64 }, { 5120, 128 }, { 5120, 512 }, { 17408, 32 }, { 17408, 128 } };
    for (int i = 0; i < 5; i++)
        for (int xf = LR_ROT_X_PLAIN; xf <= LR_ROT_X_NORM; xf++) {
            T_OK(lr_rot_plan_make(cand[i][0], 232448, LR_ROT_SLAB, cand[i][1], 0, &p));
            lr_jit_spec sp;
            T_OK(lr_rot_plan_spec_xform(&p, xf, &sp));
            void *cubin;
            size_t len;
            T_OK(lr_jit_cubin(&sp, "sm_90", 13000, &cubin, &len, NULL));
            free(cubin);
        }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_ASSERT(system(cmd) == 0, "%s", cmd);
    return T_PASS;
}

/* Every distinct specialization the planner makes for the widths the GPU
 * test runs, plus the fused GEMVs of the Qwen groups, compiles for sm_90. */
static int test_planned_specs_compile(void)
{
    T_SKIP_IF(!lr_nvrtc_available(), "NVRTC not installed");
    char dir[] = "/tmp/lrrot.XXXXXX";
    T_ASSERT(mkdtemp(dir), "mkdtemp");
    lr_jit_set_cache_dir(dir);
    static const int extra[] = { 12, 124, 256, 32768, 3 * 1024, 31 * 1024 };
    int compiled = 0;
    char seen[64][160];
    int nseen = 0;
    for (int bi = 0; bi < 3; bi++)
        for (int t = 0; t < NQ + 6; t++)
            for (int mode = LR_ROT_SINGLE; mode <= LR_ROT_SLAB; mode++) {
                int n = t < NQ ? qwen_widths[t] : extra[t - NQ];
                lr_rot_plan p;
                if (lr_rot_plan_make(n, budgets[bi], mode, 0, 0, &p)) { lr_clear_error(); continue; }
                lr_jit_spec s;
                lr_rot_plan_spec(&p, &s);
                char name[160];
                T_OK(lr_jit_kernel_name(&s, name, sizeof name));
                int dup = 0;
                for (int i = 0; i < nseen; i++) dup |= !strcmp(seen[i], name);
                if (dup || nseen == 64) continue;
                snprintf(seen[nseen++], sizeof seen[0], "%s", name);
                void *cubin;
                size_t len;
                T_OK(lr_jit_cubin(&s, "sm_90", 13000, &cubin, &len, NULL));
                free(cubin);
                compiled++;
            }
    /* the input transforms on the default plan of each Qwen width */
    for (int t = 0; t < NQ; t++)
        for (int xf = LR_ROT_X_NORM; xf < LR_ROT_NX; xf++) {
            lr_rot_plan p;
            T_OK(lr_rot_plan_make(qwen_widths[t], 232448, LR_ROT_AUTO, 0, 0, &p));
            lr_jit_spec s;
            T_OK(lr_rot_plan_spec_xform(&p, xf, &s));
            T_ASSERT(lr_jit_spec_get(&s, "xform", -1) == xf, "no xform in the spec");
            lr_jit_spec plain, plain2;
            lr_rot_plan_spec(&p, &plain);
            T_OK(lr_rot_plan_spec_xform(&p, LR_ROT_X_PLAIN, &plain2));
            char a[160], b[160];
            T_OK(lr_jit_kernel_name(&plain, a, sizeof a));
            T_OK(lr_jit_kernel_name(&plain2, b, sizeof b));
            T_ASSERT(!strcmp(a, b) && lr_jit_spec_get(&plain2, "xform", -1) == -1, "plain kernel renamed: %s", b);
            void *cubin;
            size_t len;
            T_OK(lr_jit_cubin(&s, "sm_90", 13000, &cubin, &len, NULL));
            free(cubin);
            compiled++;
        }
    /* fused: 14B q|k|v (7168 x 5120) and 4B gate|up (19456 x 2560) */
    static const int fr[][2] = { { 7168, 5120 }, { 19456, 2560 } };
    for (int i = 0; i < 2; i++) {
        lr_jit_spec s;
        lr_launch_geom g;
        T_OK(lr_gemv_f16_rot_spec(&s, &g, fr[i][0], fr[i][1], lr_gemv_f16_default_geom(fr[i][0], fr[i][1]), 232448, 264));
        void *cubin;
        size_t len;
        T_OK(lr_jit_cubin(&s, "sm_90", 13000, &cubin, &len, NULL));
        free(cubin);
        compiled++;
    }
    printf("    %d specializations compiled\n", compiled);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir); /* (each run left its cubins behind) */
    if (system(cmd)) { /* a leftover temp folder is not a failure */ }
    return T_PASS;
}

T_MAIN(T_CASE(test_factor), T_CASE(test_orthogonal), T_CASE(test_dense), T_CASE(test_blocks), T_CASE(test_deterministic),
       T_CASE(test_host_kernel_reference), T_CASE(test_emulated_error), T_CASE(test_xform_emulated_error),
       T_CASE(test_planner), T_CASE(test_slab_setting),
       T_CASE(test_planned_specs_compile))
