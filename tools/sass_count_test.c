/* The SASS counts quoted in the README (bench/results/sass_instr_per_weight.csv,
 * rows that name their spec) must be what the templates compile to now:
 * tools/sass_count --check recompiles each (NVRTC, no GPU) and disassembles
 * it (nvdisasm from PATH, $LEECHRT_NVDISASM or the PyPI wheel fetched by
 * tools/find_nvdisasm.sh; skipped when none can be had). Run from the
 * repository root. */
#include "test/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CSV "bench/results/sass_instr_per_weight.csv"

static char g_bin[1024], g_dir[1024], g_nvdisasm[1200];

/* the disassembler's path into g_nvdisasm, or 0 */
static int find_nvdisasm(void)
{
    if (*g_nvdisasm) return 1;
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "tools/find_nvdisasm.sh '%s/../nvdisasm' 2>/dev/null", g_dir);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    if (!fgets(g_nvdisasm, sizeof g_nvdisasm, p)) g_nvdisasm[0] = 0;
    int st = pclose(p);
    g_nvdisasm[strcspn(g_nvdisasm, "\n")] = 0;
    if (st != 0) g_nvdisasm[0] = 0;
    return *g_nvdisasm != 0;
}

static int test_committed_counts_hold(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "sass_count not built");
    T_SKIP_IF(access(CSV, R_OK) != 0, "not run from the repository root");
    T_SKIP_IF(!find_nvdisasm(), "no nvdisasm (none on PATH, and the PyPI wheel could not be fetched)");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --nvdisasm '%s' --check " CSV, g_bin, g_nvdisasm);
    T_ASSERT(system(cmd) == 0, "the SASS counts in " CSV " drifted from the templates (rows above); "
                               "rerun tools/sass_count on the row's spec and update the row and README");
    return T_PASS;
}

/* an edited count is caught */
static int test_drift_detected(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "sass_count not built");
    T_SKIP_IF(access(CSV, R_OK) != 0, "not run from the repository root");
    T_SKIP_IF(!find_nvdisasm(), "no nvdisasm");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && grep -v ',leech_p14,\\|,leech_i8,\\|,leech_p14s_xw,\\|,leech_p14s_decode,' " CSV
             " | sed '0,/,2.05,75,gemv/s//,2.06,75,gemv/' > $d/s.csv && grep -q ',2.06,75,gemv' $d/s.csv && "
             "'%s' --nvdisasm '%s' --check $d/s.csv > $d/out 2>&1; r=$?; grep -q DRIFT $d/out; g=$?; rm -rf $d; "
             "[ $r = 1 ] && [ $g = 0 ]",
             g_bin, g_nvdisasm);
    T_ASSERT(system(cmd) == 0, "an edited count was not reported as a drift");
    return T_PASS;
}

/* No template's specializations load x (or anything narrow) before their
 * PDL wait, where NVVM once hoisted a load of x above griddepcontrol.wait
 * (5693b47, a stale x in the engine; docs/engine.md). With that commit's
 * template (no lr_after_wait in the early path) this reported one NARROW
 * specialization; the listing reader's own cases are in jit/sass_test.c. */
static int test_no_narrow_load_before_pdl_wait(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "sass_count not built");
    T_SKIP_IF(!find_nvdisasm(), "no nvdisasm (none on PATH, and the PyPI wheel could not be fetched)");
    char cmd[4096];
    /* one run: its verdict, and every line but the ok ones shown */
    snprintf(cmd, sizeof cmd, "out=$('%s' --nvdisasm '%s' --pdl-check 2>&1); r=$?; printf '%%s\\n' \"$out\" | grep -v '^ok'; exit $r",
             g_bin, g_nvdisasm);
    T_ASSERT(system(cmd) == 0, "a specialization loads something narrow before its PDL wait (NARROW lines above): "
                               "read what an earlier kernel wrote through lr_after_wait after the wait");
    return T_PASS;
}

/* garbage specs are refused with a message naming the problem, before any
 * disassembly (no nvdisasm needed) */
static int test_bad_specs(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "sass_count not built");
    static const struct { const char *spec, *says; } c[] = {
        { "gemv_leech_p14s.cu", "TEMPLATE KERNEL" },
        { "no_such.cu gemv rows=8", "no template no_such.cu" },
        { "gemv_leech_p14s.cu gemv_leech_p14s rows", "without '='" },
        { "gemv_leech_p14s.cu gemv_leech_p14s rows=12x", "not a number" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char cmd[4096], out[2048] = "";
        snprintf(cmd, sizeof cmd, "'%s' --nvdisasm /nonexistent '%s' 2>&1", g_bin, c[i].spec);
        FILE *p = popen(cmd, "r");
        T_ASSERT(p, "popen");
        size_t k = fread(out, 1, sizeof out - 1, p);
        out[k] = 0;
        int st = pclose(p);
        T_ASSERT(st != 0 && strstr(out, c[i].says), "spec \"%s\": status %d, said: %s", c[i].spec, st, out);
    }
    /* --pdl-check on a name that is no template: refused by name, nothing checked */
    char cmd[4096], out[2048] = "";
    snprintf(cmd, sizeof cmd, "'%s' --nvdisasm /nonexistent --pdl-check no_such.cu 2>&1", g_bin);
    FILE *p = popen(cmd, "r");
    T_ASSERT(p, "popen");
    size_t k = fread(out, 1, sizeof out - 1, p);
    out[k] = 0;
    int st = pclose(p);
    T_ASSERT(st != 0 && strstr(out, "no template no_such.cu"), "--pdl-check no_such.cu: status %d, said: %s", st, out);
    return T_PASS;
}

/* A kernel with no mma loop (the engine's 17408 rotation) reports its
 * registers and exits 0; the count is the cubin's (EIATTR_REGCOUNT), so it
 * must be a plausible per-thread figure. */
static int test_registers_without_mma_loop(void)
{
    T_SKIP_IF(access(g_bin, X_OK) != 0, "sass_count not built");
    T_SKIP_IF(!find_nvdisasm(), "no nvdisasm");
    char cmd[4096], out[2048] = "";
    snprintf(cmd, sizeof cmd, "'%s' --nvdisasm '%s' 'rotate_slab.cu rotate n=17408 s=128 threads=544 unroll=8' 2>&1",
             g_bin, g_nvdisasm);
    FILE *p = popen(cmd, "r");
    T_ASSERT(p, "popen");
    size_t k = fread(out, 1, sizeof out - 1, p);
    out[k] = 0;
    int st = pclose(p), regs = -1;
    const char *at = strstr(out, "no loop with mma instructions, ");
    if (at) regs = atoi(at + strlen("no loop with mma instructions, "));
    T_ASSERT(st == 0 && regs >= 16 && regs <= 255, "status %d, said: %s", st, out);
    printf("    the 17408 rotation (8 CTAs of 544 threads): %d registers\n", regs);
    return T_PASS;
}

int main(int argc, char **argv)
{
    snprintf(g_dir, sizeof g_dir, "%s", argv[0]);
    char *s = strrchr(g_dir, '/');
    if (s) *s = 0;
    else snprintf(g_dir, sizeof g_dir, ".");
    snprintf(g_bin, sizeof g_bin, "%s/../bin/sass_count", g_dir);
    const t_case cases[] = { T_CASE(test_committed_counts_hold), T_CASE(test_drift_detected), T_CASE(test_bad_specs),
                             T_CASE(test_no_narrow_load_before_pdl_wait), T_CASE(test_registers_without_mma_loop) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
