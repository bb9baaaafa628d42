/* Calibration activations for GPTQ (loader/import/gptq.h): the model is run
 * on the host, layer by layer over all calibration tokens at once, and for
 * each distinct projection input the second moment H = X^T X / N is
 * accumulated (f64): the attention input (shared by attn_q/k/v), the
 * attention output (attn_output), the FFN input (ffn_gate/up) and the FFN
 * hidden state (ffn_down).
 *
 * Sequential, as GPTQ does it: the forward pass only advances when asked for
 * the next Hessian, and uses for every projection the weights the importer
 * handed back with lr_calib_set_weights (its quantized reconstruction) or,
 * when none were given, the source's f32 weights. So layer l's Hessians see
 * the activations of the already-quantized layers < l (and, inside layer l,
 * of its already-quantized q/k/v, o, gate/up).
 *
 * Tokens are cut into sequences of seq_len (each attended from its own
 * start, no BOS added, like tools/ppl). Matrix products are f32 with AVX2
 * when the CPU has it, sums of H in f64; norms, RoPE angles and softmax in
 * f64. Hessians are in the unrotated basis. */
#ifndef LR_IMPORT_CALIB_H
#define LR_IMPORT_CALIB_H
#include "loader/import/source.h"

#include <stdint.h>

#define LR_CALIB_SEQ 512

typedef struct lr_calib lr_calib;

/* Tokenizes the text file with src's tokenizer and keeps the first
 * max_tokens tokens (LR_EINVAL when fewer than 2). cfg may have fewer layers
 * than src (a truncated import). nthreads 0 = all cores. */
int lr_calib_open(const lr_src *src, const lr_model_config *cfg, const char *text_path, int max_tokens, int nthreads,
                  lr_calib **out);
/* The same over given token ids (tests). */
int lr_calib_open_ids(const lr_src *src, const lr_model_config *cfg, const int32_t *ids, int n, int seq_len,
                      int nthreads, lr_calib **out);
int lr_calib_tokens(const lr_calib *c);
/* The Hessian of the input of blk.LAYER.ROLE (role attn_q/k/v/output,
 * ffn_gate/up/down), advancing the forward pass to it; *H (n x n, valid
 * until the next call) and *n. Layers and stages must be asked in order
 * (LR_EINVAL for a stage already passed). */
int lr_calib_hessian(lr_calib *c, int layer, const char *role, const double **H, int *n);
/* The weights (rows x cols f32, unrotated basis, copied) the rest of the
 * forward pass uses for blk.LAYER.ROLE; LR_EINVAL once they were used. */
int lr_calib_set_weights(lr_calib *c, int layer, const char *role, const float *W);
/* The teacher (asymmetric calibration, GPTAQ's objective): the pass also
 * runs the source model on the same tokens with the source's weights only,
 * so that for each projection input Z of the pass (which sees the weights
 * handed back) the cross moment M = Z^T Z_t / N against the teacher's Z_t is
 * there beside H: a projection then aims at the teacher's output, W x_t, not
 * at W applied to its own drifted input (loader/import/gptq.h,
 * lr_gptq_asym_target). Twice the pass's work and activations. Call before
 * the first lr_calib_hessian (LR_EINVAL after). */
int lr_calib_set_teacher(lr_calib *c);
/* M (n x n, row a column b = mean over tokens of z[a] z_t[b]; valid until the
 * next call) for blk.LAYER.ROLE, at the stage lr_calib_hessian last reached
 * for it; LR_EINVAL without the teacher or at another stage. */
int lr_calib_cross(lr_calib *c, int layer, const char *role, const double **M, int *n);
void lr_calib_close(lr_calib *c);

#endif
