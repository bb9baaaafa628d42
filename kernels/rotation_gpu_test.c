/* Rotation kernels on the GPU (skipped without one): every width, both plans,
 * verified through lr_call_verify against the f64 host reference and then
 * against the seed's f64 rotation, relative error <= 1e-6; the 14B and 32B
 * widths under the 101,376 B (L40S-class) and 49,152 B budgets with the full
 * vector rotated; batches; graph replay; the fused and separate GEMV feeds;
 * the input transforms fused into the gather (add + RMSNorm, SwiGLU), whose
 * host halves (descriptor reference vs an independent f64 composition) run
 * without a GPU too.
 * Seeds match kernels/rotation_test.c's f32 emulation (rotation 1000 + n,
 * input n), so that CPU test predicts these errors. */
#include "jit/jit.h"
#include "kernels/rotation.h"
#include "test/t.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-6

static int no_gpu(void)
{
    if (lr_cu_init(0) == LR_OK) return 0;
    lr_clear_error();
    return 1;
}

static const int qwen_widths[] = { 2560, 4096, 5120, 8192, 9728, 12288, 17408, 25600, 27648 };
#define NQ ((int)(sizeof qwen_widths / sizeof qwen_widths[0]))

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

/* Plans (slab width s, 0 = the default), verifies and reports one rotation;
 * LR_ERANGE passes through (no plan). */
static int run(int n, int mode, int s, int batch, double *err, lr_rot_plan *plan)
{
    lr_rot r;
    lr_rot_dev d;
    int rc = lr_rot_init(&r, n, 1000 + (uint64_t)n);
    if (rc) return rc;
    rc = lr_rot_dev_create(&d, &r, mode, s, 0);
    if (!rc) {
        rc = lr_rot_dev_verify(&d, &r, batch, (uint64_t)n, TOL, err);
        if (plan) *plan = d.plan;
        lr_rot_dev_destroy(&d);
    }
    lr_rot_free(&r);
    return rc;
}

static int test_every_width(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    lr_cu_set_smem_budget(0);
    int w[128], nw = all_widths(w), runs = 0;
    double worst = 0;
    for (int t = 0; t < nw; t++)
        for (int mode = LR_ROT_SINGLE; mode <= LR_ROT_SLAB; mode++) {
            double err = 0;
            lr_rot_plan p;
            int rc = run(w[t], mode, 0, 1, &err, &p);
            if (rc == LR_ERANGE && mode == LR_ROT_SINGLE) { lr_clear_error(); continue; }
            T_ASSERT(rc == LR_OK, "n=%d %s: %s", w[t], lr_rot_mode_name(mode), lr_errmsg());
            if (err > worst) worst = err;
            runs++;
        }
    printf("    %d widths, %d runs, worst rel err %.3g (budget %d B)\n", nw, runs, worst, lr_cu_smem_budget());
    return T_PASS;
}

/* The widths the issue is about, under a smaller card's budget: the whole
 * vector is rotated (every output element verified), no trimming. */
static int budget_case(int budget)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    T_ASSERT(budget <= lr_cu_device()->smem_optin, "device bound %d below %d", lr_cu_device()->smem_optin, budget);
    lr_cu_set_smem_budget(budget);
    for (int t = 0; t < NQ; t++) {
        int n = qwen_widths[t];
        for (int mode = LR_ROT_AUTO; mode <= LR_ROT_SLAB; mode++) {
            double err = 0;
            lr_rot_plan p;
            int rc = run(n, mode, 0, 1, &err, &p);
            int fits = (long)(n + (n / (n & -n)) * (n / (n & -n))) * 4 <= budget;
            if (mode == LR_ROT_SINGLE && !fits) {
                T_ASSERT(rc == LR_ERANGE, "n=%d: single CTA accepted under %d B", n, budget);
                lr_clear_error();
                continue;
            }
            T_ASSERT(rc == LR_OK, "n=%d %s under %d B: %s", n, lr_rot_mode_name(mode), budget, lr_errmsg());
            T_ASSERT(p.smem <= (unsigned)budget, "plan uses %u B", p.smem);
            if (n == 17408 || n == 25600)
                printf("    n=%d %-6s under %d B: s=%d ctas=%d threads=%d smem=%u B, rel err %.3g\n", n,
                       lr_rot_mode_name(p.mode), budget, p.s, p.ctas, p.threads, p.smem, err);
        }
    }
    lr_cu_set_smem_budget(0);
    return T_PASS;
}

/* LEECHRT_ROT_UNROLL=8 (the default is 16, which every other case runs):
 * every Qwen3 width's slab with up to 8 gather loads in flight per thread,
 * every output verified. */
static int test_unroll8(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    lr_cu_set_smem_budget(0);
    T_OK(lr_rot_unroll_set("LEECHRT_ROT_UNROLL", "8"));
    int rc = LR_OK;
    for (int t = 0; t < NQ && !rc; t++) {
        double err = 0;
        lr_rot_plan p;
        rc = run(qwen_widths[t], LR_ROT_SLAB, 0, 1, &err, &p);
        if (!rc && qwen_widths[t] == 17408) printf("    n=17408 slab, unroll %d: rel err %.3g\n", p.unroll, err);
        if (!rc && p.unroll != (p.ctas < 8 ? p.ctas : 8)) rc = LR_FAIL(LR_EINVAL, "n=%d: unroll %d", p.n, p.unroll);
    }
    lr_rot_unroll_set("LEECHRT_ROT_UNROLL", "16");
    T_ASSERT(rc == LR_OK, "%s", lr_errmsg());
    return T_PASS;
}

static int test_budget_l40s(void) { return budget_case(101376); }
static int test_budget_48k(void) { return budget_case(49152); }

static int test_batch(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    lr_cu_set_smem_budget(0);
    static const int ns[] = { 12, 5120, 25600, 32768 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
        for (int mode = LR_ROT_SINGLE; mode <= LR_ROT_SLAB; mode++) {
            double err;
            T_OK(run(ns[t], mode, 0, 3, &err, NULL));
        }
    return T_PASS;
}

/* A captured graph replays to the same bits as a direct launch. */
static int test_graph_replay(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    lr_cu_set_smem_budget(0);
    int n = 25600;
    lr_rot r;
    lr_rot_dev d;
    T_OK(lr_rot_init(&r, n, 5));
    T_OK(lr_rot_dev_create(&d, &r, LR_ROT_AUTO, 0, 0));
    float *x = malloc(4 * n), *a = malloc(4 * n), *b = malloc(4 * n);
    lr_rng g;
    lr_rng_seed(&g, 9);
    lr_fill_random(LR_E_F32, x, (size_t)n, &g, 1.0);
    CUdeviceptr dx, dy;
    CUstream s;
    CUgraphExec ge;
    T_OK(lr_cu_alloc(&dx, 4 * n));
    T_OK(lr_cu_alloc(&dy, 4 * n));
    T_OK(lr_cu_h2d(dx, x, 4 * n));
    T_OK(lr_cu_stream_create(&s));
    /* both runs into a poisoned y, and the direct one must have written all of it (two runs
       that both wrote nothing agreed) */
    T_OK(lr_cu_memset8(dy, 0xff, 4 * n));
    T_OK(lr_rot_dev_launch(&d, dx, dy, 1, s));
    T_OK(lr_cu_stream_sync(s));
    T_OK(lr_cu_d2h(a, dy, 4 * n));
    for (int i = 0; i < n; i++) T_ASSERT(a[i] == a[i], "y[%d] left unwritten by the direct launch", i);
    T_OK(lr_cu_memset8(dy, 0xff, 4 * n));
    T_OK(lr_cu_graph_begin(s));
    T_OK(lr_rot_dev_launch(&d, dx, dy, 1, s));
    T_OK(lr_cu_graph_end(s, &ge));
    for (int i = 0; i < 3; i++) T_OK(lr_cu_graph_launch(ge, s));
    T_OK(lr_cu_stream_sync(s));
    T_OK(lr_cu_d2h(b, dy, 4 * n));
    T_ASSERT(!memcmp(a, b, 4 * (size_t)n), "graph replay differs from a direct launch");
    lr_cu_graph_destroy(ge);
    lr_cu_stream_destroy(s);
    lr_cu_free(dx), lr_cu_free(dy);
    free(x), free(a), free(b);
    lr_rot_dev_destroy(&d);
    lr_rot_free(&r);
    return T_PASS;
}

/* One rotation feeding a row-concatenated GEMV, fused and separate, on the
 * Qwen3 groups (q|k|v, gate|up); under 49,152 B the fused form of the wide
 * inputs is refused (callers fall back) and the separate one still runs. */
static int test_fused_and_separate(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    static const int g[][2] = { { 6144, 2560 }, { 19456, 2560 }, { 7168, 5120 }, { 34816, 5120 }, { 10240, 5120 },
                                { 17408, 12288 } };
    static const int budgets[] = { 0, 49152 };
    for (int bi = 0; bi < 2; bi++) {
        lr_cu_set_smem_budget(budgets[bi]);
        for (size_t t = 0; t < sizeof g / sizeof g[0]; t++) {
            lr_rot r;
            T_OK(lr_rot_init(&r, g[t][1], 77 + t));
            for (int fused = 0; fused < 2; fused++) {
                lr_rot_proj p;
                int rc = lr_rot_proj_create(&p, &r, g[t][0], 1, fused, 3 + t);
                if (fused && rc == LR_ERANGE && lr_gemv_f16_rot_smem(g[t][1]) + 4096 > (unsigned)lr_cu_smem_budget()) {
                    lr_clear_error();
                    continue;
                }
                T_ASSERT(rc == LR_OK, "%dx%d %s: %s", g[t][0], g[t][1], fused ? "fused" : "separate", lr_errmsg());
                double err;
                rc = lr_rot_proj_verify(&p, &r, 11 + t, &err);
                T_ASSERT(rc == LR_OK, "%dx%d %s: %s", g[t][0], g[t][1], fused ? "fused" : "separate", lr_errmsg());
                printf("    %5dx%-5d %-8s budget %6d: rel err %.3g\n", g[t][0], g[t][1], fused ? "fused" : "separate",
                       lr_cu_smem_budget(), err);
                lr_rot_proj_destroy(&p);
            }
            lr_rot_free(&r);
        }
    }
    lr_cu_set_smem_budget(0);
    return T_PASS;
}

/* ---- input transforms fused into the gather (rotate_slab.cu LR_XFORM) ---- */

/* The plain bound plus the transform's own f32 roundings, as
 * kernels/rotation_test.c emulates them (<= 1e-6), and room for the device's
 * approximate rsqrtf. */
#define XTOL 2e-6

static const int xform_widths[] = { 2560, 4096, 5120, 9728, 17408, 31 * 128, 12 };
#define NXW ((int)(sizeof xform_widths / sizeof xform_widths[0]))

static size_t dbit_words(int n) { return ((size_t)n + 63) / 64 * 2; }

/* One case's inputs and the independent reference: the transformed input in
 * f64 (v = x + add rounded to f32 as the kernel stores it) through
 * lr_rot_apply from the seed (f64 Q_odd, not the kernels' f32 table). */
typedef struct xcase {
    int n, batch, with_add;
    lr_rot r;
    float *x, *add, *w, *xsum, *y, *mag, q[LR_ROT_MAX_K * LR_ROT_MAX_K];
    float *want_xsum; /* f32 x + add */
    double *want_y;   /* f64 */
    lr_arg a[10];
} xcase;

static void xcase_free(xcase *c)
{
    free(c->x), free(c->add), free(c->w), free(c->xsum), free(c->y), free(c->mag);
    free(c->want_xsum), free(c->want_y);
    lr_rot_free(&c->r);
}

static int xcase_make(xcase *c, int n, int batch, int with_add, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->n = n, c->batch = batch, c->with_add = with_add;
    size_t nb = (size_t)n * batch;
    T_OK(lr_rot_init(&c->r, n, 3000 + (uint64_t)n));
    lr_rot_qtable(&c->r, c->q);
    c->x = malloc(4 * nb), c->add = malloc(4 * nb), c->w = malloc(4 * (size_t)n);
    c->xsum = malloc(4 * nb), c->y = malloc(4 * nb), c->mag = malloc(4 * nb), c->want_xsum = malloc(4 * nb);
    c->want_y = malloc(8 * nb);
    double *t = malloc(8 * (size_t)n);
    T_ASSERT(c->x && c->add && c->w && c->xsum && c->y && c->mag && c->want_xsum && c->want_y && t, "oom");
    lr_rng g;
    lr_rng_seed(&g, seed);
    lr_fill_random(LR_E_F32, c->x, nb, &g, 1.0);
    lr_fill_random(LR_E_F32, c->add, nb, &g, 1.0);
    lr_fill_random(LR_E_F32, c->w, (size_t)n, &g, 1.0);
    const float eps = 1e-6f;
    for (int b = 0; b < batch; b++) {
        size_t row = (size_t)b * n;
        double ss = 0;
        for (int i = 0; i < n; i++) {
            float v = with_add ? c->x[row + i] + c->add[row + i] : c->x[row + i];
            c->want_xsum[row + i] = v;
            ss += (double)v * v;
        }
        double rs = 1.0 / sqrt(ss / n + eps);
        for (int i = 0; i < n; i++) t[i] = (double)c->want_xsum[row + i] * c->w[i] * rs;
        T_OK(lr_rot_apply(&c->r, t, c->want_y + row));
    }
    free(t);
    lr_arg *a = c->a;
    a[0].host = c->x, a[0].count = nb;
    if (with_add) a[1].host = c->add, a[1].count = nb; /* else a null pointer on both sides */
    a[2].host = c->w, a[2].count = (size_t)n;
    a[3].host = c->xsum, a[3].count = nb;
    a[4].host = c->y, a[4].count = nb;
    a[5].host = c->r.dbits, a[5].count = dbit_words(n);
    a[6].host = c->q, a[6].count = (size_t)c->r.k * c->r.k;
    a[7].v.i32 = n, a[8].v.i32 = batch, a[9].v.f32 = eps;
    return T_PASS;
}

/* c->y (and c->xsum) against the independent reference: y within tol on the
 * l2 scale of the terms, xsum bit-exact. The scale comes from the host. */
static int xcase_check(xcase *c, double tol, const char *what, double *worst)
{
    size_t nb = (size_t)c->n * c->batch;
    float *dummy = malloc(4 * nb);
    T_ASSERT(dummy, "oom");
    lr_rotate_norm_host_mag(c->x, c->with_add ? c->add : NULL, c->w, dummy, c->mag, c->r.dbits, c->q, c->n, c->batch,
                            c->a[9].v.f32);
    free(dummy);
    for (size_t i = 0; i < nb; i++) {
        double e = fabs(c->y[i] - c->want_y[i]) / fmax(c->mag[i], 1e-30);
        if (e > *worst) *worst = e;
        T_ASSERT(e <= tol, "%s n=%d batch %d add %d: y[%zu] = %.9g, f64 %.9g, rel err %.3g", what, c->n, c->batch,
                 c->with_add, i, c->y[i], c->want_y[i], e);
        T_ASSERT(!memcmp(&c->xsum[i], &c->want_xsum[i], 4), "%s n=%d: xsum[%zu] = %.9g, x + add = %.9g", what, c->n, i,
                 c->xsum[i], c->want_xsum[i]);
    }
    return T_PASS;
}

/* Every width, batches 1 and 2, with and without the residual add (mode 1):
 * the descriptor's host reference (through libffi, as lr_call_verify calls
 * it) against the independent one; then, with a GPU, each plan's kernel
 * through lr_call_verify (outputs NaN-poisoned first, every element of y and
 * xsum compared) and against the independent reference. */
static int test_xform_norm(void)
{
    const int xform = LR_ROT_X_NORM;
    int gpu = !no_gpu(), runs = 0;
    double worst_host = 0, worst_gpu = 0;
    if (gpu) lr_cu_set_smem_budget(0);
    for (int t = 0; t < NXW; t++)
        for (int batch = 1; batch <= 2; batch++)
            for (int with_add = 1; with_add >= 0; with_add--) {
                int n = xform_widths[t];
                xcase c;
                if (xcase_make(&c, n, batch, with_add, 17 * (uint64_t)n + 2 * batch + with_add) != T_PASS) {
                    xcase_free(&c);
                    return T_FAIL;
                }
                T_OK(lr_call_host(&lr_rotate_norm_desc, c.a));
                int rc = xcase_check(&c, 3e-7, "host reference", &worst_host);
                for (int mode = LR_ROT_SINGLE; gpu && rc == T_PASS && mode <= LR_ROT_SLAB; mode++) {
                    lr_rot_dev d;
                    int r2 = lr_rot_dev_create(&d, &c.r, mode, 0, 0);
                    if (r2 == LR_ERANGE && mode == LR_ROT_SINGLE) { lr_clear_error(); continue; }
                    if (!r2) r2 = lr_rot_dev_enable(&d, xform);
                    lr_verify_report rep;
                    if (!r2)
                        r2 = lr_call_verify(&lr_rotate_norm_desc, d.fx[xform], c.a, lr_rot_xform_geom(&d.plan, xform, batch),
                                            XTOL, &rep);
                    if (r2) {
                        fprintf(stderr, "    xform %d n=%d %s batch %d add %d: %s\n", xform, n, lr_rot_mode_name(mode),
                                batch, with_add, lr_errmsg());
                        rc = T_FAIL;
                    }
                    if (rc == T_PASS) rc = xcase_check(&c, XTOL, lr_rot_mode_name(mode), &worst_gpu);
                    lr_rot_dev_destroy(&d);
                    runs++;
                }
                xcase_free(&c);
                if (rc != T_PASS) return rc;
            }
    printf("    xform %d: %d widths, host reference worst rel err %.3g", xform, NXW, worst_host);
    if (gpu) printf("; %d GPU runs, worst rel err %.3g (bound %.0e)", runs, worst_gpu, XTOL);
    printf("\n");
    T_SKIP_IF(!gpu, "no GPU (the host references were checked)");
    return T_PASS;
}

/* The launch API the engine uses (lr_rot_dev_launch_norm on the
 * default plan), graph-captured and replayed, against the same references;
 * refusals: a variant not enabled, xsum aliasing x. */
static int test_xform_launch(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    lr_cu_set_smem_budget(0);
    static const int ns[] = { 2560, 5120 };
    for (int t = 0; t < 2; t++)
        {
            const int xform = LR_ROT_X_NORM, n = ns[t];
            xcase c;
            if (xcase_make(&c, n, 1, 1, 99 + (uint64_t)n) != T_PASS) { xcase_free(&c); return T_FAIL; }
            lr_rot_dev d;
            T_OK(lr_rot_dev_create(&d, &c.r, LR_ROT_AUTO, 0, 0));
            CUdeviceptr dx, dadd, dw, dxs, dy;
            CUstream s;
            CUgraphExec ge;
            T_OK(lr_cu_alloc(&dx, 4 * n));
            T_OK(lr_cu_alloc(&dadd, 4 * n));
            T_OK(lr_cu_alloc(&dw, 4 * n));
            T_OK(lr_cu_alloc(&dxs, 4 * n));
            T_OK(lr_cu_alloc(&dy, 4 * n));
            T_OK(lr_cu_h2d(dx, c.x, 4 * n));
            T_OK(lr_cu_h2d(dadd, c.add, 4 * n));
            T_OK(lr_cu_h2d(dw, c.w, 4 * n));
            T_OK(lr_cu_memset8(dy, 0xff, 4 * n));
            T_OK(lr_cu_memset8(dxs, 0xff, 4 * n));
            T_OK(lr_cu_stream_create(&s));
            int refused = lr_rot_dev_launch_norm(&d, dx, dadd, dw, dxs, 1e-6f, dy, 1, s);
            T_ASSERT(refused == LR_EINVAL, "launch of a variant not enabled accepted");
            lr_clear_error();
            T_OK(lr_rot_dev_enable(&d, xform));
            T_ASSERT(lr_rot_dev_launch_norm(&d, dx, dadd, dw, dx, 1e-6f, dy, 1, s) == LR_EINVAL, "xsum == x accepted");
            lr_clear_error();
            int was = lr_cu_set_pdl(lr_cu_pdl_supported()); /* as the engine captures it */
            T_OK(lr_cu_graph_begin(s));
            T_OK(lr_rot_dev_launch_norm(&d, dx, dadd, dw, dxs, 1e-6f, dy, 1, s));
            T_OK(lr_cu_graph_end(s, &ge));
            lr_cu_set_pdl(was);
            for (int i = 0; i < 3; i++) T_OK(lr_cu_graph_launch(ge, s));
            T_OK(lr_cu_stream_sync(s));
            T_OK(lr_cu_d2h(c.y, dy, 4 * n));
            T_OK(lr_cu_d2h(c.xsum, dxs, 4 * n));
            double worst = 0;
            int rc = xcase_check(&c, XTOL, "graph", &worst);
            printf("    xform %d n=%d %s plan (s=%d, %d CTAs): graph replay rel err %.3g\n", xform, n,
                   lr_rot_mode_name(d.plan.mode), d.plan.s, d.plan.ctas, worst);
            lr_cu_graph_destroy(ge);
            lr_cu_stream_destroy(s);
            lr_cu_free(dx), lr_cu_free(dadd), lr_cu_free(dw), lr_cu_free(dxs), lr_cu_free(dy);
            lr_rot_dev_destroy(&d);
            xcase_free(&c);
            if (rc != T_PASS) return rc;
        }
    return T_PASS;
}

/* Slab widths other than the default (LEECHRT_ROT_SLAB, measured in the 14B
 * step): the plain rotation and the one with the residual add + RMSNorm,
 * every output against the f64 references. */
static int test_slab_widths(void)
{
    T_SKIP_IF(no_gpu(), "no GPU");
    lr_cu_set_smem_budget(0);
    static const int cand[][2] = { { 5120, 64 }, { 5120, 128 }, { 5120, 512 }, { 17408, 32 }, { 17408, 128 } };
    double worst = 0, worst_x = 0;
    for (int i = 0; i < 5; i++) {
        const int n = cand[i][0], sl = cand[i][1];
        lr_rot_dev d;
        lr_rot_plan p;
        double err = 0;
        int rc = run(n, LR_ROT_SLAB, sl, 1, &err, &p);
        T_ASSERT(rc == LR_OK && p.s == sl, "n=%d slab %d (plan %d): %s", n, sl, p.s, lr_errmsg());
        if (err > worst) worst = err;
        xcase c;
        if (xcase_make(&c, n, 1, 1, 29 * (uint64_t)n + (uint64_t)sl) != T_PASS) {
            xcase_free(&c);
            return T_FAIL;
        }
        rc = lr_rot_dev_create(&d, &c.r, LR_ROT_SLAB, sl, 0);
        if (!rc) rc = lr_rot_dev_enable(&d, LR_ROT_X_NORM);
        lr_verify_report rep;
        if (!rc)
            rc = lr_call_verify(&lr_rotate_norm_desc, d.fx[LR_ROT_X_NORM], c.a,
                                lr_rot_xform_geom(&d.plan, LR_ROT_X_NORM, 1), XTOL, &rep);
        int trc = rc ? T_FAIL : xcase_check(&c, XTOL, "slab", &worst_x);
        if (rc) fprintf(stderr, "    norm n=%d slab %d: %s\n", n, sl, lr_errmsg());
        lr_rot_dev_destroy(&d);
        xcase_free(&c);
        if (trc != T_PASS) return trc;
    }
    printf("    5 slab plans: worst rel err %.3g plain, %.3g with the norm\n", worst, worst_x);
    return T_PASS;
}

T_MAIN(T_CASE(test_every_width), T_CASE(test_budget_l40s), T_CASE(test_budget_48k), T_CASE(test_batch),
       T_CASE(test_graph_replay), T_CASE(test_fused_and_separate), T_CASE(test_xform_norm),
       T_CASE(test_xform_launch), T_CASE(test_unroll8), T_CASE(test_slab_widths))
