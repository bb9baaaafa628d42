/* A kernel specialization: a template from templates/ plus named integer
 * parameters. The parameters become `#define LR_<NAME> value` lines ahead of
 * the template source, and the kernel's extern "C" name (LR_KERNEL) encodes
 * them all, so no name lowering is needed and every specialization is a
 * distinct symbol. */
#ifndef LR_JIT_SPEC_H
#define LR_JIT_SPEC_H
#include <stddef.h>

#define LR_JIT_MAX_PARAMS 32
#define LR_JIT_MAX_OPTS 8

typedef struct lr_jit_param {
    char name[32];   /* [A-Za-z0-9_], upper-cased in the #define */
    long long value;
} lr_jit_param;

typedef struct lr_jit_spec {
    const char *tmpl;   /* template file name, e.g. "gemv_f16.cu" */
    const char *kernel; /* base kernel name, e.g. "gemv_f16" */
    const char *arch;   /* "sm_90", "sm_90a"; NULL = the current device */
    int nparams;
    lr_jit_param p[LR_JIT_MAX_PARAMS];
    int nopts;
    const char *opts[LR_JIT_MAX_OPTS]; /* extra NVRTC options, e.g. "-maxrregcount=64" */
} lr_jit_spec;

void lr_jit_spec_init(lr_jit_spec *s, const char *tmpl, const char *kernel);
/* Adds (or replaces) a parameter. */
int lr_jit_spec_set(lr_jit_spec *s, const char *name, long long value);
int lr_jit_spec_opt(lr_jit_spec *s, const char *opt);
long long lr_jit_spec_get(const lr_jit_spec *s, const char *name, long long dflt);
/* "gemv_f16__rows_5120__cols_17408" */
int lr_jit_kernel_name(const lr_jit_spec *s, char *buf, size_t n);
/* Prelude + template source, malloc'd. */
int lr_jit_source(const lr_jit_spec *s, char **src);

/* Embedded templates (generated at build time). */
const char *lr_template_get(const char *name, size_t *len);
int lr_template_count(void);
const char *lr_template_name(int i);

#endif
