// After the q/k/v projection (one row-concatenated output qkv = [q | k | v]):
// per-head RMSNorm of q and k (Qwen3; skipped when the weights are null),
// rotary embedding at position *pos (Hugging Face rotate_half pairs (i, i+d/2),
// angles in f64 so long positions keep their accuracy), q rotated in place,
// k and v written to the f16 KV cache row *pos. Grid: n_heads + n_kv CTAs of
// head_dim threads.
// @spec op_rope_kv threads=128
#include "engine_ops.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(float *__restrict__ qkv, const float *__restrict__ qn, const float *__restrict__ kn,
          u16 *__restrict__ kcache, u16 *__restrict__ vcache, const int *__restrict__ pos_p, int n_heads, int n_kv,
          int head_dim, float eps, float theta)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    __shared__ float red[32];
    __shared__ float v_s[LR_THREADS];
    const int h = blockIdx.x, i = threadIdx.x, half = head_dim / 2;
    const int pos = pos_p[0];
    const int is_q = h < n_heads;
    const int kvh = is_q ? 0 : h - n_heads;
    float *src = is_q ? qkv + (u64)h * head_dim : qkv + (u64)(n_heads + kvh) * head_dim;
    const float *nw = is_q ? qn : kn;
    float v = i < head_dim ? src[i] : 0.f;
    if (nw) {
        float ss = lr_block_sum(v * v, red);
        v = v * rsqrtf(ss / head_dim + eps) * (i < head_dim ? nw[i] : 0.f);
    }
    v_s[i] = v;
    __syncthreads();
    if (i < head_dim) {
        const float r = lr_rope(v, v_s[i < half ? i + half : i - half], i, head_dim, pos, theta);
        if (is_q) src[i] = r;
        else {
            const u64 row = (u64)pos * n_kv * head_dim + (u64)kvh * head_dim + i;
            kcache[row] = lr_f2h(r);
            vcache[row] = lr_f2h(qkv[(u64)(n_heads + n_kv + kvh) * head_dim + i]);
        }
    }
}
