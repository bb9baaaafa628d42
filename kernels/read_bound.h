/* The DRAM read bound, measured in the calling process with the probe kernel
 * (verified against its host reference first), so every benchmark reports
 * its % of a bound taken on the same card at the same moment. */
#ifndef LR_READ_BOUND_H
#define LR_READ_BOUND_H
#include <stddef.h>
#include <stdint.h>

#include "rt/cu.h"

/* Reads `bytes` (0 = 2 GiB) repeatedly; median GB/s over `reps` graph replays. */
int lr_read_bound_gbps(size_t bytes, int reps, double *gbps);
/* The probe kernel f on the n16 16-byte words of host (uploaded), launched
 * as blocks x threads, against its host reference (exact); sums: blocks
 * words of scratch; max_rel_err (may be NULL) the verify report's. Every
 * user of the probe verifies through here. */
int lr_probe_verify(CUfunction f, const uint32_t *host, uint64_t n16, unsigned blocks, unsigned threads, uint32_t *sums,
                    double *max_rel_err);
/* The same for the probe's ranges form (lr_probe_ranges_spec). */
int lr_probe_ranges_verify(CUfunction f, const uint32_t *host, uint64_t n16, unsigned blocks, unsigned threads,
                           uint32_t *sums, double *max_rel_err);
/* Times `fn(arg, i, stream)` launched `per_graph` times per graph over `reps`
 * replays; returns the median microseconds per launch. */
typedef int (*lr_enqueue_fn)(void *arg, int i, void *stream);
int lr_time_graph(lr_enqueue_fn fn, void *arg, int per_graph, int reps, double *us_per_launch);

#endif
