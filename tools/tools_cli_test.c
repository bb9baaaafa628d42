/* Every program answers --help with usage on stdout and exit 0, and refuses
 * an unknown flag with exit 2 (or 1) and a message on stderr — never a crash. */
#include "loader/import/import_testlib.h"
#include "loader/model.h"
#include "rt/demo_model.h"
#include "test/bos_tokenizer.h"
#include "test/t.h"
#include "util/atomic_file.h"
#include "util/read_file.h"
#include "util/err.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_bin[1024];

static int run(const char *prog, const char *args, char *err, size_t n)
{
    char cmd[4096], ef[64] = "/tmp/lrcli.XXXXXX";
    int fd = mkstemp(ef);
    if (fd < 0) return -1;
    close(fd);
    snprintf(cmd, sizeof cmd, "%s/%s %s >/dev/null 2>%s </dev/null", g_bin, prog, args, ef);
    int st = system(cmd);
    FILE *f = fopen(ef, "r");
    size_t k = f ? fread(err, 1, n - 1, f) : 0;
    err[k] = 0;
    if (f) fclose(f);
    unlink(ef);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int test_help_and_unknown_flags(void)
{
    static const char *progs[] = { "bench_gemv", "tune_gemv", "bench_engine", "bench_rotation", "bench_load",
                                   "bench_unfold", "cache", "inspect", "gen_synthetic", "import", "tokenize",
                                   "leech_encode_bench", "leech_mse_bench", "readme_tables", "plots", "ppl", "leechrt",
                                   "sass_count" };
    int tested = 0;
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        char path[1200], err[4096];
        snprintf(path, sizeof path, "%s/%s", g_bin, progs[i]);
        if (access(path, X_OK) != 0) continue;
        tested++;
        int rc = run(progs[i], "--help", err, sizeof err);
        T_ASSERT(rc == 0, "%s --help exited %d: %s", progs[i], rc, err);
        /* output that cannot arrive is a failure (most of these once exited 0) */
        if (access("/dev/full", W_OK) == 0) {
            char cmd[1400];
            snprintf(cmd, sizeof cmd, "%s --help >/dev/full 2>/dev/null </dev/null", path);
            const int st = system(cmd);
            T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s --help into /dev/full: status %d", progs[i], st);
        }
        rc = run(progs[i], "--no-such-flag-xyz", err, sizeof err);
        T_ASSERT(rc == 1 || rc == 2, "%s with an unknown flag exited %d", progs[i], rc);
        T_ASSERT(err[0], "%s with an unknown flag printed nothing on stderr", progs[i]);
        /* named as unknown, not as a known flag missing its value (several tools said that) */
        T_ASSERT(strstr(err, "--no-such-flag-xyz") && !strstr(err, "needs a value"), "%s with an unknown flag: %s",
                 progs[i], err);
    }
    T_ASSERT(tested >= 10, "only %d programs found next to the test", tested);
    return T_PASS;
}

/* A number flag given garbage (or out of range) is refused with exit 2 and a
 * message naming the flag, before any work starts (these tools used atoi). */
static int test_bad_numbers_refused(void)
{
    static const struct { const char *prog, *args, *flag; } c[] = {
        { "bench_gemv", "--reps abc", "--reps" },
        { "bench_gemv", "--extra x", "--extra" },
        { "bench_gemv", "--extra 1,-1,0,1,zz", "--extra" },
        { "bench_gemv", "--extra 1,2,3,4,5,6", "--extra" },
        { "bench_gemv", "--geom 128,q", "--geom" },
        { "bench_gemv", "--smem-budget 100k", "--smem-budget" },
        { "tune_gemv", "--threads 128,x --arm leech_p14", "--threads" },
        { "tune_gemv", "--tile 1,,2 --arm leech_p14", "--tile" },
        { "tune_gemv", "--minb 6,y --arm leech_p14s", "--minb" },
        { "tune_gemv", "--extra2 2,zz --arm leech_p14s", "--extra2" },
        { "tune_gemv", "--extra3 1e9 --arm leech_p14s", "--extra3" },
        { "tune_gemv", "--extra3 512,327680 --arm leech_p14s", "--extra3" }, /* past 4 side warps (bits 16-18) */
        { "tune_gemv", "--extra3 1,917504 --arm leech_p14s", "--extra3" }, /* 6 side warps beside the int8 bit */
        { "tune_gemv", "--extra3 2097152 --arm leech_p14s", "--extra3" },  /* past bit 20 (the 3-bit form) */
        { "tune_gemv", "--extra3 1376256 --arm leech_p14s3", "--extra3" }, /* 5 side warps beside the 3-bit bit */
        { "tune_gemv", "--extra4 2,9x --arm leech_p14s", "--extra4" },
        { "tune_gemv", "--arm leech_p14 --model m.lrt", "--model" },
        { "tune_gemv", "--arm leech_p14s --copies 0", "--copies" },
        { "tune_gemv", "--arm f16 --vary-side", "--vary-side" },          /* a Planes14S arm only */
        { "tune_gemv", "--arm leech_p14s --model m.lrt --ball", "--model" }, /* the model's blocks or the ball's */
        { "bench_engine", "-n 12z", "-n" },
        { "bench_rotation", "--widths 5120,abc", "--widths" },
        { "bench_rotation", "--reps 0", "--reps" },
        { "bench_rotation", "--modes singel", "--modes: unknown name 'singel'" }, /* once measured nothing, exit 0 */
        { "bench_rotation", "--models 14b", "--models: unknown name '14b'" },
        { "bench_rotation", "--layer-us 14B=abc", "--layer-us" },                 /* once atof: 0 */
        { "bench_load", "--runs -3", "--runs" },
        { "bench_load", "--runs 200", "--runs" }, /* once silently 3 */
        { "bench_load", "-c nope", "unknown synthetic config" },
        { "bench_unfold", "--rows 1e3", "--rows" },
        { "cache", "warm --threads many", "--threads" },
        { "cache", "warm --models 14b --dry-run", "unknown model '14b'" },       /* planned nothing, said ok */
        { "cache", "warm --models '14B, 32B' --dry-run", "unknown model ' 32B'" },
        { "cache", "--dir /tmp trim abc", "cache trim: needs a size" },          /* read as 0 MB: emptied */
        { "cache", "--dir /tmp trim 17592186044416", "cache trim: needs a size" }, /* wrapped to 0 */
        { "cache", "warm --smem-budget 99999999999", "--smem-budget" },
        { "gen_synthetic", "--gain-bits 7", "--gain-bits" },
        { "gen_synthetic", "-c tiny -o t.lrt --seed abc", "--seed" }, /* strtoull alone took it as 0 */
        { "gen_synthetic", "-c tiny -o t.lrt --seed -5x", "--seed" },
        { "import", "--gguf m.gguf -o o.lrt --gain-bits ''", "--gain-bits" },
        { "import", "--gguf m.gguf -o o.lrt --gain-bits 4294967297", "--gain-bits" }, /* wrapped to 1 as an int */
        { "import", "--gguf m.gguf -o o.lrt --threads 4294967296", "--threads" },      /* wrapped to 0: all cores */
        { "import", "--gguf m.gguf -o o.lrt --calib-tokens 12k", "--calib-tokens" },
        { "import", "--gguf m.gguf -o o.lrt --layers -2", "--layers" },
        { "import", "--gguf m.gguf -o o.lrt --seed 1.5", "--seed" },
        { "import", "--gguf m.gguf -o o.lrt --quant-layers 1:5x", "--quant-layers" }, /* sscanf took it */
        { "gen_synthetic", "-c micro -o t.lrt --align 3", "--align" },                  /* refused only at write time */
        { "gen_synthetic", "--bogus", "unknown option --bogus" },                        /* not "needs a value" */
        { "ppl", "-m m.lrt -f t.txt -c ' 4'", "-c" },                                   /* strtol skipped the blank */
        { "leechrt", "-n +4", "-n" },
        { "inspect", "m.lrt --threads", "--threads needs a value" },                     /* not "unknown option" */
        { "import", "--gguf m.gguf -o o.lrt --bogus", "unknown option --bogus" }, /* last: not "needs a value" */
        { "gen_synthetic", "-c tiny -o t.lrt --o-rotation half", "--o-rotation" },
        { "gen_synthetic", "-c tiny -o t.lrt --residual twisted", "--residual" },
        { "import", "--gguf m.gguf -o o.lrt --o-rotation heads2", "--o-rotation" },
        { "import", "--gguf m.gguf -o o.lrt --residual twisted", "--residual" },
        { "import", "--gguf m.gguf -o o.lrt --residual rotated --no-rotate", "--residual" },
        { "inspect", "--threads x model.lrt", "--threads" },
        { "leech_encode_bench", "--threads 0", "--threads" },
        { "leech_mse_bench", "--gain-bits 5", "--gain-bits" },
        { "leech_mse_bench", "--seed x1", "--seed" },
        { "import", "--gguf m.gguf -o o.lrt --refit most", "--refit" },
        { "import", "--gguf m.gguf -o o.lrt --refit scales", "--refit" }, /* without --gptq */
        { "leechrt", "--layout planes12", "--layout" },
        { "import", "--gguf m.gguf -o o.lrt --gptq c.txt --gptq-damp 0", "--gptq-damp" },
        { "import", "--gguf m.gguf -o o.lrt --gptq-damp 0.1", "--gptq-damp" }, /* without --gptq */
        { "import", "--gguf m.gguf -o o.lrt --gptq c.txt --gptq-target best", "--gptq-target" },
        { "import", "--gguf m.gguf -o o.lrt --gptq-target teacher", "--gptq-target" }, /* without --gptq */
        { "import", "--gguf m.gguf -o o.lrt --gptq c.txt --gptq-target teacher --target-damp 0", "--target-damp" },
        { "import", "--gguf m.gguf -o o.lrt --gptq c.txt --gptq-target teacher --target-damp 1e", "--target-damp" },
        { "import", "--gguf m.gguf -o o.lrt --gptq c.txt --gptq-target own --target-damp 0.1", "--target-damp" },
        { "import", "--gguf m.gguf -o o.lrt --target-damp 0.1", "--target-damp" }, /* without --gptq */
        { "import", "--gguf m.gguf -o o.lrt --gptq c.txt --gptq-damp x", "--gptq-damp" },
        { "bench_engine", "--layout p14", "--layout" },
        { "bench_engine", "--residual twisted", "--residual" },
        { "bench_engine", "-m m.lrt --residual plain", "--residual" }, /* the artifact has its own */
        { "bench_engine", "--env LEECHRT_FUSE", "--env" },
        { "bench_engine", "--env =4", "--env" },
        { "bench_engine", "--env LEECHRT_FUSE=", "--env" },
        { "bench_engine", "--env A=1 --env B=1 --env C=1 --env D=1 --env E=1", "--env" }, /* at most 4 */
        { "bench_engine", "--timeline-ctas c.csv", "--timeline" }, /* the per-CTA rows need the per-launch ones */
    };
    int tested = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char path[1200], err[4096];
        snprintf(path, sizeof path, "%s/%s", g_bin, c[i].prog);
        if (access(path, X_OK) != 0) continue;
        tested++;
        int rc = run(c[i].prog, c[i].args, err, sizeof err);
        T_ASSERT(rc == 2, "%s %s exited %d: %s", c[i].prog, c[i].args, rc, err);
        T_ASSERT(strstr(err, c[i].flag), "%s %s: the message does not name %s: %s", c[i].prog, c[i].args, c[i].flag,
                 err);
    }
    T_ASSERT(tested >= 10, "only %d cases found programs", tested);
    {
        /* warming a cache that cannot be written reports failure (it said "1 compiled" and kept nothing) */
        char f[] = "/tmp/lrnotadir.XXXXXX", args[128], err[4096], path[1200];
        snprintf(path, sizeof path, "%s/cache", g_bin);
        int fd = mkstemp(f);
        T_ASSERT(fd >= 0, "mkstemp");
        close(fd);
        snprintf(args, sizeof args, "--dir %s warm --models none", f);
        const int rc = access(path, X_OK) == 0 ? run("cache", args, err, sizeof err) : 1;
        unlink(f);
        T_ASSERT(rc == 1 && (access(path, X_OK) != 0 || strstr(err, "not writable")), "cache %s: exit %d: %s", args, rc,
                 err);
    }
    /* Planes14S's settings from the environment: garbage is refused by name
       before any GPU work (LEECHRT_GEMV_I8 takes 0 or 1) */
    static const char *bad_env[][2] = { { "LEECHRT_GEMV_I8", "2" }, { "LEECHRT_GEMV_I8", "yes" }, { "LEECHRT_GEMV_SIDE", "5" },
                                        { "LEECHRT_GEMV_C3", "2" } };
    for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
        char path[1200], err[4096];
        snprintf(path, sizeof path, "%s/bench_gemv", g_bin);
        if (access(path, X_OK) != 0) break;
        setenv(bad_env[i][0], bad_env[i][1], 1);
        int rc = run("bench_gemv", "--models 14B", err, sizeof err);
        unsetenv(bad_env[i][0]);
        T_ASSERT(rc == 2 && strstr(err, bad_env[i][0]), "bench_gemv with %s=%s: exit %d: %s", bad_env[i][0], bad_env[i][1],
                 rc, err);
    }
    /* an --env value past bench_engine's 1023 characters is refused, not cut */
    char path[1200], err[4096], args[1200] = "--env X=";
    snprintf(path, sizeof path, "%s/bench_engine", g_bin);
    if (access(path, X_OK) == 0) {
        memset(args + 8, '1', 1100);
        args[1108] = 0;
        int rc = run("bench_engine", args, err, sizeof err);
        T_ASSERT(rc == 2 && strstr(err, "--env"), "a 1100-character --env value: exit %d: %.200s", rc, err);
    }
    return T_PASS;
}

/* Regression: --matrices layer_fused alone crashed bench_gemv (the fused
 * layer reads o and down, which were not prepared). Needs a GPU. */
static int test_bench_gemv_layer_fused_alone(void)
{
    char path[1200], err[4096];
    snprintf(path, sizeof path, "%s/bench_gemv", g_bin);
    T_SKIP_IF(access(path, X_OK) != 0, "no bench_gemv");
    int rc = run("bench_gemv", "--models 4B --arms noweights --matrices layer_fused --reps 3", err, sizeof err);
    T_SKIP_IF(rc == 1 && (strstr(err, "driver") || strstr(err, "device")), "no GPU");
    T_ASSERT(rc == 0, "bench_gemv --matrices layer_fused exited %d: %s", rc, err);
    return T_PASS;
}

/* tools/gpu/h200.sh ARGS with its OUT in a fresh temporary folder, removed
 * after (empty: the refusals below write nothing); -1 if mkdtemp fails. */
static int run_h200(const char *args, char *err, size_t n)
{
    char out[] = "/tmp/lrh200.XXXXXX";
    if (!mkdtemp(out)) return -1;
    setenv("OUT", out, 1);
    int rc = run("../../tools/gpu/h200.sh", args, err, n);
    unsetenv("OUT");
    rmdir(out);
    return rc;
}

/* The GPU machine's script refuses a form of tune-engine, or a model of
 * engine or controls, it does not know before it builds or runs anything
 * (its OUT in a temporary folder). */
static int test_h200_tune_engine_form(void)
{
    char err[4096];
    int rc = run_h200("tune-engine 8B p14x", err, sizeof err);
    T_ASSERT(rc == 2 && strstr(err, "FORM is p14s or p14s3"), "tune-engine 8B p14x: exit %d, %s", rc, err);
    /* engine checks every model name before the first artifact is written */
    rc = run_h200("engine 8B,7B", err, sizeof err);
    T_ASSERT(rc == 2 && strstr(err, "not 7B"), "engine 8B,7B: exit %d, %s", rc, err);
    /* and controls its model */
    rc = run_h200("controls 7B", err, sizeof err);
    T_ASSERT(rc == 2 && strstr(err, "not 7B"), "controls 7B: exit %d, %s", rc, err);
    /* and timeline its model */
    rc = run_h200("timeline 7B", err, sizeof err);
    T_ASSERT(rc == 2 && strstr(err, "not 7B"), "timeline 7B: exit %d, %s", rc, err);
    return T_PASS;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static size_t read_text(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = 0;
    if (f) fclose(f);
    return k;
}

/* tools/gpu/engine_rows.sh: the engine's step decides which sweep rows reach the
 * table. The fastest variant's rows (exit 0), the table itself (header only,
 * exit 3), an entry with no sweep row (nothing written, exit 1), a missing file. */
static int test_engine_rows(void)
{
    char d[] = "/tmp/lrrows.XXXXXX", e[300], w[300], o[300], er[300], cmd[2000], out[4096], err[4096];
    T_ASSERT(mkdtemp(d), "mkdtemp");
    snprintf(e, sizeof e, "%s/engine.csv", d), snprintf(w, sizeof w, "%s/sweep.csv", d);
    snprintf(o, sizeof o, "%s/out", d), snprintf(er, sizeof er, "%s/err", d);
    static const char sweep[] =
        "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err,threads,rpw,"
        "unroll,extra0,extra1,tile,minb,extra2,extra3,extra4\n"
        "d,c,H,leech_p14s3@model@pdl,8B,qkv,6144,4096,3.6,6.70,,,1e-08,672,1,2,1,1,1,1,0,200728,0\n"
        "d,c,H,leech_p14s3@model@pdl,8B,qkv,6144,4096,3.6,6.60,,,1e-08,672,1,2,1,1,1,1,0,4120,0\n"
        "d,c,H,leech_p14s3_swiglu@model@pdl,8B,gateup,24576,4096,3.6,18.6,,,1e-08,768,1,2,1,1,1,0,0,268800,0\n";
    static const char *const engine[] = {
        /* the slower chain pick loses in the engine: the first variant's two rows
           (bench_engine's columns since the tuning_rows one; the other cases the older ones) */
        "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err,tok_s,variant,"
        "tuning_rows\n"
        "d,c,H,read_bound,,probe,,,,,4600.0,100.0,,,,\n" /* bench_engine's first row since the sixty-seventh session */
        "d,c,H,engine_leech,8B,step,,,,2117,,,,472.4,\"LEECHRT_TUNE=-\",H (9 rows)\n"
        "d,c,H,engine_leech,8B,gemv_qkv,,,,234,,,,,\"LEECHRT_TUNE=-\",H (9 rows)\n"
        "d,c,H,engine_leech,8B,step,,,,2033,,,,491.8,\"LEECHRT_TUNE=leech_p14s3:6144x4096=672/1/2/1/1/1/1/0/200728/0;"
        "leech_p14s3_swiglu:24576x4096=768/1/2/1/1/1/0/0/268800/0\",H (9 rows)\n"
        "d,c,H,engine_leech,8B,step,,,,2061,,,,485.2,\"LEECHRT_TUNE=leech_p14s3:6144x4096=672/1/2/1/1/1/1/0/4120/0\","
        "H (9 rows)\n",
        /* the table wins */
        "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err,tok_s,variant\n"
        "d,c,H,engine_leech,8B,step,,,,2117,,,,492.4,\"LEECHRT_TUNE=-\"\n"
        "d,c,H,engine_leech,8B,step,,,,2061,,,,485.2,\"LEECHRT_TUNE=leech_p14s3:6144x4096=672/1/2/1/1/1/1/0/4120/0\"\n",
        /* the winner names a geometry the sweep never timed */
        "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err,tok_s,variant\n"
        "d,c,H,engine_leech,8B,step,,,,2117,,,,472.4,\"LEECHRT_TUNE=-\"\n"
        "d,c,H,engine_leech,8B,step,,,,2061,,,,495.0,\"LEECHRT_TUNE=leech_p14s3:6144x4096=640/1/2/1/1/1/1/0/4120/0\"\n",
        /* rows of two layouts are not compared */
        "date,commit,device,arm,model,matrix,rows,cols,bits_per_weight,us,gbps,pct_read_bound,max_rel_err,tok_s,variant\n"
        "d,c,H,engine_leech,8B,step,,,,2117,,,,472.4,\"LEECHRT_TUNE=-\"\n"
        "d,c,H,engine_leech_p14s,8B,step,,,,2061,,,,495.0,\"LEECHRT_TUNE=-\"\n",
    };
    const int want_rc[] = { 0, 3, 1, 1 }, want_rows[] = { 2, 0, 0, 0 };
    int ok = write_text(w, sweep) == 0;
    for (int i = 0; i < 4 && ok; i++) {
        T_ASSERT(write_text(e, engine[i]) == 0, "write %s", e);
        snprintf(cmd, sizeof cmd, "%s/../../tools/gpu/engine_rows.sh %s %s >%s 2>%s", g_bin, e, w, o, er);
        int st = system(cmd), rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        read_text(o, out, sizeof out), read_text(er, err, sizeof err);
        int lines = 0;
        for (const char *p = out; *p; p++) lines += *p == '\n';
        T_ASSERT(rc == want_rc[i], "case %d: exit %d, want %d: %s", i, rc, want_rc[i], err);
        if (rc == 1) {
            T_ASSERT(!out[0], "case %d: wrote output although it failed: %s", i, out);
            T_ASSERT(i != 2 || strstr(err, "no sweep row for leech_p14s3:6144x4096=640/"), "case 2: %s", err);
        } else {
            T_ASSERT(!strncmp(out, "date,commit,", 12) && lines == 1 + want_rows[i], "case %d: %d lines: %s", i, lines, out);
        }
        if (i == 0) T_ASSERT(strstr(out, ",200728,0\n") && strstr(out, ",268800,0\n") && !strstr(out, ",4120,0\n"),
                             "case 0: not the winner's rows: %s", out);
    }
    snprintf(cmd, sizeof cmd, "%s/../../tools/gpu/engine_rows.sh %s/none.csv %s >%s 2>%s", g_bin, d, w, o, er);
    int st = system(cmd);
    read_text(er, err, sizeof err);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(err, "none.csv"), "a missing file: %s", err);
    unlink(e), unlink(w), unlink(o), unlink(er), rmdir(d);
    T_ASSERT(ok, "write %s", w);
    return T_PASS;
}

/* The artifact's residual form and tied head: rotated_residual and tied_head
 * of its config (-1, -1 when it does not open). */
static void residual_of(const char *path, int *rres, int *tied)
{
    lr_model *m;
    *rres = *tied = -1;
    if (lr_model_open(path, LR_MODEL_SKIP_DATA, &m) != LR_OK) return;
    *rres = lr_model_cfg(m)->rotated_residual, *tied = lr_model_cfg(m)->tied_head;
    lr_model_close(m);
}

/* The rotated residual is the default of gen_synthetic and import (since
 * the forty-fifth session); --residual plain, and for import --no-rotate or
 * a hidden width without a rotation (2112 = 64 x 33: odd factor past 31),
 * give the plain one. A tied source head is written untied only when rotated. */
static int test_residual_defaults(void)
{
    char dir[256], args[1024], err[4096], out[400];
    int rres, tied;
    tl_tmpdir(dir, sizeof dir, "clires");
    T_ASSERT(dir[0], "mkdtemp");
    static const struct { const char *flags; int want; } g[] = { { "", 1 }, { "--residual plain", 0 }, { "--residual rotated", 1 } };
    for (int i = 0; i < 3; i++) {
        snprintf(out, sizeof out, "%s/g%d.lrt", dir, i);
        snprintf(args, sizeof args, "-c micro --threads 2 -o %s %s", out, g[i].flags);
        int rc = run("gen_synthetic", args, err, sizeof err);
        T_ASSERT(rc == 0, "gen_synthetic %s: exit %d: %s", args, rc, err);
        residual_of(out, &rres, &tied);
        T_ASSERT(rres == g[i].want, "gen_synthetic %s: rotated_residual %d, want %d", args, rres, g[i].want);
    }
    static const struct { int hidden, tied; const char *flags; int want_rres, want_tied; } c[] = {
        { 128, 1, "", 1, 0 }, { 128, 1, "--residual plain", 0, 1 }, { 128, 1, "--no-rotate", 0, 1 },
        { 128, 0, "", 1, 0 }, { 2112, 0, "", 0, 0 },
    };
    for (int i = 0; i < 5; i++) {
        char hf[300];
        snprintf(hf, sizeof hf, "%s/hf%d", dir, i);
        snprintf(out, sizeof out, "%s/i%d.lrt", dir, i);
        lr_model_config cfg = tm_config("qwen3", c[i].tied);
        cfg.hidden = (uint32_t)c[i].hidden, cfg.n_layers = 1;
        tmodel m;
        tm_make(&m, &cfg, 7 + (uint64_t)i);
        int wrc = tm_write_hf(&m, hf, "BF16", 1, NULL);
        tm_free(&m);
        T_ASSERT(wrc == 0, "write %s", hf);
        snprintf(args, sizeof args, "--hf %s -o %s --threads 2 %s", hf, out, c[i].flags);
        int rc = run("import", args, err, sizeof err);
        T_ASSERT(rc == 0, "import %s: exit %d: %s", args, rc, err);
        residual_of(out, &rres, &tied);
        T_ASSERT(rres == c[i].want_rres && tied == c[i].want_tied, "import %s (hidden %d%s): rotated_residual %d tied %d, "
                 "want %d %d", args, c[i].hidden, c[i].tied ? ", tied" : "", rres, tied, c[i].want_rres, c[i].want_tied);
    }
    tl_rmrf(dir);
    return T_PASS;
}

/* gen_synthetic --tokenizer checks the file before writing: not a tokenizer.json, or more
 * tokens than the model's vocabulary, is refused and no model is left behind (any file was
 * embedded and failed only when a run loaded it). The demo model's tokenizer (512 tokens)
 * fits tiny (vocab 512) and not micro (64). */
static int test_synthetic_tokenizer_checked(void)
{
    char dir[256], args[1024], err[4096], out[400], bad[300], tj[300], demo[1024];
    tl_tmpdir(dir, sizeof dir, "clitok");
    T_ASSERT(dir[0], "mkdtemp");
    setenv("LEECHRT_CACHE_DIR", dir, 1);
    int created;
    T_OK(lr_demo_model_ensure(demo, sizeof demo, &created));
    lr_model *m;
    char *json;
    size_t n;
    T_OK(lr_model_open(demo, 0, &m));
    int rc = lr_model_tokenizer_json(m, &json, &n);
    lr_model_close(m);
    T_OK(rc);
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    snprintf(bad, sizeof bad, "%s/notes.txt", dir);
    FILE *f = fopen(tj, "wb"), *g = fopen(bad, "wb");
    T_ASSERT(f && g, "temp files");
    fwrite(json, 1, n, f), fputs("hello, not json\n", g);
    fclose(f), fclose(g);
    static const struct { const char *cfg, *file, *says; int rc; } c[] = {
        { "micro", "notes.txt", "notes.txt", 1 }, { "micro", "tokenizer.json", "past the model's vocabulary", 1 },
        { "tiny", "tokenizer.json", NULL, 0 },
    };
    for (int i = 0; i < 3; i++) {
        snprintf(out, sizeof out, "%s/s%d.lrt", dir, i);
        snprintf(args, sizeof args, "-c %s --threads 2 -o %s --tokenizer %s/%s", c[i].cfg, out, dir, c[i].file);
        rc = run("gen_synthetic", args, err, sizeof err);
        T_ASSERT(rc == c[i].rc && (!c[i].says || strstr(err, c[i].says)), "gen_synthetic %s: exit %d: %s", args, rc, err);
        T_ASSERT((access(out, F_OK) == 0) == (c[i].rc == 0), "gen_synthetic %s: model file %s", args,
                 access(out, F_OK) == 0 ? "left behind" : "missing");
    }
    /* The file is read once: from a FIFO, which gives its bytes once, the model is the
       one the plain file gave (the check and the write each opened the path: the second
       open waited for a writer that had gone, the tool hung). */
    char fifo[300], cmd[2048];
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    T_ASSERT(mkfifo(fifo, 0600) == 0, "mkfifo");
    const pid_t w = fork();
    T_ASSERT(w >= 0, "fork");
    if (w == 0) { /* the writer: the text once */
        const int fd = open(fifo, O_WRONLY);
        _exit(fd >= 0 && write(fd, json, n) == (ssize_t)n && close(fd) == 0 ? 0 : 1);
    }
    snprintf(out, sizeof out, "%s/fifo.lrt", dir);
    snprintf(cmd, sizeof cmd, "timeout 60 %s/gen_synthetic -c tiny --threads 2 -o %s --tokenizer %s >/dev/null 2>&1 </dev/null",
             g_bin, out, fifo);
    const int st = system(cmd);
    kill(w, SIGKILL); /* (a writer still waiting for a reader) */
    waitpid(w, NULL, 0);
    free(json);
    T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "gen_synthetic --tokenizer FIFO: status %d", st);
    void *a = NULL, *b = NULL;
    size_t an = 0, bn = 0;
    snprintf(args, sizeof args, "%s/s2.lrt", dir);
    T_OK(lr_read_file(args, &a, &an));
    T_OK(lr_read_file(out, &b, &bn));
    const int same = an == bn && !memcmp(a, b, an);
    free(a), free(b);
    T_ASSERT(same, "the model from a FIFO (%zu bytes) differs from the plain file's (%zu)", bn, an);
    unsetenv("LEECHRT_CACHE_DIR");
    tl_rmrf(dir);
    return T_PASS;
}

/* inspect --verify draws no progress bar into a non-terminal stderr (its
 * progress struct was once never started: garbage, or a crash under ASan),
 * and two models are refused rather than all but the last ignored. */
static int test_inspect_verify_and_one_model(void)
{
    char dir[256], m[300], args[1024], err[4096];
    tl_tmpdir(dir, sizeof dir, "cliinsp");
    T_ASSERT(dir[0], "mkdtemp");
    snprintf(m, sizeof m, "%s/m.lrt", dir);
    snprintf(args, sizeof args, "-c micro --threads 2 -o %s", m);
    T_ASSERT(run("gen_synthetic", args, err, sizeof err) == 0, "gen_synthetic: %s", err);
    snprintf(args, sizeof args, "--verify --quiet %s", m);
    int rc = run("inspect", args, err, sizeof err);
    T_ASSERT(rc == 0 && !err[0], "inspect --verify: exit %d, stderr '%s'", rc, err);
    snprintf(args, sizeof args, "--verify %s %s/none.lrt", m, dir);
    rc = run("inspect", args, err, sizeof err);
    T_ASSERT(rc == 2 && strstr(err, "none.lrt") && strstr(err, "one model"), "two models: exit %d: %s", rc, err);
    tl_rmrf(dir);
    return T_PASS;
}

/* The first line of `BIN/prog args` on stdout, into out. */
static int run_out(const char *prog, const char *args, char *out, size_t n)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s/%s %s 2>/dev/null </dev/null", g_bin, prog, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    out[0] = 0;
    if (!fgets(out, (int)n, p)) out[0] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* tokenize --bos: the BOS first where the tokenizer asks for one, nothing
 * added where it does not (the demo tokenizer, Qwen3's habits). */
static int test_tokenize_bos(void)
{
    char dir[256], tj[300], dj[300], args[1024], plain[512], with[512];
    tl_tmpdir(dir, sizeof dir, "clibos");
    T_ASSERT(dir[0], "mkdtemp");
    snprintf(tj, sizeof tj, "%s/bos.json", dir);
    snprintf(dj, sizeof dj, "%s/demo.json", dir);
    const int32_t bos = t_write_bos_tokenizer(tj);
    T_ASSERT(bos >= 0, "tokenizer: %s", lr_errmsg());
    char *json;
    size_t n;
    T_OK(lr_demo_tokenizer_json(&json, &n));
    FILE *f = fopen(dj, "wb");
    T_ASSERT(f, "demo.json");
    fwrite(json, 1, n, f), fclose(f), free(json);
    snprintf(args, sizeof args, "-t %s -p 'the cat' --ids", tj);
    T_ASSERT(run_out("tokenize", args, plain, sizeof plain) == 0 && plain[0], "tokenize %s", args);
    snprintf(args, sizeof args, "-t %s -p 'the cat' --ids --bos", tj);
    T_ASSERT(run_out("tokenize", args, with, sizeof with) == 0, "tokenize %s", args);
    char want[600];
    snprintf(want, sizeof want, "%d %s", bos, plain);
    T_ASSERT(!strcmp(with, want), "--bos gave '%s', want '%s'", with, want);
    snprintf(args, sizeof args, "-t %s -p 'the cat' --ids", dj);
    T_ASSERT(run_out("tokenize", args, plain, sizeof plain) == 0, "tokenize %s", args);
    snprintf(args, sizeof args, "-t %s -p 'the cat' --ids --bos", dj);
    T_ASSERT(run_out("tokenize", args, with, sizeof with) == 0 && !strcmp(with, plain),
             "--bos on a tokenizer without BOS: '%s' against '%s'", with, plain);
    tl_rmrf(dir);
    return T_PASS;
}

int main(int argc, char **argv)
{
    snprintf(g_bin, sizeof g_bin, "%s", argv[0]);
    char *slash = strrchr(g_bin, '/');
    if (slash) snprintf(slash, sizeof g_bin - (size_t)(slash - g_bin), "/../bin");
    static const t_case cases[] = { T_CASE(test_help_and_unknown_flags), T_CASE(test_bad_numbers_refused),
                                    T_CASE(test_bench_gemv_layer_fused_alone), T_CASE(test_h200_tune_engine_form),
                                    T_CASE(test_engine_rows), T_CASE(test_residual_defaults),
                                    T_CASE(test_synthetic_tokenizer_checked), T_CASE(test_tokenize_bos), T_CASE(test_inspect_verify_and_one_model) };
    return t_main(__FILE__, cases, (int)(sizeof cases / sizeof cases[0]), argc, argv);
}
