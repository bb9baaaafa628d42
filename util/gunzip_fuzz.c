/* Fuzz target: arbitrary bytes through lr_gunzip (util/gunzip.c), the
 * tokenizer sections' inflater. It returns at most the bound, NUL-terminated,
 * or a refusal; never reads past the input. */
#include "util/err.h"
#include "util/gunzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *out = NULL;
    size_t n = 0;
    const size_t max = 1 << 16;
    const int rc = lr_gunzip(data, size, max, "fuzz", &out, &n);
    if (rc == LR_OK ? !out || n > max || out[n] != 0 : out || n) abort();
    lr_clear_error();
    free(out);
    return 0;
}
