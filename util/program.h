/* What every program does first in main. */
#ifndef LR_PROGRAM_H
#define LR_PROGRAM_H

/* Names the program in warnings (lr_warn_set_program, util/log.h) and ends it
 * with status 1 when its output did not reach standard output
 * (lr_stdout_check_at_exit, util/stdout_check.h). Call it first thing in main:
 * exit handlers run in reverse order, and the output check must run last. */
void lr_program_init(const char *name);

#endif
