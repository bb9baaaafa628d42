/* A one-line progress bar on stderr, drawn only when stderr is a terminal
 * (so logs and CI stay clean). Thread-safe: lr_progress_add may be called
 * from worker threads. */
#ifndef LR_PROGRESS_H
#define LR_PROGRESS_H
#include <stdint.h>

typedef struct lr_progress {
    const char *label;
    uint64_t total;
    uint64_t done;     /* atomically updated */
    double t0, last_draw;
    int enabled;
} lr_progress;

void lr_progress_start(lr_progress *p, const char *label, uint64_t total);
void lr_progress_add(lr_progress *p, uint64_t n);
void lr_progress_finish(lr_progress *p);
double lr_now(void); /* monotonic seconds */

#endif
