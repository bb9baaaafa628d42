/* The timeline probe's records and what they say about a captured step.
 * Every kernel of the step replaced by its timeline twin (jit/timeline.h);
 * thread 0 of each CTA notes the GPU's global timer (ns) at entry, after
 * the PDL wait and at its exit (templates/lr_common.cuh) and appends one
 * record. Grouped back into launches, the records give each kernel's span
 * inside the chain: when its first CTA entered, when the wait let it go
 * (its predecessor done), when its last CTA left, and how much it moved the
 * step's end (exposed: the parts sum to the step). */
#ifndef LR_TIMELINE_H
#define LR_TIMELINE_H
#include <stddef.h>
#include <stdint.h>

#define LR_TL_WORDS 4 /* u64 per record on the device */
#define LR_TL_NO_WAIT 0xffffffffu

typedef struct lr_tl_cta {
    uint64_t t0;          /* entry, ns (the global timer) */
    uint32_t dwait;       /* ns from entry to past the PDL wait; LR_TL_NO_WAIT: none */
    uint32_t dexit;       /* ns from entry to thread 0's exit */
    uint32_t mod, smid;   /* the twin's id (jit/timeline.h), the SM */
    uint32_t block, grid; /* linear block index, CTAs in the launch */
} lr_tl_cta;

void lr_tl_unpack(const uint64_t *raw, size_t n, lr_tl_cta *out);
/* The step's start: the earliest entry of n > 0 records (the zero of every
 * time lr_tl_launches reports). */
uint64_t lr_tl_start(const lr_tl_cta *c, size_t n);

typedef struct lr_tl_launch {
    uint32_t mod, grid;
    size_t first;    /* its CTAs: ctas[first .. first + grid) after lr_tl_launches */
    /* us from the step's first entry */
    double entry0;   /* first CTA in */
    double entry1;   /* last CTA in */
    double wait;     /* first CTA past the wait (entry0 when none waits) */
    double exit_med; /* median CTA exit */
    double exit1;    /* last CTA out */
    double exposed;  /* exit1 minus the latest exit1 before it (0 if none later): sums to the step */
    uint32_t late;   /* CTAs that entered after the wait had let the first go (0 without a wait) */
} lr_tl_launch;

/* Sorts ctas into launches (per twin by entry, grid at a time, each block
 * once) and the launches into the step's order (by first entry). *out
 * (malloc'd) gets *nl launches. An error when a twin's records are not whole
 * launches or a launch lacks a block (records dropped, or launches of one
 * kernel overlapping). */
int lr_tl_launches(lr_tl_cta *ctas, size_t n, lr_tl_launch **out, size_t *nl);

#endif
