/* The import pipeline: an opened source (loader/import/source.h) written as
 * a leechrt artifact (docs/format.md) through the artifact writer, so the
 * destination is either the complete, re-validated file or untouched.
 *
 * Codecs: projections (attn_q/k/v/output, ffn_gate/up/down) are rotated on
 * their input side (W' = W Q^T, Q = kernels/rotation.h from a seed that
 * depends only on the input width, so the matrices reading one activation
 * share one rotation) and shape-gain quantized to the Leech archive
 * (layouts/leech/shapegain.h, max shell 12); or kept as f16. token_embd and
 * output are int8 in groups of 64 with an f16 scale and bias per group (or
 * f16); norms are f32. docs/import.md has the details.
 *
 * With rotated_residual the artifact holds the residual stream rotated, h' =
 * R h (docs/format.md, "Rotated residual"): the same function, its readers'
 * norm gains folded into them, R into every matrix that writes or reads the
 * stream. */
#ifndef LR_IMPORT_H
#define LR_IMPORT_H
#include "loader/import/source.h"

#include <stdint.h>

typedef struct lr_import_opts {
    int gain_bits;       /* Leech gain bits 0..2 (the tool's default is 1) */
    int keep_f16;        /* projections as f16 instead of Leech */
    int embed_f16;       /* token_embd and output as f16 instead of int8 groups */
    int no_rotate;       /* Leech without the input rotation (ablation) */
    int o_rot_full;      /* attn_output's rotation over the whole width (rotation kind 1); 0 = per
                            head (kind 2: the attention kernel applies it, no rotation launch
                            before o; SmolLM2 GPTQ perplexity 52.3 against 54.1, docs/import.md) */
    int rotated_residual; /* 1: the residual stream held rotated by R = the hidden width's rotation
                             (config flag): norms before q|k|v, gate|up and the head stored as 1,
                             their gains folded into those matrices; o, down, token_embd and the
                             head carry R; a tied head is written untied. Needs the rotation */
    int nthreads;        /* 0 = all cores */
    int max_layers;      /* 0 = all; else only the first N layers (a smaller, different model: tests) */
    int quant_lo, quant_hi; /* quant_hi > 0: only layers [quant_lo, quant_hi) get Leech, the
                               other projections f16 (sensitivity studies) */
    uint64_t seed;       /* rotation seeds derive from it and the input width */
    int progress;        /* per-tensor progress bars on a terminal */
    const char *gptq_calib; /* non-NULL: quantize with GPTQ (loader/import/gptq.h) on Hessians from
                               this calibration text (loader/import/calib.h) */
    int calib_tokens;    /* calibration tokens (0 = LR_IMPORT_CALIB_TOKENS) */
    int refit;           /* GPTQ, afterwards: LR_REFIT_SCALES = each row's scale to its least-squares
                            optimum under H; LR_REFIT_ALL = gain centroids and row scales, two
                            rounds (loader/import/gptq.h); 0 = none */
    double gptq_damp;    /* GPTQ damping (times the mean of diag(H)); 0 = LR_GPTQ_DAMP */
    int gptq_asym;       /* GPTQ aims each projection at the source model's output on the
                            calibration text (the teacher, loader/import/calib.h; the target
                            lr_gptq_asym_target); needs gptq_calib */
    double target_damp;  /* that target's damping (times the mean of diag(H)); 0 =
                            LR_GPTQ_TARGET_DAMP */
} lr_import_opts;

#define LR_IMPORT_CALIB_TOKENS 16384
#define LR_REFIT_SCALES 1
#define LR_REFIT_ALL 2

typedef struct lr_import_stats {
    int tensors, leech, f16, int8g, f32;
    uint64_t weights, payload_bytes;
    double seconds, quant_seconds;
    /* Leech: relative squared error |W - W~|^2 / |W|^2, over all projections
     * and the worst single tensor. */
    double rel_err, worst_rel_err;
    char worst[64];
    int calib_tokens;     /* GPTQ: calibration tokens used (0 without GPTQ) */
    double calib_seconds; /* GPTQ: time in the calibration forward pass and Hessians */
} lr_import_stats;

/* The rotation seed of a given input width. */
uint64_t lr_import_rot_seed(uint64_t seed, uint64_t width);

/* Writes src to path. stats may be NULL. */
int lr_import_write(const lr_src *src, const char *path, const lr_import_opts *o, lr_import_stats *stats);
/* 1 when lr_import_write can hold src's residual stream rotated under o: the
 * rotation is on (not no_rotate) and the hidden width has one (lr_rot_factor:
 * odd factor <= 31 times a power of two in [4, 32768]). The import program's
 * default asks this before choosing the form. */
int lr_import_residual_rotatable(const lr_src *src, const lr_import_opts *o);

/* int8 groups of one row: q[cols], sb[cols / group][2] f16 (scale, bias),
 * w ~ q * scale + bias. Per group: bias = mid-range, scale = range / 254,
 * both rounded to f16 first so q is chosen against the values stored.
 * LR_EINVAL for a non-finite weight or one beyond the f16 range. */
int lr_int8g_encode_row(const float *w, uint64_t cols, int group, int8_t *q, uint16_t *sb);

#endif
