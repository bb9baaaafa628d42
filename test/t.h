/* A tiny test harness. Each test is `static int test_name(void)` returning
 * T_PASS, T_FAIL or T_SKIP; T_MAIN runs them and prints one line per test and
 * a last line `t-summary: P F S` that test/run.sh adds up. */
#ifndef LR_T_H
#define LR_T_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { T_PASS = 0, T_FAIL = 1, T_SKIP = 2 };

#define T_ASSERT(cond, ...)                                                   \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "    %s:%d: assertion `%s` failed: ", __FILE__,   \
                    __LINE__, #cond);                                         \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
            return T_FAIL;                                                    \
        }                                                                     \
    } while (0)

/* Asserts a library call returned LR_OK, printing its message otherwise. */
#define T_OK(call)                                                            \
    do {                                                                      \
        int t_rc_ = (call);                                                   \
        if (t_rc_ != 0) {                                                     \
            fprintf(stderr, "    %s:%d: `%s` returned %d: %s\n", __FILE__,     \
                    __LINE__, #call, t_rc_, lr_errmsg());                     \
            return T_FAIL;                                                    \
        }                                                                     \
    } while (0)

#define T_SKIP_IF(cond, why)                                                  \
    do {                                                                      \
        if (cond) {                                                           \
            fprintf(stderr, "    skip: %s\n", why);                           \
            return T_SKIP;                                                    \
        }                                                                     \
    } while (0)

typedef struct { const char *name; int (*fn)(void); } t_case;

/* The build's program folder for tests that run the tools: $LEECHRT_BIN, or
 * BUILD/bin beside this test's BUILD/test/. 0 when neither is known. */
static inline int t_bin_dir(char *out, size_t n)
{
    const char *env = getenv("LEECHRT_BIN");
    if (env && *env) return snprintf(out, n, "%s", env), 1;
    char self[4096];
    const ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) return 0;
    self[k] = 0;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(self, '/');
        if (!slash) return 0;
        *slash = 0;
    }
    return snprintf(out, n, "%s/bin", self), 1;
}

static inline int t_main(const char *file, const t_case *cases, int n, int argc, char **argv)
{
    int p = 0, f = 0, s = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a case's lines and its stderr message stay in order in a log */
    for (int i = 0; i < n; i++) {
        if (argc > 1 && !strstr(cases[i].name, argv[1])) continue;
        fflush(stdout);
        int r = cases[i].fn();
        const char *tag = r == T_PASS ? "ok  " : r == T_SKIP ? "skip" : "FAIL";
        printf("%s %s: %s\n", tag, file, cases[i].name);
        fflush(stdout);
        if (r == T_PASS) p++; else if (r == T_SKIP) s++; else f++;
    }
    printf("t-summary: %d %d %d\n", p, f, s);
    return f ? 1 : 0;
}

#define T_CASE(fn) { #fn, fn }
#define T_MAIN(...)                                                           \
    int main(int argc, char **argv)                                           \
    {                                                                         \
        static const t_case cases[] = { __VA_ARGS__ };                        \
        return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), \
                      argc, argv);                                            \
    }

#endif
