/* Settings from the environment (LEECHRT_*): unset keeps the default; an
 * integer must be a whole decimal integer in range, else LR_EINVAL with a
 * message naming the setting and the value (never silently 0 or on); list
 * settings split at ';' the same way everywhere. */
#ifndef LR_SETTING_H
#define LR_SETTING_H

#include <stddef.h>

/* *out = the integer value of s in [lo, hi]; s NULL: *out unchanged.
 * what names the setting in the message ("GPU engine: LEECHRT_X"). */
int lr_setting_int(const char *what, const char *s, long lo, long hi, int *out);

/* The items of a ';'-separated list setting, one per call: *item and *len
 * the next one, *cur moved past it; 0 when none is left. "" has no items, a
 * trailing ';' ends the list ("a;" is one item), ";a" is two ("" and "a"):
 * callers refuse empty items themselves. */
int lr_setting_next(const char **cur, const char **item, size_t *len);

#endif
