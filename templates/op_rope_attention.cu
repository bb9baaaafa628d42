// q/k RMSNorm + RoPE + KV-cache write + decode attention in one launch (the
// engine's step; op_rope_kv then op_attention is the same computation in two).
// CTA h (one per q head) normalises and rotates q head h and the k head of
// its group kvh = h / (n_heads / n_kv) at position *pos, keeps both in shared
// memory, and attends over positions 0..*pos: the cache for the earlier ones,
// the fresh k and v (rounded to f16 as the cache holds them) for *pos. The
// group's first CTA writes k and v to cache row *pos; no CTA reads that row,
// so the group needs no ordering between its CTAs. qkv is read only.
// Threads (lr_op_rope_attention_threads): 512 by default (LR_ATT_THREADS_DEFAULT,
// since the thirty-sixth session: its CTAs fit beside the q|k|v GEMV's last
// ones, docs/engine.md), 16 warps of 4 positions each, so a context up to 64
// is one round trip to the cache; 1024 took the 14B graph 3735 us against
// 3803 at 256 threads (e491c38) and was the default before.
// odbits / oq (null: none): o's per-head input rotation (artifact rotation
// kind 2) applied to each head's output before it is written, so the step
// has no rotation launch before o (lr_head_rotate, engine_ops.cuh).
// @spec op_rope_attention threads=256 head_dim=128
// @spec op_rope_attention threads=512 head_dim=128
// @spec op_rope_attention threads=1024 head_dim=128
// @spec op_rope_attention threads=256 head_dim=64
// @spec op_rope_attention threads=1024 head_dim=64
// @spec op_rope_attention threads=512 head_dim=256
// @spec op_rope_attention threads=1024 head_dim=256
// @spec op_rope_attention threads=1024 head_dim=128 splits=4
// @spec op_rope_attention threads=1024 head_dim=128 splits=16
// @spec op_rope_attention threads=256 head_dim=64 splits=4
// @spec op_rope_attention threads=256 head_dim=128 splits=16
// @spec op_rope_attention threads=256 head_dim=64 splits=16
// @spec op_rope_attention threads=512 head_dim=256 splits=16
// @spec op_rope_attention threads=256 head_dim=96
// @spec op_rope_attention threads=256 head_dim=96 splits=4
// @spec op_rope_attention threads=512 head_dim=128 timeline=1
#include "engine_ops.cuh"

#define HD LR_HEAD_DIM
#define EPL (HD / 32) // elements per lane

#ifndef LR_SPLITS
#define LR_SPLITS 1
#endif
#define CHUNK (LR_THREADS / 32 * 4) // positions one CTA takes in one round trip
#if LR_SPLITS > 1
// LR_SPLITS (gridDim.y): up to that many CTAs per q head split the positions
// when the context exceeds one CTA's round trip (ceil(T / CHUNK) of them; the
// others exit at once). Each writes its range's (M, L, o) here; the last to
// finish (a per-head counter) combines them in split order, so the result
// does not depend on which finishes first, and puts the counter back to 0
// for the next launch. Module memory: zero at load; launches of one module
// must not overlap (one stream; under PDL every access follows the wait).
#define MAX_HEADS 128
__device__ float att_part[MAX_HEADS * LR_SPLITS * (HD + 2)];
__device__ unsigned att_count[MAX_HEADS];
#endif

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ qkv, const float *__restrict__ qn, const float *__restrict__ kn,
          u16 *__restrict__ kcache, u16 *__restrict__ vcache, float *__restrict__ out, const int *__restrict__ pos_p,
          const double *__restrict__ rope, int n_heads, int n_kv, float eps, float theta, float scale,
          const u32 *__restrict__ odbits, const float *__restrict__ oq)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    static_assert(HD % 32 == 0 && 2 * HD <= LR_THREADS, "threads 0..HD-1 take q, HD..2HD-1 take k");
    __shared__ float red[LR_THREADS / 32], raw[2][HD], qs[HD], ks[HD], vs[HD];
    const int h = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#if LR_SPLITS > 1
    __shared__ int last_s;
    if (h >= MAX_HEADS) __trap(); // the host refuses such models
    const int ns = min(LR_SPLITS, (pos_p[0] + CHUNK) / CHUNK), sp = blockIdx.y;
    if (sp >= ns) return; // a short context: this split has no positions
#else
    constexpr int ns = 1, sp = 0;
#endif
    const int grp = n_heads / n_kv, kvh = h / grp;
    const int which = tid / HD, i = tid % HD; // 0: q element i, 1: k element i, else idle
    // The position and the angle table are written before the step's first
    // kernel (the engine's copy in), not by the kernel before this one: they
    // are read before the wait. Without a table the angle (f64 pow and
    // sincos) is taken here, a dependent chain of some hundred f64
    // instructions on every layer's critical path (this kernel launches
    // when the q|k|v GEMV exits).
    const int pos = pos_p[0];
    double cs = 1.0, sn = 0.0;
    if (which < 2) {
        if (rope) {
            const int j = i < HD / 2 ? i : i - HD / 2;
            cs = rope[2 * j], sn = rope[2 * j + 1];
        } else {
            lr_rope_angle(i, HD, pos, theta, &cs, &sn);
        }
    }
    // the cached rows this warp attends to first (engine_ops.cuh: why
    // before the wait); this step's row comes from shared memory
    const int T = pos + 1, tb = (int)((long long)sp * T / ns), te = (int)((long long)(sp + 1) * T / ns);
    lr_kv_pre<HD, 4> pre;
    lr_attend_preload<HD, LR_THREADS, 4>(pre, kcache, vcache, kvh, n_kv, tb, te, T);
    lr_pdl_enter(); // qkv comes from the previous kernel (lr_common.cuh)
    qkv = lr_after_wait(qkv); // no load of it above the wait
    float v = which < 2 ? qkv[(u64)(which ? n_heads + kvh : h) * HD + i] : 0.f;
    // v's element beside k's, not after the norm's two barriers
    const float vx = which == 1 ? qkv[(u64)(n_heads + n_kv + kvh) * HD + i] : 0.f;
    const float *nw = which ? kn : qn;
    if (qn || kn) { // per-head RMSNorm (Qwen3): the HD/32 warps of each half sum their own
        const float s = lr_warp_sum(v * v);
        if (lane == 0) red[warp] = s;
        __syncthreads();
        float ss = 0.f;
        if (which < 2 && nw) {
            for (int w = which * (HD / 32); w < (which + 1) * (HD / 32); w++) ss += red[w];
            v = v * rsqrtf(ss / HD + eps) * nw[i];
        }
    }
    if (which < 2) raw[which][i] = v;
    __syncthreads();
    if (which < 2) {
        const float r = lr_rope_apply(v, raw[which][i < HD / 2 ? i + HD / 2 : i - HD / 2], i, HD, cs, sn);
        if (which == 0) qs[i] = r;
        else {
            const u16 kh = lr_f2h(r), vh = lr_f2h(vx);
            ks[i] = lr_h2f(kh), vs[i] = lr_h2f(vh);
            if (h % grp == 0 && sp == 0) {
                const u64 row = (u64)pos * n_kv * HD + (u64)kvh * HD + i;
                kcache[row] = kh, vcache[row] = vh;
            }
        }
    }
    __syncthreads();
    float qv[EPL];
#pragma unroll
    for (int e = 0; e < EPL; e++) qv[e] = qs[lr_att_elem<HD>(lane, e)] * scale;
    float M, L, o;
    lr_attend_range<HD, LR_THREADS, 4>(qv, kcache, vcache, kvh, n_kv, tb, te, T, ks, vs, M, L, o, &pre);
    if (ns == 1) {
        float r = tid < HD ? o / L : 0.f;
        if (odbits) r = lr_head_rotate<HD>(r, odbits + h * (HD / 32), oq, raw[0]); // (raw is dead here)
        if (tid < HD) out[(u64)h * HD + tid] = r;
        return;
    }
#if LR_SPLITS > 1
    float *part = att_part + ((u64)h * LR_SPLITS + sp) * (HD + 2);
    if (tid < HD) part[tid] = o;
    if (tid == 0) part[HD] = M, part[HD + 1] = L;
    __threadfence(); // the partials visible before the count says so
    __syncthreads();
    if (tid == 0) last_s = atomicAdd(&att_count[h], 1u) == (unsigned)ns - 1;
    __syncthreads();
    if (!last_s) return;
    __threadfence();
    float r = 0.f;
    if (tid < HD) {
        const float *p0 = att_part + (u64)h * LR_SPLITS * (HD + 2);
        float Mx = -INFINITY;
        for (int s = 0; s < ns; s++) Mx = fmaxf(Mx, __ldcg(p0 + s * (HD + 2) + HD));
        float Ls = 0.f, os = 0.f;
        for (int s = 0; s < ns; s++) {
            const float ms = __ldcg(p0 + s * (HD + 2) + HD);
            if (ms == -INFINITY) continue;
            const float c = __expf(ms - Mx);
            Ls += __ldcg(p0 + s * (HD + 2) + HD + 1) * c;
            os += __ldcg(p0 + s * (HD + 2) + tid) * c;
        }
        r = os / Ls;
    }
    if (odbits) r = lr_head_rotate<HD>(r, odbits + h * (HD / 32), oq, raw[0]);
    if (tid < HD) out[(u64)h * HD + tid] = r;
    if (tid == 0) att_count[h] = 0u;
#endif
}
