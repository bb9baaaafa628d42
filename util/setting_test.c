/* lr_setting_int: unset keeps the default, in-range integers are taken,
 * garbage and out-of-range values are refused naming the setting. */
#include "test/t.h"
#include "util/err.h"
#include "util/setting.h"

#include <string.h>

static int test_setting_int(void)
{
    int v = 7;
    T_OK(lr_setting_int("X", NULL, 0, 1, &v));
    T_ASSERT(v == 7, "unset changed the default to %d", v);
    T_OK(lr_setting_int("X", "1", 0, 1, &v));
    T_ASSERT(v == 1, "1 read as %d", v);
    T_OK(lr_setting_int("X", "0", 0, 1, &v));
    T_ASSERT(v == 0, "0 read as %d", v);
    static const char *bad[] = { "", "2", "-1", "yes", "1x", "0.5", "on" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 5;
        T_ASSERT(lr_setting_int("LEECHRT_ROPE_TABLE", bad[i], 0, 1, &v) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(v == 5 && strstr(lr_errmsg(), "LEECHRT_ROPE_TABLE"), "'%s': %d, %s", bad[i], v, lr_errmsg());
    }
    lr_clear_error();
    return T_PASS;
}

T_MAIN(T_CASE(test_setting_int))
