/* The import pipeline (import.h). Tensors are written one at a time in the
 * architecture's canonical order; dense and int8 tensors stream in row
 * chunks, a projection is held whole (the quantizer needs the matrix's gain
 * statistics). Bytes go to the writer in host order: the artifact is
 * little-endian and so is every host leechrt runs on.
 *
 * The rotated residual (docs/format.md): with R the hidden width's rotation,
 * the stored model is the source's with h' = R h. Since rmsnorm(R h) =
 * R rmsnorm(h), a reader of the stream W (g ⊙ rmsnorm(h)) becomes
 * (W diag(g) R^T) rmsnorm(h'): rows w -> R (g ⊙ w), gain 1; attn_output and
 * ffn_down add to the stream, so W -> R W (rows mixed); token_embd rows
 * e -> R e; the head like a reader. */
#include "loader/import/import.h"
#include "loader/import/calib.h"
#include "loader/import/gptq.h"
#include "kernels/rotation.h"
#include "layouts/leech/leech.h"
#include "layouts/leech/shapegain.h"
#include "loader/arch.h"
#include "loader/artifact_write.h"
#include "loader/codec.h"
#include "loader/parallel.h"
#include "util/err.h"
#include "util/half.h"
#include "util/log.h"
#include "util/progress.h"
#include "util/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_WEIGHTS (4u << 20) /* rows per streamed chunk: about this many weights */
#define ERR_SAMPLE_GROUPS 32     /* error estimate: up to 32 groups of 8 rows per projection */

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the artifact is little-endian; so must the host be");

uint64_t lr_import_rot_seed(uint64_t seed, uint64_t width) { return lr_rot_seed_for_width(seed, width); }

/* ---- int8 groups ---- */

int lr_int8g_encode_row(const float *w, uint64_t cols, int group, int8_t *q, uint16_t *sb)
{
    for (uint64_t g0 = 0; g0 < cols; g0 += (uint64_t)group) {
        float mn = w[g0], mx = w[g0];
        for (int i = 0; i < group; i++) {
            float v = w[g0 + (uint64_t)i];
            if (!isfinite(v)) return LR_FAIL(LR_EINVAL, "column %llu is not finite", (unsigned long long)(g0 + (uint64_t)i));
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        if (fabsf(mn) > 65504.0f || fabsf(mx) > 65504.0f)
            return LR_FAIL(LR_EINVAL, "columns %llu..: |w| above the f16 range", (unsigned long long)g0);
        uint16_t bh = lr_float_to_half(0.5f * mx + 0.5f * mn), sh = lr_float_to_half((mx - mn) / 254.0f);
        float b = lr_half_to_float(bh), s = lr_half_to_float(sh);
        /* f16 rounding may shrink the scale below what the range needs: step
         * it up so the ends stay inside [-128, 127]. */
        float need = fmaxf(mx - b, b - mn);
        if (sh == 0 && need > 0) s = lr_half_to_float(sh = 1); /* below the smallest f16: its subnormal */
        while (s * 127.0f < need && sh < 0x7bff) s = lr_half_to_float(++sh);
        for (int i = 0; i < group; i++) {
            float v = s > 0 ? rintf((w[g0 + (uint64_t)i] - b) / s) : 0.0f;
            q[g0 + (uint64_t)i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        }
        sb[2 * (g0 / (uint64_t)group)] = sh;
        sb[2 * (g0 / (uint64_t)group) + 1] = bh;
    }
    return LR_OK;
}

/* ---- row-parallel helpers ---- */

typedef struct {
    const lr_src *src;
    const lr_src_tensor *t;
    uint64_t r0, n, step;  /* chunk rows, rows per job */
    float *f;              /* chunk f32 [n][cols] */
    int codec;             /* output codec of this pass */
    void *out;             /* f32 / f16 / int8 chunk */
    uint16_t *sb;          /* int8g scale/bias of the chunk */
    const float *gain;     /* multiply the columns by it before rotating (rotated residual); may be NULL */
    const lr_rot *rot;     /* rotate rows in place (Leech's input rotation; R for the rotated residual) */
} rows_job;

/* n rows in place: w -> rot (gain ⊙ w), in f64; either may be NULL. */
static int xform_rows(float *f, uint64_t n, uint64_t cols, const float *gain, const lr_rot *rot)
{
    if (!gain && !rot) return LR_OK;
    double *d = malloc(cols * sizeof *d);
    if (!d) return LR_FAIL(LR_ENOMEM, "out of memory");
    int rc = LR_OK;
    for (uint64_t r = 0; r < n && !rc; r++) {
        float *row = f + r * cols;
        for (uint64_t i = 0; i < cols; i++) d[i] = gain ? (double)row[i] * gain[i] : row[i];
        if (rot) rc = lr_rot_apply(rot, d, d);
        for (uint64_t i = 0; i < cols; i++) row[i] = (float)d[i];
    }
    free(d);
    return rc;
}

static int to_f16(const lr_src *src, const lr_src_tensor *t, const float *f, uint64_t n, uint16_t *h)
{
    for (uint64_t i = 0; i < n; i++) {
        if (fabsf(f[i]) > 65504.0f)
            return LR_FAIL(LR_EINVAL, "%s: tensor %s: weight %g is beyond the f16 range", src->label, t->origin,
                           (double)f[i]);
        h[i] = lr_float_to_half(f[i]);
    }
    return LR_OK;
}

static int rows_fn(void *ctx, int job)
{
    rows_job *j = ctx;
    uint64_t a = (uint64_t)job * j->step, b = a + j->step < j->n ? a + j->step : j->n, cols = j->t->cols;
    float *f = j->f + a * cols;
    int rc = lr_src_read(j->src, j->t, j->r0 + a, b - a, f);
    if (rc) return rc;
    for (uint64_t i = 0; i < (b - a) * cols; i++)
        if (!isfinite(f[i]))
            return LR_FAIL(LR_EINVAL, "%s: tensor %s: weight [%llu][%llu] is not finite", j->src->label, j->t->origin,
                           (unsigned long long)(j->r0 + a + i / cols), (unsigned long long)(i % cols));
    if ((rc = xform_rows(f, b - a, cols, j->gain, j->rot))) return rc;
    if (j->codec == LR_CODEC_F16) {
        rc = to_f16(j->src, j->t, f, (b - a) * cols, (uint16_t *)j->out + a * cols);
    } else if (j->codec == LR_CODEC_INT8G) {
        for (uint64_t r = a; r < b; r++)
            if ((rc = lr_int8g_encode_row(j->f + r * cols, cols, 64, (int8_t *)j->out + r * cols, j->sb + r * (cols / 64) * 2)))
                return lr_wrap(rc, "%s: tensor %s: row %llu", j->src->label, j->t->origin, (unsigned long long)(j->r0 + r));
    }
    return rc;
}

static int run_rows(rows_job *j, int nthreads)
{
    int nt = nthreads > 0 ? nthreads : lr_cpu_count();
    j->step = (j->n + (uint64_t)nt * 4 - 1) / ((uint64_t)nt * 4);
    if (j->step < 1) j->step = 1;
    return lr_parallel_for(nt, (int)((j->n + j->step - 1) / j->step), rows_fn, j);
}

typedef struct {
    float *W;
    uint64_t rows, cols, step; /* columns per job */
    const lr_rot *R;
    int transpose;
} mix_job;

static int mix_fn(void *ctx, int job)
{
    mix_job *j = ctx;
    uint64_t a = (uint64_t)job * j->step, b = a + j->step < j->cols ? a + j->step : j->cols;
    double *d = malloc(j->rows * sizeof *d);
    if (!d) return LR_FAIL(LR_ENOMEM, "out of memory");
    int rc = LR_OK;
    for (uint64_t c = a; c < b && !rc; c++) {
        for (uint64_t r = 0; r < j->rows; r++) d[r] = j->W[r * j->cols + c];
        rc = j->transpose ? lr_rot_apply_t(j->R, d, d) : lr_rot_apply(j->R, d, d);
        for (uint64_t r = 0; r < j->rows; r++) j->W[r * j->cols + c] = (float)d[r];
    }
    free(d);
    return rc;
}

/* W <- R W (transpose: R^T W) for W rows x cols, rows = R's width: every
 * column rotated, in f64 (a matrix whose output joins the rotated stream). */
static int mix_cols(float *W, uint64_t rows, uint64_t cols, const lr_rot *R, int transpose, int nthreads)
{
    if ((uint64_t)R->n != rows) return LR_FAIL(LR_EINVAL, "%llu rows against a rotation of %d", (unsigned long long)rows, R->n);
    int nt = nthreads > 0 ? nthreads : lr_cpu_count();
    mix_job j = { W, rows, cols, (cols + (uint64_t)nt * 4 - 1) / ((uint64_t)nt * 4), R, transpose };
    if (j.step < 1) j.step = 1;
    return lr_parallel_for(nt, (int)((cols + j.step - 1) / j.step), mix_fn, &j);
}

/* ---- one tensor per codec ---- */

static void desc_init(lr_tensor_desc *d, const lr_src_tensor *t, int codec)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", t->name);
    d->codec = codec;
    d->ndim = t->ndim;
    d->dims[0] = t->ndim == 2 ? t->rows : t->cols;
    d->dims[1] = t->ndim == 2 ? t->cols : 0;
}

/* f32, f16 or int8g, streamed in row chunks; each row w stored as rot (gain ⊙ w)
 * (gain, rot may be NULL: as it is). */
static int write_streamed(lr_writer *w, const lr_src *src, const lr_src_tensor *t, int codec, const float *gain,
                          const lr_rot *rot, int nthreads)
{
    lr_tensor_desc d;
    desc_init(&d, t, codec);
    if (codec == LR_CODEC_INT8G) d.i8.group = 64, d.i8.sb_kind = LR_INT8G_SB_F16;
    uint64_t cols = t->cols, step = CHUNK_WEIGHTS / cols ? CHUNK_WEIGHTS / cols : 1;
    if (step > t->rows) step = t->rows;
    size_t esize = codec == LR_CODEC_F32 ? 4 : codec == LR_CODEC_F16 ? 2 : 1;
    float *f = malloc(step * cols * sizeof *f);
    void *out = codec == LR_CODEC_F32 ? (void *)f : malloc(step * cols * esize);
    uint16_t *sb = codec == LR_CODEC_INT8G ? malloc(t->rows * (cols / 64) * 2 * sizeof *sb) : NULL;
    int rc = LR_OK;
    if (!f || !out || (codec == LR_CODEC_INT8G && !sb)) rc = LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name);
    if (!rc) rc = lr_writer_begin(w, &d);
    for (uint64_t r0 = 0; r0 < t->rows && !rc; r0 += step) {
        rows_job j = { .src = src, .t = t, .r0 = r0, .n = r0 + step < t->rows ? step : t->rows - r0, .f = f,
                       .codec = codec, .out = out, .sb = sb ? sb + r0 * (cols / 64) * 2 : NULL, .gain = gain, .rot = rot };
        rc = run_rows(&j, nthreads);
        if (!rc) rc = lr_writer_write(w, out, (size_t)(j.n * cols * esize));
    }
    if (!rc && sb) rc = lr_writer_write(w, sb, (size_t)(t->rows * (cols / 64) * 2 * sizeof *sb));
    if (!rc) rc = lr_writer_end(w);
    if (out != f) free(out);
    free(f);
    free(sb);
    return rc;
}

/* An f16 matrix writing to the rotated stream: R W, held whole (R mixes its rows). */
static int write_f16_mixed(lr_writer *w, const lr_src *src, const lr_src_tensor *t, const lr_rot *R, int nthreads)
{
    lr_tensor_desc d;
    desc_init(&d, t, LR_CODEC_F16);
    uint64_t n = t->rows * t->cols;
    float *W = malloc(n * sizeof *W);
    uint16_t *h = malloc(n * sizeof *h);
    int rc = !W || !h ? LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name) : LR_OK;
    rows_job j = { .src = src, .t = t, .n = t->rows, .f = W, .codec = LR_CODEC_F32 };
    if (!rc) rc = run_rows(&j, nthreads);
    if (!rc) rc = mix_cols(W, t->rows, t->cols, R, 0, nthreads);
    if (!rc) rc = to_f16(src, t, W, n, h);
    const void *parts[1] = { h };
    if (!rc) rc = lr_writer_tensor(w, &d, parts);
    free(W), free(h);
    return rc;
}

/* A norm whose gain went into the matrices reading it: ones. */
static int write_unit_norm(lr_writer *w, const lr_src_tensor *t)
{
    lr_tensor_desc d;
    desc_init(&d, t, LR_CODEC_F32);
    float *f = malloc(t->cols * sizeof *f);
    if (!f) return LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name);
    for (uint64_t i = 0; i < t->cols; i++) f[i] = 1.0f;
    const void *parts[1] = { f };
    int rc = lr_writer_tensor(w, &d, parts);
    free(f);
    return rc;
}

/* Relative squared error of a quantized matrix against W, on up to
 * ERR_SAMPLE_GROUPS groups of 8 rows (8-row groups start on a byte of the
 * archive, so a group is a matrix of its own). */
static int sample_error(const lr_leech_matrix *m, const float *W, double *err, double *ref)
{
    *err = *ref = 0;
    int groups = (m->rows + 7) / 8, take = groups < ERR_SAMPLE_GROUPS ? groups : ERR_SAMPLE_GROUPS;
    size_t bits = (size_t)(LR_LEECH_INDEX_BITS + m->gain_bits);
    float *R = malloc((size_t)8 * (size_t)m->cols * sizeof *R);
    if (!R) return LR_FAIL(LR_ENOMEM, "out of memory");
    int rc = LR_OK;
    for (int k = 0; k < take && !rc; k++) {
        int r0 = 8 * (int)((long)k * groups / take), n = m->rows - r0 < 8 ? m->rows - r0 : 8;
        lr_leech_matrix v = *m;
        v.rows = n;
        v.row_scale = m->row_scale + r0;
        v.archive = m->archive + (size_t)r0 * (size_t)m->nblk * bits / 8;
        v.archive_bytes = lr_leech_archive_bytes((uint64_t)n * (uint64_t)m->nblk, m->gain_bits);
        v.tail_f16 = m->tail ? m->tail_f16 + (size_t)r0 * (size_t)m->tail : NULL;
        if ((rc = lr_leech_reconstruct(&v, R))) break;
        const float *w = W + (size_t)r0 * (size_t)m->cols;
        for (size_t i = 0; i < (size_t)n * (size_t)m->cols; i++) {
            double e = (double)R[i] - w[i];
            *err += e * e;
            *ref += (double)w[i] * w[i];
        }
    }
    free(R);
    return rc;
}

typedef struct {
    lr_import_stats *st;
    double err, ref; /* sampled Leech error and reference sums */
    lr_calib *calib; /* GPTQ: the calibration pass; NULL for plain quantization */
    const lr_rot *res; /* the rotated residual's R; NULL for a plain residual */
} acc;

/* What one matrix folds in with the rotated residual (both NULL: nothing). */
typedef struct {
    const float *gain; /* a reader of the stream: its norm's gain, multiplied into its columns */
    const lr_rot *mix; /* attn_output, ffn_down: R applied to the columns, W' = R W */
} fold;

/* Q H Q^T of a symmetric H (n x n): rotate the rows (H Q^T), then the rows
 * of its transpose (Q H). */
static int rotate_hessian(const lr_rot *rot, double *H, int n)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            int rc = lr_rot_apply(rot, H + (size_t)i * n, H + (size_t)i * n);
            if (rc) return rc;
        }
        for (int i = 0; i < n; i++)
            for (int k = i + 1; k < n; k++) {
                double t = H[(size_t)i * n + k];
                H[(size_t)i * n + k] = H[(size_t)k * n + i];
                H[(size_t)k * n + i] = t;
            }
    }
    return LR_OK;
}

/* G^-1 H G^-1, G = diag(g): the second moment of a reader's input with its
 * norm's gain taken out (the gain went into W). Where g_i = 0, column i of
 * W diag(g) is zero and the calibration input says nothing about the unit-gain
 * component: its row and column are set to 0 and its diagonal to the mean of
 * the others, a neutral variance that keeps H positive definite (after the
 * rotation every weight sees a little of it). */
static void unit_gain_hessian(double *H, int n, const float *g)
{
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            H[(size_t)i * n + j] = g[i] != 0 && g[j] != 0 ? H[(size_t)i * n + j] / ((double)g[i] * g[j]) : 0;
    for (int i = 0; i < n; i++)
        if (g[i] != 0) sum += H[(size_t)i * n + i], k++;
    for (int i = 0; i < n; i++)
        if (g[i] == 0) H[(size_t)i * n + i] = k ? sum / k : 0;
}

/* GPTQ of the rotated W against its input's Hessian; the reconstruction,
 * back in the source's basis, goes to the calibration pass (which runs the
 * source model) for the layers after it. */
static int quantize_gptq(const lr_src_tensor *t, const char *role, const float *W, const lr_rot *rot, const fold *f,
                         const lr_import_opts *o, acc *a, lr_progress *p, lr_leech_matrix *m)
{
    const double *H0;
    int n, rows = (int)t->rows, cols = (int)t->cols;
    double t0 = lr_now();
    int rc = lr_calib_hessian(a->calib, t->layer, role, &H0, &n);
    a->st->calib_seconds += lr_now() - t0;
    if (rc) return rc;
    if (n != cols) return LR_FAIL(LR_EINVAL, "tensor %s: Hessian %d wide for %d columns", t->name, n, cols);
    const double damp = o->gptq_damp > 0 ? o->gptq_damp : LR_GPTQ_DAMP;
    double *H = malloc((size_t)n * n * sizeof *H), *M = NULL;
    float *R = malloc((size_t)rows * cols * sizeof *R), *Wt = NULL;
    double *d = malloc((size_t)cols * sizeof *d);
    if (!H || !R || !d) rc = LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name);
    if (!rc) memcpy(H, H0, (size_t)n * n * sizeof *H);
    if (!rc && f->gain) unit_gain_hessian(H, n, f->gain);
    if (!rc && o->gptq_asym) { /* the teacher's cross moment, transformed as H */
        const double *M0;
        int mn;
        rc = lr_calib_cross(a->calib, t->layer, role, &M0, &mn);
        if (!rc && mn != n) rc = LR_FAIL(LR_EINVAL, "tensor %s: cross moment %d wide for %d columns", t->name, mn, n);
        if (!rc && (!(M = malloc((size_t)n * n * sizeof *M)) || !(Wt = malloc((size_t)rows * cols * sizeof *Wt))))
            rc = LR_FAIL(LR_ENOMEM, "tensor %s: out of memory", t->name);
        if (!rc) memcpy(M, M0, (size_t)n * n * sizeof *M);
        if (!rc && f->gain) {
            unit_gain_hessian(M, n, f->gain);
            /* a zero gain's neutral diagonal as H's, so that M - H is 0 there */
            for (int i = 0; i < n; i++)
                if (f->gain[i] == 0) M[(size_t)i * n + i] = H[(size_t)i * n + i];
        }
        if (!rc && rot) rc = rotate_hessian(rot, M, n); /* its full transpose: M need not be symmetric */
    }
    if (!rc && rot) rc = rotate_hessian(rot, H, n);
    if (!rc && M) { /* W moved to the teacher's target, in W's basis */
        t0 = lr_now();
        memcpy(Wt, W, (size_t)rows * cols * sizeof *Wt);
        rc = lr_gptq_asym_target(Wt, rows, cols, H, M, o->target_damp > 0 ? o->target_damp : LR_GPTQ_TARGET_DAMP,
                                 o->nthreads);
        a->st->quant_seconds += lr_now() - t0;
        if (!rc) W = Wt;
    }
    t0 = lr_now();
    if (!rc) rc = lr_gptq_leech(W, rows, cols, H, damp, o->gain_bits, o->nthreads, p, m);
    if (!rc && o->refit == LR_REFIT_SCALES) rc = lr_gptq_refit_row_scales(W, H, o->nthreads, m);
    if (!rc && o->refit == LR_REFIT_ALL) rc = lr_gptq_refit(W, H, o->nthreads, 2, m);
    a->st->quant_seconds += lr_now() - t0;
    if (!rc) rc = lr_leech_reconstruct(m, R);
    for (int r = 0; r < rows && !rc && rot; r++) {
        float *row = R + (size_t)r * cols;
        for (int i = 0; i < cols; i++) d[i] = row[i];
        rc = lr_rot_apply_t(rot, d, d);
        for (int i = 0; i < cols; i++) row[i] = (float)d[i];
    }
    /* the gain out again (W_rec = W'_rec R G^-1; 0 where g = 0, as W diag(g) is there) */
    for (size_t i = 0; i < (size_t)rows * cols && !rc && f->gain; i++) {
        const float g = f->gain[i % (size_t)cols];
        R[i] = g != 0 ? (float)((double)R[i] / g) : 0.0f;
    }
    if (!rc && f->mix) rc = mix_cols(R, (uint64_t)rows, (uint64_t)cols, f->mix, 1, o->nthreads);
    if (!rc) rc = lr_calib_set_weights(a->calib, t->layer, role, R);
    free(H), free(M), free(R), free(Wt), free(d);
    return rc ? lr_wrap(rc, "tensor %s: gptq", t->name) : LR_OK;
}

static int write_leech(lr_writer *w, const lr_src *src, const lr_src_tensor *t, const char *role, const fold *f,
                       const lr_import_opts *o, acc *a)
{
    if (t->rows > INT32_MAX || t->cols > INT32_MAX)
        return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: %llu x %llu is too large to quantize", t->name,
                       (unsigned long long)t->rows, (unsigned long long)t->cols);
    lr_tensor_desc d;
    desc_init(&d, t, LR_CODEC_LEECH);
    d.leech.max_shell = 12;
    d.leech.gain_bits = o->gain_bits;
    lr_rot rot;
    memset(&rot, 0, sizeof rot);
    int rotate = !o->no_rotate, rc = LR_OK;
    const int heads = !o->o_rot_full && !strcmp(role, "attn_output");
    if (rotate) {
        d.leech.rot_seed = lr_import_rot_seed(o->seed, t->cols);
        rc = heads ? lr_rot_init_blocks(&rot, (int)t->cols, (int)src->cfg.head_dim, d.leech.rot_seed)
                   : lr_rot_init(&rot, (int)t->cols, d.leech.rot_seed);
        if (rc == LR_EUNSUPPORTED) {
            lr_warn("tensor %s: input width %llu has no rotation (%s); stored unrotated", t->name,
                    (unsigned long long)t->cols, lr_errmsg());
            rotate = 0, rc = LR_OK, d.leech.rot_seed = 0;
        } else if (rc) {
            return lr_wrap(rc, "tensor %s", t->name);
        }
    }
    d.leech.rot_kind = !rotate ? LR_ROT_NONE : heads ? LR_ROT_HEADS : LR_ROT_HADAMARD;
    float *W = malloc(t->rows * t->cols * sizeof *W);
    if (!W) rc = LR_FAIL(LR_ENOMEM, "tensor %s: out of memory for %llu x %llu", t->name, (unsigned long long)t->rows,
                         (unsigned long long)t->cols);
    if (!rc) {
        rows_job j = { .src = src, .t = t, .n = t->rows, .f = W, .codec = LR_CODEC_LEECH, .gain = f->gain,
                       .rot = rotate ? &rot : NULL };
        rc = run_rows(&j, o->nthreads);
    }
    /* R from the left commutes with the input rotation from the right */
    if (!rc && f->mix) rc = mix_cols(W, t->rows, t->cols, f->mix, 0, o->nthreads);
    lr_leech_matrix m;
    memset(&m, 0, sizeof m);
    if (!rc && a->calib) {
        lr_progress p = { .label = t->name };
        rc = quantize_gptq(t, role, W, rotate ? &rot : NULL, f, o, a, o->progress ? &p : NULL, &m);
    } else if (!rc) {
        lr_progress p = { .label = t->name };
        double t0 = lr_now();
        rc = lr_leech_quantize(W, (int)t->rows, (int)t->cols, o->gain_bits, 12, o->nthreads, o->progress ? &p : NULL, &m);
        a->st->quant_seconds += lr_now() - t0;
        if (rc) rc = lr_wrap(rc, "tensor %s", t->name);
    }
    if (rotate) lr_rot_free(&rot);
    double e = 0, r = 0;
    if (!rc) rc = sample_error(&m, W, &e, &r);
    if (!rc) {
        a->err += e;
        a->ref += r;
        if (r > 0 && e / r > a->st->worst_rel_err) {
            a->st->worst_rel_err = e / r;
            snprintf(a->st->worst, sizeof a->st->worst, "%s", t->name);
        }
        memcpy(d.leech.centroid, m.centroid, sizeof d.leech.centroid);
        for (int i = 1 << o->gain_bits; i < 4; i++) d.leech.centroid[i] = 0;
        const void *parts[3] = { m.row_scale, m.archive, m.tail_f16 };
        rc = lr_writer_tensor(w, &d, parts);
    }
    lr_leech_matrix_free(&m);
    free(W);
    return rc;
}

static int is_projection(const lr_arch_tensor *a)
{
    return a->kind == LR_KIND_MATRIX && strcmp(a->role, "output") != 0;
}

static int is_stream_norm(const char *role)
{
    return !strcmp(role, "attn_norm") || !strcmp(role, "ffn_norm") || !strcmp(role, "output_norm");
}

static int writes_stream(const char *role) { return !strcmp(role, "attn_output") || !strcmp(role, "ffn_down"); }

/* The gain of norm `role` in `layer` (-1: model level), n wide, checked finite. */
static int read_gain(const lr_src *src, int layer, const char *role, uint64_t n, float **g)
{
    char name[64];
    lr_tensor_name(name, layer, role);
    const lr_src_tensor *t = lr_src_find(src, name);
    *g = NULL;
    if (!t || t->rows * t->cols != n)
        return LR_FAIL(LR_EFORMAT, "%s: norm %s is missing or not %llu wide", src->label, name, (unsigned long long)n);
    if (!(*g = malloc(n * sizeof **g))) return LR_FAIL(LR_ENOMEM, "out of memory");
    int rc = lr_src_read(src, t, 0, 1, *g);
    for (uint64_t i = 0; i < n && !rc; i++)
        if (!isfinite((*g)[i]))
            rc = LR_FAIL(LR_EINVAL, "%s: tensor %s: gain [%llu] is not finite", src->label, t->origin, (unsigned long long)i);
    if (rc) free(*g), *g = NULL;
    return rc;
}

/* One tensor in its codec; with the rotated residual (a->res) in R's basis:
 * the stream's norms as ones, readers (and the head) rows w -> R (g ⊙ w),
 * token_embd rows e -> R e, o and down R W. */
static int write_tensor(lr_writer *w, const lr_src *src, const lr_src_tensor *t, const lr_arch_tensor *at, int codec,
                        const lr_import_opts *o, acc *a)
{
    const lr_rot *R = a->res;
    fold f = { NULL, NULL };
    if (!R)
        return codec == LR_CODEC_LEECH ? write_leech(w, src, t, at->role, &f, o, a)
                                       : write_streamed(w, src, t, codec, NULL, NULL, o->nthreads);
    if (at->kind == LR_KIND_NORM)
        return is_stream_norm(at->role) ? write_unit_norm(w, t) : write_streamed(w, src, t, codec, NULL, NULL, o->nthreads);
    const char *norm = lr_stream_reader_norm(at->role);
    float *g = NULL;
    int rc = norm ? read_gain(src, at->layer, norm, t->cols, &g) : LR_OK;
    f.gain = g;
    f.mix = writes_stream(at->role) ? R : NULL;
    if (!rc && codec == LR_CODEC_LEECH) rc = write_leech(w, src, t, at->role, &f, o, a); /* a reader's input rotation is R */
    else if (!rc && f.mix) rc = write_f16_mixed(w, src, t, R, o->nthreads);
    else if (!rc) rc = write_streamed(w, src, t, codec, g, R, o->nthreads);
    free(g);
    return rc;
}

static int write_all(lr_writer *w, const lr_src *src, const lr_model_config *cfg, const lr_import_opts *o, acc *a)
{
    lr_arch_tensor *list;
    int n, rc = lr_arch_tensors(cfg, &list, &n);
    if (rc) return rc;
    lr_import_stats *st = a->st;
    for (int i = 0; i < n && !rc; i++) {
        const lr_arch_tensor *at = &list[i];
        const lr_src_tensor *t = lr_src_find(src, at->name);
        lr_src_tensor head;
        if (!t && a->res && src->cfg.tied_head && !strcmp(at->name, "output")) {
            /* a tied head written untied: R (g ⊙ e) differs from the embedding's R e */
            const lr_src_tensor *e = lr_src_find(src, "token_embd");
            if (e) {
                head = *e;
                snprintf(head.name, sizeof head.name, "output");
                t = &head;
            }
        }
        uint64_t rows = at->ndim == 2 ? at->dims[0] : 1, cols = at->ndim == 2 ? at->dims[1] : at->dims[0];
        if (!t) {
            rc = LR_FAIL(LR_EFORMAT, "%s: tensor %s is missing", src->label, at->name);
            break;
        }
        if (t->ndim != at->ndim || t->rows != rows || t->cols != cols) {
            rc = LR_FAIL(LR_EFORMAT, "%s: tensor %s: shape differs from the architecture's", src->label, t->origin);
            break;
        }
        int codec;
        if (at->kind == LR_KIND_NORM) {
            codec = LR_CODEC_F32;
        } else if (!is_projection(at)) {
            codec = o->embed_f16 ? LR_CODEC_F16 : LR_CODEC_INT8G;
            if (codec == LR_CODEC_INT8G && cols % 64) {
                lr_warn("tensor %s: %llu columns is not a multiple of 64; stored as f16", at->name, (unsigned long long)cols);
                codec = LR_CODEC_F16;
            }
        } else {
            int outside = o->quant_hi > 0 && (at->layer < o->quant_lo || at->layer >= o->quant_hi);
            codec = o->keep_f16 || outside ? LR_CODEC_F16 : LR_CODEC_LEECH;
        }
        if ((rc = write_tensor(w, src, t, at, codec, o, a))) break;
        st->tensors++;
        st->weights += rows * cols;
        if (codec == LR_CODEC_LEECH) st->leech++;
        else if (codec == LR_CODEC_F16) st->f16++;
        else if (codec == LR_CODEC_INT8G) st->int8g++;
        else st->f32++;
    }
    free(list);
    return rc;
}

int lr_import_residual_rotatable(const lr_src *src, const lr_import_opts *o)
{
    if (o->no_rotate) return 0;
    const int ok = lr_rot_factor((int)src->cfg.hidden, NULL, NULL) == LR_OK;
    lr_clear_error();
    return ok;
}

/* The rotated residual's config (the flag, the seed the readers get anyway
 * for their hidden input width, the head untied) and R; or why not. */
static int residual_setup(const lr_src *src, const lr_import_opts *o, lr_model_config *cfg, lr_rot *R)
{
    if (o->no_rotate)
        return LR_FAIL(LR_EINVAL, "%s: a rotated residual needs the rotation (its readers are stored against it); "
                       "not with no-rotate", src->label);
    int rc = lr_rot_factor((int)cfg->hidden, NULL, NULL);
    if (rc) return lr_wrap(rc, "%s: hidden %u: no rotated residual", src->label, cfg->hidden);
    cfg->rotated_residual = 1;
    cfg->residual_seed = lr_import_rot_seed(o->seed, cfg->hidden);
    cfg->tied_head = 0;
    return lr_rot_init(R, (int)cfg->hidden, cfg->residual_seed);
}

int lr_import_write(const lr_src *src, const char *path, const lr_import_opts *o, lr_import_stats *stats)
{
    lr_import_stats local;
    lr_import_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (o->gain_bits < 0 || o->gain_bits > 2) return LR_FAIL(LR_EINVAL, "gain bits %d (0..2)", o->gain_bits);
    if (o->max_layers < 0) return LR_FAIL(LR_EINVAL, "max layers %d", o->max_layers);
    if (o->quant_lo < 0 || o->quant_hi < 0 || (o->quant_hi && o->quant_lo >= o->quant_hi))
        return LR_FAIL(LR_EINVAL, "quantized layers [%d, %d) is not a range", o->quant_lo, o->quant_hi);
    if (o->gptq_asym && !o->gptq_calib) return LR_FAIL(LR_EINVAL, "the asymmetric GPTQ target needs a calibration text");
    if (o->target_damp < 0 || (o->target_damp > 0 && !o->gptq_asym))
        return LR_FAIL(LR_EINVAL, "target damping %g without the teacher's target", o->target_damp);
    lr_model_config cfg = src->cfg;
    /* a count past the model's layers is a mistake, not "all of them" */
    if ((uint32_t)o->max_layers > cfg.n_layers)
        return LR_FAIL(LR_EINVAL, "%s: --layers %d, but the model has %u layers", src->label, o->max_layers, cfg.n_layers);
    if (o->max_layers) cfg.n_layers = (uint32_t)o->max_layers;
    if ((uint32_t)o->quant_hi > cfg.n_layers)
        return LR_FAIL(LR_EINVAL, "%s: quantized layers %d:%d, past the %u layers imported", src->label, o->quant_lo,
                       o->quant_hi, cfg.n_layers);
    if (!lr_arch_known(cfg.arch))
        return LR_FAIL(LR_EUNSUPPORTED, "%s: the artifact format has no tensor table for architecture \"%s\" yet "
                       "(loader/arch.c)", src->label, cfg.arch);
    /* wcfg: the artifact's; cfg stays the source's, the model calibration runs */
    lr_model_config wcfg = cfg;
    lr_rot R;
    memset(&R, 0, sizeof R);
    int rc = o->rotated_residual ? residual_setup(src, o, &wcfg, &R) : LR_OK;
    if (rc) {
        lr_rot_free(&R);
        return rc;
    }
    double t0 = lr_now();
    lr_writer *w;
    if ((rc = lr_writer_open(path, &wcfg, src->tok_kind, src->tok, src->tok_bytes, &w))) {
        lr_rot_free(&R);
        return rc;
    }
    acc a = { st, 0, 0, NULL, o->rotated_residual ? &R : NULL };
    if (o->gptq_calib && !o->keep_f16) {
        double t1 = lr_now();
        rc = lr_calib_open(src, &cfg, o->gptq_calib, o->calib_tokens > 0 ? o->calib_tokens : LR_IMPORT_CALIB_TOKENS,
                           o->nthreads, &a.calib);
        if (!rc && o->gptq_asym) rc = lr_calib_set_teacher(a.calib);
        st->calib_seconds += lr_now() - t1;
        if (rc) {
            lr_calib_close(a.calib);
            lr_writer_abort(w);
            lr_rot_free(&R);
            return rc;
        }
        st->calib_tokens = lr_calib_tokens(a.calib);
    }
    rc = write_all(w, src, &wcfg, o, &a);
    lr_rot_free(&R);
    lr_calib_close(a.calib);
    st->payload_bytes = lr_writer_bytes(w);
    if (rc) lr_writer_abort(w);
    else rc = lr_writer_finish(w);
    st->rel_err = a.ref > 0 ? a.err / a.ref : 0;
    st->seconds = lr_now() - t0;
    return rc;
}
