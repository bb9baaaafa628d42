/* Strict parsing of command-line numbers: the whole value must be a decimal
 * integer in range, so "-n abc" or "--reps 5x" is refused with a message
 * naming the program and the flag instead of silently becoming 0 (atoi). */
#ifndef LR_ARGS_H
#define LR_ARGS_H
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0 and *out = the value if s is a decimal integer in [lo, hi] (an optional minus sign,
 * digits, nothing else); -1 otherwise. */
static inline int lr_parse_int(const char *s, long lo, long hi, int *out)
{
    /* digits, after at most a minus sign: strtol alone skips leading blanks and takes a '+' */
    if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1])))) return -1;
    char *e;
    errno = 0;
    long x = strtol(s, &e, 10);
    if (*e || errno || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

/* The same with the message on stderr: "prog: flag needs an integer in [lo, hi], got 'v'". */
static inline int lr_arg_int(const char *prog, const char *flag, const char *v, long lo, long hi, int *out)
{
    if (!lr_parse_int(v, lo, hi, out)) return 0;
    fprintf(stderr, "%s: %s needs an integer in [%ld, %ld], got '%s'\n", prog, flag, lo, hi, v ? v : "");
    return -1;
}

/* A comma-separated list of such integers ("128,256"): the count (>= 1), or
 * -1 with the message when an entry is not one or there are more than max. */
static inline int lr_arg_int_list(const char *prog, const char *flag, const char *v, long lo, long hi, int *out,
                                  int max)
{
    int n = 0;
    const char *p = v ? v : "";
    for (;;) {
        char item[32];
        const char *c = p;
        while (*c && *c != ',') c++;
        size_t len = (size_t)(c - p);
        if (n == max || len == 0 || len >= sizeof item) break;
        for (size_t i = 0; i < len; i++) item[i] = p[i];
        item[len] = 0;
        if (lr_parse_int(item, lo, hi, &out[n])) break;
        n++;
        if (!*c) return n;
        p = c + 1;
    }
    fprintf(stderr, "%s: %s needs up to %d comma-separated integers in [%ld, %ld], got '%s'\n", prog, flag, max, lo,
            hi, v ? v : "");
    return -1;
}

/* 1 when a is one of names (NULL-terminated): a program's options that take a value, so a
 * last argument is told apart as "needs a value" or "unknown option". */
static inline int lr_arg_in(const char *a, const char *const *names)
{
    for (; a && *names; names++)
        if (!strcmp(a, *names)) return 1;
    return 0;
}

/* 0 and *out = the value if s is a whole unsigned 64-bit integer (decimal, or
 * hexadecimal after 0x, as seeds are written); -1 otherwise: empty, a sign,
 * trailing characters, or past 2^64 - 1 (strtoull alone would wrap "-5" and
 * take "abc" as 0). */
static inline int lr_parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ' || *s == '\t') return -1;
    char *e;
    errno = 0;
    const int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned long long x = strtoull(s, &e, hex ? 16 : 10);
    if (*e || errno || e == s + (hex ? 2 : 0)) return -1;
    *out = x;
    return 0;
}

/* The same with the message on stderr, as lr_arg_int's. */
static inline int lr_arg_u64(const char *prog, const char *flag, const char *v, unsigned long long *out)
{
    if (!lr_parse_u64(v, out)) return 0;
    fprintf(stderr, "%s: %s needs an integer in [0, 2^64 - 1] (decimal, or hexadecimal after 0x), got '%s'\n", prog,
            flag, v ? v : "");
    return -1;
}

#endif
