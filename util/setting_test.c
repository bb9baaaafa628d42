/* lr_setting_int: unset keeps the default, in-range integers are taken,
 * garbage and out-of-range values are refused naming the setting.
 * lr_setting_next: a ';' list's items, empty ones included, a trailing ';'
 * ending the list. */
#include "test/t.h"
#include "util/err.h"
#include "util/setting.h"

#include <stdio.h>
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

/* the items of s joined by '|', each in brackets: "[a]|[]|[b]" */
static void items_of(const char *s, char *out, size_t cap)
{
    const char *item;
    size_t len, at = 0;
    out[0] = 0;
    for (const char *cur = s; lr_setting_next(&cur, &item, &len);)
        at += (size_t)snprintf(out + at, cap - at, "%s[%.*s]", at ? "|" : "", (int)len, item);
}

static int test_setting_next(void)
{
    static const char *cases[][2] = {
        { "", "" },          { "a", "[a]" },          { "a;", "[a]" },        { ";a", "[]|[a]" },
        { "a;;b", "[a]|[]|[b]" }, { "ab;cd;e", "[ab]|[cd]|[e]" }, { ";", "[]" }, { "a;b;", "[a]|[b]" },
    };
    char got[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        items_of(cases[i][0], got, sizeof got);
        T_ASSERT(!strcmp(got, cases[i][1]), "'%s': %s, want %s", cases[i][0], got, cases[i][1]);
    }
    const char *cur = NULL, *item;
    size_t len;
    T_ASSERT(!lr_setting_next(&cur, &item, &len), "NULL has an item");
    return T_PASS;
}

T_MAIN(T_CASE(test_setting_int), T_CASE(test_setting_next))
