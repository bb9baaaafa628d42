/* Loading a model: open and validate the artifact, turn every tensor into
 * its VRAM layout on worker threads (verifying each tensor's checksum and
 * payload as it goes), and upload through rt/cu.h while the workers carry
 * on. Without a GPU (or with host_only) the unfolded tensors stay in host
 * memory and the upload step is skipped with a stated reason, so everything
 * up to the copy is testable anywhere. */
#ifndef LR_LOAD_H
#define LR_LOAD_H
#include "loader/layout.h"
#include "loader/model.h"

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lr_load_opts {
    int nthreads;              /* unfold threads; 0 = all cores */
    const char *layouts;       /* preferred layouts, comma-separated ("planes14"); NULL = passthroughs */
    int host_only;             /* never touch the GPU */
    int keep_host;             /* with a GPU, keep the host copies too (tests); direct ones always stay */
    size_t staging_bytes;      /* cap on unfolded bytes waiting for upload; 0 = 1 GiB */
    struct lr_progress *progress; /* may be NULL; counts file payload bytes */
} lr_load_opts;

typedef struct lr_loaded_tensor {
    const lr_tensor_view *view;
    const lr_layout *layout;
    lr_layout_plan plan;       /* device bytes and named parts */
    CUdeviceptr dev;           /* 0 when not on a device */
    const void *host;          /* unfolded bytes on the host (NULL after upload unless keep_host or direct) */
    uint64_t file_bytes;       /* payload bytes in the file (padding excluded) */
} lr_loaded_tensor;

typedef struct lr_load_report {
    uint64_t params, proj_params;             /* all tensors (a tied head counted once); Leech/quantized projections */
    uint64_t file_bytes, device_bytes;        /* payload: file; device layouts */
    uint64_t proj_file_bytes, proj_device_bytes;
    double bpw_file, bpw_device;              /* whole model, embedding included */
    double bpw_proj_file, bpw_proj_device;    /* the decoder projections only */
    double s_open, s_unfold, s_total;         /* seconds: validate header/table; unfold+verify+upload; all */
    uint64_t staging_peak;                    /* most host staging bytes held at once (capped by staging_bytes) */
} lr_load_report;

typedef struct lr_loaded_model {
    lr_model *model;           /* owned */
    int n;
    lr_loaded_tensor *t;       /* file order */
    int on_device;
    char device_status[320];   /* "uploaded to ..." or "upload skipped: <why>" */
    CUdeviceptr arena;         /* one allocation holding every tensor */
    size_t arena_bytes;
    lr_load_report report;
} lr_loaded_model;

int lr_load(const char *path, const lr_load_opts *o, lr_loaded_model **out);
/* Same for an already opened model (taken over: closed by lr_loaded_free,
 * or on failure). */
int lr_load_model(lr_model *m, const lr_load_opts *o, lr_loaded_model **out);
void lr_loaded_free(lr_loaded_model *lm);
const lr_loaded_tensor *lr_loaded_find(const lr_loaded_model *lm, const char *name);
/* The device (or host) address of a named part of a loaded tensor; 0/NULL
 * if the layout has no such part. */
CUdeviceptr lr_loaded_part_dev(const lr_loaded_tensor *t, const char *part);
const void *lr_loaded_part_host(const lr_loaded_tensor *t, const char *part);

#endif
