/* ppl: perplexity of a model over a text file, in non-overlapping windows of
 * -c tokens. Each window starts from an empty context; every token after the
 * first is scored by the log-probability the model gave it:
 *     ppl = exp( -(1/N) * sum log p(t[i+1] | t[0..i]) ).
 * A model whose tokenizer asks for BOS (Llama) has it as each window's first
 * position, and then the window's first text token is scored too. */
#include "rt/leechrt.h"
#include "util/args.h"
#include "util/progress.h"
#include "util/program.h"
#include "util/read_file.h"
#include "util/stdout_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ppl -m MODEL -f TEXT [-c TOKENS] [--cpu] [--windows N] [--threads N]\n"
            "Perplexity of MODEL over the text file TEXT, in non-overlapping windows of -c tokens\n"
            "(each scored from an empty context; a text shorter than one window is one window;\n"
            "a model that wants BOS, as Llama, has it first in each window).\n"
            "Prints the perplexity and tokens/s.\n"
            "  -m, --model MODEL  model file (.lrt) with a tokenizer\n"
            "  -f, --file TEXT    text file ('-' for standard input)\n"
            "  -c, --ctx N        window length in tokens (default 512)\n"
            "      --cpu          CPU reference engine instead of the GPU\n"
            "      --windows N    score at most N windows (default: all)\n"
            "  -t, --threads N    CPU engine threads (default: all cores)\n"
            "  -h, --help         this help\n");
}

/* The text to score: a file or "-" for standard input, read whole (up to
 * 1 GiB; a folder or a failing read is an error, not a shorter text). */
static char *read_text(const char *path, size_t *n)
{
    const lr_read_opts o = { .max = (size_t)1 << 30, .dash_stdin = 1 };
    void *data;
    if (lr_read_file_opts(path, &o, &data, n)) {
        fprintf(stderr, "ppl: %s\n", lr_errmsg());
        return NULL;
    }
    return data;
}

/* -log softmax(logits)[target], in f64. */
static double nll(const float *logits, int vocab, int32_t target)
{
    double mx = logits[0], s = 0;
    for (int i = 1; i < vocab; i++) mx = logits[i] > mx ? logits[i] : mx;
    for (int i = 0; i < vocab; i++) s += exp((double)logits[i] - mx);
    return log(s) + mx - logits[target];
}

int main(int argc, char **argv)
{
    lr_program_init("ppl");
    const char *model = NULL, *file = NULL;
    long ctx = 512, maxw = 0, threads = 0;
    int cpu = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--cpu")) { cpu = 1; continue; }
        if (!strcmp(a, "-t")) a = "--threads"; /* llama.cpp's and the launcher's short form */
        int known = !strcmp(a, "-m") || !strcmp(a, "--model") || !strcmp(a, "-f") || !strcmp(a, "--file") ||
                    !strcmp(a, "-c") || !strcmp(a, "--ctx") || !strcmp(a, "--windows") || !strcmp(a, "--threads");
        if (!known) { fprintf(stderr, "ppl: unknown option %s (see --help)\n", a); return 2; }
        if (!v) { fprintf(stderr, "ppl: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) file = v;
        else {
            int x; /* strict: digits only (strtol took " 4" and "+4") */
            const int ctxflag = !strcmp(a, "-c") || !strcmp(a, "--ctx");
            if (lr_arg_int("ppl", a, v, ctxflag ? 2 : 0, 1 << 24, &x)) return 2;
            if (!strcmp(a, "-c") || !strcmp(a, "--ctx")) ctx = x;
            else if (!strcmp(a, "--windows")) maxw = x;
            else threads = x;
        }
    }
    if (!model || !file) { usage(stderr); return 2; }

    size_t len;
    char *text = read_text(file, &len);
    if (!text) return 1;
    lr_rt_opts o = { .backend = cpu ? LR_BACKEND_CPU : LR_BACKEND_GPU, .max_context = (int)ctx,
                     .cpu_threads = (int)threads };
    lr_rt *rt;
    int rc = lr_rt_open(model, &o, &rt);
    if (rc) {
        fprintf(stderr, "ppl: %s%s\n", lr_errmsg(),
                !cpu && (rc == LR_ENODEV || rc == LR_EUNSUPPORTED) ? "; run with --cpu for the CPU engine" : "");
        free(text);
        return 1;
    }
    lr_rt_info info;
    lr_rt_get_info(rt, &info);
    int32_t *ids = NULL;
    int n = 0;
    rc = lr_rt_tokenize(rt, text, len, 0, &ids, &n);
    free(text);
    if (rc) goto fail;
    if (n < 2) {
        fprintf(stderr, "ppl: %s has %d tokens; need at least 2\n", file, n);
        lr_rt_close(rt);
        free(ids);
        return 1;
    }
    if (ctx > info.max_context) {
        fprintf(stderr, "ppl: warning: -c %ld is past %s's %d positions: windows of %d\n", ctx, model, info.max_context,
                info.max_context);
        ctx = info.max_context;
    }
    if (ctx < 2) {
        /* a window scores ctx - 1 tokens (BOS and ctx - 1 text tokens, or ctx text tokens after the first) */
        fprintf(stderr, "ppl: %s holds %d position%s; a window of 2 is the least that scores a token\n", model,
                info.max_context, info.max_context == 1 ? "" : "s");
        lr_rt_close(rt);
        free(ids);
        return 1;
    }
    /* A model that wants BOS (info.add_bos: Llama) gets it at the start of
     * every window: BOS and ctx - 1 text tokens, every one of them scored.
     * Without, ctx text tokens, all but the first scored. (llama.cpp's
     * perplexity writes BOS over each chunk's first token and scores only
     * the chunk's second half: its numbers are not these.) */
    const int bos = info.add_bos;
    const long room = ctx - bos;
    long win = n < room ? n : room, nwin = n < room ? 1 : n / room;
    if (maxw > 0 && nwin > maxw) nwin = maxw;
    double sum = 0, t0 = lr_now();
    long scored = 0, evaluated = 0;
    for (long w = 0; w < nwin; w++) {
        const int32_t *t = ids + w * win;
        if ((rc = lr_rt_reset(rt))) goto fail;
        if (bos) {
            const float *logits;
            if ((rc = lr_rt_eval(rt, info.bos, &logits))) goto fail;
            sum += nll(logits, info.vocab, t[0]);
            scored++;
            evaluated++;
        }
        for (long i = 0; i + 1 < win; i++) {
            const float *logits;
            if ((rc = lr_rt_eval(rt, t[i], &logits))) goto fail;
            sum += nll(logits, info.vocab, t[i + 1]);
            scored++;
            evaluated++;
        }
        double el = lr_now() - t0;
        fprintf(stderr, "\rppl: window %ld/%ld: ppl %.4f, %.1f tokens/s", w + 1, nwin, exp(sum / scored),
                el > 0 ? evaluated / el : 0);
    }
    double el = lr_now() - t0;
    fprintf(stderr, "\n");
    printf("%s: %s (%s): ppl %.4f over %ld tokens (%ld windows of %ld%s), %.1f tokens/s\n", file, info.name,
           info.backend, exp(sum / scored), scored, nwin, win, bos ? " after BOS" : "", el > 0 ? evaluated / el : 0);
    free(ids);
    lr_rt_close(rt);
    return lr_stdout_check("ppl", 0);
fail:
    fprintf(stderr, "\nppl: %s\n", lr_errmsg());
    free(ids);
    lr_rt_close(rt);
    return 1;
}
