/* The lr_model behind model.h, shared by the files of the reader (private
 * to loader/). */
#ifndef LR_MODEL_IMPL_H
#define LR_MODEL_IMPL_H
#include "loader/model.h"

struct lr_model {
    char label[1024];          /* path or caller's label: every message starts with it */
    const uint8_t *base;
    size_t size;
    int mapped;                /* munmap base at close */
    unsigned flags;
    lr_model_config cfg;
    int tok_kind;
    const uint8_t *tok;
    size_t tok_bytes;
    uint64_t data_off, data_len, data_sum;
    int nsect;
    lr_section_info sect[16];
    int n;
    lr_tensor_view *t;         /* file order */
    char (*names)[64];
    int *by_name;              /* indices of t sorted by name */
};

#endif
