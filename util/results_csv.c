/* Result CSVs, read side (util/results_csv.h). */
#include "util/results_csv.h"
#include "util/benchcsv.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lr_rcsv_load(const char *path, lr_rcsv *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f) return LR_FAIL(LR_EIO, "%s: cannot open", path);
    int rc = lr_rcsv_read(f, path, c);
    fclose(f);
    return rc;
}

int lr_rcsv_load_in(const char *dir, const char *name, lr_rcsv *c)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lr_rcsv_load(path, c);
}

/* Room for one more row (doubling). */
static int grow(lr_rcsv *c)
{
    if (c->n < c->cap) return 0;
    int cap = c->cap ? 2 * c->cap : 256;
    void *f = realloc(c->f, sizeof *c->f * (size_t)cap), *nf = NULL, *line = NULL;
    if (f) c->f = f, nf = realloc(c->nf, sizeof *c->nf * (size_t)cap);
    if (nf) c->nf = nf, line = realloc(c->line, sizeof *c->line * (size_t)cap);
    if (!line) return -1;
    c->line = line, c->cap = cap;
    return 0;
}

int lr_rcsv_read(FILE *f, const char *what, lr_rcsv *c)
{
    memset(c, 0, sizeof *c);
    char line[4096];
    int rc = LR_OK, lineno = 1;
    if (fgets(line, sizeof line, f)) {
        char *h = strdup(line);
        if (h) c->nh = lr_csv_split(h, c->hdr, LR_RCSV_MAXF);
        else rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", what);
    }
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strncmp(line, "date,", 5)) continue; /* the header of an appended run */
        char *l = strdup(line);
        if (!l || grow(c)) { free(l); rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", what); break; }
        c->nf[c->n] = lr_csv_split(l, c->f[c->n], LR_RCSV_MAXF);
        c->line[c->n++] = lineno;
    }
    if (rc) lr_rcsv_free(c);
    return rc;
}

int lr_rcsv_col(const lr_rcsv *c, const char *name)
{
    for (int i = 0; i < c->nh; i++)
        if (!strcmp(c->hdr[i], name)) return i;
    return -1;
}

const char *lr_rcsv_get(const lr_rcsv *c, int r, const char *col)
{
    if (r < 0 || r >= c->n) return "";
    int i = lr_rcsv_col(c, col);
    return i >= 0 && i < c->nf[r] ? c->f[r][i] : "";
}

void lr_rcsv_free(lr_rcsv *c)
{
    if (c->nh) free(c->hdr[0]); /* the header line, split in place */
    for (int r = 0; c->f && r < c->n; r++) free(c->f[r][0]);
    free(c->f), free(c->nf), free(c->line);
    memset(c, 0, sizeof *c);
}

/* k is one of the ", "-separated items of list (not merely inside one:
 * "abc1234" is not in "abc1234-dirty") */
static int has_token(const char *list, const char *k)
{
    const size_t n = strlen(k);
    for (const char *p = list; *p;) {
        const char *e = strstr(p, ", ");
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !memcmp(p, k, n)) return 1;
        if (!e) break;
        p = e + 2;
    }
    return 0;
}

/* The mark a cut list ends with (its last item). */
static const char cut_mark[] = "...";

int lr_rcsv_commits(const lr_rcsv *c, char *out, size_t n)
{
    if (!n) return 0;
    size_t len = strnlen(out, n - 1);
    out[len] = 0;
    int cut = has_token(out, cut_mark);
    for (int r = 0; r < c->n && !cut; r++) {
        const char *k = lr_rcsv_get(c, r, "commit");
        if (!*k || has_token(out, k)) continue;
        size_t need = strlen(k) + (len ? 2 : 0);
        if (len + need < n) {
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", k);
            continue;
        }
        /* Why a mark: a source line that silently lost commits read as whole (three README
           lines did, 6a6f4a8). The last items give way until ", ..." fits. */
        while (len && len + 2 + sizeof cut_mark - 1 >= n) {
            char *e = out;
            for (char *p = out; (p = strstr(p, ", ")); p += 2) e = p;
            len = (size_t)(e - out);
            out[len] = 0;
        }
        if (len + (len ? 2 : 0) + sizeof cut_mark - 1 < n)
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", cut_mark);
        cut = 1;
    }
    int count = *out != 0;
    for (const char *p = out; (p = strchr(p, ',')); p++) count++;
    return count - has_token(out, cut_mark);
}

int lr_rcsv_is_experiment(const lr_rcsv *c, int r) { return strchr(lr_rcsv_get(c, r, "commit"), '+') != NULL; }

int lr_rcsv_newest(const lr_rcsv *f, int nf, const char *arm, const char *model, const char *matrix, int *fi, int *row)
{
    const char *date = NULL;
    *fi = *row = -1;
    for (int i = 0; i < nf; i++)
        for (int r = 0; r < f[i].n; r++) {
            const char *d = lr_rcsv_get(&f[i], r, "date");
            if (strcmp(lr_rcsv_get(&f[i], r, "arm"), arm) || strcmp(lr_rcsv_get(&f[i], r, "model"), model) ||
                strcmp(lr_rcsv_get(&f[i], r, "matrix"), matrix) || lr_rcsv_is_experiment(&f[i], r))
                continue;
            if (date && strcmp(d, date) < 0) continue; /* ISO dates compare as strings */
            date = d, *fi = i, *row = r;
        }
    return *fi < 0 ? -1 : 0;
}

double lr_rcsv_process_bound(const lr_rcsv *c, int r)
{
    const char *commit = lr_rcsv_get(c, r, "commit");
    for (int k = r < c->n ? r : c->n - 1; k >= 0; k--)
        if (!strcmp(lr_rcsv_get(c, k, "arm"), "read_bound") && !strcmp(lr_rcsv_get(c, k, "commit"), commit))
            return atof(lr_rcsv_get(c, k, "gbps"));
    return 0;
}
