/* The CUDA driver API, opened with dlopen at run time: every binary starts on a
 * machine without a GPU and says so instead of failing to load. Only rt/
 * touches libcuda; everything here returns an lr_status (util/err.h). */
#ifndef LR_CU_H
#define LR_CU_H
#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lr_device_info {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    int l2_bytes;
    int smem_per_block;       /* default (48 KB) */
    int smem_per_sm;
    int smem_optin;           /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    int max_threads_per_block;
    int max_threads_per_sm;
    int regs_per_sm;
    int clock_khz, mem_clock_khz, mem_bus_bits;
    size_t total_mem;
    int driver_version;       /* e.g. 13000 */
    char arch[16];            /* "sm_90" */
} lr_device_info;

/* Opens the driver and retains device `ordinal`'s primary context, making it
 * current on this thread. Idempotent. LR_ENODEV when no driver or device. */
int lr_cu_init(int ordinal);
/* Makes the primary context current on the calling thread (once per
 * thread; lr_cu_init does it too): for a thread that did not initialize
 * but uses the runtime, e.g. an engine opened in one thread and stepped in
 * another. LR_ENODEV before lr_cu_init. */
int lr_cu_bind(void);
/* 1 when the process has a device: the one it opened, else device 0 opened now (for
 * tests and tools; library code reads lr_cu_device(), NULL before any open). */
int lr_cu_available(void);
const lr_device_info *lr_cu_device(void);
/* Makes the primary context current on the calling thread. */
int lr_cu_make_current(void);
/* Driver version without creating a context (0 when there is no driver). */
int lr_cu_driver_version(void);

/* Shared-memory budget: the opt-in bound read from the device, lowered by
 * LEECHRT_SMEM_BUDGET or lr_cu_set_smem_budget so a big card can act like a
 * smaller one. JIT specializations depend on the effective value. */
int lr_cu_set_smem_budget(int bytes); /* 0 restores the device bound */
int lr_cu_smem_budget(void);

/* Memory. */
int lr_cu_alloc(CUdeviceptr *p, size_t n);
void lr_cu_free(CUdeviceptr p);
int lr_cu_h2d(CUdeviceptr dst, const void *src, size_t n);
int lr_cu_d2h(void *dst, CUdeviceptr src, size_t n);
int lr_cu_d2d(CUdeviceptr dst, CUdeviceptr src, size_t n);
int lr_cu_memset8(CUdeviceptr dst, uint8_t v, size_t n);
/* Page-locked host memory: async copies from/to it run as DMA on the stream
 * (and can be captured in a graph, reading/writing the memory at replay). */
int lr_cu_alloc_host(void **p, size_t n);
void lr_cu_free_host(void *p);
int lr_cu_h2d_async(CUdeviceptr dst, const void *src, size_t n, CUstream s);
int lr_cu_d2h_async(void *dst, CUdeviceptr src, size_t n, CUstream s);
int lr_cu_mem_info(size_t *free_b, size_t *total_b);

/* Streams, events, synchronization. */
int lr_cu_stream_create(CUstream *s);
void lr_cu_stream_destroy(CUstream s);
int lr_cu_stream_sync(CUstream s);
int lr_cu_sync(void);
int lr_cu_event_create(CUevent *e);
void lr_cu_event_destroy(CUevent e);
int lr_cu_event_record(CUevent e, CUstream s);
int lr_cu_event_ms(CUevent start, CUevent stop, float *ms); /* waits for stop */

/* Graphs: capture everything launched on s between begin and end. */
int lr_cu_graph_begin(CUstream s);
int lr_cu_graph_end(CUstream s, CUgraphExec *exec);
int lr_cu_graph_launch(CUgraphExec exec, CUstream s);
void lr_cu_graph_destroy(CUgraphExec exec);

/* Modules and functions. */
int lr_cu_module_load(CUmodule *m, const void *cubin);
void lr_cu_module_unload(CUmodule m);
int lr_cu_module_function(CUfunction *f, CUmodule m, const char *name);
/* Parameter layout of a kernel (offset and size of parameter i). LR_ERANGE
 * past the last parameter. */
int lr_cu_param_info(CUfunction f, int i, size_t *offset, size_t *size);
int lr_cu_func_attr(CUfunction f, CUfunction_attribute a, int *v);

/* Launches f. Raises the function's dynamic shared-memory limit once when a
 * launch needs more than 48 KB; refuses a launch above the budget. */
typedef struct { unsigned x, y, z; } lr_dim3;
int lr_cu_launch(CUfunction f, lr_dim3 grid, lr_dim3 block, unsigned smem, CUstream s, void **args);
/* Same with a thread-block cluster (sm_90); cluster.x == 0 means none. */
/* Programmatic dependent launch for the launches this thread makes from now
 * on (sm_90+ with cuLaunchKernelEx; elsewhere a no-op): each kernel may start
 * while the previous one in its stream finishes, and the templates call
 * lr_pdl_wait() before reading what earlier kernels wrote. Only for streams
 * whose every kernel is a leechrt template. Returns the previous setting. */
int lr_cu_set_pdl(int on);
/* Whether lr_cu_set_pdl(1) takes effect on this device. */
int lr_cu_pdl_supported(void);
int lr_cu_launch_ex(CUfunction f, lr_dim3 grid, lr_dim3 block, lr_dim3 cluster, unsigned smem,
                    CUstream s, void **args);
/* From now on (this thread) every launch runs f instead, a kernel without
 * parameters, at the launch's own grid, block, cluster, shared memory and
 * PDL setting; NULL ends it. For measuring what a captured sequence's launch
 * structure costs by itself (templates/op_empty_pdl.cu). Returns the
 * previous stand-in. */
CUfunction lr_cu_set_stand_in(CUfunction f);
/* The same with a stand-in that takes (u32 *ctr, u32 target)
 * (templates/op_empty_flag.cu): each launch gets ctr and, as its target, the
 * CTAs of the launches before it since this call (the counter the stand-ins
 * count themselves on must read 0 when the first of them runs). ctr 0 ends
 * it, as f NULL does. */
void lr_cu_set_stand_in_flag(CUfunction f, CUdeviceptr ctr);
/* CTAs launched through the flag stand-in since lr_cu_set_stand_in_flag. */
unsigned lr_cu_stand_in_flag_ctas(void);

/* From now on (this thread) every launch runs map(f, user) instead of f, at
 * the same grid, block, shared memory and parameters (the timeline probe's
 * twins, rt/timeline.h); map returns NULL, with the message recorded, when
 * it has none, and the launch fails. NULL ends it. */
typedef CUfunction (*lr_cu_launch_map)(CUfunction f, void *user);
void lr_cu_set_launch_map(lr_cu_launch_map map, void *user);

/* A module's __device__ or __constant__ variable: its address and size. */
int lr_cu_module_global(CUmodule m, const char *name, CUdeviceptr *p, size_t *size);

/* Checks a driver result, recording "cuX failed: NAME (text)" at file:line. */
int lr_cu_check(CUresult r, const char *call, const char *file, int line);
#define LR_CU(call) lr_cu_check((call), #call, __FILE__, __LINE__)

/* Raw driver entry points, for rt/ only. */
#define LR_CU_FUNCS(X)                                                        \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet)        \
    X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)            \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                  \
    X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuGetErrorName)                  \
    X(cuGetErrorString) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD)            \
    X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuMemGetInfo)             \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)               \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)                       \
    X(cuEventSynchronize) X(cuEventElapsedTime) X(cuStreamBeginCapture)       \
    X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)     \
    X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuModuleLoadData)               \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)            \
    X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx)               \
    X(cuFuncGetParamInfo) X(cuMemAllocHost) X(cuMemFreeHost)                  \
    X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuModuleGetGlobal)

struct lr_cu_api {
#define LR_CU_MEMBER(name) __typeof__(&name) p_##name;
    LR_CU_FUNCS(LR_CU_MEMBER)
#undef LR_CU_MEMBER
};
extern struct lr_cu_api lr_cu_api;
#define LRCU(name) (lr_cu_api.p_##name)

#endif
