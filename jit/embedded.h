/* Cubins compiled into the binary: an appliance build links a table made
 * from a warmed cache (tools/build/embed_cache.c, `make appliance`), so it
 * starts with no NVRTC and no cache folder. The library's default table is
 * empty (weak symbols); the appliance's generated object overrides it. */
#ifndef LR_JIT_EMBEDDED_H
#define LR_JIT_EMBEDDED_H
#include <stddef.h>
#include <stdint.h>

typedef struct lr_embedded_cubin {
    uint8_t key[16];
    const uint8_t *data;
    size_t len;
} lr_embedded_cubin;

extern const lr_embedded_cubin lr_embedded_cubin_table[];
extern const int lr_embedded_cubin_count;
/* "major.minor.build" of the NVRTC that compiled them ("" when none). */
extern const char lr_embedded_nvrtc_version[];

#endif
