/* util/read_file: a whole input or an error naming it. Pipes and FIFOs (no
 * size to trust) read to their end; "-" is standard input only when asked; a
 * folder, a missing file and an input past the cap are refused by name. */
#include "test/t.h"
#include "util/err.h"
#include "util/read_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Byte i of the test inputs: not all one value, so an offset error shows. */
static char pattern(size_t i) { return (char)('a' + i % 23); }

static int matches(const char *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (d[i] != pattern(i)) return 0;
    return d[n] == 0;
}

/* Writes n pattern bytes to fd (blocking until a reader takes them). */
static int write_pattern(int fd, size_t n)
{
    char chunk[4096];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof chunk ? n - done : sizeof chunk;
        for (size_t i = 0; i < k; i++) chunk[i] = pattern(done + i);
        ssize_t w = write(fd, chunk, k);
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

static int write_file(const char *path, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    int rc = write_pattern(fd, n);
    return close(fd) == 0 ? rc : -1;
}

/* A fresh folder for one case, and its removal with what the case left. */
static int make_dir(char dir[64])
{
    snprintf(dir, 64, "/tmp/lr_read_file_XXXXXX");
    return mkdtemp(dir) != NULL;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char path[128];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* A regular file past the first 64 KiB buffer, an empty one, and a missing one. */
static int test_files(void)
{
    char dir[64], path[128];
    T_ASSERT(make_dir(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/big", dir);
    const size_t big = 300000;
    T_ASSERT(write_file(path, big) == 0, "write %s", path);
    void *d;
    size_t n;
    T_OK(lr_read_file(path, &d, &n));
    T_ASSERT(n == big && matches(d, n), "%zu bytes read of %zu", n, big);
    free(d);

    snprintf(path, sizeof path, "%s/empty", dir);
    T_ASSERT(write_file(path, 0) == 0, "write %s", path);
    T_OK(lr_read_file(path, &d, &n));
    T_ASSERT(n == 0 && d && ((char *)d)[0] == 0, "an empty file: %zu bytes, buffer %p", n, d);
    free(d);

    snprintf(path, sizeof path, "%s/none.txt", dir);
    d = &n;
    int rc = lr_read_file(path, &d, &n);
    T_ASSERT(rc == LR_EIO && !d && n == 0, "missing: rc %d", rc);
    T_ASSERT(strstr(lr_errmsg(), path) && strstr(lr_errmsg(), "No such file"), "missing: %s", lr_errmsg());
    remove_dir(dir);
    return T_PASS;
}

/* A folder opens and its read fails with a bare EISDIR (it once said only
 * "read error"): named as a folder. */
static int test_folder(void)
{
    char dir[64];
    T_ASSERT(make_dir(dir), "mkdtemp");
    void *d = &d;
    size_t n;
    int rc = lr_read_file(dir, &d, &n);
    remove_dir(dir);
    T_ASSERT(rc == LR_EINVAL && !d, "rc %d", rc);
    T_ASSERT(strstr(lr_errmsg(), dir) && strstr(lr_errmsg(), "is a folder"), "%s", lr_errmsg());
    return T_PASS;
}

/* Over the cap is refused, naming the cap; at the cap is read; truncate keeps
 * the first max bytes. */
static int test_cap(void)
{
    char dir[64], path[128];
    T_ASSERT(make_dir(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/hundred", dir);
    T_ASSERT(write_file(path, 100) == 0, "write %s", path);
    void *d;
    size_t n;
    lr_read_opts o = { .max = 100 };
    T_OK(lr_read_file_opts(path, &o, &d, &n));
    T_ASSERT(n == 100 && matches(d, n), "at the cap: %zu bytes", n);
    free(d);
    o.max = 99;
    int rc = lr_read_file_opts(path, &o, &d, &n);
    T_ASSERT(rc == LR_EINVAL && !d, "past the cap: rc %d", rc);
    T_ASSERT(strstr(lr_errmsg(), path) && strstr(lr_errmsg(), "larger than 99 bytes"), "%s", lr_errmsg());
    o.truncate = 1, o.max = 10;
    T_OK(lr_read_file_opts(path, &o, &d, &n));
    T_ASSERT(n == 10 && matches(d, n), "truncated: %zu bytes", n);
    free(d);

    /* a whole number of MiB is said so */
    snprintf(path, sizeof path, "%s/mib", dir);
    T_ASSERT(write_file(path, (1 << 20) + 1) == 0, "write %s", path);
    o = (lr_read_opts){ .max = 1 << 20 };
    rc = lr_read_file_opts(path, &o, &d, &n);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), "larger than 1 MiB"), "rc %d: %s", rc, lr_errmsg());
    remove_dir(dir);
    return T_PASS;
}

/* A child that writes n pattern bytes into the FIFO at path, then exits. */
static pid_t fifo_writer(const char *path, size_t n)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL); /* a reader that stops early ends the child */
        int fd = open(path, O_WRONLY);
        _exit(fd < 0 || write_pattern(fd, n) ? 1 : 0);
    }
    return pid;
}

/* A FIFO has no size (fstat says 0): read to its end, past the first buffer;
 * the cap holds there too. */
static int test_fifo(void)
{
    char dir[64], path[128];
    T_ASSERT(make_dir(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/fifo", dir);
    T_ASSERT(mkfifo(path, 0600) == 0, "mkfifo");
    const size_t len = 200000;
    pid_t pid = fifo_writer(path, len);
    T_ASSERT(pid > 0, "fork");
    void *d;
    size_t n;
    int rc = lr_read_file(path, &d, &n), st;
    waitpid(pid, &st, 0);
    T_OK(rc);
    T_ASSERT(n == len && matches(d, n), "%zu bytes read of %zu", n, len);
    free(d);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writer failed");

    lr_read_opts o = { .max = 70000 };
    pid = fifo_writer(path, len);
    T_ASSERT(pid > 0, "fork");
    rc = lr_read_file_opts(path, &o, &d, &n);
    waitpid(pid, &st, 0);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), "larger than 70000 bytes"), "rc %d: %s", rc, lr_errmsg());
    remove_dir(dir);
    return T_PASS;
}

/* "-" with dash_stdin reads standard input (here a pipe, past the first
 * buffer); without it, "-" is a file of that name. Run in a child whose
 * standard input is the pipe; its exit status is the verdict. */
static int test_dash_stdin(void)
{
    char dir[64];
    T_ASSERT(make_dir(dir), "mkdtemp");
    int fd[2];
    T_ASSERT(pipe(fd) == 0, "pipe");
    const size_t len = 150000;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[1]);
        dup2(fd[0], 0), close(fd[0]);
        const lr_read_opts o = { .dash_stdin = 1 };
        void *d;
        size_t n;
        if (lr_read_file_opts("-", &o, &d, &n) || n != len || !matches(d, n)) {
            fprintf(stderr, "    from stdin: %zu bytes: %s\n", n, lr_errmsg());
            _exit(1);
        }
        free(d);
        /* a plain read of "-" is the file "-" */
        if (chdir(dir) != 0 || write_file("-", 5) != 0) _exit(2);
        if (lr_read_file("-", &d, &n) || n != 5 || !matches(d, n)) {
            fprintf(stderr, "    the file '-': %zu bytes: %s\n", n, lr_errmsg());
            _exit(3);
        }
        _exit(0);
    }
    T_ASSERT(pid > 0, "fork");
    close(fd[0]);
    signal(SIGPIPE, SIG_IGN);
    const int wr = write_pattern(fd[1], len);
    close(fd[1]);
    signal(SIGPIPE, SIG_DFL);
    int st;
    waitpid(pid, &st, 0);
    remove_dir(dir);
    T_ASSERT(wr == 0, "writing the pipe failed");
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status %d)", st);
    return T_PASS;
}

T_MAIN(T_CASE(test_files), T_CASE(test_folder), T_CASE(test_cap), T_CASE(test_fifo), T_CASE(test_dash_stdin))
