/* Benchmark results as CSV rows with the project's common columns:
 * date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,
 * pct_read_bound,max_rel_err[,extra columns]. Appends; writes the header when
 * the file is new, and refuses (LR_EFORMAT) a file whose header is neither the
 * program's nor the program's followed by more columns. The commit comes from $LEECHRT_COMMIT, else git (with
 * "-dirty" when tracked files differ from HEAD). */
#ifndef LR_BENCHCSV_H
#define LR_BENCHCSV_H
#include <stdio.h>

#define LR_CSV_HEADER "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err"

typedef struct lr_csv {
    FILE *f;
    int err; /* the first failed write's errno (reported by lr_csv_close) */
    char date[16], commit[48], device[128], path[512];
} lr_csv;

/* header NULL = LR_CSV_HEADER. path NULL = no file (rows only printed by the caller). */
int lr_csv_open(lr_csv *c, const char *path, const char *header, const char *device);
/* Writes date,commit,device, then the caller's formatted remainder. */
void lr_csv_row(lr_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* LR_EIO naming the file when a row or the close failed to write (a full
 * disk, /dev/full): the caller's run must not look complete. */
int lr_csv_close(lr_csv *c);

/* The reading side: splits a line of these files at commas in place, the
 * line end removed; at most max fields, the last holding the rest. A field
 * that starts with a quote (the writers quote free text: bench_engine's
 * variant) runs to its closing quote, commas included, and is returned
 * without its quotes ("" inside it is one quote). */
#include <string.h>
static inline int lr_csv_split(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *p = line;; p++) {
        f[n++] = p;
        if (*p == '"' && n < max) { /* unquote in place: q reads, w writes */
            char *q = p + 1, *w = p;
            for (; *q && !(q[0] == '"' && q[1] != '"'); q++) {
                if (q[0] == '"') q++; /* "" */
                *w++ = *q;
            }
            if (*q) q++; /* the closing quote */
            *w = 0;
            p = strchr(q, ',');
            if (!p) break;
            continue;
        }
        p = strchr(p, ',');
        if (!p || n == max) break;
        *p = 0;
    }
    return n;
}

#endif
