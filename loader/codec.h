/* A tensor's codec as the file describes it (before any data): the shape
 * and codec parameters, and the sizes of its parts those imply. The reader
 * and the writer share these rules, so a file the writer makes is a file
 * the reader accepts. */
#ifndef LR_CODEC_H
#define LR_CODEC_H
#include <stddef.h>
#include <stdint.h>

#define LR_INT8G_SB_F16 1 /* scale-bias kind: f16 scale + f16 bias per group */

typedef struct lr_tensor_desc {
    char name[64];
    int codec;               /* enum lr_codec */
    int ndim;
    uint64_t dims[4];
    uint32_t align;          /* 64 or 4096; 0 = writer's choice */
    struct {
        int max_shell, gain_bits, rot_kind;
        uint64_t rot_seed;
        float centroid[4];
    } leech;
    struct {
        int group, sb_kind;
    } i8;
} lr_tensor_desc;

/* Element count with overflow checking (LR_EFORMAT past 2^40 elements). */
int lr_desc_nelem(const lr_tensor_desc *d, uint64_t *nelem);
/* Number of parts and each part's exact byte length, checking that shape
 * and parameters make sense for the codec. Errors carry no file or tensor
 * prefix; callers wrap them. LR_EUNSUPPORTED for reserved codecs. */
int lr_desc_parts(const lr_tensor_desc *d, int *nparts, uint64_t bytes[4]);
/* Part names for display ("scale", "archive", "tail", "q", "sb", "data"). */
const char *lr_part_name(int codec, int part);

#endif
