/* The registry of GEMV benchmark arms. */
#include "kernels/gemv_arm.h"

#include <string.h>

extern const lr_gemv_arm lr_arm_f16, lr_arm_noweights, lr_arm_cublas, lr_arm_leech_p14, lr_arm_leech_i8, lr_arm_leech_p14s,
    lr_arm_leech_p14s_loads, lr_arm_leech_p14s_decode, lr_arm_leech_p14s_noepi, lr_arm_leech_p14s_swiglu, lr_arm_stream_p14s, lr_arm_stream_p14s_ranges, lr_arm_stream_p14s3,
    lr_arm_leech_p14s3, lr_arm_leech_p14s3_loads, lr_arm_leech_p14s3_decode, lr_arm_leech_p14s3_smem, lr_arm_leech_p14s3_swiglu,
    lr_arm_leech_p14s3_loads_nox, lr_arm_leech_p14s3_loads_nopro;
/* the published layouts, as baselines (kernels/gemv_leech_rec.c) */
extern const lr_gemv_arm lr_arm_leech_p14rec, lr_arm_leech_p12x, lr_arm_leech_slot32;

static const lr_gemv_arm *const g_arms[] = {
    &lr_arm_f16, &lr_arm_cublas, &lr_arm_noweights, &lr_arm_leech_p14, &lr_arm_leech_i8, &lr_arm_leech_p14s, &lr_arm_leech_p14s_loads,
    &lr_arm_leech_p14s_decode, &lr_arm_leech_p14s_noepi, &lr_arm_leech_p14s_swiglu, &lr_arm_stream_p14s, &lr_arm_stream_p14s_ranges, &lr_arm_stream_p14s3,
    &lr_arm_leech_p14s3, &lr_arm_leech_p14s3_loads, &lr_arm_leech_p14s3_decode, &lr_arm_leech_p14s3_smem, &lr_arm_leech_p14s3_swiglu,
    &lr_arm_leech_p14s3_loads_nox, &lr_arm_leech_p14s3_loads_nopro, &lr_arm_leech_p14rec, &lr_arm_leech_p12x, &lr_arm_leech_slot32,
};

const lr_gemv_arm *const *lr_gemv_arms(int *n)
{
    *n = (int)(sizeof g_arms / sizeof g_arms[0]);
    return g_arms;
}

const lr_gemv_arm *lr_gemv_arm_find(const char *name)
{
    int n;
    const lr_gemv_arm *const *a = lr_gemv_arms(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(a[i]->name, name)) return a[i];
    return NULL;
}
