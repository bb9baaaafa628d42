/* The seam between the loader and the VRAM layouts: how a tensor of the
 * file (a codec) becomes device bytes (a layout). The loader owns threads,
 * staging memory, checksums and uploads; a layout only says how many bytes
 * it needs and fills them, in independent pieces ("units", e.g. groups of
 * rows) that the loader spreads over its threads.
 *
 * Writing a layout (e.g. Planes14 for LR_CODEC_LEECH):
 *   plan:   from the view (shape, codec parameters), the device bytes, the
 *           unit count, and the named parts of the device buffer the engine
 *           will address (records, class table, row scales, tail ...).
 *   unfold: fills units [u0, u1) of dst (a host buffer of plan.bytes);
 *           called concurrently on disjoint ranges, so each unit must own
 *           its output bytes. Read the view, never write it.
 *   finish: optional serial pass after every unit (e.g. gather an
 *           exception list whose size depends on all rows), may shrink
 *           plan->bytes.
 * A layout whose device bytes are exactly a range of the file sets
 * plan.direct: the loader then uploads from the mapping with no staging
 * copy and calls unfold with dst NULL only if it has something to check.
 * The loader verifies each tensor's checksum and payload (Leech indices,
 * finite scales) before its bytes are used, whatever the layout. */
#ifndef LR_LAYOUT_H
#define LR_LAYOUT_H
#include "loader/model.h"

#include <stddef.h>
#include <stdint.h>

#define LR_LAYOUT_MAX_PARTS 8

typedef struct lr_layout_part {
    const char *name;        /* "archive", "scale", "records", "ctab" ... (static strings) */
    size_t offset, bytes;    /* in the device buffer */
} lr_layout_part;

typedef struct lr_layout_plan {
    size_t bytes;            /* device bytes */
    uint64_t units;          /* independent pieces of unfold work, >= 1 */
    int nparts;
    lr_layout_part parts[LR_LAYOUT_MAX_PARTS];
    const void *direct;      /* non-NULL: the device bytes are these host bytes */
    void *state;             /* the layout's own per-tensor data, freed by release */
} lr_layout_plan;

typedef struct lr_layout {
    const char *name;        /* unique: "dense", "int8g", "leech-archive", "planes14" */
    /* 1 if the layout can hold t (its codec, shape limits, gain bits ...). */
    int (*supports)(const lr_tensor_view *t);
    int (*plan)(const lr_tensor_view *t, lr_layout_plan *p);
    int (*unfold)(const lr_tensor_view *t, const lr_layout_plan *p, uint64_t u0, uint64_t u1, void *dst);
    int (*finish)(const lr_tensor_view *t, lr_layout_plan *p, void *dst);   /* may be NULL */
    void (*release)(lr_layout_plan *p);                                    /* may be NULL */
} lr_layout;

/* Adds a layout to the registry (the built-in passthrough layouts are always
 * there). LR_EINVAL for a duplicate name or a full registry. Thread-safe. */
int lr_layout_register(const lr_layout *l);
const lr_layout *lr_layout_find(const char *name);
/* Every registered layout (built-ins first). */
int lr_layout_count(void);
const lr_layout *lr_layout_at(int i);
/* The layout for t: the first name in prefer (comma-separated, may be NULL)
 * whose layout supports t, else the codec's passthrough; NULL if none. */
const lr_layout *lr_layout_choose(const lr_tensor_view *t, const char *prefer);

/* The built-in passthroughs: device bytes = the tensor's bytes in the file,
 * parts at the same offsets and with the codec's part names. */
extern const lr_layout lr_layout_dense;         /* f32, f16, bf16 */
extern const lr_layout lr_layout_int8g;         /* int8 groups (embedding, head) */
extern const lr_layout lr_layout_leech_archive; /* the 47+g-bit archive as stored */

#endif
