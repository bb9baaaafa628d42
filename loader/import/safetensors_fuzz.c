/* libFuzzer target for the safetensors header parser: arbitrary bytes
 * through lr_st_parse, then, for anything accepted, every lookup and a read
 * of each tensor's first and last elements (the reads must stay inside the
 * buffer whatever the header claimed). Seeds: corpus/safetensors/. */
#include "loader/import/safetensors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy sized exactly, so a read past the end is caught by ASan. */
    uint8_t *b = malloc(size ? size : 1);
    if (!b) return 0;
    memcpy(b, data, size);
    lr_st_file *f;
    if (lr_st_parse(b, size, "fuzz.safetensors", &f) == 0) {
        float v[16];
        for (int i = 0; i < f->n; i++) {
            const lr_st_tensor *t = &f->t[i];
            if (lr_st_find(f, t->name) != t) abort(); /* lookup must find what the table holds */
            if (t->end > f->data_bytes || t->end - t->begin != t->nelem * (uint64_t)lr_st_dtype_size(t->dtype)) abort();
            uint64_t n = t->nelem < 16 ? t->nelem : 16;
            lr_st_read_f32(f, t, 0, n, v);
            lr_st_read_f32(f, t, t->nelem - n, n, v);
            lr_st_read_f32(f, t, t->nelem, 1, v); /* past the end: must fail, not read */
        }
        lr_st_close(f);
    }
    free(b);
    return 0;
}
