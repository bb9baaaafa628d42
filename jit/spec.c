#include "jit/spec.h"
#include "util/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct lr_template_src { const char *name; const char *src; size_t len; };
extern const struct lr_template_src lr_template_table[];
extern const int lr_template_count_n;

const char *lr_template_get(const char *name, size_t *len)
{
    for (int i = 0; lr_template_table[i].name; i++)
        if (!strcmp(lr_template_table[i].name, name)) {
            if (len) *len = lr_template_table[i].len;
            return lr_template_table[i].src;
        }
    return NULL;
}

int lr_template_count(void) { return lr_template_count_n; }
const char *lr_template_name(int i) { return (i >= 0 && i < lr_template_count_n) ? lr_template_table[i].name : NULL; }

void lr_jit_spec_init(lr_jit_spec *s, const char *tmpl, const char *kernel)
{
    memset(s, 0, sizeof *s);
    s->tmpl = tmpl;
    s->kernel = kernel;
}

static int valid_ident(const char *n)
{
    if (!*n || strlen(n) >= 32) return 0;
    for (; *n; n++)
        if (!isalnum((unsigned char)*n) && *n != '_') return 0;
    return 1;
}

int lr_jit_spec_set(lr_jit_spec *s, const char *name, long long value)
{
    if (!valid_ident(name)) return LR_FAIL(LR_EINVAL, "bad specialization parameter name '%s'", name);
    for (int i = 0; i < s->nparams; i++) {
        if (!strcmp(s->p[i].name, name)) {
            s->p[i].value = value;
            return LR_OK;
        }
        /* both would be the one macro LR_NAME (upper case), the source taking
           one value while lr_jit_spec_get reports the other */
        if (!strcasecmp(s->p[i].name, name))
            return LR_FAIL(LR_EINVAL, "specialization parameters '%s' and '%s' differ only in case", s->p[i].name,
                           name);
    }
    if (s->nparams == LR_JIT_MAX_PARAMS) return LR_FAIL(LR_ERANGE, "too many specialization parameters");
    snprintf(s->p[s->nparams].name, sizeof s->p[0].name, "%s", name);
    s->p[s->nparams++].value = value;
    return LR_OK;
}

int lr_jit_spec_opt(lr_jit_spec *s, const char *opt)
{
    if (s->nopts == LR_JIT_MAX_OPTS) return LR_FAIL(LR_ERANGE, "too many NVRTC options");
    s->opts[s->nopts++] = opt;
    return LR_OK;
}

long long lr_jit_spec_get(const lr_jit_spec *s, const char *name, long long dflt)
{
    for (int i = 0; i < s->nparams; i++)
        if (!strcmp(s->p[i].name, name)) return s->p[i].value;
    return dflt;
}

int lr_jit_kernel_name(const lr_jit_spec *s, char *buf, size_t n)
{
    if (!s->kernel || !valid_ident(s->kernel)) return LR_FAIL(LR_EINVAL, "bad kernel base name");
    size_t len = (size_t)snprintf(buf, n, "%s", s->kernel);
    for (int i = 0; i < s->nparams && len < n; i++) {
        const long long v = s->p[i].value;
        /* the magnitude in unsigned arithmetic: -v overflows for LLONG_MIN */
        const unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
        len += (size_t)snprintf(buf + len, n - len, "__%s_%s%llu", s->p[i].name, v < 0 ? "m" : "", mag);
    }
    if (len >= n) return LR_FAIL(LR_ERANGE, "kernel name too long");
    return LR_OK;
}

int lr_jit_source(const lr_jit_spec *s, char **out)
{
    *out = NULL;
    size_t tlen;
    const char *t = lr_template_get(s->tmpl, &tlen);
    if (!t) return LR_FAIL(LR_EINVAL, "no template named '%s'", s->tmpl);
    char name[1024];
    int rc = lr_jit_kernel_name(s, name, sizeof name);
    if (rc) return rc;
    size_t cap = tlen + 2048 + (size_t)s->nparams * 80;
    char *src = malloc(cap);
    if (!src) return LR_FAIL(LR_ENOMEM, "out of memory");
    size_t len = (size_t)snprintf(src, cap, "// specialization of %s\n#define LR_KERNEL %s\n", s->tmpl, name);
    for (int i = 0; i < s->nparams; i++) {
        char up[32];
        size_t k = 0;
        for (; s->p[i].name[k]; k++) up[k] = (char)toupper((unsigned char)s->p[i].name[k]);
        up[k] = 0;
        long long v = s->p[i].value;
        /* Plain int literals where they fit, so templates can mix them with int freely. */
        int fits = v >= -2147483647LL && v <= 2147483647LL;
        len += (size_t)snprintf(src + len, cap - len, "#define LR_%s %lld%s\n", up, v, fits ? "" : "LL");
    }
    len += (size_t)snprintf(src + len, cap - len, "#line 1 \"%s\"\n", s->tmpl);
    memcpy(src + len, t, tlen);
    src[len + tlen] = 0;
    *out = src;
    return LR_OK;
}
