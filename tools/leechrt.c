/* leechrt: the launcher. Generates text from a model file through the public
 * API (rt/leechrt.h), streaming tokens as they come; with no -m it runs the
 * demo model (rt/demo_model.h), generating it on first use. */
#include "util/args.h"
#include "util/program.h"
#include "util/read_file.h"
#include "util/stdout_check.h"
#include "rt/demo_model.h"
#include "rt/leechrt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: leechrt [-m MODEL] [-p PROMPT | -f FILE] [-n TOKENS] [--cpu] [--temp T] [--top-k K] [--top-p P]\n"
            "               [-s SEED] [--chat | --no-chat] [--system S] [--no-think] [-c N] [-t N] [--ignore-eos]\n"
            "               [--layout planes14s3|planes14s|planes14]\n"
            "Generates text with a leechrt model file, printing tokens as they come; tokens/s and\n"
            "time to first token go to standard error at the end.\n"
            "  -m, --model MODEL  model file (.lrt); without it, a tiny demo model with random\n"
            "                     weights is generated into the cache folder on first run (its text\n"
            "                     is meaningless: it only shows that everything runs)\n"
            "  -p, --prompt TEXT  prompt (default \"Once upon a time\")\n"
            "  -f, --file FILE    prompt read from FILE (its bytes as they are; - for standard input)\n"
            "  -n, --tokens N     tokens to generate at most (default 128; stops earlier at end of text;\n"
            "                     -1: until end of text or a full context)\n"
            "      --ignore-eos   do not stop at end of text\n"
            "      --cpu          run on the CPU reference engine (exact, slow) instead of the GPU\n"
            "      --temp T       temperature (default 0.7; 0 = greedy)\n"
            "      --top-k K      sample among the K most likely tokens (default 40; 0 = all)\n"
            "      --top-p P      sample from the smallest set with probability >= P (default 0.9; 1 = all)\n"
            "  -s, --seed S       random seed (default: the time; printed at the end)\n"
            "      --chat         wrap the prompt in the ChatML chat template (the default when the\n"
            "                     tokenizer has <|im_start|> and <|im_end|>)\n"
            "      --no-chat      use the prompt as raw text\n"
            "      --system S     system prompt (chat template)\n"
            "      --no-think     Qwen3: start the reply with an empty <think></think> block\n"
            "  -c, --ctx N        context length (default: the model's)\n"
            "  -t, --threads N    CPU engine threads (default: all cores; at most the CPUs)\n"
            "      --layout L     GPU: VRAM layout of the 2-bit matrices: planes14s3 (3-bit codes, ~3.6\n"
            "                     bits per weight), planes14s (4-bit, ~4.8) or planes14 (4.8) (default: per\n"
            "                     matrix, the first of planes14s3 and planes14s that the tuning table\n"
            "                     has for this GPU, else planes14)\n"
            "  -h, --help         this help\n");
}

typedef struct {
    int pieces;
    int write_errno;  /* standard output failed (a full disk, a closed pipe): generation stops */
    const char *echo; /* the raw prompt, printed before the first piece: a prompt the engine
                         refuses (too long for the context) leaves stdout empty */
} out_state;

static int put(out_state *o, const char *text, size_t len)
{
    errno = 0;
    int bad = len && fwrite(text, 1, len, stdout) != len;
    if (fflush(stdout) != 0 || bad) {
        o->write_errno = errno ? errno : EIO;
        return 1;
    }
    return 0;
}

static int on_token(void *user, int32_t id, const char *text, size_t len)
{
    out_state *o = user;
    (void)id;
    if (o->echo) {
        const char *e = o->echo;
        o->echo = NULL;
        if (put(o, e, strlen(e))) return 1;
    }
    if (put(o, text, text ? len : 0)) return 1; /* (the launcher refuses a model without tokenizer) */
    o->pieces++;
    return 0;
}

static int parse_num(const char *flag, const char *v, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "leechrt: %s %s: expected a number in [%g, %g]\n", flag, v, lo, hi);
        return 0;
    }
    *out = x;
    return 1;
}

int main(int argc, char **argv)
{
    lr_program_init("leechrt");
    const char *model = NULL, *prompt = "Once upon a time", *system = NULL;
    double temp = 0.7, top_p = 0.9;
    int ntok = 128, top_k = 40, ctx = 0, threads = 0, seeded = 0, printed = 0;
    unsigned long long seed = 0;
    int cpu = 0, chat = -1, no_think = 0, ignore_eos = 0, layout = LR_LAYOUT_DEFAULT;
    const char *prompt_file = NULL;
    char *file_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--cpu")) { cpu = 1; continue; }
        if (!strcmp(a, "--chat")) { chat = 1; continue; }
        if (!strcmp(a, "--no-chat")) { chat = 0; continue; }
        if (!strcmp(a, "--no-think")) { no_think = 1; continue; }
        if (!strcmp(a, "--ignore-eos")) { ignore_eos = 1; continue; }
        /* llama.cpp's short forms: -s seed, -c context, -t threads, -f prompt file */
        if (!strcmp(a, "-s")) a = "--seed";
        else if (!strcmp(a, "-c")) a = "--ctx";
        else if (!strcmp(a, "-t")) a = "--threads";
        else if (!strcmp(a, "-f")) a = "--file";
        static const char *const valued[] = { "-m", "--model", "-p", "--prompt", "-n", "--tokens", "--temp", "--top-k",
                                              "--top-p", "--seed", "--system", "--ctx", "--threads", "--layout", "--file",
                                              NULL };
        if (!lr_arg_in(a, valued)) { fprintf(stderr, "leechrt: unknown option %s (see --help)\n", a); return 2; }
        if (!v) { fprintf(stderr, "leechrt: %s needs a value (see --help)\n", a); return 2; }
        i++;
        int ok = 1;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) prompt = v;
        else if (!strcmp(a, "--system")) system = v;
        else if (!strcmp(a, "--file")) prompt_file = v;
        else if (!strcmp(a, "-n") || !strcmp(a, "--tokens")) {
            ok = !lr_arg_int("leechrt", a, v, -1, 1000000000, &ntok);
            if (ok && ntok == 0) fprintf(stderr, "leechrt: %s 0: nothing to generate (-1: no limit)\n", a), ok = 0;
        }
        else if (!strcmp(a, "--temp")) ok = parse_num(a, v, 0, 100, &temp);
        else if (!strcmp(a, "--top-k")) ok = !lr_arg_int("leechrt", a, v, 0, 1000000000, &top_k);
        else if (!strcmp(a, "--top-p")) {
            /* 0 would be the API's "off" (all tokens), the opposite of a smallest set */
            ok = parse_num(a, v, 0, 1, &top_p);
            if (ok && !(top_p > 0)) fprintf(stderr, "leechrt: --top-p %s: expected (0, 1] (1 = all; --temp 0 for greedy)\n", v), ok = 0;
        }
        else if (!strcmp(a, "--seed")) ok = !lr_arg_u64("leechrt", a, v, &seed), seeded = 1; /* every 64-bit seed exactly */
        else if (!strcmp(a, "--ctx")) ok = !lr_arg_int("leechrt", a, v, 1, 1 << 24, &ctx);
        else if (!strcmp(a, "--threads")) ok = !lr_arg_int("leechrt", a, v, 0, 4096, &threads);
        else if (!strcmp(a, "--layout")) {
            layout = !strcmp(v, "planes14s3")  ? LR_LAYOUT_PLANES14S3
                     : !strcmp(v, "planes14s") ? LR_LAYOUT_PLANES14S
                     : !strcmp(v, "planes14")  ? LR_LAYOUT_PLANES14
                                               : -1;
            if (layout < 0) fprintf(stderr, "leechrt: --layout %s: expected planes14s3, planes14s or planes14\n", v), ok = 0;
        }
        if (!ok) return 2;
    }

    if (prompt_file) {
        /* -f: the prompt is the file's bytes (llama.cpp's -f); '-' is standard input */
        const lr_read_opts ro = { .max = 64 << 20 /* far past any context */, .dash_stdin = 1 };
        void *text;
        size_t len;
        if (lr_read_file_opts(prompt_file, &ro, &text, &len)) {
            fprintf(stderr, "leechrt: -f: %s\n", lr_errmsg());
            return 1;
        }
        prompt = file_text = text;
        if (strlen(prompt) != len) {
            fprintf(stderr, "leechrt: -f %s: the file holds a NUL byte (not text)\n", prompt_file);
            free(file_text);
            return 1;
        }
    }

    char demo[4096];
    if (!model) {
        int created;
        fprintf(stderr, "leechrt: no -m given: using the demo model (tiny, random weights: its text is meaningless)\n");
        if (lr_demo_model_ensure(demo, sizeof demo, &created)) {
            fprintf(stderr, "leechrt: %s\n", lr_errmsg());
            return 1;
        }
        fprintf(stderr, "leechrt: %s %s\n", created ? "generated" : "found", demo);
        model = demo;
    }

    uint64_t s = seeded ? (uint64_t)seed : (uint64_t)time(NULL);
    lr_rt_opts o = { .backend = cpu ? LR_BACKEND_CPU : LR_BACKEND_GPU, .seed = s, .max_context = ctx,
                     .cpu_threads = threads, .leech_layout = layout };
    lr_rt *rt;
    int rc = lr_rt_open(model, &o, &rt);
    if (rc == LR_ENODEV) {
        fprintf(stderr, "leechrt: no usable NVIDIA GPU: run with --cpu for the CPU engine (%s)\n", lr_errmsg());
        return 1;
    }
    if (rc == LR_EUNSUPPORTED && !cpu) {
        fprintf(stderr, "leechrt: the GPU backend cannot run this: run with --cpu for the CPU engine (%s)\n", lr_errmsg());
        return 1;
    }
    if (rc) {
        fprintf(stderr, "leechrt: %s\n", lr_errmsg());
        return 1;
    }
    lr_rt_info info;
    lr_rt_get_info(rt, &info);
    if (!info.has_tokenizer) {
        fprintf(stderr, "leechrt: %s has no tokenizer, which the launcher needs to read the prompt (embed one: "
                        "gen_synthetic --tokenizer FILE; import keeps the source's)\n", model);
        lr_rt_close(rt);
        return 1;
    }
    if (chat < 0) chat = info.chatml;
    if (chat && !info.chatml) {
        /* its markup would be encoded as plain text */
        fprintf(stderr, "leechrt: --chat: %s's tokenizer has no <|im_start|> / <|im_end|> (not a ChatML model)\n", model);
        lr_rt_close(rt);
        return 2;
    }
    if (!chat && (system || no_think))
        fprintf(stderr, "leechrt: warning: --system and --no-think apply to the chat template only (this run has none)\n");
    if (ctx > info.max_context)
        fprintf(stderr, "leechrt: warning: --ctx %d is past %s's %d positions: using %d\n", ctx, model, info.max_context,
                info.max_context);

    int32_t *ids = NULL;
    int n = 0;
    /* the template's markup with special tokens, the prompt itself as plain
     * text; a plain prompt starts with BOS where the model wants one (the
     * ChatML template has its own start, and transformers adds none to it) */
    rc = chat ? lr_rt_tokenize_chat(rt, system, prompt, no_think, &ids, &n)
              : lr_rt_tokenize(rt, prompt, strlen(prompt), LR_TOKENIZE_ADD_BOS, &ids, &n);
    if (rc) goto fail;
    out_state st = { .echo = chat ? NULL : prompt };
    lr_gen_params g = { .max_tokens = ntok < 0 ? 0 : ntok, .temperature = (float)temp, .top_k = top_k,
                        .top_p = (float)top_p, .ignore_eos = ignore_eos, .on_token = on_token, .user = &st };
    rc = lr_rt_generate(rt, ids, n, &g);
    free(ids);
    printed = st.pieces > 0 || (!chat && !st.echo);
    if (rc) goto fail;
    if (st.echo) put(&st, st.echo, strlen(st.echo)); /* (no piece came: still the prompt first) */
    free(file_text); /* (the prompt's last use) */
    file_text = NULL;
    printf("\n");
    if (lr_stdout_check("leechrt", st.write_errno)) {
        lr_rt_close(rt);
        return 1;
    }
    lr_rt_stats ss;
    lr_rt_get_stats(rt, &ss);
    fprintf(stderr, "[%s, %s] %d prompt tokens, %d generated in %.2f s: %.2f tokens/s, time to first token %.3f s",
            info.name, info.backend, ss.prompt_tokens, ss.generated, ss.total_s, ss.decode_tok_s, ss.ttft_s);
    if (ss.launches_per_token > 0) fprintf(stderr, ", %.0f launches/token", ss.launches_per_token);
    fprintf(stderr, " (seed %llu%s)\n", (unsigned long long)s,
            ss.stop == LR_STOP_CONTEXT ? ", context full" : ss.stop == LR_STOP_EOS ? ", end of text" : "");
    lr_rt_close(rt);
    return 0;
fail:
    if (!printed) {
        fprintf(stderr, "leechrt: %s\n", lr_errmsg());
    } else {
        /* after text was printed: on a line of its own, with what reproduces the run */
        lr_rt_stats ss;
        lr_rt_get_stats(rt, &ss);
        fprintf(stderr, "\nleechrt: %s (after %d generated tokens; seed %llu)\n", lr_errmsg(), ss.generated,
                (unsigned long long)s);
    }
    free(file_text);
    lr_rt_close(rt);
    return 1;
}
