/* Integer settings from the environment (LEECHRT_*): unset keeps the
 * default; a value must be a whole decimal integer in range, else LR_EINVAL
 * with a message naming the setting and the value (never silently 0 or on). */
#ifndef LR_SETTING_H
#define LR_SETTING_H

/* *out = the integer value of s in [lo, hi]; s NULL: *out unchanged.
 * what names the setting in the message ("GPU engine: LEECHRT_X"). */
int lr_setting_int(const char *what, const char *s, long lo, long hi, int *out);

#endif
