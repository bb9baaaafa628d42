/* The CPU reference engine: Qwen3/Llama decode at batch 1 over an opened
 * lr_model, written to be obviously right rather than fast. Activations are
 * f32, matvecs, norms and attention accumulate in f64, and every weight comes
 * from lr_tensor_dequant_rows (the loader's host reference), so this engine is
 * the yardstick the GPU engine is checked against, layer by layer through
 * lr_engine.on_layer. docs/engine.md describes the step.
 *
 * Weights are dequantized to f32 once at open while they fit
 * lr_engine_opts.cache_bytes; the rest are dequantized row block by row block
 * on every use (slow, but any model runs in little memory). */
#ifndef LR_ENGINE_CPU_H
#define LR_ENGINE_CPU_H
#include "rt/engine.h"

#include <stddef.h>

/* lr_engine_cpu_ops.open, callable directly. */
int lr_engine_cpu_open(const lr_model *m, const lr_engine_opts *o, lr_engine **out);

typedef struct lr_engine_cpu_info {
    size_t cached_bytes;   /* f32 weight copies held */
    int cached, streamed;  /* matrices held as f32 / dequantized per use */
    int nthreads;
} lr_engine_cpu_info;
void lr_engine_cpu_info_get(const lr_engine *e, lr_engine_cpu_info *info);

#endif
