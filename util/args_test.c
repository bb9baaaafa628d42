/* util/args.h: the strict number parsers the programs' flags go through. */
#include "test/t.h"
#include "util/args.h"

#include <string.h>

static int test_parse_int(void)
{
    int x = -7;
    T_ASSERT(!lr_parse_int("42", 0, 100, &x) && x == 42, "42 -> %d", x);
    T_ASSERT(!lr_parse_int("-3", -5, 5, &x) && x == -3, "-3 -> %d", x);
    static const char *const bad[] = { "", "1.5", "12x", "abc", " ", "101", "-6", "4294967297", " 4", "+4", "\t4", "-", "- 3" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        x = -7;
        T_ASSERT(lr_parse_int(bad[i], -5, 100, &x) == -1 && x == -7, "'%s' accepted (%d)", bad[i], x);
    }
    T_ASSERT(lr_parse_int(NULL, 0, 1, &x) == -1, "NULL accepted");
    int v[4];
    T_ASSERT(lr_arg_int_list("t", "--l", "1,2,3", 0, 9, v, 4) == 3 && v[0] == 1 && v[2] == 3, "list");
    T_ASSERT(lr_arg_int_list("t", "--l", "1,,3", 0, 9, v, 4) == -1, "empty item accepted");
    T_ASSERT(lr_arg_int_list("t", "--l", "1,2,3,4,5", 0, 9, v, 4) == -1, "more than max accepted");
    return T_PASS;
}

static int test_parse_u64(void)
{
    unsigned long long x = 7;
    T_ASSERT(!lr_parse_u64("0", &x) && x == 0, "0 -> %llu", x);
    T_ASSERT(!lr_parse_u64("9007199254740993", &x) && x == 9007199254740993ull, "2^53 + 1 -> %llu", x);
    T_ASSERT(!lr_parse_u64("18446744073709551615", &x) && x == 18446744073709551615ull, "2^64 - 1 -> %llu", x);
    T_ASSERT(!lr_parse_u64("0x10", &x) && x == 16, "0x10 -> %llu", x);
    T_ASSERT(!lr_parse_u64("010", &x) && x == 10, "010 is decimal: %llu", x);
    static const char *const bad[] = { "", "-1", "-5x", "+3", " 3", "abc", "1.5", "0x", "0xg", "12 ",
                                       "18446744073709551616" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        x = 7;
        T_ASSERT(lr_parse_u64(bad[i], &x) == -1 && x == 7, "'%s' accepted (%llu)", bad[i], x);
    }
    T_ASSERT(lr_parse_u64(NULL, &x) == -1, "NULL accepted");
    return T_PASS;
}

static int test_arg_in(void)
{
    static const char *const v[] = { "-c", "--out", NULL };
    T_ASSERT(lr_arg_in("-c", v) && lr_arg_in("--out", v), "listed names not found");
    T_ASSERT(!lr_arg_in("--outx", v) && !lr_arg_in("-", v) && !lr_arg_in("", v) && !lr_arg_in(NULL, v), "unlisted found");
    return T_PASS;
}

T_MAIN(T_CASE(test_arg_in), T_CASE(test_parse_int), T_CASE(test_parse_u64))
