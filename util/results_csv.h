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
 * commits of c's rows not already in it. When one does not fit, the list is
 * cut: its last items give way until it can end with "..." (alone when even
 * one commit and the mark do not fit), and a list so marked takes no more.
 * Returns how many commits the list holds (the mark not counted). */
int lr_rcsv_commits(const lr_rcsv *c, char *out, size_t n);
/* Whether row r comes from an experiment: its commit carries a "+variant"
 * suffix (branch code, or a setting main does not run). */
int lr_rcsv_is_experiment(const lr_rcsv *c, int r);
/* The newest row over nf files with this arm, model and matrix, run at a
 * commit as committed (no "+variant" suffix): the latest date, then the later
 * file, then the later row. Sets *fi and *row and returns 0; -1 when none. */
int lr_rcsv_newest(const lr_rcsv *f, int nf, const char *arm, const char *model, const char *matrix, int *fi, int *row);
/* The read bound (GB/s) that row r's own process measured: the nearest
 * read_bound row at or above it with its commit; 0 when none. */
double lr_rcsv_process_bound(const lr_rcsv *c, int r);

#endif
