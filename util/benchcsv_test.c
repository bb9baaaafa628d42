/* The commit column: $LEECHRT_COMMIT when set, else git's HEAD, marked
 * "-dirty" when tracked files differ from it (a stale .git must not make
 * rows pass for a commit they were not measured on). */
#include "test/t.h"
#include "util/benchcsv.h"

#include <stdlib.h>
#include <string.h>
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

T_MAIN(T_CASE(test_commit_from_env), T_CASE(test_commit_from_git))
