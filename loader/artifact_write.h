/* Streaming artifact writer (docs/format.md). Tensors are written one after
 * another, each in codec part order, possibly in many small writes, so a
 * generator never holds a whole model in memory. Everything goes to a temp
 * file beside the destination, which is renamed over it only by
 * lr_writer_finish after the result re-reads as a valid artifact: a crash or
 * an error never leaves a partial file. */
#ifndef LR_ARTIFACT_WRITE_H
#define LR_ARTIFACT_WRITE_H
#include "loader/codec.h"
#include "loader/model.h"

#include <stddef.h>

typedef struct lr_writer lr_writer;

/* tok_kind LR_TOK_NONE (tok ignored), LR_TOK_JSON or LR_TOK_JSON_GZIP. */
int lr_writer_open(const char *path, const lr_model_config *cfg, int tok_kind, const void *tok, size_t tok_bytes,
                   lr_writer **out);
/* Alignment for tensors whose desc says 0: 0 = automatic (4096 for tensors
 * of 1 MiB or more, 64 otherwise), else 64 or 4096 for all. */
int lr_writer_set_default_align(lr_writer *w, uint32_t align);

/* Starts a tensor: checks the name (unique, printable, < 64 bytes) and the
 * codec description, and fixes its part sizes. */
int lr_writer_begin(lr_writer *w, const lr_tensor_desc *d);
/* Appends bytes of the current tensor: its parts back to back in codec
 * order (leech: row scales f32, archive, tail f16; int8g: q, scale/bias;
 * dense: elements), exactly their sizes; the writer inserts the padding. */
int lr_writer_write(lr_writer *w, const void *p, size_t n);
/* Ends the tensor (LR_EINVAL if a part is short). */
int lr_writer_end(lr_writer *w);
/* begin + one write per part + end. */
int lr_writer_tensor(lr_writer *w, const lr_tensor_desc *d, const void *const parts[]);

/* Bytes written so far (for progress). */
uint64_t lr_writer_bytes(const lr_writer *w);
/* Writes the tensor table and header, re-reads the temp file's structure
 * through the reader, then renames it into place. Frees w either way. */
int lr_writer_finish(lr_writer *w);
/* Drops everything (the destination is untouched). Frees w. */
void lr_writer_abort(lr_writer *w);

#endif
