/* The commit column: $LEECHRT_COMMIT when set, else git's HEAD, marked
 * "-dirty" when tracked files differ from it (a stale .git must not make
 * rows pass for a commit they were not measured on). */
#include "test/t.h"
#include "util/benchcsv.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int sh(const char *cmd) { return system(cmd); }

static int test_commit_from_env(void)
{
    lr_csv c;
    setenv("LEECHRT_COMMIT", "abc1234", 1);
    T_ASSERT(!lr_csv_open(&c, NULL, NULL, "dev,ice"), "open");
    unsetenv("LEECHRT_COMMIT");
    T_ASSERT(!strcmp(c.commit, "abc1234"), "commit '%s'", c.commit);
    T_ASSERT(!strcmp(c.device, "dev;ice"), "device '%s': commas would break the columns", c.device);
    return T_PASS;
}

static int test_commit_from_git(void)
{
    char dir[] = "/tmp/lr_benchcsv_XXXXXX", cwd[4096], cmd[4200];
    T_ASSERT(mkdtemp(dir) && getcwd(cwd, sizeof cwd), "temp dir");
    snprintf(cmd, sizeof cmd,
             "cd %s && git init -q . && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m x 2>/dev/null && "
             "echo a > f && git add f && git -c user.email=t@t -c user.name=t commit -q -m f",
             dir);
    if (sh(cmd)) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        sh(cmd);
        T_SKIP_IF(1, "no git");
    }
    unsetenv("LEECHRT_COMMIT");
    T_ASSERT(!chdir(dir), "chdir");
    lr_csv clean, dirty;
    int rc = lr_csv_open(&clean, NULL, NULL, "d");
    sh("echo b > f");
    rc |= lr_csv_open(&dirty, NULL, NULL, "d");
    FILE *p = popen("git rev-parse --short=7 HEAD", "r");
    char head[64] = "";
    if (p) {
        if (!fgets(head, sizeof head, p)) head[0] = 0;
        pclose(p);
    }
    head[strcspn(head, "\n")] = 0;
    T_ASSERT(!chdir(cwd), "chdir back");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
    T_ASSERT(!rc, "open");
    char want[80];
    snprintf(want, sizeof want, "%s-dirty", head);
    T_ASSERT(head[0] && !strcmp(clean.commit, head), "clean tree: '%s', HEAD '%s'", clean.commit, head);
    T_ASSERT(!strcmp(dirty.commit, want), "modified tree: '%s', want '%s'", dirty.commit, want);
    return T_PASS;
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) ? -1 : (long)st.st_size;
}

/* Appending: the file's header must be the program's, or the program's plus
 * more columns; anything else is refused, naming the file, with nothing written. */
static int test_append_header(void)
{
    char dir[] = "/tmp/lr_benchcsv_XXXXXX", p[64], q[64], cmd[128];
    T_ASSERT(mkdtemp(dir), "temp dir");
    snprintf(p, sizeof p, "%s/a.csv", dir);
    snprintf(q, sizeof q, "%s/b.csv", dir);
    lr_csv c;
    setenv("LEECHRT_COMMIT", "abc1234", 1);
    int rc = lr_csv_open(&c, p, LR_CSV_HEADER ",tok_s", "d");
    lr_csv_row(&c, "a,m,step,,,,1.0,,,,2.0");
    lr_csv_close(&c);
    const long n0 = file_size(p);
    int same = lr_csv_open(&c, p, LR_CSV_HEADER ",tok_s", "d"); /* the same header: appends */
    lr_csv_row(&c, "a,m,step,,,,1.0,,,,3.0");
    lr_csv_close(&c);
    const long n1 = file_size(p);
    int wider = lr_csv_open(&c, p, LR_CSV_HEADER ",tok_s,variant", "d"); /* one column more: refused */
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", lr_errmsg());
    if (!wider) lr_csv_close(&c);
    int cut = lr_csv_open(&c, p, LR_CSV_HEADER ",tok", "d"); /* a prefix of a name, not a column: refused */
    if (!cut) lr_csv_close(&c);
    const long n2 = file_size(p);
    /* a file with more columns takes rows with fewer (they end early) */
    FILE *f = fopen(q, "w");
    if (f) fprintf(f, "%s,tok_s,variant\r\n", LR_CSV_HEADER), fclose(f);
    int narrow = lr_csv_open(&c, q, LR_CSV_HEADER ",tok_s", "d");
    if (!narrow) lr_csv_close(&c);
    int plain = lr_csv_open(&c, q, NULL, "d");
    if (!plain) lr_csv_close(&c);
    unsetenv("LEECHRT_COMMIT");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
    T_ASSERT(!rc && !same && n1 > n0, "the same header appends (%d %d, %ld -> %ld bytes)", rc, same, n0, n1);
    T_ASSERT(wider == LR_EFORMAT && strstr(msg, p) && strstr(msg, "header"), "a header with a column more: %d '%s'",
             wider, msg);
    T_ASSERT(cut == LR_EFORMAT, "a header cut inside a column name: %d", cut);
    T_ASSERT(n2 == n1, "a refused open wrote nothing (%ld -> %ld bytes)", n1, n2);
    T_ASSERT(!narrow && !plain, "a file with more columns takes fewer: %d %d", narrow, plain);
    return T_PASS;
}

/* A file that ends without a line end (a row cut short) gets the next row on
 * a line of its own; a commit with a comma cannot shift the columns; a write
 * that fails is reported by the close, naming the file. */
static int test_append_safety(void)
{
    char dir[] = "/tmp/lr_benchcsv_XXXXXX", p[64], cmd[128];
    T_ASSERT(mkdtemp(dir), "temp dir");
    snprintf(p, sizeof p, "%s/a.csv", dir);
    FILE *f = fopen(p, "w");
    T_ASSERT(f && fprintf(f, "%s\n2026-01-01,x,d,cut short", LR_CSV_HEADER) > 0 && fclose(f) == 0, "write %s", p);
    setenv("LEECHRT_COMMIT", "abc,def", 1);
    lr_csv c;
    T_OK(lr_csv_open(&c, p, NULL, "d"));
    lr_csv_row(&c, "a,m,x,1,2,3,4,5,6,7,8");
    T_OK(lr_csv_close(&c));
    unsetenv("LEECHRT_COMMIT");
    char line[3][512];
    f = fopen(p, "r");
    int n = 0;
    while (f && n < 3 && fgets(line[n], sizeof line[n], f)) n++;
    if (f) fclose(f);
    T_ASSERT(n == 3 && !strcmp(line[1], "2026-01-01,x,d,cut short\n") && !strncmp(line[2] + 11, "abc;def,d,a,m,x", 15),
             "%d lines; the cut row '%s', the new one '%s'", n, n > 1 ? line[1] : "", n > 2 ? line[2] : "");
    int fail = 0;
    if (access("/dev/full", W_OK) == 0) {
        T_OK(lr_csv_open(&c, "/dev/full", NULL, "d"));
        for (int i = 0; i < 1000; i++) lr_csv_row(&c, "a,m,x,1,2,3,4,5,6,7,8");
        fail = lr_csv_close(&c);
        T_ASSERT(fail == LR_EIO && strstr(lr_errmsg(), "/dev/full"), "a full device: %d %s", fail, lr_errmsg());
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
    return T_PASS;
}

T_MAIN(T_CASE(test_commit_from_env), T_CASE(test_commit_from_git), T_CASE(test_append_header),
       T_CASE(test_append_safety))
