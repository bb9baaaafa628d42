// x quantizer for the I8x GEMV in its LR_XQ=1 form: writes xq = the 64-byte
// int8 digit record of every block (SC * 512 bytes) followed by the SC f32
// power-of-two scales, exactly as gemv_leech_i8 forms them per CTA
// (templates/gemv_leech_i8.cuh). One warp per super-chunk. In the engine the
// producer of x (RMSNorm / rotation) can write xq itself and skip this launch.
// Specialization: LR_COLS, LR_THREADS.
// @spec gemv_leech_i8_xq cols=17408 threads=256
// @spec gemv_leech_i8_xq cols=1001 threads=64
#include "gemv_leech_i8.cuh"

extern "C" __global__ void __launch_bounds__(LR_THREADS)
LR_KERNEL(const float *__restrict__ x, u8 *__restrict__ xq, int cols_)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
    lr_pdl_enter(); // inputs come from the previous kernel (lr_common.cuh)
    const int lane = threadIdx.x & 31, sc = blockIdx.x * (LR_THREADS / 32) + (threadIdx.x >> 5);
    if (sc < SC) lr_i8_prep_x(x, xq, (float *)(xq + SC * 512), sc, lane);
}
