/* Fuzz target: the Planes14 layout decoder and unfolder on arbitrary bytes
 * (layouts/leech_vram/rec_fuzz.h says what is checked). */
#include "layouts/leech_vram/rec_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return rec_fuzz_one(LR_REC_P14, data, size); }
