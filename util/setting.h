/* Integer settings from the environment (LEECHRT_*): unset keeps the
 * default; a value must be a whole decimal integer in range, else LR_EINVAL
 * with a message naming the setting and the value (never silently 0 or on). */
#ifndef LR_SETTING_H
#define LR_SETTING_H

/* *out = the integer value of s in [lo, hi]; s NULL: *out unchanged.
 * what names the setting in the message ("GPU engine: LEECHRT_X"). */
int lr_setting_int(const char *what, const char *s, long lo, long hi, int *out);
/* Up to n integers in [lo, hi] separated by ':' ("8", "8:0:4"), into
 * out[0..n-1], the ones not given 0; s NULL: out unchanged. Anything else
 * (an empty piece, more than n, a non-integer) is LR_EINVAL naming the
 * setting, out unchanged. */
int lr_setting_ints(const char *what, const char *s, int n, long lo, long hi, int *out);

#endif
