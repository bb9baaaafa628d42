// SwiGLU after the fused gate/up projection: h[i] = silu(gu[i]) * gu[n + i].
// @spec op_silu_mul threads=256
#include "lr_common.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ gu, float *__restrict__ h, int n)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    for (int i = blockIdx.x * LR_THREADS + threadIdx.x; i < n; i += gridDim.x * LR_THREADS) {
        const float g = gu[i];
        h[i] = g / (1.f + __expf(-g)) * gu[n + i];
    }
}
