/* gzip data inflated into memory, with a bound on what it may become. */
#ifndef LR_GUNZIP_H
#define LR_GUNZIP_H
#include <stddef.h>

/* Inflates the gzip data at in (n bytes) into a new NUL-terminated buffer
 * *out of *outn bytes, at most max (< 4 GiB). Every member in sequence, as
 * gzip -d and zlib's gzread (the tokenizer loader's reader) do: concatenated
 * files, bgzip. After a member, input that does not start with the gzip magic
 * (1f 8b) is ignored, as gzread ignores it (zero padding, say; gzip -d warns
 * of trailing garbage); a later member that does is inflated and must be
 * whole. Why the bound: a few KB of gzip can inflate to gigabytes, and the
 * buffer grows from min(4 n, max), never past max. Errors (LR_EFORMAT:
 * corrupt, truncated or past max; LR_ENOMEM) name what. */
int lr_gunzip(const void *in, size_t n, size_t max, const char *what, char **out, size_t *outn);

#endif
