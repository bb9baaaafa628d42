#include "jit/key.h"

#include <stdio.h>
#include <string.h>
#include <xxhash.h>

/* Every field is written as <u64 length><bytes>, so no two different inputs
 * can concatenate to the same byte stream. */
static void put(XXH3_state_t *st, const void *p, size_t n)
{
    uint64_t len = n;
    XXH3_128bits_update(st, &len, sizeof len);
    if (n) XXH3_128bits_update(st, p, n);
}
static void put_str(XXH3_state_t *st, const char *s) { put(st, s ? s : "", s ? strlen(s) : 0); }
static void put_int(XXH3_state_t *st, int64_t v) { put(st, &v, sizeof v); }

lr_key lr_key_compute(const lr_key_inputs *in)
{
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    put_str(st, "leechrt-cubin");
    put_int(st, LR_CACHE_FORMAT_VERSION);
    put_str(st, in->source);
    put_int(st, in->nheaders);
    for (int i = 0; i < 2 * in->nheaders; i++) put_str(st, in->headers[i]);
    put_int(st, in->nopts);
    for (int i = 0; i < in->nopts; i++) put_str(st, in->opts[i]);
    put_int(st, in->nvrtc_major);
    put_int(st, in->nvrtc_minor);
    put_int(st, in->nvrtc_build);
    put_str(st, in->arch);
    put_int(st, in->driver_version);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    lr_key k;
    memcpy(k.b, c.digest, 16);
    return k;
}

void lr_key_hex(const lr_key *k, char out[33])
{
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", k->b[i]);
    out[32] = 0;
}

int lr_key_parse(const char *hex, lr_key *k)
{
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return -1;
        k->b[i] = (uint8_t)v;
    }
    return 0;
}
