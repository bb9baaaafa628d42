/* leechrt: the public C API. Open a model file, turn text into tokens,
 * generate with a callback per token, read the timing, close.
 *
 *     lr_rt *rt;
 *     lr_rt_opts o = { .backend = LR_BACKEND_CPU, .seed = 1 };
 *     if (lr_rt_open("model.lrt", &o, &rt)) { fprintf(stderr, "%s\n", lr_errmsg()); ... }
 *     int32_t *ids; int n;
 *     lr_rt_tokenize(rt, "Hello", 5, 0, &ids, &n);
 *     lr_gen_params g = { .max_tokens = 32, .temperature = 0.7f, .on_token = print_piece };
 *     lr_rt_generate(rt, ids, n, &g);
 *     free(ids);
 *     lr_rt_close(rt);
 *
 * Every function returning int but lr_rt_position (a count) returns an
 * lr_status (util/err.h): LR_OK, or a code with a one-line message in
 * lr_errmsg() (thread-local); a NULL where such a function needs a pointer
 * (the handle, an output) is LR_EINVAL. The void functions and lr_rt_position
 * do nothing (or report zeros) on a NULL handle. Strings in lr_rt_info live
 * until lr_rt_close. A process runs on one GPU: a second device is refused. A handle is
 * used by one thread at a time, any thread (not necessarily the one that
 * opened it); handles in different threads run side by side, and GPU opens
 * take their turn (they read process-wide settings from the environment). */
#ifndef LEECHRT_H
#define LEECHRT_H
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lr_rt lr_rt;

enum lr_backend {
    LR_BACKEND_GPU = 0, /* the default; LR_ENODEV without a usable NVIDIA GPU */
    LR_BACKEND_CPU = 1, /* the reference engine: exact, slow */
};

enum lr_leech_layout {
    LR_LAYOUT_DEFAULT = 0,    /* per matrix: the fastest tuned for this GPU (Planes14S3, then
                                 Planes14S), else Planes14 */
    LR_LAYOUT_PLANES14 = 1,   /* 4.8 b/w records: class, gain, sign and level planes */
    LR_LAYOUT_PLANES14S = 2,  /* 4-bit codes into a signed class-table pool, exceptions per row */
    LR_LAYOUT_PLANES14S3 = 3, /* the same blocks in 3-bit codes, ~3.6 b/w */
};

typedef struct lr_rt_opts {
    int backend;            /* enum lr_backend */
    uint64_t seed;          /* sampling seed: same seed, same calls, same tokens */
    int max_context;        /* tokens the context holds; 0 (or past the model's) = the model's
                               maximum; negative: LR_EINVAL */
    int device;             /* GPU ordinal */
    int cpu_threads;        /* CPU backend threads; 0 = all cores */
    size_t cpu_cache_bytes; /* CPU backend: memory for f32 weight copies; 0 = half the free memory */
    int skip_verify;        /* skip the data checksums at open (structure is always validated) */
    int leech_layout;       /* GPU backend: VRAM layout of Leech matrices (enum lr_leech_layout) */
} lr_rt_opts;

/* LR_EIO (no file), LR_EFORMAT (not a valid model), LR_ENODEV (GPU backend,
 * no GPU), LR_EUNSUPPORTED (something this build cannot run). */
int lr_rt_open(const char *path, const lr_rt_opts *opts, lr_rt **out);
void lr_rt_close(lr_rt *rt);

typedef struct lr_rt_info {
    const char *path, *name, *arch;
    const char *backend;    /* "cpu", "gpu" */
    int vocab, n_layers, hidden, max_context;
    int has_tokenizer;      /* 0: tokenize/decode fail; ids still work */
    int chatml;             /* the tokenizer has <|im_start|> / <|im_end|>: an instruct (ChatML) model */
    int32_t eos;            /* the model's end-of-sequence id, -1 when none */
    int32_t bos;            /* the tokenizer's beginning-of-sequence id, -1 when none */
    int add_bos;            /* 1: prompts start with bos (LR_TOKENIZE_ADD_BOS adds it) */
} lr_rt_info;
void lr_rt_get_info(const lr_rt *rt, lr_rt_info *info);

/* lr_rt_tokenize's flags; 0 is plain text with nothing added. */
enum {
    LR_TOKENIZE_SPECIAL = 1, /* <|im_start|> and the like in text become their ids (chat templates) */
    LR_TOKENIZE_ADD_BOS = 2, /* the model's BOS first, when its tokenizer asks for one (info.add_bos:
                                Llama models; not Qwen3): what a prompt and a perplexity window want */
};
/* Text to ids (*ids malloc'd, free it). flags: LR_TOKENIZE_* (other bits
 * are refused with LR_EINVAL). */
int lr_rt_tokenize(lr_rt *rt, const char *text, size_t len, int flags, int32_t **ids, int *n);
/* An instruct model's prompt (LR_EUNSUPPORTED for a tokenizer without
 * ChatML's markup: info.chatml 0): the ChatML template (rt/chat.h) around an
 * optional system prompt (NULL or "" = none) and one user turn, ready for
 * generation (no_think: Qwen3's empty thinking block). Only the template's
 * markup is encoded with special tokens: "<|im_end|>" inside system or user
 * stays plain text, so a message cannot close its turn or open another.
 * (Each piece is encoded on its own: a text that starts with a newline can
 * split at the markup's "\n" where the whole string would merge them.) */
int lr_rt_tokenize_chat(lr_rt *rt, const char *system, const char *user, int no_think, int32_t **ids, int *n);
/* Ids to text (*text malloc'd, NUL-terminated; specials skipped, and ids the
 * model has rows for but the tokenizer no token, as Qwen3's padding rows;
 * an id outside the model's vocabulary is LR_ERANGE). */
int lr_rt_decode(lr_rt *rt, const int32_t *ids, int n, char **text, size_t *len);

/* Called once per generated token with the text it completes: valid UTF-8,
 * NUL-terminated (len is its length), often empty (a character split across
 * tokens is held until complete; special tokens give none). When generation
 * ends at a stop token or a full context, a last call with id -1 carries held
 * bytes of an unfinished character as U+FFFD; after a stop by max_tokens or
 * by the callback they stay held, and a next lr_rt_generate with n = 0
 * finishes the character (a prompt, lr_rt_eval or lr_rt_reset drops them).
 * Return nonzero to stop (no id -1 call follows). text is NULL when the model
 * has no tokenizer. */
typedef int (*lr_token_fn)(void *user, int32_t id, const char *text, size_t len);

enum lr_stop_reason { LR_STOP_NONE = 0, LR_STOP_EOS, LR_STOP_LENGTH, LR_STOP_CONTEXT, LR_STOP_CALLBACK };

typedef struct lr_gen_params {
    int max_tokens;         /* tokens to generate at most (<= 0: until a stop token or a full context) */
    float temperature;      /* 0: greedy; finite, >= 0 */
    int top_k;              /* 0 (or >= vocab): off; >= 0 */
    float top_p;            /* 0 or 1: off; in [0, 1] (outside: LR_EINVAL) */
    int ignore_eos;         /* do not stop at end-of-sequence tokens */
    lr_token_fn on_token;   /* may be NULL */
    void *user;
} lr_gen_params;

/* Appends prompt[0..n) to the context and generates after it. The context
 * carries over between calls (a chat continues where it stopped; the last
 * token sampled, stop token included, is fed first next time); lr_rt_reset
 * empties it (it does not reseed the sampler: the same seed gives the same
 * tokens for the same calls since open). n may be 0 when the context is not
 * empty. A prompt that does not fit the context is LR_ERANGE; running out of
 * context while generating just stops (LR_STOP_CONTEXT): the last token
 * sampled then has no position (lr_rt_position stays at the maximum) and
 * further generate and eval calls are LR_ERANGE until lr_rt_reset. */
int lr_rt_generate(lr_rt *rt, const int32_t *prompt, int n, const lr_gen_params *p);
int lr_rt_reset(lr_rt *rt);
/* One step by hand (perplexity, scoring): appends token, returns the
 * next-token logits (vocab floats, valid until the next call on rt). */
int lr_rt_eval(lr_rt *rt, int32_t token, const float **logits);
/* Tokens in the context, the last token sampled counted once it has a
 * position (it is fed first by the next call). */
int lr_rt_position(const lr_rt *rt);

typedef struct lr_rt_stats {   /* of the last lr_rt_generate (all zero after one refused) */
    int prompt_tokens, generated;
    double ttft_s;             /* call to first token sampled (prompt processing included) */
    double prefill_tok_s;      /* prompt tokens per second */
    double decode_tok_s;       /* tokens per second after the first */
    double total_s;
    double launches_per_token; /* GPU kernel launches per decode step; 0 on the CPU */
    int stop;                  /* enum lr_stop_reason */
} lr_rt_stats;
void lr_rt_get_stats(const lr_rt *rt, lr_rt_stats *s);

/* Debugging two backends against each other: fn sees the residual stream
 * after every layer of every step (layer -1: embedding, n_layers: after the
 * final norm). NULL turns it off. */
void lr_rt_set_layer_hook(lr_rt *rt, void (*fn)(void *user, int layer, int pos, const float *x, int n), void *user);

#endif
