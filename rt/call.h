/* One kernel call, two backends. A kernel descriptor declares its parameters
 * once; the same argument vector launches the GPU kernel (cuLaunchKernel) and
 * calls the kernel's C host reference through libffi (ffi_call), with device
 * buffers mirrored in host memory. lr_call_verify runs both and compares:
 * outputs poisoned first, unwritten elements counted, per-element error
 * relative to a magnitude (e.g. sum |w*x| of the row) the reference provides. */
#ifndef LR_CALL_H
#define LR_CALL_H
#include "rt/cu.h"
#include "util/rng.h"

#include <stddef.h>
#include <stdint.h>

#define LR_MAX_KPARAMS 24

typedef enum { LR_T_I32, LR_T_U32, LR_T_I64, LR_T_U64, LR_T_F32, LR_T_F64, LR_T_PTR } lr_type;
typedef enum { LR_E_U8, LR_E_I8, LR_E_U16, LR_E_F16, LR_E_BF16, LR_E_U32, LR_E_I32, LR_E_F32,
               LR_E_U64, LR_E_F64 } lr_elt;
enum { LR_IN = 1, LR_OUT = 2, LR_INOUT = 3 };

typedef struct lr_param_desc {
    const char *name;
    lr_type type;
    lr_elt elt; /* pointers only */
    int dir;    /* pointers only: LR_IN, LR_OUT, LR_INOUT */
} lr_param_desc;

typedef void (*lr_host_fn)(void);

typedef struct lr_kernel_desc {
    const char *name;
    int nparams;
    lr_param_desc params[LR_MAX_KPARAMS];
    lr_host_fn host;     /* C reference with the kernel's signature */
    lr_host_fn host_mag; /* optional, same signature: writes each output's error scale */
} lr_kernel_desc;

typedef union lr_scalar { int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; float f32; double f64; } lr_scalar;

typedef struct lr_arg {
    lr_scalar v;     /* scalars */
    void *host;      /* pointers: host buffer of `count` elements (NULL with count 0 = a null pointer) */
    size_t count;
    CUdeviceptr dev; /* filled by lr_call_upload */
} lr_arg;

size_t lr_elt_size(lr_elt e);
/* Fills with random values in [-amp, amp], never zero (floats), or random bits (ints). */
void lr_fill_random(lr_elt e, void *p, size_t count, lr_rng *r, double amp);
/* The same from a fresh generator seeded with `seed` (a test's inputs). */
void lr_fill_random_seed(lr_elt e, void *p, size_t count, uint64_t seed, double amp);
double lr_elt_get(lr_elt e, const void *p, size_t i);

/* Checks the descriptor against the compiled kernel's parameter layout. */
int lr_call_check_fn(const lr_kernel_desc *d, CUfunction f);
/* The host reference through libffi. */
int lr_call_host(const lr_kernel_desc *d, lr_arg *args);
int lr_call_host_fn(const lr_kernel_desc *d, lr_host_fn fn, lr_arg *args);
/* Device mirrors: allocate and copy IN/INOUT buffers; poison OUT buffers. */
int lr_call_upload(const lr_kernel_desc *d, lr_arg *args);
typedef struct lr_launch_geom {
    lr_dim3 grid, block;
    unsigned smem;
    lr_dim3 cluster; /* thread-block cluster (sm_90); x == 0: none */
} lr_launch_geom;
int lr_call_launch(const lr_kernel_desc *d, CUfunction f, lr_arg *args, lr_launch_geom g, CUstream s);
int lr_call_download(const lr_kernel_desc *d, lr_arg *args);
void lr_call_free_dev(const lr_kernel_desc *d, lr_arg *args);

typedef struct lr_verify_report {
    double max_rel_err;  /* max over outputs of |gpu - ref| / scale */
    size_t worst;        /* element index of the max */
    size_t unwritten;    /* outputs still poisoned after the GPU run */
    size_t bad;          /* elements over tolerance (or NaN) */
    size_t checked;
} lr_verify_report;


/* Runs GPU and host on the same arguments and compares every output element.
 * Float outputs pass when |gpu - ref| <= tol * scale (scale from host_mag, or
 * |ref| when there is none, floored at 1e-30); integer outputs must be equal.
 * Returns LR_EVERIFY with the first mismatches in the message. */
int lr_call_verify(const lr_kernel_desc *d, CUfunction f, lr_arg *args, lr_launch_geom g, double tol,
                   lr_verify_report *rep);
/* Integer OUT outputs (floats' poison is a NaN no arithmetic makes; an integer's all ones
 * can be a value) from two launches, over 0xff and over 0x00: an element that differs was
 * not written. Counted into rep's unwritten and bad (when rep is given), the first few
 * appended to msg; returns how many. verify runs the second launch for such kernels. */
size_t lr_call_count_repoisoned(const lr_kernel_desc *d, lr_arg *args, void **got_ff, void **got_00,
                                lr_verify_report *rep, char *msg, size_t msglen);
/* Host-only half of verify: ffi reference vs a direct oracle output already in
 * `expect` (same shape as each OUT param, in param order). For CI without GPU. */
int lr_call_compare_outputs(const lr_kernel_desc *d, lr_arg *args, void **got, void **ref, void **scale,
                            double tol, lr_verify_report *rep);

#endif
