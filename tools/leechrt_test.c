/* The built launcher and ppl programs, run as a user would: --help, bad
 * flags, the demo model on first run, seeded output, the no-GPU message, a
 * missing model, perplexity of a small text. The programs are found beside
 * this test's build folder (BUILD/test/x -> BUILD/bin/), or in $LEECHRT_BIN. */
#include "rt/cu.h"
#include "loader/synthetic.h"
#include "rt/leechrt.h"
#include "test/bos_tokenizer.h"
#include "test/spm_tokenizer.h"
#include "test/t.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_bin[4096], g_tmp[] = "/tmp/lr-launcher-test-XXXXXX";

static int find_bin(void)
{
    if (g_bin[0]) return 1;
    if (!t_bin_dir(g_bin, sizeof g_bin)) return 0;
    if (!mkdtemp(g_tmp)) return 0;
    setenv("LEECHRT_CACHE_DIR", g_tmp, 1); /* the demo model lands here, not in ~/.cache */
    return 1;
}

/* Runs `BIN/prog args`, returns the exit status; stdout and stderr are kept
 * in out/err (NUL-terminated, truncated). */
static int run(const char *prog_args, char *out, size_t on, char *err, size_t en)
{
    char cmd[8192], fo[4200], fe[4200];
    snprintf(fo, sizeof fo, "%s/stdout", g_tmp);
    snprintf(fe, sizeof fe, "%s/stderr", g_tmp);
    snprintf(cmd, sizeof cmd, "%s/%s >%s 2>%s </dev/null", g_bin, prog_args, fo, fe);
    int st = system(cmd);
    const char *files[2] = { fo, fe };
    char *bufs[2] = { out, err };
    size_t ns[2] = { on, en };
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "rb");
        size_t k = f ? fread(bufs[i], 1, ns[i] - 1, f) : 0;
        bufs[i][k] = 0;
        if (f) fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char out[65536], err[65536];

static int test_help_and_bad_flags(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    T_ASSERT(run("leechrt --help", out, sizeof out, err, sizeof err) == 0, "--help: %s", err);
    T_ASSERT(strstr(out, "usage: leechrt") && strstr(out, "--cpu") && strstr(out, "--top-p"), "help text: %s", out);
    T_ASSERT(run("leechrt --frobnicate", out, sizeof out, err, sizeof err) == 2, "bad flag exit code");
    T_ASSERT(strstr(err, "--frobnicate"), "bad flag message: %s", err);
    T_ASSERT(run("leechrt -n", out, sizeof out, err, sizeof err) == 2, "missing value exit code");
    T_ASSERT(run("leechrt --temp hot", out, sizeof out, err, sizeof err) == 2, "bad number exit code");
    /* counts are whole numbers, refused by name otherwise (they were once truncated) */
    static const char *const frac[][2] = { { "-n 1.5", "-n" }, { "--top-k 2.7", "--top-k" }, { "--ctx 3.9", "--ctx" },
                                           { "--threads 1e2", "--threads" }, { "--seed -1", "--seed" },
                                           { "--seed 18446744073709551616", "--seed" } };
    for (size_t i = 0; i < sizeof frac / sizeof frac[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "leechrt --cpu %s", frac[i][0]);
        T_ASSERT(run(cmd, out, sizeof out, err, sizeof err) == 2 && strstr(err, frac[i][1]), "%s: %s", cmd, err);
    }
    T_ASSERT(run("ppl --help", out, sizeof out, err, sizeof err) == 0 && strstr(out, "usage: ppl"), "ppl --help");
    T_ASSERT(run("ppl --bogus", out, sizeof out, err, sizeof err) == 2, "ppl bad flag exit code");
    return T_PASS;
}

static int test_demo_model_seeded(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    static char out2[65536];
    int rc = run("leechrt --cpu -n 12 --seed 9 -p 'the cat'", out, sizeof out, err, sizeof err);
    T_ASSERT(rc == 0, "exit %d: %s", rc, err);
    T_ASSERT(strstr(err, "meaningless") && strstr(err, "generated"), "first run does not say it made the demo model: %s", err);
    T_ASSERT(strstr(err, "tokens/s") && strstr(err, "time to first token"), "no stats line: %s", err);
    rc = run("leechrt --cpu -n 12 --seed 9 -p 'the cat'", out2, sizeof out2, err, sizeof err);
    T_ASSERT(rc == 0 && strstr(err, "found"), "second run: exit %d: %s", rc, err);
    T_ASSERT(!strcmp(out, out2), "same seed, different text:\n%s\n%s", out, out2);
    /* a seed past 2^53 is used and printed exactly (it once went through a double) */
    rc = run("leechrt --cpu -n 2 --seed 9007199254740993 -p 'the cat'", out, sizeof out, err, sizeof err);
    T_ASSERT(rc == 0 && strstr(err, "(seed 9007199254740993"), "exit %d, seed not printed exactly: %s", rc, err);
    rc = run("leechrt --cpu -n 5 --temp 0 --no-chat -p 'once'", out, sizeof out, err, sizeof err);
    T_ASSERT(rc == 0 && !strncmp(out, "once", 4), "raw prompt is echoed: exit %d, %s", rc, out);
    return T_PASS;
}

/* The demo model's path in the test's cache folder, made on first use; 0 when it cannot be. */
static int demo_model(char *model, size_t n)
{
    snprintf(model, n, "%s/models/qwen3-tiny-demo-v1.lrt", g_tmp);
    return access(model, R_OK) == 0 || run("leechrt --cpu -n 1", out, sizeof out, err, sizeof err) == 0;
}

/* Without a GPU the default backend fails in one line that points to --cpu. */
static int test_no_gpu_message(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char model[4200], args[4400];
    T_ASSERT(demo_model(model, sizeof model), "making the demo model: %s", err);
    snprintf(args, sizeof args, "leechrt -m %s -n 2", model);
    int rc = run(args, out, sizeof out, err, sizeof err);
    T_SKIP_IF(rc == 0, "a GPU engine ran");
    T_ASSERT(rc == 1, "exit %d", rc);
    T_ASSERT(strstr(err, "--cpu"), "the message does not suggest --cpu: %s", err);
    T_ASSERT(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
    /* the refusal is right only without a GPU (on one, the launcher must run the demo model) */
    T_ASSERT(!lr_cu_available(), "a GPU is here but the launcher refused the demo model: %s", err);
    return T_PASS;
}

/* Standard output that cannot be written (a full device, a closed descriptor) is an error, and
 * --top-p 0 is refused (the API reads 0 as "off": every token, the opposite of a smallest set). */
static int test_output_errors_and_top_p(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char model[4200], args[4400];
    T_ASSERT(demo_model(model, sizeof model), "making the demo model: %s", err);
    if (access("/dev/full", W_OK) == 0) {
        char cmd[9000], fe[4200];
        snprintf(fe, sizeof fe, "%s/stderr", g_tmp);
        snprintf(cmd, sizeof cmd, "%s/leechrt --cpu -m %s -n 4 --seed 1 -p hi >/dev/full 2>%s", g_bin, model, fe);
        int st = system(cmd);
        FILE *f = fopen(fe, "rb");
        size_t k = f ? fread(err, 1, sizeof err - 1, f) : 0;
        err[k] = 0;
        if (f) fclose(f);
        T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(err, "standard output"),
                 "a full standard output: exit %d, %s", WIFEXITED(st) ? WEXITSTATUS(st) : -1, err);
    }
    snprintf(args, sizeof args, "leechrt --cpu -m %s -n 2 --top-p 0", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 2 && strstr(err, "--top-p"), "--top-p 0: %s", err);
    snprintf(args, sizeof args, "leechrt --cpu -m %s -n 2 --top-p 0.5 --seed 3", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "--top-p 0.5: %s", err);
    return T_PASS;
}

/* A model without tokenizer (gen_synthetic's default) is refused by name, with the way to embed one. */
static int test_model_without_tokenizer(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char args[4400];
    snprintf(args, sizeof args, "gen_synthetic -c micro --threads 2 -o %s/notok.lrt", g_tmp);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "gen_synthetic: %s", err);
    snprintf(args, sizeof args, "leechrt --cpu -m %s/notok.lrt -p hi -n 2", g_tmp);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 1 && strstr(err, "no tokenizer") && strstr(err, "--tokenizer"),
             "a model without tokenizer: %s", err);
    return T_PASS;
}

/* llama.cpp's forms: -f FILE reads the prompt (the same text as -p gives the same output), -s,
 * -c, -t; -n -1 runs to a full context; -n 0 is refused. */
static int test_llama_cpp_flags(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char model[4200], args[9000], pf[4200], first[4096];
    T_ASSERT(demo_model(model, sizeof model), "making the demo model: %s", err);
    snprintf(pf, sizeof pf, "%s/prompt.txt", g_tmp);
    FILE *f = fopen(pf, "w");
    T_ASSERT(f, "prompt file");
    fputs("The cat sat", f), fclose(f);
    snprintf(args, sizeof args, "leechrt --cpu -m %s --no-chat -p 'The cat sat' -n 6 --seed 5", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "-p: %s", err);
    snprintf(first, sizeof first, "%s", out);
    snprintf(args, sizeof args, "leechrt --cpu -m %s --no-chat -f %s -n 6 -s 5 -t 1 -c 64", model, pf);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "-f: %s", err);
    T_ASSERT(!strcmp(out, first), "-f and -p gave different text: '%s' against '%s'", out, first);
    snprintf(args, sizeof args, "leechrt --cpu -m %s --no-chat -f %s/none.txt", model, g_tmp);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 1 && strstr(err, "none.txt"), "-f of no file: %s", err);
    /* a folder is named as one (it was "Cannot allocate memory"); '-' and a pipe read to their end */
    snprintf(args, sizeof args, "leechrt --cpu -m %s --no-chat -f %s", model, g_tmp);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 1 && strstr(err, "is a folder"), "-f of a folder: %s", err);
    {
        char cmd[13000], got[4096] = "";
        snprintf(cmd, sizeof cmd, "cat %s | %s/leechrt --cpu -m %s --no-chat -f - -n 6 -s 5 2>/dev/null", pf, g_bin, model);
        FILE *p = popen(cmd, "r");
        T_ASSERT(p, "popen");
        const size_t k = fread(got, 1, sizeof got - 1, p);
        got[k] = 0;
        T_ASSERT(pclose(p) == 0 && !strcmp(got, first), "-f - from a pipe: '%s' against '%s'", got, first);
    }
    f = fopen(pf, "wb");
    T_ASSERT(f, "prompt file");
    fwrite("ab\0cd", 1, 5, f), fclose(f);
    snprintf(args, sizeof args, "leechrt --cpu -m %s --no-chat -f %s", model, pf);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 1 && strstr(err, "NUL"), "-f of a file with a NUL: %s", err);
    snprintf(args, sizeof args, "leechrt --cpu -m %s -s abc", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 2 && strstr(err, "--seed"), "-s abc: %s", err);
    snprintf(args, sizeof args, "leechrt --cpu -m %s -c 0", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 2 && strstr(err, "--ctx"), "-c 0: %s", err);
    snprintf(args, sizeof args, "leechrt --cpu -m %s --no-chat -p hi -n -1 -c 20 --ignore-eos --seed 2", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0 && strstr(err, "context full"), "-n -1: %s", err);
    snprintf(args, sizeof args, "leechrt --cpu -m %s -n 0", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 2 && strstr(err, "-n"), "-n 0: %s", err);
    return T_PASS;
}

/* A damaged cached demo model (cut short) is generated again, not reported on every run. */
static int test_demo_model_rebuilt(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char model[4200];
    T_ASSERT(demo_model(model, sizeof model), "making the demo model: %s", err);
    struct stat st0, st1;
    T_ASSERT(stat(model, &st0) == 0 && st0.st_size > 1000, "demo model size");
    T_ASSERT(truncate(model, 1000) == 0, "truncate");
    T_ASSERT(run("leechrt --cpu -n 2 --seed 1", out, sizeof out, err, sizeof err) == 0 && strstr(err, "generating it again"),
             "a damaged demo model: %s", err);
    T_ASSERT(stat(model, &st1) == 0 && st1.st_size == st0.st_size, "rebuilt to %lld bytes, was %lld", (long long)st1.st_size,
             (long long)st0.st_size);
    return T_PASS;
}

static int test_missing_model(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    int rc = run("leechrt --cpu -m /nonexistent/model.lrt", out, sizeof out, err, sizeof err);
    T_ASSERT(rc == 1 && strstr(err, "/nonexistent/model.lrt"), "exit %d: %s", rc, err);
    return T_PASS;
}

/* The perplexity ppl should print, computed here apart from the tool: windows
 * of win text tokens, each from an empty context (bos >= 0: BOS first, and
 * every text token scored; else all but the first), -log softmax in long
 * double. */
static int window_ppl(lr_rt *rt, int vocab, const int32_t *ids, int n, int win, int32_t bos, double *ppl, long *scored)
{
    long double sum = 0;
    *scored = 0;
    for (int w = 0; (w + 1) * win <= n; w++) {
        int rc = lr_rt_reset(rt);
        for (int i = bos >= 0 ? -1 : 0; !rc && i + 1 < win; i++) {
            const float *l;
            if ((rc = lr_rt_eval(rt, i < 0 ? bos : ids[win * w + i], &l))) break;
            long double mx = l[0], z = 0;
            for (int k = 1; k < vocab; k++) mx = l[k] > mx ? l[k] : mx;
            for (int k = 0; k < vocab; k++) z += expl((long double)l[k] - mx);
            sum += logl(z) + mx - l[ids[win * w + i + 1]];
            ++*scored;
        }
        if (rc) return rc;
    }
    *ppl = *scored ? (double)expl(sum / *scored) : 0;
    return 0;
}

static int test_ppl(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char text[4200], model[4200], args[9000];
    snprintf(text, sizeof text, "%s/text.txt", g_tmp);
    snprintf(model, sizeof model, "%s/models/qwen3-tiny-demo-v1.lrt", g_tmp);
    FILE *f = fopen(text, "w");
    T_ASSERT(f, "text file");
    for (int i = 0; i < 6; i++) fprintf(f, "the quick brown fox jumps over the lazy dog. ");
    fclose(f);
    if (access(model, R_OK) != 0 && run("leechrt --cpu -n 1", out, sizeof out, err, sizeof err) != 0)
        T_ASSERT(0, "making the demo model: %s", err);
    snprintf(args, sizeof args, "ppl --cpu -m %s -f %s -c 32", model, text);
    int rc = run(args, out, sizeof out, err, sizeof err);
    T_ASSERT(rc == 0, "exit %d: %s", rc, err);
    double ppl = 0;
    const char *p = strstr(out, "ppl ");
    T_ASSERT(p && sscanf(p, "ppl %lf", &ppl) == 1, "no ppl in: %s", out);
    /* Random weights, 512 tokens: close to uniform, nowhere near 0 or 10^4. */
    T_ASSERT(ppl > 50 && ppl < 5000, "ppl %g", ppl);
    T_ASSERT(strstr(out, "windows of 32") && strstr(out, "tokens/s"), "summary: %s", out);
    {
        /* the same score computed here, apart from the tool: non-overlapping windows of 32
           tokens, each from an empty context, every token after a window's first scored by
           -log softmax (in long double) of the logits before it */
        lr_rt *rt;
        lr_rt_opts o = { .backend = LR_BACKEND_CPU };
        T_OK(lr_rt_open(model, &o, &rt));
        lr_rt_info in;
        lr_rt_get_info(rt, &in);
        FILE *tf = fopen(text, "r");
        char buf[4096];
        const size_t tl = tf ? fread(buf, 1, sizeof buf, tf) : 0;
        if (tf) fclose(tf);
        int32_t *ids;
        int n;
        T_OK(lr_rt_tokenize(rt, buf, tl, 0, &ids, &n));
        long scored = 0;
        double mine = 0;
        T_OK(window_ppl(rt, in.vocab, ids, n, 32, -1, &mine, &scored));
        free(ids);
        lr_rt_close(rt);
        char want[64];
        snprintf(want, sizeof want, "over %ld tokens (%ld windows of 32)", scored, scored / 31);
        T_ASSERT(scored > 0 && strstr(out, want), "the tool's count differs from '%s': %s", want, out);
        T_ASSERT(fabs(mine - ppl) <= 1e-4 * mine, "ppl %.6f from the tool, %.6f recomputed", ppl, mine);
    }
    /* a text that cannot be read is an error naming it, not "0 tokens" */
    snprintf(args, sizeof args, "ppl --cpu -m %s -f %s -c 32", model, g_tmp);
    rc = run(args, out, sizeof out, err, sizeof err);
    T_ASSERT(rc != 0 && strstr(err, g_tmp) && strstr(err, "is a folder"), "a folder as the text: exit %d: %s", rc,
             err);
    /* a model of one position scores nothing: refused, with and without BOS
       (it divided by zero after BOS, printed "ppl -nan over 0 tokens" without) */
    for (int with_bos = 0; with_bos < 2; with_bos++) {
        char one[4200], tok[4200];
        snprintf(one, sizeof one, "%s/ctx1-%d.lrt", g_tmp, with_bos);
        snprintf(tok, sizeof tok, "%s/ctx1-tokenizer.json", g_tmp);
        char *json = NULL;
        size_t jn = 0;
        if (with_bos) T_ASSERT(t_write_bos_tokenizer(tok) >= 0, "BOS tokenizer");
        else T_OK(lr_demo_tokenizer_json(&json, &jn));
        lr_model_config c;
        T_OK(lr_synth_config("tiny", &c));
        c.max_context = 1;
        lr_synth_opts so = { .seed = 5, .nthreads = 2, .align = 64, .gain_bits = 1, .tokenizer = json,
                             .tokenizer_n = jn, .tokenizer_path = with_bos ? tok : NULL };
        rc = lr_synth_write(one, &c, &so);
        free(json);
        T_OK(rc);
        snprintf(args, sizeof args, "ppl --cpu -m %s -f %s -c 32", one, text);
        rc = run(args, out, sizeof out, err, sizeof err);
        T_ASSERT(rc == 1 && strstr(err, "1 position") && !strstr(out, "nan"), "context 1 (BOS %d): exit %d: %s%s",
                 with_bos, rc, out, err);
        unlink(one);
    }
    unlink(text);
    return T_PASS;
}

typedef struct {
    char *buf;
    size_t cap, len;
} text_out;

static int add_text(void *user, int32_t id, const char *text, size_t len)
{
    (void)id;
    text_out *o = user;
    if (o->len + len < o->cap) memcpy(o->buf + o->len, text, len), o->len += len, o->buf[o->len] = 0;
    return 0;
}

/* A prompt the engine refuses (longer than the context) leaves standard
 * output empty: the raw prompt is echoed with the first generated piece, not
 * before generation (it once was, above the error). */
static int test_refused_prompt_prints_nothing(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char model[4200], args[9000], pf[4200];
    T_ASSERT(demo_model(model, sizeof model), "making the demo model: %s", err);
    snprintf(pf, sizeof pf, "%s/long-prompt.txt", g_tmp);
    FILE *f = fopen(pf, "w");
    T_ASSERT(f, "prompt file");
    for (int i = 0; i < 200; i++) fputs("the cat sat on the mat. ", f);
    fclose(f);
    snprintf(args, sizeof args, "leechrt --cpu -t 2 -m %s --no-chat -f %s -c 64 -n 4", model, pf);
    int rc = run(args, out, sizeof out, err, sizeof err);
    T_ASSERT(rc == 1 && !out[0] && strstr(err, "does not fit") && !strstr(err, "seed"),
             "exit %d, stdout '%.60s', stderr: %s", rc, out, err);
    unlink(pf);
    return T_PASS;
}

/* Greedy text after ids from the API (a fresh context), into buf. */
static int api_greedy(lr_rt *rt, const int32_t *ids, int n, int max, char *buf, size_t cap)
{
    text_out o = { buf, cap, 0 };
    buf[0] = 0;
    lr_gen_params g = { .max_tokens = max, .temperature = 0, .ignore_eos = 1, .on_token = add_text, .user = &o };
    return lr_rt_reset(rt) || lr_rt_generate(rt, ids, n, &g);
}

/* A model with a SentencePiece-style tokenizer (Llama 2's tokenizer.json,
 * test/spm_tokenizer.h): the artifact keeps it, the API tokenizes the prompt
 * as worked out by hand ([<s>, ▁hello, ▁world]), and the launcher's text is
 * the prompt then the API's greedy continuation with its leading spaces. */
static int test_spm_model(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char tpath[4200], model[4200], args[13000];
    static char want[4096];
    snprintf(tpath, sizeof tpath, "%s/spm-tokenizer.json", g_tmp);
    snprintf(model, sizeof model, "%s/spm.lrt", g_tmp);
    char *json = t_spm_json(FB, LLAMA2_NORM, NULL, LLAMA2_DEC);
    T_ASSERT(json && lr_write_file_atomic(tpath, json, strlen(json)) == 0, "the tokenizer file");
    free(json);
    snprintf(args, sizeof args, "gen_synthetic -c tiny --threads 2 --tokenizer %s -o %s", tpath, model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "gen_synthetic: %s", err);
    lr_rt *rt;
    lr_rt_opts o = { .backend = LR_BACKEND_CPU, .cpu_threads = 2 };
    T_OK(lr_rt_open(model, &o, &rt));
    int32_t *ids;
    int n;
    T_OK(lr_rt_tokenize(rt, "hello world", 11, LR_TOKENIZE_ADD_BOS, &ids, &n));
    T_ASSERT(n == 3 && ids[0] == SPM_BOS && ids[1] == SPM_SP_HELLO && ids[2] == SPM_SP_WORLD, "%d ids: %d %d ...", n,
             n > 0 ? ids[0] : -1, n > 1 ? ids[1] : -1);
    T_OK(api_greedy(rt, ids, n, 8, want, sizeof want));
    free(ids);
    lr_rt_close(rt);
    snprintf(args, sizeof args, "leechrt --cpu -t 2 -m %s --no-chat --temp 0 --ignore-eos -p 'hello world' -n 8", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "leechrt: %s", err);
    T_ASSERT(!strncmp(out, "hello world", 11) && !strncmp(out + 11, want, strlen(want)) && out[11 + strlen(want)] == '\n',
             "the launcher's text '%s' is not the prompt and the API's '%s'", out, want);
    snprintf(args, sizeof args, "tokenize -t %s --bos --ids -p 'hello world'", tpath);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "tokenize: %s", err);
    T_ASSERT(!strcmp(out, "1 271 276\n"), "tokenize --ids: '%s'", out);
    snprintf(args, sizeof args, "tokenize -t %s --decode 271,276", tpath);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "tokenize --decode: %s", err);
    T_ASSERT(!strncmp(out, "hello world", 11), "tokenize --decode: '%s'", out);
    snprintf(args, sizeof args, "tokenize -t %s -f %s", tpath, g_tmp);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 1 && strstr(err, "is a folder"), "tokenize -f of a folder: %s", err);
    return T_PASS;
}

/* A model whose tokenizer asks for BOS (Llama's habit): the launcher's plain
 * prompt starts with it (its greedy text is the API's after [BOS] + prompt,
 * and an empty prompt runs from BOS alone), and ppl puts it first in every
 * window, scoring each window's first text token too. */
static int test_bos_model(void)
{
    T_ASSERT(find_bin(), "no bin folder");
    char tpath[4200], model[4200], text[4200], args[13000];
    static char want[4096];
    snprintf(tpath, sizeof tpath, "%s/bos-tokenizer.json", g_tmp);
    snprintf(model, sizeof model, "%s/bos.lrt", g_tmp);
    snprintf(text, sizeof text, "%s/bos-text.txt", g_tmp);
    const int32_t bos = t_write_bos_tokenizer(tpath);
    T_ASSERT(bos >= 0, "the tokenizer: %s", lr_errmsg());
    snprintf(args, sizeof args, "gen_synthetic -c tiny --threads 2 --tokenizer %s -o %s", tpath, model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "gen_synthetic: %s", err);
    lr_rt *rt;
    lr_rt_opts o = { .backend = LR_BACKEND_CPU, .cpu_threads = 2 };
    T_OK(lr_rt_open(model, &o, &rt));
    lr_rt_info in;
    lr_rt_get_info(rt, &in);
    T_ASSERT(in.add_bos && in.bos == bos, "info: add_bos %d bos %d", in.add_bos, in.bos);
    int32_t *ids;
    int n;
    T_OK(lr_rt_tokenize(rt, "the cat", 7, LR_TOKENIZE_ADD_BOS, &ids, &n));
    T_ASSERT(n > 1 && ids[0] == bos, "%d ids, first %d", n, ids[0]);
    T_OK(api_greedy(rt, ids, n, 8, want, sizeof want));
    free(ids);
    snprintf(args, sizeof args, "leechrt --cpu -t 2 -m %s --no-chat --temp 0 --ignore-eos -p 'the cat' -n 8", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "leechrt: %s", err);
    T_ASSERT(!strncmp(out, "the cat", 7) && !strncmp(out + 7, want, strlen(want)) && out[7 + strlen(want)] == '\n',
             "the launcher's text '%s' is not the prompt and the API's '%s' after BOS", out, want);
    int32_t only = bos;
    T_OK(api_greedy(rt, &only, 1, 4, want, sizeof want));
    snprintf(args, sizeof args, "leechrt --cpu -t 2 -m %s --no-chat --temp 0 --ignore-eos -p '' -n 4", model);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "an empty prompt: %s", err);
    T_ASSERT(!strncmp(out, want, strlen(want)), "from BOS alone: '%s', want '%s'", out, want);
    /* ppl: windows of BOS + 15 text tokens, all 15 scored */
    FILE *f = fopen(text, "w");
    T_ASSERT(f, "text file");
    for (int i = 0; i < 4; i++) fprintf(f, "a small cat sat on the warm mat. ");
    fclose(f);
    snprintf(args, sizeof args, "ppl --cpu --threads 2 -m %s -f %s -c 16", model, text);
    T_ASSERT(run(args, out, sizeof out, err, sizeof err) == 0, "ppl: %s", err);
    double ppl = 0;
    const char *p = strstr(out, "ppl ");
    T_ASSERT(p && sscanf(p, "ppl %lf", &ppl) == 1, "no ppl in: %s", out);
    FILE *tf = fopen(text, "r");
    char buf[4096];
    const size_t tl = tf ? fread(buf, 1, sizeof buf, tf) : 0;
    if (tf) fclose(tf);
    T_OK(lr_rt_tokenize(rt, buf, tl, 0, &ids, &n));
    long scored = 0;
    double mine = 0;
    T_OK(window_ppl(rt, in.vocab, ids, n, 15, bos, &mine, &scored));
    free(ids);
    lr_rt_close(rt);
    char wantc[96];
    snprintf(wantc, sizeof wantc, "over %ld tokens (%ld windows of 15 after BOS)", scored, scored / 15);
    T_ASSERT(scored > 0 && strstr(out, wantc), "the tool's count differs from '%s': %s", wantc, out);
    T_ASSERT(fabs(mine - ppl) <= 1e-4 * mine, "ppl %.6f from the tool, %.6f recomputed", ppl, mine);
    unlink(text);
    unlink(tpath);
    unlink(model);
    return T_PASS;
}

static int cleanup(void)
{
    if (!g_tmp[0] || g_tmp[strlen(g_tmp) - 1] == 'X') return T_PASS;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    return system(cmd) == 0 ? T_PASS : T_FAIL;
}

T_MAIN(T_CASE(test_help_and_bad_flags), T_CASE(test_demo_model_seeded), T_CASE(test_no_gpu_message),
       T_CASE(test_output_errors_and_top_p), T_CASE(test_model_without_tokenizer), T_CASE(test_llama_cpp_flags), T_CASE(test_demo_model_rebuilt), T_CASE(test_missing_model), T_CASE(test_ppl), T_CASE(test_bos_model), T_CASE(test_spm_model), T_CASE(test_refused_prompt_prints_nothing), T_CASE(cleanup))
