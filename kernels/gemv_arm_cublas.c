/* cuBLAS fp16 GEMV control (batch 1, GemmEx with f16 A/B, f32 C and compute),
 * opened with dlopen so nothing in leechrt links cuBLAS; the arm reports
 * LR_EUNSUPPORTED where libcublas is absent and the benchmark skips it. */
#include "kernels/gemv_arm.h"
#include "kernels/kernels.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The few cuBLAS enums used, by value (so no cudart headers are needed). */
enum { OP_N = 0, OP_T = 1, R_16F = 2, R_32F = 0, COMPUTE_32F = 68, GEMM_DEFAULT = -1 };
typedef int (*create_t)(void **);
typedef int (*setstream_t)(void *, CUstream);
typedef int (*gemmex_t)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int,
                        int, const void *, void *, int, int, int, int);
static void *g_handle;
static setstream_t g_setstream;
static gemmex_t g_gemmex;

static int open_cublas(void)
{
    if (g_handle) return LR_OK;
    const char *names[] = { "libcublas.so.13", "libcublas.so.12", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so" };
    void *lib = NULL;
    for (size_t i = 0; i < 4 && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return LR_FAIL(LR_EUNSUPPORTED, "libcublas not found");
    create_t create = (create_t)dlsym(lib, "cublasCreate_v2");
    g_setstream = (setstream_t)dlsym(lib, "cublasSetStream_v2");
    g_gemmex = (gemmex_t)dlsym(lib, "cublasGemmEx");
    if (!create || !g_setstream || !g_gemmex) return LR_FAIL(LR_EUNSUPPORTED, "libcublas lacks GemmEx");
    int st = create(&g_handle);
    if (st) return LR_FAIL(LR_ECUDA, "cublasCreate failed: %d", st);
    return LR_OK;
}

typedef struct {
    int rows, cols, copies;
    CUdeviceptr w, x16;
    uint16_t *host_w;
} cb_state;

static void cb_destroy(void *p)
{
    cb_state *s = p;
    if (!s) return;
    lr_cu_free(s->w);
    lr_cu_free(s->x16);
    free(s->host_w);
    free(s);
}

static int cb_prepare(int rows, int cols, int copies, uint64_t seed, const lr_gemv_arm_opts *o, void **out)
{
    (void)o;
    *out = NULL;
    int rc = open_cublas();
    if (rc) return rc;
    cb_state *s = calloc(1, sizeof *s);
    size_t n = (size_t)rows * cols;
    if (!s || !(s->host_w = malloc(n * 2))) { free(s); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    s->rows = rows, s->cols = cols, s->copies = copies;
    rc = lr_cu_alloc(&s->w, n * 2 * (size_t)copies);
    if (!rc) rc = lr_cu_alloc(&s->x16, (size_t)cols * 2);
    lr_rng r;
    lr_rng_seed(&r, seed);
    lr_fill_random(LR_E_F16, s->host_w, n, &r, 1.0);
    for (int c = 0; c < copies && !rc; c++) rc = lr_cu_h2d(s->w + (size_t)c * n * 2, s->host_w, n * 2);
    if (rc) { cb_destroy(s); return rc; }
    *out = s;
    return LR_OK;
}

static int gemv(cb_state *s, CUdeviceptr w, CUdeviceptr y, CUstream st)
{
    float one = 1.f, zero = 0.f;
    g_setstream(g_handle, st);
    int e = g_gemmex(g_handle, OP_T, OP_N, s->rows, 1, s->cols, &one, (void *)w, R_16F, s->cols, (void *)s->x16,
                     R_16F, s->cols, &zero, (void *)y, R_32F, s->rows, COMPUTE_32F, GEMM_DEFAULT);
    return e ? LR_FAIL(LR_ECUDA, "cublasGemmEx failed: %d", e) : LR_OK;
}

/* cuBLAS reads the activation as f16, so the reference uses the rounded x. */
static int cb_verify(void *p, uint64_t seed, double *err, lr_gemv_arm_io *io)
{
    cb_state *s = p;
    size_t rows = (size_t)s->rows, cols = (size_t)s->cols;
    uint16_t *x16 = malloc(cols * 2);
    float *x = malloc(cols * 4), *y = malloc(rows * 4), *ref = malloc(rows * 4), *mag = malloc(rows * 4);
    int rc = LR_OK;
    CUdeviceptr dy = 0;
    if (!x16 || !x || !y || !ref || !mag) { rc = LR_FAIL(LR_ENOMEM, "out of memory"); goto out; }
    lr_rng r;
    lr_rng_seed(&r, seed ^ 0xcb);
    lr_fill_random(LR_E_F16, x16, cols, &r, 1.0);
    for (size_t i = 0; i < cols; i++) x[i] = lr_half_to_float(x16[i]);
    if ((rc = lr_cu_h2d(s->x16, x16, cols * 2)) || (rc = lr_cu_alloc(&dy, rows * 4)) ||
        (rc = lr_cu_memset8(dy, 0xff, rows * 4)) || (rc = gemv(s, s->w, dy, NULL)) || (rc = lr_cu_sync()) ||
        (rc = lr_cu_d2h(y, dy, rows * 4)))
        goto out;
    lr_gemv_f16_host(s->host_w, x, ref, s->rows, s->cols);
    lr_gemv_f16_host_mag(s->host_w, x, mag, s->rows, s->cols);
    *err = 0;
    for (size_t i = 0; i < rows; i++) {
        double e = fabs((double)y[i] - ref[i]) / (mag[i] > 1e-30 ? mag[i] : 1e-30);
        if (!(e <= 2e-5)) { /* of sum |w x|: measured at most 6.2e-7 (f32 accumulation) */ rc = LR_FAIL(LR_EVERIFY, "cublas row %zu: %g vs %g", i, y[i], ref[i]); *err = e; goto out; }
        if (e > *err) *err = e;
    }
    /* the launch reads the f16 x this verify left in s->x16, whatever x it is given */
    lr_gemv_arm_io_keep(io, &x, cols, &y, rows);
out:
    lr_cu_free(dy);
    free(x16); free(x); free(y); free(ref); free(mag);
    return rc;
}

static int cb_launch(void *p, int copy, CUdeviceptr x, CUdeviceptr y, CUstream st)
{
    (void)x;
    cb_state *s = p;
    return gemv(s, s->w + (size_t)(copy % s->copies) * s->rows * s->cols * 2, y, st);
}

static size_t cb_bytes(void *p)
{
    cb_state *s = p;
    return (size_t)s->rows * s->cols * 2;
}

const lr_gemv_arm lr_arm_cublas = { "cublas", 16.0, cb_prepare, cb_verify, cb_launch, cb_bytes, cb_destroy };
