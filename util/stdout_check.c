/* util/stdout_check.h */
#include "util/stdout_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int lr_stdout_check(const char *prog, int err)
{
    errno = 0;
    if (!err && fflush(stdout) == 0 && !ferror(stdout)) return 0;
    if (!err) err = errno ? errno : EIO;
    fprintf(stderr, "\n%s: standard output: %s\n", prog, strerror(err));
    return 1;
}
