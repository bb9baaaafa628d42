/* Launch planning and JIT specializations of the rotation kernels, and their
 * descriptors. No GPU needed: the planner is tested in CI for every width
 * under every budget. */
#include "kernels/rotation.h"
#include "util/err.h"
#include "util/args.h"
#include "util/setting.h"

#include <string.h>

#define ROT_PARAMS                                                                          \
    .nparams = 6,                                                                           \
    .params = { { "x", LR_T_PTR, LR_E_F32, LR_IN }, { "y", LR_T_PTR, LR_E_F32, LR_OUT },    \
                { "dbits", LR_T_PTR, LR_E_U32, LR_IN }, { "q", LR_T_PTR, LR_E_F32, LR_IN }, \
                { "n", LR_T_I32, 0, 0 }, { "batch", LR_T_I32, 0, 0 } }

const lr_kernel_desc lr_rotate_desc = {
    .name = "rotate", ROT_PARAMS,
    .host = (lr_host_fn)lr_rotate_host,
    .host_mag = (lr_host_fn)lr_rotate_host_mag,
};

const lr_kernel_desc lr_gemv_f16_rot_desc = {
    .name = "gemv_f16_rot",
    .nparams = 7,
    .params = { { "W", LR_T_PTR, LR_E_F16, LR_IN }, { "x", LR_T_PTR, LR_E_F32, LR_IN },
                { "y", LR_T_PTR, LR_E_F32, LR_OUT }, { "dbits", LR_T_PTR, LR_E_U32, LR_IN },
                { "q", LR_T_PTR, LR_E_F32, LR_IN }, { "rows", LR_T_I32, 0, 0 }, { "cols", LR_T_I32, 0, 0 } },
    .host = (lr_host_fn)lr_gemv_f16_rot_host,
    .host_mag = (lr_host_fn)lr_gemv_f16_rot_host_mag,
};

const char *lr_rot_mode_name(int mode)
{
    return mode == LR_ROT_SINGLE ? "single" : mode == LR_ROT_SLAB ? "slab" : "auto";
}

static int round32(int v) { return (v + 31) / 32 * 32; }
static unsigned smem_of(int k, int s) { return (unsigned)(k * s + k * k) * 4u; }

/* Threads: one per float4 item up to 1024 (the items loop past that). */
static int default_threads(int k, int s)
{
    int t = round32(k * s / 4);
    return t > 1024 ? 1024 : t;
}

/* Slab width: the widest power of two with about <= 512 items (k*s/4), so a
 * CTA has enough threads for loads in flight and the k*k*s row mix stays
 * small; at least 32 columns where m allows (whole 128-byte rows). Then
 * wider while that leaves more than 8 CTAs and a CTA stays within 640 items.
 * Why: in the engine's step each rotation CTA holds an SM that the GEMV
 * after it, launched early by PDL, could already use (a 2x2 with a down
 * GEMV that leaves room for a rotation CTA put about half of the gain on
 * that, one run each: docs/engine.md, thirty-fourth session). Measured in one
 * process each (h200_engine_variants.csv): the 14B 17408 at 8 CTAs of 544
 * threads ran the step's graph in 2904-2916 µs against 2930 at 16 CTAs
 * (346.2-346.3 against 342.3-343.3 tok/s, 71cb3d0), but the 32B 25600 at 8
 * CTAs of 800 threads in 6325 / 6334 against 6299 (158.7 / 158.2 against
 * 159.5): past ~640 items the longer row mix per CTA costs more than the
 * SMs gained, so the cap (which leaves 25600 and wider at 16 CTAs). */
static int default_slab(int m, int k)
{
    int s = 4;
    while (s * 2 <= m && (k * s * 2 / 4 <= 512 || s * 2 <= 32)) s *= 2;
    while (m / s > 8 && s * 2 <= m && k * s * 2 / 4 <= 640) s *= 2;
    return s;
}

int lr_rot_unroll_max = 16;

int lr_rot_unroll_set(const char *what, const char *s) { return lr_setting_int(what, s, 1, 16, &lr_rot_unroll_max); }
int lr_rot_trig;
int lr_rot_trig_set(const char *what, const char *s) { return lr_setting_int(what, s, 0, 1, &lr_rot_trig); }

static struct {
    int n, s;
} g_slab[LR_ROT_SLAB_MAX];
static int g_nslab;

int lr_rot_slab_set(const char *what, const char *v)
{
    g_nslab = 0; /* until the whole list parses: garbage leaves it empty */
    if (!v) return LR_OK;
    int n = 0;
    const size_t vlen = strlen(v);
    if (!vlen || v[vlen - 1] == ';') goto bad; /* no empty list, no empty last item */
    const char *p;
    size_t len;
    for (const char *cur = v; lr_setting_next(&cur, &p, &len);) {
        char item[40];
        const char *colon = memchr(p, ':', len);
        if (n == LR_ROT_SLAB_MAX || !len || len >= sizeof item || !colon) goto bad;
        memcpy(item, p, len), item[len] = 0;
        item[colon - p] = 0;
        if (lr_parse_int(item, 1, 1 << 20, &g_slab[n].n) || lr_parse_int(item + (colon - p) + 1, 4, 32768, &g_slab[n].s) ||
            (g_slab[n].s & (g_slab[n].s - 1)))
            goto bad;
        for (int i = 0; i < n; i++)
            if (g_slab[i].n == g_slab[n].n) goto bad;
        n++;
    }
    g_nslab = n;
    return LR_OK;
bad:
    return LR_FAIL(LR_EINVAL, "%s=%s: want up to %d distinct WIDTH:SLAB pairs separated by ';', SLAB a power of two in "
                   "[4, 32768]", what, v, LR_ROT_SLAB_MAX);
}

int lr_rot_slab_for(int n)
{
    for (int i = 0; i < g_nslab; i++)
        if (g_slab[i].n == n) return g_slab[i].s;
    return 0;
}

int lr_rot_plan_make(int n, int budget, int mode, int s, int threads, lr_rot_plan *p)
{
    memset(p, 0, sizeof *p);
    int m, k;
    int rc = lr_rot_factor(n, &m, &k);
    if (rc) return rc;
    p->n = n, p->m = m, p->k = k;
    if (mode == LR_ROT_AUTO) mode = LR_ROT_SLAB; /* docs/rotation.md: why slab always */
    if (mode != LR_ROT_SINGLE && mode != LR_ROT_SLAB) return LR_FAIL(LR_EINVAL, "rotation mode %d", mode);
    if (mode == LR_ROT_SINGLE) {
        if (s && s != m) return LR_FAIL(LR_EINVAL, "single plan: s must be m = %d", m);
        s = m;
        if ((long)smem_of(k, s) > budget)
            return LR_FAIL(LR_ERANGE, "rotation %d: single CTA needs %u B of shared memory, budget %d B", n,
                           smem_of(k, s), budget);
    } else if (s) {
        /* m/s <= 256: the gather sums m/s terms and its f32 error grows with them */
        int lo = m / 256 > LR_ROT_MIN_M ? m / 256 : LR_ROT_MIN_M;
        if (s < lo || s > m || (s & (s - 1)))
            return LR_FAIL(LR_EINVAL, "slab width %d: need a power of two in [%d, %d]", s, lo, m);
        if ((long)smem_of(k, s) > budget)
            return LR_FAIL(LR_ERANGE, "rotation %d: slab %d needs %u B of shared memory, budget %d B", n, s,
                           smem_of(k, s), budget);
    } else {
        s = default_slab(m, k);
        int lo = m / 256 > LR_ROT_MIN_M ? m / 256 : LR_ROT_MIN_M;
        while (s > lo && (long)smem_of(k, s) > budget) s /= 2;
        if ((long)smem_of(k, s) > budget)
            return LR_FAIL(LR_ERANGE, "rotation %d: budget %d B below the smallest slab (%u B)", n, budget,
                           smem_of(k, s));
    }
    if (threads && (threads % 32 || threads < 32 || threads > 1024))
        return LR_FAIL(LR_EINVAL, "rotation threads %d", threads);
    p->mode = mode;
    p->s = s;
    p->ctas = m / s;
    p->threads = threads ? threads : default_threads(k, s);
    p->unroll = p->ctas < lr_rot_unroll_max ? p->ctas : lr_rot_unroll_max;
    while (p->ctas % p->unroll) p->unroll--; /* the gather takes whole chunks */
    p->smem = smem_of(k, s);
    return LR_OK;
}

int lr_rot_plan_spec(const lr_rot_plan *p, lr_jit_spec *s)
{
    lr_jit_spec_init(s, "rotate_slab.cu", "rotate");
    lr_jit_spec_set(s, "n", p->n);
    lr_jit_spec_set(s, "s", p->s);
    lr_jit_spec_set(s, "threads", p->threads);
    lr_jit_spec_set(s, "unroll", p->unroll);
    if (lr_rot_trig) lr_jit_spec_set(s, "trig", 1);
    return LR_OK;
}

lr_launch_geom lr_rot_plan_geom(const lr_rot_plan *p, int batch)
{
    lr_launch_geom g = { 0 };
    g.grid = (lr_dim3){ (unsigned)p->ctas, (unsigned)(batch > 0 ? batch : 1), 1 };
    g.block = (lr_dim3){ (unsigned)p->threads, 1, 1 };
    g.smem = p->smem;
    return g;
}

unsigned lr_gemv_f16_rot_smem(int cols)
{
    int m, k;
    if (lr_rot_factor(cols, &m, &k)) { lr_clear_error(); return 0; }
    return smem_of(k, m);
}

int lr_gemv_f16_rot_spec(lr_jit_spec *s, lr_launch_geom *g, int rows, int cols, lr_gemv_geom geom, int budget,
                         int ctas)
{
    int m, k;
    int rc = lr_rot_factor(cols, &m, &k);
    if (rc) return rc;
    if (rows <= 0) return LR_FAIL(LR_EINVAL, "gemv_f16_rot rows %d", rows);
    if (geom.ksplit <= 0) geom.ksplit = 1;
    if (geom.threads % 32 || geom.threads < 32 || geom.threads > 1024 || geom.rpw < 1 || geom.rpw > 32 ||
        geom.unroll < 1 || (geom.threads / 32) % geom.ksplit)
        return LR_FAIL(LR_EINVAL, "bad gemv geometry threads=%d rpw=%d unroll=%d ksplit=%d", geom.threads, geom.rpw,
                       geom.unroll, geom.ksplit);
    unsigned smem = smem_of(k, m);
    /* + the static partial-sum buffer when warps split columns */
    long stat = geom.ksplit > 1 ? (long)geom.threads / 32 * geom.rpw * 4 : 0;
    if ((long)smem + stat > budget)
        return LR_FAIL(LR_ERANGE, "gemv_f16_rot %dx%d needs %u B of shared memory, budget %d B", rows, cols, smem, budget);
    lr_jit_spec_init(s, "gemv_f16_rot.cu", "gemv_f16_rot");
    lr_jit_spec_set(s, "rows", rows);
    lr_jit_spec_set(s, "cols", cols);
    lr_jit_spec_set(s, "threads", geom.threads);
    lr_jit_spec_set(s, "rpw", geom.rpw);
    lr_jit_spec_set(s, "unroll", geom.unroll);
    lr_jit_spec_set(s, "ksplit", geom.ksplit);
    int per_cta = geom.threads / 32 / geom.ksplit * geom.rpw, groups = (rows + per_cta - 1) / per_cta;
    if (ctas <= 0) ctas = 2 * 132;
    g->cluster = (lr_dim3){ 0, 0, 0 };
    g->grid = (lr_dim3){ (unsigned)(groups < ctas ? groups : ctas), 1, 1 };
    g->block = (lr_dim3){ (unsigned)geom.threads, 1, 1 };
    g->smem = smem;
    return LR_OK;
}
