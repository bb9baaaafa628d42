#include "layouts/leech_vram/ctab.h"

#include "layouts/leech/leech.h"
#include "util/err.h"
#include "util/half.h"

#include <math.h>
#include <string.h>

int lr_ctab_entries(int max_shell, int gain_bits, int *n)
{
    const lr_leech_class *cls;
    int nc;
    if (gain_bits < 0 || gain_bits > 2) return LR_FAIL(LR_EINVAL, "ctab: gain_bits %d", gain_bits);
    int rc = lr_leech_classes(max_shell, &cls, &nc);
    if (rc) return rc;
    *n = 1 + (nc << gain_bits);
    return LR_OK;
}

int lr_ctab_build(int max_shell, int gain_bits, const float *centroid, uint8_t *tab, size_t tab_bytes)
{
    const lr_leech_class *cls;
    int nc, n;
    int rc = lr_ctab_entries(max_shell, gain_bits, &n);
    if (rc) return rc;
    if ((rc = lr_leech_classes(max_shell, &cls, &nc))) return rc;
    if (tab_bytes < (size_t)n * LR_CTAB_ENTRY) return LR_FAIL(LR_EINVAL, "ctab: %zu bytes < %d entries", tab_bytes, n);
    memset(tab, 0, (size_t)n * LR_CTAB_ENTRY);
    tab[7] = 0x64; /* origin: all levels 0, value 0, scale 0 */
    for (int c = 0; c < nc; c++) {
        if (cls[c].nvals > 5) return LR_FAIL(LR_EINVAL, "ctab: class %d has %d values (> 5)", c, cls[c].nvals);
        for (int g = 0; g < 1 << gain_bits; g++) {
            uint8_t *e = tab + (size_t)lr_ctab_entry(c, g, gain_bits) * LR_CTAB_ENTRY;
            for (int l = 0; l < cls[c].nvals; l++) e[l] = cls[c].vals[l];
            e[7] = 0x64;
            if (!isfinite(centroid[g])) return LR_FAIL(LR_EINVAL, "ctab: centroid %d not finite", g);
            uint16_t s = lr_float_to_half((float)(centroid[g] / sqrt(16.0 * cls[c].shell)));
            uint16_t o = lr_float_to_half(-1024.0f * lr_half_to_float(s));
            if (lr_half_to_float(o) != -1024.0f * lr_half_to_float(s))
                return LR_FAIL(LR_ERANGE, "ctab: centroid %g out of f16 range", centroid[g]);
            memcpy(e + 8, &s, 2), memcpy(e + 10, &s, 2), memcpy(e + 12, &o, 2), memcpy(e + 14, &o, 2);
        }
    }
    return LR_OK;
}

float lr_ctab_scale_f16(const uint8_t *tab, int entry)
{
    uint16_t s;
    memcpy(&s, tab + (size_t)entry * LR_CTAB_ENTRY + 8, 2);
    return lr_half_to_float(s);
}
