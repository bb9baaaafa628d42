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

int lr_rcsv_read(FILE *f, const char *what, lr_rcsv *c)
{
    memset(c, 0, sizeof *c);
    c->f = malloc(sizeof *c->f * LR_RCSV_MAXR);
    c->nf = malloc(sizeof *c->nf * LR_RCSV_MAXR);
    if (!c->f || !c->nf) { lr_rcsv_free(c); return LR_FAIL(LR_ENOMEM, "%s: out of memory", what); }
    char line[4096];
    int rc = LR_OK;
    if (fgets(line, sizeof line, f)) {
        char *h = strdup(line);
        if (h) c->nh = lr_csv_split(h, c->hdr, LR_RCSV_MAXF);
        else rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", what);
    }
    while (!rc && c->n < LR_RCSV_MAXR && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "date,", 5)) continue; /* the header of an appended run */
        char *l = strdup(line);
        if (!l) { rc = LR_FAIL(LR_ENOMEM, "%s: out of memory", what); break; }
        c->nf[c->n] = lr_csv_split(l, c->f[c->n], LR_RCSV_MAXF);
        c->n++;
    }
    if (rc) lr_rcsv_free(c);
    return rc;
}

const char *lr_rcsv_get(const lr_rcsv *c, int r, const char *col)
{
    if (r < 0 || r >= c->n) return "";
    for (int i = 0; i < c->nh; i++)
        if (!strcmp(c->hdr[i], col)) return i < c->nf[r] ? c->f[r][i] : "";
    return "";
}

void lr_rcsv_free(lr_rcsv *c)
{
    if (c->nh) free(c->hdr[0]); /* the header line, split in place */
    for (int r = 0; c->f && r < c->n; r++) free(c->f[r][0]);
    free(c->f), free(c->nf);
    memset(c, 0, sizeof *c);
}

int lr_rcsv_commits(const lr_rcsv *c, char *out, size_t n)
{
    if (!n) return 0;
    size_t len = strnlen(out, n - 1);
    out[len] = 0;
    for (int r = 0; r < c->n; r++) {
        const char *k = lr_rcsv_get(c, r, "commit");
        if (!*k || strstr(out, k)) continue;
        size_t need = strlen(k) + (len ? 2 : 0);
        if (len + need >= n) break;
        len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", k);
    }
    int count = *out != 0;
    for (const char *p = out; (p = strchr(p, ',')); p++) count++;
    return count;
}
