/* The interface every decode backend implements (CPU reference, GPU). The
 * public API (rt/leechrt.h) owns the model, the tokenizer and the sampler and
 * drives an engine only through these four calls, so a backend is one table
 * of function pointers plus its own state.
 *
 * Contract of a step: the engine runs the model on `token` at position
 * e->pos, appends that position's keys and values to its cache, advances
 * e->pos by one and returns the next-token logits (vocab floats, owned by the
 * engine, valid until the next call on it). A step at e->pos == e->max_context
 * fails with LR_ERANGE and changes nothing. reset empties the cache (pos 0)
 * without freeing it. */
#ifndef LR_ENGINE_H
#define LR_ENGINE_H
#include "loader/model.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lr_engine lr_engine;

typedef struct lr_engine_opts {
    int max_context;      /* positions the cache may hold; 0 = the model's max_context */
    int device;           /* GPU ordinal */
    int nthreads;         /* CPU: threads for matvecs and dequantization; 0 = all cores */
    size_t cache_bytes;   /* CPU: budget for f32 copies of the weights; 0 = half the free memory */
    int leech_layout;     /* GPU: VRAM layout of Leech matrices, LR_LEECH_DEV_* (0 = per shape:
                             lr_leech_dev_default_layout) */
} lr_engine_opts;

/* Debug hook: the residual stream after each layer, so two backends can be
 * compared layer by layer. layer -1 is the embedding row, 0..L-1 the stream
 * after layer l, L the final-normed vector the head reads; x has n floats
 * and is only valid during the call. */
typedef void (*lr_layer_fn)(void *user, int layer, int pos, const float *x, int n);

typedef struct lr_engine_ops {
    const char *name; /* "cpu", "gpu" */
    /* m stays open (owned by the caller) until close; lr_model_path(m) names
     * the file for a backend that wants its own mapping or loader. */
    int (*open)(const lr_model *m, const lr_engine_opts *o, lr_engine **out);
    int (*reset)(lr_engine *e);
    /* step and step_greedy refuse a full context (LR_ERANGE) and a token outside the
     * vocabulary (LR_EINVAL) before running anything, so the previous step's logits stay
     * valid (the API keeps them across such a refusal, rt/api.c feed). */
    int (*step)(lr_engine *e, int32_t token, const float **logits);
    void (*close)(lr_engine *e);
    /* Optional (NULL: the caller steps and takes lr_argmax of the logits).
     * The same step, but the backend returns only the greedy next token,
     * lr_argmax of the logits (lowest id on ties, NaN never wins, 0 when all
     * are NaN), so the logits need not leave the device; no logits are
     * valid afterwards. */
    int (*step_greedy)(lr_engine *e, int32_t token, int32_t *next);
} lr_engine_ops;

/* The head of every backend's state (its first member), read and written by
 * the caller through these fields only. */
struct lr_engine {
    const lr_engine_ops *ops;
    const lr_model *model;
    int pos;                 /* tokens in the cache: the position of the next step */
    int max_context;
    double launches_per_step;/* GPU: kernel launches (graph nodes) of one step; 0 on the CPU */
    int pdl;                 /* GPU: kernels of a step overlap through programmatic dependent launch */
    size_t bytes_per_step;   /* GPU: weight bytes one step reads (every matrix and the head) */
    lr_layer_fn on_layer;    /* NULL = off; a GPU backend may run slower while set */
    void *on_layer_user;
};

/* GPU profiling: the step's launches of each phase (embed, norm, rotation,
 * norm fused into the rotation, each GEMV, rope, attention, SwiGLU, SwiGLU
 * fused into the rotation, head; lr_engine_gpu_phase_name) for
 * every layer captured alone as one graph and replayed reps times; us[i] is
 * microseconds per token. The sum exceeds the step's time by what the phases
 * overlap and share; the cache stays valid (nothing advances the position,
 * and the next step rewrites the slot these runs touched). */
int lr_engine_gpu_phases(lr_engine *e, int reps, double *us, int n);
const char *lr_engine_gpu_phase_name(int i);
/* The whole step's graph replayed back to back, microseconds per replay: GPU
 * time alone (a step adds the host's launch, wait and sampling). Replays the
 * last step (its token and position; token 0 at position 0 before any),
 * rewriting that cache slot with the same values (or the slot the next step
 * writes): the cache stays valid. */
int lr_engine_gpu_graph_us(lr_engine *e, int reps, double *us);
/* The same for the greedy step's graph (the argmax on the device and a
 * 8-byte copy of its slot instead of the logits' copy). */
int lr_engine_gpu_graph_greedy_us(lr_engine *e, int reps, double *us);
/* The whole step's graph without one phase's launches (greedy graph),
 * microseconds per replay: graph_us minus this is what the phase costs in
 * the chain, its overlap with its neighbours taken off. The results are
 * meaningless; the cache stays valid as for graph_us. */
/* The launch floor: the greedy step's graph captured with every kernel an
 * empty one of its grid, block, cluster and shared memory
 * (templates/op_empty_pdl.cu; the copies stay), replayed reps times: what the
 * step's launch structure costs by itself, in us per step. */
int lr_engine_gpu_graph_floor_us(lr_engine *e, int reps, double *us);
/* The launch floor with a flag handoff: the same graph with every kernel
 * templates/op_empty_flag.cu, whose CTAs wait for a counter in memory to
 * reach the CTAs of every launch before theirs, then count themselves, instead
 * of griddepcontrol.wait (what a flag-chained or persistent step would pay
 * per handoff). *ctas: the CTAs the graph launches; *counted: the counter after
 * the last replay (equal when every CTA counted itself once). An error if a
 * CTA gave up waiting. */
int lr_engine_gpu_graph_floor_flag_us(lr_engine *e, int reps, double *us, unsigned *ctas, unsigned *counted);
int lr_engine_gpu_graph_without_us(lr_engine *e, int phase, int reps, double *us);
/* The timeline probe (rt/timeline.h): the greedy step's graph captured with
 * every kernel's timeline twin (jit/timeline.h), replayed once to warm up and
 * once recorded. *raw (malloc'd, LR_TL_WORDS u64 per CTA) gets that replay's
 * *n records; *phases (malloc'd) the phase of each kernel launch in the
 * step's order, *nlaunch of them; *us the twins' graph replayed back to back
 * reps times (what the probe costs: compare lr_engine_gpu_graph_greedy_us).
 * The cache stays valid as for graph_us. */
int lr_engine_gpu_timeline(lr_engine *e, int reps, uint64_t **raw, size_t *n, int **phases, size_t *nlaunch,
                           double *us);

/* The backends: rt/engine_cpu.c, rt/engine_gpu.c. */
extern const lr_engine_ops lr_engine_cpu_ops;
/* Layers whose gate|up GEMV ends in SwiGLU (Planes14S pairs; no
 * op_silu_mul launch for them). */
int lr_engine_gpu_swiglu_layers(const lr_engine *e);
/* Projections (o, down) whose Planes14S GEMV rotates its input in its
 * prologue (LEECHRT_XROT; no rotation launch for them). */
int lr_engine_gpu_xrot_projs(const lr_engine *e);
/* Projections whose GEMV lets the op after it launch after its main loop
 * (LEECHRT_GEMV_TRIGGER). */
int lr_engine_gpu_trig_projs(const lr_engine *e);
/* Projections of a rotated-residual model whose GEMV takes the norm (q|k|v,
 * gate|up) or the residual add (o, down) itself (LEECHRT_RRES_ENDS). */
int lr_engine_gpu_rres_ends(const lr_engine *e);
extern const lr_engine_ops lr_engine_gpu_ops;

#endif
