/* Benchmark arm `stream_p14s`: a control, not a GEMV. It streams exactly the
 * bytes of a Planes14S matrix's segments (ceil(rows/16) x ceil(cols/192)
 * segments of 1,792 bytes; `stream_p14s3`: the 3-bit form's 1,344) with the
 * read-bound probe (grid-stride, 512
 * threads, up to 4 CTAs per SM, 8 x 16 bytes per thread in flight), rotating over
 * distinct copies like every arm. Why: the probe's bound is taken on 2 GiB;
 * a 16 MB matrix cannot reach it (launch, ramp-up and tail), so this says
 * what the same bytes cost at each matrix's own size, and the GEMV's and the
 * loads-only control's shortfall can be read against it. Verified like the
 * probe (the wrapping u32 sum per CTA against its host reference). */
#include "jit/jit.h"
#include "kernels/gemv_arm.h"
#include "kernels/kernels.h"
#include "kernels/read_bound.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "util/err.h"
#include "util/rng.h"

#include <stdlib.h>

typedef struct {
    size_t bytes;
    int copies, ranges;
    CUdeviceptr buf, out; /* copies x bytes; the per-CTA sums */
    uint32_t *host;       /* copy 0, for verification */
    unsigned blocks, threads;
    CUfunction fn;
} stream_state;

static void stream_destroy(void *p)
{
    stream_state *s = p;
    if (!s) return;
    lr_cu_free(s->buf), lr_cu_free(s->out);
    free(s->host);
    free(s);
}

/* o (sweeps, e.g. tune_gemv --arm stream_p14s): threads per CTA, unroll =
 * 16-byte loads in flight per thread, extra0 = CTAs per SM at most; 0 keeps
 * the arm's default. Bytes in flight per SM = CTAs x threads x unroll x 16. */
static int prepare(const char *name, size_t seg, int rows, int cols, int copies, uint64_t seed, int ranges,
                   const lr_gemv_arm_opts *o, void **out)
{
    *out = NULL;
    if (rows <= 0 || cols < 24) return LR_FAIL(LR_EINVAL, "%s: shape %dx%d", name, rows, cols);
    const int threads = o && o->threads ? o->threads : ranges ? 768 : 512, unroll = o && o->unroll ? o->unroll : 8;
    const int per_sm = o && o->extra[0] ? o->extra[0] : ranges ? 1 : 4;
    if (threads < 32 || threads > 1024 || threads % 32 || unroll < 1 || unroll > 32 || per_sm < 1 || per_sm > 32 ||
        (ranges && per_sm != 1))
        return LR_FAIL(LR_EINVAL, "%s: threads %d, unroll %d, %d CTAs per SM%s", name, threads, unroll, per_sm,
                       ranges ? " (ranges: one)" : "");
    const lr_device_info *d = lr_cu_device();
    if (!d) return LR_FAIL(LR_ENODEV, "%s: no device", name);
    stream_state *s = calloc(1, sizeof *s);
    if (!s) return LR_FAIL(LR_ENOMEM, "out of memory");
    const size_t rg = ((size_t)rows + 15) / 16, sc = ((size_t)cols / 24 + 7) / 8;
    s->bytes = rg * sc * seg, s->copies = copies, s->ranges = ranges;
    /* At most 4 CTAs per SM as the probe; fewer where the matrix is small, so
     * that every thread still has its 8 loads in flight at once (the probe's
     * unrolled loop needs 8 grid strides of data; its remainder loop has one).
     * Ranges: one CTA of 768 threads per SM, as the balanced split. */
    s->threads = (unsigned)threads;
    const size_t per_cta = (size_t)s->threads * unroll * 16, fit = s->bytes / per_cta;
    const size_t most = (size_t)d->sm_count * per_sm;
    s->blocks = fit < 1 ? 1u : fit > most ? (unsigned)most : (unsigned)fit;
    lr_jit_spec spec;
    if (ranges)
        lr_probe_ranges_spec(&spec, (int)s->threads, unroll);
    else
        lr_probe_spec(&spec, (int)s->threads, unroll);
    int rc = lr_jit_get(&spec, &s->fn);
    if (!rc && !(s->host = malloc(s->bytes))) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    if (!rc) {
        lr_rng r;
        lr_rng_seed(&r, seed);
        lr_fill_random(LR_E_U32, s->host, s->bytes / 4, &r, 0);
    }
    if (!rc) rc = lr_cu_alloc(&s->buf, s->bytes * (size_t)copies);
    if (!rc) rc = lr_cu_alloc(&s->out, s->blocks * 4u);
    /* the same values at distinct addresses: the addresses keep them out of the L2 */
    for (int c = 0; c < copies && !rc; c++) rc = lr_cu_h2d(s->buf + (size_t)c * s->bytes, s->host, s->bytes);
    if (rc) { stream_destroy(s); return rc; }
    *out = s;
    return LR_OK;
}

/* no io: the launch sums its buffer into the arm's own outputs, not y */
static int stream_verify(void *p, uint64_t seed, double *err, lr_gemv_arm_io *io)
{
    (void)seed, (void)io;
    stream_state *s = p;
    uint32_t *sums = malloc(s->blocks * 4u);
    if (!sums) return LR_FAIL(LR_ENOMEM, "out of memory");
    int rc = (s->ranges ? lr_probe_ranges_verify : lr_probe_verify)(s->fn, s->host, s->bytes / 16, s->blocks,
                                                                      s->threads, sums, err);
    free(sums);
    return rc;
}

static int stream_launch(void *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    (void)x, (void)y;
    stream_state *s = p;
    CUdeviceptr buf = s->buf + (size_t)(copy % s->copies) * s->bytes;
    uint64_t n16 = s->bytes / 16;
    unsigned nb = s->blocks, th = s->threads;
    void *args[] = { &buf, &n16, &s->out, &nb, &th };
    return lr_cu_launch(s->fn, (lr_dim3){ s->blocks, 1, 1 }, (lr_dim3){ s->threads, 1, 1 }, 0, st, args);
}

static size_t stream_bytes(void *p) { return ((stream_state *)p)->bytes; }

static int stream_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare("stream_p14s", LR_P14S_SEG, rows, cols, copies, seed, 0, o, out);
}

static int ranges_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare("stream_p14s_ranges", LR_P14S_SEG, rows, cols, copies, seed, 1, o, out);
}

static int c3_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    return prepare("stream_p14s3", LR_P14S_C3_SEG, rows, cols, copies, seed, 0, o, out);
}

/* 1,792 bytes per 16 x 192 weights */
const lr_gemv_arm lr_arm_stream_p14s = { "stream_p14s", 1792.0 * 8 / 3072, stream_prepare, stream_verify,
                                         stream_launch, stream_bytes, stream_destroy };
/* The same bytes with one CTA per SM reading one contiguous range each, the
 * way the balanced split deals a matrix out: whether that partition alone
 * draws less from DRAM than the grid-stride stream (Nsight Compute has the
 * split's loads-only control at 2.95 TB/s against 3.19 for warp groups on
 * the 14B down, a791320). */
const lr_gemv_arm lr_arm_stream_p14s_ranges = { "stream_p14s_ranges", 1792.0 * 8 / 3072, ranges_prepare,
                                                stream_verify, stream_launch, stream_bytes, stream_destroy };
/* The 3-bit form's segments (1,344 bytes per 16 x 192 weights, padding and
 * exception lists not counted): what its own bytes cost as a pure stream at
 * each matrix's size, the ceiling the leech_p14s3 GEMV is read against. */
const lr_gemv_arm lr_arm_stream_p14s3 = { "stream_p14s3", 1344.0 * 8 / 3072, c3_prepare, stream_verify, stream_launch,
                                          stream_bytes, stream_destroy };
