/* Synthetic artifacts: a real architecture's tensor set with deterministic
 * random weights in the served codecs (Leech archive for projections, int8
 * groups for embedding and head, f32 norms), for tests, benchmarks and
 * bring-up before real quantized models exist. The bytes depend only on
 * the config, the seed and the tokenizer, never on the thread count. */
#ifndef LR_SYNTHETIC_H
#define LR_SYNTHETIC_H
#include "loader/model.h"

#include <stdint.h>

/* Named configs: the Qwen3 family "0.6B" "4B" "8B" "14B" "32B", plus "tiny"
 * (hidden 256, 2 layers, untied: unit tests) and "micro" (hidden 64, 1
 * layer, tied: the fuzz seed corpus) and "tiny-llama" (tiny as a Llama: no q/k
 * norms). LR_EINVAL for an unknown name. */
int lr_synth_config(const char *name, lr_model_config *cfg);
/* "0.6B, 4B, 8B, 14B, 32B, tiny, micro" */
const char *lr_synth_config_names(void);

typedef struct lr_synth_opts {
    uint64_t seed;
    int nthreads;                /* generator threads; 0 = all cores */
    const char *tokenizer_path;  /* tokenizer.json or tokenizer.json.gz; NULL = none */
    const void *tokenizer;       /* or that file's bytes, already read (tokenizer_n of them): used
                                    instead of reading tokenizer_path when not NULL */
    size_t tokenizer_n;
    uint32_t align;              /* 0 = automatic (see lr_writer_set_default_align) */
    int gain_bits;               /* Leech gain bits, 0..2 (the tool uses 1) */
    int proj_f16;                /* 1: projections as f16 (the dense arm beside Leech), not Leech */
    int o_rot_full;              /* 1: attn_output rotated over its whole width (rotation kind 1); 0: per
                                    head (kind 2), as import's default */
    int rotated_residual;        /* 1: the residual stream held rotated (config flag; docs/format.md),
                                    norms before q|k|v, gate|up and the head exactly 1 (import
                                    --residual rotated); 0 (default, as import's): as is */
    struct lr_progress *progress;/* may be NULL; started here with the payload bytes */
} lr_synth_opts;

/* Writes the artifact to path atomically. The tokenizer file is embedded as it
 * is (tests embed hostile ones on purpose). */
int lr_synth_write(const char *path, const lr_model_config *cfg, const lr_synth_opts *o);
/* Whether a tokenizer file's bytes (n of them, read from path, which names
 * them in messages) are one to embed in a model of cfg: they load as the
 * artifact's tokenizer loads (gunzipped when gzip, with no tokenizer_config.json)
 * and have at most cfg->vocab tokens (gen_synthetic embedded any file, which
 * passed inspect --verify and failed only when run). gen_synthetic reads the
 * file once and embeds the bytes it checked (lr_synth_opts.tokenizer): it read
 * the path again to embed it, so a FIFO or a file replaced meanwhile gave
 * other bytes, or none, than the ones checked. */
int lr_synth_check_tokenizer(const void *bytes, size_t n, const char *path, const lr_model_config *cfg);

#endif
