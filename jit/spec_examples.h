/* Every template declares example specializations in `// @spec KERNEL
 * name=value ...` lines; CI compiles each one for every architecture, and
 * the cache tool can warm them. */
#ifndef LR_JIT_SPEC_EXAMPLES_H
#define LR_JIT_SPEC_EXAMPLES_H
#include "jit/spec.h"

/* Parses the @spec lines of template `tmpl` into specs (at most max).
 * Returns the count, or -1 with a message on a malformed line. */
int lr_spec_examples(const char *tmpl, lr_jit_spec *specs, int max);

/* One spec, "KERNEL name=value ..." (len bytes at line, no NUL needed),
 * of template tmpl (the name is kept, not copied). */
int lr_spec_parse(const char *tmpl, const char *line, size_t len, lr_jit_spec *spec);

#endif
