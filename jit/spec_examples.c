#include "jit/spec_examples.h"
#include "util/err.h"

#include <stdio.h>
#include <errno.h>
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

int lr_spec_parse(const char *tmpl, const char *q, size_t len, lr_jit_spec *spec)
{
    const char *eol = q + len;
    while (q < eol && *q == ' ') q++;
    size_t kl = 0;
    while (q + kl < eol && q[kl] != ' ' && q[kl] != '\n') kl++;
    const char *kname = intern(q, kl);
    if (!kl || !kname) return LR_FAIL(LR_EINVAL, "%s: bad @spec kernel name", tmpl);
    lr_jit_spec_init(spec, tmpl, kname);
    q += kl;
    while (q < eol) {
        while (q < eol && (*q == ' ' || *q == '\n')) q++;
        if (q >= eol) break;
        const char *eq = memchr(q, '=', (size_t)(eol - q));
        if (!eq) return LR_FAIL(LR_EINVAL, "%s: @spec item without '='", tmpl);
        char name[32];
        size_t nl = (size_t)(eq - q);
        if (nl == 0 || nl >= sizeof name) return LR_FAIL(LR_EINVAL, "%s: bad @spec name", tmpl);
        memcpy(name, q, nl);
        name[nl] = 0;
        /* the value: digits up to the next space or the end (strtoll must
           not read past the line, which need not be NUL-terminated) */
        char num[32];
        size_t vl = 0;
        while (eq + 1 + vl < eol && eq[1 + vl] != ' ' && eq[1 + vl] != '\n') vl++;
        if (vl == 0 || vl >= sizeof num) return LR_FAIL(LR_EINVAL, "%s: @spec %s has no value", tmpl, name);
        memcpy(num, eq + 1, vl);
        num[vl] = 0;
        char *end;
        errno = 0;
        long long v = strtoll(num, &end, 0);
        if (*end || errno) return LR_FAIL(LR_EINVAL, "%s: @spec %s=%s is not a number in range", tmpl, name, num);
        int rc = lr_jit_spec_set(spec, name, v);
        if (rc) return rc;
        q = eq + 1 + vl;
    }
    return LR_OK;
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
        if (n == max) break;
        if (lr_spec_parse(tmpl, q, (size_t)(eol - q), &specs[n])) return -1;
        n++;
    }
    return n;
}
