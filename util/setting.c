#include "util/setting.h"
#include "util/args.h"
#include "util/err.h"

int lr_setting_int(const char *what, const char *s, long lo, long hi, int *out)
{
    if (!s) return LR_OK;
    int v;
    if (lr_parse_int(s, lo, hi, &v)) return LR_FAIL(LR_EINVAL, "%s=%s: want an integer in [%ld, %ld]", what, s, lo, hi);
    *out = v;
    return LR_OK;
}
