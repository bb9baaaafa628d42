/* lr_setting_int: unset keeps the default, in-range integers are taken,
 * garbage and out-of-range values are refused naming the setting;
 * lr_setting_ints the same for a ':' list, the values not given 0. */
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

static int test_setting_ints(void)
{
    int v[3] = { 7, 8, 9 };
    T_OK(lr_setting_ints("X", NULL, 3, 0, 4096, v));
    T_ASSERT(v[0] == 7 && v[1] == 8 && v[2] == 9, "unset changed the defaults");
    T_OK(lr_setting_ints("X", "24", 3, 0, 4096, v));
    T_ASSERT(v[0] == 24 && v[1] == 0 && v[2] == 0, "24 read as %d:%d:%d", v[0], v[1], v[2]);
    T_OK(lr_setting_ints("X", "1:0:4096", 3, 0, 4096, v));
    T_ASSERT(v[0] == 1 && v[1] == 0 && v[2] == 4096, "1:0:4096 read as %d:%d:%d", v[0], v[1], v[2]);
    T_OK(lr_setting_ints("X", "5:6", 3, 0, 4096, v));
    T_ASSERT(v[0] == 5 && v[1] == 6 && v[2] == 0, "5:6 read as %d:%d:%d", v[0], v[1], v[2]);
    static const char *bad[] = { "", ":", "1:", ":1", "1:2:3:4", "4097", "-1", "1::2", "1,2", "x", "1.5",
                                 "123456789012345678901234567890123" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v[0] = v[1] = v[2] = 5;
        T_ASSERT(lr_setting_ints("LEECHRT_L2PF", bad[i], 3, 0, 4096, v) == LR_EINVAL, "'%s' accepted", bad[i]);
        T_ASSERT(v[0] == 5 && v[1] == 5 && v[2] == 5 && strstr(lr_errmsg(), "LEECHRT_L2PF"), "'%s': %s", bad[i],
                 lr_errmsg());
    }
    lr_clear_error();
    return T_PASS;
}

T_MAIN(T_CASE(test_setting_int), T_CASE(test_setting_ints))
