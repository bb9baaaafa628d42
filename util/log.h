/* Warnings from library code go through one hook (default: one line on
 * stderr) so programs decide where they land. */
#ifndef LR_LOG_H
#define LR_LOG_H
typedef void (*lr_warn_fn)(const char *msg);
void lr_set_warn_handler(lr_warn_fn fn); /* NULL silences warnings */
/* The default handler's prefix, "PROG: warning: " (default "leechrt"): a
 * program names itself, so a warning says which tool gave it. */
void lr_warn_set_program(const char *prog);
void lr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Mutes (on = 1) or unmutes this thread's warnings, nesting: for a second
 * pass over input whose warnings the first pass already gave. */
void lr_warn_mute(int on);
#endif
