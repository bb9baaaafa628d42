/* The public API (rt/leechrt.h): the model, its tokenizer, a sampler and one
 * engine behind the lr_engine_ops table of the chosen backend. */
#include "rt/leechrt.h"
#include "loader/tokenizer/tokenizer.h"
#include "rt/chat.h"
#include "rt/engine.h"
#include "rt/sampler.h"
#include "kernels/gemv_leech.h"
#include "util/log.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STOP 4

struct lr_rt {
    lr_model *model;
    lr_engine *eng;
    lr_tok *tok;            /* NULL when the artifact has none */
    lr_sampler sampler;
    const float *logits;    /* of the last step; NULL when the context is empty or the step was greedy */
    int32_t greedy_next;    /* the last step's argmax when it was a greedy step; -1 otherwise */
    int32_t pending;        /* sampled, not yet fed to the engine; -1 when none */
    int32_t stop[MAX_STOP];
    int nstop;
    int chatml;
    int add_bos; /* prompts start with the tokenizer's BOS (and the model has its row) */
    lr_tok_stream ts;       /* generated text: a character split across two generate calls stays whole */
    lr_rt_stats stats;
};

static void add_stop(lr_rt *rt, int32_t id)
{
    if (id < 0 || id >= (int32_t)lr_model_cfg(rt->model)->vocab || rt->nstop == MAX_STOP) return;
    for (int i = 0; i < rt->nstop; i++)
        if (rt->stop[i] == id) return;
    rt->stop[rt->nstop++] = id;
}

static int is_stop(const lr_rt *rt, int32_t id)
{
    for (int i = 0; i < rt->nstop; i++)
        if (rt->stop[i] == id) return 1;
    return 0;
}

static int load_tokenizer(lr_rt *rt, const char *path)
{
    int kind;
    const void *blob;
    size_t n;
    int rc = lr_model_tokenizer(rt->model, &kind, &blob, &n);
    if (rc || kind == LR_TOK_NONE) return rc;
    char label[512];
    snprintf(label, sizeof label, "%s: tokenizer", path);
    if ((rc = lr_tok_load_stored(kind, blob, n, label, &rt->tok))) return rc;
    rt->chatml = lr_chat_tokenizer_is_chatml(rt->tok);
    lr_tok_stream_init(&rt->ts, rt->tok, 1);
    /* a BOS the model has no embedding row for would fail every prompt */
    const int32_t bos = lr_tok_bos(rt->tok);
    rt->add_bos = lr_tok_add_bos(rt->tok) && bos >= 0;
    if (rt->add_bos && (uint32_t)bos >= lr_model_cfg(rt->model)->vocab) {
        lr_warn("%s: the tokenizer's BOS %d is past the model's %u embedding rows: no BOS added", label, (int)bos,
                lr_model_cfg(rt->model)->vocab);
        rt->add_bos = 0;
    }
    /* End of sequence: the model's, the tokenizer's, and ChatML's two
     * (Qwen3 instruct ends a turn with <|im_end|>, base text with
     * <|endoftext|>). */
    add_stop(rt, lr_tok_eos(rt->tok));
    if (rt->chatml) {
        add_stop(rt, lr_tok_find(rt->tok, "<|im_end|>", 10));
        add_stop(rt, lr_tok_find(rt->tok, "<|endoftext|>", 13));
    }
    return LR_OK;
}

/* A NULL where the call needs a pointer is the caller's error, answered
   like any other rather than a crash inside the library. */
#define NEED(p) \
    if (!(p)) return LR_FAIL(LR_EINVAL, "%s: %s is NULL", __func__, #p)

int lr_rt_open(const char *path, const lr_rt_opts *opts, lr_rt **out)
{
    NEED(out);
    *out = NULL;
    lr_rt_opts def = { 0 };
    if (!opts) opts = &def;
    if (!path || !*path) return LR_FAIL(LR_EINVAL, "no model path given");
    if (opts->max_context < 0) return LR_FAIL(LR_EINVAL, "max_context %d (0: the model's)", opts->max_context);
    const lr_engine_ops *ops = opts->backend == LR_BACKEND_CPU ? &lr_engine_cpu_ops
                               : opts->backend == LR_BACKEND_GPU ? &lr_engine_gpu_ops
                                                                 : NULL;
    if (!ops) return LR_FAIL(LR_EINVAL, "unknown backend %d", opts->backend);
    lr_rt *rt = calloc(1, sizeof *rt);
    if (!rt) return LR_FAIL(LR_ENOMEM, "out of memory");
    rt->pending = -1;
    rt->greedy_next = -1;
    int rc = lr_model_open(path, opts->skip_verify ? LR_MODEL_SKIP_DATA : 0, &rt->model);
    if (!rc) {
        const lr_model_config *c = lr_model_cfg(rt->model);
        add_stop(rt, c->eos_id == LR_NO_TOKEN ? -1 : (int32_t)c->eos_id);
        rc = load_tokenizer(rt, path);
    }
    if (!rc) {
        lr_sampler_params sp = { 0 };
        rc = lr_sampler_init(&rt->sampler, (int)lr_model_cfg(rt->model)->vocab, &sp, opts->seed);
    }
    if (!rc) {
        _Static_assert((int)LR_LAYOUT_PLANES14 == (int)LR_LEECH_DEV_P14 && (int)LR_LAYOUT_PLANES14S == (int)LR_LEECH_DEV_P14S &&
                           (int)LR_LAYOUT_PLANES14S3 == (int)LR_LEECH_DEV_P14S3 &&
                           (int)LR_LAYOUT_DEFAULT == (int)LR_LEECH_DEV_DEFAULT, "public layout numbers are the engine's");
        lr_engine_opts eo = { opts->max_context, opts->device, opts->cpu_threads, opts->cpu_cache_bytes,
                              opts->leech_layout };
        rc = ops->open(rt->model, &eo, &rt->eng);
    }
    if (rc) {
        lr_rt_close(rt);
        return rc;
    }
    *out = rt;
    return LR_OK;
}

void lr_rt_close(lr_rt *rt)
{
    if (!rt) return;
    if (rt->eng) rt->eng->ops->close(rt->eng);
    lr_sampler_free(&rt->sampler);
    if (rt->tok) lr_tok_stream_free(&rt->ts);
    lr_tok_free(rt->tok);
    lr_model_close(rt->model);
    free(rt);
}

void lr_rt_get_info(const lr_rt *rt, lr_rt_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    if (!rt) return; /* (no handle: all zero, NULL strings) */
    const lr_model_config *c = lr_model_cfg(rt->model);
    info->path = lr_model_path(rt->model);
    info->name = c->name;
    info->arch = c->arch;
    info->backend = rt->eng->ops->name;
    info->vocab = (int)c->vocab;
    info->n_layers = (int)c->n_layers;
    info->hidden = (int)c->hidden;
    info->max_context = rt->eng->max_context;
    info->has_tokenizer = rt->tok != NULL;
    info->chatml = rt->chatml;
    info->eos = rt->nstop ? rt->stop[0] : -1;
    info->bos = rt->tok ? lr_tok_bos(rt->tok) : -1;
    info->add_bos = rt->add_bos;
}

/* ---- text ---- */

static int need_tok(const lr_rt *rt)
{
    NEED(rt);
    if (rt->tok) return LR_OK;
    return LR_FAIL(LR_EINVAL, "%s: the model file has no tokenizer (pass token ids, or embed one with "
                   "gen_synthetic --tokenizer)", lr_model_path(rt->model));
}

int lr_rt_tokenize(lr_rt *rt, const char *text, size_t len, int flags, int32_t **ids, int *n)
{
    NEED(ids);
    NEED(n);
    *ids = NULL;
    *n = 0;
    if (flags & ~(LR_TOKENIZE_SPECIAL | LR_TOKENIZE_ADD_BOS))
        return LR_FAIL(LR_EINVAL, "lr_rt_tokenize: unknown flags 0x%x", (unsigned)flags);
    int rc = need_tok(rt);
    if (rc) return rc;
    lr_tok_ids v = { 0 };
    /* the BOS first, then the text's ids appended after it */
    if ((flags & LR_TOKENIZE_ADD_BOS) && rt->add_bos && (rc = lr_tok_ids_push(&v, lr_tok_bos(rt->tok)))) return rc;
    if ((rc = lr_tok_encode(rt->tok, text, len, flags & LR_TOKENIZE_SPECIAL, &v))) {
        lr_tok_ids_free(&v);
        return rc;
    }
    uint32_t vocab = lr_model_cfg(rt->model)->vocab;
    for (size_t i = 0; i < v.n; i++)
        if ((uint32_t)v.ids[i] >= vocab) {
            rc = LR_FAIL(LR_ERANGE, "%s: the tokenizer gave id %d, past the model's vocabulary of %u",
                         lr_model_path(rt->model), v.ids[i], vocab);
            lr_tok_ids_free(&v);
            return rc;
        }
    *ids = v.ids; /* handed over: lr_tok_ids owns a plain malloc'd array */
    *n = (int)v.n;
    return LR_OK;
}

typedef struct {
    lr_rt *rt;
    int32_t *ids;
    int n, cap;
} chat_ids;

/* one piece of the template: its ids appended, specials only in the markup */
static int chat_piece(void *user, const char *text, int special)
{
    chat_ids *c = user;
    int32_t *ids;
    int n;
    int rc = lr_rt_tokenize(c->rt, text, strlen(text), special, &ids, &n);
    if (rc) return rc;
    if (c->n + n > c->cap) {
        int cap = (c->n + n) * 2 + 16;
        int32_t *m = realloc(c->ids, (size_t)cap * sizeof *m);
        if (!m) {
            free(ids);
            return LR_FAIL(LR_ENOMEM, "chat: out of memory");
        }
        c->ids = m, c->cap = cap;
    }
    if (n) memcpy(c->ids + c->n, ids, (size_t)n * sizeof *ids);
    c->n += n;
    free(ids);
    return LR_OK;
}

int lr_rt_tokenize_chat(lr_rt *rt, const char *system, const char *user, int no_think, int32_t **ids, int *n)
{
    NEED(ids);
    NEED(n);
    *ids = NULL;
    *n = 0;
    NEED(rt);
    NEED(user);
    int rc0 = need_tok(rt);
    if (rc0) return rc0;
    if (!rt->chatml)
        return LR_FAIL(LR_EUNSUPPORTED, "%s: the tokenizer has no <|im_start|> / <|im_end|>: not a ChatML model, "
                       "the template's markup would be plain text", lr_model_path(rt->model));
    lr_chat_msg m[2];
    int nm = 0;
    if (system && *system) m[nm++] = (lr_chat_msg){ "system", system };
    m[nm++] = (lr_chat_msg){ "user", user };
    chat_ids c = { rt, NULL, 0, 0 };
    int rc = lr_chat_render_parts(m, nm, 1, no_think, chat_piece, &c);
    if (rc) {
        free(c.ids);
        return rc;
    }
    *ids = c.ids, *n = c.n;
    return LR_OK;
}

int lr_rt_decode(lr_rt *rt, const int32_t *ids, int n, char **text, size_t *len)
{
    NEED(text);
    NEED(len);
    *text = NULL;
    *len = 0;
    NEED(rt);
    if (n < 0) return LR_FAIL(LR_EINVAL, "decode: %d ids", n); /* as generate refuses n < 0 */
    if (n > 0) NEED(ids);
    int rc = need_tok(rt);
    if (rc) return rc;
    /* ids the model has rows for but the tokenizer no text (Qwen3's padding
       rows, 151,669 to 151,935) decode to nothing, as generate streams them */
    const int32_t tv = lr_tok_vocab_size(rt->tok), mv = (int32_t)lr_model_cfg(rt->model)->vocab;
    int32_t *kept = malloc(((size_t)n + 1) * sizeof *kept);
    if (!kept) return LR_FAIL(LR_ENOMEM, "decode: out of memory");
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] >= tv && ids[i] < mv) continue;
        if (ids[i] < 0 || ids[i] >= mv) {
            free(kept);
            return LR_FAIL(LR_ERANGE, "decode: id %d (at %d) is outside the model's vocabulary [0, %d)", ids[i], i, mv);
        }
        kept[k++] = ids[i];
    }
    rc = lr_tok_decode(rt->tok, kept, k, 1, text, len);
    free(kept);
    return rc;
}

/* ---- steps ---- */

/* What a step's caller needs afterwards: the logits, or only the greedy
 * token (or nothing: a prompt token before the last), which a backend with
 * step_greedy computes on its side, keeping the logits there. */
enum { NEED_LOGITS, NEED_TOKEN };

static int feed(lr_rt *rt, int32_t token, int need)
{
    /* a step the engine refuses before running it (a full context, a token outside the
       vocabulary) leaves the previous step's logits as they were, so a generate after a
       refused eval still continues from them */
    const float *prev = rt->logits;
    const int32_t prev_next = rt->greedy_next;
    rt->logits = NULL;
    rt->greedy_next = -1;
    int rc;
    if (need == NEED_TOKEN && rt->eng->ops->step_greedy) {
        int32_t next;
        rc = rt->eng->ops->step_greedy(rt->eng, token, &next);
        if (!rc) rt->greedy_next = next;
    } else {
        const float *l;
        rc = rt->eng->ops->step(rt->eng, token, &l);
        if (!rc) rt->logits = l;
    }
    if (rc == LR_ERANGE || rc == LR_EINVAL) rt->logits = prev, rt->greedy_next = prev_next;
    return rc;
}

static int feed_pending(lr_rt *rt, int need)
{
    if (rt->pending < 0) return LR_OK;
    int rc = feed(rt, rt->pending, need);
    if (!rc) rt->pending = -1;
    return rc;
}

/* Forgets bytes of an unfinished character held from the last generate. */
static void drop_held(lr_rt *rt)
{
    if (!rt->tok) return;
    lr_tok_stream_free(&rt->ts);
    lr_tok_stream_init(&rt->ts, rt->tok, 1);
}

int lr_rt_eval(lr_rt *rt, int32_t token, const float **logits)
{
    NEED(logits);
    *logits = NULL;
    NEED(rt);
    drop_held(rt); /* held generated bytes would otherwise join text after this token's */
    int rc = feed_pending(rt, NEED_LOGITS);
    if (!rc) rc = feed(rt, token, NEED_LOGITS);
    if (!rc) *logits = rt->logits;
    return rc;
}

int lr_rt_reset(lr_rt *rt)
{
    NEED(rt);
    rt->pending = -1;
    rt->logits = NULL;
    rt->greedy_next = -1;
    drop_held(rt);
    return rt->eng->ops->reset(rt->eng);
}

/* The last token sampled counts once fed, or once it can be: after a stop
   for a full context it has no position left and never will. */
int lr_rt_position(const lr_rt *rt)
{
    return rt ? rt->eng->pos + (rt->pending >= 0 && rt->eng->pos < rt->eng->max_context) : 0;
}

/* Streams text pieces of tokens to the callback; returns nonzero when the
 * callback asks to stop. */
typedef struct {
    lr_rt *rt;
    const lr_gen_params *p;
} emitter;

static int emit(emitter *em, int32_t id, int *stop)
{
    const char *text = NULL;
    size_t len = 0;
    if (em->rt->tok && id < lr_tok_vocab_size(em->rt->tok)) {
        int rc = lr_tok_stream_push(&em->rt->ts, id, &text, &len);
        if (rc) return rc;
    } else if (em->rt->tok) {
        text = ""; /* past the tokenizer (padding rows of the embedding): no text */
    }
    *stop = em->p->on_token && em->p->on_token(em->p->user, id, text, len);
    return LR_OK;
}

int lr_rt_generate(lr_rt *rt, const int32_t *prompt, int n, const lr_gen_params *p)
{
    NEED(rt);
    lr_rt_stats *st = &rt->stats;
    memset(st, 0, sizeof *st); /* a refused call leaves them all zero */
    NEED(p);
    double t0 = lr_now();
    if (n < 0 || (n > 0 && !prompt)) return LR_FAIL(LR_EINVAL, "generate: bad prompt (%d tokens)", n);
    const int pend = rt->pending >= 0, room = rt->eng->max_context - rt->eng->pos;
    if (pend && room == 0)
        return LR_FAIL(LR_ERANGE, "generate: the context is full (%d positions; the last token sampled has none): "
                       "lr_rt_reset starts a new one", rt->eng->max_context);
    if (n > room - pend) /* (n + pend would overflow at INT_MAX) */
        return LR_FAIL(LR_ERANGE, "generate: a prompt of %d tokens does not fit the context (%d of %d used)", n,
                       lr_rt_position(rt), rt->eng->max_context);
    if (!n && !pend && !rt->logits && rt->greedy_next < 0)
        return LR_FAIL(LR_EINVAL, "generate: empty prompt and empty context");
    lr_sampler_params sp = { p->temperature, p->top_k, p->top_p };
    int rc = lr_sampler_set(&rt->sampler, &sp);
    if (rc) return rc;
    uint32_t vocab = lr_model_cfg(rt->model)->vocab;
    for (int i = 0; i < n; i++)
        if ((uint32_t)prompt[i] >= vocab)
            return LR_FAIL(LR_EINVAL, "generate: prompt token %d is %d, outside the vocabulary [0, %u)", i, prompt[i], vocab);

    /* Greedy: the GPU backend's argmax runs on the device and only the token
       comes back. Prompt tokens before the last need no logits at all. */
    const int greedy = lr_sampler_is_greedy(&rt->sampler), last = greedy ? NEED_TOKEN : NEED_LOGITS;
    if ((rc = feed_pending(rt, n > 0 ? NEED_TOKEN : last))) return rc;
    for (int i = 0; i < n && !rc; i++) rc = feed(rt, prompt[i], i + 1 < n ? NEED_TOKEN : last);
    if (rc) return rc;
    if (!rt->logits && (!greedy || rt->greedy_next < 0))
        /* only after a failed greedy generate: its last step left the
           logits on the device */
        return LR_FAIL(LR_EINVAL, "generate: sampling needs the last step's logits, but the context ends in a greedy "
                       "step; give at least one prompt token");
    double t1 = lr_now();
    st->prompt_tokens = n;
    st->prefill_tok_s = n > 0 && t1 > t0 ? n / (t1 - t0) : 0;

    /* Bytes of a character held from the last call continue only into its
       direct continuation: a prompt's text comes between otherwise. */
    if (n > 0) drop_held(rt);
    emitter em = { rt, p };
    double tfirst = t1;
    for (;;) {
        int32_t id = rt->logits ? lr_sampler_sample(&rt->sampler, rt->logits) : rt->greedy_next;
        rt->pending = id;
        if (st->generated == 0) tfirst = lr_now();
        if (!p->ignore_eos && is_stop(rt, id)) { st->stop = LR_STOP_EOS; break; }
        st->generated++;
        int stop = 0;
        if ((rc = emit(&em, id, &stop))) break;
        if (stop) { st->stop = LR_STOP_CALLBACK; break; }
        if (p->max_tokens > 0 && st->generated >= p->max_tokens) { st->stop = LR_STOP_LENGTH; break; }
        if (rt->eng->pos >= rt->eng->max_context) { st->stop = LR_STOP_CONTEXT; break; }
        if ((rc = feed_pending(rt, last))) break;
    }
    /* The text ends at a stop token or a full context: held bytes of an
       unfinished character go out as U+FFFD. After max_tokens or the
       callback's stop they stay held for the next call, which may finish
       the character. */
    if (!rc && rt->tok && (st->stop == LR_STOP_EOS || st->stop == LR_STOP_CONTEXT)) {
        const char *text;
        size_t len;
        rc = lr_tok_stream_flush(&rt->ts, &text, &len);
        if (!rc && len && p->on_token) p->on_token(p->user, -1, text, len);
    }
    double t2 = lr_now();
    st->ttft_s = tfirst - t0;
    st->total_s = t2 - t0;
    st->decode_tok_s = st->generated > 1 && t2 > tfirst ? (st->generated - 1) / (t2 - tfirst) : 0;
    st->launches_per_token = rt->eng->launches_per_step;
    return rc;
}

void lr_rt_get_stats(const lr_rt *rt, lr_rt_stats *s)
{
    if (!s) return;
    if (rt) *s = rt->stats;
    else memset(s, 0, sizeof *s);
}

void lr_rt_set_layer_hook(lr_rt *rt, void (*fn)(void *user, int layer, int pos, const float *x, int n), void *user)
{
    if (!rt) return;
    rt->eng->on_layer = fn;
    rt->eng->on_layer_user = user;
}
