#include "util/benchcsv.h"
#include "util/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int lr_csv_open(lr_csv *c, const char *path, const char *header, const char *device)
{
    memset(c, 0, sizeof *c);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(c->date, sizeof c->date, "%Y-%m-%d", &tm);
    const char *env = getenv("LEECHRT_COMMIT");
    if (env && *env) snprintf(c->commit, sizeof c->commit, "%s", env);
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
    c->f = fopen(path, "a");
    if (!c->f) return LR_FAIL(LR_EIO, "%s: %s", path, strerror(errno));
    if (fresh) fprintf(c->f, "%s\n", header ? header : LR_CSV_HEADER);
    return LR_OK;
}

void lr_csv_row(lr_csv *c, const char *fmt, ...)
{
    if (!c->f) return;
    fprintf(c->f, "%s,%s,%s,", c->date, c->commit, c->device);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->f, fmt, ap);
    va_end(ap);
    fputc('\n', c->f);
    fflush(c->f);
}

void lr_csv_close(lr_csv *c)
{
    if (c->f) fclose(c->f);
    c->f = NULL;
}
