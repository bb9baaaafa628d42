#include "rt/call.h"
#include "util/err.h"
#include "util/half.h"

#include <ffi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t lr_elt_size(lr_elt e)
{
    switch (e) {
    case LR_E_U8: case LR_E_I8: return 1;
    case LR_E_U16: case LR_E_F16: case LR_E_BF16: return 2;
    case LR_E_U32: case LR_E_I32: case LR_E_F32: return 4;
    case LR_E_U64: case LR_E_F64: return 8;
    }
    return 1;
}

static int elt_is_float(lr_elt e) { return e == LR_E_F16 || e == LR_E_BF16 || e == LR_E_F32 || e == LR_E_F64; }

double lr_elt_get(lr_elt e, const void *p, size_t i)
{
    switch (e) {
    case LR_E_U8: return ((const uint8_t *)p)[i];
    case LR_E_I8: return ((const int8_t *)p)[i];
    case LR_E_U16: return ((const uint16_t *)p)[i];
    case LR_E_F16: return lr_half_to_float(((const uint16_t *)p)[i]);
    case LR_E_BF16: return lr_bf16_to_float(((const uint16_t *)p)[i]);
    case LR_E_U32: return ((const uint32_t *)p)[i];
    case LR_E_I32: return ((const int32_t *)p)[i];
    case LR_E_F32: return ((const float *)p)[i];
    case LR_E_U64: return (double)((const uint64_t *)p)[i];
    case LR_E_F64: return ((const double *)p)[i];
    }
    return 0;
}

static uint64_t elt_bits(lr_elt e, const void *p, size_t i)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)p + i * lr_elt_size(e), lr_elt_size(e));
    return v;
}

void lr_fill_random(lr_elt e, void *p, size_t n, lr_rng *r, double amp)
{
    for (size_t i = 0; i < n; i++) {
        double v = amp * lr_rng_signed(r);
        switch (e) {
        case LR_E_F16: {
            uint16_t h = lr_float_to_half((float)v);
            if ((h & 0x7fff) == 0) h = 0x0001; /* never zero */
            ((uint16_t *)p)[i] = h;
            break;
        }
        case LR_E_BF16: {
            uint16_t b = lr_float_to_bf16((float)v);
            if ((b & 0x7fff) == 0) b = 0x0001;
            ((uint16_t *)p)[i] = b;
            break;
        }
        case LR_E_F32: ((float *)p)[i] = (float)v; break;
        case LR_E_F64: ((double *)p)[i] = v; break;
        default: {
            uint64_t x = lr_rng_u64(r);
            memcpy((char *)p + i * lr_elt_size(e), &x, lr_elt_size(e));
        }
        }
    }
}

void lr_fill_random_seed(lr_elt e, void *p, size_t count, uint64_t seed, double amp)
{
    lr_rng r;
    lr_rng_seed(&r, seed);
    lr_fill_random(e, p, count, &r, amp);
}

static size_t bytes_of(const lr_param_desc *p, const lr_arg *a) { return a->count * lr_elt_size(p->elt); }

int lr_call_check_fn(const lr_kernel_desc *d, CUfunction f)
{
    static const size_t sz[] = { 4, 4, 8, 8, 4, 8, 8 };
    size_t off, size;
    for (int i = 0; i < d->nparams; i++) {
        int rc = lr_cu_param_info(f, i, &off, &size);
        if (rc == LR_EUNSUPPORTED) { lr_clear_error(); return LR_OK; } /* old driver: nothing to check */
        if (rc) return lr_wrap(LR_EINVAL, "kernel %s has fewer parameters than its descriptor (%d)", d->name, d->nparams);
        if (size != sz[d->params[i].type])
            return LR_FAIL(LR_EINVAL, "kernel %s parameter %d (%s) is %zu bytes, descriptor says %zu", d->name, i,
                           d->params[i].name, size, sz[d->params[i].type]);
    }
    if (lr_cu_param_info(f, d->nparams, &off, &size) == LR_OK)
        return LR_FAIL(LR_EINVAL, "kernel %s has more parameters than its descriptor (%d)", d->name, d->nparams);
    lr_clear_error();
    return LR_OK;
}

static ffi_type *ffi_of(lr_type t)
{
    switch (t) {
    case LR_T_I32: return &ffi_type_sint32;
    case LR_T_U32: return &ffi_type_uint32;
    case LR_T_I64: return &ffi_type_sint64;
    case LR_T_U64: return &ffi_type_uint64;
    case LR_T_F32: return &ffi_type_float;
    case LR_T_F64: return &ffi_type_double;
    case LR_T_PTR: return &ffi_type_pointer;
    }
    return &ffi_type_void;
}

int lr_call_host_fn(const lr_kernel_desc *d, lr_host_fn fn, lr_arg *args)
{
    if (!fn) return LR_FAIL(LR_EINVAL, "kernel %s has no host reference", d->name);
    if (d->nparams > LR_MAX_KPARAMS) return LR_FAIL(LR_EINVAL, "kernel %s: too many parameters", d->name);
    ffi_type *types[LR_MAX_KPARAMS];
    void *vals[LR_MAX_KPARAMS];
    for (int i = 0; i < d->nparams; i++) {
        types[i] = ffi_of(d->params[i].type);
        vals[i] = d->params[i].type == LR_T_PTR ? (void *)&args[i].host : (void *)&args[i].v;
    }
    ffi_cif cif;
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)d->nparams, &ffi_type_void, types) != FFI_OK)
        return LR_FAIL(LR_EINVAL, "kernel %s: ffi_prep_cif failed", d->name);
    ffi_call(&cif, FFI_FN(fn), NULL, vals);
    return LR_OK;
}

int lr_call_host(const lr_kernel_desc *d, lr_arg *args) { return lr_call_host_fn(d, d->host, args); }

int lr_call_upload(const lr_kernel_desc *d, lr_arg *args)
{
    for (int i = 0; i < d->nparams; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR) continue;
        size_t n = bytes_of(p, &args[i]);
        if (!args[i].host && args[i].count == 0) { /* a null pointer stays null on both sides */
            args[i].dev = 0;
            continue;
        }
        int rc = lr_cu_alloc(&args[i].dev, n);
        if (!rc) rc = (p->dir & LR_IN) ? lr_cu_h2d(args[i].dev, args[i].host, n) : lr_cu_memset8(args[i].dev, 0xff, n);
        if (rc) {
            lr_call_free_dev(d, args);
            return lr_wrap(rc, "kernel %s parameter %s (%zu bytes)", d->name, p->name, n);
        }
    }
    return LR_OK;
}

int lr_call_launch(const lr_kernel_desc *d, CUfunction f, lr_arg *args, lr_launch_geom g, CUstream s)
{
    void *kp[LR_MAX_KPARAMS];
    for (int i = 0; i < d->nparams; i++)
        kp[i] = d->params[i].type == LR_T_PTR ? (void *)&args[i].dev : (void *)&args[i].v;
    int rc = lr_cu_launch_ex(f, g.grid, g.block, g.cluster, g.smem, s, kp);
    return rc ? lr_wrap(rc, "launching %s", d->name) : rc;
}

int lr_call_download(const lr_kernel_desc *d, lr_arg *args)
{
    for (int i = 0; i < d->nparams; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
        int rc = lr_cu_d2h(args[i].host, args[i].dev, bytes_of(p, &args[i]));
        if (rc) return rc;
    }
    return LR_OK;
}

void lr_call_free_dev(const lr_kernel_desc *d, lr_arg *args)
{
    for (int i = 0; i < d->nparams; i++)
        if (d->params[i].type == LR_T_PTR && args[i].dev) {
            lr_cu_free(args[i].dev);
            args[i].dev = 0;
        }
}

static int is_poison(lr_elt e, const void *p, size_t i)
{
    uint64_t b = elt_bits(e, p, i), all = lr_elt_size(e) == 8 ? ~0ull : (1ull << (8 * lr_elt_size(e))) - 1;
    return b == all;
}

int lr_call_compare_outputs(const lr_kernel_desc *d, lr_arg *args, void **got, void **ref, void **scale, double tol,
                            lr_verify_report *rep)
{
    memset(rep, 0, sizeof *rep);
    char first[1024] = "";
    size_t flen = 0;
    int k = 0;
    for (int i = 0; i < d->nparams; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
        for (size_t j = 0; j < args[i].count; j++) {
            rep->checked++;
            int bad = 0;
            double err = 0;
            const int gp = is_poison(p->elt, got[k], j), rp = is_poison(p->elt, ref[k], j);
            if (gp && !rp) rep->unwritten++, bad = 1;
            /* a float output neither side wrote (the poison is a NaN that no arithmetic
               makes): both skipped it, which NaN == NaN below would pass. Integer outputs
               can be all ones (an int8 -1), so there the poison proves nothing. */
            else if (gp && rp && p->dir == LR_OUT && elt_is_float(p->elt)) rep->unwritten++, bad = 1;
            else if (elt_is_float(p->elt)) {
                double g = lr_elt_get(p->elt, got[k], j), r = lr_elt_get(p->elt, ref[k], j);
                double sc = scale ? fabs(lr_elt_get(p->elt, scale[k], j)) : fabs(r);
                if (!(sc > 1e-30)) sc = 1e-30;
                err = fabs(g - r) / sc;
                if (isnan(r)) bad = !isnan(g); /* reference NaN: only NaN matches */
                else bad = !(err <= tol);
                if (isnan(err)) err = INFINITY;
            } else {
                bad = elt_bits(p->elt, got[k], j) != elt_bits(p->elt, ref[k], j);
                err = bad ? INFINITY : 0;
            }
            if (err > rep->max_rel_err || (bad && rep->bad == 0)) {
                if (err > rep->max_rel_err) rep->max_rel_err = err;
                rep->worst = j;
            }
            if (bad) {
                if (rep->bad < 4 && flen < sizeof first - 200)
                    flen += (size_t)snprintf(first + flen, sizeof first - flen, " %s[%zu]: gpu %.9g ref %.9g;",
                                             p->name, j, lr_elt_get(p->elt, got[k], j), lr_elt_get(p->elt, ref[k], j));
                rep->bad++;
            }
        }
        k++;
    }
    if (rep->bad)
        return LR_FAIL(LR_EVERIFY, "%s: %zu of %zu outputs wrong (%zu unwritten), max rel err %.3g:%s", d->name,
                       rep->bad, rep->checked, rep->unwritten, rep->max_rel_err, first);
    return LR_OK;
}

/* An integer output the reference can legitimately fill with all ones (an int8 -1, a u8
   255) looks the same as the 0xff poison; a second launch over 0x00 tells them apart. */
static int has_int_out(const lr_kernel_desc *d)
{
    for (int i = 0; i < d->nparams; i++)
        if (d->params[i].type == LR_T_PTR && d->params[i].dir == LR_OUT && !elt_is_float(d->params[i].elt)) return 1;
    return 0;
}

size_t lr_call_count_repoisoned(const lr_kernel_desc *d, lr_arg *args, void **got_ff, void **got_00,
                                lr_verify_report *rep, char *msg, size_t msglen)
{
    size_t n = 0, len = msg && msglen ? strlen(msg) : 0;
    for (int i = 0, k = 0; i < d->nparams; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
        if (p->dir == LR_OUT && !elt_is_float(p->elt))
            for (size_t j = 0; j < args[i].count; j++) {
                if (elt_bits(p->elt, got_ff[k], j) == elt_bits(p->elt, got_00[k], j)) continue;
                if (n < 4 && msg && len + 120 < msglen)
                    len += (size_t)snprintf(msg + len, msglen - len, " %s[%zu]: %.9g over 0xff, %.9g over 0x00;",
                                            p->name, j, lr_elt_get(p->elt, got_ff[k], j),
                                            lr_elt_get(p->elt, got_00[k], j));
                n++;
            }
        k++;
    }
    if (rep) rep->unwritten += n, rep->bad += n;
    return n;
}

/* The second launch of has_int_out: the IN/INOUT mirrors restored, integer OUT buffers
   over 0x00, those outputs downloaded into got0 (other slots left NULL). */
static int launch_over_zero(const lr_kernel_desc *d, CUfunction f, lr_arg *args, lr_launch_geom g, void **got0)
{
    int rc = LR_OK;
    for (int i = 0; i < d->nparams && !rc; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !args[i].dev) continue;
        size_t n = bytes_of(p, &args[i]);
        if (p->dir & LR_IN) rc = lr_cu_h2d(args[i].dev, args[i].host, n);
        else rc = lr_cu_memset8(args[i].dev, elt_is_float(p->elt) ? 0xff : 0x00, n);
    }
    if (!rc) rc = lr_call_launch(d, f, args, g, NULL);
    if (!rc) rc = lr_cu_sync();
    for (int i = 0, k = 0; i < d->nparams && !rc; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
        if (p->dir == LR_OUT && !elt_is_float(p->elt)) {
            size_t n = bytes_of(p, &args[i]);
            if (!(got0[k] = malloc(n ? n : 1))) rc = LR_FAIL(LR_ENOMEM, "out of memory");
            else rc = lr_cu_d2h(got0[k], args[i].dev, n);
        }
        k++;
    }
    return rc;
}

int lr_call_verify(const lr_kernel_desc *d, CUfunction f, lr_arg *args, lr_launch_geom g, double tol,
                   lr_verify_report *rep)
{
    memset(rep, 0, sizeof *rep);
    int rc = lr_call_check_fn(d, f);
    if (rc) return rc;
    /* Keep inputs of INOUT params so the host sees what the GPU saw. */
    void *saved[LR_MAX_KPARAMS] = { 0 }, *got[LR_MAX_KPARAMS] = { 0 }, *ref[LR_MAX_KPARAMS] = { 0 },
         *mag[LR_MAX_KPARAMS] = { 0 }, *got0[LR_MAX_KPARAMS] = { 0 };
    int nout = 0;
    rc = lr_call_upload(d, args);
    if (rc) return rc;
    rc = lr_call_launch(d, f, args, g, NULL);
    if (!rc) rc = lr_cu_sync();
    if (rc) goto out;
    for (int i = 0; i < d->nparams; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
        size_t n = bytes_of(p, &args[i]);
        got[nout] = malloc(n ? n : 1);
        ref[nout] = malloc(n ? n : 1);
        mag[nout] = malloc(n ? n : 1);
        if (p->dir == LR_INOUT) saved[i] = malloc(n ? n : 1);
        if (!got[nout] || !ref[nout] || !mag[nout] || (p->dir == LR_INOUT && !saved[i])) {
            rc = LR_FAIL(LR_ENOMEM, "out of memory");
            nout++;
            goto out;
        }
        if ((rc = lr_cu_d2h(got[nout], args[i].dev, n))) { nout++; goto out; }
        if (saved[i]) memcpy(saved[i], args[i].host, n);
        nout++;
    }
    if (has_int_out(d) && (rc = launch_over_zero(d, f, args, g, got0))) goto out;
    /* Host reference: into poisoned host buffers (swap them in as the args). */
    void *orig[LR_MAX_KPARAMS];
    for (int pass = 0; pass < (d->host_mag ? 2 : 1); pass++) {
        int k = 0;
        for (int i = 0; i < d->nparams; i++) {
            const lr_param_desc *p = &d->params[i];
            orig[i] = args[i].host;
            if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
            void *dst = pass == 0 ? ref[k] : mag[k];
            size_t n = bytes_of(p, &args[i]);
            if (p->dir == LR_INOUT) memcpy(dst, saved[i], n);
            else memset(dst, 0xff, n);
            args[i].host = dst;
            k++;
        }
        rc = lr_call_host_fn(d, pass == 0 ? d->host : d->host_mag, args);
        for (int i = 0; i < d->nparams; i++) args[i].host = orig[i];
        if (rc) goto out;
    }
    rc = lr_call_compare_outputs(d, args, got, ref, d->host_mag ? mag : NULL, tol, rep);
    if (!rc && has_int_out(d)) { /* (after a failed compare its count would double some) */
        char msg[600] = "";
        size_t n = lr_call_count_repoisoned(d, args, got, got0, rep, msg, sizeof msg);
        if (n) rc = LR_FAIL(LR_EVERIFY, "%s: %zu integer outputs depend on the poison (unwritten):%s", d->name, n, msg);
    }
    /* Leave the GPU's outputs in the caller's buffers. */
    for (int i = 0, k = 0; i < d->nparams; i++) {
        const lr_param_desc *p = &d->params[i];
        if (p->type != LR_T_PTR || !(p->dir & LR_OUT)) continue;
        memcpy(args[i].host, got[k++], bytes_of(p, &args[i]));
    }
out:
    for (int i = 0; i < LR_MAX_KPARAMS; i++) {
        free(saved[i]);
        if (i < nout) { free(got[i]); free(ref[i]); free(mag[i]); }
        free(got0[i]);
    }
    lr_call_free_dev(d, args);
    return rc;
}
