/* What the README shows must equal what bench/results/ generates: the
 * tables (tools/readme_tables) and the plots (tools/plots, bench/plots/);
 * an edited README or CSV is detected. Run from the repository root. */
#include "test/t.h"

#include <stdlib.h>
#include <unistd.h>

static char g_tables[1024], g_plots[1024];

/* `check` (a command line with %s for the program) exits 0 */
static int runs_clean(const char *bin, const char *check)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, check, bin);
    return system(cmd) == 0;
}

static int test_readme_matches_results(void)
{
    T_SKIP_IF(access(g_tables, X_OK) != 0, "readme_tables not built");
    T_SKIP_IF(access("README.md", R_OK) != 0, "not run from the repository root");
    T_ASSERT(runs_clean(g_tables, "%s --check README.md bench/results"),
             "README tables drifted from bench/results (see message above)");
    return T_PASS;
}

static int test_tables_check_detects_drift(void)
{
    T_SKIP_IF(access(g_tables, X_OK) != 0, "readme_tables not built");
    T_SKIP_IF(access("README.md", R_OK) != 0, "not run from the repository root");
    T_ASSERT(runs_clean(g_tables, "d=$(mktemp -d) && cp README.md $d/R.md && sed -i 's/| 14B | f16 | 7 |/| 14B | f16 | 8 |/' "
                                  "$d/R.md && ! %s --check $d/R.md bench/results 2>/dev/null; r=$?; rm -rf $d; exit $r"),
             "an edited table was not detected");
    return T_PASS;
}

static int test_plots_match_results(void)
{
    T_SKIP_IF(access(g_plots, X_OK) != 0, "plots not built");
    T_SKIP_IF(access("bench/plots", R_OK) != 0, "not run from the repository root");
    T_ASSERT(runs_clean(g_plots, "%s --check bench/plots bench/results"),
             "bench/plots drifted from bench/results (see message above)");
    return T_PASS;
}

static int test_plots_check_detects_drift(void)
{
    T_SKIP_IF(access(g_plots, X_OK) != 0, "plots not built");
    T_SKIP_IF(access("bench/results/h200_engine.csv", R_OK) != 0, "not run from the repository root");
    /* the 14B Planes14S tok/s changed in a copy of the results */
    T_ASSERT(runs_clean(g_plots, "d=$(mktemp -d) && cp -r bench/results $d/r && "
                                 "sed -i '/engine_leech_p14s,14B,step,/s/,[0-9.]*$/,999.00/' $d/r/h200_engine.csv && "
                                 "! %s --check bench/plots $d/r 2>/dev/null; r=$?; rm -rf $d; exit $r"),
             "an edited CSV was not detected");
    return T_PASS;
}

int main(int argc, char **argv)
{
    /* the programs sit in ../bin beside this test's folder */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", argv[0]);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    snprintf(g_tables, sizeof g_tables, "%s/../bin/readme_tables", dir);
    snprintf(g_plots, sizeof g_plots, "%s/../bin/plots", dir);
    static const t_case cases[] = { T_CASE(test_readme_matches_results), T_CASE(test_tables_check_detects_drift),
                                    T_CASE(test_plots_match_results), T_CASE(test_plots_check_detects_drift) };
    return t_main(__FILE__, cases, 4, argc, argv);
}
