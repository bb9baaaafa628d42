/* util/atomic_file: a whole file or none. A write that fails (here: past
 * RLIMIT_FSIZE, EFBIG) leaves neither the target nor the temp file, and the
 * message names the target and the cause; a failed write keeps an older
 * target as it was. */
#include "test/t.h"
#include "util/atomic_file.h"
#include "util/err.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    struct rlimit was, small = { 64 << 10, 64 << 10 };
    T_ASSERT(getrlimit(RLIMIT_FSIZE, &was) == 0, "getrlimit");
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < small.rlim_max) small.rlim_max = was.rlim_max;
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

T_MAIN(T_CASE(test_write_failure_leaves_nothing))
