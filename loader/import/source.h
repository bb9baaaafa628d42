/* A model to import, whatever its origin (a Hugging Face folder or a GGUF
 * file): a config in the artifact's terms, the tokenizer blob, and its
 * tensors under artifact names ("blk.3.attn_q", docs/format.md) in the
 * artifact's orientation (a matrix is [out][in]) and conventions (Q/K rows
 * in the Hugging Face rotate_half order), each readable as f32 rows.
 *
 * Opening validates the config and that every tensor the architecture needs
 * is present with the shape the config implies; a source tensor the
 * importer does not understand (a bias, a rope_freqs table) is an error
 * naming it, never silently dropped. */
#ifndef LR_IMPORT_SOURCE_H
#define LR_IMPORT_SOURCE_H
#include "loader/model.h"

#include <stddef.h>
#include <stdint.h>

typedef struct lr_src_tensor {
    char name[64];       /* artifact name */
    int layer;           /* -1 for model-level tensors */
    int ndim;            /* 1 or 2 */
    uint64_t rows, cols; /* 2-D: [out][in]; 1-D: rows = 1, cols = length */
    char origin[160];    /* "FILE: SOURCE NAME (DTYPE)" for messages and listings */
    /* private to the source */
    int file;
    const void *ref;
    uint32_t type;
    uint64_t qk_head_dim; /* > 0: undo llama.cpp's Q/K row permutation (heads of this many rows) */
} lr_src_tensor;

typedef struct lr_src lr_src;
struct lr_src {
    char label[4096];      /* the folder or file */
    char kind[8];          /* "hf" or "gguf" */
    lr_model_config cfg;
    int tok_kind;          /* LR_TOK_NONE / LR_TOK_JSON / LR_TOK_JSON_GZIP */
    void *tok;             /* malloc'd */
    size_t tok_bytes;
    int n;
    lr_src_tensor *t;      /* file order of the source, then sorted by lr_src_sort */
    /* private */
    int (*read_rows)(const lr_src *s, const lr_src_tensor *t, uint64_t r0, uint64_t n, float *out);
    void (*close)(lr_src *s);
    void *impl;
};

/* A Hugging Face folder: config.json, model.safetensors or the shards named
 * by model.safetensors.index.json (or every *.safetensors), tokenizer.json. */
int lr_src_open_hf(const char *dir, lr_src **out);
/* A GGUF file (general.architecture llama or qwen3); its tokenizer metadata
 * becomes a tokenizer.json (loader/import/gguf_tokjson.h). */
int lr_src_open_gguf(const char *path, lr_src **out);
void lr_src_close(lr_src *s);

/* By artifact name; NULL if absent. */
const lr_src_tensor *lr_src_find(const lr_src *s, const char *name);
/* Rows [r0, r0 + n) of t as f32, row-major (cols each). */
int lr_src_read(const lr_src *s, const lr_src_tensor *t, uint64_t r0, uint64_t n, float *out);

/* ---- shared by the two sources (source.c) ---- */

/* Artifact architecture for a source family: "qwen3" or "llama" (Llama and
 * Mistral); whether its layers have q_norm / k_norm. */
int lr_src_arch_has_qk_norm(const char *arch);
/* The per-layer roles in file order for arch ("qwen3" or "llama"); n set. */
const char *const *lr_src_layer_roles(const char *arch, int *n);
/* The shape config implies for a role: ndim and [rows][cols] (1-D: rows 1). */
void lr_src_role_shape(const lr_model_config *c, const char *role, int *ndim, uint64_t *rows, uint64_t *cols);
/* Checks the config's numbers (as loader/arch.c would for any architecture
 * with this layer structure). */
int lr_src_check_config(const lr_model_config *c, const char *label);
/* Adds a tensor (name, layer, shape checked against the config). */
int lr_src_add(lr_src *s, const char *name, int layer, const char *role, int ndim, uint64_t rows, uint64_t cols,
               const char *origin, lr_src_tensor **added);
/* After all tensors are added: every needed tensor present (output only
 * when the head is not tied); then sorted into canonical order. */
int lr_src_check_complete(lr_src *s);

/* llama.cpp stores a Llama model's Q and K rows permuted (its converter's
 * "permute": within each head, the rotate_half halves are interleaved).
 * For row r of a head of head_dim rows in the Hugging Face order, the row
 * of the GGUF tensor that holds it. */
static inline uint64_t lr_qk_gguf_row(uint64_t r, uint64_t head_dim)
{
    uint64_t h = r / head_dim, j = r % head_dim, half = head_dim / 2;
    return h * head_dim + (j % half) * 2 + j / half;
}

/* Gzip of a buffer (for the tokenizer section). */
int lr_gzip(const void *in, size_t n, void **out, size_t *out_n);

#endif
