/* The cache key: XXH3-128 over a length-prefixed encoding of everything that
 * determines a cubin (never of the output: NVRTC output is not byte-stable). */
#ifndef LR_JIT_KEY_H
#define LR_JIT_KEY_H
#include <stddef.h>
#include <stdint.h>

#define LR_CACHE_FORMAT_VERSION 1

typedef struct lr_key { uint8_t b[16]; } lr_key;

typedef struct lr_key_inputs {
    const char *source;                 /* prelude + template */
    const char *const *headers;         /* in-memory headers, name/content pairs */
    int nheaders;
    const char *const *opts;            /* every option in order, base options first */
    int nopts;
    int nvrtc_major, nvrtc_minor, nvrtc_build;
    const char *arch;
    int driver_version;
} lr_key_inputs;

lr_key lr_key_compute(const lr_key_inputs *in);
void lr_key_hex(const lr_key *k, char out[33]);
int lr_key_parse(const char *hex, lr_key *k);

#endif
