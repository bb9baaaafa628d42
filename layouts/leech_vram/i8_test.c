/* I8x (int8 tensor-core layout): every block unfolded from an archive
 * decodes, with its exceptions, to the codec's unrank and gain for random
 * and adversarial matrices with every class present (both balls, every gain
 * width); the kernel-view decoder (raw bytes: the int8 the MMA multiplies
 * and the block scale) agrees with the lattice point; exceptions are exactly
 * the five-valued classes' top coordinates; damage is rejected; bits per
 * weight as documented. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/i8.h"
#include "layouts/leech_vram/layout_testlib.h"
#include "layouts/leech_vram/random.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <time.h>

/* The kernel's int8 and the exceptions reproduce x (the stored point). */
static int kernel_view(const lr_i8 *L, int r, int b, const int8_t x[24], const float *centroid, int g)
{
    const lr_leech_class *cls;
    int nc, c;
    T_OK(lr_leech_classes(L->max_shell, &cls, &nc));
    T_OK(lr_leech_class_of(x, L->max_shell, &c));
    int e = c < 0 ? 0 : lr_ctab_entry(c, g, L->gain_bits);
    T_ASSERT(lr_i8_kernel_header(L->data, L->rows, L->cols, r, b) == e, "row %d block %d: header", r, b);
    for (int i = 0; i < 24; i++) {
        float s;
        int v = lr_i8_kernel_value(L->data, L->tab, L->rows, L->cols, r, 24 * b + i, &s);
        int want = x[i], top = c >= 0 && cls[c].nvals == 5 && abs(x[i]) == cls[c].vals[4];
        if (top) want = (x[i] < 0 ? -1 : 1) * cls[c].vals[3];
        T_ASSERT(v == want, "row %d block %d coord %d: kernel int8 %d, want %d", r, b, i, v, want);
        float ws = c < 0 ? 0.f : (float)(centroid[g] / sqrt(16.0 * cls[c].shell));
        T_ASSERT(s == ws, "row %d block %d: scale %g, want %g", r, b, s, ws);
        /* the exception list holds exactly the top coordinates */
        int found = 0;
        for (uint32_t k = L->exc_ptr[r]; k < L->exc_ptr[r + 1]; k++)
            if (L->exc_col[k] == (uint32_t)(24 * b + i)) {
                found = 1;
                T_ASSERT(L->exc_dw[k] == (float)(x[i] - want) * s, "exception value");
            }
        T_ASSERT(found == top, "row %d block %d coord %d: exception %d, top %d", r, b, i, found, top);
    }
    return T_PASS;
}

/* ---- the shared bit-exactness driver (layout_testlib.h) ---- */

static int unfold_hook(const lr_leech_matrix *m, int nthreads, void **out)
{
    lr_i8 *L = malloc(sizeof *L);
    T_ASSERT(L, "out of memory");
    T_OK(lr_i8_unfold(m, nthreads, L));
    *out = L;
    return T_PASS;
}

static int get_hook(const void *L, int r, int b, int8_t x[24], int *g) { return lr_i8_get(L, r, b, x, g); }

static int block_hook(const void *p, const lr_leech_matrix *m, int r, int b, const int8_t want[24], int g)
{
    const lr_i8 *L = p;
    if (kernel_view(L, r, b, want, m->centroid, g)) return T_FAIL;
    double w[24];
    T_OK(lr_i8_get_f64(L, m->centroid, r, b, w));
    int n2 = lr_leech_norm(want);
    for (int i = 0; i < 24; i++) {
        double ex = n2 ? (double)want[i] * m->centroid[g] / sqrt((double)n2) * m->row_scale[r] : 0;
        T_ASSERT(fabs(w[i] - ex) <= 1e-12 * fabs(ex), "row %d block %d coord %d: weight %.17g, want %.17g", r, b, i,
                 w[i], ex);
    }
    return T_PASS;
}

static int all_hook(const void *p, const lr_leech_matrix *m)
{
    const lr_i8 *L = p;
    T_ASSERT(L->bytes == (size_t)((m->rows + 15) / 16) * ((m->cols / 24 + 7) / 8) * LR_I8_SEG, "bytes %zu", L->bytes);
    for (size_t i = (size_t)m->rows; i < (size_t)L->rg * 16; i++) T_ASSERT(L->row_scale[i] == 0, "pad row scale");
    /* pad blocks and pad rows are the origin (header 0) */
    for (int r = 0; r < L->rg * 16; r++)
        for (int b = (r < m->rows ? m->nblk : 0); b < L->sc * 8; b++)
            T_ASSERT(lr_i8_kernel_header(L->data, m->rows, m->cols, r, b) == 0, "pad (%d, %d) header", r, b);
    T_OK(lr_i8_validate(L));
    return T_PASS;
}

static void destroy_hook(void *L)
{
    lr_i8_free(L);
    free(L);
}

static const lt_layout I8X = { "I8x", unfold_hook, get_hook, block_hook, all_hook, destroy_hook };

static int exact(int rows, int cols, int max_shell, int gain_bits, int adversarial, uint64_t seed)
{
    return lt_exact(&I8X, rows, cols, max_shell, gain_bits, adversarial, seed);
}

static int test_every_class_ball12(void)
{
    int rc = exact(40, 24 * 20 + 5, 12, 1, 0, 1);
    if (rc) return rc;
    if ((rc = exact(33, 24 * 21, 12, 1, 1, 2))) return rc;
    return exact(16, 24 * 40, 12, 2, 1, 4);
}

static int test_every_class_ball13(void)
{
    const lr_leech_class *cls;
    int nc;
    T_OK(lr_leech_classes(13, &cls, &nc));
    int rows = 2 * nc / 20 + 1;
    lr_i8 L;
    T_OK(lr_i8_alloc(&L, rows, 24 * 20 + 7, 13, 2));
    float cent[4] = { 0.6f, 0.9f, 1.1f, 1.4f };
    T_OK(lr_i8_tab_build(13, 2, cent, L.tab, (size_t)L.nentries * 16));
    uint32_t *er = malloc(sizeof(uint32_t) * 24 * 2 * (size_t)nc);
    lr_i8_exc *ee = malloc(sizeof(lr_i8_exc) * 24 * 2 * (size_t)nc);
    size_t n = 0;
    for (int k = 0; k < 2 * nc; k++) {
        int8_t want[24];
        lr_i8_exc ex[24];
        int ne;
        uint64_t idx = cls[k / 2].offset + (k & 1 ? cls[k / 2].count - 1 : 0);
        T_OK(lr_leech_unrank(idx, 13, want));
        T_OK(lr_i8_put(&L, k / 20, k % 20, want, k & 3, ex, &ne));
        T_ASSERT((ne > 0) == (cls[k / 2].nvals == 5), "class %d: %d exceptions", k / 2, ne);
        for (int i = 0; i < ne; i++) er[n] = (uint32_t)(k / 20), ee[n++] = ex[i];
    }
    T_OK(lr_i8_set_exceptions(&L, er, ee, n));
    for (int k = 0; k < 2 * nc; k++) {
        int8_t want[24], got[24];
        int g;
        uint64_t idx = cls[k / 2].offset + (k & 1 ? cls[k / 2].count - 1 : 0);
        T_OK(lr_leech_unrank(idx, 13, want));
        T_OK(lr_i8_get(&L, k / 20, k % 20, got, &g));
        T_ASSERT(!memcmp(want, got, 24) && g == (k & 3), "class %d point %d", k / 2, k & 1);
        if (kernel_view(&L, k / 20, k % 20, want, cent, k & 3)) return T_FAIL;
    }
    T_OK(lr_i8_validate(&L));
    free(er), free(ee);
    lr_i8_free(&L);
    return T_PASS;
}

static int test_gain_widths_and_shapes(void)
{
    for (int gb = 0; gb <= 2; gb++)
        if (exact(17, 24 * 9 + 1, 12, gb, 0, 10 + gb)) return T_FAIL;
    int shapes[][2] = { { 1, 24 }, { 1, 25 }, { 3, 24 * 7 }, { 16, 24 * 8 }, { 17, 24 * 9 + 23 } };
    for (int i = 0; i < 5; i++)
        if (exact(shapes[i][0], shapes[i][1], 12, 1, 0, 20 + i)) return T_FAIL;
    return T_PASS;
}

static int test_rejects_damage(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(16, 24 * 8, 12, 1, 0, 7, &m));
    lr_i8 L;
    T_OK(lr_i8_unfold(&m, 1, &L));
    T_ASSERT(L.nexc > 0, "no exceptions");
    int rejected = 0, trials = 0;
    for (size_t off = 0; off < LR_I8_SEG; off++)
        for (int bit = 0; bit < 8; bit++) {
            L.data[off] ^= (uint8_t)(1u << bit);
            int rc = lr_i8_validate(&L);
            L.data[off] ^= (uint8_t)(1u << bit);
            trials++;
            rejected += rc == LR_EFORMAT;
        }
    lr_clear_error();
    T_OK(lr_i8_validate(&L));
    printf("    %d of %d single-bit flips rejected\n", rejected, trials);
    T_ASSERT(rejected > trials / 2, "only %d of %d flips rejected", rejected, trials);
    /* exceptions: a changed value, a moved column, a dropped one */
    float dw = L.exc_dw[0];
    L.exc_dw[0] = dw * 2;
    T_ASSERT(lr_i8_validate(&L) == LR_EFORMAT, "changed exception accepted");
    L.exc_dw[0] = dw;
    uint32_t col = L.exc_col[0];
    L.exc_col[0] = col ^ 1;
    T_ASSERT(lr_i8_validate(&L) == LR_EFORMAT, "moved exception accepted");
    L.exc_col[0] = col;
    uint32_t row = 0;
    while (L.exc_ptr[row + 1] == 0) row++;
    for (uint32_t r = row + 1; r <= (uint32_t)L.rows; r++) L.exc_ptr[r]--;
    memmove(L.exc_col, L.exc_col + 1, (L.nexc - 1) * sizeof *L.exc_col);
    memmove(L.exc_dw, L.exc_dw + 1, (L.nexc - 1) * sizeof *L.exc_dw);
    L.nexc--;
    T_ASSERT(lr_i8_validate(&L) == LR_EFORMAT, "dropped exception accepted");
    lr_clear_error();
    lr_i8_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

static int same_layout(const lr_i8 *A, const lr_i8 *B, const char *what)
{
    T_ASSERT(A->bytes == B->bytes && A->nentries == B->nentries && A->rows == B->rows, "%s: geometry", what);
    for (size_t i = 0; i < A->bytes; i++)
        T_ASSERT(A->data[i] == B->data[i], "%s: segment byte %zu (segment %zu, offset %zu): %02x, reference %02x", what, i,
                 i / LR_I8_SEG, i % LR_I8_SEG, A->data[i], B->data[i]);
    T_ASSERT(!memcmp(A->tab, B->tab, (size_t)A->nentries * 16), "%s: class table", what);
    T_ASSERT(!memcmp(A->row_scale, B->row_scale, (size_t)A->rg * LR_I8_ROWS * sizeof(float)), "%s: row scales", what);
    T_ASSERT(!A->tail || !memcmp(A->tail_f16, B->tail_f16, (size_t)A->rows * A->tail * 2), "%s: tail", what);
    T_ASSERT(A->nexc == B->nexc, "%s: %u exceptions, reference %u", what, A->nexc, B->nexc);
    T_ASSERT(!memcmp(A->exc_ptr, B->exc_ptr, ((size_t)A->rows + 1) * 4), "%s: exception rows", what);
    T_ASSERT(!memcmp(A->exc_col, B->exc_col, (size_t)A->nexc * 4) && !memcmp(A->exc_dw, B->exc_dw, (size_t)A->nexc * 4),
             "%s: exception columns / values", what);
    return T_PASS;
}

/* The fast unfold equals the reference byte for byte (segments, table,
 * scales, tail, the exception lists): random and adversarial matrices with
 * every class present (class-uniform and ball-uniform indices), gain widths
 * 0-2, odd shapes, 1 and 3 threads. */
static int test_unfold_matches_reference(void)
{
    int shapes[][2] = { { 40, 24 * 20 + 5 }, { 33, 24 * 21 }, { 1, 24 }, { 1, 25 }, { 17, 24 * 9 + 23 }, { 16, 24 * 8 },
                        { 3, 24 * 7 }, { 70, 24 * 13 + 1 } };
    for (int i = 0; i < 9; i++)
        for (int gb = 0; gb <= 2; gb++)
            for (int adv = 0; adv <= 1; adv++) {
                lr_leech_matrix m;
                uint64_t seed = 100 + 10 * (uint64_t)i + 3 * (uint64_t)gb + (uint64_t)adv;
                if (i < 8) T_OK(lr_leech_random_matrix(shapes[i][0], shapes[i][1], 12, gb, adv, seed, &m));
                else { /* ball-uniform indices */
                    if (adv) continue;
                    T_OK(lr_leech_random_matrix(48, 24 * 40 + 3, 12, gb, 0, seed, &m));
                    size_t n = (size_t)m.rows * m.nblk;
                    uint64_t *idx = malloc(n * sizeof *idx);
                    uint8_t *gain = malloc(n);
                    lr_rng r;
                    lr_rng_seed(&r, seed);
                    for (size_t k = 0; k < n; k++)
                        idx[k] = lr_rng_below(&r, lr_leech_ball_points(12)), gain[k] = (uint8_t)lr_rng_below(&r, 1u << gb);
                    T_OK(lr_leech_archive_pack(idx, gain, n, gb, m.archive, m.archive_bytes));
                    free(idx), free(gain);
                }
                lr_i8 A, B;
                T_OK(lr_i8_unfold(&m, 1 + i % 3, &A));
                T_OK(lr_i8_unfold_ref(&m, 1, &B));
                char what[64];
                snprintf(what, sizeof what, "%dx%d, %d gain bits%s%s", m.rows, m.cols, gb, adv ? ", adversarial" : "",
                         i == 8 ? ", ball-uniform" : "");
                if (same_layout(&A, &B, what)) return T_FAIL;
                T_ASSERT(i == 8 || m.rows * m.nblk < 301 || A.nexc > 0, "%s: no exceptions exercised", what);
                lr_i8_free(&A), lr_i8_free(&B);
                lr_leech_random_free(&m);
            }
    return T_PASS;
}

/* A row scale that is not finite fails the same way in both. */
static int test_unfold_errors_match_reference(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(40, 24 * 12, 12, 1, 0, 300, &m));
    m.row_scale[9] = NAN;
    lr_i8 L;
    char want[512];
    int rr = lr_i8_unfold_ref(&m, 2, &L);
    snprintf(want, sizeof want, "%s", strchr(lr_errmsg(), ' ') ? strchr(lr_errmsg(), ' ') : lr_errmsg());
    lr_clear_error();
    int rf = lr_i8_unfold(&m, 2, &L);
    T_ASSERT(rr != LR_OK && rf == rr, "status %d, reference %d", rf, rr);
    T_ASSERT(strstr(lr_errmsg(), want), "message %s, reference%s", lr_errmsg(), want);
    lr_clear_error();
    lr_i8_free(&L);
    /* a shape the archive disagrees with: refused, and L left freeable (it was left as the
       caller's garbage, before anything was allocated) */
    m.nblk--;
    memset(&L, 0xab, sizeof L);
    T_ASSERT(lr_i8_unfold(&m, 2, &L) == LR_EINVAL && strstr(lr_errmsg(), "disagree"), "%s", lr_errmsg());
    lr_i8_free(&L);
    m.nblk++;
    lr_clear_error();
    lr_leech_random_free(&m);
    return T_PASS;
}

static int test_bits_and_speed(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(256, 24 * 64, 12, 1, 0, 9, &m));
    lr_i8 L;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    T_OK(lr_i8_unfold(&m, 0, &L));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    double bpw = lr_i8_bits_per_weight(&L), frac = (double)L.nexc / (256.0 * 64);
    printf("    unfold: %.0f blocks/s (all cores); %.3f b/w, %.2f%% of blocks with an exception\n", 256 * 64 / s, bpw,
           100 * frac);
    /* 3.5 b/w of segments + 8 bytes per exception + a row pointer; the
     * random matrices draw classes uniformly (16 of 301 five-valued: 5.3%;
     * drawn by points of the ball it is 3.5%, 3.59 b/w) */
    T_ASSERT(bpw > 3.5 && bpw < 3.7, "bits per weight %g", bpw);
    T_ASSERT(frac > 0.02 && frac < 0.07, "exception fraction %g", frac);
    lr_i8_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

T_MAIN(T_CASE(test_every_class_ball12), T_CASE(test_every_class_ball13), T_CASE(test_gain_widths_and_shapes),
       T_CASE(test_rejects_damage), T_CASE(test_unfold_matches_reference), T_CASE(test_unfold_errors_match_reference),
       T_CASE(test_bits_and_speed))
