#include "jit/nvrtc.h"
#include "jit/spec.h"
#include "util/err.h"
#include "util/log.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    __typeof__(&nvrtcVersion) Version;
    __typeof__(&nvrtcCreateProgram) CreateProgram;
    __typeof__(&nvrtcCompileProgram) CompileProgram;
    __typeof__(&nvrtcDestroyProgram) DestroyProgram;
    __typeof__(&nvrtcGetProgramLogSize) GetProgramLogSize;
    __typeof__(&nvrtcGetProgramLog) GetProgramLog;
    __typeof__(&nvrtcGetCUBINSize) GetCUBINSize;
    __typeof__(&nvrtcGetCUBIN) GetCUBIN;
    __typeof__(&nvrtcGetPTXSize) GetPTXSize;
    __typeof__(&nvrtcGetPTX) GetPTX;
    __typeof__(&nvrtcGetErrorString) GetErrorString;
} N;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_ok;
static char g_msg[512];

static void open_nvrtc(void)
{
    const char *env = getenv("LEECHRT_NVRTC");
    /* "none": behave as an appliance without NVRTC (pre-warmed cache only). */
    if (env && !strcmp(env, "none")) {
        snprintf(g_msg, sizeof g_msg, "NVRTC disabled (LEECHRT_NVRTC=none): only pre-compiled kernels can load");
        return;
    }
    if (env && *env) {
        /* a library asked for by name is the one used, or none: a mistyped path once
           fell back to the system's NVRTC without a word */
        void *lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(g_msg, sizeof g_msg, "LEECHRT_NVRTC=%s cannot be loaded (%s)", env, dlerror());
            lr_warn("%s: no NVRTC in this process (only pre-compiled kernels load)", g_msg);
            return;
        }
        dlclose(lib);
    }
    const char *names[] = { env, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                            "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so" };
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        if (names[i] && *names[i]) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(g_msg, sizeof g_msg, "NVRTC not found (libnvrtc.so.13): install the CUDA toolkit or use a pre-warmed cache");
        return;
    }
#define SYM(f) *(void **)&N.f = dlsym(lib, "nvrtc" #f); if (!N.f) { snprintf(g_msg, sizeof g_msg, "NVRTC lacks nvrtc%s", #f); return; }
    SYM(Version) SYM(CreateProgram) SYM(CompileProgram) SYM(DestroyProgram) SYM(GetProgramLogSize)
    SYM(GetProgramLog) SYM(GetCUBINSize) SYM(GetCUBIN) SYM(GetPTXSize) SYM(GetPTX) SYM(GetErrorString)
#undef SYM
    g_ok = 1;
}

int lr_nvrtc_available(void)
{
    pthread_once(&g_once, open_nvrtc);
    return g_ok;
}

static int need(void)
{
    if (!lr_nvrtc_available()) return LR_FAIL(LR_ENVRTC, "%s", g_msg);
    return LR_OK;
}

/* Template headers (.cuh files) handed to NVRTC in memory. */
static int collect_headers(const char **srcs, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < lr_template_count() && n < max; i++) {
        const char *nm = lr_template_name(i);
        size_t l = strlen(nm);
        if (l > 4 && !strcmp(nm + l - 4, ".cuh")) {
            names[n] = nm;
            srcs[n++] = lr_template_get(nm, NULL);
        }
    }
    return n;
}

int lr_nvrtc_base_options(const char *arch, const char **opts, int max, char *archbuf, size_t archlen)
{
    if (max < 4) return 0;
    snprintf(archbuf, archlen, "--gpu-architecture=%s", arch);
    opts[0] = archbuf;
    opts[1] = "--std=c++17";
    opts[2] = "-default-device";
    opts[3] = "-lineinfo";
    return 4;
}

static int compile(const char *name, const char *src, const char *arch, const char *const *opts, int nopts,
                   int want_ptx, void **out, size_t *outlen)
{
    int rc = need();
    if (rc) return rc;
    *out = NULL;
    *outlen = 0;
    const char *hsrc[64], *hname[64];
    int nh = collect_headers(hsrc, hname, 64);
    nvrtcProgram prog;
    nvrtcResult r = N.CreateProgram(&prog, src, name, nh, hsrc, hname);
    if (r != NVRTC_SUCCESS) return LR_FAIL(LR_ENVRTC, "%s: nvrtcCreateProgram: %s", name, N.GetErrorString(r));
    const char *all[LR_JIT_MAX_OPTS + 8];
    char archbuf[64];
    int na = lr_nvrtc_base_options(arch, all, 8, archbuf, sizeof archbuf);
    for (int i = 0; i < nopts && na < LR_JIT_MAX_OPTS + 8; i++) all[na++] = opts[i];
    r = N.CompileProgram(prog, na, all);
    if (r != NVRTC_SUCCESS) {
        size_t ln = 0;
        N.GetProgramLogSize(prog, &ln);
        char *log = malloc(ln + 1);
        if (log) {
            N.GetProgramLog(prog, log);
            log[ln] = 0;
        }
        rc = LR_FAIL(LR_ENVRTC, "%s for %s: %s\n%s", name, arch, N.GetErrorString(r), log ? log : "");
        free(log);
        N.DestroyProgram(&prog);
        return rc;
    }
    size_t n = 0;
    r = want_ptx ? N.GetPTXSize(prog, &n) : N.GetCUBINSize(prog, &n);
    char *buf = r == NVRTC_SUCCESS ? malloc(n + 1) : NULL;
    if (buf) r = want_ptx ? N.GetPTX(prog, buf) : N.GetCUBIN(prog, buf);
    N.DestroyProgram(&prog);
    if (r != NVRTC_SUCCESS || !buf || n == 0) {
        free(buf);
        return LR_FAIL(LR_ENVRTC, "%s: no %s output for %s", name, want_ptx ? "PTX" : "CUBIN", arch);
    }
    buf[n] = 0;
    *out = buf;
    *outlen = n;
    return LR_OK;
}

int lr_nvrtc_compile(const char *name, const char *src, const char *arch, const char *const *opts, int nopts,
                     void **cubin, size_t *len)
{
    return compile(name, src, arch, opts, nopts, 0, cubin, len);
}

static pthread_once_t g_ver_once = PTHREAD_ONCE_INIT;
static lr_nvrtc_version g_ver;
static int g_ver_rc;
static char g_ver_msg[512];

static void read_version(void)
{
    g_ver_rc = need();
    if (g_ver_rc) { snprintf(g_ver_msg, sizeof g_ver_msg, "%s", lr_errmsg()); return; }
    N.Version(&g_ver.major, &g_ver.minor);
    static const char probe[] = "__device__ int lr_cudacc_build = __CUDACC_VER_BUILD__;\n";
    void *ptx;
    size_t n;
    /* PTX output needs a virtual architecture; any supported one will do. */
    g_ver_rc = compile("nvrtc_build_probe.cu", probe, "compute_80", NULL, 0, 1, &ptx, &n);
    if (g_ver_rc) { snprintf(g_ver_msg, sizeof g_ver_msg, "%s", lr_errmsg()); return; }
    const char *p = strstr((char *)ptx, "lr_cudacc_build = ");
    if (!p) p = strstr((char *)ptx, "lr_cudacc_build=");
    if (p) g_ver.build = atoi(strchr(p, '=') + 1);
    else {
        g_ver_rc = LR_ENVRTC;
        snprintf(g_ver_msg, sizeof g_ver_msg, "could not read NVRTC build number from PTX");
    }
    free(ptx);
}

int lr_nvrtc_version_get(lr_nvrtc_version *v)
{
    pthread_once(&g_ver_once, read_version);
    if (g_ver_rc) return LR_FAIL(g_ver_rc, "%s", g_ver_msg);
    *v = g_ver;
    return LR_OK;
}
