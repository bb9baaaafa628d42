// The launch floor's stand-in (rt/engine_gpu.c lr_engine_gpu_graph_floor_us):
// the step's graph captured with every kernel replaced by this one at the
// same grid, block, cluster and shared memory, so its replay costs what the
// step's launch structure costs by itself (node launches, CTA scheduling,
// the programmatic-dependent-launch handoffs), with no work in the kernels.
// It lets its dependents launch at entry and waits for its predecessor, as
// the step's small ops do: the chain stays serial, as in the step.
// @spec op_empty_pdl threads=1024
#include "lr_common.cuh"

extern "C" __global__ void __launch_bounds__(1024) LR_KERNEL() { LR_TL_SCOPE(); lr_pdl_enter(); }
