/* `tools/gpu/h200.sh gputest` runs a fixed list of test programs on the GPU
 * machine, and CI has no GPU: a test that needs the device but is left off
 * that list is never run anywhere (gemv_leech_p14s_rot_test was, until the
 * forty-first session). Every *_test.c that initializes the device must be
 * on the list, and every name on it must be a test that exists. Run from the
 * repository root (skipped elsewhere). Also: h200.sh engine refuses a residual
 * form it does not know, `require` tells the card apart, and l2w refuses an
 * unknown model, each before anything is built. */
#include "test/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_list[8192];

/* The words of h200.sh's `tests="..."` (the gputest list), space-separated. */
static int read_list(void)
{
    FILE *f = fopen("tools/gpu/h200.sh", "r");
    if (!f) return 0;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *a = strstr(text, "tests=\"");
    if (!a) return 0;
    a += 7;
    const char *b = strchr(a, '"');
    if (!b || (size_t)(b - a) >= sizeof g_list - 2) return 0;
    snprintf(g_list, sizeof g_list, " %.*s ", (int)(b - a), a);
    for (char *p = g_list; *p; p++)
        if (*p == '\n' || *p == '\t') *p = ' ';
    return 1;
}

static int listed(const char *name)
{
    char w[256];
    snprintf(w, sizeof w, " %s ", name);
    return strstr(g_list, w) != NULL;
}

static int test_every_gpu_test_is_listed(void)
{
    T_SKIP_IF(access("tools/gpu/h200.sh", R_OK) != 0, "not run from the repository root");
    T_ASSERT(read_list(), "no tests=\"...\" list in tools/gpu/h200.sh");
    FILE *p = popen("grep -rlE 'lr_cu_init|lr_cu_available|NEED_GPU' --include='*_test.c' util rt jit kernels layouts loader "
                    "tools test | sort",
                    "r");
    T_ASSERT(p, "grep");
    char line[1024];
    int n = 0, missing = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (strstr(line, "gputest_list_test")) continue;
        const char *base = strrchr(line, '/');
        base = base ? base + 1 : line;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(base) - 2), base); /* without .c */
        n++;
        if (!listed(name)) missing++, fprintf(stderr, "    %s needs the GPU but is not in h200.sh's gputest list\n", line);
    }
    pclose(p);
    T_ASSERT(n >= 10, "only %d GPU tests found: is grep there?", n);
    T_ASSERT(!missing, "%d GPU tests never run", missing);
    /* and the list names only tests that exist */
    char copy[sizeof g_list];
    snprintf(copy, sizeof copy, "%s", g_list);
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "find util rt jit kernels layouts loader tools test -name '%s.c' | grep -q .", tok);
        T_ASSERT(system(cmd) == 0, "h200.sh lists %s, which is not a test here", tok);
    }
    printf("    %d GPU tests, all in the gputest list\n", n);
    return T_PASS;
}

/* Runs `h200.sh ARGS` with PATH = FAKEDIR first (FAKEDIR/nvidia-smi, when
 * present, prints GPU), OUT and BUILD in a temp folder; the exit status, and
 * the output in msg. */
static int h200(const char *args, const char *gpu, char *msg, size_t cap)
{
    char dir[] = "/tmp/lr_h200_XXXXXX", cmd[1024];
    if (!mkdtemp(dir)) return -1;
    if (gpu) {
        snprintf(cmd, sizeof cmd, "%s/nvidia-smi", dir);
        FILE *f = fopen(cmd, "w");
        if (!f) return -1;
        /* the real one's answer to --query-gpu=name --format=csv,noheader */
        fprintf(f, "#!/bin/sh\necho '%s'\n", gpu);
        fclose(f);
        if (chmod(cmd, 0755)) return -1;
    }
    snprintf(cmd, sizeof cmd, "PATH=%s:$PATH OUT=%s/out BUILD=%s/b bash tools/gpu/h200.sh %s 2>&1", dir, dir, dir, args);
    msg[0] = 0;
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    size_t n = fread(msg, 1, cap - 1, f);
    msg[n] = 0;
    const int st = pclose(f);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) { /* (a leftover temp folder is not this test's failure) */ }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `h200.sh engine MODELS LAYOUTS RESIDUALS` refuses a residual form it does
 * not know, by name, before it builds or times anything (exit 2). */
static int test_engine_refuses_unknown_residual(void)
{
    T_SKIP_IF(access("tools/gpu/h200.sh", R_OK) != 0, "not run from the repository root");
    char msg[256];
    const int st = h200("engine 14B default plain,bogus", NULL, msg, sizeof msg);
    T_ASSERT(st == 2, "exit status %d, output: %s", st, msg);
    T_ASSERT(strstr(msg, "residual bogus"), "no message naming the residual: %s", msg);
    return T_PASS;
}

/* `h200.sh require NAME`: 0 on a card whose name contains NAME, 3 on another
 * card or none, naming what it found. */
static int test_require_tells_the_card(void)
{
    T_SKIP_IF(access("tools/gpu/h200.sh", R_OK) != 0, "not run from the repository root");
    char msg[512];
    int rc = h200("require H200", "NVIDIA H200", msg, sizeof msg);
    T_ASSERT(rc == 0, "on an H200: exit %d, output: %s", rc, msg);
    rc = h200("require H200", "NVIDIA H100 80GB HBM3", msg, sizeof msg);
    T_ASSERT(rc == 3, "on an H100: exit %d, output: %s", rc, msg);
    T_ASSERT(strstr(msg, "NVIDIA H100 80GB HBM3") && strstr(msg, "not H200"), "the H100 not named: %s", msg);
    /* no nvidia-smi of ours; the test machine's own, if it has one, is asked for a name no card has */
    rc = h200("require 'no such card'", NULL, msg, sizeof msg);
    T_ASSERT(rc == 3, "no such card: exit %d, output: %s", rc, msg);
    T_ASSERT(strstr(msg, "nothing run"), "no message: %s", msg);
    rc = h200("require", "NVIDIA H200", msg, sizeof msg);
    T_ASSERT(rc != 0, "require without a name passed: %s", msg);
    return T_PASS;
}

/* `h200.sh l2w MODELS` and `h200.sh head MODELS` refuse a model the
 * synthetic ones lack before they build or time anything, naming the
 * subcommand and the model. */
static int test_models_refused_by_name(void)
{
    T_SKIP_IF(access("tools/gpu/h200.sh", R_OK) != 0, "not run from the repository root");
    static const char *const sub[] = { "l2w", "head" };
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        char cmd[64], who[64], msg[512];
        snprintf(cmd, sizeof cmd, "%s 14B,15B", sub[i]);
        snprintf(who, sizeof who, "%s: models are among", sub[i]);
        const int rc = h200(cmd, "NVIDIA H200", msg, sizeof msg);
        T_ASSERT(rc == 2, "%s: exit %d, output: %s", cmd, rc, msg);
        T_ASSERT(strstr(msg, who) && strstr(msg, "not 15B"), "%s: no message naming the subcommand and model: %s", cmd,
                 msg);
    }
    return T_PASS;
}

T_MAIN(T_CASE(test_every_gpu_test_is_listed), T_CASE(test_engine_refuses_unknown_residual),
       T_CASE(test_require_tells_the_card), T_CASE(test_models_refused_by_name))
