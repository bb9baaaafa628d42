/* The README's result tables must equal what bench/results/ generates. */
#include "test/t.h"

#include <stdlib.h>
#include <unistd.h>

static char g_bin[1024];

static int test_readme_matches_results(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "readme_tables not built");
    T_SKIP_IF(access("README.md", R_OK) != 0, "not run from the repository root");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --check README.md bench/results", g_bin);
    T_ASSERT(system(cmd) == 0, "README tables drifted from bench/results (see message above)");
    return T_PASS;
}

static int test_check_detects_drift(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "readme_tables not built");
    T_SKIP_IF(access("README.md", R_OK) != 0, "not run from the repository root");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && cp README.md $d/R.md && sed -i 's/| 14B | f16 | 7 |/| 14B | f16 | 8 |/' $d/R.md && "
             "! %s --check $d/R.md bench/results 2>/dev/null; r=$?; rm -rf $d; exit $r", g_bin);
    T_ASSERT(system(cmd) == 0, "an edited table was not detected");
    return T_PASS;
}

int main(int argc, char **argv)
{
    snprintf(g_bin, sizeof g_bin, "%s", argv[0]);
    char *slash = strrchr(g_bin, '/');
    if (slash) snprintf(slash, sizeof g_bin - (size_t)(slash - g_bin), "/../bin/readme_tables");
    static const t_case cases[] = { T_CASE(test_readme_matches_results), T_CASE(test_check_detects_drift) };
    return t_main(__FILE__, cases, 2, argc, argv);
}
