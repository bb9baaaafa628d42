/* test/run.sh over a folder of stand-in test programs: the summary line adds
 * their counts, and every program that failed is named on a FAILED: line,
 * whether it reported failed cases, exited non-zero after reporting none, or
 * crashed before its summary. (A program with failed cases was once counted
 * but left off the FAILED: lines: `A || B && C` in shell is `(A || B) && C`.)
 * Run from the repository root (skipped elsewhere). */
#include "test/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* dir/test/name: a shell script that prints body and exits with rc */
static int stand_in(const char *dir, const char *name, const char *body, int rc)
{
    char path[256];
    snprintf(path, sizeof path, "%s/test/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "#!/bin/sh\n%sexit %d\n", body, rc);
    if (fclose(f)) return -1;
    return chmod(path, 0755);
}

/* `ENV bash test/run.sh dir` with its output in out; the folder is removed
 * after. Returns the wait status (-1 when it could not run). */
static int run_in(const char *dir, const char *env, char *out, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s bash test/run.sh %s 2>&1", env, dir);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, cap - 1, p) : 0;
    out[n] = 0;
    const int st = p ? pclose(p) : -1;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) { /* (a leftover temp folder is not this test's failure) */ }
    return st;
}

static int test_failures_named(void)
{
    T_SKIP_IF(access("test/run.sh", R_OK) != 0, "not run from the repository root");
    char dir[] = "/tmp/lr_run_sh_XXXXXX", sub[300];
    T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(sub, sizeof sub, "%s/test", dir);
    T_ASSERT(mkdir(sub, 0755) == 0, "mkdir %s", sub);
    T_ASSERT(!stand_in(dir, "a_passes", "echo 't-summary: 3 0 1'\n", 0) &&
                 !stand_in(dir, "b_has_failed_cases", "echo 'FAIL x: y'\necho 't-summary: 2 1 0'\n", 1) &&
                 !stand_in(dir, "c_exits_nonzero", "echo 't-summary: 4 0 0'\n", 3) &&
                 !stand_in(dir, "d_crashes", "echo 'half a line'\n", 139),
             "stand-in programs");
    static char out[16384];
    const int st = run_in(dir, "LEECHRT_FUZZ_SECONDS=0", out, sizeof out);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "run.sh exit status %d (want 1), output:\n%s", st, out);
    /* passed 3 + 2 + 4; failed: b's case, c's exit (counted as one), d's crash */
    T_ASSERT(strstr(out, "\n9 passed, 3 failed, 1 skipped\n"), "summary line, output:\n%s", out);
    T_ASSERT(strstr(out, "FAILED: b_has_failed_cases\n"), "b not named, output:\n%s", out);
    T_ASSERT(strstr(out, "FAILED: c_exits_nonzero\n"), "c not named, output:\n%s", out);
    T_ASSERT(strstr(out, "FAILED: d_crashes (crashed: exit 139)\n"), "d not named, output:\n%s", out);
    T_ASSERT(!strstr(out, "FAILED: a_passes"), "a named, output:\n%s", out);
    return T_PASS;
}

/* The bounded fuzz runs go LEECHRT_FUZZ_JOBS at a time and are reported in
 * target order: a passing one with its run count, a failing one named. */
static int test_fuzz_jobs(void)
{
    T_SKIP_IF(access("test/run.sh", R_OK) != 0, "not run from the repository root");
    char dir[] = "/tmp/lr_run_sh_XXXXXX", sub[300], path[300];
    T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(sub, sizeof sub, "%s/fuzz", dir);
    T_ASSERT(mkdir(sub, 0755) == 0, "mkdir %s", sub);
    static const struct { const char *name, *body; } z[] = {
        { "p_fuzz", "sleep 1; echo 'Done 5 runs'; exit 0" },
        { "q_fuzz", "echo '==1== ERROR: libFuzzer: deadly signal'; exit 1" },
        { "r_fuzz", "echo 'Done 7 runs'; exit 0" },
    };
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", sub, z[i].name);
        FILE *f = fopen(path, "w");
        T_ASSERT(f, "%s", path);
        fprintf(f, "#!/bin/sh\n%s\n", z[i].body);
        fclose(f);
        T_ASSERT(chmod(path, 0755) == 0, "chmod");
    }
    static char out[16384];
    const int st = run_in(dir, "LEECHRT_FUZZ_SECONDS=1 LEECHRT_FUZZ_JOBS=2", out, sizeof out);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "run.sh exit status %d (want 1), output:\n%s", st, out);
    const char *a = strstr(out, "ok   p_fuzz: Done 5 runs"), *b = strstr(out, "== q_fuzz"),
               *c = strstr(out, "ok   r_fuzz: Done 7 runs");
    T_ASSERT(a && b && c && a < b && b < c, "not reported in order, output:\n%s", out);
    T_ASSERT(strstr(out, "FAILED: q_fuzz (libFuzzer exit 1)") && strstr(out, "\n2 passed, 1 failed, 0 skipped\n"),
             "summary, output:\n%s", out);
    return T_PASS;
}

T_MAIN(T_CASE(test_failures_named), T_CASE(test_fuzz_jobs))
