/* NVRTC, opened with dlopen so binaries that only use pre-compiled cubins run
 * without it. Compiles a source to a CUBIN for one exact architecture. */
#ifndef LR_JIT_NVRTC_H
#define LR_JIT_NVRTC_H
#include <stddef.h>

typedef struct lr_nvrtc_version { int major, minor, build; } lr_nvrtc_version;

int lr_nvrtc_available(void);
/* Major and minor from nvrtcVersion; the build number from compiling
 * __CUDACC_VER_BUILD__ once (NVRTC exposes it no other way). */
int lr_nvrtc_version_get(lr_nvrtc_version *v);
/* Compiles src (named name, for messages) with the given options plus
 * --gpu-architecture=arch; headers are every embedded .cuh template.
 * On failure the message holds the NVRTC log. */
int lr_nvrtc_compile(const char *name, const char *src, const char *arch, const char *const *opts,
                     int nopts, void **cubin, size_t *cubin_len);
/* The fixed options every compile uses, in order (part of the cache key). */
int lr_nvrtc_base_options(const char *arch, const char **opts, int max, char *archbuf, size_t archlen);

#endif
