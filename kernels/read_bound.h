/* The DRAM read bound, measured in the calling process with the probe kernel
 * (verified against its host reference first), so every benchmark reports
 * its % of a bound taken on the same card at the same moment. */
#ifndef LR_READ_BOUND_H
#define LR_READ_BOUND_H
#include <stddef.h>

/* Reads `bytes` (0 = 2 GiB) repeatedly; median GB/s over `reps` graph replays. */
int lr_read_bound_gbps(size_t bytes, int reps, double *gbps);
/* Times `fn(arg, i, stream)` launched `per_graph` times per graph over `reps`
 * replays; returns the median microseconds per launch. */
typedef int (*lr_enqueue_fn)(void *arg, int i, void *stream);
int lr_time_graph(lr_enqueue_fn fn, void *arg, int per_graph, int reps, double *us_per_launch);

#endif
