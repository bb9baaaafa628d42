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

int lr_setting_next(const char **cur, const char **item, size_t *len)
{
    const char *s = *cur;
    if (!s || !*s) return 0;
    const char *semi = strchr(s, ';');
    *item = s, *len = semi ? (size_t)(semi - s) : strlen(s);
    *cur = semi ? semi + 1 : s + *len;
    return 1;
}
