/* lr_tuning_csv_best: the fastest candidate per device and shape of a tune
 * CSV, with the commit filter and malformed input refused naming the file
 * and line; and tune_gemv --from-csv writing those rows into a table. */
#include "kernels/tuning.h"
#include "test/t.h"
#include "util/err.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define HDR "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err," \
            "threads,rpw,unroll,extra0,extra1,tile,minb,extra2,extra3,extra4\n"
#define ROW(commit, dev, arm, rows, cols, us, threads, nacc, minb, e3)                                             \
    "2026-11-30," commit "," dev "," arm ",14B,down," #rows "," #cols ",4.8," #us ",,,1e-7," #threads ",1,2,1,-1," \
    #nacc "," #minb ",-1," #e3 ",0\n"

static char g_path[64];
static const char *g_argv0 = "";

static void write_csv(const char *text)
{
    snprintf(g_path, sizeof g_path, "/tmp/lrtunecsv.XXXXXX");
    int fd = mkstemp(g_path);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static const lr_tuning_pick *find(const lr_tuning_pick *p, int n, const char *dev, int rows, int cols)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(p[i].row.device, dev) && p[i].row.rows == rows && p[i].row.cols == cols) return &p[i];
    return NULL;
}

static int test_fastest_per_shape(void)
{
    write_csv(HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 25.4, 128, 3, 0, 1)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 26.0, 256, 3, 0, 1)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14", 5120, 17408, 1.0, 64, 1, 0, 1) /* other arm */
              HDR /* an appended run */
              ROW("bbb", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 24.25, 256, 2, 3, 3)
              ROW("bbb", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 5120, 9.9, 128, 1, 0, 1)
              ROW("bbb", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 5120, 9.9, 256, 1, 0, 1) /* tie: first stays */
              ROW("ccc", "NVIDIA L40S (sm_89)", "leech_p14s", 5120, 17408, 50.0, 128, 1, 0, 1));
    lr_tuning_pick p[8];
    int n;
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s", NULL, p, 8, &n));
    T_ASSERT(n == 3, "%d shapes, want 3 (two on the H200, one on the L40S)", n);
    const lr_tuning_pick *d = find(p, n, "NVIDIA H200", 5120, 17408), *q = find(p, n, "NVIDIA H200", 5120, 5120),
                         *l = find(p, n, "NVIDIA L40S", 5120, 17408);
    T_ASSERT(d && q && l, "a shape is missing");
    T_ASSERT(d->row.cc == 90 && l->row.cc == 89, "cc %d %d", d->row.cc, l->row.cc);
    T_ASSERT(d->row.us == 24.25 && d->row.knobs[0] == 256 && d->row.knobs[3] == 2 && d->row.knobs[6] == 3 &&
                 d->row.knobs[8] == 3 && d->row.knobs[2] == 2 && d->row.knobs[4] == 1 && d->row.knobs[5] == -1,
             "down: %g us, threads %d tile %d minb %d extra3 %d", d->row.us, d->row.knobs[0], d->row.knobs[3],
             d->row.knobs[6], d->row.knobs[8]);
    T_ASSERT(q->row.knobs[0] == 128, "a tie replaced the first row (threads %d)", q->row.knobs[0]);
    T_ASSERT(!strcmp(d->row.arm, "leech_p14s"), "arm %s", d->row.arm);
    /* only commit aaa: the 25.4 us row */
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s", "zzz,aaa", p, 8, &n));
    T_ASSERT(n == 1 && p[0].row.us == 25.4 && p[0].row.knobs[0] == 128, "commit filter: %d rows, %g us", n,
             n ? p[0].row.us : 0.0);
    T_ASSERT(lr_tuning_csv_best(g_path, "leech_p14s", NULL, p, 2, &n) == LR_ERANGE, "more shapes than room accepted");
    unlink(g_path);
    return T_PASS;
}

/* A faster candidate of a removed feature (here x's f16 copy, extra3 + 4)
 * is measured but not the table's row: the kernel would run another
 * geometry. Other arms keep extra3. */
static int test_xh_rows_left_out(void)
{
    write_csv(HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 22.2, 256, 1, 3, 1)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 21.9, 256, 2, 3, 7)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 5120, 9.0, 128, 1, 0, 5)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 5120, 9.5, 128, 3, 0, 3)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_i8", 5120, 5120, 9.5, 128, 3, 0, 7));
    lr_tuning_pick p[8];
    int n;
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s", NULL, p, 8, &n));
    const lr_tuning_pick *d = find(p, n, "NVIDIA H200", 5120, 17408), *o = find(p, n, "NVIDIA H200", 5120, 5120);
    T_ASSERT(n == 2 && d && o, "%d shapes", n);
    T_ASSERT(d->row.us == 22.2 && d->row.knobs[8] == 1, "down: %g us extra3 %d (the xh row won)", d->row.us,
             d->row.knobs[8]);
    T_ASSERT(o->row.us == 9.5 && o->row.knobs[8] == 3, "o: %g us extra3 %d", o->row.us, o->row.knobs[8]);
    T_OK(lr_tuning_csv_best(g_path, "leech_i8", NULL, p, 8, &n));
    T_ASSERT(n == 1 && p[0].row.knobs[8] == 7, "another arm's extra3 7 left out");
    unlink(g_path);
    /* the other removed features: a ring (extra0 >= 3), an L2 prefetch
       distance (extra2 > 0), a split (extra4 > 1); split 1 is no split */
    int k[LR_TUNE_KNOBS] = { 128, 1, 2, 1, 1, -1, 0, -1, 3, 0 };
    T_ASSERT(lr_tuning_engine_runs("leech_p14s", k), "a plain row left out");
    k[4] = 3;
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k) && lr_tuning_engine_runs("leech_p14", k), "ring");
    k[4] = 1, k[7] = 2;
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "l2pf");
    k[7] = 0, k[9] = 2;
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "split 2");
    k[9] = 1;
    T_ASSERT(lr_tuning_engine_runs("leech_p14s", k), "split 1 left out");
    k[8] = 48 + 128; /* six warp groups with the table's lane copies (removed) */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "lane copies");
    k[8] = 48 + 256 + 1; /* groups with the ping-pong registers (removed) */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "ping-pong");
    k[8] = 24 + 4096 + 8192; /* groups with the batches handed out by a counter (removed) */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "counter hand-out");
    k[8] = 1024 + 4096 + 16384; /* the split's walk from a point per CTA (ilv 2, removed) */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "ilv 2");
    k[8] = 24 + 4096 + 32768; /* groups with the segments in their walk order (removed) */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s", k), "walk order");
    k[8] = 48 + 512 + 2 + 1; /* groups, the balanced split, epf, xw: kept */
    T_ASSERT(lr_tuning_engine_runs("leech_p14s", k), "groups with bal, epf and xw left out");
    k[8] = 265216 + 1048576 + 3 * 2097152; /* the balanced split's cp.async ring (removed), any Planes14S arm */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s3_swiglu", k) && !lr_tuning_engine_runs("leech_p14s3", k), "ring slots");
    k[8] = 265216 + 1048576 + 16777216; /* two walks per warp (removed) */
    T_ASSERT(!lr_tuning_engine_runs("leech_p14s3", k), "two walks per warp");
    k[8] = 265216 + 1048576; /* the 3-bit form at the split: kept */
    T_ASSERT(lr_tuning_engine_runs("leech_p14s3", k) && lr_tuning_engine_runs("leech_p14", k), "3-bit split left out");
    /* knobs past 1e6 (extra3 bit 20, the 3-bit form) read as LEECHRT_TUNE takes them */
    write_csv(HDR ROW("ddd", "NVIDIA H200 (sm_90)", "leech_p14s", 7168, 5120, 9.5, 768, 1, 1, 1313792));
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s", NULL, p, 8, &n));
    T_ASSERT(n == 1 && p[0].row.knobs[8] == 1313792, "extra3 1313792: %d rows, %d", n, n ? p[0].row.knobs[8] : 0);
    unlink(g_path);
    return T_PASS;
}

static int test_malformed_refused(void)
{
    static const char *bad[] = {
        HDR ROW("aaa", "NVIDIA H200", "leech_p14s", 5120, 17408, 25.4, 128, 3, 0, 1),          /* no (sm_XY) */
        HDR ROW("aaa", "NVIDIA H200 (sm_9x)", "leech_p14s", 5120, 17408, 25.4, 128, 3, 0, 1),  /* bad cc */
        HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, fast, 128, 3, 0, 1),  /* time */
        HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 25.4, 12x, 3, 0, 1),  /* knob */
        HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120.9, 17408, 25.4, 128, 3, 0, 1), /* rows not whole */
        HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 0x4400, 25.4, 128, 3, 0, 1),  /* cols in hex */
        HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 25.4, 767.99, 3, 0, 1), /* threads */
        HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 25.4, 128, 3, 0, 0x10),  /* extra3 hex */
        HDR "2026-11-30,aaa,NVIDIA H200 (sm_90),leech_p14s,14B,down,5120\n",                    /* short row */
        "date,commit,device,arm,rows,cols,us\n",                                                 /* no knobs */
        "",                                                                                      /* empty */
    };
    lr_tuning_pick p[8];
    int n;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_csv(bad[i]);
        int rc = lr_tuning_csv_best(g_path, "leech_p14s", NULL, p, 8, &n);
        T_ASSERT(rc == LR_EFORMAT, "case %zu: rc %d (%s)", i, rc, lr_errmsg());
        T_ASSERT(strstr(lr_errmsg(), g_path), "case %zu: the message does not name the file: %s", i, lr_errmsg());
        unlink(g_path);
    }
    T_ASSERT(lr_tuning_csv_best("/nonexistent/tune.csv", "leech_p14s", NULL, p, 8, &n) == LR_EIO, "missing file");
    T_ASSERT(strstr(lr_errmsg(), "/nonexistent/tune.csv"), "message: %s", lr_errmsg());
    lr_clear_error();
    return T_PASS;
}

/* "ARM@ball" picks only the rows of sweeps over ball-drawn blocks and names
 * the table rows by the arm itself; the plain name ignores those rows; the
 * removed-feature filter still applies to the ball rows. */
static int test_ball_rows(void)
{
    write_csv(HDR ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 17408, 20.0, 768, 1, 0, 196609)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s@ball", 5120, 17408, 19.0, 736, 1, 0, 65537)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s@ball", 5120, 17408, 18.5, 768, 1, 0, 262145)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s@ball", 5120, 17408, 10.0, 256, 1, 0, 5) /* xh: out */
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s", 5120, 5120, 9.0, 128, 1, 0, 1)
              ROW("aaa", "NVIDIA H200 (sm_90)", "leech_p14s_swiglu@ball@pdl", 5120, 17408, 30.0, 672, 1, 0, 200728));
    lr_tuning_pick p[8];
    int n;
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s_swiglu@ball@pdl", NULL, p, 8, &n));
    T_ASSERT(n == 1 && p[0].row.knobs[0] == 672 && !strcmp(p[0].row.arm, "leech_p14s_swiglu"), "@ball@pdl: %d rows, arm %s",
             n, n ? p[0].row.arm : "");
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s@ball", NULL, p, 8, &n));
    T_ASSERT(n == 1, "%d shapes, want 1 (the class-uniform 5120 x 5120 row is not a ball row)", n);
    T_ASSERT(p[0].row.us == 18.5 && p[0].row.knobs[0] == 768 && p[0].row.knobs[8] == 262145,
             "ball down: %g us threads %d extra3 %d", p[0].row.us, p[0].row.knobs[0], p[0].row.knobs[8]);
    T_ASSERT(!strcmp(p[0].row.arm, "leech_p14s"), "table arm %s", p[0].row.arm);
    T_OK(lr_tuning_csv_best(g_path, "leech_p14s", NULL, p, 8, &n));
    const lr_tuning_pick *d = find(p, n, "NVIDIA H200", 5120, 17408);
    T_ASSERT(n == 2 && d && d->row.us == 20.0, "class-uniform picks: %d shapes, down %g us", n, d ? d->row.us : 0.0);
    unlink(g_path);
    return T_PASS;
}

/* The program: the picked rows land in the written table (the compiled-in
 * table's rows where it does not exist yet, the file's own where it does, so
 * a second arm's merge keeps the first's); without --table it refuses (exit
 * 2); a missing CSV, or a table file it cannot read, fails naming it (exit 1)
 * and leaves the file as it was. No GPU. */
static int test_tune_gemv_from_csv(void)
{
    char bin[1200], cmd[4096], out[] = "/tmp/lrtable.XXXXXX";
    snprintf(bin, sizeof bin, "%s", g_argv0);
    char *slash = strrchr(bin, '/');
    T_SKIP_IF(!slash, "no program path");
    snprintf(slash, sizeof bin - (size_t)(slash - bin), "/../bin/tune_gemv");
    T_SKIP_IF(access(bin, X_OK) != 0, "no tune_gemv");
    write_csv(HDR ROW("aaa", "NVIDIA Test GPU (sm_90)", "leech_p14s", 77, 1001, 3.5, 64, 2, 0, 3)
              ROW("aaa", "NVIDIA Test GPU (sm_90)", "leech_p14", 78, 1002, 4.5, 96, 1, 0, 1));
    close(mkstemp(out));
    unlink(out); /* not there yet: the merge starts from the table compiled in */
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14s --from-csv %s --table %s >/dev/null 2>&1", bin, g_path, out);
    int st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "tune_gemv --from-csv exited %d", WEXITSTATUS(st));
    FILE *f = fopen(out, "r");
    char text[1 << 16];
    size_t k = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[k] = 0;
    if (f) fclose(f);
    T_ASSERT(strstr(text, "{ \"NVIDIA Test GPU\", 90, \"leech_p14s\", 77, 1001, { 64, 1, 2, 2, 1, -1, 0, -1, 3, 0 }, 3.50 },"),
             "row not in the table:\n%.400s", text);
    T_ASSERT(strstr(text, "const int lr_tuning_table_n ="), "table not complete");
    T_ASSERT(strstr(text, "\"NVIDIA H200\", 90, \"leech_p14s\","), "the compiled-in rows are not in the table");
    /* a second arm merged into the same file, no rebuild between: both rows stay */
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14 --from-csv %s --table %s >/dev/null 2>&1", bin, g_path, out);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "second merge exited %d", WEXITSTATUS(st));
    f = fopen(out, "r");
    k = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[k] = 0;
    if (f) fclose(f);
    T_ASSERT(strstr(text, "\"NVIDIA Test GPU\", 90, \"leech_p14s\", 77, 1001,") &&
                 strstr(text, "{ \"NVIDIA Test GPU\", 90, \"leech_p14\", 78, 1002, { 96, 1, 2, 1, 1, -1, 0, -1, 1, 0 }, 4.50 },"),
             "the second merge lost a row:\n%.400s", text);
    /* a table file that is not one: refused naming it, left as it was */
    char junk[] = "/tmp/lrjunk.XXXXXX", err[] = "/tmp/lrjunkerr.XXXXXX";
    int fd = mkstemp(junk);
    T_ASSERT(fd >= 0 && write(fd, "int x;\n", 7) == 7, "cannot write %s", junk);
    close(fd);
    close(mkstemp(err));
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14 --from-csv %s --table %s >/dev/null 2>%s", bin, g_path, junk, err);
    st = system(cmd);
    f = fopen(err, "r");
    k = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[k] = 0;
    if (f) fclose(f);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(text, junk) && strstr(text, "not a tuning table"),
             "a junk table: exit %d, says %s", WEXITSTATUS(st), text);
    f = fopen(junk, "r");
    k = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[k] = 0;
    if (f) fclose(f);
    T_ASSERT(!strcmp(text, "int x;\n"), "the junk table was changed: %s", text);
    unlink(junk), unlink(err);
    /* --ball: a CSV with no ball rows has nothing to pick (exit 1); --ball with a non-Leech arm is refused */
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14s --ball --from-csv %s --table %s >/dev/null 2>&1", bin, g_path, out);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--ball without ball rows: exit %d", WEXITSTATUS(st));
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14s --pdl --from-csv %s --table %s >/dev/null 2>&1", bin, g_path, out);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--pdl without PDL-chain rows: exit %d", WEXITSTATUS(st));
    snprintf(cmd, sizeof cmd, "%s --arm f16 --ball --from-csv %s --table %s >/dev/null 2>&1", bin, g_path, out);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--ball with f16: exit %d", WEXITSTATUS(st));
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14s --from-csv %s >/dev/null 2>&1", bin, g_path);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2, "without --table: exit %d", WEXITSTATUS(st));
    snprintf(cmd, sizeof cmd, "%s --arm leech_p14s --from-csv /nonexistent.csv --table %s >/dev/null 2>&1", bin, out);
    st = system(cmd);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "missing csv: exit %d", WEXITSTATUS(st));
    unlink(g_path), unlink(out);
    return T_PASS;
}

int main(int argc, char **argv)
{
    g_argv0 = argv[0];
    static const t_case cases[] = { T_CASE(test_fastest_per_shape), T_CASE(test_malformed_refused), T_CASE(test_xh_rows_left_out),
                                    T_CASE(test_ball_rows), T_CASE(test_tune_gemv_from_csv) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
