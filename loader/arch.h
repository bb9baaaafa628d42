/* Model architectures: which tensors a config implies, with their names and
 * shapes, and the sanity limits on a config. One table per architecture; the
 * reader checks a file against it, the writers enumerate it. */
#ifndef LR_ARCH_H
#define LR_ARCH_H
#include "loader/model.h"

#include <stdint.h>

enum lr_tensor_role_kind {
    LR_KIND_NORM = 1,   /* 1-D, dense codecs only (f32/f16/bf16) */
    LR_KIND_MATRIX = 2, /* 2-D [out][in], any codec */
    LR_KIND_EMBED = 3,  /* 2-D [vocab][hidden]; rows are gathered: dense or int8g */
};

typedef struct lr_arch_tensor {
    char name[64];
    int layer;          /* -1 for model-level tensors */
    const char *role;   /* "attn_q", "token_embd", ... */
    int kind;           /* enum lr_tensor_role_kind */
    int ndim;
    uint64_t dims[2];
} lr_arch_tensor;

/* Sanity limits (docs/format.md): beyond them a config is rejected. */
#define LR_MAX_HIDDEN (1u << 20)
#define LR_MAX_LAYERS 1024u
#define LR_MAX_HEADS 1024u
#define LR_MAX_HEAD_DIM 4096u
#define LR_MAX_INTER (1u << 22)
#define LR_MAX_VOCAB (1u << 24)
#define LR_MAX_CONTEXT (1u << 24)

/* 1 if arch names a known architecture. */
int lr_arch_known(const char *arch);
/* Checks a config's numbers (LR_EFORMAT naming label and the field). */
int lr_arch_check_config(const lr_model_config *c, const char *label);
/* The tensors c implies, in canonical file order (token_embd, each layer's
 * tensors, output_norm, output unless tied). *list is malloc'd. */
int lr_arch_tensors(const lr_model_config *c, lr_arch_tensor **list, int *n);
/* The per-layer roles of an architecture, in file order. */
const char *const *lr_arch_layer_roles(const char *arch, int *n);
/* "blk.<layer>.<role>" or, for layer < 0, "<role>". */
void lr_tensor_name(char name[64], int layer, const char *role);
/* The norm in front of a matrix role that reads the residual stream
 * (attn_q/k/v: attn_norm; ffn_gate/up: ffn_norm; the head, output:
 * output_norm); NULL for every other role. */
const char *lr_stream_reader_norm(const char *role);

#endif
