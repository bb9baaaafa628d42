/* tokenize: encode text with a tokenizer.json(.gz) or GGUF tokenizer, or decode ids. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loader/tokenizer/tokenizer.h"
#include "util/err.h"
#include "util/program.h"
#include "util/read_file.h"
#include "util/stdout_check.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tokenize -t TOKENIZER [-p TEXT | -f FILE] [--ids] [--no-special] [--bos] [--time]\n"
            "       tokenize -t TOKENIZER --decode 1,2,3\n"
            "\n"
            "Encodes TEXT (or FILE, or standard input) and prints one line per token:\n"
            "id, then the token's bytes as a quoted string. Decodes a comma-separated id\n"
            "list back to text.\n"
            "\n"
            "  -t, --tokenizer PATH  tokenizer.json, tokenizer.json.gz or a .gguf file\n"
            "  -p, --prompt TEXT     text to encode\n"
            "  -f, --file FILE       file to encode ('-' for standard input)\n"
            "      --ids             print only the ids, space-separated, on one line\n"
            "      --no-special      encode special tokens (<|im_start|>, ...) as plain text\n"
            "      --bos             the BOS token first when the tokenizer asks for one, as the\n"
            "                        launcher feeds a plain prompt (Llama; Qwen3 asks for none);\n"
            "                        a tokenizer_config.json beside the file counts, as import reads it\n"
            "      --decode IDS      decode a comma-separated id list and print the text\n"
            "      --time            report load and encode time on standard error\n"
            "  -h, --help            this help\n");
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The text to encode: a file or "-" for standard input, read whole (up to
 * 1 GiB; a folder or a failing read is an error, not an empty text). */
static char *read_all(const char *path, size_t *len)
{
    const lr_read_opts o = { .max = (size_t)1 << 30, .dash_stdin = 1 };
    void *data;
    if (lr_read_file_opts(path, &o, &data, len)) {
        fprintf(stderr, "tokenize: %s\n", lr_errmsg());
        return NULL;
    }
    return data;
}

static void print_quoted(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') printf("\\n");
        else if (c == '\r') printf("\\r");
        else if (c == '\t') printf("\\t");
        else if (c < 0x20 || c == 0x7F) printf("\\x%02x", c);
        else putchar(c);
    }
    putchar('"');
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int main(int argc, char **argv)
{
    lr_program_init("tokenize");
    const char *tpath = NULL, *prompt = NULL, *file = NULL, *decode = NULL;
    int ids_only = 0, special = 1, timing = 0, bos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if ((!strcmp(a, "-t") || !strcmp(a, "--tokenizer")) && more) tpath = argv[++i];
        else if ((!strcmp(a, "-p") || !strcmp(a, "--prompt")) && more) prompt = argv[++i];
        else if ((!strcmp(a, "-f") || !strcmp(a, "--file")) && more) file = argv[++i];
        else if (!strcmp(a, "--decode") && more) decode = argv[++i];
        else if (!strcmp(a, "--ids")) ids_only = 1;
        else if (!strcmp(a, "--no-special")) special = 0;
        else if (!strcmp(a, "--time")) timing = 1;
        else if (!strcmp(a, "--bos")) bos = 1;
        else { fprintf(stderr, "tokenize: bad argument '%s'\n", a); usage(stderr); return 2; }
    }
    if (!tpath) { fprintf(stderr, "tokenize: -t TOKENIZER is required\n"); usage(stderr); return 2; }
    if (prompt && file) { fprintf(stderr, "tokenize: give -p or -f, not both\n"); return 2; }

    double t0 = now();
    lr_tok *tok;
    int rc = ends_with(tpath, ".gguf") ? lr_tok_load_gguf(tpath, &tok) : lr_tok_load_hf(tpath, &tok);
    if (rc) { fprintf(stderr, "tokenize: %s\n", lr_errmsg()); return 1; }
    if (timing) fprintf(stderr, "load: %.3f s, vocab %d\n", now() - t0, (int)lr_tok_vocab_size(tok));

    if (decode) {
        lr_tok_ids v = {0};
        for (const char *p = decode; *p;) {
            char *end;
            errno = 0;
            long id = strtol(p, &end, 10);
            if (end == p || errno || id < INT32_MIN || id > INT32_MAX) {
                fprintf(stderr, "tokenize: bad id list at '%s'\n", p);
                return 2;
            }
            v.n++;
            int32_t *ids = realloc(v.ids, v.n * sizeof *ids);
            if (!ids) { fprintf(stderr, "tokenize: out of memory\n"); return 1; }
            v.ids = ids;
            v.ids[v.n - 1] = (int32_t)id;
            p = *end == ',' ? end + 1 : end;
            if ((*end && *end != ',') || (*end == ',' && !end[1])) { /* (a trailing comma was taken) */
                fprintf(stderr, "tokenize: bad id list at '%s'\n", end);
                return 2;
            }
        }
        char *text;
        size_t len;
        if (lr_tok_decode(tok, v.ids, v.n, 0, &text, &len)) { fprintf(stderr, "tokenize: %s\n", lr_errmsg()); return 1; }
        fwrite(text, 1, len, stdout);
        putchar('\n');
        free(text);
        free(v.ids);
        lr_tok_free(tok);
        return lr_stdout_check("tokenize", 0);
    }

    size_t len;
    char *text;
    if (prompt) {
        len = strlen(prompt);
        text = strdup(prompt);
    } else {
        text = read_all(file ? file : "-", &len);
    }
    if (!text) return 1;
    lr_tok_ids v = {0};
    if (bos && lr_tok_add_bos(tok) && lr_tok_bos(tok) >= 0 && lr_tok_ids_push(&v, lr_tok_bos(tok))) {
        fprintf(stderr, "tokenize: %s\n", lr_errmsg());
        return 1;
    }
    t0 = now();
    if (lr_tok_encode(tok, text, len, special, &v)) { fprintf(stderr, "tokenize: %s\n", lr_errmsg()); return 1; }
    double dt = now() - t0;
    if (timing)
        fprintf(stderr, "encode: %zu bytes -> %zu tokens in %.3f s (%.1f MB/s)\n", len, v.n, dt,
                len / (dt > 0 ? dt : 1e-9) / 1e6);
    for (size_t i = 0; i < v.n; i++) {
        if (ids_only) { printf(i ? " %d" : "%d", (int)v.ids[i]); continue; }
        size_t n;
        const char *s = lr_tok_token(tok, v.ids[i], &n);
        printf("%d\t", (int)v.ids[i]);
        print_quoted(s ? s : "", n);
        putchar('\n');
    }
    if (ids_only) putchar('\n');
    free(text);
    lr_tok_ids_free(&v);
    lr_tok_free(tok);
    return lr_stdout_check("tokenize", 0);
}
