/* Whether what a program printed reached standard output. A full disk or a
 * closed descriptor fails only at a write or flush the program ignored, so a
 * tool whose output went nowhere exited 0. Programs call this before a
 * successful exit. */
#ifndef LR_STDOUT_CHECK_H
#define LR_STDOUT_CHECK_H

/* 0 when standard output took everything (flushed, no error); else prints
 * "PROG: standard output: REASON" on stderr and returns 1 (the exit status).
 * err: an errno the caller already saw from a write (0: none). */
int lr_stdout_check(const char *prog, int err);

/* For programs with many ways out: runs lr_stdout_check when the program
 * exits (a return from main or exit()) and ends it with status 1 when the
 * output did not arrive. Call it first thing in main (exit handlers run in
 * reverse order: this one last). */
void lr_stdout_check_at_exit(const char *prog);

#endif
