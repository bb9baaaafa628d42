/* Fuzz target: unpacking the Leech archive from arbitrary bytes.
 * byte 0: gain bits (0..3, 3 is invalid); byte 1: block count; the rest is
 * the stream. A successful unpack must give indices inside L24(12) and gains
 * inside their width, and packing them again must give back the stream's
 * bytes (padding bits aside). A failure must be the documented one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layouts/leech/leech.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const int g = data[0] & 3;
    const uint64_t n = data[1];
    const uint8_t *in = data + 2;
    const size_t inlen = size - 2;
    uint64_t idx[256];
    uint8_t gain[256], again[256 * 7];
    int rc = lr_leech_archive_unpack(in, inlen, n, g, idx, gain);
    if (g == 3) {
        if (rc != LR_EINVAL) abort();
        return 0;
    }
    size_t need = lr_leech_archive_bytes(n, g);
    if (inlen < need) {
        if (rc != LR_EFORMAT) abort();
        return 0;
    }
    if (rc == LR_ERANGE) return 0; /* an index >= N12 in the stream */
    if (rc) abort();
    for (uint64_t i = 0; i < n; i++)
        if (idx[i] >= LR_LEECH_BALL12_POINTS || gain[i] >> g) abort();
    if (lr_leech_archive_pack(idx, gain, n, g, again, sizeof again)) abort();
    if (need && memcmp(again, in, need - 1)) abort();
    unsigned pad = (unsigned)(need * 8 - n * (47 + (uint64_t)g));
    if (need && (again[need - 1] >> pad) != (in[need - 1] >> pad)) abort();
    if (need && (again[need - 1] & ((1u << pad) - 1))) abort(); /* pack pads with zeros */
    return 0;
}
