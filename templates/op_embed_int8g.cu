// Embedding lookup from an int8 table with per-group f16 scale and bias:
// out[i] = q[tok][i] * s + b, (s, b) = sb[tok][i / group]. The token is read
// from device memory so a captured step graph replays for every token.
// @spec op_embed_int8g threads=256
// @spec op_embed_int8g threads=256 timeline=1
#include "lr_common.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const i8 *__restrict__ q, const u16 *__restrict__ sb, const int *__restrict__ tok, float *__restrict__ out,
          int hidden, int group)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    const u64 t = (u64)tok[0];
    const int ng = hidden / group;
    for (int i = blockIdx.x * LR_THREADS + threadIdx.x; i < hidden; i += gridDim.x * LR_THREADS) {
        const int g = i / group;
        const float s = lr_h2f(sb[(t * ng + g) * 2]), b = lr_h2f(sb[(t * ng + g) * 2 + 1]);
        out[i] = (float)q[t * hidden + i] * s + b;
    }
}
