#include "util/setting.h"
#include "util/args.h"
#include "util/err.h"

#include <string.h>

int lr_setting_int(const char *what, const char *s, long lo, long hi, int *out)
{
    if (!s) return LR_OK;
    int v;
    if (lr_parse_int(s, lo, hi, &v)) return LR_FAIL(LR_EINVAL, "%s=%s: want an integer in [%ld, %ld]", what, s, lo, hi);
    *out = v;
    return LR_OK;
}

int lr_setting_ints(const char *what, const char *s, int n, long lo, long hi, int *out)
{
    if (!s) return LR_OK;
    enum { MAXN = 16 };
    int v[MAXN] = { 0 }, k = 0;
    char piece[32];
    const char *p = s;
    for (;;) {
        const char *c = strchr(p, ':');
        const size_t len = c ? (size_t)(c - p) : strlen(p);
        if (k >= n || k >= MAXN || len >= sizeof piece) break;
        memcpy(piece, p, len), piece[len] = 0;
        if (lr_parse_int(piece, lo, hi, &v[k])) break;
        k++;
        if (!c) {
            for (int i = 0; i < n; i++) out[i] = i < k ? v[i] : 0;
            return LR_OK;
        }
        p = c + 1;
    }
    return LR_FAIL(LR_EINVAL, "%s=%s: want up to %d integers in [%ld, %ld] separated by ':'", what, s, n, lo, hi);
}
