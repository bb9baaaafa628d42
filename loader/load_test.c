/* The load pipeline without a GPU (host memory) and, when one is present,
 * with uploads read back: every tensor arrives intact, layouts plug in
 * through the hook interface and run on several threads, errors from any
 * thread come back with the tensor's name, and the report adds up. */
#include "layouts/leech/leech.h"
#include "loader/artifact_testlib.h"
#include "loader/load.h"
#include "rt/cu.h"
#include "test/t.h"

static char g_tiny[512];

static int setup(void)
{
    if (g_tiny[0]) return 0;
    tl_path(g_tiny, sizeof g_tiny, "tiny.lrt");
    return tl_synth(g_tiny, "tiny", 5, NULL, 2);
}

static int check_passthrough(const lr_loaded_model *lm)
{
    for (int i = 0; i < lm->n; i++) {
        const lr_loaded_tensor *t = &lm->t[i];
        T_ASSERT(t->plan.direct == t->view->data && t->plan.bytes == t->view->data_bytes, "%s plan", t->view->name);
        T_ASSERT(t->host == t->view->data, "%s host pointer", t->view->name);
        if (lm->on_device) {
            uint8_t *back = malloc(t->plan.bytes);
            T_OK(lr_cu_d2h(back, t->dev, t->plan.bytes));
            T_ASSERT(!memcmp(back, t->view->data, t->plan.bytes), "%s: device bytes differ", t->view->name);
            free(back);
        }
    }
    return T_PASS;
}

static int test_host_only_passthrough(void)
{
    T_ASSERT(!setup(), "setup: %s", lr_errmsg());
    lr_load_opts o = { .nthreads = 3, .host_only = 1 };
    lr_loaded_model *lm;
    T_OK(lr_load(g_tiny, &o, &lm));
    T_ASSERT(!lm->on_device && strstr(lm->device_status, "skipped"), "status %s", lm->device_status);
    T_ASSERT(lm->n == 25, "%d tensors", lm->n);
    if (check_passthrough(lm) != T_PASS) return T_FAIL;
    const lr_loaded_tensor *q = lr_loaded_find(lm, "blk.1.attn_q");
    T_ASSERT(q && !strcmp(q->layout->name, "leech-archive"), "layout of attn_q");
    T_ASSERT(lr_loaded_part_host(q, "archive") == (const void *)q->view->u.leech.archive, "archive part");
    T_ASSERT(lr_loaded_part_host(q, "scale") == (const void *)q->view->u.leech.row_scale, "scale part");
    T_ASSERT(!lr_loaded_part_host(q, "nope") && !lr_loaded_part_dev(q, "archive"), "absent part / no device");
    T_ASSERT(!strcmp(lr_loaded_find(lm, "token_embd")->layout->name, "int8g"), "embedding layout");
    T_ASSERT(!strcmp(lr_loaded_find(lm, "output_norm")->layout->name, "dense"), "norm layout");
    /* The report: parameters and bytes add up; the projections are 2 b/w + scales + tails. */
    const lr_load_report *r = &lm->report;
    uint64_t params = 0, bytes = 0;
    for (int i = 0; i < lm->n; i++) params += lm->t[i].view->nelem, bytes += lr_tensor_payload_bytes(lm->t[i].view);
    T_ASSERT(r->params == params && r->file_bytes == bytes && r->device_bytes >= bytes, "report totals");
    T_ASSERT(r->bpw_proj_file > 2.0 && r->bpw_proj_file < 3.2, "projection b/w %g", r->bpw_proj_file);
    T_ASSERT(r->bpw_file > r->bpw_proj_file, "whole-model b/w %g", r->bpw_file);
    T_ASSERT(r->s_total >= r->s_open && r->s_total > 0, "times");
    lr_loaded_free(lm);
    return T_PASS;
}

/* Without host_only: uploads when there is a GPU, otherwise says why not. */
static int test_default_load(void)
{
    T_ASSERT(!setup(), "setup");
    lr_loaded_model *lm;
    lr_load_opts o = { .nthreads = 2, .staging_bytes = 1 };
    T_OK(lr_load(g_tiny, &o, &lm));
    if (!lm->on_device)
        T_ASSERT(strstr(lm->device_status, "upload skipped: no GPU") && !lr_cu_available(), "status: %s%s",
                 lm->device_status, lr_cu_available() ? " (with a GPU here)" : "");
    else
        T_ASSERT(strstr(lm->device_status, "uploaded to") && lm->arena, "status: %s", lm->device_status);
    int rc = check_passthrough(lm);
    fprintf(stderr, "    %s\n", lm->device_status);
    lr_loaded_free(lm);
    return rc;
}

/* ---- a layout plugged in through the hooks: unpacked indices ---- */

static int unpack_supports(const lr_tensor_view *t) { return t->codec == LR_CODEC_LEECH; }

static int unpack_plan(const lr_tensor_view *t, lr_layout_plan *p)
{
    memset(p, 0, sizeof *p);
    uint64_t nb = t->rows * (uint64_t)t->u.leech.nblk;
    p->units = t->rows;
    p->nparts = 2;
    p->parts[0] = (lr_layout_part){ "idx", 0, (size_t)nb * 8 };
    p->parts[1] = (lr_layout_part){ "rows_done", (size_t)nb * 8, 8 };
    p->bytes = (size_t)nb * 8 + 8;
    return LR_OK;
}

static int unpack_unfold(const lr_tensor_view *t, const lr_layout_plan *p, uint64_t u0, uint64_t u1, void *dst)
{
    (void)p;
    const lr_leech_params *L = &t->u.leech;
    uint64_t *out = dst;
    int bits = 47 + L->gain_bits;
    for (uint64_t r = u0; r < u1; r++) {
        /* Rows of 10 blocks at 48 bits: every row starts on a byte. */
        if (L->gain_bits != 1) return LR_FAIL(LR_EUNSUPPORTED, "test layout: gain bits %d", L->gain_bits);
        const uint8_t *a = L->archive + r * (uint64_t)L->nblk * (uint64_t)bits / 8;
        int rc = lr_leech_archive_unpack(a, L->archive_bytes - (size_t)(a - L->archive), (uint64_t)L->nblk, L->gain_bits,
                                         out + r * (uint64_t)L->nblk, NULL);
        if (rc) return rc;
    }
    return LR_OK;
}

static int unpack_finish(const lr_tensor_view *t, lr_layout_plan *p, void *dst)
{
    uint64_t v = t->rows;
    memcpy((uint8_t *)dst + p->parts[1].offset, &v, 8);
    return LR_OK;
}

static const lr_layout k_unpack = { "test-unpack", unpack_supports, unpack_plan, unpack_unfold, unpack_finish, NULL };

static int fail_unfold(const lr_tensor_view *t, const lr_layout_plan *p, uint64_t u0, uint64_t u1, void *dst)
{
    (void)p; (void)u0; (void)u1; (void)dst;
    if (!strcmp(t->name, "blk.1.ffn_up")) return LR_FAIL(LR_EINVAL, "refusing on purpose");
    return LR_OK;
}
static const lr_layout k_failing = { "test-failing", unpack_supports, unpack_plan, fail_unfold, NULL, NULL };

static int test_plugged_layout(void)
{
    T_ASSERT(!setup(), "setup");
    if (!lr_layout_find("test-unpack")) T_OK(lr_layout_register(&k_unpack));
    T_ASSERT(lr_layout_register(&k_unpack) == LR_EINVAL, "duplicate layout accepted");
    lr_load_opts o = { .nthreads = 4, .layouts = "nonexistent,test-unpack", .keep_host = 1 };
    lr_loaded_model *lm;
    T_OK(lr_load(g_tiny, &o, &lm));
    int leech = 0;
    for (int i = 0; i < lm->n; i++) {
        const lr_loaded_tensor *t = &lm->t[i];
        if (t->view->codec != LR_CODEC_LEECH) {
            T_ASSERT(t->plan.direct, "%s should be a passthrough", t->view->name);
            continue;
        }
        leech++;
        T_ASSERT(!strcmp(t->layout->name, "test-unpack") && !t->plan.direct && t->host, "%s layout", t->view->name);
        uint64_t nb = t->view->rows * (uint64_t)t->view->u.leech.nblk;
        T_ASSERT(t->plan.bytes == nb * 8 + 8, "%s plan bytes", t->view->name);
        uint64_t *want = malloc(nb * 8);
        T_OK(lr_leech_archive_unpack(t->view->u.leech.archive, t->view->u.leech.archive_bytes, nb, 1, want, NULL));
        const uint64_t *got = lr_loaded_part_host(t, "idx");
        T_ASSERT(got && !memcmp(got, want, nb * 8), "%s: unfolded indices differ", t->view->name);
        uint64_t done;
        memcpy(&done, lr_loaded_part_host(t, "rows_done"), 8);
        T_ASSERT(done == t->view->rows, "finish hook did not run");
        if (lm->on_device) {
            uint64_t *back = malloc(nb * 8);
            T_OK(lr_cu_d2h(back, lr_loaded_part_dev(t, "idx"), nb * 8));
            T_ASSERT(!memcmp(back, want, nb * 8), "%s: device indices differ", t->view->name);
            free(back);
        }
        free(want);
    }
    T_ASSERT(leech == 14, "%d leech tensors", leech);
    uint64_t dev = 0;
    for (int i = 0; i < lm->n; i++) dev += lm->t[i].plan.bytes;
    T_ASSERT(lm->report.device_bytes == dev, "report device bytes");
    lr_loaded_free(lm);
    return T_PASS;
}

/* An upload through a layout that stages (not kept on the host), with the
   staging capped below one tensor: the workers take the tensors one at a
   time, waiting for each upload to free its buffer (claim's wait, which no
   other test reaches), and every tensor reads back intact. */
static int test_staged_upload_capped(void)
{
    T_SKIP_IF(!lr_cu_available(), "no GPU");
    T_ASSERT(!setup(), "setup");
    if (!lr_layout_find("test-unpack")) T_OK(lr_layout_register(&k_unpack));
    lr_load_opts o = { .nthreads = 4, .layouts = "test-unpack", .staging_bytes = 1 };
    lr_loaded_model *lm;
    T_OK(lr_load(g_tiny, &o, &lm));
    T_ASSERT(lm->on_device, "not uploaded: %s", lm->device_status);
    uint64_t largest = 0;
    int leech = 0;
    for (int i = 0; i < lm->n; i++) {
        const lr_loaded_tensor *t = &lm->t[i];
        if (t->view->codec != LR_CODEC_LEECH) continue;
        leech++;
        T_ASSERT(!strcmp(t->layout->name, "test-unpack") && !t->plan.direct, "%s layout", t->view->name);
        if (t->plan.bytes > largest) largest = t->plan.bytes;
        uint64_t nb = t->view->rows * (uint64_t)t->view->u.leech.nblk;
        uint64_t *want = malloc(nb * 8), *back = malloc(t->plan.bytes);
        T_ASSERT(want && back, "malloc");
        T_OK(lr_leech_archive_unpack(t->view->u.leech.archive, t->view->u.leech.archive_bytes, nb, 1, want, NULL));
        T_OK(lr_cu_d2h(back, lr_loaded_part_dev(t, "idx"), t->plan.bytes));
        T_ASSERT(!memcmp(back, want, nb * 8) && back[nb] == t->view->rows, "%s: device bytes differ", t->view->name);
        free(want), free(back);
    }
    T_ASSERT(leech == 14, "%d leech tensors", leech);
    T_ASSERT(lm->report.staging_peak == largest, "staging peak %llu bytes, want one tensor at a time (the largest %llu)",
             (unsigned long long)lm->report.staging_peak, (unsigned long long)largest);
    lr_loaded_free(lm);
    return T_PASS;
}

static int test_errors_from_threads(void)
{
    T_ASSERT(!setup(), "setup");
    if (!lr_layout_find("test-failing")) T_OK(lr_layout_register(&k_failing));
    lr_load_opts o = { .nthreads = 3, .layouts = "test-failing", .host_only = 1 };
    lr_loaded_model *lm;
    int rc = lr_load(g_tiny, &o, &lm);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), "blk.1.ffn_up") && strstr(lr_errmsg(), "test-failing") &&
                 strstr(lr_errmsg(), "refusing on purpose"),
             "rc %d: %s", rc, lr_errmsg());
    /* A corrupted tensor: the loader's own verification names it. */
    size_t n;
    uint8_t *b = tl_read(g_tiny, &n);
    uint8_t *r = tl_record(b, "blk.0.attn_v");
    tl_data(b, r)[lra_rd64(r + LRA_T_PARTS + 16) + 3] ^= 0x40;
    char bad[512];
    tl_path(bad, sizeof bad, "bad.lrt");
    T_OK(lr_write_file_atomic(bad, b, n));
    free(b);
    o.layouts = NULL;
    rc = lr_load(bad, &o, &lm);
    T_ASSERT(rc == LR_EFORMAT && strstr(lr_errmsg(), "tensor blk.0.attn_v: data checksum mismatch") &&
                 strstr(lr_errmsg(), "bad.lrt"),
             "rc %d: %s", rc, lr_errmsg());
    T_ASSERT(lr_load("/nonexistent/x.lrt", &o, &lm) == LR_EIO, "missing file");
    return T_PASS;
}

T_MAIN(T_CASE(test_host_only_passthrough), T_CASE(test_default_load), T_CASE(test_plugged_layout),
       T_CASE(test_staged_upload_capped), T_CASE(test_errors_from_threads))
