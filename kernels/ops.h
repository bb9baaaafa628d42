/* The decode step's small ops (embedding, residual+RMSNorm, q/k norm + RoPE +
 * KV write, attention, SwiGLU, int8 head, argmax): descriptors, f64 host
 * references and specializations. Each kernel is verified against its host
 * reference through rt/call.h (kernels/ops_gpu_test.c). */
#ifndef LR_OPS_H
#define LR_OPS_H
#include "jit/spec.h"
#include "rt/call.h"

#include <stdint.h>

extern const lr_kernel_desc lr_op_embed_desc, lr_op_add_rmsnorm_desc, lr_op_rope_kv_desc, lr_op_attention_desc,
    lr_op_rope_attention_desc, lr_op_silu_mul_desc, lr_op_head_desc, lr_op_head_mma_desc, lr_op_argmax_desc;

void lr_op_embed_host(const int8_t *q, const uint16_t *sb, const int32_t *tok, float *out, int32_t hidden, int32_t group);
void lr_op_add_rmsnorm_host(float *x, const float *y, const float *w, float *out, int32_t n, float eps);
void lr_op_rope_kv_host(float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc, const int32_t *pos,
                        int32_t n_heads, int32_t n_kv, int32_t head_dim, float eps, float theta);
void lr_op_attention_host(const float *q, const uint16_t *kc, const uint16_t *vc, float *out, const int32_t *pos,
                          int32_t n_heads, int32_t n_kv, float scale, const uint32_t *odbits, const float *oq);
/* op_rope_kv then op_attention in one (the engine's): qkv is read only.
 * odbits / oq non-null: each head's output then rotated per head (rotation
 * kind 2, kernels/rotation.h: the head's signs from bit h * head_dim of
 * odbits, oq its lr_rot_qtable). */
void lr_op_rope_attention_host(const float *qkv, const float *qn, const float *kn, uint16_t *kc, uint16_t *vc,
                               float *out, const int32_t *pos, const double *rope, int32_t n_heads, int32_t n_kv,
                               float eps, float theta, float scale, const uint32_t *odbits, const float *oq);
/* RoPE's angles at pos as op_rope_attention's `rope` table: head_dim / 2
 * pairs (cos, sin) of pos * theta^(-2j / head_dim), in f64 (the engine fills
 * it on the host for each step and copies it in with the token; a null
 * table has the kernel take f64 pow and sincos itself, per layer). */
void lr_rope_table(double *cs_sn, int head_dim, int pos, float theta);
void lr_op_silu_mul_host(const float *gu, float *h, int32_t n);
void lr_op_head_host(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab, int32_t hidden);
/* The head on tensor cores (op_head_int8g_mma): the weights' dot with
 * f16(x), the bias term with x: sum_G s_G sum q f16(x) + b_G sum x. */
void lr_op_head_mma_host(const int8_t *q, const uint16_t *sb, const float *x, float *logits, int32_t vocab,
                         int32_t hidden);
/* Threads of op_rope_attention's CTA (one per q head): its warps split the
 * positions, 4 in flight per warp, so more warps take a longer context in
 * one memory round trip. At least 2 * head_dim (q and k threads); default
 * LR_ATT_THREADS_DEFAULT; the GPU engine takes LEECHRT_ATT_THREADS (a
 * multiple of 32, 64..1024) through lr_op_att_threads_set (garbage refused,
 * naming what). */
#define LR_ATT_THREADS_DEFAULT 512
extern int lr_op_att_threads;
/* CTAs per q head of op_rope_attention (its grid's y, the spec's splits):
 * a context longer than one CTA's round trip (threads / 32 * 4 positions)
 * is split over up to that many, the last to finish combining them. At most
 * 128 q heads when above 1. Default 1; LEECHRT_ATT_SPLITS (1..16) through
 * lr_op_att_splits_set. */
extern int lr_op_att_splits;
int lr_op_att_splits_set(const char *what, const char *s);
int lr_op_att_threads_set(const char *what, const char *s);
unsigned lr_op_rope_attention_threads(int head_dim);
/* the threads of a CTA asked for threads: at least 2 * head_dim */
unsigned lr_op_rope_attention_threads_at(int head_dim, int threads);
/* op_rope_attention at a given thread count (raised to 2 * head_dim) and
 * splits, whatever the settings (the engine's long-context kernel). */
void lr_op_rope_attention_spec(lr_jit_spec *s, int head_dim, int threads, int splits);
/* The long-context kernel (the engine's steps from LEECHRT_ATT_LONG on):
 * LR_ATT_LONG_THREADS threads (raised to 2 * head_dim), up to
 * LR_ATT_LONG_SPLITS CTAs per q head. One definition for the engine and
 * the appliance cache (tools/cache.c), which must warm the same kernel. */
#define LR_ATT_LONG_THREADS 256
#define LR_ATT_LONG_SPLITS 16
void lr_op_rope_attention_long_spec(lr_jit_spec *s, int head_dim);

/* Greedy token on the device (op_argmax): each CTA folds its float4s into
 * *best by atomicMax of a key, largest value then lowest index, NaN never;
 * the slot starts at 0. lr_op_argmax_token decodes it (0: all NaN; equals
 * lr_argmax of the logits), lr_op_argmax_grid is the launch's CTA count
 * (256 threads). */
void lr_op_argmax_host(const float *logits, int32_t n, uint64_t *best);
int32_t lr_op_argmax_token(uint64_t best);
unsigned lr_op_argmax_grid(int n);

/* Specializations (the template's tunables fixed here). head_dim for attention
 * (for op_head_int8g_mma: the hidden width); the head's group is 64. */
void lr_op_spec(lr_jit_spec *s, const char *op, int head_dim);
/* attention's head_dim is a specialization, so its host reference needs it too. */
extern int lr_op_attention_head_dim;
/* Column steps op_head_int8g loads ahead (its LR_UNROLL, 1..8; default 1;
 * the GPU engine takes LEECHRT_HEAD_UNROLL through lr_op_head_unroll_set). */
extern int lr_op_head_unroll;
/* Sets it from a string (NULL: unchanged); anything but an integer 1..8 is
 * LR_EINVAL naming `what` and the value, and leaves it unchanged. */
int lr_op_head_unroll_set(const char *what, const char *s);
/* op_head_int8g's grid is ceil(vocab / lr_op_head_rows_per_cta()) CTAs of
 * 256 threads (8 warps of 2 rows each: 4 and 8 rows per warp were measured
 * no faster twice, at d71e219 and 7571331). */
unsigned lr_op_head_rows_per_cta(void);
/* Which head the GPU engine runs: 0 = op_head_int8g, N = 1..4 =
 * op_head_int8g_mma with N row blocks of 16 per CTA (its 8 warps splitting
 * the columns; the spec's rb); default 1. LEECHRT_HEAD_MMA through lr_op_head_mma_set:
 * anything but an integer 0..4 is LR_EINVAL naming `what` and the value,
 * unchanged; NULL: unchanged. */
extern int lr_op_head_mma;
int lr_op_head_mma_set(const char *what, const char *s);
/* Warps of op_head_int8g_mma's CTA, which split the row's 64-column groups
 * (each warp loads its groups in chunks of 8, a chunk's 16 bytes per lane
 * and row all in flight at once): N = 1..32 warps, or 0 for one chunk per
 * warp (ceil(hidden / 512) warps, at most 32). Default 8: 0 measured the same on
 * the H100, where the head runs at the byte bound (docs/engine.md); the H200 is untried.
 * LEECHRT_HEAD_WARPS through lr_op_head_warps_set (anything but 0..32 is
 * LR_EINVAL naming `what`, unchanged; NULL: unchanged). */
extern int lr_op_head_warps;
int lr_op_head_warps_set(const char *what, const char *s);
/* op_head_int8g_mma's threads for this hidden width at lr_op_head_warps. */
unsigned lr_op_head_mma_threads(int hidden);
/* op_head_int8g_mma's rows per CTA with `blocks` row blocks (16 each). */
unsigned lr_op_head_mma_rows_per_cta(int blocks);

#endif
