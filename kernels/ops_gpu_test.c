/* Every decode-step op against its f64 host reference on the GPU (skipped
 * without one), through the same verify path as the GEMVs: fresh random
 * inputs, outputs poisoned, every element compared. */
#include "jit/jit.h"
#include "kernels/ops.h"
#include "kernels/rotation.h"
#include "rt/sampler.h"
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>

#define NEED_GPU() T_SKIP_IF(lr_cu_init(0) != LR_OK, lr_errmsg())

static int run(const lr_kernel_desc *d, const char *op, int head_dim, lr_arg *a, lr_launch_geom g, double tol)
{
    lr_jit_spec s;
    lr_op_spec(&s, op, head_dim);
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    lr_verify_report rep;
    int rc = lr_call_verify(d, f, a, g, tol, &rep);
    T_ASSERT(rc == LR_OK, "%s", lr_errmsg());
    return T_PASS;
}

static lr_launch_geom geom(unsigned grid, unsigned threads)
{
    lr_launch_geom g = { .grid = { grid, 1, 1 }, .block = { threads, 1, 1 } };
    return g;
}

static int test_embed(void)
{
    NEED_GPU();
    int vocab = 1000, hidden = 5120, group = 64;
    int8_t *q = malloc((size_t)vocab * hidden);
    uint16_t *sb = malloc((size_t)vocab * hidden / group * 4);
    float *out = malloc(4u * hidden);
    lr_rng r;
    lr_rng_seed(&r, 1);
    lr_fill_random(LR_E_I8, q, (size_t)vocab * hidden, &r, 0);
    lr_fill_random(LR_E_F16, sb, (size_t)vocab * hidden / group * 2, &r, 0.1);
    int32_t tok = 737;
    lr_arg a[6] = { 0 };
    a[0].host = q, a[0].count = (size_t)vocab * hidden;
    a[1].host = sb, a[1].count = (size_t)vocab * hidden / group * 2;
    a[2].host = &tok, a[2].count = 1;
    a[3].host = out, a[3].count = (size_t)hidden;
    a[4].v.i32 = hidden, a[5].v.i32 = group;
    int rc = run(&lr_op_embed_desc, "op_embed_int8g", 0, a, geom(20, 256), 1e-6);
    free(q); free(sb); free(out);
    return rc;
}

static int test_add_rmsnorm(void)
{
    NEED_GPU();
    for (int with_y = 0; with_y < 2; with_y++) {
        int n = 5120;
        float *x = malloc(4u * n), *y = malloc(4u * n), *w = malloc(4u * n), *out = malloc(4u * n);
        lr_rng r;
        lr_rng_seed(&r, 2 + (uint64_t)with_y);
        lr_fill_random(LR_E_F32, x, (size_t)n, &r, 3);
        lr_fill_random(LR_E_F32, y, (size_t)n, &r, 3);
        lr_fill_random(LR_E_F32, w, (size_t)n, &r, 1);
        lr_arg a[6] = { 0 };
        a[0].host = x, a[0].count = (size_t)n;
        if (with_y) a[1].host = y, a[1].count = (size_t)n;
        a[2].host = w, a[2].count = (size_t)n;
        a[3].host = out, a[3].count = (size_t)n;
        a[4].v.i32 = n, a[5].v.f32 = 1e-6f;
        int rc = run(&lr_op_add_rmsnorm_desc, "op_add_rmsnorm", 0, a, geom(1, 1024), 1e-5);
        free(x); free(y); free(w); free(out);
        if (rc != T_PASS) return rc;
    }
    return T_PASS;
}

/* Random inputs of the RoPE kernels: qkv of nh + 2 nkv heads, the q/k norm
 * weights, and an f16 KV cache of pos + 1 rows. */
typedef struct {
    size_t nq, nc;
    float *qkv, *qn, *kn;
    uint16_t *kc, *vc;
} rope_in;

static int rope_in_make(rope_in *in, int nh, int nkv, int hd, int pos, uint64_t seed)
{
    in->nq = (size_t)(nh + 2 * nkv) * hd, in->nc = (size_t)(pos + 1) * nkv * hd;
    in->qkv = malloc(4 * in->nq), in->qn = malloc(4u * hd), in->kn = malloc(4u * hd);
    in->kc = malloc(2 * in->nc), in->vc = malloc(2 * in->nc);
    T_ASSERT(in->qkv && in->qn && in->kn && in->kc && in->vc, "out of memory");
    lr_rng r;
    lr_rng_seed(&r, seed);
    lr_fill_random(LR_E_F32, in->qkv, in->nq, &r, 2);
    lr_fill_random(LR_E_F32, in->qn, (size_t)hd, &r, 1.5);
    lr_fill_random(LR_E_F32, in->kn, (size_t)hd, &r, 1.5);
    lr_fill_random(LR_E_F16, in->kc, in->nc, &r, 1);
    lr_fill_random(LR_E_F16, in->vc, in->nc, &r, 1);
    return T_PASS;
}

static void rope_in_free(rope_in *in) { free(in->qkv), free(in->qn), free(in->kn), free(in->kc), free(in->vc); }

static int test_rope_kv(void)
{
    NEED_GPU();
    const int positions[] = { 0, 1, 37, 4095, 40000 };
    for (int k = 0; k < 5; k++)
        for (int norm = 0; norm < 2; norm++) {
            int nh = 40, nkv = 8, hd = 128, pos = positions[k];
            rope_in in;
            if (rope_in_make(&in, nh, nkv, hd, pos, 10 + (uint64_t)k)) return T_FAIL;
            int32_t p = pos;
            lr_arg a[11] = { 0 };
            a[0].host = in.qkv, a[0].count = in.nq;
            if (norm) a[1].host = in.qn, a[1].count = (size_t)hd, a[2].host = in.kn, a[2].count = (size_t)hd;
            a[3].host = in.kc, a[3].count = in.nc;
            a[4].host = in.vc, a[4].count = in.nc;
            a[5].host = &p, a[5].count = 1;
            a[6].v.i32 = nh, a[7].v.i32 = nkv, a[8].v.i32 = hd, a[9].v.f32 = 1e-6f, a[10].v.f32 = 1e6f;
            /* f16 cache entries: one rounding step of the head's scale */
            int rc = run(&lr_op_rope_kv_desc, "op_rope_kv", hd, a, geom((unsigned)(nh + nkv), 128), 2e-3);
            rope_in_free(&in);
            if (rc != T_PASS) { fprintf(stderr, "    pos %d norm %d\n", pos, norm); return rc; }
        }
    return T_PASS;
}

/* The fused q/k norm + RoPE + KV write + attention against the composition
 * of the two host references: Qwen3 (norms) and Llama (none) heads, head
 * dims 128 and 64, the first position, a few, hundreds and thousands; at
 * 256, 512 and 1024 threads (LEECHRT_ATT_THREADS) and split over positions
 * (LEECHRT_ATT_SPLITS), with the angles from the host table (the engine's
 * way, on the cases with norms) or taken in the kernel; with o's per-head
 * rotation (rotation kind 2) applied to the heads' outputs at positions
 * 1, 300 and 2047. */
static int test_rope_attention(void)
{
    NEED_GPU();
    const int positions[] = { 0, 1, 7, 300, 2047 };
    /* thread counts, then splits over positions (1024 threads, 128 per CTA
       round trip: position 300 takes 3 of 4 splits, 2047 all 16) */
    static const char *threads[] = { "256", "512", "1024", "1024", "1024", "256" },
                      *splits[] = { "1", "1", "1", "4", "16", "16" };
    for (int ti = 0; ti < 6; ti++)
    for (int hdi = 0; hdi < 3; hdi++) /* 128, 64 (lanes hold element pairs), 96 (one element per load) */
        for (int k = 0; k < 5; k++)
            for (int norm = 0; norm < 2; norm++) {
                int nh = 40, nkv = 8, hd = hdi == 2 ? 96 : hdi ? 64 : 128, pos = positions[k];
                rope_in in;
                if (rope_in_make(&in, nh, nkv, hd, pos, 30 + (uint64_t)k + 10 * (uint64_t)hdi)) return T_FAIL;
                float *out = malloc(4u * nh * hd);
                int32_t p = pos;
                lr_arg a[15] = { 0 };
                a[0].host = in.qkv, a[0].count = in.nq;
                if (norm) a[1].host = in.qn, a[1].count = (size_t)hd, a[2].host = in.kn, a[2].count = (size_t)hd;
                a[3].host = in.kc, a[3].count = in.nc;
                a[4].host = in.vc, a[4].count = in.nc;
                a[5].host = out, a[5].count = (size_t)nh * hd;
                a[6].host = &p, a[6].count = 1;
                /* the angles from the engine's table (with the norms) or the
                   kernel's own f64 pow/sincos (without) */
                double rope[512];
                lr_rope_table(rope, hd, pos, 1e6f);
                if (norm) a[7].host = rope, a[7].count = (size_t)hd;
                a[8].v.i32 = nh, a[9].v.i32 = nkv, a[10].v.f32 = 1e-6f, a[11].v.f32 = 1e6f;
                a[12].v.f32 = (float)(1.0 / sqrt(hd));
                lr_rot hr;
                float hq[LR_ROT_MAX_K * LR_ROT_MAX_K];
                const int rot = k != 0 && k != 2;
                T_OK(lr_rot_init_blocks(&hr, nh * hd, hd, 50 + (uint64_t)k));
                lr_rot_qtable(&hr, hq);
                if (rot) a[13].host = hr.dbits, a[13].count = (size_t)nh * hd / 32, a[14].host = hq,
                    a[14].count = (size_t)hr.k * hr.k;
                lr_op_attention_head_dim = hd;
                T_OK(lr_op_att_threads_set("X", threads[ti]));
                T_OK(lr_op_att_splits_set("X", splits[ti]));
                lr_launch_geom g = geom((unsigned)nh, lr_op_rope_attention_threads(hd));
                g.grid.y = (unsigned)lr_op_att_splits;
                /* twice: the per-head counters must be back at 0 after a launch */
                int rc = run(&lr_op_rope_attention_desc, "op_rope_attention", hd, a, g, 2e-3);
                if (rc == T_PASS && ti > 2) /* (the cache row pos it rewrote is not read: same inputs) */
                    rc = run(&lr_op_rope_attention_desc, "op_rope_attention", hd, a, g, 2e-3);
                rope_in_free(&in), free(out), lr_rot_free(&hr);
                lr_op_attention_head_dim = 128;
                lr_op_att_threads = LR_ATT_THREADS_DEFAULT, lr_op_att_splits = 1;
                if (rc != T_PASS) {
                    fprintf(stderr, "    head_dim %d pos %d norm %d threads %s splits %s rotation %d\n", hd, pos, norm,
                            threads[ti], splits[ti], rot);
                    return rc;
                }
            }
    return T_PASS;
}

/* op_attention against its host reference; with o's per-head rotation
 * (rotation kind 2) at positions 1 and 300 (head dims 128 and 96: one and
 * three Hadamard rows per head). */
static int test_attention(void)
{
    NEED_GPU();
    const int positions[] = { 0, 1, 7, 300, 2047 };
    for (int k = 0; k < 6; k++) {
        int nh = 32, nkv = 8, hd = k == 5 ? 96 : 128, pos = positions[k % 5];
        size_t nc = (size_t)(pos + 1) * nkv * hd;
        float *q = malloc(4u * nh * hd), *out = malloc(4u * nh * hd);
        uint16_t *kc = malloc(2 * nc), *vc = malloc(2 * nc);
        lr_rng r;
        lr_rng_seed(&r, 20 + (uint64_t)k);
        lr_fill_random(LR_E_F32, q, (size_t)nh * hd, &r, 1);
        lr_fill_random(LR_E_F16, kc, nc, &r, 1);
        lr_fill_random(LR_E_F16, vc, nc, &r, 1);
        int32_t p = pos;
        lr_arg a[10] = { 0 };
        a[0].host = q, a[0].count = (size_t)nh * hd;
        a[1].host = kc, a[1].count = nc;
        a[2].host = vc, a[2].count = nc;
        a[3].host = out, a[3].count = (size_t)nh * hd;
        a[4].host = &p, a[4].count = 1;
        a[5].v.i32 = nh, a[6].v.i32 = nkv, a[7].v.f32 = (float)(1.0 / sqrt(hd));
        lr_rot hr;
        float hq[LR_ROT_MAX_K * LR_ROT_MAX_K];
        const int rot = k == 1 || k == 3 || k == 5;
        T_OK(lr_rot_init_blocks(&hr, nh * hd, hd, 70 + (uint64_t)k));
        lr_rot_qtable(&hr, hq);
        if (rot) a[8].host = hr.dbits, a[8].count = (size_t)nh * hd / 32, a[9].host = hq, a[9].count = (size_t)hr.k * hr.k;
        lr_op_attention_head_dim = hd;
        int rc = run(&lr_op_attention_desc, "op_attention", hd, a, geom((unsigned)nh, 256), 1e-5);
        free(q); free(out); free(kc); free(vc);
        lr_rot_free(&hr);
        lr_op_attention_head_dim = 128;
        if (rc != T_PASS) { fprintf(stderr, "    head_dim %d pos %d rotation %d\n", hd, pos, rot); return rc; }
    }
    return T_PASS;
}

static int test_silu_mul(void)
{
    NEED_GPU();
    int n = 17408;
    float *gu = malloc(8u * n), *h = malloc(4u * n);
    lr_rng r;
    lr_rng_seed(&r, 30);
    lr_fill_random(LR_E_F32, gu, 2 * (size_t)n, &r, 8);
    lr_arg a[3] = { 0 };
    a[0].host = gu, a[0].count = 2 * (size_t)n;
    a[1].host = h, a[1].count = (size_t)n;
    a[2].v.i32 = n;
    int rc = run(&lr_op_silu_mul_desc, "op_silu_mul", 0, a, geom(68, 256), 1e-5);
    free(gu); free(h);
    return rc;
}

/* One head shape, every unroll (column steps loaded ahead: 1, 4 (passes of
 * 4, 4, 2 steps at 5120: the early break), 3). */
static int head_case(int vocab, int hidden)
{
    size_t n = (size_t)vocab * hidden;
    int8_t *q = malloc(n);
    uint16_t *sb = malloc(n / 64 * 4);
    float *x = malloc(4u * hidden), *lg = malloc(4u * vocab);
    lr_rng r;
    lr_rng_seed(&r, 40 + (uint64_t)hidden);
    lr_fill_random(LR_E_I8, q, n, &r, 0);
    lr_fill_random(LR_E_F16, sb, n / 64 * 2, &r, 0.05);
    lr_fill_random(LR_E_F32, x, (size_t)hidden, &r, 1);
    lr_arg a[6] = { 0 };
    a[0].host = q, a[0].count = n;
    a[1].host = sb, a[1].count = n / 64 * 2;
    a[2].host = x, a[2].count = (size_t)hidden;
    a[3].host = lg, a[3].count = (size_t)vocab;
    a[4].v.i32 = vocab, a[5].v.i32 = hidden;
    const int unroll[] = { 1, 4, 3 };
    int rc = T_PASS;
    for (int i = 0; i < 3 && rc == T_PASS; i++) {
        lr_op_head_unroll = unroll[i];
        rc = run(&lr_op_head_desc, "op_head_int8g", 0, a,
                 geom((vocab + lr_op_head_rows_per_cta() - 1) / lr_op_head_rows_per_cta(), 256), 1e-5);
        if (rc != T_PASS) fprintf(stderr, "    vocab %d hidden %d unroll %d\n", vocab, hidden, unroll[i]);
    }
    lr_op_head_unroll = 1;
    /* the tensor-core head on the same table and x (its reference takes
       f16(x) in the weights' dot), 1, 2 and 3 row blocks per CTA, with 8
       warps, one chunk per warp (0) and 3 warps (groups left over) */
    const int keep = lr_op_head_mma, keep_w = lr_op_head_warps;
    const int warps[] = { 8, 0, 3 };
    for (int wi = 0; wi < 3 && rc == T_PASS; wi++)
        for (int rb = 1; rb <= 3 && rc == T_PASS; rb++) {
            lr_op_head_mma = rb, lr_op_head_warps = warps[wi];
            const unsigned per = lr_op_head_mma_rows_per_cta(rb);
            rc = run(&lr_op_head_mma_desc, "op_head_int8g_mma", hidden, a,
                     geom((vocab + per - 1) / per, lr_op_head_mma_threads(hidden)), 1e-5);
            if (rc != T_PASS)
                fprintf(stderr, "    vocab %d hidden %d: op_head_int8g_mma rb %d warps %d\n", vocab, hidden, rb,
                        warps[wi]);
        }
    lr_op_head_mma = keep, lr_op_head_warps = keep_w;
    free(q); free(sb); free(x); free(lg);
    return rc;
}

/* Whole 512-column warp steps (5120), whole steps and a partial one (2624 =
 * 5 x 512 + 64: lanes past the end), only a partial one (192); vocab not a
 * multiple of the CTA's rows. The tensor-core head on each: 8-group chunks
 * whole (5120), whole and one group (2624), one partial chunk of 3 groups
 * (192); the last warp's rows past the vocabulary. */
static int test_head(void)
{
    NEED_GPU();
    const int shape[][2] = { { 30011, 5120 }, { 1001, 2624 }, { 333, 192 } };
    for (int i = 0; i < 3; i++)
        if (head_case(shape[i][0], shape[i][1]) != T_PASS) return T_FAIL;
    return T_PASS;
}

static int test_argmax(void)
{
    NEED_GPU();
    const float nan = NAN;
    for (int k = 0; k < 8; k++) {
        int n = k == 6 ? 1003 : 151936; /* 1003: a tail past the float4 steps */
        float *lg = malloc(4u * n);
        lr_rng r;
        lr_rng_seed(&r, 50 + (uint64_t)k);
        lr_fill_random(LR_E_F32, lg, (size_t)n, &r, 10);
        if (k == 1) lg[n - 1] = 100, lg[12345] = 100;  /* a tie: the lower index wins */
        if (k == 2) lg[0] = 1e30f;
        if (k == 3) { /* NaN first and next to the maximum: never wins */
            for (int i = 0; i < n; i += 97) lg[i] = nan;
            lg[777] = 50, lg[776] = lg[778] = nan;
        }
        if (k == 4) for (int i = 0; i < n; i++) lg[i] = i % 3 ? -INFINITY : nan; /* -inf at 1 */
        if (k == 5) for (int i = 0; i < n; i++) lg[i] = nan;                    /* 0 */
        if (k == 6) lg[1002] = 1000;
        if (k == 7) lg[5] = -0.f, lg[9] = 0.f, lg[3] = 0.f; /* all else negative: -0 and +0 tie, 3 wins */
        if (k == 7) for (int i = 0; i < n; i++) if (i != 3 && i != 5 && i != 9) lg[i] = -fabsf(lg[i]) - 1;
        /* the slot starts at 0 (as the engine's copy-in leaves it); case 2
           also from a larger key, which must survive */
        uint64_t best = k == 2 ? ~0ull : 0; /* above every key: +inf's is 0xFF800000 << 32 | ~i */
        lr_arg a[3] = { 0 };
        a[0].host = lg, a[0].count = (size_t)n;
        a[1].v.i32 = n;
        a[2].host = &best, a[2].count = 1;
        int rc = run(&lr_op_argmax_desc, "op_argmax", 0, a, geom(lr_op_argmax_grid(n), 256), 0);
        int32_t want = lr_argmax(lg, n), tok = lr_op_argmax_token(best);
        free(lg);
        if (rc != T_PASS) return rc;
        if (k == 2) {
            T_ASSERT(best == ~0ull, "a larger key was replaced");
            continue;
        }
        T_ASSERT(tok == want, "case %d: op_argmax %d, lr_argmax %d", k, tok, want);
        if (k == 1) T_ASSERT(tok == 12345, "tie resolved to %d", tok);
        if (k == 3) T_ASSERT(tok == 777, "NaN case resolved to %d", tok);
        if (k == 4) T_ASSERT(tok == 1, "all -inf/NaN resolved to %d", tok);
        if (k == 5) T_ASSERT(tok == 0, "all NaN resolved to %d", tok);
        if (k == 6) T_ASSERT(tok == 1002, "tail resolved to %d", tok);
        if (k == 7) T_ASSERT(tok == 3, "signed zeros resolved to %d", tok);
    }
    return T_PASS;
}

static long long spec_param(const lr_jit_spec *s, const char *name)
{
    for (int i = 0; i < s->nparams; i++)
        if (!strcmp(s->p[i].name, name)) return s->p[i].value;
    return -1;
}

/* LEECHRT_HEAD_UNROLL's parse: 1..8 taken, garbage refused naming the
 * setting and the value, the setting left unchanged; NULL changes nothing.
 * Also the head's specialization: unroll only above 1. No GPU needed. */
static int test_head_unroll_setting(void)
{
    T_OK(lr_op_head_unroll_set("X", "4"));
    T_ASSERT(lr_op_head_unroll == 4, "unroll %d", lr_op_head_unroll);
    static const char *bad[] = { "", "0", "9", "4x", " ", "-1", "1e1", "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_ASSERT(lr_op_head_unroll_set("LEECHRT_HEAD_UNROLL", bad[i]) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_HEAD_UNROLL") && lr_op_head_unroll == 4, "'%s': %s, unroll %d", bad[i],
                 lr_errmsg(), lr_op_head_unroll);
    }
    T_OK(lr_op_head_unroll_set("X", NULL));
    T_ASSERT(lr_op_head_unroll == 4, "NULL changed it");
    lr_jit_spec s4, s1;
    lr_op_spec(&s4, "op_head_int8g", 0);
    T_OK(lr_op_head_unroll_set("X", "1"));
    lr_op_spec(&s1, "op_head_int8g", 0);
    T_ASSERT(spec_param(&s4, "unroll") == 4 && spec_param(&s1, "unroll") == -1, "unroll in the specs: %lld / %lld",
             spec_param(&s4, "unroll"), spec_param(&s1, "unroll"));
    /* the grid's rows per CTA follow the spec's rows per warp (8 warps) */
    T_ASSERT(lr_op_head_rows_per_cta() == 8 * spec_param(&s1, "rpw"), "rows per CTA %u, spec rpw %lld",
             lr_op_head_rows_per_cta(), spec_param(&s1, "rpw"));
    lr_clear_error();
    return T_PASS;
}

/* LEECHRT_ATT_THREADS's parse: multiples of 32 in 64..1024 taken, garbage
 * refused naming the setting, unchanged; the spec and launch never go below
 * 2 * head_dim. No GPU needed. */
static int test_att_threads_setting(void)
{
    static const char *bads[] = { "0", "17", "", "two" };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        T_ASSERT(lr_op_att_splits_set("LEECHRT_ATT_SPLITS", bads[i]) == LR_EINVAL, "splits '%s' accepted", bads[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_ATT_SPLITS") && lr_op_att_splits == 1, "'%s': %s", bads[i], lr_errmsg());
    }
    T_OK(lr_op_att_splits_set("X", "4"));
    lr_jit_spec sp;
    lr_op_spec(&sp, "op_rope_attention", 128);
    T_ASSERT(spec_param(&sp, "splits") == 4, "splits %lld", spec_param(&sp, "splits"));
    lr_op_att_splits = 1;
    lr_op_spec(&sp, "op_rope_attention", 128);
    T_ASSERT(spec_param(&sp, "splits") == -1, "splits %lld at 1", spec_param(&sp, "splits"));
    T_ASSERT(lr_op_att_threads == LR_ATT_THREADS_DEFAULT, "default %d", lr_op_att_threads);
    static const char *bad[] = { "", "100", "32", "2048", "x", "512k" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_ASSERT(lr_op_att_threads_set("LEECHRT_ATT_THREADS", bad[i]) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_ATT_THREADS") && lr_op_att_threads == LR_ATT_THREADS_DEFAULT, "'%s': %s", bad[i], lr_errmsg());
    }
    T_OK(lr_op_att_threads_set("X", NULL));
    T_OK(lr_op_att_threads_set("X", "1024"));
    lr_jit_spec s;
    lr_op_spec(&s, "op_rope_attention", 128);
    T_ASSERT(spec_param(&s, "threads") == 1024 && lr_op_rope_attention_threads(128) == 1024, "threads %lld",
             spec_param(&s, "threads"));
    T_OK(lr_op_att_threads_set("X", "64"));
    lr_op_spec(&s, "op_rope_attention", 128);
    T_ASSERT(spec_param(&s, "threads") == 256 && lr_op_rope_attention_threads(128) == 256, "threads %lld",
             spec_param(&s, "threads"));
    lr_op_att_threads = LR_ATT_THREADS_DEFAULT;
    lr_clear_error();
    return T_PASS;
}

/* LEECHRT_HEAD_MMA's parse: 0 and 1, garbage refused naming the setting and
 * the value, unchanged; NULL changes nothing. The tensor-core head's
 * specialization carries the width. No GPU needed. */
static int test_head_mma_setting(void)
{
    const int keep = lr_op_head_mma;
    T_ASSERT(keep == 1, "default head %d, want the tensor-core one (1 block)", keep);
    T_OK(lr_op_head_mma_set("X", "1"));
    T_ASSERT(lr_op_head_mma == 1, "head mma %d", lr_op_head_mma);
    static const char *bad[] = { "", "5", "-1", "yes", "1x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_ASSERT(lr_op_head_mma_set("LEECHRT_HEAD_MMA", bad[i]) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_HEAD_MMA") && lr_op_head_mma == 1, "'%s': %s", bad[i], lr_errmsg());
    }
    T_OK(lr_op_head_mma_set("X", NULL));
    T_ASSERT(lr_op_head_mma == 1, "NULL changed it");
    lr_jit_spec s;
    lr_op_spec(&s, "op_head_int8g_mma", 2624);
    T_ASSERT(spec_param(&s, "hidden") == 2624 && spec_param(&s, "threads") == 256 && spec_param(&s, "rb") == -1 &&
                 lr_op_head_mma_rows_per_cta(lr_op_head_mma) == 16,
             "spec hidden %lld threads %lld rb %lld", spec_param(&s, "hidden"), spec_param(&s, "threads"),
             spec_param(&s, "rb"));
    T_OK(lr_op_head_mma_set("X", "3"));
    lr_op_spec(&s, "op_head_int8g_mma", 2624);
    T_ASSERT(spec_param(&s, "rb") == 3 && lr_op_head_mma_rows_per_cta(lr_op_head_mma) == 48, "rb %lld, %u rows per CTA",
             spec_param(&s, "rb"), lr_op_head_mma_rows_per_cta(lr_op_head_mma));
    lr_op_head_mma = keep;
    lr_clear_error();
    return T_PASS;
}

/* LEECHRT_HEAD_WARPS's parse (0..32, garbage refused naming the setting,
 * unchanged) and the CTA it makes: 8 warps by default, one warp per
 * 512-column chunk at 0 (5120: 10, 2624: 6, 192: 1). No GPU needed. */
static int test_head_warps_setting(void)
{
    const int keep = lr_op_head_warps;
    T_ASSERT(keep == 8 && lr_op_head_mma_threads(5120) == 256, "default %d warps, %u threads", keep,
             lr_op_head_mma_threads(5120));
    static const char *bad[] = { "", "33", "-1", "many", "8x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_ASSERT(lr_op_head_warps_set("LEECHRT_HEAD_WARPS", bad[i]) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(strstr(lr_errmsg(), "LEECHRT_HEAD_WARPS") && lr_op_head_warps == 8, "'%s': %s", bad[i], lr_errmsg());
    }
    T_OK(lr_op_head_warps_set("X", NULL));
    T_OK(lr_op_head_warps_set("X", "0"));
    T_ASSERT(lr_op_head_mma_threads(5120) == 320 && lr_op_head_mma_threads(2624) == 192 &&
                 lr_op_head_mma_threads(192) == 32 && lr_op_head_mma_threads(65536) == 1024,
             "auto: %u %u %u %u", lr_op_head_mma_threads(5120), lr_op_head_mma_threads(2624),
             lr_op_head_mma_threads(192), lr_op_head_mma_threads(65536));
    lr_jit_spec s;
    lr_op_spec(&s, "op_head_int8g_mma", 5120);
    T_ASSERT(spec_param(&s, "threads") == 320, "spec threads %lld", spec_param(&s, "threads"));
    T_OK(lr_op_head_warps_set("X", "3"));
    T_ASSERT(lr_op_head_mma_threads(5120) == 96, "3 warps: %u threads", lr_op_head_mma_threads(5120));
    lr_op_head_warps = keep;
    lr_clear_error();
    return T_PASS;
}

/* The two heads' references agree but for x's f16 rounding in the weights'
 * dot (relative to the row's magnitude, well under 1e-3), and are equal when
 * x is already f16. No GPU needed. */
static int test_head_mma_reference(void)
{
    const int vocab = 37, hidden = 192;
    int8_t q[37 * 192];
    uint16_t sb[37 * 3 * 2];
    float x[192], xh[192], y0[37], y1[37], m0[37];
    lr_rng r;
    lr_rng_seed(&r, 77);
    lr_fill_random(LR_E_I8, q, sizeof q, &r, 0);
    lr_fill_random(LR_E_F16, sb, 37 * 3 * 2, &r, 0.05);
    lr_fill_random(LR_E_F32, x, 192, &r, 1);
    for (int i = 0; i < hidden; i++) xh[i] = lr_half_to_float(lr_float_to_half(x[i]));
    lr_op_head_host(q, sb, x, y0, vocab, hidden);
    lr_op_head_mma_host(q, sb, x, y1, vocab, hidden);
    lr_arg a[6] = { 0 };
    a[0].host = q, a[0].count = sizeof q;
    a[1].host = sb, a[1].count = 37 * 3 * 2;
    a[2].host = x, a[2].count = 192;
    a[3].host = m0, a[3].count = 37;
    a[4].v.i32 = vocab, a[5].v.i32 = hidden;
    T_OK(lr_call_host_fn(&lr_op_head_desc, lr_op_head_desc.host_mag, a));
    int differ = 0;
    for (int i = 0; i < vocab; i++) {
        T_ASSERT(fabs((double)y0[i] - y1[i]) < 1e-3 * m0[i], "row %d: %g against %g (magnitude %g)", i, y0[i], y1[i],
                 m0[i]);
        differ += y0[i] != y1[i];
    }
    T_ASSERT(differ > 0, "f16(x) changed no row: the reference would not see the kernel's rounding");
    /* x already f16: only the bias term's x differs in rounding, i.e. not at all */
    lr_op_head_host(q, sb, xh, y0, vocab, hidden);
    lr_op_head_mma_host(q, sb, xh, y1, vocab, hidden);
    for (int i = 0; i < vocab; i++) T_ASSERT(fabs((double)y0[i] - y1[i]) <= 1e-6 * m0[i], "row %d with f16 x", i);
    return T_PASS;
}

T_MAIN(T_CASE(test_head_unroll_setting), T_CASE(test_head_mma_setting), T_CASE(test_head_warps_setting), T_CASE(test_head_mma_reference), T_CASE(test_embed), T_CASE(test_add_rmsnorm), T_CASE(test_rope_kv), T_CASE(test_attention),
       T_CASE(test_silu_mul), T_CASE(test_head), T_CASE(test_argmax), T_CASE(test_rope_attention),
       T_CASE(test_att_threads_setting))
