#include "rt/cu.h"
#include "util/err.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct lr_cu_api lr_cu_api;

static pthread_once_t g_open_once = PTHREAD_ONCE_INIT;
static int g_open_rc = -1;
static char g_open_msg[512];
static void *g_lib;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_ready;
static CUdevice g_dev;
static CUcontext g_ctx;
static lr_device_info g_info;
static int g_budget_override;

int lr_cu_check(CUresult r, const char *call, const char *file, int line)
{
    if (r == CUDA_SUCCESS) return LR_OK;
    const char *name = NULL, *text = NULL;
    if (LRCU(cuGetErrorName)) LRCU(cuGetErrorName)(r, &name);
    if (LRCU(cuGetErrorString)) LRCU(cuGetErrorString)(r, &text);
    /* Both return NULL for codes they don't know. */
    return lr_fail(r == CUDA_ERROR_NO_DEVICE ? LR_ENODEV : LR_ECUDA, file, line, "%s failed: %s (%s)",
                   call, name ? name : "CUDA_ERROR_?", text ? text : "unknown error");
}

/* Resolves every entry point by the exported name the header's macros give
 * it (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2),
 * so each pointer has exactly the prototype we call it with. (Asking
 * cuGetProcAddress for "cuCtxSynchronize" at version 13000 returns the _v2
 * entry, which takes a context argument.) */
#define LR_STR(x) #x
#define LR_XSTR(x) LR_STR(x)
static void open_driver(void)
{
    const char *names[] = { "libcuda.so.1", "libcuda.so", "/usr/local/nvidia/lib64/libcuda.so.1",
                            "/usr/lib/x86_64-linux-gnu/libcuda.so.1" };
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !g_lib; i++)
        g_lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!g_lib) {
        snprintf(g_open_msg, sizeof g_open_msg, "no NVIDIA driver: libcuda.so.1 not found (%s)", dlerror());
        g_open_rc = LR_ENODEV;
        return;
    }
#define LR_CU_RESOLVE(name)                                   \
    {                                                         \
        void *p = dlsym(g_lib, LR_XSTR(name));                \
        memcpy(&lr_cu_api.p_##name, &p, sizeof p);            \
    }
    LR_CU_FUNCS(LR_CU_RESOLVE)
#undef LR_CU_RESOLVE
    /* Drivers before 12.8 export only the original, same-signature entry. */
    if (!LRCU(cuEventElapsedTime)) *(void **)&lr_cu_api.p_cuEventElapsedTime = dlsym(g_lib, "cuEventElapsedTime");
    /* Every entry point is required but cuFuncGetParamInfo (12.4+), cuLaunchKernelEx and
       the error strings, which their callers check: a driver without one is refused here,
       by name, instead of crashing on a null pointer at its first call. */
    const char *missing = NULL;
#define LR_CU_REQUIRE(name)                                                                                 \
    if (!missing && !lr_cu_api.p_##name && strcmp(#name, "cuFuncGetParamInfo") && strcmp(#name, "cuLaunchKernelEx") && \
        strcmp(#name, "cuGetErrorName") && strcmp(#name, "cuGetErrorString"))                               \
        missing = LR_XSTR(name);
    LR_CU_FUNCS(LR_CU_REQUIRE)
#undef LR_CU_REQUIRE
    if (missing) {
        snprintf(g_open_msg, sizeof g_open_msg,
                 "the NVIDIA driver (libcuda) lacks the entry point %s: it is older than this build needs", missing);
        g_open_rc = LR_ENODEV;
        return;
    }
    g_open_rc = LR_OK;
}

static int driver_open(void)
{
    pthread_once(&g_open_once, open_driver);
    if (g_open_rc != LR_OK) return LR_FAIL(g_open_rc, "%s", g_open_msg);
    return LR_OK;
}

int lr_cu_driver_version(void)
{
    int v = 0;
    if (driver_open() != LR_OK) return 0;
    if (LRCU(cuDriverGetVersion)(&v) != CUDA_SUCCESS) return 0;
    return v;
}

static int attr(int *v, CUdevice_attribute a)
{
    return LR_CU(LRCU(cuDeviceGetAttribute)(v, a, g_dev));
}

static int read_info(int ordinal)
{
    lr_device_info *d = &g_info;
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    int rc = LR_CU(LRCU(cuDeviceGetName)(d->name, sizeof d->name, g_dev));
    if (!rc) rc = attr(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    if (!rc) rc = attr(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    if (!rc) rc = attr(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    if (!rc) rc = attr(&d->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    if (!rc) rc = attr(&d->smem_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    if (!rc) rc = attr(&d->smem_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    if (!rc) rc = attr(&d->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (!rc) rc = attr(&d->max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    if (!rc) rc = attr(&d->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    if (!rc) rc = attr(&d->regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    if (!rc) rc = attr(&d->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    if (!rc) rc = attr(&d->mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    if (!rc) rc = attr(&d->mem_bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    if (!rc) rc = LR_CU(LRCU(cuDeviceTotalMem)(&d->total_mem, g_dev));
    if (!rc) rc = LR_CU(LRCU(cuDriverGetVersion)(&d->driver_version));
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", d->cc_major, d->cc_minor);
    return rc;
}

/* The driver keeps the current context per thread: each thread that uses
 * the runtime makes the primary context current once. */
static _Thread_local int t_bound;

int lr_cu_bind(void)
{
    if (t_bound) return LR_OK;
    if (!__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE)) return LR_FAIL(LR_ENODEV, "no CUDA device initialized");
    int rc = LR_CU(LRCU(cuCtxSetCurrent)(g_ctx));
    if (!rc) t_bound = 1;
    return rc;
}

int lr_cu_init(int ordinal)
{
    pthread_mutex_lock(&g_lock);
    int rc = LR_OK;
    if (g_ready) {
        pthread_mutex_unlock(&g_lock);
        /* one device per process: a second ordinal is refused, not served by the first */
        if (ordinal != g_info.ordinal)
            return LR_FAIL(LR_EUNSUPPORTED, "CUDA device %d asked for, but this process runs on device %d (one per process)",
                           ordinal, g_info.ordinal);
        return lr_cu_bind(); /* (another thread initialized: this one still needs the context current) */
    }
    if ((rc = driver_open())) goto out;
    if ((rc = LR_CU(LRCU(cuInit)(0)))) {
        rc = lr_wrap(LR_ENODEV, "no usable NVIDIA GPU");
        goto out;
    }
    int n = 0;
    if ((rc = LR_CU(LRCU(cuDeviceGetCount)(&n)))) goto out;
    if (ordinal < 0 || ordinal >= n) {
        rc = LR_FAIL(LR_ENODEV, "no CUDA device %d (%d present)", ordinal, n);
        goto out;
    }
    if ((rc = LR_CU(LRCU(cuDeviceGet)(&g_dev, ordinal)))) goto out;
    if ((rc = LR_CU(LRCU(cuDevicePrimaryCtxRetain)(&g_ctx, g_dev)))) goto out;
    if ((rc = LR_CU(LRCU(cuCtxSetCurrent)(g_ctx)))) goto out;
    if ((rc = read_info(ordinal))) goto out;
    const char *env = getenv("LEECHRT_SMEM_BUDGET");
    if (env && *env) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (*end || errno || v < 0 || v > INT_MAX) { /* (4294967296 once wrapped to 0: the device's bound) */
            rc = LR_FAIL(LR_EINVAL, "LEECHRT_SMEM_BUDGET=%s is not a byte count in [0, %d]", env, INT_MAX);
            goto out;
        }
        g_budget_override = (int)v;
    }
    __atomic_store_n(&g_ready, 1, __ATOMIC_RELEASE), t_bound = 1;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int lr_cu_available(void)
{
    /* whichever device the process opened; else device 0, tried again on each call (a
       cached answer was an unlocked static, and it opened device 0 under a program that
       had opened another) */
    if (__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE)) return 1;
    return lr_cu_init(0) == LR_OK;
}

const lr_device_info *lr_cu_device(void) { return g_ready ? &g_info : NULL; }

int lr_cu_make_current(void)
{
    if (!g_ready) return LR_FAIL(LR_ENODEV, "CUDA not initialized");
    return LR_CU(LRCU(cuCtxSetCurrent)(g_ctx));
}

int lr_cu_set_smem_budget(int bytes)
{
    if (bytes < 0) return LR_FAIL(LR_EINVAL, "negative shared-memory budget %d", bytes);
    g_budget_override = bytes;
    return LR_OK;
}

int lr_cu_smem_budget(void)
{
    int bound = g_ready ? g_info.smem_optin : 0;
    if (g_budget_override > 0 && (bound == 0 || g_budget_override < bound)) return g_budget_override;
    return bound;
}

/* ---- memory ---- */
int lr_cu_alloc(CUdeviceptr *p, size_t n)
{
    *p = 0;
    if (n == 0) n = 1;
    return LR_CU(LRCU(cuMemAlloc)(p, n));
}
void lr_cu_free(CUdeviceptr p) { if (p) LRCU(cuMemFree)(p); }
int lr_cu_h2d(CUdeviceptr d, const void *s, size_t n) { return n ? LR_CU(LRCU(cuMemcpyHtoD)(d, s, n)) : 0; }
int lr_cu_d2h(void *d, CUdeviceptr s, size_t n) { return n ? LR_CU(LRCU(cuMemcpyDtoH)(d, s, n)) : 0; }
int lr_cu_d2d(CUdeviceptr d, CUdeviceptr s, size_t n) { return n ? LR_CU(LRCU(cuMemcpyDtoD)(d, s, n)) : 0; }
int lr_cu_memset8(CUdeviceptr d, uint8_t v, size_t n) { return n ? LR_CU(LRCU(cuMemsetD8)(d, v, n)) : 0; }
int lr_cu_mem_info(size_t *f, size_t *t) { return LR_CU(LRCU(cuMemGetInfo)(f, t)); }
int lr_cu_alloc_host(void **p, size_t n)
{
    *p = NULL;
    return LR_CU(LRCU(cuMemAllocHost)(p, n ? n : 1));
}
void lr_cu_free_host(void *p) { if (p) LRCU(cuMemFreeHost)(p); }
int lr_cu_h2d_async(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    return n ? LR_CU(LRCU(cuMemcpyHtoDAsync)(d, s, n, st)) : 0;
}
int lr_cu_d2h_async(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    return n ? LR_CU(LRCU(cuMemcpyDtoHAsync)(d, s, n, st)) : 0;
}

/* ---- streams, events, graphs ---- */
int lr_cu_stream_create(CUstream *s) { return LR_CU(LRCU(cuStreamCreate)(s, CU_STREAM_NON_BLOCKING)); }
void lr_cu_stream_destroy(CUstream s) { if (s) LRCU(cuStreamDestroy)(s); }
int lr_cu_stream_sync(CUstream s) { return LR_CU(LRCU(cuStreamSynchronize)(s)); }
int lr_cu_sync(void) { return LR_CU(LRCU(cuCtxSynchronize)()); }
int lr_cu_event_create(CUevent *e) { return LR_CU(LRCU(cuEventCreate)(e, CU_EVENT_DEFAULT)); }
void lr_cu_event_destroy(CUevent e) { if (e) LRCU(cuEventDestroy)(e); }
int lr_cu_event_record(CUevent e, CUstream s) { return LR_CU(LRCU(cuEventRecord)(e, s)); }
int lr_cu_event_ms(CUevent a, CUevent b, float *ms)
{
    int rc = LR_CU(LRCU(cuEventSynchronize)(b));
    return rc ? rc : LR_CU(LRCU(cuEventElapsedTime)(ms, a, b));
}

int lr_cu_graph_begin(CUstream s)
{
    return LR_CU(LRCU(cuStreamBeginCapture)(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
}

int lr_cu_graph_end(CUstream s, CUgraphExec *exec)
{
    CUgraph g = NULL;
    int rc = LR_CU(LRCU(cuStreamEndCapture)(s, &g));
    if (rc) return rc;
    rc = LR_CU(LRCU(cuGraphInstantiateWithFlags)(exec, g, 0));
    LRCU(cuGraphDestroy)(g);
    return rc;
}

int lr_cu_graph_launch(CUgraphExec e, CUstream s) { return LR_CU(LRCU(cuGraphLaunch)(e, s)); }
void lr_cu_graph_destroy(CUgraphExec e) { if (e) LRCU(cuGraphExecDestroy)(e); }

/* ---- modules, functions, launch ---- */
int lr_cu_module_load(CUmodule *m, const void *cubin) { return LR_CU(LRCU(cuModuleLoadData)(m, cubin)); }
void lr_cu_module_unload(CUmodule m) { if (m) LRCU(cuModuleUnload)(m); }
int lr_cu_module_function(CUfunction *f, CUmodule m, const char *name)
{
    int rc = LR_CU(LRCU(cuModuleGetFunction)(f, m, name));
    return rc ? lr_wrap(rc, "kernel %s", name) : rc;
}

int lr_cu_module_global(CUmodule m, const char *name, CUdeviceptr *p, size_t *size)
{
    int rc = LR_CU(LRCU(cuModuleGetGlobal)(p, size, m, name));
    return rc ? lr_wrap(rc, "module variable %s", name) : rc;
}

int lr_cu_param_info(CUfunction f, int i, size_t *off, size_t *size)
{
    if (!LRCU(cuFuncGetParamInfo)) return LR_FAIL(LR_EUNSUPPORTED, "driver lacks cuFuncGetParamInfo");
    CUresult r = LRCU(cuFuncGetParamInfo)(f, (size_t)i, off, size);
    if (r == CUDA_ERROR_INVALID_VALUE) return LR_FAIL(LR_ERANGE, "no parameter %d", i);
    return LR_CU(r);
}

int lr_cu_func_attr(CUfunction f, CUfunction_attribute a, int *v)
{
    return LR_CU(LRCU(cuFuncGetAttribute)(v, a, f));
}

/* Per-function dynamic shared-memory limit already raised, so the attribute is
 * set once per function rather than before every launch. */
#define SMEM_SLOTS 4096
static struct { CUfunction f; int dyn; int stat; } g_smem[SMEM_SLOTS];
static pthread_mutex_t g_smem_lock = PTHREAD_MUTEX_INITIALIZER;

static int ensure_smem(CUfunction f, unsigned smem)
{
    size_t h = ((uintptr_t)f >> 4) % SMEM_SLOTS, i;
    int rc = LR_OK;
    pthread_mutex_lock(&g_smem_lock);
    for (i = 0; i < SMEM_SLOTS; i++, h = (h + 1) % SMEM_SLOTS) {
        if (g_smem[h].f == f) break;
        if (!g_smem[h].f) {
            g_smem[h].f = f;
            rc = lr_cu_func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &g_smem[h].stat);
            /* without the attribute a launch gets 48 KB of static and dynamic
             * together, not 48 KB of dynamic: a kernel with static arrays
             * asking 48 KB - static + 1 or more needs the attribute raised */
            g_smem[h].dyn = 48 * 1024 - g_smem[h].stat;
            break;
        }
    }
    if (rc) goto out;
    if (i == SMEM_SLOTS) {
        /* every slot holds another function (a long tuning sweep): no slot of its own, so
           ask and raise each time rather than read and overwrite another function's */
        int stat;
        pthread_mutex_unlock(&g_smem_lock);
        if ((rc = lr_cu_func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &stat))) return rc;
        const int budget = lr_cu_smem_budget();
        if ((long)smem + stat > budget)
            return LR_FAIL(LR_ERANGE, "launch needs %u B dynamic + %d B static shared memory, over the %d B budget",
                           smem, stat, budget);
        return (int)smem > 48 * 1024 - stat
                   ? LR_CU(LRCU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem))
                   : LR_OK;
    }
    int budget = lr_cu_smem_budget();
    if ((long)smem + g_smem[h].stat > budget) {
        rc = LR_FAIL(LR_ERANGE, "launch needs %u B dynamic + %d B static shared memory, over the %d B budget",
                     smem, g_smem[h].stat, budget);
        goto out;
    }
    if ((int)smem > g_smem[h].dyn) {
        rc = LR_CU(LRCU(cuFuncSetAttribute)(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
        if (!rc) g_smem[h].dyn = (int)smem;
    }
out:
    pthread_mutex_unlock(&g_smem_lock);
    return rc;
}

int lr_cu_launch(CUfunction f, lr_dim3 g, lr_dim3 b, unsigned smem, CUstream s, void **args)
{
    lr_dim3 none = { 0, 0, 0 };
    return lr_cu_launch_ex(f, g, b, none, smem, s, args);
}

static _Thread_local int g_pdl;

int lr_cu_pdl_supported(void)
{
    const lr_device_info *d = lr_cu_device();
    return d && d->cc_major >= 9 && LRCU(cuLaunchKernelEx) != NULL;
}

int lr_cu_set_pdl(int on)
{
    int was = g_pdl;
    g_pdl = on && lr_cu_pdl_supported();
    return was;
}

static _Thread_local CUfunction g_stand_in;
static _Thread_local CUdeviceptr g_flag_ctr; /* the flag stand-in's counter (0: none) */
static _Thread_local unsigned g_flag_ctas;   /* CTAs launched through it so far */

CUfunction lr_cu_set_stand_in(CUfunction f)
{
    CUfunction was = g_stand_in;
    g_stand_in = f, g_flag_ctr = 0;
    return was;
}

void lr_cu_set_stand_in_flag(CUfunction f, CUdeviceptr ctr)
{
    g_stand_in = ctr ? f : NULL, g_flag_ctr = f ? ctr : 0, g_flag_ctas = 0;
}

unsigned lr_cu_stand_in_flag_ctas(void) { return g_flag_ctas; }

static _Thread_local lr_cu_launch_map g_map;
static _Thread_local void *g_map_user;

void lr_cu_set_launch_map(lr_cu_launch_map map, void *user) { g_map = map, g_map_user = user; }

int lr_cu_launch_ex(CUfunction f, lr_dim3 g, lr_dim3 b, lr_dim3 cl, unsigned smem, CUstream s, void **args)
{
    unsigned target = g_flag_ctas;
    void *flag_args[] = { &g_flag_ctr, &target };
    if (g_stand_in && g_flag_ctr) f = g_stand_in, args = flag_args, g_flag_ctas += g.x * (g.y ? g.y : 1) * (g.z ? g.z : 1);
    else if (g_stand_in) f = g_stand_in, args = NULL; /* (it takes no parameters) */
    else if (g_map && !(f = g_map(f, g_map_user))) return lr_wrap(LR_EINVAL, "launch map");
    int rc = ensure_smem(f, smem);
    if (rc) return rc;
    if (cl.x == 0 && !g_pdl)
        return LR_CU(LRCU(cuLaunchKernel)(f, g.x, g.y, g.z, b.x, b.y, b.z, smem, s, args, NULL));
    if (!LRCU(cuLaunchKernelEx)) return LR_FAIL(LR_EUNSUPPORTED, "driver lacks cuLaunchKernelEx");
    CUlaunchAttribute at[2];
    unsigned n = 0;
    memset(at, 0, sizeof at);
    if (cl.x) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at[n].value.clusterDim.x = cl.x;
        at[n].value.clusterDim.y = cl.y ? cl.y : 1;
        at[n].value.clusterDim.z = cl.z ? cl.z : 1;
        n++;
    }
    if (g_pdl) {
        at[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at[n].value.programmaticStreamSerializationAllowed = 1;
        n++;
    }
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = g.x; c.gridDimY = g.y; c.gridDimZ = g.z;
    c.blockDimX = b.x; c.blockDimY = b.y; c.blockDimZ = b.z;
    c.sharedMemBytes = smem;
    c.hStream = s;
    c.attrs = at;
    c.numAttrs = n;
    return LR_CU(LRCU(cuLaunchKernelEx)(&c, f, args, NULL));
}
