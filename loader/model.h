/* The in-memory model description the engines consume: a validated,
 * memory-mapped artifact (docs/format.md) seen as a config plus named tensor
 * views pointing into the mapping. Opening validates every structural fact
 * of the file (bounds, overlaps, alignment, sizes, checksums of the small
 * sections, the tensor set of the architecture); by default it also checks
 * every tensor's data checksum and codec payload (see LR_MODEL_*). A view is
 * valid until lr_model_close. */
#ifndef LR_MODEL_H
#define LR_MODEL_H
#include <stddef.h>
#include <stdint.h>

#define LR_NO_TOKEN 0xffffffffu

typedef struct lr_model_config {
    char arch[32];          /* "qwen3" */
    char name[64];          /* free text, e.g. "qwen3-4b-synthetic" */
    uint32_t hidden, n_layers, n_heads, n_kv_heads, head_dim, intermediate, vocab, max_context;
    uint32_t bos_id, eos_id; /* LR_NO_TOKEN when absent */
    int tied_head;           /* 1: the head is token_embd, no "output" tensor */
    double rope_theta, norm_eps;
    /* 1: the residual stream is held rotated, h' = R h with R = lr_rot_init(hidden,
     * residual_seed) (docs/format.md, "Rotated residual"): the projections reading it
     * take the normed stream as it is, no rotation launch before q|k|v or gate|up */
    int rotated_residual;
    uint64_t residual_seed;
} lr_model_config;

/* Tensor codecs. Numbers are the on-disk ids (never renumber). */
enum lr_codec {
    LR_CODEC_F32 = 1,
    LR_CODEC_F16 = 2,
    LR_CODEC_BF16 = 3,
    LR_CODEC_INT8G = 4,    /* int8 + per-group f16 scale and bias: w = q * s + b */
    LR_CODEC_LEECH = 16,   /* shape-gain Leech archive (layouts/leech/shapegain.h) */
    LR_CODEC_TRELLIS = 17, /* reserved */
    LR_CODEC_BCQ = 18,     /* reserved */
    LR_CODEC_HNLQ = 19,    /* reserved */
};
const char *lr_codec_name(int codec); /* "f32", "leech", ...; "?" if unknown */

enum lr_rotation {
    LR_ROT_NONE = 0,
    LR_ROT_HADAMARD = 1, /* (Q_odd kron H_m) D from rot_seed */
    LR_ROT_HEADS = 2     /* the same per head_dim block (attn_output only; docs/format.md) */
};

typedef struct lr_leech_params {
    int max_shell;           /* 12 */
    int gain_bits;           /* 0..2 */
    int rot_kind;            /* enum lr_rotation (input side) */
    uint64_t rot_seed;
    float centroid[4];       /* 1 << gain_bits used, rest 0 */
    int nblk, tail;          /* cols = 24 * nblk + tail */
    const float *row_scale;  /* [rows] */
    const uint8_t *archive;  /* rows * nblk blocks, row-major, 47 + gain_bits bits each, MSB-first */
    size_t archive_bytes;
    const uint16_t *tail_f16;/* [rows][tail] (NULL when tail == 0) */
} lr_leech_params;

typedef struct lr_int8g_params {
    int group;                  /* weights per group along a row (64) */
    const int8_t *q;            /* [rows][cols] */
    const uint16_t *scale_bias; /* [rows][cols / group][2] f16: scale, bias */
} lr_int8g_params;

typedef struct lr_tensor_part {
    uint64_t offset;         /* relative to the tensor's data */
    uint64_t bytes;
} lr_tensor_part;

typedef struct lr_tensor_view {
    const char *name;        /* "blk.3.attn_q" (docs/format.md, tensor names) */
    int codec;               /* enum lr_codec */
    int ndim;                /* 1..4 */
    uint64_t dims[4];        /* outermost first; a matrix is [rows = out][cols = in] */
    uint64_t rows, cols;     /* 2-D: dims; 1-D: rows = 1, cols = dims[0] */
    uint64_t nelem;
    const uint8_t *data;     /* the tensor's bytes in the mapping */
    uint64_t data_bytes;
    uint64_t file_offset;
    uint32_t align;          /* 64 or 4096 */
    uint64_t checksum;       /* XXH3-64 of data[0, data_bytes) */
    int nparts;
    lr_tensor_part parts[4]; /* codec order: leech scale/archive/tail; int8g q/sb; dense data */
    union {
        lr_leech_params leech;
        lr_int8g_params i8;
        const void *dense;   /* f32 / f16 / bf16 elements */
    } u;
} lr_tensor_view;

/* Flags for lr_model_open*. */
enum {
    /* Skip the data pass (tensor checksums, Leech index ranges, int8 scales):
     * for callers that verify each tensor themselves as they touch it (the
     * loader does, in its unfold threads) and for inspect without --verify. */
    LR_MODEL_SKIP_DATA = 1u << 0,
    /* Accept checksum mismatches (everything else still validated). For the
     * fuzz target, which must reach the deeper checks, and forensics. */
    LR_MODEL_NO_CHECKSUMS = 1u << 1,
};

typedef struct lr_model lr_model;

/* 1 if the tensor name is one of the projections that read the residual stream
 * (attn_q/k/v, ffn_gate/up). */
int lr_reads_residual(const char *name);

/* Maps and validates path. Every problem is LR_EFORMAT (LR_EUNSUPPORTED for
 * a well-formed file using something not implemented yet, LR_EIO for the
 * file system) with a message naming the file, the tensor and the problem. */
int lr_model_open(const char *path, unsigned flags, lr_model **out);
/* Same over a caller's buffer (kept, not copied; must outlive the model and
 * start 64-byte aligned); label names it in messages. */
int lr_model_open_mem(const void *buf, size_t n, const char *label, unsigned flags, lr_model **out);
void lr_model_close(lr_model *m);

const lr_model_config *lr_model_cfg(const lr_model *m);
const char *lr_model_path(const lr_model *m);
size_t lr_model_file_bytes(const lr_model *m);
int lr_model_tensor_count(const lr_model *m);
const lr_tensor_view *lr_model_tensor_at(const lr_model *m, int i); /* file order */
/* By name; NULL if absent. */
const lr_tensor_view *lr_model_tensor(const lr_model *m, const char *name);
/* By layer and role ("attn_q", see loader/arch.h); NULL if absent. */
const lr_tensor_view *lr_model_layer_tensor(const lr_model *m, int layer, const char *role);

/* The file's sections as recorded (for inspect): type 1 config, 2 tokenizer,
 * 3 tensor table, 4 data. */
typedef struct lr_section_info {
    uint32_t type, subtype;
    uint64_t offset, bytes, checksum;
} lr_section_info;
int lr_model_section_count(const lr_model *m);
const lr_section_info *lr_model_section_at(const lr_model *m, int i);

/* Tokenizer blob as stored (kind: 0 none, 1 tokenizer.json, 2 gzip'd
 * tokenizer.json). */
enum { LR_TOK_NONE = 0, LR_TOK_JSON = 1, LR_TOK_JSON_GZIP = 2 };
int lr_model_tokenizer(const lr_model *m, int *kind, const void **blob, size_t *n);
/* The tokenizer.json text, gunzipped if needed, NUL-terminated, malloc'd
 * (free it). LR_EINVAL when the artifact has none. */
int lr_model_tokenizer_json(const lr_model *m, char **json, size_t *n);
struct lr_tok;
/* The tokenizer from bytes stored as an artifact holds them (kind
 * LR_TOK_JSON, or LR_TOK_JSON_GZIP inflated within the tokenizer bound), with
 * no tokenizer_config.json; name labels messages. The one path the runtime,
 * the calibration and gen_synthetic's check load a stored tokenizer by. */
int lr_tok_load_stored(int kind, const void *bytes, size_t n, const char *name, struct lr_tok **out);

/* Verifies one tensor's data: checksum (unless NO_CHECKSUMS), Leech indices
 * below the ball size, int8 scales and biases finite. Thread-safe. */
int lr_model_verify_tensor(const lr_model *m, const lr_tensor_view *t);
/* Every tensor on nthreads threads (0 = all cores) plus the data section's
 * own checksum (covers the padding too). progress may be NULL (counts bytes). */
struct lr_progress;
int lr_model_verify_data(const lr_model *m, int nthreads, struct lr_progress *progress);

/* Bits per weight of a tensor as stored (all its parts, padding excluded). */
double lr_tensor_bits_per_weight(const lr_tensor_view *t);
/* Bytes of a tensor's parts (padding excluded). */
uint64_t lr_tensor_payload_bytes(const lr_tensor_view *t);

/* Host reference dequantization of rows [r0, r0 + n) to f32 (row-major,
 * cols each): the ground truth the layouts and kernels are tested against. */
int lr_tensor_dequant_rows(const lr_tensor_view *t, uint64_t r0, uint64_t n, float *out);

/* A Leech tensor as the codec's lr_leech_matrix (pointers into the mapping:
 * never pass it to lr_leech_matrix_free). */
struct lr_leech_matrix;
int lr_tensor_leech_matrix(const lr_tensor_view *t, struct lr_leech_matrix *m);

#endif
