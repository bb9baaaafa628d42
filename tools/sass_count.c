/* sass_count: SASS instructions per weight and registers of a JIT template
 * specialization, compiled here by NVRTC (no GPU) and disassembled by
 * nvdisasm; or a check that the rows of bench/results/sass_instr_per_weight.csv
 * that name their spec still hold for the current templates. */
#include "jit/jit.h"
#include "jit/sass.h"
#include "jit/spec_examples.h"
#include "util/err.h"
#include "util/results_csv.h"
#include "util/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: sass_count [--nvdisasm PATH] [--arch sm_90] SPEC...\n"
               "       sass_count [--nvdisasm PATH] --check CSV\n"
               "       sass_count [--nvdisasm PATH] --pdl-check [TEMPLATE.cu...]\n"
               "  SPEC        \"TEMPLATE KERNEL name=value ...\", e.g. \"gemv_leech_p14s.cu gemv_leech_p14s\n"
               "              rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=6\"\n"
               "              (a template's // @spec syntax after its file name)\n"
               "  --check CSV every row with a spec column: its instr_per_weight (2 decimals) and\n"
               "              registers must be what the spec compiles to now; exit 1 on a drift\n"
               "  --pdl-check every @spec of every template (or of those named): no narrow (f32 or\n"
               "              f64) global load before the PDL wait, where a load of x hoisted\n"
               "              above griddepcontrol.wait would be; exit 1 if one has\n"
               "  --nvdisasm  the disassembler (default: $LEECHRT_NVDISASM, then nvdisasm on PATH)\n"
               "  --arch      target (default sm_90)\n"
               "  --loop      also print the loop's instructions\n"
               "Prints: instructions in the innermost loop with mma instructions, mma count,\n"
               "instructions per weight (per lane, over the weights the mmas take as A), registers,\n"
               "and the loop's local-memory loads and stores (spills).\n");
}

/* a spec's cubin (NVRTC, no GPU) -> its registers and nvdisasm's listing (through a temp file) */
static int disassemble(const lr_jit_spec *s, const char *arch, const char *nvdisasm, char **out, size_t *out_len,
                       int *regs)
{
    *out = NULL, *out_len = 0;
    void *cubin;
    size_t n;
    int rc = lr_jit_cubin(s, arch, 13000, &cubin, &n, NULL);
    if (rc) return rc;
    rc = lr_cubin_regcount(cubin, n, regs);
    char path[] = "/tmp/sass_count_XXXXXX";
    int fd = rc ? -1 : mkstemp(path);
    if (!rc && fd < 0) rc = LR_FAIL(LR_EIO, "mkstemp: cannot make a temp file");
    if (!rc && (write(fd, cubin, n) != (ssize_t)n)) rc = LR_FAIL(LR_EIO, "%s: short write", path);
    if (fd >= 0) close(fd);
    free(cubin);
    char *listing = NULL;
    size_t cap = 0, len = 0;
    if (!rc) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' -c '%s' 2>&1", nvdisasm, path);
        FILE *p = popen(cmd, "r");
        if (!p) rc = LR_FAIL(LR_EIO, "cannot run %s", nvdisasm);
        for (size_t k; p && !rc;) {
            if (len + 65536 > cap) {
                char *nl = realloc(listing, cap = 2 * cap + 65536);
                if (!nl) {
                    rc = LR_FAIL(LR_ENOMEM, "listing");
                    break;
                }
                listing = nl;
            }
            if (!(k = fread(listing + len, 1, cap - len, p))) break;
            len += k;
        }
        int st = p ? pclose(p) : -1;
        if (!rc && st != 0)
            rc = LR_FAIL(LR_EIO, "%s -c failed (status %d): %.200s", nvdisasm, st, listing ? listing : "");
    }
    if (fd >= 0) unlink(path);
    if (rc) free(listing);
    else *out = listing, *out_len = len;
    return rc;
}

/* spec text -> instruction counts */
static int g_print_loop;

static int count(const char *text, const char *arch, const char *nvdisasm, lr_sass_loop *loop, int *regs)
{
    size_t tl = strcspn(text, " ");
    if (!tl || !text[tl]) return LR_FAIL(LR_EINVAL, "spec \"%s\": TEMPLATE KERNEL name=value ...", text);
    /* the embedded template's own name: it outlives the spec */
    const char *tmpl = NULL;
    for (int i = 0; i < lr_template_count() && !tmpl; i++)
        if (strlen(lr_template_name(i)) == tl && !strncmp(lr_template_name(i), text, tl)) tmpl = lr_template_name(i);
    if (!tmpl) return LR_FAIL(LR_EINVAL, "spec \"%s\": no template %.*s", text, (int)tl, text);
    lr_jit_spec s;
    int rc = lr_spec_parse(tmpl, text + tl + 1, strlen(text + tl + 1), &s);
    if (rc) return rc;
    char *listing;
    size_t len;
    if ((rc = disassemble(&s, arch, nvdisasm, &listing, &len, regs))) return rc;
    rc = lr_sass_mma_loop(listing, len, loop);
    if (!rc && g_print_loop) fwrite(listing + loop->begin, 1, loop->end - loop->begin, stdout);
    free(listing);
    return rc;
}

/* Templates whose narrow loads before the PDL wait read what no kernel
 * writes, so the check cannot tell them from a hoisted load of x (their x
 * goes through lr_after_wait instead): op_rope_attention takes its RoPE
 * angles there (the step's copy-in wrote them before the first kernel;
 * docs/engine.md) and its first cached K/V rows (earlier steps wrote them;
 * lr_attend_preload), the rotation its row-mix table q (uploaded at load);
 * op_empty_flag (the flag-handoff floor) polls its counter instead of the
 * wait by design, and reads nothing else. */
static const char *const g_prewait_ok[] = { "op_rope_attention.cu", "rotate_slab.cu", "op_empty_flag.cu" };

/* Every @spec of every template (or of those named): no narrow global load
 * before the first PDL wait (lr_sass_prewait_loads), outside g_prewait_ok. */
static int pdl_check(int ntmpl, char **tmpls, const char *arch, const char *nvdisasm)
{
    int checked = 0, bad = 0;
    for (int i = 0; i < ntmpl; i++) { /* a name that is no template is an error, not 0 checked */
        int found = 0;
        for (int t = 0; t < lr_template_count() && !found; t++) found = !strcmp(tmpls[i], lr_template_name(t));
        if (!found) return fprintf(stderr, "sass_count: --pdl-check: no template %s\n", tmpls[i]), 2;
    }
    for (int t = 0; t < lr_template_count(); t++) {
        const char *name = lr_template_name(t);
        int want = ntmpl == 0, ok_narrow = 0;
        for (int i = 0; i < ntmpl; i++) want |= !strcmp(tmpls[i], name);
        for (size_t i = 0; i < sizeof g_prewait_ok / sizeof g_prewait_ok[0]; i++) ok_narrow |= !strcmp(g_prewait_ok[i], name);
        if (!want) continue;
        lr_jit_spec specs[96]; /* jit_test fails a template with 96 or more */
        int n = lr_spec_examples(name, specs, 96);
        if (n < 0) {
            fprintf(stderr, "sass_count: %s: %s\n", name, lr_errmsg());
            bad++;
            continue;
        }
        for (int i = 0; i < n; i++) {
            char kname[512], *listing;
            size_t len;
            int regs;
            lr_jit_kernel_name(&specs[i], kname, sizeof kname);
            lr_sass_prewait w;
            int rc = disassemble(&specs[i], arch, nvdisasm, &listing, &len, &regs);
            if (!rc) rc = lr_sass_prewait_loads(listing, len, &w), free(listing);
            if (rc) {
                fprintf(stderr, "sass_count: %s %s: %s\n", name, kname, lr_errmsg());
                bad++;
                continue;
            }
            const int fail = w.narrow && !ok_narrow;
            printf("%s %s: %s", fail ? "NARROW" : "ok    ", kname, w.has_wait ? "" : "no PDL wait");
            if (w.has_wait) printf("%d wide, %d narrow loads before the wait", w.wide, w.narrow);
            if (w.narrow) printf(" (first %s%s)", w.first_narrow, ok_narrow ? "; allowed for this template" : "");
            printf("\n");
            checked++, bad += fail;
        }
    }
    printf("%d specializations checked, %d with a narrow load before the PDL wait or failed\n", checked, bad);
    return bad ? 1 : checked ? 0 : 2;
}

static int check(const char *csv_path, const char *arch, const char *nvdisasm)
{
    lr_rcsv c;
    int rc = lr_rcsv_load(csv_path, &c);
    if (rc) return fprintf(stderr, "sass_count: %s\n", lr_errmsg()), 2;
    if (lr_rcsv_col(&c, "spec") < 0 || lr_rcsv_col(&c, "instr_per_weight") < 0 || lr_rcsv_col(&c, "registers") < 0)
        return fprintf(stderr, "sass_count: %s: no spec, instr_per_weight or registers column\n", csv_path),
               lr_rcsv_free(&c), 2;
    int checked = 0, bad = 0;
    for (int r = 0; r < c.n; r++) {
        const char *spec = lr_rcsv_get(&c, r, "spec"), *per = lr_rcsv_get(&c, r, "instr_per_weight"),
                   *nreg = lr_rcsv_get(&c, r, "registers");
        if (!*spec) continue;
        lr_sass_loop l;
        int regs;
        if ((rc = count(spec, arch, nvdisasm, &l, &regs))) {
            fprintf(stderr, "sass_count: %s:%d: %s\n", csv_path, c.line[r], lr_errmsg());
            bad++;
            continue;
        }
        char got[32];
        snprintf(got, sizeof got, "%.2f", l.per_weight);
        int ok = !strcmp(got, per) && regs == atoi(nreg);
        printf("%s %s:%d (%s): %s per weight, %d registers", ok ? "ok   " : "DRIFT", csv_path, c.line[r],
               lr_rcsv_get(&c, r, "commit"), got, regs);
        if (!ok) printf("; the row says %s, %s", per, nreg);
        printf("\n");
        checked++, bad += !ok;
    }
    lr_rcsv_free(&c);
    printf("%d rows checked, %d drifted or failed\n", checked, bad);
    return bad ? 1 : checked ? 0 : 2;
}

int main(int argc, char **argv)
{
    lr_program_init("sass_count");
    const char *nvdisasm = getenv("LEECHRT_NVDISASM"), *arch = "sm_90", *csv = NULL;
    if (!nvdisasm || !*nvdisasm) nvdisasm = "nvdisasm";
    int i = 1, pdl = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(stdout), 0;
        if (!strcmp(argv[i], "--pdl-check")) {
            pdl = 1;
            continue;
        }
        if (!strcmp(argv[i], "--loop")) {
            g_print_loop = 1;
            continue;
        }
        if (strcmp(argv[i], "--nvdisasm") && strcmp(argv[i], "--arch") && strcmp(argv[i], "--check")) {
            fprintf(stderr, "sass_count: unknown option %s (see --help)\n", argv[i]);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "sass_count: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--nvdisasm")) nvdisasm = argv[++i];
        else if (!strcmp(argv[i], "--arch")) arch = argv[++i];
        else csv = argv[++i];
    }
    if (csv) return check(csv, arch, nvdisasm);
    if (pdl) return pdl_check(argc - i, argv + i, arch, nvdisasm);
    if (i == argc) return usage(stderr), 2;
    int status = 0;
    for (; i < argc; i++) {
        lr_sass_loop l;
        int regs = -1, rc = count(argv[i], arch, nvdisasm, &l, &regs);
        if (rc == LR_EFORMAT && regs >= 0) { /* compiled, no mma loop (a rotation, an op): its registers */
            printf("no loop with mma instructions, %d registers: %s\n", regs, argv[i]);
            lr_clear_error();
            continue;
        }
        if (rc) {
            fprintf(stderr, "sass_count: %s\n", lr_errmsg());
            status = 1;
            continue;
        }
        printf("%d instructions, %d mma (m%dn%dk%d), %.2f per weight, %d registers, %d spill loads/stores: %s\n",
               l.instrs, l.mma, l.m, l.n, l.k, l.per_weight, regs, l.local, argv[i]);
    }
    return status;
}
