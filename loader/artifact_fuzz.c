/* libFuzzer target for the artifact reader: arbitrary bytes through
 * lr_model_open_mem, twice — as is, and with checksums ignored so mutations
 * reach the structural and payload checks behind them — then, for anything
 * accepted, the consumers of a model: lookups, the data pass, host
 * decoding, the tokenizer and a host-only load. Seeds: corpus/artifact/. */
#include "loader/load.h"
#include "loader/model.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void use(lr_model *m)
{
    if (lr_model_verify_data(m, 1, NULL) != 0) return;
    int n = lr_model_tensor_count(m);
    for (int i = 0; i < n; i++) {
        const lr_tensor_view *t = lr_model_tensor_at(m, i);
        if (lr_model_tensor(m, t->name) != t) abort(); /* lookup must find what the table holds */
        (void)lr_tensor_bits_per_weight(t);
        if (t->cols <= (1u << 16)) {
            float *row = malloc(t->cols * sizeof *row);
            if (row) lr_tensor_dequant_rows(t, t->rows - 1, 1, row);
            free(row);
        }
    }
    (void)lr_model_layer_tensor(m, 0, "attn_q");
    char *json;
    size_t jn;
    if (lr_model_tokenizer_json(m, &json, &jn) == 0) free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *b = aligned_alloc(64, (size + 64) / 64 * 64);
    if (!b) return 0;
    memcpy(b, data, size);
    static const unsigned passes[2] = { LR_MODEL_SKIP_DATA, LR_MODEL_SKIP_DATA | LR_MODEL_NO_CHECKSUMS };
    for (int p = 0; p < 2; p++) {
        lr_model *m;
        if (lr_model_open_mem(b, size, "fuzz.lrt", passes[p], &m) != 0) continue;
        use(m);
        if (p == 1) { /* the load pipeline on one worker thread, no GPU */
            lr_load_opts o = { .nthreads = 1, .host_only = 1 };
            lr_loaded_model *lm;
            if (lr_load_model(m, &o, &lm) == 0) lr_loaded_free(lm);
        } else {
            lr_model_close(m);
        }
    }
    free(b);
    return 0;
}
