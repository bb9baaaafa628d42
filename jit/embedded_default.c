/* The empty default: no cubins compiled into the binary. */
#include "jit/embedded.h"

__attribute__((weak)) const lr_embedded_cubin lr_embedded_cubin_table[1] = { { { 0 }, 0, 0 } };
__attribute__((weak)) const int lr_embedded_cubin_count = 0;
__attribute__((weak)) const char lr_embedded_nvrtc_version[] = "";
