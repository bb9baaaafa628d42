/* A fuzz input as a NUL-terminated string, for targets that parse settings:
 * the caller frees it; NULL when out of memory (the target then returns 0). */
#ifndef LR_FUZZ_CSTR_H
#define LR_FUZZ_CSTR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *lr_fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) memcpy(s, data, size), s[size] = 0;
    return s;
}

#endif
