/* A driver that lacks an entry point this build calls is refused when the
 * driver is opened, naming the entry point, instead of crashing on a null
 * pointer at its first call (cuDriverGetVersion, cuMemcpyDtoD, ... were only
 * resolved, not checked). The driver here is a stub libcuda.so.1, compiled at
 * test time with every entry point but one, found through LD_LIBRARY_PATH by
 * a child run of this program. No GPU needed; skipped without a C compiler. */
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"

#include <sys/wait.h>

#define LR_STR(x) #x
#define LR_XSTR(x) LR_STR(x)

static char g_self[1024];

/* the child: open the driver, print the error, exit 0 only for LR_ENODEV */
static int child(void)
{
    int rc = lr_cu_init(0);
    printf("%s\n", rc ? lr_errmsg() : "opened");
    return rc == LR_ENODEV ? 0 : 1;
}

/* Writes a stub exporting every exported name of LR_CU_FUNCS but `skip` and
 * the optional ones, compiles it to DIR/libcuda.so.1; 0 on success. */
static int build_stub(const char *dir, const char *skip)
{
#define LR_NAME(name) LR_XSTR(name),
    static const char *const names[] = { LR_CU_FUNCS(LR_NAME) };
#undef LR_NAME
    char src[300], cmd[1200];
    snprintf(src, sizeof src, "%s/stub.c", dir);
    FILE *f = fopen(src, "w");
    if (!f) return -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!strcmp(names[i], skip) || !strcmp(names[i], "cuLaunchKernelEx") ||
            !strcmp(names[i], "cuFuncGetParamInfo") || !strncmp(names[i], "cuGetError", 10))
            continue;
        fprintf(f, "int %s(void) { return 999; }\n", names[i]); /* never called: the open refuses first */
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o %s/libcuda.so.1 %s 2>/dev/null", dir, src);
    return system(cmd);
}

static int test_missing_entry_point_named(void)
{
    T_SKIP_IF(system("cc --version >/dev/null 2>&1") != 0, "no C compiler to build the stub driver");
    char dir[] = "/tmp/lrcudrv.XXXXXX";
    T_ASSERT(mkdtemp(dir), "mkdtemp failed");
    const char *skips[] = { LR_XSTR(cuMemcpyDtoD), LR_XSTR(cuDriverGetVersion), LR_XSTR(cuModuleGetGlobal) };
    int ok = 1;
    for (size_t k = 0; k < 3 && ok; k++) {
        char cmd[2400], out[600] = "";
        T_ASSERT(build_stub(dir, skips[k]) == 0, "the stub driver did not compile");
        snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s '%s' --driver-child", dir, g_self);
        FILE *p = popen(cmd, "r");
        T_ASSERT(p, "popen failed");
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = 0;
        int st = pclose(p);
        printf("    without %s: %s", skips[k], out);
        ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, skips[k]) && strstr(out, "lacks the entry point");
        T_ASSERT(ok, "a driver without %s: exit %d, '%s'", skips[k], WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_ASSERT(system(cmd) == 0, "cleanup of %s failed", dir);
    return T_PASS;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--driver-child")) return child();
    snprintf(g_self, sizeof g_self, "%s", argv[0]);
    static const t_case cases[] = { T_CASE(test_missing_entry_point_named) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
