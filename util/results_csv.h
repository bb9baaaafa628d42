/* Reading the result CSVs of bench/results/ (util/benchcsv.h writes them):
 * a header line, then rows; a repeated header (appended runs) is skipped.
 * Used by the README tables and the plots. */
#ifndef LR_RESULTS_CSV_H
#define LR_RESULTS_CSV_H
#include <stddef.h>
#include <stdio.h>

#define LR_RCSV_MAXF 24

typedef struct lr_rcsv {
    int n, nh;
    char *hdr[LR_RCSV_MAXF];
    char *(*f)[LR_RCSV_MAXF]; /* n rows, each split at most LR_RCSV_MAXF ways */
    int *nf;                  /* fields of each row */
    int *line;                /* each row's line in the file (for messages) */
    int cap;
} lr_rcsv;

/* LR_EIO when the file cannot be opened (c is then empty), LR_ENOMEM. */
int lr_rcsv_load(const char *path, lr_rcsv *c);
/* The same from an open stream; `what` names it in messages. */
int lr_rcsv_read(FILE *f, const char *what, lr_rcsv *c);
/* dir/name */
int lr_rcsv_load_in(const char *dir, const char *name, lr_rcsv *c);
/* The index of column `name` in the header, -1 when absent. */
int lr_rcsv_col(const lr_rcsv *c, const char *name);
/* Row r's value in column col; "" when absent. */
const char *lr_rcsv_get(const lr_rcsv *c, int r, const char *col);
void lr_rcsv_free(lr_rcsv *c);
/* Appends to the comma-separated list in out (n bytes, NUL-terminated) the
 * commits of c's rows not already in it; stops, still terminated, when full.
 * Returns how many commits the list holds. */
int lr_rcsv_commits(const lr_rcsv *c, char *out, size_t n);

#endif
