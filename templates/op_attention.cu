// Decode attention for one query token over the f16 KV cache, grouped-query:
// q head h reads kv head h / (n_heads / n_kv). One CTA per q head; each warp
// walks a strided subset of positions with an online softmax (running max and
// sum), four positions per step with their loads in flight together; lanes
// hold head_dim/32 elements of q and of the output; warps combine through
// shared memory (lr_attend_range, engine_ops.cuh). Positions 0..*pos inclusive.
// odbits / oq (null: none): o's per-head rotation (rotation kind 2) on each
// head's output, as op_rope_attention does it.
// @spec op_attention threads=256 head_dim=128
// @spec op_attention threads=256 head_dim=96
#include "engine_ops.cuh"

#define EPL (LR_HEAD_DIM / 32) // elements per lane

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ q, const u16 *__restrict__ kcache, const u16 *__restrict__ vcache,
          float *__restrict__ out, const int *__restrict__ pos_p, int n_heads, int n_kv, float scale,
          const u32 *__restrict__ odbits, const float *__restrict__ oq)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    const int h = blockIdx.x, lane = threadIdx.x & 31;
    float qv[EPL];
#pragma unroll
    for (int e = 0; e < EPL; e++) qv[e] = q[(u64)h * LR_HEAD_DIM + lr_att_elem<LR_HEAD_DIM>(lane, e)] * scale;
    float M, L, o;
    lr_attend_range<LR_HEAD_DIM, LR_THREADS, 4>(qv, kcache, vcache, h / (n_heads / n_kv), n_kv, 0, pos_p[0] + 1,
                                                pos_p[0] + 1, nullptr, nullptr, M, L, o);
    float r = threadIdx.x < LR_HEAD_DIM ? o / L : 0.f;
    if (odbits) {
        __shared__ float buf[LR_HEAD_DIM];
        r = lr_head_rotate<LR_HEAD_DIM>(r, odbits + h * (LR_HEAD_DIM / 32), oq, buf);
    }
    if (threadIdx.x < LR_HEAD_DIM) out[(u64)h * LR_HEAD_DIM + threadIdx.x] = r;
}
