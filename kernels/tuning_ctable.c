/* Reads back a tuning table's C source as tools/tune_gemv writes it
 * (kernels/tuning_table.c). Why: tune_gemv --from-csv merged its rows into
 * the table compiled into the program, so a second merge (another arm) before
 * a rebuild silently dropped the first one's rows; merging into the file
 * being written needs that file's rows. Only the generated form is accepted:
 * the array's opening line, one row per line, the count line. */
#include "kernels/tuning.h"
#include "util/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char open_line[] = "const lr_tuning_row lr_tuning_table[] = {";
static const char count_line[] = "const int lr_tuning_table_n = ";

typedef struct { const char *p; int ok; } cur;

static void ws(cur *c)
{
    while (*c->p == ' ' || *c->p == '\t') c->p++;
}
static void lit(cur *c, char ch)
{
    ws(c);
    if (c->ok && *c->p == ch) c->p++;
    else c->ok = 0;
}
/* a quoted string without escapes, at most cap-1 characters, not empty */
static void str(cur *c, char *out, size_t cap)
{
    lit(c, '"');
    size_t n = 0;
    while (c->ok && *c->p && *c->p != '"' && *c->p != '\\' && *c->p != '\n' && n + 1 < cap) out[n++] = *c->p++;
    out[n] = 0;
    if (c->ok && *c->p == '"' && n) c->p++;
    else c->ok = 0;
}
static long integer(cur *c, long lo, long hi)
{
    ws(c);
    if (!c->ok) return 0;
    char *end;
    errno = 0;
    long v = strtol(c->p, &end, 10);
    if (end == c->p || errno || v < lo || v > hi) { c->ok = 0; return 0; }
    c->p = end;
    return v;
}
static double number(cur *c, double lo, double hi)
{
    ws(c);
    if (!c->ok) return 0;
    char *end;
    double v = strtod(c->p, &end);
    if (end == c->p || !(v >= lo && v <= hi)) { c->ok = 0; return 0; }
    c->p = end;
    return v;
}

/* one row line; 1 when it parsed and nothing but a ',' followed */
static int row_line(const char *line, lr_tuning_pick *p)
{
    cur c = { line, 1 };
    memset(p, 0, sizeof *p);
    lit(&c, '{');
    str(&c, p->device, sizeof p->device);
    lit(&c, ',');
    p->row.cc = (int)integer(&c, 1, 1000);
    lit(&c, ',');
    str(&c, p->arm, sizeof p->arm);
    lit(&c, ',');
    p->row.rows = (int)integer(&c, 1, 1 << 30);
    lit(&c, ',');
    p->row.cols = (int)integer(&c, 1, 1 << 30);
    lit(&c, ',');
    lit(&c, '{');
    for (int k = 0; k < LR_TUNE_KNOBS; k++) {
        if (k) lit(&c, ',');
        p->row.knobs[k] = (int)integer(&c, -16777216, 16777216);
    }
    lit(&c, '}');
    lit(&c, ',');
    p->row.us = number(&c, 0, 1e12);
    lit(&c, '}');
    lit(&c, ',');
    ws(&c);
    return c.ok && (*c.p == 0 || *c.p == '\n' || (c.p[0] == '\r' && c.p[1] == '\n'));
}

int lr_tuning_table_parse(const char *text, size_t len, const char *path, lr_tuning_pick *rows, int max, int *n)
{
    *n = 0;
    if (memchr(text, 0, len)) return LR_FAIL(LR_EFORMAT, "%s: not a tuning table (a NUL byte)", path);
    const char *p = text, *end = text + len;
    int line = 0, state = 0; /* 0 before the array, 1 in it, 2 after it, 3 counted */
    long count = -1;
    char buf[512];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        line++;
        if (ll >= sizeof buf) return LR_FAIL(LR_EFORMAT, "%s:%d: line too long for a tuning table", path, line);
        memcpy(buf, p, ll), buf[ll] = 0;
        if (ll && buf[ll - 1] == '\r') buf[--ll] = 0;
        p = nl ? nl + 1 : end;
        const char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        if (state == 0) {
            if (!strcmp(s, open_line)) state = 1;
            continue; /* the comment and #include above the array */
        }
        if (state == 1) {
            if (!strcmp(s, "};")) { state = 2; continue; }
            /* the placeholder an empty table holds (C has no empty arrays), exactly as written */
            if (!strcmp(s, "{ 0, 0, 0, 0, 0, { 0 }, 0 },")) continue;
            if (*n >= max) return LR_FAIL(LR_ERANGE, "%s:%d: more than %d rows", path, line, max);
            lr_tuning_pick *r = &rows[*n];
            if (!row_line(s, r))
                return LR_FAIL(LR_EFORMAT, "%s:%d: not a row { \"DEVICE\", CC, \"ARM\", ROWS, COLS, { 10 knobs }, US },", path, line);
            r->row.device = r->device, r->row.arm = r->arm;
            (*n)++;
            continue;
        }
        if (!*s) continue;
        if (state == 2 && !strncmp(s, count_line, sizeof count_line - 1)) {
            cur c = { s + sizeof count_line - 1, 1 };
            count = integer(&c, 0, 1 << 30);
            lit(&c, ';');
            ws(&c);
            if (!c.ok || *c.p) return LR_FAIL(LR_EFORMAT, "%s:%d: malformed row count", path, line);
            state = 3;
            continue;
        }
        return LR_FAIL(LR_EFORMAT, "%s:%d: unexpected text after the table", path, line);
    }
    if (state < 1) return LR_FAIL(LR_EFORMAT, "%s: not a tuning table (no \"%s\" line)", path, open_line);
    if (state < 2) return LR_FAIL(LR_EFORMAT, "%s: the table is not closed (no \"};\" line)", path);
    if (state < 3) return LR_FAIL(LR_EFORMAT, "%s: no row count line", path);
    if (count != *n) return LR_FAIL(LR_EFORMAT, "%s: the count line says %ld rows, the table holds %d", path, count, *n);
    return LR_OK;
}
