/* lr_stdout_check: output that reached standard output passes; output into a
 * full device or a closed descriptor fails with the reason named. Each case
 * runs in a child whose standard output is redirected. */
#include "test/t.h"
#include "util/stdout_check.h"

#include <fcntl.h>
#include <sys/wait.h>

/* The child's exit status after printing into `path` (NULL: closed stdout); its stderr in err. */
static int child_mode(const char *path, char *err, size_t n, int at_exit);

static int child(const char *path, char *err, size_t n) { return child_mode(path, err, n, 0); }

/* at_exit: the child registers lr_stdout_check_at_exit and exits 0 */
static int child_mode(const char *path, char *err, size_t n, int at_exit)
{
    char ef[] = "/tmp/lr-stdout-check-XXXXXX";
    int efd = mkstemp(ef);
    if (efd < 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(efd, 2);
        if (path) {
            int fd = open(path, O_WRONLY);
            if (fd < 0) _exit(99);
            dup2(fd, 1), close(fd);
        } else {
            close(1);
        }
        if (at_exit) lr_stdout_check_at_exit("prog");
        for (int i = 0; i < 1000; i++) printf("line %d of what the program printed\n", i);
        if (at_exit) exit(0);
        _exit(lr_stdout_check("prog", 0));
    }
    int st = -1;
    waitpid(pid, &st, 0);
    ssize_t k = pread(efd, err, n - 1, 0);
    err[k > 0 ? k : 0] = 0;
    close(efd), unlink(ef);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int test_stdout_check(void)
{
    char err[512];
    T_ASSERT(child("/dev/null", err, sizeof err) == 0 && !err[0], "/dev/null: '%s'", err);
    if (access("/dev/full", W_OK) == 0)
        T_ASSERT(child("/dev/full", err, sizeof err) == 1 && strstr(err, "prog: standard output: "), "/dev/full: '%s'", err);
    T_ASSERT(child(NULL, err, sizeof err) == 1 && strstr(err, "prog: standard output: "), "closed: '%s'", err);
    T_ASSERT(lr_stdout_check("x", 0) == 0, "this process's own standard output");
    return T_PASS;
}

/* The exit handler turns a program's exit 0 into 1 when its output went nowhere. */
static int test_stdout_check_at_exit(void)
{
    char err[512];
    T_ASSERT(child_mode("/dev/null", err, sizeof err, 1) == 0 && !err[0], "/dev/null: '%s'", err);
    if (access("/dev/full", W_OK) == 0)
        T_ASSERT(child_mode("/dev/full", err, sizeof err, 1) == 1 && strstr(err, "prog: standard output: "),
                 "/dev/full: '%s'", err);
    T_ASSERT(child_mode(NULL, err, sizeof err, 1) == 1 && strstr(err, "prog: standard output: "), "closed: '%s'", err);
    return T_PASS;
}

T_MAIN(T_CASE(test_stdout_check), T_CASE(test_stdout_check_at_exit))
