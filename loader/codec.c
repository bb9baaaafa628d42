#include "loader/codec.h"
#include "layouts/leech/leech.h"
#include "loader/model.h"
#include "util/err.h"

#include <math.h>
#include <string.h>

#define MAX_NELEM (1ull << 40)
#define MAX_DIM (1ull << 32)

const char *lr_codec_name(int codec)
{
    switch (codec) {
    case LR_CODEC_F32: return "f32";
    case LR_CODEC_F16: return "f16";
    case LR_CODEC_BF16: return "bf16";
    case LR_CODEC_INT8G: return "int8g";
    case LR_CODEC_LEECH: return "leech";
    case LR_CODEC_TRELLIS: return "trellis";
    case LR_CODEC_BCQ: return "bcq";
    case LR_CODEC_HNLQ: return "hnlq";
    }
    return "?";
}

const char *lr_part_name(int codec, int part)
{
    static const char *const leech[] = { "scale", "archive", "tail" }, *const i8[] = { "q", "sb" };
    if (codec == LR_CODEC_LEECH && part >= 0 && part < 3) return leech[part];
    if (codec == LR_CODEC_INT8G && part >= 0 && part < 2) return i8[part];
    return part == 0 ? "data" : "?";
}

int lr_desc_nelem(const lr_tensor_desc *d, uint64_t *nelem)
{
    *nelem = 0;
    if (d->ndim < 1 || d->ndim > 4) return LR_FAIL(LR_EFORMAT, "ndim %d is not in 1..4", d->ndim);
    uint64_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (i >= d->ndim) {
            if (d->dims[i]) return LR_FAIL(LR_EFORMAT, "dims[%d] = %llu past ndim %d (must be 0)", i,
                                           (unsigned long long)d->dims[i], d->ndim);
            continue;
        }
        if (d->dims[i] < 1 || d->dims[i] > MAX_DIM)
            return LR_FAIL(LR_EFORMAT, "dims[%d] = %llu is not in [1, 2^32]", i, (unsigned long long)d->dims[i]);
        /* Both factors are <= 2^40 here, so the product cannot wrap before the check. */
        if (d->dims[i] > MAX_NELEM / n)
            return LR_FAIL(LR_EFORMAT, "more than 2^40 elements");
        n *= d->dims[i];
    }
    *nelem = n;
    return LR_OK;
}

static int leech_parts(const lr_tensor_desc *d, uint64_t bytes[4])
{
    if (d->ndim != 2) return LR_FAIL(LR_EFORMAT, "leech tensor must be 2-D (ndim %d)", d->ndim);
    if (d->leech.max_shell != 12)
        return LR_FAIL(d->leech.max_shell == 13 ? LR_EUNSUPPORTED : LR_EFORMAT,
                       "leech max shell %d (only 12: the 47-bit archive)", d->leech.max_shell);
    int g = d->leech.gain_bits;
    if (g < 0 || g > 2) return LR_FAIL(LR_EFORMAT, "leech gain bits %d is not in 0..2", g);
    if (d->leech.rot_kind != LR_ROT_NONE && d->leech.rot_kind != LR_ROT_HADAMARD && d->leech.rot_kind != LR_ROT_HEADS &&
        d->leech.rot_kind != LR_ROT_BLOCKS)
        return LR_FAIL(LR_EFORMAT, "unknown rotation kind %d", d->leech.rot_kind);
    for (int i = 0; i < 4; i++) {
        float c = d->leech.centroid[i];
        if (i < (1 << g) && !(isfinite(c) && c > 0))
            return LR_FAIL(LR_EFORMAT, "gain centroid %d = %g is not finite and positive", i, (double)c);
        if (i >= (1 << g) && c != 0)
            return LR_FAIL(LR_EFORMAT, "unused gain centroid %d = %g (must be 0)", i, (double)c);
    }
    uint64_t rows = d->dims[0], cols = d->dims[1], nblk = cols / LR_LEECH_DIM, tail = cols % LR_LEECH_DIM;
    bytes[0] = rows * 4;
    bytes[1] = lr_leech_archive_bytes(rows * nblk, g);
    bytes[2] = rows * tail * 2;
    return LR_OK;
}

static int int8g_parts(const lr_tensor_desc *d, uint64_t bytes[4])
{
    if (d->ndim != 2) return LR_FAIL(LR_EFORMAT, "int8g tensor must be 2-D (ndim %d)", d->ndim);
    int g = d->i8.group;
    if (g < 16 || g > 1024 || (g & (g - 1)))
        return LR_FAIL(LR_EFORMAT, "int8g group %d is not a power of two in [16, 1024]", g);
    if (d->dims[1] % (uint64_t)g)
        return LR_FAIL(LR_EFORMAT, "int8g cols %llu not a multiple of group %d", (unsigned long long)d->dims[1], g);
    if (d->i8.sb_kind != LR_INT8G_SB_F16)
        return LR_FAIL(LR_EFORMAT, "int8g scale kind %d (only 1: f16 scale + f16 bias)", d->i8.sb_kind);
    bytes[0] = d->dims[0] * d->dims[1];
    bytes[1] = d->dims[0] * (d->dims[1] / (uint64_t)g) * 4;
    return LR_OK;
}

int lr_desc_parts(const lr_tensor_desc *d, int *nparts, uint64_t bytes[4])
{
    memset(bytes, 0, 4 * sizeof bytes[0]);
    *nparts = 0;
    uint64_t n;
    int rc = lr_desc_nelem(d, &n);
    if (rc) return rc;
    switch (d->codec) {
    case LR_CODEC_F32: *nparts = 1; bytes[0] = n * 4; return LR_OK;
    case LR_CODEC_F16:
    case LR_CODEC_BF16: *nparts = 1; bytes[0] = n * 2; return LR_OK;
    case LR_CODEC_INT8G: *nparts = 2; return int8g_parts(d, bytes);
    case LR_CODEC_LEECH: *nparts = 3; return leech_parts(d, bytes);
    case LR_CODEC_TRELLIS:
    case LR_CODEC_BCQ:
    case LR_CODEC_HNLQ:
        return LR_FAIL(LR_EUNSUPPORTED, "codec %s (%d) is reserved and not implemented yet",
                       lr_codec_name(d->codec), d->codec);
    }
    return LR_FAIL(LR_EFORMAT, "unknown codec %d", d->codec);
}
