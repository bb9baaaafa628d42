/* A parallel for over [0, n) with pthreads, for unfolding whole matrices. */
#ifndef LR_LEECH_VRAM_PAR_H
#define LR_LEECH_VRAM_PAR_H

/* Calls fn(ctx, i0, i1) on disjoint ranges covering [0, n) from up to
 * nthreads threads (0 = online cores). Returns the first nonzero status any
 * call returned (its message is re-raised on the calling thread). */
int lr_vram_parallel(int n, int nthreads, int (*fn)(void *ctx, int i0, int i1), void *ctx);

#endif
