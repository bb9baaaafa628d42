/* What the README shows must equal what bench/results/ generates: the
 * tables (tools/readme_tables) and the plots (tools/plots, bench/plots/);
 * an edited README or CSV is detected. Run from the repository root. */
#include "test/t.h"

#include <stdlib.h>
#include <unistd.h>

static char g_tables[1024], g_plots[1024];

/* A check: the program, a file that must exist (else not the repository
 * root), a shell command with %s for the program that must exit 0. */
typedef struct { const char *bin, *need, *cmd, *what; } check;

static int run_check(const check *c)
{
    T_SKIP_IF(access(c->bin, X_OK) != 0, "program not built");
    T_SKIP_IF(access(c->need, R_OK) != 0, "not run from the repository root");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, c->cmd, c->bin);
    T_ASSERT(system(cmd) == 0, "%s", c->what);
    return T_PASS;
}

static int test_readme_matches_results(void)
{
    const check c = { g_tables, "README.md", "%s --check README.md bench/results",
                      "README tables drifted from bench/results (see message above)" };
    return run_check(&c);
}

static int test_tables_check_detects_drift(void)
{
    const check c = { g_tables, "README.md",
                      "d=$(mktemp -d) && cp README.md $d/R.md && sed -i 's/| 14B | f16 | 7 |/| 14B | f16 | 8 |/' $d/R.md && "
                      "! %s --check $d/R.md bench/results 2>/dev/null; r=$?; rm -rf $d; exit $r",
                      "an edited table was not detected" };
    return run_check(&c);
}

/* unescaped '|' in a markdown table line (a cell's text such as "gate|up" must
 * come as "gate\|up", or it splits the cell and shifts the columns after it) */
static int table_bars(const char *line)
{
    int n = 0;
    for (const char *p = line; *p && *p != '\n'; p++)
        if (*p == '|' && (p == line || p[-1] != '\\')) n++;
    return n;
}

/* Every README table's rows have as many cells as its header: a generated
 * cell with a bar in it would shift every column after it. */
static int test_readme_tables_rows_whole(void)
{
    FILE *f = fopen("README.md", "r");
    T_SKIP_IF(!f, "not run from the repository root");
    char line[8192];
    int header = 0, lineno = 0, bad = 0, tables = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] != '|') { header = 0; continue; }
        const int n = table_bars(line);
        if (!header) { header = n, tables++; continue; }
        if (n != header && !bad) bad = lineno;
    }
    fclose(f);
    T_ASSERT(tables > 10, "only %d tables found in README.md", tables);
    T_ASSERT(!bad, "README.md line %d: a table row whose cell count differs from its header's", bad);
    return T_PASS;
}

/* A phase row of 1e300 µs (a hostile or broken CSV): the phase tables' cells
 * once ran past their 1,024-byte row buffer (a crash); now the row ends with
 * " ... |" and the program exits 0. */
static int test_huge_phase_values(void)
{
    const check c = {
        g_tables, "bench/results/h200_engine.csv",
        "d=$(mktemp -d) && h=$(head -1 bench/results/h200_engine.csv) && echo \"$h\" > $d/h200_engine.csv && "
        "for m in step graph embed norm rotation norm_rotation gemv_qkv rope_kv attention rope_attention gemv_o "
        "gemv_gateup silu_mul gemv_down head argmax without_embed without_rotation without_gemv_qkv; do "
        "echo \"2026-12-07,zz1,GPU X (sm_90),engine_leech,m,$m,,,,1e300,,,,,,\" >> $d/h200_engine.csv; done && "
        "%s $d > $d/out.md && grep -q ' \\.\\.\\. |' $d/out.md; r=$?; rm -rf $d; exit $r",
        "readme_tables on 1e300 phase values did not end the row with ' ... |' (or crashed)" };
    return run_check(&c);
}

/* The H100 decode table names whose tuning rows a run got from bench_engine's
 * tuning_rows column where a row has one (older rows: from the variant). */
static int test_h100_table_tuning_rows_column(void)
{
    const check c = {
        g_tables, "bench/results/h100_engine_variants.csv",
        "d=$(mktemp -d) && cp bench/results/*.csv $d/ && "
        "echo '2026-12-07,zz99999,GPU X (sm_90),engine_leech,qwen3-14B-synthetic-rotated,step,,,,3000.0,2000.0,60.00,,333.33,"
        "\"LEECHRT_A=1\",GPU X (1 row) + GPU Y'\\''s elsewhere' >> $d/h100_engine_variants.csv && "
        "%s $d > $d/out.md && grep 'zz99999' $d/out.md | grep -q \"| GPU X (1 row) + GPU Y's elsewhere | LEECHRT_A=1 | 333.33 |\"; "
        "r=$?; rm -rf $d; exit $r",
        "a row's tuning_rows column did not reach the H100 decode table" };
    return run_check(&c);
}

/* The in-flight table gives the CTAs the stream control launches, not those
 * asked: a small matrix (the 14B o at 16 loads of 512 threads: 15.5 MB, 472
 * CTAs of 32 KB in flight fit, not 528) gets fewer; an unknown card has "?". */
static int test_inflight_ctas_launched(void)
{
    const check c = {
        g_tables, "bench/results/h200_stream_inflight.csv",
        "d=$(mktemp -d) && h=$(head -1 bench/results/h200_stream_inflight.csv) && f=$d/h200_stream_inflight.csv && "
        "echo \"$h\" > $f && "
        "echo '2026-12-07,zz99999,NVIDIA H200 (sm_90),stream_p14s,14B,o,5120,5120,4.667,5.21,,,0,512,1,4,4,1,0,0,0,0,0' >> $f && "
        "echo '2026-12-07,zz99999,NVIDIA H200 (sm_90),stream_p14s,14B,o,5120,5120,4.667,6.00,,,0,512,1,2,2,1,0,0,0,0,0' >> $f && "
        "echo '2026-12-07,zz99999,GPU X (sm_90),stream_p14s,14B,o,5120,5120,4.667,7.00,,,0,512,1,2,2,1,0,0,0,0,0' >> $f && "
        "%s $d > $d/out.md && grep -q '| stream_p14s | o | 512 | 4 | 4 | 3.58 | 114 | 5.21 |' $d/out.md && "
        "grep -q '| stream_p14s | o | 512 | 2 | 2 | 2.00 | 32 | 6.00 |' $d/out.md && "
        "grep -q '| stream_p14s | o | 512 | 2 | 2 | ? | ? | 7.00 |' $d/out.md; r=$?; rm -rf $d; exit $r",
        "the in-flight table's CTAs launched" };
    return run_check(&c);
}

static int test_plots_match_results(void)
{
    const check c = { g_plots, "bench/plots", "%s --check bench/plots bench/results",
                      "bench/plots drifted from bench/results (see message above)" };
    return run_check(&c);
}

static int test_plots_check_detects_drift(void)
{
    /* the 14B default layout's tok/s changed in a copy of the results */
    const check c = { g_plots, "bench/results/h200_engine.csv",
                      "d=$(mktemp -d) && cp -r bench/results $d/r && "
                      "sed -i '/engine_leech,qwen3-14B-synthetic,step,/s/,[0-9.]*$/,999.00/' $d/r/h200_engine.csv && "
                      "! %s --check bench/plots $d/r 2>/dev/null; r=$?; rm -rf $d; exit $r",
                      "an edited CSV was not detected" };
    return run_check(&c);
}

/* A tok/s of inf in a copy of the results: plots refuses it, naming the chart,
 * instead of never finishing its axis (the tick loop ran to infinity). */
static int test_plots_refuse_infinite(void)
{
    const check c = { g_plots, "bench/results/h200_engine.csv",
                      "d=$(mktemp -d) && cp -r bench/results $d/r && "
                      "sed -i '/engine_leech,qwen3-14B-synthetic,step,/s/,[0-9.]*$/,inf/' $d/r/h200_engine.csv && "
                      "timeout 60 %s --out $d/p $d/r 2>$d/err; r=$?; grep -q 'non-finite or absurd' $d/err && "
                      "[ $r = 1 ]; r=$?; rm -rf $d; exit $r",
                      "plots on an infinite tok/s did not fail with a message (or did not finish)" };
    return run_check(&c);
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
                                    T_CASE(test_readme_tables_rows_whole), T_CASE(test_h100_table_tuning_rows_column),
                                    T_CASE(test_huge_phase_values),
                                    T_CASE(test_inflight_ctas_launched), T_CASE(test_plots_match_results), T_CASE(test_plots_check_detects_drift),
                                    T_CASE(test_plots_refuse_infinite) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
