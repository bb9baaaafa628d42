/* A Leech benchmark arm's weights taken from a model artifact instead of
 * drawn at random: the layer-0 projections whose (fused) shape is the one
 * being timed, so a sweep (`tune_gemv --model`) times candidates on the
 * weights the engine serves. Built to find why the sweeps ranked the 14B
 * gate|up at 736 threads + 1 side warp first while the engine ran it 27%
 * slower: the weights were not the cause (on the model's weights, with 2
 * copies, the sweep still ranked it first), the copies were
 * (kernels/kernels.h, lr_bench_copies). */
#ifndef LR_LEECH_ARM_MODEL_H
#define LR_LEECH_ARM_MODEL_H
#include "layouts/leech_vram/p14s.h"

/* Unfolds into L the layer-0 projections of the artifact at path whose
 * rows (summed over a fused group) and columns are rows x cols: with pair,
 * gate and up interleaved (the SwiGLU kernel's layout; rows = 2 x ffn);
 * else the first of q|k|v, o, gate|up, down, q, k, v, gate, up in that
 * order. LR_EINVAL naming the file and the shape when no group has it or
 * its projections are not Leech-coded. */
int lr_leech_arm_model_p14s(const char *path, int rows, int cols, int pair, lr_p14s *L);

#endif
