/* The timeline probe's kernels: each loaded kernel's twin, compiled with the
 * spec parameter timeline=1 (templates/lr_common.cuh), whose CTAs append a
 * record (rt/timeline.h) to a device buffer when they exit. The twins take
 * the same parameters, grid and shared memory as the kernels they stand for,
 * so a captured step runs them through lr_cu_set_launch_map unchanged. */
#ifndef LR_JIT_TIMELINE_H
#define LR_JIT_TIMELINE_H
#include "rt/cu.h"

/* The buffer every twin writes: count (u32, the records appended so far) and
 * recs (cap records of 4 u64). Twins loaded before and after see it; 0, 0, 0
 * stops them recording. */
int lr_jit_timeline_buffer(CUdeviceptr count, CUdeviceptr recs, unsigned cap);
/* f's twin (compiled or loaded on first use); f must be a kernel the JIT
 * loaded. Its records carry the twin's id (1, 2, ... in the order twins were made). */
int lr_jit_timeline_twin(CUfunction f, CUfunction *twin);
/* The kernel name behind twin id (the original's, without timeline), or
 * NULL for an id no twin has. */
const char *lr_jit_timeline_name(unsigned id);
/* lr_cu_launch_map for lr_cu_set_launch_map: the twin, NULL (message
 * recorded) when it cannot be had. user is unused. */
CUfunction lr_jit_timeline_map(CUfunction f, void *user);
/* Forgets the twins (their modules are the JIT's: lr_jit_unload_all drops
 * them and calls this). Not thread-safe, like the probe's one capture. */
void lr_jit_timeline_reset(void);

#endif
