#include "util/atomic_file.h"
#include "util/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lr_afile_open(lr_afile *a, const char *path)
{
    memset(a, 0, sizeof *a);
    if (snprintf(a->dst, sizeof a->dst, "%s", path) >= (int)sizeof a->dst ||
        snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof a->tmp)
        return LR_FAIL(LR_EINVAL, "%s: path too long", path);
    /* the rename would replace whatever is there: a device (/dev/null, run
       as root) or a folder's name must not become a regular file */
    struct stat st;
    if (!*path) return LR_FAIL(LR_EINVAL, "no output file name given");
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return LR_FAIL(LR_EINVAL, "%s: exists and is not a regular file (%s); give a file name", path,
                       S_ISDIR(st.st_mode) ? "a folder" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a special file");
    int fd = mkstemp(a->tmp);
    if (fd < 0) return LR_FAIL(LR_EIO, "%s: cannot create temp file: %s", path, strerror(errno));
    /* mkstemp makes the file 0600; the result should be an ordinary file. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    a->f = fdopen(fd, "wb");
    if (!a->f) {
        close(fd);
        unlink(a->tmp);
        return LR_FAIL(LR_EIO, "%s: fdopen: %s", path, strerror(errno));
    }
    return LR_OK;
}

int lr_afile_commit(lr_afile *a)
{
    /* the first failure's errno (an earlier write's is gone: ferror says only
       that one failed, and errno by now may be any later call's) */
    int e = ferror(a->f) ? -1 : 0;
    if (fflush(a->f) != 0 && !e) e = errno ? errno : -1;
    if (!e && fsync(fileno(a->f)) != 0) e = errno ? errno : -1;
    if (fclose(a->f) != 0 && !e) e = errno ? errno : -1;
    a->f = NULL;
    if (e) {
        unlink(a->tmp);
        return LR_FAIL(LR_EIO, "%s: write failed: %s", a->dst, e > 0 ? strerror(e) : "an earlier write to it failed");
    }
    if (rename(a->tmp, a->dst) != 0) {
        e = errno;
        unlink(a->tmp);
        return LR_FAIL(LR_EIO, "%s: rename: %s", a->dst, strerror(e));
    }
    return LR_OK;
}

void lr_afile_abort(lr_afile *a)
{
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp[0]) unlink(a->tmp);
}

int lr_write_file_atomic(const char *path, const void *data, size_t n)
{
    lr_afile a;
    int rc = lr_afile_open(&a, path);
    if (rc) return rc;
    if (n && fwrite(data, 1, n, a.f) != n) {
        const int e = errno;
        lr_afile_abort(&a);
        return LR_FAIL(LR_EIO, "%s: write failed: %s", path, strerror(e));
    }
    return lr_afile_commit(&a);
}
