#include "util/benchcsv.h"
#include "util/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Rows appended under another file's header would shift its columns (before the
 * fifty-ninth session bench_engine wrote "variant" only under --env: a file from a
 * run without it took variants as extra fields). The file's header must be ours,
 * or ours followed by more columns, which our rows leave empty. */
static int header_fits(const char *path, const char *hdr)
{
    FILE *f = fopen(path, "r");
    if (!f) return LR_FAIL(LR_EIO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    fclose(f);
    if (n < 0) {
        free(line);
        return LR_FAIL(LR_EIO, "%s: cannot read its header", path);
    }
    line[strcspn(line, "\r\n")] = 0;
    const size_t k = strlen(hdr);
    const int ok = !strncmp(line, hdr, k) && (line[k] == 0 || line[k] == ',');
    int rc = LR_OK;
    if (!ok)
        rc = LR_FAIL(LR_EFORMAT, "%s: its header \"%.600s\" is not \"%s\" (or that and more columns): "
                     "rows of this program would land in the wrong columns; write to another file", path, line, hdr);
    free(line);
    return rc;
}

int lr_csv_open(lr_csv *c, const char *path, const char *header, const char *device)
{
    memset(c, 0, sizeof *c);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(c->date, sizeof c->date, "%Y-%m-%d", &tm);
    const char *env = getenv("LEECHRT_COMMIT");
    if (env && *env) {
        snprintf(c->commit, sizeof c->commit, "%s", env);
        for (char *p = c->commit; *p; p++) /* a comma or line end would shift the row's columns */
            if (*p == ',' || *p == '\r' || *p == '\n') *p = ';';
    }
    else {
        /* "-dirty" when tracked files differ from HEAD: a copy of the tree
         * whose .git lags behind (a GPU machine's) must not pass for HEAD */
        FILE *p = popen("git describe --always --dirty --abbrev=7 2>/dev/null", "r");
        if (p) {
            if (!fgets(c->commit, sizeof c->commit, p)) c->commit[0] = 0;
            pclose(p);
        }
        c->commit[strcspn(c->commit, "\r\n")] = 0;
        if (!c->commit[0]) snprintf(c->commit, sizeof c->commit, "unknown");
    }
    /* Commas would break the columns. */
    snprintf(c->device, sizeof c->device, "%s", device ? device : "unknown");
    for (char *p = c->device; *p; p++)
        if (*p == ',') *p = ';';
    if (!path) return LR_OK;
    struct stat st;
    int fresh = stat(path, &st) != 0 || st.st_size == 0;
    const char *hdr = header ? header : LR_CSV_HEADER;
    if (!fresh) {
        int rc = header_fits(path, hdr);
        if (rc) return rc;
    }
    /* a file that does not end in a line end (a row cut short by a killed run) would have
       the next row glued to its last: start on a line of our own */
    int nl = 1;
    if (!fresh) {
        FILE *r = fopen(path, "r");
        nl = r && fseek(r, -1, SEEK_END) == 0 && fgetc(r) == '\n';
        if (r) fclose(r);
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    c->f = fopen(path, "a");
    if (!c->f) return LR_FAIL(LR_EIO, "%s: %s", path, strerror(errno));
    if (fresh) fprintf(c->f, "%s\n", hdr);
    else if (!nl) fputc('\n', c->f);
    return LR_OK;
}

void lr_csv_row(lr_csv *c, const char *fmt, ...)
{
    if (!c->f) return;
    int bad = fprintf(c->f, "%s,%s,%s,", c->date, c->commit, c->device) < 0;
    va_list ap;
    va_start(ap, fmt);
    bad |= vfprintf(c->f, fmt, ap) < 0;
    va_end(ap);
    bad |= fputc('\n', c->f) == EOF;
    bad |= fflush(c->f) != 0;
    if (bad && !c->err) c->err = errno ? errno : EIO;
}

int lr_csv_close(lr_csv *c)
{
    if (!c->f) return LR_OK;
    int e = c->err ? c->err : ferror(c->f) ? EIO : 0;
    if (fclose(c->f) != 0 && !e) e = errno ? errno : EIO;
    c->f = NULL;
    return e ? LR_FAIL(LR_EIO, "%s: writing the rows failed: %s", c->path, strerror(e)) : LR_OK;
}
