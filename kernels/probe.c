#include "kernels/kernels.h"

#include <string.h>

/* the probe's arguments, both forms */
#define PROBE_PARAMS                                                                                                    \
    .nparams = 5, .params = { { "buf", LR_T_PTR, LR_E_U32, LR_IN }, { "n16", LR_T_U64, 0, 0 },                        \
                              { "out", LR_T_PTR, LR_E_U32, LR_OUT }, { "nblocks", LR_T_U32, 0, 0 },                     \
                              { "threads", LR_T_U32, 0, 0 } }

const lr_kernel_desc lr_probe_desc = {
    .name = "probe",
    PROBE_PARAMS,
    .host = (lr_host_fn)lr_probe_host,
};

/* Same assignment as the kernel: thread t of block b reads 16-byte words
 * b*T + t + k*B*T. */
void lr_probe_host(const void *buf, uint64_t n16, uint32_t *out, uint32_t nblocks, uint32_t threads)
{
    const uint32_t *w = buf;
    uint64_t stride = (uint64_t)nblocks * threads;
    for (uint32_t b = 0; b < nblocks; b++) out[b] = 0;
    for (uint64_t i = 0; i < n16; i++) {
        uint32_t b = (uint32_t)((i % stride) / threads);
        out[b] += w[4 * i] + w[4 * i + 1] + w[4 * i + 2] + w[4 * i + 3];
    }
}

void lr_probe_spec(lr_jit_spec *s, int threads, int unroll)
{
    lr_jit_spec_init(s, "probe.cu", "probe");
    lr_jit_spec_set(s, "threads", threads);
    lr_jit_spec_set(s, "unroll", unroll);
}

/* The ranges form: block b reads the 16-byte words [b n16 / B, (b + 1) n16 / B). */
void lr_probe_ranges_host(const void *buf, uint64_t n16, uint32_t *out, uint32_t nblocks, uint32_t threads)
{
    (void)threads;
    const uint32_t *w = buf;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t s = 0;
        for (uint64_t i = (uint64_t)b * n16 / nblocks; i < (uint64_t)(b + 1) * n16 / nblocks; i++)
            s += w[4 * i] + w[4 * i + 1] + w[4 * i + 2] + w[4 * i + 3];
        out[b] = s;
    }
}

const lr_kernel_desc lr_probe_ranges_desc = {
    .name = "probe",
    PROBE_PARAMS,
    .host = (lr_host_fn)lr_probe_ranges_host,
};

void lr_probe_ranges_spec(lr_jit_spec *s, int threads, int unroll)
{
    lr_probe_spec(s, threads, unroll);
    lr_jit_spec_set(s, "ranges", 1);
}
