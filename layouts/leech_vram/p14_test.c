/* Planes14 (fragment order): every block unfolded from an archive decodes
 * to the codec's unrank and gain, for random and adversarial matrices with
 * every class present, both balls and every gain width; the kernel-view
 * decoder (raw bytes) agrees with the layout decoder; damaged records are
 * rejected. */
#include "kernels/gemv_leech.h"
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/layout_testlib.h"
#include "layouts/leech_vram/p14.h"
#include "layouts/leech_vram/random.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/rng.h"

#include <math.h>
#include <time.h>

/* ---- the shared bit-exactness driver (layout_testlib.h) ---- */

static int unfold_hook(const lr_leech_matrix *m, int nthreads, void **out)
{
    lr_p14 *L = malloc(sizeof *L);
    T_ASSERT(L, "out of memory");
    T_OK(lr_p14_unfold(m, nthreads, L));
    *out = L;
    return T_PASS;
}

static int get_hook(const void *L, int r, int b, int8_t x[24], int *g) { return lr_p14_get(L, r, b, x, g); }

/* the kernel view: f16(|x| s) signed, s = f16(centroid / sqrt(16 m)) */
static int block_hook(const void *p, const lr_leech_matrix *m, int r, int b, const int8_t want[24], int g)
{
    const lr_p14 *L = p;
    float kw[24];
    T_OK(lr_p14_get_kernel(L, r, b, kw));
    int n2 = lr_leech_norm(want);
    for (int i = 0; i < 24; i++) {
        float raw = lr_gemv_leech_p14_weight(L->data, L->tab, m->rows, m->cols, r, 24 * b + i) * L->row_scale[r];
        T_ASSERT(raw == kw[i], "row %d block %d coord %d: raw decode %g, layout decode %g", r, b, i, raw, kw[i]);
        double exact_w = n2 ? want[i] * m->centroid[g] / sqrt((double)n2) * m->row_scale[r] : 0;
        T_ASSERT(fabs(kw[i] - exact_w) <= 1.5e-3 * fabs(exact_w) + 1e-7, "coord %d: %g vs exact %g", i, kw[i], exact_w);
    }
    return T_PASS;
}

static int all_hook(const void *p, const lr_leech_matrix *m)
{
    const lr_p14 *L = p;
    T_ASSERT(L->bytes == (size_t)((m->rows + 15) / 16) * ((m->cols / 24 + 7) / 8) * LR_P14_SEG, "bytes %zu", L->bytes);
    /* pad rows and pad blocks are the origin */
    for (size_t i = (size_t)m->rows; i < (size_t)L->rg * 16; i++) T_ASSERT(L->row_scale[i] == 0, "pad row scale");
    T_OK(lr_p14_validate(L));
    return T_PASS;
}

static void destroy_hook(void *L)
{
    lr_p14_free(L);
    free(L);
}

static const lt_layout P14 = { "Planes14", unfold_hook, get_hook, block_hook, all_hook, destroy_hook };

static int exact(int rows, int cols, int max_shell, int gain_bits, int adversarial, uint64_t seed)
{
    return lt_exact(&P14, rows, cols, max_shell, gain_bits, adversarial, seed);
}

static int test_every_class_ball12(void)
{
    int rc = exact(40, 24 * 20 + 5, 12, 1, 0, 1); /* 800 blocks >= 301 classes, odd rows, tail 5 */
    if (rc) return rc;
    if ((rc = exact(33, 24 * 21, 12, 1, 1, 2))) return rc; /* adversarial: first/last of each class, origin, last point */
    return exact(16, 24 * 40, 12, 2, 1, 4);
}

/* L24(13) has no 47-bit archive: put every class's first and last point
 * directly and read them back. */
static int test_every_class_ball13(void)
{
    const lr_leech_class *cls;
    int nc;
    T_OK(lr_leech_classes(13, &cls, &nc));
    int rows = 2 * nc / 20 + 1;
    lr_p14 L;
    T_OK(lr_p14_alloc(&L, rows, 24 * 20 + 7, 13, 2));
    float cent[4] = { 0.6f, 0.9f, 1.1f, 1.4f };
    T_OK(lr_ctab_build(13, 2, cent, L.tab, (size_t)L.nentries * 16));
    for (int k = 0; k < 2 * nc; k++) {
        int8_t want[24], got[24];
        int g;
        uint64_t idx = cls[k / 2].offset + (k & 1 ? cls[k / 2].count - 1 : 0);
        T_OK(lr_leech_unrank(idx, 13, want));
        T_OK(lr_p14_put(&L, k / 20, k % 20, want, k & 3));
        T_OK(lr_p14_get(&L, k / 20, k % 20, got, &g));
        T_ASSERT(!memcmp(want, got, 24) && g == (k & 3), "class %d point %d", k / 2, k & 1);
    }
    T_OK(lr_p14_validate(&L));
    lr_p14_free(&L);
    return T_PASS;
}

static int test_gain_widths(void)
{
    for (int gb = 0; gb <= 2; gb++) {
        int rc = exact(17, 24 * 9 + 1, 12, gb, 0, 10 + gb);
        if (rc) return rc;
    }
    return T_PASS;
}

static int test_small_shapes(void)
{
    /* one block, one row; fewer blocks than a super-chunk; rows < 16 */
    int shapes[][2] = { { 1, 24 }, { 1, 25 }, { 3, 24 * 7 }, { 16, 24 * 8 }, { 17, 24 * 9 + 23 } };
    for (int i = 0; i < 5; i++) {
        int rc = exact(shapes[i][0], shapes[i][1], 12, 1, 0, 20 + i);
        if (rc) return rc;
    }
    return T_PASS;
}

static int test_rejects_damage(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(16, 24 * 8, 12, 1, 0, 7, &m));
    lr_p14 L;
    T_OK(lr_p14_unfold(&m, 1, &L));
    int8_t x[24];
    int g, rejected = 0, trials = 0;
    /* a header that is no entry */
    uint16_t h;
    memcpy(&h, L.data, 2);
    uint16_t bad = (uint16_t)(L.nentries * 16);
    memcpy(L.data, &bad, 2);
    T_ASSERT(lr_p14_get(&L, 0, 0, x, &g) == LR_EFORMAT, "header past the table accepted");
    bad = 3;
    memcpy(L.data, &bad, 2);
    T_ASSERT(lr_p14_get(&L, 0, 0, x, &g) == LR_EFORMAT, "misaligned header accepted");
    memcpy(L.data, &h, 2);
    T_OK(lr_p14_get(&L, 0, 0, x, &g));
    /* single bit flips in the fragments of block (0, 0): most must be caught
     * (a flip can land on another valid point of the same class) */
    for (size_t off = LR_P14_HDR; off < LR_P14_SEG; off++)
        for (int bit = 0; bit < 8; bit++) {
            L.data[off] ^= (uint8_t)(1u << bit);
            int rc = lr_p14_validate(&L);
            L.data[off] ^= (uint8_t)(1u << bit);
            trials++;
            rejected += rc == LR_EFORMAT;
        }
    lr_clear_error();
    T_OK(lr_p14_validate(&L));
    printf("    %d of %d single-bit flips rejected\n", rejected, trials);
    T_ASSERT(rejected > trials / 2, "only %d of %d flips rejected", rejected, trials);
    lr_p14_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* A full image filled by the fast path and by the reference. */
static int fill_both(const lr_leech_matrix *const *parts, int nparts, uint8_t **fast, uint8_t **ref, lr_p14 *L,
                     int split)
{
    T_OK(lr_p14_plan(parts, nparts, L));
    lr_p14 A = *L, B = *L;
    *fast = malloc(L->img_bytes), *ref = malloc(L->img_bytes);
    T_ASSERT(*fast && *ref, "out of memory");
    memset(*fast, 0xA5, L->img_bytes), memset(*ref, 0x5A, L->img_bytes); /* every byte must be written */
    lr_p14_bind(&A, *fast), lr_p14_bind(&B, *ref);
    T_OK(lr_p14_fill_ref(parts, &B, 0, L->rg));
    /* the fast path in ranges, as the loader's jobs call it */
    for (int g = 0; g < L->rg; g += split) T_OK(lr_p14_fill(parts, &A, g, g + split < L->rg ? g + split : L->rg));
    *L = A;
    return T_PASS;
}

static int fast_is_ref(const lr_leech_matrix *const *parts, int nparts, int split, const char *what)
{
    uint8_t *fast, *ref;
    lr_p14 L;
    if (fill_both(parts, nparts, &fast, &ref, &L, split)) return T_FAIL;
    for (size_t i = 0; i < L.img_bytes; i++)
        T_ASSERT(fast[i] == ref[i], "%s: image byte %zu of %zu (segments end at %zu): %02x, reference %02x", what, i,
                 L.img_bytes, L.bytes, fast[i], ref[i]);
    T_OK(lr_p14_validate(&L));
    free(fast), free(ref);
    return T_PASS;
}

/* The fast fill equals the reference byte for byte: random and adversarial
 * matrices with every class present (class-uniform and ball-uniform
 * indices), gain widths 0-2, odd shapes (partial row groups and
 * super-chunks, tails), concatenated parts with different centroids whose
 * rows straddle row groups, fills in ranges. */
static int test_fill_matches_reference(void)
{
    int shapes[][2] = { { 40, 24 * 20 + 5 }, { 33, 24 * 21 }, { 1, 24 }, { 1, 25 }, { 17, 24 * 9 + 23 }, { 16, 24 * 8 },
                        { 3, 24 * 7 }, { 70, 24 * 13 + 1 } };
    for (int i = 0; i < 8; i++)
        for (int gb = 0; gb <= 2; gb++)
            for (int adv = 0; adv <= 1; adv++) {
                lr_leech_matrix m;
                T_OK(lr_leech_random_matrix(shapes[i][0], shapes[i][1], 12, gb, adv, 100 + 10 * (uint64_t)i + 3 * (uint64_t)gb + (uint64_t)adv, &m));
                const lr_leech_matrix *ps[1] = { &m };
                char what[64];
                snprintf(what, sizeof what, "%dx%d, %d gain bits%s", m.rows, m.cols, gb, adv ? ", adversarial" : "");
                if (fast_is_ref(ps, 1, 1 + i % 3, what)) return T_FAIL;
                lr_leech_random_free(&m);
            }
    /* indices uniform over the ball (the synthetic models' distribution) */
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(48, 24 * 40 + 3, 12, 1, 0, 77, &m));
    size_t n = (size_t)m.rows * m.nblk;
    uint64_t *idx = malloc(n * sizeof *idx);
    uint8_t *gain = malloc(n);
    lr_rng r;
    lr_rng_seed(&r, 78);
    for (size_t k = 0; k < n; k++) idx[k] = lr_rng_below(&r, lr_leech_ball_points(12)), gain[k] = (uint8_t)(k % 2);
    T_OK(lr_leech_archive_pack(idx, gain, n, 1, m.archive, m.archive_bytes));
    const lr_leech_matrix *ps1[1] = { &m };
    if (fast_is_ref(ps1, 1, 2, "ball-uniform")) return T_FAIL;
    free(idx), free(gain);
    lr_leech_random_free(&m);
    /* parts: rows 37 | 77 | 16 | 5, three centroid vectors, one shared */
    lr_leech_matrix pm[4];
    int prow[4] = { 37, 77, 16, 5 };
    for (int p = 0; p < 4; p++) T_OK(lr_leech_random_matrix(prow[p], 24 * 11 + 7, 12, 1, p == 1, 200 + (uint64_t)p, &pm[p]));
    memcpy(pm[3].centroid, pm[0].centroid, sizeof pm[0].centroid);
    const lr_leech_matrix *pp[4] = { &pm[0], &pm[1], &pm[2], &pm[3] };
    if (fast_is_ref(pp, 4, 3, "parts 37|77|16|5")) return T_FAIL;
    for (int p = 0; p < 4; p++) lr_leech_random_free(&pm[p]);
    return T_PASS;
}

/* An archive field (47 + g bits, MSB first) set to v. */
static void set_index(lr_leech_matrix *m, size_t k, uint64_t v)
{
    size_t bits = 47 + (size_t)m->gain_bits, at = k * bits;
    for (size_t i = 0; i < 47; i++) {
        size_t b = at + i;
        uint8_t mask = (uint8_t)(0x80u >> (b % 8));
        if ((v >> (46 - i)) & 1) m->archive[b / 8] |= mask;
        else m->archive[b / 8] &= (uint8_t)~mask;
    }
}

/* An error message without its "file.c:line: " places (the two paths
 * raise the same errors from different lines). */
static void strip_places(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < cap;) {
        const char *q = p;
        while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_') q++;
        if (q > p && q[0] == '.' && q[1] == 'c' && q[2] == ':') {
            const char *d = q + 3;
            while (*d >= '0' && *d <= '9') d++;
            if (d > q + 3 && d[0] == ':' && d[1] == ' ') {
                p = d + 2;
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = 0;
}

/* Damaged input fails the same way (status and message) in both: an index
 * outside the ball (the archive's unpacking rejects it for the row group)
 * and a row scale that is not finite, in either order, and the scale alone. */
static int test_fill_errors_match_reference(void)
{
    for (int order = 0; order < 3; order++) {
        lr_leech_matrix m;
        T_OK(lr_leech_random_matrix(40, 24 * 12, 12, 1, 0, 300, &m));
        if (order < 2) set_index(&m, (size_t)(order ? 22 : 18) * m.nblk + 5, lr_leech_ball_points(12) + 12345);
        m.row_scale[order == 2 ? 9 : order ? 21 : 23] = NAN;
        const lr_leech_matrix *ps[1] = { &m };
        lr_p14 L;
        T_OK(lr_p14_plan(ps, 1, &L));
        uint8_t *img = calloc(L.img_bytes, 1);
        lr_p14_bind(&L, img);
        char want[512], got[512];
        int rr = lr_p14_fill_ref(ps, &L, 0, L.rg);
        strip_places(lr_errmsg(), want, sizeof want);
        lr_clear_error();
        int rf = lr_p14_fill(ps, &L, 0, L.rg);
        strip_places(lr_errmsg(), got, sizeof got);
        T_ASSERT(rr != LR_OK && rf == rr, "status %d, reference %d", rf, rr);
        T_ASSERT(!strcmp(got, want), "message\n      %s\n    reference\n      %s", got, want);
        printf("    %s\n", want);
        lr_clear_error();
        free(img);
        lr_leech_random_free(&m);
    }
    return T_PASS;
}

static int test_unfold_speed(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(256, 24 * 64, 12, 1, 0, 9, &m));
    lr_p14 L;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    T_OK(lr_p14_unfold(&m, 0, &L));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("    unfold: %.0f blocks/s (all cores)\n", 256 * 64 / s);
    lr_p14_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

T_MAIN(T_CASE(test_every_class_ball12), T_CASE(test_every_class_ball13), T_CASE(test_gain_widths),
       T_CASE(test_small_shapes), T_CASE(test_rejects_damage), T_CASE(test_fill_matches_reference),
       T_CASE(test_fill_errors_match_reference), T_CASE(test_unfold_speed))
