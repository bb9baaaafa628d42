/* util/stdout_check.h */
#include "util/stdout_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_reported; /* said once: the exit handler does not say it again */

int lr_stdout_check(const char *prog, int err)
{
    errno = 0;
    if (!err && fflush(stdout) == 0 && !ferror(stdout)) return 0;
    if (!err) err = errno ? errno : EIO;
    if (!g_reported) fprintf(stderr, "\n%s: standard output: %s\n", prog, strerror(err));
    g_reported = 1;
    return 1;
}

static const char *g_prog = "leechrt";

static void check_at_exit(void)
{
    /* _exit: exit() may not be called again from an exit handler */
    if (lr_stdout_check(g_prog, 0)) _exit(1);
}

void lr_stdout_check_at_exit(const char *prog)
{
    g_prog = prog;
    atexit(check_at_exit);
}
