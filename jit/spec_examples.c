#include "jit/spec_examples.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernel names must outlive the specs: keep them in a small static pool. */
static char g_names[256][64];
static int g_nnames;

static const char *intern(const char *s, size_t n)
{
    for (int i = 0; i < g_nnames; i++)
        if (strlen(g_names[i]) == n && !strncmp(g_names[i], s, n)) return g_names[i];
    if (g_nnames == 256 || n >= 64) return NULL;
    memcpy(g_names[g_nnames], s, n);
    g_names[g_nnames][n] = 0;
    return g_names[g_nnames++];
}

int lr_spec_examples(const char *tmpl, lr_jit_spec *specs, int max)
{
    size_t len;
    const char *src = lr_template_get(tmpl, &len);
    if (!src) return LR_FAIL(LR_EINVAL, "no template %s", tmpl), -1;
    int n = 0;
    for (const char *p = strstr(src, "// @spec "); p; p = strstr(p + 1, "// @spec ")) {
        const char *q = p + 9, *eol = strchr(q, '\n');
        if (!eol) eol = src + len;
        size_t kl = strcspn(q, " \n");
        const char *kname = intern(q, kl);
        if (!kname) return LR_FAIL(LR_EINVAL, "%s: bad @spec kernel name", tmpl), -1;
        if (n == max) break;
        lr_jit_spec_init(&specs[n], tmpl, kname);
        q += kl;
        while (q < eol) {
            while (q < eol && *q == ' ') q++;
            if (q >= eol) break;
            const char *eq = memchr(q, '=', (size_t)(eol - q));
            if (!eq) return LR_FAIL(LR_EINVAL, "%s: @spec item without '='", tmpl), -1;
            char name[32];
            size_t nl = (size_t)(eq - q);
            if (nl == 0 || nl >= sizeof name) return LR_FAIL(LR_EINVAL, "%s: bad @spec name", tmpl), -1;
            memcpy(name, q, nl);
            name[nl] = 0;
            char *end;
            long long v = strtoll(eq + 1, &end, 0);
            if (end == eq + 1) return LR_FAIL(LR_EINVAL, "%s: @spec %s has no value", tmpl, name), -1;
            if (lr_jit_spec_set(&specs[n], name, v)) return -1;
            q = end;
        }
        n++;
    }
    return n;
}
