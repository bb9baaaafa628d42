/* util/atomic_file: a whole file or none. A write that fails (here: past
 * RLIMIT_FSIZE, EFBIG) leaves neither the target nor the temp file, and the
 * message names the target and the cause; a failed write keeps an older
 * target as it was. */
#include "test/t.h"
#include "util/atomic_file.h"
#include "util/err.h"
#include "util/read_file.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static int test_write_failure_leaves_nothing(void)
{
    char dir[] = "/tmp/lr_afile_XXXXXX", path[64];
    T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/out.bin", dir);
    T_OK(lr_write_file_atomic(path, "old", 3));
    static char big[1 << 20];
    memset(big, 'x', sizeof big);
    /* the soft limit only: lowering the hard one cannot be undone without
       CAP_SYS_RESOURCE, and the rest of the run's output would die of SIGXFSZ */
    struct rlimit was, small;
    T_ASSERT(getrlimit(RLIMIT_FSIZE, &was) == 0, "getrlimit");
    small.rlim_cur = 64 << 10, small.rlim_max = was.rlim_max;
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < small.rlim_cur) small.rlim_cur = was.rlim_max;
    signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead of the signal */
    T_ASSERT(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
    const int rc = lr_write_file_atomic(path, big, sizeof big);
    setrlimit(RLIMIT_FSIZE, &was);
    signal(SIGXFSZ, SIG_DFL);
    T_ASSERT(rc == LR_EIO && strstr(lr_errmsg(), path) && strstr(lr_errmsg(), "write failed: File too large"),
             "rc %d: %s", rc, lr_errmsg());
    T_ASSERT(entries(dir) == 1, "%d files in %s: a temp file was left", entries(dir), dir);
    void *back;
    size_t n;
    T_OK(lr_read_file(path, &back, &n));
    T_ASSERT(n == 3 && !memcmp(back, "old", 3), "the older file changed (%zu bytes)", n);
    free(back);
    unlink(path);
    rmdir(dir);
    return T_PASS;
}

/* An existing output that is not a regular file (a FIFO here; /dev/null or
 * /dev/full for a program run as root, which the rename would replace) or a
 * folder is refused by name, and left as it was; an empty name is refused. */
static int test_special_targets_refused(void)
{
    char dir[] = "/tmp/lr_afile_XXXXXX", fifo[64], sub[64];
    T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    T_ASSERT(mkfifo(fifo, 0600) == 0 && mkdir(sub, 0700) == 0, "mkfifo, mkdir");
    int rc = lr_write_file_atomic(fifo, "x", 1);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), fifo) && strstr(lr_errmsg(), "not a regular file"), "fifo: %d %s",
             rc, lr_errmsg());
    struct stat st;
    T_ASSERT(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    rc = lr_write_file_atomic(sub, "x", 1);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), "a folder"), "folder: %d %s", rc, lr_errmsg());
    T_ASSERT(lr_write_file_atomic("", "x", 1) == LR_EINVAL, "empty name");
    T_ASSERT(entries(dir) == 2, "%d entries: a temp file left", entries(dir));
    unlink(fifo);
    rmdir(sub);
    rmdir(dir);
    return T_PASS;
}

T_MAIN(T_CASE(test_write_failure_leaves_nothing), T_CASE(test_special_targets_refused))
