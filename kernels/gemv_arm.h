/* A GEMV benchmark arm: one weight format + its kernel, behind one interface,
 * so the benchmark and the tuning sweeps time every format side by side in
 * one process (FP16 control, no-weights control, cuBLAS, each Leech layout).
 * An arm prepares `copies` distinct random weight matrices on the device (so
 * timing rotates through more bytes than the L2 holds), verifies its kernel
 * against the f64 host reference through lr_call_verify, and enqueues one
 * y = W x on a stream (graph-capturable: no allocation, no sync). */
#ifndef LR_GEMV_ARM_H
#define LR_GEMV_ARM_H
#include "rt/cu.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lr_gemv_arm_opts {
    int threads, rpw, unroll, tile;  /* launch geometry; 0 = the arm's default / tuning table */
    int extra[5];                    /* arm-specific knobs for sweeps; 0 = default */
    int minb;                        /* CTAs per SM the registers must allow (__launch_bounds__); 0 = default */
    int ball;                        /* Leech arms: random points drawn over the ball (LR_RANDOM_BALL, like
                                        real weights) instead of class-uniform (the default so far) */
    const char *model;               /* Planes14S arms: the weights of this artifact's layer 0 instead of random
                                        ones (kernels/leech_arm_model.h); NULL = random */
} lr_gemv_arm_opts;

/* What a verify saw: its x (nx floats) and the verified GPU output y (ny floats), both
 * malloc'd; NULL and 0 for an arm whose launch does not map x to y (the stream controls). */
typedef struct lr_gemv_arm_io {
    float *x, *y;
    size_t nx, ny;
} lr_gemv_arm_io;

typedef struct lr_gemv_arm {
    const char *name;       /* "f16", "noweights", "cublas", "planes14", ... */
    double bits_per_weight; /* nominal bits read per weight (side tables excluded) */
    /* Builds and uploads `copies` random matrices rows x cols from seed, and
     * gets the kernel for the current device and smem budget. */
    int (*prepare)(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **state);
    /* Verifies every output row of copy 0 on fresh random x (seeded) against
     * the f64 host reference; returns LR_EVERIFY on mismatch. With io (may be
     * NULL), a verified arm whose launch computes y from x hands over its x and
     * the GPU's y (lr_gemv_arm_check_launch compares the timed path with them). */
    int (*verify)(void *state, uint64_t seed, double *max_rel_err, struct lr_gemv_arm_io *io);
    /* y = W_copy x, x f32 [cols] and y f32 [rows] on the device. */
    int (*launch)(void *state, int copy, CUdeviceptr x, CUdeviceptr y, CUstream s);
    /* Bytes one launch must read from DRAM (weights and per-row/per-matrix side data). */
    size_t (*bytes)(void *state);
    void (*destroy)(void *state);
} lr_gemv_arm;

/* Hands a successful verify's buffers to io (when io is given; the pointers are taken and
 * set to NULL so the verify's free skips them). */
void lr_gemv_arm_io_keep(lr_gemv_arm_io *io, float **x, size_t nx, float **y, size_t ny);
void lr_gemv_arm_io_free(lr_gemv_arm_io *io);
/* The timed path against the verified one: every copy of the arm's image launched as the
 * timing launches it (arm->launch on device buffers x and y, y poisoned first) on the
 * verify's x must give the verified y bit for bit (the GEMVs have no atomics; a launch's
 * argument list, geometry or image copy that differs from what verify ran does not).
 * x and y hold at least io->nx and io->ny floats. *checked: copies compared (0 when the
 * arm hands over no io). LR_EVERIFY names the copy and row. */
int lr_gemv_arm_check_launch(const lr_gemv_arm *arm, void *state, int copies, const lr_gemv_arm_io *io,
                             CUdeviceptr x, CUdeviceptr y, int *checked);

/* Every registered arm (kernels/gemv_arms.c lists them). */
const lr_gemv_arm *const *lr_gemv_arms(int *n);
const lr_gemv_arm *lr_gemv_arm_find(const char *name);

#endif
