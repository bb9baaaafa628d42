/* A parallel for-loop over independent jobs on pthreads, with the first
 * error (status and message) carried back to the calling thread: util/err's
 * message buffer is thread-local, so a worker's message would otherwise be
 * lost. */
#ifndef LR_PARALLEL_H
#define LR_PARALLEL_H

/* Online CPU count (at least 1). */
int lr_cpu_count(void);
/* Calls fn(ctx, job) for job in [0, njobs) on min(nthreads, njobs) threads
 * (0 = lr_cpu_count()), taking jobs in order; after the first failure no new
 * job starts and its status and message are returned. nthreads 1 runs
 * inline on the caller's thread. */
int lr_parallel_for(int nthreads, int njobs, int (*fn)(void *ctx, int job), void *ctx);
/* [0, n) cut into ranges of `chunk` (the last one shorter), fn(ctx, lo, hi)
 * called for each on every core (lr_parallel_for's error rules). */
int lr_parallel_ranges(int n, int chunk, int (*fn)(void *ctx, int lo, int hi), void *ctx);

/* Carrying an error across threads by hand: save the current message in a
 * worker, restore it (without a second "file:line:" prefix) in the caller. */
void lr_err_save(char *buf, unsigned n);
int lr_err_restore_at(int code, const char *saved, const char *file, int line);
#define lr_err_restore(code, saved) lr_err_restore_at((code), (saved), __FILE__, __LINE__)

#endif
