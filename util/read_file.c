#include "util/read_file.h"
#include "util/err.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "64 MiB" for a whole number of MiB, else "N bytes". */
static const char *size_text(size_t n, char *buf, size_t cap)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0) snprintf(buf, cap, "%zu MiB", n >> 20);
    else snprintf(buf, cap, "%zu bytes", n);
    return buf;
}

/* Reads f until its end or `stop` bytes into *out (room for a NUL after).
 * hint: the size fstat gave (0: unknown); only the first allocation's size,
 * so a pipe or a file that grew still reads to its end. */
static int read_stream(FILE *f, const char *name, size_t hint, size_t stop, char **out, size_t *len)
{
    /* +1: the read that finds the end fits without growing the buffer */
    size_t cap = hint ? hint + 1 : (size_t)1 << 16, n = 0;
    if (cap > stop) cap = stop;
    char *buf = malloc(cap + 1);
    if (!buf) return LR_FAIL(LR_ENOMEM, "%s: out of memory", name);
    for (;;) {
        const size_t want = cap - n;
        errno = 0;
        const size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (got < want || n == stop) break;
        const size_t grown = cap > stop / 2 ? stop : cap * 2;
        char *b = realloc(buf, grown + 1);
        if (!b) {
            free(buf);
            return LR_FAIL(LR_ENOMEM, "%s: out of memory (past %zu bytes)", name, n);
        }
        buf = b, cap = grown;
    }
    if (ferror(f)) {
        const int e = errno ? errno : EIO;
        free(buf);
        return LR_FAIL(LR_EIO, "%s: read error: %s", name, strerror(e));
    }
    *out = buf;
    *len = n;
    return LR_OK;
}

int lr_read_file_opts(const char *path, const lr_read_opts *o, void **data, size_t *n)
{
    static const lr_read_opts plain = { 0 };
    if (!o) o = &plain;
    *data = NULL;
    *n = 0;
    const int from_stdin = o->dash_stdin && !strcmp(path, "-");
    const char *name = from_stdin ? "standard input" : path;
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f) return LR_FAIL(LR_EIO, "%s: %s", path, strerror(errno));
    /* a folder opens, and its read fails with a bare EISDIR: say what it is */
    struct stat st;
    size_t hint = 0;
    int rc = LR_OK;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) rc = LR_FAIL(LR_EINVAL, "%s: is a folder, not a file", name);
        else if (S_ISREG(st.st_mode) && st.st_size > 0) hint = (size_t)st.st_size;
    }
    /* past max: one byte more than max tells a longer input from one of max */
    const size_t lim = o->max && o->max < SIZE_MAX / 2 ? o->max : SIZE_MAX / 2;
    char *buf = NULL;
    size_t len = 0;
    if (!rc) rc = read_stream(f, name, hint, o->truncate ? lim : lim + 1, &buf, &len);
    if (f != stdin) fclose(f);
    if (!rc && len > lim) {
        char t[32];
        free(buf);
        return LR_FAIL(LR_EINVAL, "%s: larger than %s, the most it reads", name, size_text(lim, t, sizeof t));
    }
    if (rc) return rc;
    buf[len] = 0;
    *data = buf;
    *n = len;
    return LR_OK;
}

int lr_read_file(const char *path, void **data, size_t *n) { return lr_read_file_opts(path, NULL, data, n); }
