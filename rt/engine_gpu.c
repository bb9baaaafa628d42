/* The GPU decode engine: Llama/Qwen3 at batch 1 on the driver API and JIT
 * templates. One step is a fixed sequence of launches that reads the token
 * and position from device memory, so it is captured once as a CUDA graph and
 * replayed for every token (the step is re-captured only when the debug hook
 * is set, which runs it eagerly layer by layer).
 *
 * Per layer: [residual add +] RMSNorm -> rotation -> fused q|k|v GEMV ->
 * q/k norm + RoPE + KV write + attention (one kernel; LEECHRT_FUSE=0: two)
 * -> rotation (none when o's is per head, rotation kind 2: the attention
 * kernel applies it to each head it writes) -> o GEMV -> residual
 * add + RMSNorm -> rotation -> fused gate|up GEMV -> SwiGLU -> rotation ->
 * down GEMV. Then the final norm and the int8 head read in place.
 * A Planes14S gate|up is uploaded as a pair (gate and up rows interleaved)
 * whose GEMV ends in SwiGLU and writes h itself (LEECHRT_SWIGLU=0 keeps
 * op_silu_mul): one launch less per layer.
 * Projections sharing an input and a rotation are fused into one matrix
 * (rows concatenated) at load time: 4 GEMVs per layer instead of 7.
 *
 * An op feeding a rotated projection runs inside its rotation kernel
 * (rotate_slab.cu LR_XFORM; LEECHRT_FUSE=0 keeps them separate): residual
 * add + RMSNorm before q|k|v and gate|up: with the fused RoPE + attention,
 * 10 launches per layer instead of 13 (9 with the SwiGLU end, 8 with o's
 * rotation per head). The fused norm's CTAs all read the residual
 * stream while it is being updated, so the stream lives in two buffers: a
 * fused norm reads xb[cur] (+ the pending add) and writes the sum to
 * xb[cur ^ 1]; the separate norm kernel (one CTA) updates xb[cur] in place.
 * The step is a fixed sequence, so cur is known at enqueue time.
 *
 * A rotated residual (config rotated_residual, docs/format.md): the stream
 * is one buffer, xb[0], already in the readers' basis, so q|k|v and gate|up
 * get no rotation; their Planes14S GEMVs take the norm (unit gains: a scale
 * per vector, spec norm) and o and down add into the stream (spec res), so a
 * layer is q|k|v, RoPE-attention, o, gate|up (SwiGLU), rotation, down: 6
 * launches. A GEMV without those ends keeps the norm kernel before it and
 * the add pending into that kernel (rres_read / rres_write).
 *
 * Graphs: the step ending in the logits' copy, and the greedy step ending in
 * op_argmax and an 8-byte copy; and the same two again with the
 * long-context attention kernel, taken by the steps from position
 * LEECHRT_ATT_LONG on (default 256; 0 turns it off). */
#include "jit/jit.h"
#include "jit/timeline.h"
#include "kernels/gemv_leech.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/rotation.h"
#include "kernels/tuning.h"
#include "loader/arch.h"
#include "rt/cu.h"
#include "rt/engine.h"
#include "rt/timeline.h"
#include "util/err.h"
#include "util/half.h"
#include "util/setting.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PROJ_QKV, PROJ_O, PROJ_GU, PROJ_DOWN, NPROJ };

/* Phases of a step, for lr_engine_gpu_phases. */
enum { PH_EMBED, PH_NORM, PH_ROT, PH_NORM_ROT, PH_QKV, PH_ROPE, PH_ATT, PH_ROPE_ATT, PH_O, PH_GU, PH_SILU,
       PH_DOWN, PH_HEAD, PH_ARGMAX, NPH };
static const char *const phase_names[NPH] = { "embed",    "norm",      "rotation",       "norm_rotation", "gemv_qkv",
                                              "rope_kv",  "attention", "rope_attention", "gemv_o",        "gemv_gateup",
                                              "silu_mul", "gemv_down", "head",
                                              "argmax" };

/* One (possibly fused) projection y = W (R x). */
typedef struct proj {
    int rows, cols;
    int rot;               /* index into the engine's rotations, -1 for none */
    int leech;             /* 1: Leech layout; 0: f16 */
    int swiglu;            /* gate|up whose GEMV ends in SwiGLU: it writes h, no op_silu_mul */
    int xrot;              /* the GEMV rotates its input in its prologue: no rotation launch */
    CUdeviceptr hdbits, hq; /* rotation kind 2 (per head, o only): its signs and Q_odd table, applied
                               by the attention kernel to each head's output; 0 for none */
    lr_leech_dev *ld;
    CUdeviceptr w16;       /* f16 rows x cols */
    CUfunction f16fn;
    lr_launch_geom g;
} proj;

typedef struct layer {
    CUdeviceptr attn_norm, ffn_norm, q_norm, k_norm; /* f32; q/k norms 0 for Llama */
    CUdeviceptr kc, vc;                               /* f16 [ctx][n_kv][head_dim] */
    proj p[NPROJ];
} layer;

typedef struct rotation { int n; uint64_t seed; lr_rot_dev dev; } rotation;

typedef struct gpu_engine {
    lr_engine base;
    lr_model_config c;
    int q_dim, kv_dim;
    layer *L;
    rotation rots[16];
    int nrots;
    CUdeviceptr emb_q, emb_sb, head_q, head_sb, out_norm;
    CUdeviceptr d_tok, d_pos, xb[2], xn, xr, qkv, att, o, gu, h, down, logits;
    int cur;               /* the residual stream is xb[cur] (see the top) */
    int fuse;              /* fuse ops into the rotations that follow them */
    int swiglu;            /* LEECHRT_SWIGLU: gate|up in Planes14S end in SwiGLU (default 1) */
    int trig;              /* LEECHRT_GEMV_TRIGGER: which GEMVs let their dependents launch early
                              (after the main loop: bit 0 q|k|v, 1 gate|up, 2 down; at entry: 3 o) */
    int xrot;              /* LEECHRT_XROT: which Planes14S GEMVs rotate their input in their prologue
                              (bit 0: o, bit 1: down) */
    int rres_ends;         /* LEECHRT_RRES_ENDS (default 1): in a rotated-residual model, Planes14S
                              GEMVs take the norm (q|k|v, gate|up; unit gains) and the residual add
                              (o, down) themselves (lr_leech_engine_ends) */
    CUfunction f_embed, f_norm, f_rope, f_att, f_rope_att, f_silu, f_head, f_argmax;
    int head_mma;          /* f_head is op_head_int8g_mma with this many row blocks per CTA; 0: op_head_int8g */
    unsigned head_threads; /* f_head's CTA */
    CUstream s;
    CUgraphExec graph;     /* the step, copying the logits to host_logits */
    CUgraphExec graph_greedy; /* the step, copying only the argmax slot to h_io[4..5] */
    CUgraphExec graph_long, graph_greedy_long; /* the same from position att_long_from on */
    int att_long_from;     /* 0: off; else steps from this position use the long-context attention */
    int att_long;          /* enqueue the long-context attention kernel */
    CUfunction f_rope_att_long;
    int graph_nodes;
    int greedy;            /* enqueue the greedy step's end (argmax, token copy) */
    unsigned phase_mask;   /* enqueue only launches of these phases (profiling) */
    int phase;             /* phase of the launches being enqueued */
    float *host_logits;    /* page-locked: the step graph copies the logits here */
    int32_t *h_io;         /* page-locked {token, position, 0, 0, slot, pad, RoPE table}: the step
                              graph copies the first four words in (the zeros reset the argmax slot)
                              and, with rope_table, the table (from word 8, head_dim doubles); the
                              greedy graph copies the slot out into h_io[4..5] */
    int att_splits;        /* op_rope_attention's CTAs per q head */
    unsigned att_threads;  /* op_rope_attention's threads (what f_rope_att was compiled for) */
    int rope_table;        /* RoPE's cos/sin for the step's position from the host, not f64 per layer */
    double *rope_next;     /* the table of position rope_next_pos, taken while the GPU runs a step */
    int rope_next_pos;
    float *host_x, *host_y;
    size_t bytes_weights;
    int leech_layout;      /* LR_LEECH_DEV_* */
} gpu_engine;

/* ---- loading ---- */

static int upload(CUdeviceptr *d, const void *src, size_t n, size_t *acc)
{
    int rc = lr_cu_alloc(d, n);
    if (!rc) rc = lr_cu_h2d(*d, src, n);
    if (!rc && acc) *acc += n;
    return rc;
}

/* A 1-D norm weight as f32 on the device (f32/f16/bf16 in the file); *unit
 * (may be NULL): whether every gain is exactly 1. */
static int upload_norm_unit(gpu_engine *e, const lr_tensor_view *t, CUdeviceptr *d, int *unit)
{
    *d = 0;
    if (unit) *unit = 0;
    if (!t) return LR_OK;
    float *v = malloc(sizeof(float) * t->nelem);
    if (!v) return LR_FAIL(LR_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < t->nelem; i++) {
        if (t->codec == LR_CODEC_F32) v[i] = ((const float *)t->u.dense)[i];
        else if (t->codec == LR_CODEC_F16) v[i] = lr_half_to_float(((const uint16_t *)t->u.dense)[i]);
        else if (t->codec == LR_CODEC_BF16) v[i] = lr_bf16_to_float(((const uint16_t *)t->u.dense)[i]);
        else { free(v); return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: norm codec %s", t->name, lr_codec_name(t->codec)); }
    }
    if (unit) {
        *unit = 1;
        for (uint64_t i = 0; i < t->nelem; i++) *unit &= v[i] == 1.f;
    }
    int rc = upload(d, v, sizeof(float) * t->nelem, &e->bytes_weights);
    free(v);
    return rc;
}

static int upload_norm(gpu_engine *e, const lr_tensor_view *t, CUdeviceptr *d) { return upload_norm_unit(e, t, d, NULL); }

static int upload_int8g(gpu_engine *e, const lr_tensor_view *t, CUdeviceptr *q, CUdeviceptr *sb)
{
    if (t->codec != LR_CODEC_INT8G || t->u.i8.group != 64)
        return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: the GPU engine reads embedding/head as int8 groups of 64 (got %s)",
                       t->name, lr_codec_name(t->codec));
    int rc = upload(q, t->u.i8.q, t->rows * t->cols, &e->bytes_weights);
    if (!rc) rc = upload(sb, t->u.i8.scale_bias, t->rows * (t->cols / 64) * 4, &e->bytes_weights);
    return rc;
}

/* Rotation kind 2 (per head; the reader allows it on attn_output only): no
 * launch of its own, the attention (op_rope_attention, or op_attention under
 * LEECHRT_FUSE=0) applies it to each head it writes, so the step has one
 * launch fewer per layer (docs/engine.md). */
static int heads_rotation(gpu_engine *e, const lr_tensor_view *t, proj *p)
{
    lr_rot host;
    int rc = lr_rot_init_blocks(&host, (int)t->cols, (int)e->c.head_dim, t->u.leech.rot_seed);
    if (rc) return lr_wrap(rc, "tensor %s: per-head rotation", t->name);
    rc = lr_rot_dev_tables(&host, &p->hdbits, &p->hq);
    lr_rot_free(&host);
    return rc;
}

static int rotation_for(gpu_engine *e, const lr_tensor_view *t, int *idx)
{
    *idx = -1;
    if (t->codec != LR_CODEC_LEECH || t->u.leech.rot_kind == LR_ROT_NONE || t->u.leech.rot_kind == LR_ROT_HEADS)
        return LR_OK;
    if (t->u.leech.rot_kind != LR_ROT_HADAMARD)
        return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: rotation kind %d", t->name, t->u.leech.rot_kind);
    for (int i = 0; i < e->nrots; i++)
        if (e->rots[i].n == (int)t->cols && e->rots[i].seed == t->u.leech.rot_seed) { *idx = i; return LR_OK; }
    if (e->nrots == 16) return LR_FAIL(LR_EUNSUPPORTED, "more than 16 distinct input rotations");
    rotation *r = &e->rots[e->nrots];
    lr_rot host;
    int rc = lr_rot_init(&host, (int)t->cols, t->u.leech.rot_seed);
    const int slab = lr_rot_slab_for((int)t->cols);
    if (!rc) rc = lr_rot_dev_create(&r->dev, &host, LR_ROT_AUTO, slab, 0);
    lr_rot_free(&host);
    if (rc) return lr_wrap(rc, slab ? "tensor %s: rotation (LEECHRT_ROT_SLAB)" : "tensor %s: rotation", t->name);
    r->n = (int)t->cols;
    r->seed = t->u.leech.rot_seed;
    *idx = e->nrots++;
    return LR_OK;
}

/* The rotation a projection's input gets: rotation_for's, except that a
 * rotated residual (docs/format.md) arrives in its readers' basis already. */
static int input_rotation(gpu_engine *e, const lr_tensor_view *t, int *idx)
{
    if (e->c.rotated_residual && lr_reads_residual(t->name)) return *idx = -1, LR_OK;
    return rotation_for(e, t, idx);
}

/* Same input treatment: fusable into one row-concatenated matrix. */
static int same_input(const lr_tensor_view *a, const lr_tensor_view *b)
{
    if (a->codec != b->codec || a->cols != b->cols) return 0;
    if (a->codec != LR_CODEC_LEECH) return 1;
    return a->u.leech.rot_kind == b->u.leech.rot_kind && a->u.leech.rot_seed == b->u.leech.rot_seed &&
           a->u.leech.gain_bits == b->u.leech.gain_bits && a->u.leech.max_shell == b->u.leech.max_shell;
}

static int build_proj(gpu_engine *e, const lr_tensor_view *const *parts, int n, const lr_leech_ends *ends, proj *p)
{
    memset(p, 0, sizeof *p);
    for (int i = 1; i < n; i++)
        if (!same_input(parts[0], parts[i]))
            return LR_FAIL(LR_EUNSUPPORTED, "tensors %s and %s share an input but not a codec/rotation: the GPU engine "
                           "fuses them", parts[0]->name, parts[i]->name);
    p->cols = (int)parts[0]->cols;
    for (int i = 0; i < n; i++) p->rows += (int)parts[i]->rows;
    int rc = input_rotation(e, parts[0], &p->rot);
    if (!rc && parts[0]->codec == LR_CODEC_LEECH && parts[0]->u.leech.rot_kind == LR_ROT_HEADS)
        rc = n == 1 ? heads_rotation(e, parts[0], p)
                    : LR_FAIL(LR_EUNSUPPORTED, "tensor %s: a per-head rotation on a fused input", parts[0]->name);
    if (rc) return rc;
    if (parts[0]->codec == LR_CODEC_LEECH) {
        p->leech = 1;
        rc = lr_leech_dev_upload(parts, n, 0, e->leech_layout, ends, &p->ld);
        if (!rc) e->bytes_weights += lr_leech_dev_bytes(p->ld);
        return rc ? lr_wrap(rc, "uploading %s", parts[0]->name) : rc;
    }
    if (parts[0]->codec != LR_CODEC_F16 && parts[0]->codec != LR_CODEC_F32 && parts[0]->codec != LR_CODEC_BF16)
        return LR_FAIL(LR_EUNSUPPORTED, "tensor %s: codec %s not served by the GPU engine", parts[0]->name,
                       lr_codec_name(parts[0]->codec));
    size_t nel = (size_t)p->rows * p->cols;
    uint16_t *w = malloc(nel * 2);
    if (!w) return LR_FAIL(LR_ENOMEM, "out of memory");
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const lr_tensor_view *t = parts[i];
        for (uint64_t j = 0; j < t->nelem; j++, k++) {
            if (t->codec == LR_CODEC_F16) w[k] = ((const uint16_t *)t->u.dense)[j];
            else if (t->codec == LR_CODEC_F32) w[k] = lr_float_to_half(((const float *)t->u.dense)[j]);
            else w[k] = lr_float_to_half(lr_bf16_to_float(((const uint16_t *)t->u.dense)[j]));
        }
    }
    rc = upload(&p->w16, w, nel * 2, &e->bytes_weights);
    free(w);
    lr_jit_spec s;
    if (!rc) rc = lr_gemv_f16_spec(&s, &p->g, p->rows, p->cols, lr_gemv_f16_default_geom(p->rows, p->cols),
                                   lr_cu_smem_budget(), 0);
    if (!rc) rc = lr_jit_get(&s, &p->f16fn);
    return rc;
}

/* gate|up: one Planes14S pair whose GEMV ends in SwiGLU (writes h) where
 * the layout is Planes14S or its 3-bit form and the engine fuses; else
 * build_proj (also when
 * the shape's geometry cannot end a pair in one warp). */
static int build_gate_up(gpu_engine *e, const lr_tensor_view *const gu[2], const lr_leech_ends *ends, proj *p)
{
    const int rows = (int)(gu[0]->rows + gu[1]->rows), cols = (int)gu[0]->cols;
    const int layout = e->leech_layout == LR_LEECH_DEV_DEFAULT ? lr_leech_dev_default_layout(rows, cols) : e->leech_layout;
    if (!e->swiglu || !e->fuse || gu[0]->codec != LR_CODEC_LEECH || layout == LR_LEECH_DEV_P14 ||
        gu[0]->rows != gu[1]->rows || !same_input(gu[0], gu[1]))
        return build_proj(e, gu, 2, ends, p);
    memset(p, 0, sizeof *p);
    p->cols = cols, p->rows = rows, p->leech = 1, p->swiglu = 1;
    int rc = input_rotation(e, gu[0], &p->rot);
    if (!rc) rc = lr_leech_dev_upload_swiglu(gu, 0, layout, ends, &p->ld);
    if (rc == LR_EUNSUPPORTED) {
        lr_clear_error();
        return build_proj(e, gu, 2, ends, p);
    }
    if (!rc) e->bytes_weights += lr_leech_dev_bytes(p->ld);
    return rc ? lr_wrap(rc, "uploading %s", gu[0]->name) : rc;
}

/* Gets p's rotation kernel with input transform xform (when the engine
 * fuses and p has a rotation). A variant over the shared-memory budget is
 * left out: its ops then run as separate launches. */
static int want_fused(gpu_engine *e, const proj *p, int xform)
{
    if (!e->fuse || p->rot < 0) return LR_OK;
    int rc = lr_rot_dev_enable(&e->rots[p->rot].dev, xform);
    if (rc == LR_ERANGE) lr_clear_error(), rc = LR_OK;
    return rc;
}

/* p's GEMV rotates its input in its prologue (lr_leech_dev_enable_rot)
 * when the engine fuses, p is Planes14S with a rotation and the kernel fits
 * the budget; otherwise the rotation stays a launch of its own. */
static int want_xrot(gpu_engine *e, proj *p)
{
    p->xrot = 0;
    /* (the prologue-rotation kernel has the plain end: not for a GEMV ending in the residual add) */
    if (!e->fuse || p->rot < 0 || !p->leech || p->swiglu || lr_leech_dev_layout(p->ld) != LR_LEECH_DEV_P14S ||
        lr_leech_dev_mode(p->ld))
        return LR_OK;
    int rc = lr_leech_dev_enable_rot(p->ld);
    if (rc == LR_ERANGE || rc == LR_EUNSUPPORTED) return lr_clear_error(), LR_OK;
    p->xrot = !rc;
    return rc;
}

static const lr_tensor_view *need(const lr_model *m, int l, const char *role, int *rc)
{
    const lr_tensor_view *t = lr_model_layer_tensor(m, l, role);
    if (!t && !*rc) *rc = LR_FAIL(LR_EFORMAT, "%s: layer %d has no %s", lr_model_path(m), l, role);
    return t;
}

static int get_fn(const char *op, int head_dim, CUfunction *f)
{
    lr_jit_spec s;
    lr_op_spec(&s, op, head_dim);
    return lr_jit_get(&s, f);
}

/* ---- the step ---- */

static unsigned cdiv(unsigned a, unsigned b) { return (a + b - 1) / b; }

/* The step's input block (d_tok on the device, h_io on the host): token,
 * position, the argmax slot (u64), pad, then the RoPE table from byte 32
 * (head_dim doubles: cos, sin per frequency). */
#define IO_ROPE_OFF 32
static size_t io_bytes(const lr_model_config *c) { return IO_ROPE_OFF + 8 * (size_t)c->head_dim; }

/* The long-context attention (LEECHRT_ATT_LONG): 256 threads, up to 16 CTAs
 * per q head over the positions. Measured against the default 1024 x 1 at
 * eb1eefa (h200_engine_variants.csv): RoPE-attention 447 against 497 us
 * per 14B token at position 456, 731 against 1398 at 2008, but 294 against
 * 217 at 72, hence a second graph for the steps from a position on.
 * The default switch position: over 2000 steps 246.4 against 231.3 tok/s
 * (1f930b5, LEECHRT_ATT_LONG=256 against 0; 128 measured the same), and
 * no change over positions 8-72. Interpolating the costs above puts the
 * crossover near position 300. */
#define ATT_LONG_FROM 256
static unsigned att_long_threads(int head_dim) { return lr_op_rope_attention_threads_at(head_dim, LR_ATT_LONG_THREADS); }

/* Whether the current phase is being enqueued (all of them but when profiling). */
static int on(const gpu_engine *e) { return (e->phase_mask >> e->phase) & 1u; }

static int L2(gpu_engine *e, CUfunction f, unsigned grid, unsigned grid_y, unsigned threads, void **args, int *count)
{
    if (!on(e)) return LR_OK;
    (*count)++;
    return lr_cu_launch(f, (lr_dim3){ grid, grid_y, 1 }, (lr_dim3){ threads, 1, 1 }, 0, e->s, args);
}

static int L1(gpu_engine *e, CUfunction f, unsigned grid, unsigned threads, void **args, int *count)
{
    return L2(e, f, grid, 1, threads, args, count);
}

/* y = W in, in the current phase: in is already rotated when p has a rotation. */
static int run_gemv(gpu_engine *e, const proj *p, CUdeviceptr in, CUdeviceptr y, int *count)
{
    if (!on(e)) return LR_OK;
    (*count)++;
    if (p->leech) return lr_leech_dev_gemv(p->ld, in, y, e->s);
    int rows = p->rows, cols = p->cols;
    void *args[] = { (void *)&p->w16, &in, &y, &rows, &cols };
    return lr_cu_launch(p->f16fn, p->g.grid, p->g.block, p->g.smem, e->s, args);
}

/* y = W (R x); scratch holds R x. */
static int run_proj(gpu_engine *e, const proj *p, CUdeviceptr x, CUdeviceptr y, int *count)
{
    int rc;
    CUdeviceptr in = x;
    const int ph = e->phase;
    if (p->xrot) { /* the GEMV rotates x itself */
        if (!on(e)) return LR_OK;
        (*count)++;
        const lr_rot_dev *rd = &e->rots[p->rot].dev;
        return lr_leech_dev_gemv_rot(p->ld, x, y, rd->dbits, rd->q, e->s);
    }
    if (p->rot >= 0) {
        e->phase = PH_ROT;
        if (on(e)) {
            if ((rc = lr_rot_dev_launch(&e->rots[p->rot].dev, x, e->xr, 1, e->s))) return rc;
            (*count)++;
        }
        e->phase = ph;
        in = e->xr;
    }
    return run_gemv(e, p, in, y, count);
}

/* The rotation of p when the engine fuses and it has input transform xform
 * enabled (want_fused). */
static const lr_rot_dev *fused_rot(const gpu_engine *e, const proj *p, int xform)
{
    return e->fuse && p->rot >= 0 && e->rots[p->rot].dev.fx[xform] ? &e->rots[p->rot].dev : NULL;
}

/* The separate norm kernel: xb[cur] += y (y 0: none) in place, xn = its norm. */
static int norm(gpu_engine *e, CUdeviceptr y, CUdeviceptr w, int *count)
{
    int n = (int)e->c.hidden;
    float eps = (float)e->c.norm_eps;
    CUdeviceptr x = e->xb[e->cur], out = e->xn;
    void *args[] = { &x, &y, &w, &out, &n, &eps };
    return L1(e, e->f_norm, 1, 1024, args, count);
}

/* x += add (add 0: none), then out = W R (rmsnorm(x) * w): one fused
 * launch when p's rotation serves it (x moves to the other buffer), else the
 * norm kernel and run_proj. gemv_phase: the phase of the GEMV. */
static int norm_proj(gpu_engine *e, CUdeviceptr add, CUdeviceptr w, const proj *p, CUdeviceptr out, int gemv_phase,
                     int *count)
{
    int rc;
    const lr_rot_dev *rd = fused_rot(e, p, LR_ROT_X_NORM);
    if (!rd) {
        e->phase = PH_NORM;
        if ((rc = norm(e, add, w, count))) return rc;
        e->phase = gemv_phase;
        return run_proj(e, p, e->xn, out, count);
    }
    CUdeviceptr x = e->xb[e->cur], xsum = e->xb[e->cur ^ 1];
    e->cur ^= 1; /* whether or not this phase is enqueued: the buffers follow the sequence */
    e->phase = PH_NORM_ROT;
    if (on(e)) {
        if ((rc = lr_rot_dev_launch_norm(rd, x, add, w, xsum, (float)e->c.norm_eps, e->xr, 1, e->s))) return rc;
        (*count)++;
    }
    e->phase = gemv_phase;
    return run_gemv(e, p, e->xr, out, count);
}

/* What a projection's Planes14S GEMV ends in: bit 0 the norm, bit 1 the
 * residual add (lr_leech_dev_mode; 0 for f16 and Planes14). */
static int proj_mode(const proj *p) { return p->leech && p->ld ? lr_leech_dev_mode(p->ld) : 0; }

/* A rotated residual's reader (q|k|v, gate|up; no rotation: the stream
 * already carries it): its GEMV takes the stream itself when it ends in the
 * norm, else the norm kernel makes xn. An output still pending (*pending:
 * the o or down before could not add itself) goes into the stream through
 * the norm kernel first. */
static int rres_read(gpu_engine *e, CUdeviceptr *pending, CUdeviceptr w, const proj *p, CUdeviceptr out,
                     int gemv_phase, int *count)
{
    int rc;
    const int fused = proj_mode(p) & 1;
    if (!fused || *pending) {
        e->phase = PH_NORM;
        if ((rc = norm(e, *pending, w, count))) return rc;
        *pending = 0;
    }
    e->phase = gemv_phase;
    return run_proj(e, p, fused ? e->xb[e->cur] : e->xn, out, count);
}

/* A rotated residual's writer (o, down): its GEMV adds into the stream when
 * it ends in the residual add, else its output (in scratch) stays pending. */
static int rres_write(gpu_engine *e, CUdeviceptr *pending, const proj *p, CUdeviceptr x, CUdeviceptr scratch,
                      int *count)
{
    const int res = (proj_mode(p) >> 1) & 1;
    *pending = res ? 0 : scratch;
    return run_proj(e, p, x, res ? e->xb[e->cur] : scratch, count);
}

static int layer_hook(gpu_engine *e, int l, int with_down)
{
    /* The stream after layer l is x (+ the pending down output); after the
     * last layer the hook reports the final-normed vector the head reads. */
    int n = (int)e->c.hidden, rc = lr_cu_stream_sync(e->s);
    if (!rc) rc = lr_cu_d2h(e->host_x, l == (int)e->c.n_layers ? e->xn : e->xb[e->cur], (size_t)n * 4);
    if (!rc && with_down) rc = lr_cu_d2h(e->host_y, e->down, (size_t)n * 4);
    if (rc) return rc;
    if (with_down)
        for (int i = 0; i < n; i++) e->host_x[i] += e->host_y[i];
    e->base.on_layer(e->base.on_layer_user, l, e->base.pos, e->host_x, n);
    return LR_OK;
}

/* Enqueues the whole step; with hooks it syncs and reports after each layer. */
static int enqueue_step(gpu_engine *e, int hooks, int *count)
{
    const lr_model_config *c = &e->c;
    int rc, hidden = (int)c->hidden, group = 64;
    *count = 0;
    e->cur = 0;
    e->phase = PH_EMBED;
    /* token, position, the argmax slot's zero and the RoPE table: one copy */
    /* (bytes 24..31 are zeros on the host: the flag floor's counter, lr_engine_gpu_graph_floor_flag_us) */
    const size_t in_bytes = e->rope_table ? io_bytes(c) : IO_ROPE_OFF;
    if (on(e) && (rc = lr_cu_h2d_async(e->d_tok, e->h_io, in_bytes, e->s))) return rc;
    CUdeviceptr rope = e->rope_table ? e->d_tok + IO_ROPE_OFF : 0;
    {
        void *a[] = { &e->emb_q, &e->emb_sb, &e->d_tok, &e->xb[0], &hidden, &group };
        if ((rc = L1(e, e->f_embed, cdiv((unsigned)hidden, 256), 256, a, count))) return rc;
    }
    if (hooks && (rc = layer_hook(e, -1, 0))) return rc;
    int nh = (int)c->n_heads, nkv = (int)c->n_kv_heads, hd = (int)c->head_dim, inter = (int)c->intermediate;
    float eps = (float)c->norm_eps, theta = (float)c->rope_theta, scale = (float)(1.0 / sqrt((double)hd));
    /* a rotated residual (docs/format.md): the step reads and adds in place, xb[0] */
    const int rr = c->rotated_residual;
    CUdeviceptr pend = 0; /* rr: an output still to be added to the stream */
    for (uint32_t l = 0; l < c->n_layers; l++) {
        layer *L = &e->L[l];
        rc = rr ? rres_read(e, &pend, L->attn_norm, &L->p[PROJ_QKV], e->qkv, PH_QKV, count)
                : norm_proj(e, l ? e->down : 0, L->attn_norm, &L->p[PROJ_QKV], e->qkv, PH_QKV, count);
        if (rc) return rc;
        if (e->fuse) { /* q/k norm + RoPE + KV write + attention in one launch */
            e->phase = PH_ROPE_ATT;
            /* o's per-head rotation (0: none, the rotation before o runs in run_proj) */
            void *a[] = { &e->qkv, &L->q_norm, &L->k_norm, &L->kc, &L->vc, &e->att, &e->d_pos, &rope, &nh, &nkv, &eps,
                          &theta, &scale, &L->p[PROJ_O].hdbits, &L->p[PROJ_O].hq };
            rc = e->att_long ? L2(e, e->f_rope_att_long, (unsigned)nh, LR_ATT_LONG_SPLITS, att_long_threads(hd), a, count)
                             : L2(e, e->f_rope_att, (unsigned)nh, (unsigned)e->att_splits, e->att_threads,
                                  a, count);
            if (rc) return rc;
        } else {
            e->phase = PH_ROPE;
            void *a[] = { &e->qkv, &L->q_norm, &L->k_norm, &L->kc, &L->vc, &e->d_pos, &nh, &nkv, &hd, &eps, &theta };
            if ((rc = L1(e, e->f_rope, (unsigned)(nh + nkv), hd > 128 ? (unsigned)hd : 128, a, count))) return rc;
            e->phase = PH_ATT;
            void *b[] = { &e->qkv, &L->kc, &L->vc, &e->att, &e->d_pos, &nh, &nkv, &scale,
                          &L->p[PROJ_O].hdbits, &L->p[PROJ_O].hq };
            if ((rc = L1(e, e->f_att, (unsigned)nh, 256, b, count))) return rc;
        }
        e->phase = PH_O;
        rc = rr ? rres_write(e, &pend, &L->p[PROJ_O], e->att, e->o, count) : run_proj(e, &L->p[PROJ_O], e->att, e->o, count);
        if (rc) return rc;
        const int sw = L->p[PROJ_GU].swiglu; /* the GEMV writes h itself */
        rc = rr ? rres_read(e, &pend, L->ffn_norm, &L->p[PROJ_GU], sw ? e->h : e->gu, PH_GU, count)
                : norm_proj(e, e->o, L->ffn_norm, &L->p[PROJ_GU], sw ? e->h : e->gu, PH_GU, count);
        if (rc) return rc;
        e->phase = PH_SILU;
        if (!sw) {
            void *a[] = { &e->gu, &e->h, &inter };
            if ((rc = L1(e, e->f_silu, cdiv((unsigned)inter, 256), 256, a, count))) return rc;
        }
        e->phase = PH_DOWN;
        rc = rr ? rres_write(e, &pend, &L->p[PROJ_DOWN], e->h, e->down, count)
                : run_proj(e, &L->p[PROJ_DOWN], e->h, e->down, count);
        if (rc) return rc;
        if (hooks && (rc = layer_hook(e, (int)l, rr ? pend != 0 : 1))) return rc;
    }
    e->phase = PH_HEAD; /* the final norm: the head reads xn in place, no rotation to fuse into */
    if ((rc = norm(e, rr ? pend : e->down, e->out_norm, count))) return rc;
    if (hooks && (rc = layer_hook(e, (int)c->n_layers, 0))) return rc;
    int vocab = (int)c->vocab;
    void *a[] = { &e->head_q, &e->head_sb, &e->xn, &e->logits, &vocab, &hidden };
    const unsigned head_rows = e->head_mma ? lr_op_head_mma_rows_per_cta(e->head_mma) : lr_op_head_rows_per_cta();
    if ((rc = L1(e, e->f_head, cdiv((unsigned)vocab, head_rows), e->head_threads, a, count))) return rc;
    if (!e->greedy) return on(e) ? lr_cu_d2h_async(e->host_logits, e->logits, (size_t)vocab * 4, e->s) : LR_OK;
    /* Greedy: 8 bytes (the argmax slot) leave the device instead of the vocab's logits (608 KB
     * at 14B) and the host scans nothing. */
    e->phase = PH_ARGMAX;
    CUdeviceptr best = e->d_tok + 8; /* zeroed by this step's copy-in */
    void *b[] = { &e->logits, &vocab, &best };
    if ((rc = L1(e, e->f_argmax, lr_op_argmax_grid(vocab), 256, b, count))) return rc;
    return on(e) ? lr_cu_d2h_async(&e->h_io[4], best, 8, e->s) : LR_OK;
}

static void gpu_close(lr_engine *b);

/* Captures the step's launches of the phases in mask as one graph; greedy
 * picks its end (argmax and the 8-byte slot's copy, or the logits' copy),
 * att_long the long-context attention kernel. */
static int capture(gpu_engine *e, int greedy, int att_long, unsigned mask, CUgraphExec *g, int *nodes)
{
    *g = NULL;
    int n = 0, rc = lr_cu_graph_begin(e->s);
    if (rc) return rc;
    int was = lr_cu_set_pdl(e->base.pdl);
    e->greedy = greedy, e->att_long = att_long, e->phase_mask = mask;
    int r2 = enqueue_step(e, 0, &n);
    e->greedy = 0, e->att_long = 0, e->phase_mask = ~0u;
    lr_cu_set_pdl(was);
    /* a failed launch invalidates the capture, and ending it then says only that: keep the
       launch's own message */
    char why[1024] = "";
    if (r2) snprintf(why, sizeof why, "%s", lr_errmsg());
    rc = lr_cu_graph_end(e->s, g);
    if (r2) rc = LR_FAIL(r2, "capturing the step: %s", why), lr_cu_graph_destroy(*g), *g = NULL;
    if (nodes) *nodes = n;
    return rc;
}

/* The process-wide settings an open reads (kernels/ops.h, gemv_leech.h,
 * rotation.h) back to their values at the process's first open (the
 * library's defaults), so an unset variable means the default, not what an
 * earlier open in the same process set (bench_engine --env runs its variants
 * in one process; '-' there unsets). */
static void settings_to_defaults(void)
{
    static int saved, head_unroll, head_mma, head_warps, att_threads, att_splits, early, side, i8, c3, rot_unroll, late,
        late_n, sibling, l2w_mask;
    /* (not the L2W KB and share: each open sets them to its device's defaults) */
    if (!saved) {
        sibling = lr_tuning_sibling, l2w_mask = lr_gemv_p14s_l2w_mask;
        head_unroll = lr_op_head_unroll, head_mma = lr_op_head_mma, att_threads = lr_op_att_threads;
        head_warps = lr_op_head_warps;
        att_splits = lr_op_att_splits, early = lr_gemv_p14s_early, side = lr_gemv_p14s_side, i8 = lr_gemv_p14s_i8;
        c3 = lr_gemv_p14s_c3, rot_unroll = lr_rot_unroll_max, late = lr_gemv_p14s_late, late_n = lr_gemv_p14s_late_n;
        saved = 1;
        return;
    }
    lr_tuning_sibling = sibling, lr_gemv_p14s_l2w_mask = l2w_mask;
    lr_op_head_unroll = head_unroll, lr_op_head_mma = head_mma, lr_op_att_threads = att_threads;
    lr_op_head_warps = head_warps;
    lr_op_att_splits = att_splits, lr_gemv_p14s_early = early, lr_gemv_p14s_side = side, lr_gemv_p14s_i8 = i8;
    lr_gemv_p14s_c3 = c3, lr_rot_unroll_max = rot_unroll, lr_gemv_p14s_late = late, lr_gemv_p14s_late_n = late_n;
}

static int gpu_open_locked(const lr_model *m, const lr_engine_opts *o, lr_engine **out);

/* Opens run one at a time in a process: an open sets the process-wide
 * settings above from the environment and its uploads read them, so two
 * opens in two threads must not interleave. (What a step reads is the
 * engine's own copy: att_splits, att_threads, head_mma, the uploads.) */
static int gpu_open(const lr_model *m, const lr_engine_opts *o, lr_engine **out)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    const int rc = gpu_open_locked(m, o, out);
    pthread_mutex_unlock(&mu);
    return rc;
}

static int gpu_open_locked(const lr_model *m, const lr_engine_opts *o, lr_engine **out)
{
    *out = NULL;
    int rc = lr_cu_init(o ? o->device : 0);
    if (rc) return lr_wrap(rc, "GPU backend");
    gpu_engine *e = calloc(1, sizeof *e);
    if (!e) return LR_FAIL(LR_ENOMEM, "out of memory");
    e->base.model = m;
    e->leech_layout = o ? o->leech_layout : 0;
    e->c = *lr_model_cfg(m);
    const lr_model_config *c = &e->c;
    e->base.max_context = o && o->max_context > 0 && o->max_context < (int)c->max_context ? o->max_context
                                                                                           : (int)c->max_context;
    settings_to_defaults();
    /* 0: the fused ops (into the rotations, RoPE with attention) as launches of their own (for comparisons) */
    e->fuse = 1;
    rc = lr_setting_int("GPU engine: LEECHRT_FUSE", getenv("LEECHRT_FUSE"), 0, 1, &e->fuse);
    /* programmatic dependent launch between the step's kernels where the device has it (0: off, for comparisons) */
    int pdl = 1;
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_PDL", getenv("LEECHRT_PDL"), 0, 1, &pdl);
    /* op_head_int8g's column steps loaded ahead (for comparisons; kernels/ops.h) */
    if (!rc) rc = lr_op_head_unroll_set("GPU engine: LEECHRT_HEAD_UNROLL", getenv("LEECHRT_HEAD_UNROLL"));
    /* gate|up ending in SwiGLU (1, default) or op_silu_mul after it (0, for comparisons) */
    e->swiglu = 1;
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_SWIGLU", getenv("LEECHRT_SWIGLU"), 0, 1, &e->swiglu);
    /* the rotation before o (bit 0) and down (bit 1) inside their Planes14S
       GEMVs' prologue instead of a launch of its own (0: none, for comparisons) */
    e->xrot = 0;
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_XROT", getenv("LEECHRT_XROT"), 0, 3, &e->xrot);
    /* a shape the tuning table has no row for on this device takes the row of
       a tuned sibling of its compute capability (1, default) or the
       rule-of-thumb geometry (0, for comparisons; kernels/tuning.h) */
    if (!rc) rc = lr_tuning_sibling_set("GPU engine: LEECHRT_TUNE_SIBLING", getenv("LEECHRT_TUNE_SIBLING"));
    /* the head on tensor cores or the scalar one (kernels/ops.h) */
    if (!rc) rc = lr_op_head_mma_set("GPU engine: LEECHRT_HEAD_MMA", getenv("LEECHRT_HEAD_MMA"));
    if (!rc) rc = lr_op_head_warps_set("GPU engine: LEECHRT_HEAD_WARPS", getenv("LEECHRT_HEAD_WARPS"));
    /* RoPE's angles from a host table per step (1, default) or f64 math in
       every layer's kernel (0, for comparisons) */
    e->rope_table = 1;
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_ROPE_TABLE", getenv("LEECHRT_ROPE_TABLE"), 0, 1, &e->rope_table);
    /* op_rope_attention's threads (kernels/ops.h) */
    if (!rc) rc = lr_op_att_threads_set("GPU engine: LEECHRT_ATT_THREADS", getenv("LEECHRT_ATT_THREADS"));
    if (!rc) rc = lr_op_att_splits_set("GPU engine: LEECHRT_ATT_SPLITS", getenv("LEECHRT_ATT_SPLITS"));
    /* Planes14S GEMVs load their first segments and class table before the
       PDL wait (1, default) or after it (0, for comparisons) */
    if (!rc) rc = lr_gemv_p14s_early_set("GPU engine: LEECHRT_GEMV_EARLY", getenv("LEECHRT_GEMV_EARLY"));
    /* Planes14S GEMVs with 1-4 side warps making the row ends' values, or
       none (0), where the tuning table does not say (kernels/gemv_leech.h) */
    if (!rc) rc = lr_gemv_p14s_side_set("GPU engine: LEECHRT_GEMV_SIDE", getenv("LEECHRT_GEMV_SIDE"));
    /* the split GEMVs' last CTAs lighter, at 70 % of a share (kernels/gemv_leech.h) */
    lr_gemv_p14s_late = LR_ENGINE_GEMV_LATE;
    if (!rc) rc = lr_gemv_p14s_late_set("GPU engine: LEECHRT_GEMV_LATE", getenv("LEECHRT_GEMV_LATE"));
    if (!rc) rc = lr_gemv_p14s_late_n_set("GPU engine: LEECHRT_GEMV_LATE_N", getenv("LEECHRT_GEMV_LATE_N"));
    /* the GEMVs after a small op ask L2 for part of their share before their PDL wait
       (KB per CTA, 0 = off; on by default where measured to pay: kernels/gemv_leech.h) */
    lr_gemv_p14s_l2w_device_defaults(lr_tuning_current_device(), &lr_gemv_p14s_l2w, &lr_gemv_p14s_l2w_share);
    if (!rc) rc = lr_gemv_p14s_l2w_set("GPU engine: LEECHRT_GEMV_L2W", getenv("LEECHRT_GEMV_L2W"));
    if (!rc) rc = lr_gemv_p14s_l2w_mask_set("GPU engine: LEECHRT_GEMV_L2W_MASK", getenv("LEECHRT_GEMV_L2W_MASK"));
    /* and at most this % of each CTA's share (1-100, default 100) */
    if (!rc) rc = lr_gemv_p14s_l2w_share_set("GPU engine: LEECHRT_GEMV_L2W_SHARE", getenv("LEECHRT_GEMV_L2W_SHARE"));
    /* a rotated-residual model's norm and residual add in its Planes14S GEMVs (1, default), or as
       launches (0: the norm kernel, the add pending into it) */
    e->rres_ends = 1;
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_RRES_ENDS", getenv("LEECHRT_RRES_ENDS"), 0, 1, &e->rres_ends);
    /* whether the GEMVs take those ends (an upload that cannot, another layout or f16, reports
       mode 0 and its step keeps the norm launch / the pending add: proj_mode) */
    const int rres = e->rres_ends && c->rotated_residual && e->fuse;
    /* which GEMVs let their dependents launch early: after their main loop (split geometries;
       bit 0 q|k|v, 1 gate|up, 2 down) or at entry (bit 3, o); lr_leech_engine_ends. The default
       follows the ends, as `cache warm` plans them */
    e->trig = LR_ENGINE_GEMV_TRIGGER_FOR(rres);
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_GEMV_TRIGGER", getenv("LEECHRT_GEMV_TRIGGER"), 0, 15, &e->trig);
    /* Planes14S GEMVs in the int8 mode over the int8 form where the tuning
     * table does not say (LEECHRT_GEMV_I8=1; 0 the default) */
    if (!rc) rc = lr_gemv_p14s_i8_set("GPU engine: LEECHRT_GEMV_I8", getenv("LEECHRT_GEMV_I8"));
    /* ... over the 3-bit form (LEECHRT_GEMV_C3=1, layouts/leech_vram/p14s_c3.h) */
    if (!rc) rc = lr_gemv_p14s_c3_set("GPU engine: LEECHRT_GEMV_C3", getenv("LEECHRT_GEMV_C3"));
    /* the rotations' gather: 16-byte loads in flight per thread (kernels/rotation.h) */
    if (!rc) rc = lr_rot_unroll_set("GPU engine: LEECHRT_ROT_UNROLL", getenv("LEECHRT_ROT_UNROLL"));
    /* the rotations' slab width per vector width (kernels/rotation.h; unset: the default plan) */
    if (!rc) rc = lr_rot_slab_set("GPU engine: LEECHRT_ROT_SLAB", getenv("LEECHRT_ROT_SLAB"));
    /* launch geometries ahead of the tuning table (kernels/tuning.h; unset: none) */
    if (!rc) rc = lr_tuning_override_set("GPU engine: LEECHRT_TUNE", getenv("LEECHRT_TUNE"));
    if (!rc && lr_op_att_splits > 1 && c->n_heads > 128)
        rc = LR_FAIL(LR_EUNSUPPORTED, "GPU engine: LEECHRT_ATT_SPLITS above 1 needs at most 128 q heads (the model has %u)",
                     c->n_heads);
    e->att_splits = lr_op_att_splits;
    e->att_threads = lr_op_rope_attention_threads((int)c->head_dim);
    /* from this position on, the long-context attention (a second pair of
       graphs; 0: off). Default ATT_LONG_FROM where the kernel applies; a
       context that never reaches it captures no second pair. */
    const char *long_env = getenv("LEECHRT_ATT_LONG");
    const int long_ok = c->n_heads <= 128 && e->fuse;
    e->att_long_from = long_ok ? ATT_LONG_FROM : 0;
    if (!rc) rc = lr_setting_int("GPU engine: LEECHRT_ATT_LONG", long_env, 0, 1 << 30, &e->att_long_from);
    if (!rc && e->att_long_from && !long_ok)
        rc = LR_FAIL(LR_EUNSUPPORTED, "GPU engine: LEECHRT_ATT_LONG needs the fused attention and at most 128 q heads "
                     "(the model has %u)", c->n_heads);
    if (e->att_long_from >= e->base.max_context) e->att_long_from = 0;
    e->head_mma = lr_op_head_mma;
    e->head_threads = e->head_mma ? lr_op_head_mma_threads((int)c->hidden) : 256;
    e->q_dim = (int)(c->n_heads * c->head_dim);
    e->kv_dim = (int)(c->n_kv_heads * c->head_dim);
    if (c->head_dim % 32 || c->head_dim > 1024 || c->hidden % 64)
        rc = LR_FAIL(LR_EUNSUPPORTED, "GPU engine: head_dim %u (needs a multiple of 32) or hidden %u (multiple of 64)",
                     c->head_dim, c->hidden);
    if (!rc) rc = lr_cu_stream_create(&e->s);
    e->L = calloc(c->n_layers, sizeof *e->L);
    if (!e->L && !rc) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    const lr_tensor_view *emb = lr_model_tensor(m, "token_embd"), *head = lr_model_tensor(m, "output");
    if (!rc && !emb) rc = LR_FAIL(LR_EFORMAT, "%s: no token_embd", lr_model_path(m));
    if (!rc) rc = upload_int8g(e, emb, &e->emb_q, &e->emb_sb);
    size_t emb_bytes = e->bytes_weights; /* one row of it is read per token */
    if (!rc && head) rc = upload_int8g(e, head, &e->head_q, &e->head_sb);
    else if (!rc) e->head_q = e->emb_q, e->head_sb = e->emb_sb; /* tied: read the embedding in place */
    if (!rc) rc = upload_norm(e, lr_model_tensor(m, "output_norm"), &e->out_norm);
    size_t kvbytes = (size_t)e->base.max_context * (size_t)e->kv_dim * 2;
    for (uint32_t l = 0; l < c->n_layers && !rc; l++) {
        layer *L = &e->L[l];
        const lr_tensor_view *qkv[3] = { need(m, (int)l, "attn_q", &rc), need(m, (int)l, "attn_k", &rc),
                                         need(m, (int)l, "attn_v", &rc) };
        const lr_tensor_view *ao = need(m, (int)l, "attn_output", &rc);
        const lr_tensor_view *gu[2] = { need(m, (int)l, "ffn_gate", &rc), need(m, (int)l, "ffn_up", &rc) };
        const lr_tensor_view *dn = need(m, (int)l, "ffn_down", &rc);
        if (rc) break;
        int unit_a, unit_f;
        /* (need's own rc first: a missing norm once went on as an empty one) */
        const lr_tensor_view *an = need(m, (int)l, "attn_norm", &rc), *fn = need(m, (int)l, "ffn_norm", &rc);
        if (rc || (rc = upload_norm_unit(e, an, &L->attn_norm, &unit_a)) ||
            (rc = upload_norm_unit(e, fn, &L->ffn_norm, &unit_f)) ||
            (rc = upload_norm(e, lr_model_layer_tensor(m, (int)l, "attn_q_norm"), &L->q_norm)) ||
            (rc = upload_norm(e, lr_model_layer_tensor(m, (int)l, "attn_k_norm"), &L->k_norm)))
            break;
        /* a rotated residual's ends in the GEMVs (rres, above): the norm (unit gains only: the
           GEMV scales its sums, it does not weigh x) and the residual add */
        const float eps = (float)c->norm_eps;
        const lr_leech_ends end_qkv = lr_leech_engine_ends(LR_PROJ_QKV, e->trig, rres, unit_a, eps),
                            end_o = lr_leech_engine_ends(LR_PROJ_O, e->trig, rres, 1, eps),
                            end_gu = lr_leech_engine_ends(LR_PROJ_GATEUP, e->trig, rres, unit_f, eps),
                            end_down = lr_leech_engine_ends(LR_PROJ_DOWN, e->trig, rres, 1, eps);
        if ((rc = build_proj(e, qkv, 3, &end_qkv, &L->p[PROJ_QKV])) || (rc = build_proj(e, &ao, 1, &end_o, &L->p[PROJ_O])) ||
            (rc = build_gate_up(e, gu, &end_gu, &L->p[PROJ_GU])) || (rc = build_proj(e, &dn, 1, &end_down, &L->p[PROJ_DOWN])))
            break;
        /* (SwiGLU stays a launch of its own: fused into the rotation before
           down it measured slower on the H200; docs/engine.md) */
        if ((rc = want_fused(e, &L->p[PROJ_QKV], LR_ROT_X_NORM)) || (rc = want_fused(e, &L->p[PROJ_GU], LR_ROT_X_NORM)))
            break;
        if (((e->xrot & 1) && (rc = want_xrot(e, &L->p[PROJ_O]))) ||
            ((e->xrot & 2) && (rc = want_xrot(e, &L->p[PROJ_DOWN]))))
            break;
        if ((rc = lr_cu_alloc(&L->kc, kvbytes)) || (rc = lr_cu_alloc(&L->vc, kvbytes))) {
            /* the cache is sized for the whole context up front: say so, and what shrinks it */
            rc = lr_wrap(rc, "the KV cache for %d positions (%.2f GiB over %u layers; a smaller max context, "
                         "leechrt --ctx, needs less)", e->base.max_context,
                         2.0 * (double)kvbytes * c->n_layers / (1u << 30), (unsigned)c->n_layers);
            break;
        }
    }
    size_t H = c->hidden, maxw = H;
    if ((size_t)e->q_dim > maxw) maxw = (size_t)e->q_dim;
    if (c->intermediate > maxw) maxw = c->intermediate;
    /* token, position, the argmax slot (u64), pad, the RoPE table: one copy in */
    if (!rc) rc = lr_cu_alloc(&e->d_tok, io_bytes(c));
    e->d_pos = e->d_tok + 4;
    if (!rc) rc = lr_cu_alloc(&e->xb[0], H * 4);
    if (!rc) rc = lr_cu_alloc(&e->xb[1], H * 4);
    if (!rc) rc = lr_cu_alloc(&e->xn, H * 4);
    if (!rc) rc = lr_cu_alloc(&e->xr, maxw * 4);
    if (!rc) rc = lr_cu_alloc(&e->qkv, (size_t)(e->q_dim + 2 * e->kv_dim) * 4);
    if (!rc) rc = lr_cu_alloc(&e->att, (size_t)e->q_dim * 4);
    if (!rc) rc = lr_cu_alloc(&e->o, H * 4);
    if (!rc) rc = lr_cu_alloc(&e->gu, (size_t)c->intermediate * 8);
    if (!rc) rc = lr_cu_alloc(&e->h, (size_t)c->intermediate * 4);
    if (!rc) rc = lr_cu_alloc(&e->down, H * 4);
    if (!rc) rc = lr_cu_alloc(&e->logits, (size_t)c->vocab * 4);
    if (!rc) rc = get_fn("op_embed_int8g", 0, &e->f_embed);
    if (!rc) rc = get_fn("op_add_rmsnorm", 0, &e->f_norm);
    if (!rc && e->fuse) rc = get_fn("op_rope_attention", (int)c->head_dim, &e->f_rope_att);
    if (!rc && e->att_long_from) {
        lr_jit_spec sp;
        lr_op_rope_attention_long_spec(&sp, (int)c->head_dim);
        rc = lr_jit_get(&sp, &e->f_rope_att_long);
    }
    if (!rc && !e->fuse) rc = get_fn("op_rope_kv", (int)c->head_dim, &e->f_rope);
    if (!rc && !e->fuse) rc = get_fn("op_attention", (int)c->head_dim, &e->f_att);
    if (!rc) rc = get_fn("op_silu_mul", 0, &e->f_silu);
    if (!rc) rc = get_fn("op_argmax", 0, &e->f_argmax);
    if (!rc)
        rc = e->head_mma ? get_fn("op_head_int8g_mma", (int)c->hidden, &e->f_head) : get_fn("op_head_int8g", 0, &e->f_head);
    /* Why page-locked: the step's copies run inside its graph as DMA instead
     * of synchronous copies through a staging buffer around it. */
    if (!rc) rc = lr_cu_alloc_host((void **)&e->host_logits, (size_t)c->vocab * 4);
    if (!rc) rc = lr_cu_alloc_host((void **)&e->h_io, io_bytes(c));
    if (!rc) memset(e->h_io, 0, io_bytes(c)); /* a replay before the first step reads token 0 at position 0 */
    if (!rc) lr_rope_table((double *)((char *)e->h_io + IO_ROPE_OFF), (int)c->head_dim, 0, (float)c->rope_theta);
    e->rope_next = malloc(8 * (size_t)c->head_dim);
    e->rope_next_pos = -1;
    if (!rc && !e->rope_next) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    e->host_x = malloc(H * 4);
    e->host_y = malloc(H * 4);
    if (!rc && (!e->host_x || !e->host_y)) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    /* Programmatic dependent launch between the step's kernels (sm_90+): each
     * GEMV fetches its first weights while its predecessor finishes.
     * LEECHRT_PDL=0 turns it off (for comparisons). */
    e->phase_mask = ~0u;
    e->base.pdl = lr_cu_pdl_supported() && pdl;
    /* Capture the step once; replays read token and position from device memory. */
    if (!rc) rc = capture(e, 0, 0, ~0u, &e->graph, &e->graph_nodes);
    if (!rc) rc = capture(e, 1, 0, ~0u, &e->graph_greedy, NULL);
    if (!rc && e->att_long_from) rc = capture(e, 0, 1, ~0u, &e->graph_long, NULL);
    if (!rc && e->att_long_from) rc = capture(e, 1, 1, ~0u, &e->graph_greedy_long, NULL);
    if (rc) {
        rc = lr_wrap(rc, "GPU engine for %s", lr_model_path(m));
        e->base.ops = &lr_engine_gpu_ops;
        gpu_close(&e->base);
        return rc;
    }
    e->base.ops = &lr_engine_gpu_ops;
    e->base.launches_per_step = e->graph_nodes;
    e->base.bytes_per_step = e->bytes_weights - (head ? emb_bytes : 0);
    *out = &e->base;
    return LR_OK;
}

static int gpu_reset(lr_engine *b)
{
    b->pos = 0; /* the cache rows past pos are never read */
    return LR_OK;
}

/* Whether a step at pos runs the long-context attention. */
static int att_long_at(const gpu_engine *e, int pos) { return e->att_long_from > 0 && pos >= e->att_long_from; }

/* One step; greedy: its end is the argmax, its slot in h_io[4..5]. */
static int run_step(gpu_engine *e, int32_t token, int greedy)
{
    lr_engine *b = &e->base;
    int rc = lr_cu_bind(); /* (a handle may be stepped from a thread other than the one that opened it) */
    if (rc) return rc;
    if (b->pos >= b->max_context) return LR_FAIL(LR_ERANGE, "context full (%d positions)", b->max_context);
    if (token < 0 || (uint32_t)token >= e->c.vocab) return LR_FAIL(LR_EINVAL, "token %d outside the vocabulary", token);
    int32_t pos = b->pos;
    e->h_io[0] = token, e->h_io[1] = pos; /* the graph's first node copies them in */
    double *rope = (double *)((char *)e->h_io + IO_ROPE_OFF);
    if (e->rope_table) {
        if (e->rope_next_pos == pos) memcpy(rope, e->rope_next, 8 * (size_t)e->c.head_dim);
        else lr_rope_table(rope, (int)e->c.head_dim, pos, (float)e->c.rope_theta);
    }
    int n = 0;
    const int lng = att_long_at(e, pos);
    if (b->on_layer) {
        int was = lr_cu_set_pdl(e->base.pdl);
        e->greedy = greedy, e->att_long = lng;
        rc = enqueue_step(e, 1, &n);
        e->greedy = 0, e->att_long = 0;
        lr_cu_set_pdl(was);
    } else {
        rc = lr_cu_graph_launch(lng ? (greedy ? e->graph_greedy_long : e->graph_long) : greedy ? e->graph_greedy : e->graph,
                                e->s);
    }
    if (!rc && e->rope_table) { /* the next position's angles while the GPU works (~64 pow + sincos) */
        lr_rope_table(e->rope_next, (int)e->c.head_dim, pos + 1, (float)e->c.rope_theta);
        e->rope_next_pos = pos + 1;
    }
    if (!rc) rc = lr_cu_stream_sync(e->s); /* the logits are in host_logits (the argmax slot in h_io[4..5]) */
    if (rc) return lr_wrap(rc, "GPU step at position %d", pos);
    b->pos++;
    return LR_OK;
}

static int gpu_step(lr_engine *b, int32_t token, const float **logits)
{
    *logits = NULL;
    int rc = run_step((gpu_engine *)b, token, 0);
    if (!rc) *logits = ((gpu_engine *)b)->host_logits;
    return rc;
}

static int gpu_step_greedy(lr_engine *b, int32_t token, int32_t *next)
{
    *next = 0;
    int rc = run_step((gpu_engine *)b, token, 1);
    if (!rc) {
        uint64_t best;
        memcpy(&best, &((gpu_engine *)b)->h_io[4], 8);
        *next = lr_op_argmax_token(best);
    }
    return rc;
}

/* g replayed back to back, microseconds per replay. */
static int time_graph(gpu_engine *e, CUgraphExec g, int reps, double *us)
{
    if (reps < 1) reps = 1;
    CUevent t0 = NULL, t1 = NULL;
    float ms = 0;
    int rc = lr_cu_event_create(&t0);
    if (!rc) rc = lr_cu_event_create(&t1);
    if (!rc) rc = lr_cu_graph_launch(g, e->s); /* warm-up */
    if (!rc) rc = lr_cu_event_record(t0, e->s);
    for (int r = 0; r < reps && !rc; r++) rc = lr_cu_graph_launch(g, e->s);
    if (!rc) rc = lr_cu_event_record(t1, e->s);
    if (!rc) rc = lr_cu_event_ms(t0, t1, &ms);
    if (!rc) *us = 1e3 * ms / reps;
    lr_cu_event_destroy(t0), lr_cu_event_destroy(t1);
    return rc;
}

int lr_engine_gpu_phases(lr_engine *b, int reps, double *us, int n)
{
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "phase timing needs the GPU engine");
    gpu_engine *e = (gpu_engine *)b;
    int rc = LR_OK;
    for (int p = 0; p < NPH && p < n && !rc; p++) {
        /* One graph holding this phase's launches of the whole step (the
           greedy step's: the head phase without the logits' copy). */
        int cnt = 0;
        CUgraphExec g = NULL;
        double t = 0;
        rc = capture(e, 1, att_long_at(e, e->h_io[1]), 1u << p, &g, &cnt);
        if (!rc) rc = time_graph(e, g, reps, &t);
        if (!rc) us[p] = cnt ? t : 0;
        lr_cu_graph_destroy(g);
    }
    return rc;
}

int lr_engine_gpu_graph_us(lr_engine *b, int reps, double *us)
{
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "graph timing needs the GPU engine");
    gpu_engine *e = (gpu_engine *)b;
    return time_graph(e, att_long_at(e, e->h_io[1]) ? e->graph_long : e->graph, reps, us);
}

int lr_engine_gpu_graph_greedy_us(lr_engine *b, int reps, double *us)
{
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "graph timing needs the GPU engine");
    gpu_engine *e = (gpu_engine *)b;
    return time_graph(e, att_long_at(e, e->h_io[1]) ? e->graph_greedy_long : e->graph_greedy, reps, us);
}

/* The greedy step's graph with every kernel the stand-in `name`, replayed
 * reps times: us per step. ctr 0: a stand-in without parameters
 * (op_empty_pdl); else the flag stand-in counting on ctr, *n the CTAs it
 * launches per step. */
static int floor_graph(gpu_engine *e, const char *name, CUdeviceptr ctr, int reps, double *us, unsigned *n)
{
    CUfunction f;
    int rc = get_fn(name, 0, &f);
    if (rc) return rc;
    CUgraphExec g = NULL;
    CUfunction was = lr_cu_set_stand_in(ctr ? NULL : f);
    if (ctr) lr_cu_set_stand_in_flag(f, ctr);
    rc = capture(e, 1, att_long_at(e, e->h_io[1]), ~0u, &g, NULL);
    if (n) *n = lr_cu_stand_in_flag_ctas();
    lr_cu_set_stand_in(was); /* (ends the flag stand-in too) */
    if (!rc) rc = time_graph(e, g, reps, us);
    lr_cu_graph_destroy(g);
    return rc;
}

int lr_engine_gpu_graph_floor_us(lr_engine *b, int reps, double *us)
{
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "graph timing needs the GPU engine");
    return floor_graph((gpu_engine *)b, "op_empty_pdl", 0, reps, us, NULL);
}

int lr_engine_gpu_graph_floor_flag_us(lr_engine *b, int reps, double *us, unsigned *ctas, unsigned *counted)
{
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "graph timing needs the GPU engine");
    gpu_engine *e = (gpu_engine *)b;
    /* the counter and its broken-target flag: the io block's spare bytes
       24..31, zeros on the host, so the step's first copy resets them */
    const CUdeviceptr ctr = e->d_tok + 24;
    unsigned n = 0;
    uint32_t got[2] = { 0, 0 };
    int rc = floor_graph(e, "op_empty_flag", ctr, reps, us, &n);
    if (!rc) rc = lr_cu_stream_sync(e->s);
    if (!rc) rc = lr_cu_d2h(got, ctr, sizeof got);
    if (rc) return rc;
    *ctas = n, *counted = got[0];
    if (got[1]) return LR_FAIL(LR_EVERIFY, "flag floor: a CTA gave up waiting for its predecessors (%u of %u counted)",
                               got[0], n);
    return LR_OK;
}

/* lr_cu_launch_map for the timeline's capture: the twin, and the phase of
 * each launch in enqueue order (the step's order). */
typedef struct { gpu_engine *e; int *ph; size_t n, cap; } tl_capture;

static CUfunction tl_map(CUfunction f, void *user)
{
    tl_capture *t = user;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 512;
        int *p = realloc(t->ph, sizeof *p * cap);
        if (!p) return LR_FAIL(LR_ENOMEM, "out of memory"), NULL;
        t->ph = p, t->cap = cap;
    }
    t->ph[t->n++] = t->e->phase;
    return lr_jit_timeline_map(f, NULL);
}

/* Records the timeline buffer holds (32 B each): a 32B step is ~80k CTAs. */
#define TL_CAP (1u << 20)

int lr_engine_gpu_timeline(lr_engine *b, int reps, uint64_t **raw, size_t *n, int **phases, size_t *nlaunch, double *us)
{
    *raw = NULL, *n = 0, *phases = NULL, *nlaunch = 0;
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "the timeline needs the GPU engine");
    gpu_engine *e = (gpu_engine *)b;
    CUdeviceptr cnt = 0, recs = 0;
    CUgraphExec g = NULL;
    tl_capture t = { e, NULL, 0, 0 };
    uint32_t got = 0;
    int rc = lr_cu_alloc(&cnt, 16);
    if (!rc) rc = lr_cu_alloc(&recs, (size_t)TL_CAP * LR_TL_WORDS * 8);
    if (!rc) rc = lr_jit_timeline_buffer(cnt, recs, TL_CAP);
    if (!rc) {
        lr_cu_set_launch_map(tl_map, &t);
        rc = capture(e, 1, att_long_at(e, e->h_io[1]), ~0u, &g, NULL);
        lr_cu_set_launch_map(NULL, NULL);
    }
    if (!rc) rc = lr_cu_graph_launch(g, e->s); /* warm: the twins' first run */
    if (!rc) rc = lr_cu_stream_sync(e->s);
    if (!rc) rc = lr_cu_memset8(cnt, 0, 16);
    if (!rc) rc = lr_cu_sync(); /* (the memset is on the legacy stream, which e->s does not wait for) */
    if (!rc) rc = lr_cu_graph_launch(g, e->s);
    if (!rc) rc = lr_cu_stream_sync(e->s);
    if (!rc) rc = lr_cu_d2h(&got, cnt, 4);
    if (!rc && got > TL_CAP) rc = LR_FAIL(LR_ERANGE, "timeline: %u CTAs in a step, the buffer holds %u", got, TL_CAP);
    if (!rc && !(*raw = malloc((size_t)got * LR_TL_WORDS * 8 + 1))) rc = LR_FAIL(LR_ENOMEM, "out of memory");
    if (!rc) rc = lr_cu_d2h(*raw, recs, (size_t)got * LR_TL_WORDS * 8);
    if (!rc) rc = time_graph(e, g, reps, us);
    int r2 = lr_jit_timeline_buffer(0, 0, 0); /* the twins stop writing before the buffer goes */
    if (!rc) rc = r2;
    lr_cu_graph_destroy(g);
    lr_cu_free(cnt), lr_cu_free(recs);
    if (rc) {
        free(*raw), free(t.ph);
        *raw = NULL;
        return rc;
    }
    *n = got, *phases = t.ph, *nlaunch = t.n;
    return LR_OK;
}

int lr_engine_gpu_graph_without_us(lr_engine *b, int phase, int reps, double *us)
{
    if (b->ops != &lr_engine_gpu_ops) return LR_FAIL(LR_EINVAL, "graph timing needs the GPU engine");
    if (phase < 0 || phase >= NPH) return LR_FAIL(LR_EINVAL, "no phase %d", phase);
    gpu_engine *e = (gpu_engine *)b;
    CUgraphExec g = NULL;
    int rc = capture(e, 1, att_long_at(e, e->h_io[1]), ~(1u << phase), &g, NULL);
    if (!rc) rc = time_graph(e, g, reps, us);
    lr_cu_graph_destroy(g);
    return rc;
}

/* The projections of a GPU engine for which has() holds (0 for another engine). */
static int count_projs(const lr_engine *b, int (*has)(const proj *))
{
    if (b->ops != &lr_engine_gpu_ops) return 0;
    const gpu_engine *e = (const gpu_engine *)b;
    int n = 0;
    for (uint32_t l = 0; l < e->c.n_layers; l++)
        for (int k = 0; k < NPROJ; k++) n += has(&e->L[l].p[k]) != 0;
    return n;
}

static int has_xrot(const proj *p) { return p->xrot; } /* (only o and down ever get it) */
static int has_trig(const proj *p) { return p->ld && lr_leech_dev_trig(p->ld); }

int lr_engine_gpu_xrot_projs(const lr_engine *b) { return count_projs(b, has_xrot); }
int lr_engine_gpu_trig_projs(const lr_engine *b) { return count_projs(b, has_trig); }
int lr_engine_gpu_rres_ends(const lr_engine *b) { return count_projs(b, proj_mode); }

int lr_engine_gpu_swiglu_layers(const lr_engine *b)
{
    if (b->ops != &lr_engine_gpu_ops) return 0;
    const gpu_engine *e = (const gpu_engine *)b;
    int n = 0;
    for (uint32_t l = 0; l < e->c.n_layers; l++) n += e->L[l].p[PROJ_GU].swiglu;
    return n;
}

const char *lr_engine_gpu_phase_name(int i) { return i >= 0 && i < NPH ? phase_names[i] : NULL; }

static void gpu_close(lr_engine *b)
{
    gpu_engine *e = (gpu_engine *)b;
    if (!e) return;
    if (lr_cu_bind()) lr_clear_error(); /* (freeing without a current context fails quietly: nothing better to do) */
    lr_cu_graph_destroy(e->graph);
    lr_cu_graph_destroy(e->graph_greedy);
    lr_cu_graph_destroy(e->graph_long);
    lr_cu_graph_destroy(e->graph_greedy_long);
    if (e->L)
        for (uint32_t l = 0; l < e->c.n_layers; l++) {
            layer *L = &e->L[l];
            lr_cu_free(L->attn_norm); lr_cu_free(L->ffn_norm); lr_cu_free(L->q_norm); lr_cu_free(L->k_norm);
            lr_cu_free(L->kc); lr_cu_free(L->vc);
            for (int k = 0; k < NPROJ; k++) {
                if (L->p[k].ld) lr_leech_dev_free(L->p[k].ld);
                lr_cu_free(L->p[k].w16);
                lr_cu_free(L->p[k].hdbits), lr_cu_free(L->p[k].hq);
            }
        }
    for (int i = 0; i < e->nrots; i++) lr_rot_dev_destroy(&e->rots[i].dev);
    if (e->head_q != e->emb_q) { lr_cu_free(e->head_q); lr_cu_free(e->head_sb); }
    lr_cu_free(e->emb_q); lr_cu_free(e->emb_sb); lr_cu_free(e->out_norm);
    CUdeviceptr bufs[] = { e->d_tok, e->xb[0], e->xb[1], e->xn, e->xr,   e->qkv,
                           e->att,   e->o,     e->gu,    e->h,  e->down, e->logits };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) lr_cu_free(bufs[i]);
    lr_cu_stream_destroy(e->s);
    lr_cu_free_host(e->host_logits), lr_cu_free_host(e->h_io);
    free(e->rope_next);
    free(e->L); free(e->host_x); free(e->host_y);
    free(e);
}

const lr_engine_ops lr_engine_gpu_ops = { "gpu", gpu_open, gpu_reset, gpu_step, gpu_close, gpu_step_greedy };
