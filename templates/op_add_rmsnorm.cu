// Residual add and RMSNorm in one pass: x += y (when y is not null), then
// out = x / sqrt(mean(x^2) + eps) * w. One CTA.
// @spec op_add_rmsnorm threads=1024
#include "engine_ops.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(float *__restrict__ x, const float *__restrict__ y, const float *__restrict__ w, float *__restrict__ out,
          int n, float eps)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    __shared__ float red[32];
    float ss = 0.f;
    for (int i = threadIdx.x; i < n; i += LR_THREADS) {
        float v = x[i];
        if (y) {
            v += y[i];
            x[i] = v;
        }
        ss += v * v;
    }
    ss = lr_block_sum(ss, red);
    const float r = rsqrtf(ss / n + eps);
    for (int i = threadIdx.x; i < n; i += LR_THREADS) out[i] = x[i] * r * w[i];
}
