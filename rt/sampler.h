/* Choosing the next token from logits: greedy, or temperature sampling
 * narrowed by top-k and then top-p (the order Hugging Face applies them),
 * with util/rng.h seeded once, so a seed and a sequence of logits always give
 * the same tokens. */
#ifndef LR_SAMPLER_H
#define LR_SAMPLER_H
#include "util/rng.h"

#include <stdint.h>

typedef struct lr_sampler_params {
    float temperature; /* <= 0: greedy (argmax, lowest id on ties) */
    int top_k;         /* keep the k most likely; <= 0 or >= vocab: all; 1: greedy */
    float top_p;       /* keep the smallest most-likely set with mass >= p; <= 0 or >= 1: all */
} lr_sampler_params;

typedef struct lr_sampler {
    lr_sampler_params p;
    int vocab;
    lr_rng rng;
    struct lr_cand *cand; /* scratch: [vocab] candidates */
} lr_sampler;

/* LR_EINVAL for vocab < 1, a temperature that is not finite or a NaN top-p
 * (negative values are meaningful: see the fields). */
int lr_sampler_init(lr_sampler *s, int vocab, const lr_sampler_params *p, uint64_t seed);
void lr_sampler_free(lr_sampler *s);
/* Changes the parameters, keeping the random stream. */
int lr_sampler_set(lr_sampler *s, const lr_sampler_params *p);
/* The next token. Never fails: NaN logits are never chosen unless every
 * logit is NaN (then id 0). */
int32_t lr_sampler_sample(lr_sampler *s, const float *logits);
/* 1 when lr_sampler_sample is lr_argmax (temperature <= 0 or top_k 1): it
 * then draws nothing from the random stream. */
int lr_sampler_is_greedy(const lr_sampler *s);
/* argmax, lowest id on ties (NaN never wins). */
int32_t lr_argmax(const float *logits, int n);

#endif
