/* Fuzz target: arbitrary text through the command-line number parsers
 * (util/args.h). What they accept is a whole decimal (or 0x) integer in
 * range whose value round-trips; everything else is refused untouched. */
#include "util/args.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[64];
    if (size >= sizeof s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    int x = -7;
    if (!lr_parse_int(s, -1000, 1000, &x)) {
        if (x < -1000 || x > 1000 || strtol(s, NULL, 10) != x) abort();
    } else if (x != -7) abort();
    unsigned long long u = 7;
    if (!lr_parse_u64(s, &u)) {
        const int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        if (!*s || *s == '-' || *s == '+' || strtoull(s, NULL, hex ? 16 : 10) != u) abort();
    } else if (u != 7) abort();
    return 0;
}
