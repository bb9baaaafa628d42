/* Foundation tests on a real GPU (skipped without one): device info, memory,
 * the probe and both GEMV controls verified through the ffi path on every
 * Qwen3 projection shape and on awkward shapes, shared-memory budget
 * enforcement, graph capture and replay, descriptor/kernel mismatch. */
#include "jit/jit.h"
#include "kernels/kernels.h"
#include "rt/call.h"
#include "rt/cu.h"
#include "test/t.h"
#include "util/err.h"

#include <pthread.h>

#define NEED_GPU() T_SKIP_IF(lr_cu_init(0) != LR_OK, lr_errmsg())

static int test_device_info(void)
{
    NEED_GPU();
    const lr_device_info *d = lr_cu_device();
    printf("    %s %s: %d SMs, L2 %d B, smem/block %d, per SM %d, opt-in %d, driver %d\n", d->name, d->arch,
           d->sm_count, d->l2_bytes, d->smem_per_block, d->smem_per_sm, d->smem_optin, d->driver_version);
    T_ASSERT(d->sm_count > 0 && d->smem_optin >= d->smem_per_block && d->smem_per_block >= 48 * 1024, "bad info");
    T_ASSERT(lr_cu_smem_budget() == d->smem_optin, "budget %d != opt-in %d", lr_cu_smem_budget(), d->smem_optin);
    T_OK(lr_cu_set_smem_budget(101376));
    T_ASSERT(lr_cu_smem_budget() == (d->smem_optin < 101376 ? d->smem_optin : 101376), "override ignored");
    T_OK(lr_cu_set_smem_budget(0));
    return T_PASS;
}

static int test_memory_roundtrip(void)
{
    NEED_GPU();
    enum { N = 1 << 20 };
    static uint8_t a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = (uint8_t)(i * 7 + 3);
    CUdeviceptr d1, d2;
    T_OK(lr_cu_alloc(&d1, N));
    T_OK(lr_cu_alloc(&d2, N));
    T_OK(lr_cu_h2d(d1, a, N));
    T_OK(lr_cu_d2d(d2, d1, N));
    T_OK(lr_cu_d2h(b, d2, N));
    T_ASSERT(!memcmp(a, b, N), "copy mismatch");
    T_OK(lr_cu_memset8(d2, 0xab, N));
    T_OK(lr_cu_d2h(b, d2, N));
    T_ASSERT(b[0] == 0xab && b[N - 1] == 0xab, "memset");
    lr_cu_free(d1);
    lr_cu_free(d2);
    return T_PASS;
}

/* A thread other than the initializing one: lr_cu_bind makes the context
 * current there (the driver keeps it per thread), so its copies work. Without
 * a device, binding is refused with LR_ENODEV (runs on the CPU-only machine). */
static void *copy_in_thread(void *u)
{
    int *rc = u;
    CUdeviceptr d;
    uint32_t a = 0x1234abcd, b = 0;
    *rc = lr_cu_bind();
    if (!*rc) *rc = lr_cu_alloc(&d, 4);
    if (!*rc) *rc = lr_cu_h2d(d, &a, 4);
    if (!*rc) *rc = lr_cu_d2h(&b, d, 4), lr_cu_free(d);
    if (!*rc && b != a) *rc = -1;
    return NULL;
}

static int test_other_thread(void)
{
    if (lr_cu_init(0) != LR_OK) {
        lr_clear_error();
        T_ASSERT(lr_cu_bind() == LR_ENODEV && strstr(lr_errmsg(), "no CUDA device"), "bind without a device: %s",
                 lr_errmsg());
        return T_PASS;
    }
    int rc = 1;
    pthread_t t;
    T_ASSERT(pthread_create(&t, NULL, copy_in_thread, &rc) == 0, "pthread_create");
    pthread_join(t, NULL);
    T_ASSERT(rc == 0, "copies in another thread: %d", rc);
    /* one device per process: another ordinal is refused, not quietly served by this one */
    const int other = lr_cu_device()->ordinal + 1;
    T_ASSERT(lr_cu_init(other) == LR_EUNSUPPORTED && strstr(lr_errmsg(), "one per process"), "device %d after %d: %s",
             other, other - 1, lr_errmsg());
    lr_clear_error();
    T_OK(lr_cu_init(other - 1));
    return T_PASS;
}

static int verify_gemv(int rows, int cols, lr_gemv_geom geom, int budget, int noweights, uint64_t seed)
{
    lr_jit_spec s;
    lr_launch_geom g;
    T_OK(lr_gemv_f16_spec(&s, &g, rows, cols, geom, budget, noweights));
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    size_t n = (size_t)rows * cols;
    uint16_t *W = malloc(n * 2);
    float *x = malloc(4u * cols), *y = malloc(4u * rows);
    lr_rng r;
    lr_rng_seed(&r, seed);
    lr_fill_random(LR_E_F16, W, n, &r, 1);
    lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1);
    lr_arg a[5] = { 0 };
    a[0].host = W, a[0].count = n;
    a[1].host = x, a[1].count = (size_t)cols;
    a[2].host = y, a[2].count = (size_t)rows;
    a[3].v.i32 = rows, a[4].v.i32 = cols;
    lr_verify_report rep;
    int rc = lr_call_verify(noweights ? &lr_gemv_noweights_desc : &lr_gemv_f16_desc, f, a, g, 1e-4, &rep);
    free(W); free(x); free(y);
    T_ASSERT(rc == LR_OK, "%dx%d: %s", rows, cols, lr_errmsg());
    T_ASSERT(rep.checked == (size_t)rows, "checked %zu of %d rows", rep.checked, rows);
    return T_PASS;
}

static int test_gemv_f16_qwen3_shapes(void)
{
    NEED_GPU();
    for (int i = 0; i < lr_qwen3_nshapes; i++) {
        const lr_shape *sh = &lr_qwen3_shapes[i];
        int rc = verify_gemv(sh->rows, sh->cols, lr_gemv_f16_default_geom(sh->rows, sh->cols), lr_cu_smem_budget(), 0, 100 + (uint64_t)i);
        if (rc != T_PASS) { fprintf(stderr, "    at %s %s\n", sh->model, sh->matrix); return rc; }
    }
    return T_PASS;
}

static int test_gemv_awkward_shapes_and_budgets(void)
{
    NEED_GPU();
    const int shapes[][2] = { { 1, 8 }, { 77, 1001 }, { 33, 24 }, { 1000, 4104 }, { 5, 17409 }, { 4097, 2560 } };
    const lr_gemv_geom geoms[] = { { 256, 2, 4, 0, 1, 1 }, { 128, 1, 2, 512, 2, 1 }, { 64, 4, 1, 0, 1, 0 },
                                   { 1024, 1, 8, 0, 4, 0 }, { 256, 3, 2, 0, 2, 0 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t g = 0; g < sizeof geoms / sizeof geoms[0]; g++)
            for (int b = 0; b < 2; b++) {
                int rc = verify_gemv(shapes[s][0], shapes[s][1], geoms[g], b ? 49152 : lr_cu_smem_budget(), 0, s * 10 + g);
                if (rc != T_PASS) return rc;
            }
    return T_PASS;
}

static int test_noweights_control(void)
{
    NEED_GPU();
    for (int i = 0; i < lr_qwen3_nshapes; i += 3) {
        const lr_shape *sh = &lr_qwen3_shapes[i];
        int rc = verify_gemv(sh->rows, sh->cols, lr_gemv_f16_default_geom(sh->rows, sh->cols), lr_cu_smem_budget(), 1, 7);
        if (rc != T_PASS) return rc;
    }
    return T_PASS;
}

static int test_budget_refuses_oversized_launch(void)
{
    NEED_GPU();
    lr_jit_spec s;
    lr_launch_geom g;
    lr_gemv_geom geom = { 256, 1, 4, 0, 1, 1 };
    T_OK(lr_gemv_f16_spec(&s, &g, 64, 17408, geom, lr_cu_smem_budget(), 0));
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    T_ASSERT(g.smem == 17408 * 4, "expected whole activation staged, smem %u", g.smem);
    T_OK(lr_cu_set_smem_budget(49152));
    CUdeviceptr w = 0, x = 0, y = 0;
    int rows = 64, cols = 17408;
    void *args[] = { &w, &x, &y, &rows, &cols };
    int rc = lr_cu_launch(f, g.grid, g.block, g.smem, NULL, args);
    lr_cu_set_smem_budget(0);
    T_ASSERT(rc == LR_ERANGE && strstr(lr_errmsg(), "budget"), "oversized launch not refused: %d %s", rc, lr_errmsg());
    /* and the same spec under a small budget tiles instead */
    T_OK(lr_gemv_f16_spec(&s, &g, 64, 17408, geom, 49152, 0));
    T_ASSERT(g.smem <= 49152, "tile not reduced: %u", g.smem);
    return T_PASS;
}

static int test_descriptor_mismatch_detected(void)
{
    NEED_GPU();
    lr_jit_spec s;
    lr_launch_geom g;
    T_OK(lr_gemv_f16_spec(&s, &g, 64, 256, lr_gemv_f16_default_geom(64, 256), lr_cu_smem_budget(), 0));
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    T_OK(lr_call_check_fn(&lr_gemv_f16_desc, f));
    lr_kernel_desc bad = lr_gemv_f16_desc;
    bad.nparams = 4;
    T_ASSERT(lr_call_check_fn(&bad, f) == LR_EINVAL, "missing parameter not detected");
    bad = lr_gemv_f16_desc;
    bad.params[3].type = LR_T_I64;
    T_ASSERT(lr_call_check_fn(&bad, f) == LR_EINVAL, "wrong size not detected");
    return T_PASS;
}

static int test_graph_replay_matches_eager(void)
{
    NEED_GPU();
    int rows = 1024, cols = 2560;
    lr_jit_spec s;
    lr_launch_geom g;
    T_OK(lr_gemv_f16_spec(&s, &g, rows, cols, lr_gemv_f16_default_geom(rows, cols), lr_cu_smem_budget(), 0));
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    size_t n = (size_t)rows * cols;
    uint16_t *W = malloc(n * 2);
    float *x = malloc(4u * cols), *y1 = malloc(4u * rows), *y2 = malloc(4u * rows);
    lr_rng r;
    lr_rng_seed(&r, 5);
    lr_fill_random(LR_E_F16, W, n, &r, 1);
    lr_fill_random(LR_E_F32, x, (size_t)cols, &r, 1);
    CUdeviceptr dw, dx, dy;
    T_OK(lr_cu_alloc(&dw, n * 2));
    T_OK(lr_cu_alloc(&dx, 4u * cols));
    T_OK(lr_cu_alloc(&dy, 4u * rows));
    T_OK(lr_cu_h2d(dw, W, n * 2));
    T_OK(lr_cu_h2d(dx, x, 4u * cols));
    void *args[] = { &dw, &dx, &dy, &rows, &cols };
    CUstream st;
    T_OK(lr_cu_stream_create(&st));
    T_OK(lr_cu_launch(f, g.grid, g.block, g.smem, st, args));
    T_OK(lr_cu_stream_sync(st));
    T_OK(lr_cu_d2h(y1, dy, 4u * rows));
    T_OK(lr_cu_memset8(dy, 0xff, 4u * rows));
    CUgraphExec ge;
    T_OK(lr_cu_graph_begin(st));
    T_OK(lr_cu_launch(f, g.grid, g.block, g.smem, st, args));
    T_OK(lr_cu_graph_end(st, &ge));
    CUevent e0, e1;
    T_OK(lr_cu_event_create(&e0));
    T_OK(lr_cu_event_create(&e1));
    T_OK(lr_cu_event_record(e0, st));
    for (int i = 0; i < 10; i++) T_OK(lr_cu_graph_launch(ge, st));
    T_OK(lr_cu_event_record(e1, st));
    float ms;
    T_OK(lr_cu_event_ms(e0, e1, &ms));
    T_OK(lr_cu_d2h(y2, dy, 4u * rows));
    T_ASSERT(!memcmp(y1, y2, 4u * rows), "graph replay output differs from eager launch");
    T_ASSERT(ms > 0, "event time %g", ms);
    lr_cu_graph_destroy(ge);
    lr_cu_event_destroy(e0);
    lr_cu_event_destroy(e1);
    lr_cu_stream_destroy(st);
    lr_cu_free(dw); lr_cu_free(dx); lr_cu_free(dy);
    free(W); free(x); free(y1); free(y2);
    return T_PASS;
}

/* The probe f over n16 random 16-byte words (seed) at blocks x threads with
 * smem bytes of dynamic shared memory, verified against its host reference
 * through the ffi path; `extra` more outputs than blocks (which neither side
 * writes) and the report in *rep when given. */
static int verify_probe_ex(CUfunction f, size_t n16, unsigned blocks, unsigned threads, unsigned smem, uint64_t seed,
                           unsigned extra, lr_verify_report *rep)
{
    uint32_t *h = malloc(n16 * 16), *out = malloc((blocks + extra) * sizeof *out);
    if (!h || !out) { free(h); free(out); return LR_FAIL(LR_ENOMEM, "out of memory"); }
    lr_fill_random_seed(LR_E_U32, h, n16 * 4, seed, 0);
    lr_arg a[5] = { 0 };
    a[0].host = h, a[0].count = n16 * 4;
    a[1].v.u64 = n16;
    a[2].host = out, a[2].count = blocks + extra;
    a[3].v.u32 = blocks, a[4].v.u32 = threads;
    lr_launch_geom g = { .grid = { blocks, 1, 1 }, .block = { threads, 1, 1 }, .smem = smem };
    lr_verify_report r;
    int rc = lr_call_verify(&lr_probe_desc, f, a, g, 0, rep ? rep : &r);
    free(h), free(out);
    return rc;
}

static int verify_probe(CUfunction f, size_t n16, unsigned blocks, unsigned threads, unsigned smem, uint64_t seed)
{
    return verify_probe_ex(f, n16, blocks, threads, smem, seed, 0, NULL);
}

/* The probe verified; then with one more output than it has blocks, which neither the
 * kernel nor its reference writes: both leave the 0xff poison, which for an integer is also a
 * value, so only verify's second launch over 0x00 shows it unwritten. */
static int test_probe_verified(void)
{
    NEED_GPU();
    lr_jit_spec s;
    lr_probe_spec(&s, 256, 8);
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    T_ASSERT(verify_probe(f, 300007, 264, 256, 0, 9) == LR_OK, "%s", lr_errmsg());
    lr_verify_report rep;
    int rc = verify_probe_ex(f, 40009, 66, 256, 0, 21, 1, &rep);
    T_ASSERT(rc == LR_EVERIFY && rep.unwritten == 1 && strstr(lr_errmsg(), "out[66]"),
             "the output no one wrote passed (rc %d, %zu unwritten): %s", rc, rep.unwritten, lr_errmsg());
    return T_PASS;
}

/* A kernel with static shared memory (the probe's partials) asking 48 KB of
 * dynamic shared memory on top: over the 48 KB a launch gets without the
 * opt-in attribute, so the runtime must raise it (it once assumed 48 KB of
 * dynamic memory free whatever the static size, and such a launch failed
 * with CUDA_ERROR_INVALID_VALUE; found by a shared-memory pad experiment). */
static int test_dynamic_smem_beside_static(void)
{
    NEED_GPU();
    lr_jit_spec s;
    lr_probe_spec(&s, 128, 4); /* a specialization no other case launches: a fresh slot */
    CUfunction f;
    T_OK(lr_jit_get(&s, &f));
    int stat = 0;
    T_OK(lr_cu_func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &stat));
    T_ASSERT(stat > 0, "the probe has no static shared memory (%d B): the case tests nothing", stat);
    T_ASSERT(verify_probe(f, 20011, 64, 128, 48 * 1024, 11) == LR_OK, "%d B static + 48 KB dynamic: %s", stat,
             lr_errmsg());
    return T_PASS;
}

T_MAIN(T_CASE(test_device_info), T_CASE(test_memory_roundtrip), T_CASE(test_other_thread), T_CASE(test_probe_verified),
       T_CASE(test_gemv_f16_qwen3_shapes), T_CASE(test_gemv_awkward_shapes_and_budgets), T_CASE(test_noweights_control),
       T_CASE(test_budget_refuses_oversized_launch), T_CASE(test_descriptor_mismatch_detected),
       T_CASE(test_graph_replay_matches_eager), T_CASE(test_dynamic_smem_beside_static))
