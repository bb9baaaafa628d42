/* lr_program_init: both halves of a program's start. In a child whose
 * standard output is /dev/full (else closed) and whose stderr is a pipe: a
 * warning carries the program's name, and the output that went nowhere turns
 * its exit 0 into 1 with a message naming the program. */
#include "test/t.h"
#include "util/log.h"
#include "util/program.h"

#include <fcntl.h>
#include <sys/wait.h>

static int test_program_init(void)
{
    int ep[2];
    T_ASSERT(pipe(ep) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(ep[0]);
        dup2(ep[1], 2), close(ep[1]);
        int fd = open("/dev/full", O_WRONLY);
        if (fd >= 0) dup2(fd, 1), close(fd);
        else close(1);
        lr_program_init("tool");
        lr_warn("careful");
        printf("output that goes nowhere\n");
        exit(0);
    }
    T_ASSERT(pid > 0, "fork");
    close(ep[1]);
    char err[1024];
    size_t n = 0;
    for (ssize_t k; n < sizeof err - 1 && (k = read(ep[0], err + n, sizeof err - 1 - n)) > 0;) n += (size_t)k;
    err[n] = 0;
    close(ep[0]);
    int st;
    waitpid(pid, &st, 0);
    T_ASSERT(strstr(err, "tool: warning: careful"), "the warning: '%s'", err);
    T_ASSERT(strstr(err, "tool: standard output: "), "the output check: '%s'", err);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    return T_PASS;
}

T_MAIN(T_CASE(test_program_init))
