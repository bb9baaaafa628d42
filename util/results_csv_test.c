/* The results reader: header, rows, a repeated header skipped, short rows
 * and unknown columns read as "", a missing file refused naming it, and the
 * commit list (unique, bounded); a quoted field read whole, unquoted. */
#include "test/t.h"
#include "util/err.h"
#include "util/results_csv.h"

#include <string.h>

/* Reads the in-memory text as the results file `name`. */
static int read_text(char *text, const char *name, lr_rcsv *c)
{
    FILE *f = fmemopen(text, strlen(text), "r");
    if (!f) return LR_FAIL(LR_EIO, "%s: fmemopen", name);
    int rc = lr_rcsv_read(f, name, c);
    fclose(f);
    return rc;
}

static int test_read_and_get(void)
{
    static char text[] = "date,commit,arm,us\n"
                         "2026-11-30,aaa1111,f16,1.5\n"
                         "date,commit,arm,us\n"
                         "2026-11-30,bbb2222,leech\n";
    lr_rcsv c;
    T_OK(read_text(text, "mem.csv", &c));
    T_ASSERT(c.n == 2 && c.nh == 4, "%d rows, %d columns", c.n, c.nh);
    T_ASSERT(!strcmp(lr_rcsv_get(&c, 0, "us"), "1.5") && !strcmp(lr_rcsv_get(&c, 1, "arm"), "leech"), "values");
    T_ASSERT(!*lr_rcsv_get(&c, 1, "us") && !*lr_rcsv_get(&c, 0, "nope") && !*lr_rcsv_get(&c, 5, "arm"), "absent = \"\"");
    char list[32] = "";
    T_ASSERT(lr_rcsv_commits(&c, list, sizeof list) == 2 && !strcmp(list, "aaa1111, bbb2222"), "commits '%s'", list);
    T_ASSERT(lr_rcsv_commits(&c, list, sizeof list) == 2, "repeat adds nothing: '%s'", list);
    /* a list that cannot hold every commit says so ("aaa1111, bbb2222" is 17 bytes) */
    char cut13[13] = "", cut12[12] = "", cut4[4] = "", cut3[3] = "";
    T_ASSERT(lr_rcsv_commits(&c, cut13, sizeof cut13) == 1 && !strcmp(cut13, "aaa1111, ..."), "cut: '%s'", cut13);
    T_ASSERT(lr_rcsv_commits(&c, cut12, sizeof cut12) == 0 && !strcmp(cut12, "..."), "cut to the mark: '%s'", cut12);
    T_ASSERT(lr_rcsv_commits(&c, cut4, sizeof cut4) == 0 && !strcmp(cut4, "..."), "mark alone: '%s'", cut4);
    T_ASSERT(lr_rcsv_commits(&c, cut3, sizeof cut3) == 0 && !*cut3, "no room even for the mark: '%s'", cut3);
    T_ASSERT(lr_rcsv_commits(&c, cut13, sizeof cut13) == 1 && !strcmp(cut13, "aaa1111, ..."), "a cut list takes no more: '%s'", cut13);
    char exact[18] = "";
    T_ASSERT(lr_rcsv_commits(&c, exact, sizeof exact) == 2 && !strcmp(exact, "aaa1111, bbb2222"), "exact fit, no mark: '%s'", exact);
    lr_rcsv_free(&c);
    /* a commit is a whole item of the list, not a part of another */
    static char dirty[] = "date,commit\n2026-11-30,abc1234-dirty\n2026-11-30,abc1234\n";
    T_OK(read_text(dirty, "dirty.csv", &c));
    char both[64] = "";
    T_ASSERT(lr_rcsv_commits(&c, both, sizeof both) == 2 && !strcmp(both, "abc1234-dirty, abc1234"), "commits '%s'", both);
    T_ASSERT(c.line[0] == 2 && c.line[1] == 3 && lr_rcsv_col(&c, "commit") == 1 && lr_rcsv_col(&c, "us") == -1,
             "line numbers / column index");
    lr_rcsv_free(&c);
    T_ASSERT(lr_rcsv_load("/nonexistent/x.csv", &c) == LR_EIO && strstr(lr_errmsg(), "/nonexistent/x.csv"), "missing file");
    lr_clear_error();
    return T_PASS;
}

/* A quoted field (bench_engine's variant) keeps its commas, loses its
 * quotes, and "" in it is one quote; an unclosed one runs to the line end. */
static int test_quoted(void)
{
    static char text[] = "date,variant,us\n"
                         "2026-12-05,\"norm, SwiGLU fused\",2.5\n"
                         "2026-12-05,\"say \"\"hi\"\"\"\n"
                         "2026-12-05,\"\",1\n"
                         "2026-12-05,\"open, to the end\n";
    lr_rcsv c;
    T_OK(read_text(text, "quoted.csv", &c));
    T_ASSERT(c.n == 4, "%d rows", c.n);
    T_ASSERT(!strcmp(lr_rcsv_get(&c, 0, "variant"), "norm, SwiGLU fused") && !strcmp(lr_rcsv_get(&c, 0, "us"), "2.5"),
             "row 0: '%s' '%s'", lr_rcsv_get(&c, 0, "variant"), lr_rcsv_get(&c, 0, "us"));
    T_ASSERT(!strcmp(lr_rcsv_get(&c, 1, "variant"), "say \"hi\"") && c.nf[1] == 2, "row 1: '%s' (%d fields)",
             lr_rcsv_get(&c, 1, "variant"), c.nf[1]);
    T_ASSERT(!*lr_rcsv_get(&c, 2, "variant") && !strcmp(lr_rcsv_get(&c, 2, "us"), "1"), "row 2: '%s' '%s'",
             lr_rcsv_get(&c, 2, "variant"), lr_rcsv_get(&c, 2, "us"));
    T_ASSERT(!strcmp(lr_rcsv_get(&c, 3, "variant"), "open, to the end") && c.nf[3] == 2, "row 3: '%s' (%d fields)",
             lr_rcsv_get(&c, 3, "variant"), c.nf[3]);
    lr_rcsv_free(&c);
    return T_PASS;
}

/* The newest committed row over several files, and each row's own process's
 * read bound: a "+variant" commit is passed over, a later date wins over a
 * later file, an equal date goes to the later file; the bound is the nearest
 * read_bound row above of the row's commit. */
static int test_newest_and_bound(void)
{
    static char one[] = "date,commit,arm,model,matrix,us,gbps\n"
                        "2026-12-01,aaa1111,read_bound,,probe,,4500\n"
                        "2026-12-01,aaa1111,x,14B,layer,10,\n"
                        "2026-12-03,bbb2222+exp,read_bound,,probe,,4400\n"
                        "2026-12-03,bbb2222+exp,x,14B,layer,9,\n"
                        "2026-12-02,ccc3333,read_bound,,probe,,4600\n"
                        "2026-12-02,ccc3333,x,14B,layer,11,\n"
                        "2026-12-02,ccc3333,read_bound,,probe,,4700\n"
                        "2026-12-02,ccc3333,x,14B,layer,12,\n";
    static char two[] = "date,commit,arm,model,matrix,us,gbps\n"
                        "2026-12-01,ddd4444,x,14B,layer,13,\n"
                        "2026-12-02,eee5555,x,8B,layer,14,\n";
    static char three[] = "date,commit,arm,model,matrix,us\n2026-12-02,fff6666,x,14B,layer,15\n";
    lr_rcsv f[3];
    T_OK(read_text(one, "one.csv", &f[0]));
    T_OK(read_text(two, "two.csv", &f[1]));
    T_OK(read_text(three, "three.csv", &f[2]));
    int fi, r;
    T_OK(lr_rcsv_newest(f, 2, "x", "14B", "layer", &fi, &r));
    T_ASSERT(fi == 0 && !strcmp(lr_rcsv_get(&f[fi], r, "us"), "12"), "newest: file %d us %s", fi,
             lr_rcsv_get(&f[fi], r, "us"));
    T_ASSERT(lr_rcsv_process_bound(&f[0], r) == 4700 && lr_rcsv_process_bound(&f[0], 1) == 4500,
             "bounds %g %g", lr_rcsv_process_bound(&f[0], r), lr_rcsv_process_bound(&f[0], 1));
    T_ASSERT(lr_rcsv_process_bound(&f[1], 0) == 0, "no read_bound row: 0");
    T_OK(lr_rcsv_newest(f, 3, "x", "14B", "layer", &fi, &r));
    T_ASSERT(fi == 2 && r == 0, "equal date: the later file (%d, %d)", fi, r);
    T_ASSERT(lr_rcsv_newest(f, 3, "x", "4B", "layer", &fi, &r) == -1 && fi == -1, "none: -1");
    T_ASSERT(lr_rcsv_is_experiment(&f[0], 3) && !lr_rcsv_is_experiment(&f[0], 1), "experiment rows: the \"+variant\" commit");
    for (int i = 0; i < 3; i++) lr_rcsv_free(&f[i]);
    return T_PASS;
}

T_MAIN(T_CASE(test_read_and_get), T_CASE(test_quoted), T_CASE(test_newest_and_bound))
