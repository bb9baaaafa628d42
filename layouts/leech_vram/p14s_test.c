/* Planes14S (signed class table, layouts/leech_vram/p14s.h): every block
 * unfolded from an archive decodes, with its exceptions, to the codec's
 * unrank and gain (random and adversarial matrices, every class, gain widths
 * 0-2, odd shapes); the kernel view (raw bytes through p14s_view.c: header,
 * 4-bit code, PRMT value times the entry's f32 scale) plus the row's exception gives the
 * point's weights; every class of both balls round-trips through put / get
 * with the exceptions its stored magnitudes imply; damage is rejected; bits
 * per weight as documented; the multithreaded unfold is deterministic;
 * bad archives, scales and centroids fail cleanly. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/layout_testlib.h"
#include "layouts/leech_vram/p14s.h"
#include "layouts/leech_vram/random.h"
#include "test/t.h"
#include "util/err.h"
#include "util/half.h"
#include "util/progress.h"
#include "util/rng.h"

#include <math.h>
#include <time.h>

static long g_sum_checked; /* coordinates where f16(u s) + dw == x s was checked exactly */

static float tab_scale(const uint8_t *tab, int e)
{
    uint16_t s;
    memcpy(&s, tab + (size_t)e * 16 + 8, 2);
    return lr_half_to_float(s);
}

/* The code the layout must hold for |x| = a in class c, derived from
 * lr_p14s_stored alone: the index of the stored magnitude among the class's
 * distinct stored magnitudes, ascending (+4 when negative); 8 for zero. */
static int want_code(int max_shell, int c, int x)
{
    if (!x) return LR_P14S_ZERO;
    const lr_leech_class *cls;
    int nc;
    if (lr_leech_classes(max_shell, &cls, &nc)) return -1;
    int a = abs(x), u = lr_p14s_stored(max_shell, c, a), below = 0, prev = -1;
    for (int j = 0; j < cls[c].nvals; j++) {
        int s = cls[c].vals[j] ? lr_p14s_stored(max_shell, c, cls[c].vals[j]) : 0;
        if (s && s < u && s != prev) below++, prev = s;
    }
    return below + 4 * (x < 0);
}

/* Block (r, b) holding point x with gain g, as the kernel reads it: header
 * = entry byte offset, codes by the code rule, weight = +-u s exactly
 * (f32), the row's exception exactly where |x| != u with dw = (|x| - u) s
 * (signed); where nothing rounds, f16 weight + dw == x s in f32. */
static int kernel_view(const lr_p14s *L, int r, int b, const int8_t x[24], int g)
{
    int c;
    T_OK(lr_leech_class_of(x, L->max_shell, &c));
    int e = lr_ctab_entry(c, g, L->gain_bits);
    T_ASSERT(lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b) == 16 * e, "row %d block %d: header %d, want %d",
             r, b, lr_p14s_kernel_header(L->data, L->rows, L->cols, r, b), 16 * e);
    float s = tab_scale(L->tab, e);
    float w[24];
    lr_p14s_kernel_block(L->data, L->tab, L->rows, L->cols, r, b, w);
    for (int i = 0; i < 24; i++) {
        int a = abs(x[i]), sign = x[i] < 0 ? -1 : 1, col = 24 * b + i;
        int u = c < 0 ? 0 : lr_p14s_stored(L->max_shell, c, a);
        T_ASSERT(u >= 0 && u <= a, "class %d value %d: stored %d", c, a, u);
        int code = lr_p14s_kernel_code(L->data, L->rows, L->cols, r, col);
        T_ASSERT(code == want_code(L->max_shell, c, x[i]), "row %d block %d coord %d (x %d): code %d, want %d", r, b, i,
                 x[i], code, want_code(L->max_shell, c, x[i]));
        float want = (float)(sign * u) * s;
        T_ASSERT(w[i] == want, "row %d block %d coord %d (x %d, u %d): kernel weight %g, want %g", r, b, i, x[i], u,
                 w[i], want);
        const float *dw = NULL;
        for (uint32_t k = L->exc_ptr[r]; k < L->exc_ptr[r + 1]; k++)
            if (L->exc_col[k] == (uint32_t)col) dw = &L->exc_dw[k];
        T_ASSERT(!dw == (u == a), "row %d block %d coord %d (x %d, stored %d): exception %s", r, b, i, x[i], u,
                 dw ? "present" : "missing");
        float d = dw ? *dw : 0.0f;
        if (dw) T_ASSERT(d == (float)(sign * (a - u)) * s, "row %d col %d: dw %g, want %g", r, col, d, (sign * (a - u)) * s);
        /* no rounding anywhere: then the sum is exact */
        double ws = (double)w[i], xs = (double)x[i] * s;
        if ((double)d == (double)(sign * (a - u)) * s && (double)(float)xs == xs) {
            T_ASSERT(w[i] + d == (float)xs, "row %d col %d: %g + %g != %g", r, col, ws, d, xs);
            g_sum_checked++;
        }
    }
    return T_PASS;
}

/* ---- the shared bit-exactness driver (layout_testlib.h) ---- */

static int unfold_hook(const lr_leech_matrix *m, int nthreads, void **out)
{
    lr_p14s *L = malloc(sizeof *L);
    T_ASSERT(L, "out of memory");
    int rc = lr_p14s_unfold(m, nthreads, L);
    if (rc) free(L);
    T_OK(rc);
    *out = L;
    return T_PASS;
}

static int get_hook(const void *L, int r, int b, int8_t x[24], int *g) { return lr_p14s_get(L, r, b, x, g); }

static int block_hook(const void *p, const lr_leech_matrix *m, int r, int b, const int8_t want[24], int g)
{
    const lr_p14s *L = p;
    if (kernel_view(L, r, b, want, g)) return T_FAIL;
    double w[24];
    T_OK(lr_p14s_get_f64(L, r, b, w));
    int n2 = lr_leech_norm(want), c;
    T_OK(lr_leech_class_of(want, L->max_shell, &c));
    double s = tab_scale(L->tab, lr_ctab_entry(c, g, L->gain_bits));
    for (int i = 0; i < 24; i++) {
        T_ASSERT(w[i] == want[i] * s * m->row_scale[r], "row %d block %d coord %d: weight %.17g", r, b, i, w[i]);
        /* and within the f16 scale's rounding of the shape-gain weight */
        double ex = n2 ? (double)want[i] * m->centroid[g] / sqrt((double)n2) * m->row_scale[r] : 0;
        T_ASSERT(fabs(w[i] - ex) <= 0x1.01p-11 * fabs(ex), "row %d block %d coord %d: weight %.17g, shape-gain %.17g", r,
                 b, i, w[i], ex);
    }
    return T_PASS;
}

/* The int8 form (p14s_i8.c) of every block, pads included, applies the
 * same weights as the f16 form: the int8 kernel mode computes the same
 * GEMV from it. */
static int int8_form(const lr_p14s *L)
{
    uint8_t *d = malloc(L->bytes), *t = malloc((size_t)L->nentries * 16);
    T_ASSERT(d && t, "out of memory");
    int rc = lr_p14s_i8_form(L, d, t);
    for (int r = 0; !rc && r < L->rg * 16; r++)
        for (int b = 0; b < L->sc * 8; b++) {
            float a[24], c[24];
            lr_p14s_kernel_block(L->data, L->tab, L->rows, L->cols, r, b, a);
            lr_p14s_i8_kernel_block(d, t, L->rows, L->cols, r, b, c);
            if (memcmp(a, c, sizeof a)) {
                for (int k = 0; k < 24; k++)
                    if (a[k] != c[k]) printf("    row %d block %d coord %d: f16 form %g, int8 form %g\n", r, b, k, a[k], c[k]);
                rc = -1;
                break;
            }
        }
    free(d), free(t);
    T_ASSERT(!rc, "int8 form differs");
    return T_PASS;
}

static int all_hook(const void *p, const lr_leech_matrix *m)
{
    const lr_p14s *L = p;
    T_ASSERT(L->bytes == (size_t)((m->rows + 15) / 16) * ((m->cols / 24 + 7) / 8) * LR_P14S_SEG, "bytes %zu", L->bytes);
    for (size_t i = (size_t)m->rows; i < (size_t)L->rg * 16; i++) T_ASSERT(L->row_scale[i] == 0, "pad row scale");
    for (int r = 0; r < m->rows; r++) T_ASSERT(L->row_scale[r] == m->row_scale[r], "row %d scale", r);
    T_ASSERT(!L->tail || !memcmp(L->tail_f16, m->tail_f16, (size_t)m->rows * m->tail * 2), "tail");
    /* pad blocks and pad rows are the origin: header 0, codes 8, f16 zeros */
    for (int r = 0; r < L->rg * 16; r++)
        for (int b = (r < m->rows ? m->nblk : 0); b < L->sc * 8; b++) {
            T_ASSERT(lr_p14s_kernel_header(L->data, m->rows, m->cols, r, b) == 0, "pad (%d, %d) header", r, b);
            float w[24];
            lr_p14s_kernel_block(L->data, L->tab, m->rows, m->cols, r, b, w);
            for (int k = 0; k < 24; k++) {
                T_ASSERT(lr_p14s_kernel_code(L->data, m->rows, m->cols, r, 24 * b + k) == LR_P14S_ZERO, "pad (%d, %d) code",
                         r, b);
                T_ASSERT(w[k] == 0.f, "pad (%d, %d) weight %g", r, b, w[k]);
            }
        }
    /* the exception lists: CSR, ascending, inside the blocks */
    T_ASSERT(L->exc_ptr[0] == 0 && L->exc_ptr[m->rows] == L->nexc, "exception pointers");
    for (int r = 0; r < m->rows; r++)
        for (uint32_t k = L->exc_ptr[r]; k < L->exc_ptr[r + 1]; k++)
            T_ASSERT(L->exc_col[k] < (uint32_t)(24 * m->nblk) && (k == L->exc_ptr[r] || L->exc_col[k] > L->exc_col[k - 1]),
                     "row %d exception %u", r, k);
    T_OK(lr_p14s_validate(L));
    return int8_form(L);
}

static void destroy_hook(void *L)
{
    lr_p14s_free(L);
    free(L);
}

static const lt_layout P14S = { "Planes14S", unfold_hook, get_hook, block_hook, all_hook, destroy_hook };

static int exact(int rows, int cols, int gain_bits, int adversarial, uint64_t seed)
{
    return lt_exact(&P14S, rows, cols, 12, gain_bits, adversarial, seed);
}

/* Ball 12, every class present (random: 301 blocks cycle the classes;
 * adversarial: each class's first and last point, the origin, the last
 * point), every gain width. */
static int test_every_class_ball12(void)
{
    g_sum_checked = 0;
    for (int gb = 0; gb <= 2; gb++) {
        if (exact(40, 24 * 20 + 5, gb, 0, 1 + (uint64_t)gb)) return T_FAIL;
        if (exact(33, 24 * 21, gb, 1, 4 + (uint64_t)gb)) return T_FAIL;
    }
    printf("    %ld coordinates with f16(u s) + dw == x s checked exactly\n", g_sum_checked);
    T_ASSERT(g_sum_checked > 50000, "only %ld exact sums", g_sum_checked);
    return T_PASS;
}

static int test_gain_widths_and_shapes(void)
{
    for (int gb = 0; gb <= 2; gb++)
        for (int adv = 0; adv <= 1; adv++)
            if (exact(17, 24 * 9 + 1, gb, adv, 10 + 2 * (uint64_t)gb + (uint64_t)adv)) return T_FAIL;
    int shapes[][2] = { { 1, 24 }, { 1, 25 }, { 3, 24 * 7 }, { 16, 24 * 8 }, { 17, 24 * 9 + 23 }, { 31, 24 * 17 + 11 },
                        { 64, 24 * 16 } };
    for (int i = 0; i < 7; i++)
        for (int adv = 0; adv <= 1; adv++)
            if (exact(shapes[i][0], shapes[i][1], i % 3, adv, 20 + 2 * (uint64_t)i + (uint64_t)adv)) return T_FAIL;
    return T_PASS;
}

/* Every class of both balls (ball 13 has no archive form: put directly):
 * the table builds; each class's stored magnitudes are exact f16 high
 * bytes, at most 4 and distinct; its first and last points round-trip with
 * the exceptions the stored magnitudes imply, and read back through the
 * kernel view. Prints the share of the ball needing exceptions. */
static int every_class(int ms)
{
    const lr_leech_class *cls;
    int nc;
    T_OK(lr_leech_classes(ms, &cls, &nc));
    const int per_row = 20, gb = 2;
    int rows = (2 * nc + per_row - 1) / per_row;
    lr_p14s L;
    T_OK(lr_p14s_alloc(&L, rows, 24 * per_row + 7, ms, gb));
    float cent[4] = { 0.6f, 0.9f, 1.1f, 1.4f };
    T_OK(lr_p14s_tab_build(ms, gb, cent, L.tab, (size_t)L.nentries * 16));
    uint32_t *er = malloc(sizeof(uint32_t) * 24 * 2 * (size_t)nc);
    lr_p14s_exc *ee = malloc(sizeof(lr_p14s_exc) * 24 * 2 * (size_t)nc);
    T_ASSERT(er && ee, "out of memory");
    size_t n = 0;
    double ball = (double)lr_leech_ball_points(ms), with_exc = 0, exc_mean = 0;
    int exc_classes = 0, five = 0;
    char line[256] = "";
    for (int c = 0; c < nc; c++) {
        int u[8], nu = 0, nexc = 0;
        for (int j = 0; j < cls[c].nvals; j++) {
            int v = cls[c].vals[j];
            if (!v) continue;
            int s = lr_p14s_stored(ms, c, v);
            T_ASSERT(s > 0 && s <= v && s >= v - 2, "class %d value %d: stored %d", c, v, s);
            uint16_t h = lr_float_to_half((float)s);
            T_ASSERT((h & 0xff) == 0, "class %d: stored %d not an f16 high byte", c, s);
            if (s != v) nexc += cls[c].mult[j];
            if (!nu || u[nu - 1] != s) u[nu++] = s;
            else T_ASSERT(s != v, "class %d: two values share stored %d without an exception", c, s);
        }
        T_ASSERT(nu >= 1 && nu <= 4, "class %d: %d stored magnitudes", c, nu);
        T_ASSERT(lr_p14s_stored(ms, c, cls[c].vals[cls[c].nvals - 1] + 2) == -1, "value outside class accepted");
        lr_clear_error();
        if (nexc) {
            exc_classes++, with_exc += (double)cls[c].count;
            exc_mean += (double)cls[c].count * nexc;
        }
        if (cls[c].nvals - (cls[c].vals[0] == 0) == 5) {
            five++;
            snprintf(line + strlen(line), sizeof line - strlen(line), " class %d (pool %d %d %d %d, %d exc)", c, u[0],
                     u[1], u[2], u[3], nexc);
        }
        for (int k = 0; k < 2; k++) {
            int8_t x[24];
            lr_p14s_exc ex[24];
            int ne, at = 2 * c + k;
            T_OK(lr_leech_unrank(cls[c].offset + (k ? cls[c].count - 1 : 0), ms, x));
            T_OK(lr_p14s_put(&L, at / per_row, at % per_row, x, at & 3, ex, &ne));
            T_ASSERT(ne == nexc, "class %d point %d: %d exceptions, want %d", c, k, ne, nexc);
            for (int i = 0; i < ne; i++) er[n] = (uint32_t)(at / per_row), ee[n++] = ex[i];
        }
    }
    T_OK(lr_p14s_set_exceptions(&L, er, ee, n));
    for (int at = 0; at < 2 * nc; at++) {
        int8_t want[24], got[24];
        int g, c = at / 2;
        T_OK(lr_leech_unrank(cls[c].offset + (at & 1 ? cls[c].count - 1 : 0), ms, want));
        T_OK(lr_p14s_get(&L, at / per_row, at % per_row, got, &g));
        T_ASSERT(!memcmp(want, got, 24) && g == (at & 3), "class %d point %d", c, at & 1);
        if (kernel_view(&L, at / per_row, at % per_row, want, at & 3)) return T_FAIL;
    }
    T_OK(lr_p14s_validate(&L));
    printf("    ball %d: %d of %d classes need exceptions, %.3f%% of the ball's points; %.4f exceptions per "
           "ball-uniform block; five nonzero magnitudes:%s\n",
           ms, exc_classes, nc, 100 * with_exc / ball, exc_mean / ball, line);
    T_ASSERT(with_exc / ball < 0.10, "%.2f%% of points need exceptions", 100 * with_exc / ball);
    T_ASSERT(five >= 1, "no class with five nonzero magnitudes exercised");
    free(er), free(ee);
    lr_p14s_free(&L);
    return T_PASS;
}

static int test_every_class_both_balls(void)
{
    if (every_class(12)) return T_FAIL;
    return every_class(13);
}

/* ---- damage ---- */

static int expect_reject(const lr_p14s *L, const char *what, const char *needle)
{
    int rc = lr_p14s_validate(L);
    T_ASSERT(rc == LR_EFORMAT, "%s accepted (status %d)", what, rc);
    T_ASSERT(!needle || strstr(lr_errmsg(), needle), "%s: message `%s` lacks `%s`", what, lr_errmsg(), needle);
    lr_clear_error();
    return T_PASS;
}

/* A block (row, blk) whose class satisfies pred, or -1. */
static int find_block(const lr_p14s *L, int (*pred)(const lr_leech_class *c, int nexc), int *row, int *blk)
{
    const lr_leech_class *cls;
    int nc;
    if (lr_leech_classes(L->max_shell, &cls, &nc)) return -1;
    for (int r = 0; r < L->rows; r++)
        for (int b = 0; b < L->nblk; b++) {
            int8_t x[24];
            int g, c;
            if (lr_p14s_get(L, r, b, x, &g) || lr_leech_class_of(x, L->max_shell, &c) || c < 0) continue;
            int ne = 0;
            for (int i = 0; i < 24; i++) ne += lr_p14s_stored(L->max_shell, c, abs(x[i])) != abs(x[i]);
            if (pred(&cls[c], ne)) { *row = r, *blk = b; return 0; }
        }
    return -1;
}

static int few_values(const lr_leech_class *c, int nexc) { return c->nvals - (c->vals[0] == 0) < 4 && !nexc; }
static int has_zero(const lr_leech_class *c, int nexc) { return c->vals[0] == 0 && !nexc; }

/* Sets the code nibble of (row, col), found by its kernel-view position. */
static void set_code(lr_p14s *L, int row, int col, int code)
{
    /* find the nibble by trying: the kernel view is the reference */
    int old = lr_p14s_kernel_code(L->data, L->rows, L->cols, row, col);
    for (size_t off = 0; off < L->bytes; off++)
        for (int sh = 0; sh < 8; sh += 4) {
            uint8_t keep = L->data[off];
            L->data[off] = (uint8_t)((keep & ~(15u << sh)) | (unsigned)(old ^ 15) << sh);
            int moved = lr_p14s_kernel_code(L->data, L->rows, L->cols, row, col) == (old ^ 15);
            L->data[off] = keep;
            if (moved) {
                L->data[off] = (uint8_t)((keep & ~(15u << sh)) | (unsigned)code << sh);
                return;
            }
        }
}

static void set_header(lr_p14s *L, int row, int blk, int h)
{
    for (size_t off = 0; off + 1 < L->bytes; off++) {
        uint8_t a = L->data[off], b = L->data[off + 1];
        L->data[off] = 0x5a, L->data[off + 1] = 0xa5;
        int hit = lr_p14s_kernel_header(L->data, L->rows, L->cols, row, blk) == 0xa55a;
        L->data[off] = a, L->data[off + 1] = b;
        if (hit) {
            L->data[off] = (uint8_t)h, L->data[off + 1] = (uint8_t)(h >> 8);
            return;
        }
    }
}

static int test_rejects_damage(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(16, 24 * 8, 12, 1, 0, 7, &m));
    lr_p14s L;
    T_OK(lr_p14s_unfold(&m, 1, &L));
    T_ASSERT(L.nexc > 0, "no exceptions");
    int8_t orig[16 * 8][24];
    for (int k = 0; k < 16 * 8; k++) {
        int g;
        T_OK(lr_p14s_get(&L, k / 8, k % 8, orig[k], &g));
    }
    int rejected = 0, trials = 0;
    for (size_t off = 0; off < LR_P14S_SEG; off++)
        for (int bit = 0; bit < 8; bit++) {
            L.data[off] ^= (uint8_t)(1u << bit);
            int rc = lr_p14s_validate(&L);
            trials++;
            if (rc == LR_EFORMAT) rejected++;
            else {
                /* accepted: every block is a point the kernel view
                 * reproduces; one coordinate changed, its sign, |x| = 0 mod 4 */
                T_ASSERT(rc == LR_OK, "flip %zu.%d: status %d", off, bit, rc);
                int changed = 0;
                for (int r = 0; r < L.rows; r++)
                    for (int b = 0; b < L.nblk; b++) {
                        int8_t x[24];
                        int g;
                        T_OK(lr_p14s_get(&L, r, b, x, &g));
                        T_ASSERT(lr_leech_is_point(x), "not a point");
                        if (kernel_view(&L, r, b, x, g)) return T_FAIL;
                        for (int i = 0; i < 24; i++)
                            if (x[i] != orig[8 * r + b][i]) {
                                changed++;
                                T_ASSERT(x[i] == -orig[8 * r + b][i] && x[i] % 4 == 0, "flip %zu.%d: %d -> %d", off, bit,
                                         orig[8 * r + b][i], x[i]);
                            }
                    }
                T_ASSERT(changed == 1, "flip %zu.%d: %d coordinates changed", off, bit, changed);
            }
            L.data[off] ^= (uint8_t)(1u << bit);
        }
    lr_clear_error();
    T_OK(lr_p14s_validate(&L));
    /* the accepted ones flip the sign of a coordinate with |x| = 0 mod 4:
     * 2 x e_i is then a lattice vector and the class is unchanged */
    printf("    %d of %d single-bit flips rejected (%.1f%%); the rest decode to points of their class\n", rejected,
           trials, 100.0 * rejected / trials);
    T_ASSERT(rejected >= 0.9 * trials, "only %d of %d flips rejected", rejected, trials);

    /* exceptions: a changed value, a moved column, a dropped one, an extra one */
    float dw = L.exc_dw[0];
    L.exc_dw[0] = dw * 2;
    if (expect_reject(&L, "changed exception", "fits no value")) return T_FAIL;
    L.exc_dw[0] = nextafterf(dw, 0);
    if (expect_reject(&L, "exception one ulp off", "fits no value")) return T_FAIL;
    L.exc_dw[0] = dw;
    uint32_t col = L.exc_col[0], row = 0;
    while (L.exc_ptr[row + 1] == 0) row++;
    for (int d = 1; d <= 3; d++) {
        L.exc_col[0] = col ^ (uint32_t)d;
        if (L.exc_ptr[row + 1] > 1 && L.exc_col[1] <= L.exc_col[0]) continue;
        if (expect_reject(&L, "moved exception", NULL)) return T_FAIL;
    }
    L.exc_col[0] = col;
    T_OK(lr_p14s_validate(&L));
    lr_p14s_exc *all = malloc(sizeof *all * (L.nexc + 1));
    uint32_t *rows = malloc(sizeof *rows * (L.nexc + 1));
    T_ASSERT(all && rows, "out of memory");
    for (int r = 0; r < L.rows; r++)
        for (uint32_t k = L.exc_ptr[r]; k < L.exc_ptr[r + 1]; k++) rows[k] = (uint32_t)r, all[k] = (lr_p14s_exc){ L.exc_col[k], L.exc_dw[k] };
    uint32_t n = L.nexc;
    T_OK(lr_p14s_set_exceptions(&L, rows + 1, all + 1, n - 1));
    if (expect_reject(&L, "dropped exception", "none listed")) return T_FAIL;
    /* out of order is refused by set_exceptions */
    if (n >= 2 && rows[0] == rows[1]) {
        lr_p14s_exc t = all[0];
        all[0] = all[1], all[1] = t;
        T_ASSERT(lr_p14s_set_exceptions(&L, rows, all, n) == LR_EINVAL, "unsorted exceptions installed");
        lr_clear_error();
        all[1] = all[0], all[0] = t;
    }
    T_OK(lr_p14s_set_exceptions(&L, rows, all, n));
    T_OK(lr_p14s_validate(&L));
    /* an extra exception on a zero coordinate and on an exact one */
    int zr, zb;
    T_ASSERT(!find_block(&L, has_zero, &zr, &zb), "no block with zeros");
    int8_t x[24];
    int g;
    T_OK(lr_p14s_get(&L, zr, zb, x, &g));
    int zi = 0, nzi = 0;
    while (x[zi]) zi++;
    while (!x[nzi]) nzi++;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t ecol = (uint32_t)(24 * zb + (pass ? nzi : zi));
        uint32_t *r2 = malloc(sizeof *r2 * (n + 1));
        lr_p14s_exc *e2 = malloc(sizeof *e2 * (n + 1));
        T_ASSERT(r2 && e2, "out of memory");
        uint32_t k = 0, o = 0;
        for (; k < n && (rows[k] < (uint32_t)zr || (rows[k] == (uint32_t)zr && all[k].col < ecol)); k++)
            r2[o] = rows[k], e2[o++] = all[k];
        r2[o] = (uint32_t)zr, e2[o++] = (lr_p14s_exc){ ecol, tab_scale(L.tab, lr_p14s_kernel_header(L.data, L.rows, L.cols, zr, zb) / 16) };
        for (; k < n; k++) r2[o] = rows[k], e2[o++] = all[k];
        T_OK(lr_p14s_set_exceptions(&L, r2, e2, o));
        if (expect_reject(&L, pass ? "exception on an exact coordinate" : "exception on a zero", pass ? "fits no value" : "zero coordinate"))
            return T_FAIL;
        free(r2), free(e2);
    }
    T_OK(lr_p14s_set_exceptions(&L, rows, all, n));
    T_OK(lr_p14s_validate(&L));
    /* the CSR itself: non-ascending columns, pointers not monotone, not ending at nexc */
    uint32_t rr = rows[0];
    if (L.exc_ptr[rr + 1] - L.exc_ptr[rr] >= 2) {
        uint32_t k = L.exc_ptr[rr], c0 = L.exc_col[k];
        L.exc_col[k] = L.exc_col[k + 1];
        if (expect_reject(&L, "repeated column", NULL)) return T_FAIL;
        L.exc_col[k] = c0;
    }
    L.exc_ptr[L.rows]++;
    if (expect_reject(&L, "pointers past nexc", "exception pointers")) return T_FAIL;
    L.exc_ptr[L.rows]--;
    uint32_t keep = L.exc_ptr[rr + 1];
    L.exc_ptr[rr + 1] = L.exc_ptr[rr] ? L.exc_ptr[rr] - 1 : L.nexc + 1;
    if (expect_reject(&L, "pointers not monotone", "exception pointers")) return T_FAIL;
    L.exc_ptr[rr + 1] = keep;
    L.exc_col[L.nexc - 1] += 24 * (uint32_t)L.nblk; /* past the blocks (the tail) */
    if (expect_reject(&L, "exception past the blocks", "column")) return T_FAIL;
    L.exc_col[L.nexc - 1] -= 24 * (uint32_t)L.nblk;
    T_OK(lr_p14s_validate(&L));
    free(all), free(rows);

    /* headers and codes */
    int h0 = lr_p14s_kernel_header(L.data, L.rows, L.cols, 3, 5);
    set_header(&L, 3, 5, h0 | 8);
    if (expect_reject(&L, "header not a multiple of 16", "multiple of 16")) return T_FAIL;
    set_header(&L, 3, 5, 16 * L.nentries);
    if (expect_reject(&L, "header past the table", "past the table")) return T_FAIL;
    set_header(&L, 3, 5, 0);
    if (expect_reject(&L, "origin header on a nonzero block", "unused pool slot")) return T_FAIL;
    set_header(&L, 3, 5, h0);
    T_OK(lr_p14s_validate(&L));
    int code0 = lr_p14s_kernel_code(L.data, L.rows, L.cols, 3, 24 * 5 + 2);
    for (int c = 9; c < 16; c++) {
        set_code(&L, 3, 24 * 5 + 2, c);
        if (expect_reject(&L, "code 9..15", "invalid code")) return T_FAIL;
    }
    set_code(&L, 3, 24 * 5 + 2, code0);
    T_OK(lr_p14s_validate(&L));
    int fr, fb;
    T_ASSERT(!find_block(&L, few_values, &fr, &fb), "no class with fewer than 4 values");
    for (int k = 0; k < 24; k++) {
        int c = lr_p14s_kernel_code(L.data, L.rows, L.cols, fr, 24 * fb + k);
        set_code(&L, fr, 24 * fb + k, 3 | (c & 4));
        if (expect_reject(&L, "unused pool slot", "unused pool slot")) return T_FAIL;
        set_code(&L, fr, 24 * fb + k, c);
    }
    T_OK(lr_p14s_validate(&L));
    lr_p14s_free(&L);
    lr_leech_random_free(&m);

    /* pads: a matrix with pad rows and blocks, each pad byte damaged */
    T_OK(lr_leech_random_matrix(5, 24 * 3 + 1, 12, 0, 0, 8, &m));
    T_OK(lr_p14s_unfold(&m, 1, &L));
    T_OK(lr_p14s_validate(&L));
    int pads = 0;
    for (int r = 0; r < 16; r++)
        for (int b = r < 5 ? 3 : 0; b < 8; b++) {
            set_header(&L, r, b, 16);
            if (expect_reject(&L, "pad header", "pad block")) return T_FAIL;
            set_header(&L, r, b, 0);
            set_code(&L, r, 24 * b + 7, 0);
            if (expect_reject(&L, "pad code", "pad block")) return T_FAIL;
            set_code(&L, r, 24 * b + 7, 8);
            pads++;
        }
    T_OK(lr_p14s_validate(&L));
    T_ASSERT(pads == 16 * 8 - 5 * 3, "%d pads", pads);
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* ---- determinism ---- */

static int same_layout(const lr_p14s *A, const lr_p14s *B, const char *what)
{
    T_ASSERT(A->bytes == B->bytes && A->nentries == B->nentries && A->rows == B->rows && A->cols == B->cols,
             "%s: geometry", what);
    for (size_t i = 0; i < A->bytes; i++)
        T_ASSERT(A->data[i] == B->data[i], "%s: segment byte %zu (segment %zu, offset %zu): %02x, 1 thread %02x", what,
                 i, i / LR_P14S_SEG, i % LR_P14S_SEG, A->data[i], B->data[i]);
    T_ASSERT(!memcmp(A->tab, B->tab, (size_t)A->nentries * 16), "%s: class table", what);
    T_ASSERT(!memcmp(A->row_scale, B->row_scale, (size_t)A->rg * LR_P14S_ROWS * sizeof(float)), "%s: row scales", what);
    T_ASSERT(!A->tail || !memcmp(A->tail_f16, B->tail_f16, (size_t)A->rows * A->tail * 2), "%s: tail", what);
    T_ASSERT(A->nexc == B->nexc, "%s: %u exceptions, 1 thread %u", what, A->nexc, B->nexc);
    T_ASSERT(!memcmp(A->exc_ptr, B->exc_ptr, ((size_t)A->rows + 1) * 4), "%s: exception rows", what);
    T_ASSERT(!memcmp(A->exc_col, B->exc_col, (size_t)A->nexc * 4) && !memcmp(A->exc_dw, B->exc_dw, (size_t)A->nexc * 4),
             "%s: exception columns / values", what);
    return T_PASS;
}

/* Ball-uniform indices (the distribution a real matrix's blocks follow
 * roughly), packed into m's archive. */
static int test_unfold_threads_identical(void)
{
    int shapes[][2] = { { 40, 24 * 20 + 5 }, { 33, 24 * 21 }, { 1, 25 }, { 17, 24 * 9 + 23 }, { 70, 24 * 13 + 1 },
                        { 48, 24 * 40 + 3 } };
    for (int i = 0; i < 6; i++)
        for (int gb = 0; gb <= 2; gb++) {
            lr_leech_matrix m;
            uint64_t seed = 100 + 10 * (uint64_t)i + (uint64_t)gb;
            T_OK(lr_leech_random_matrix(shapes[i][0], shapes[i][1], 12, gb, i == 5 ? LR_RANDOM_BALL : i & 1, seed, &m));
            lr_p14s A, B, C;
            T_OK(lr_p14s_unfold(&m, 1, &B));
            T_OK(lr_p14s_unfold(&m, 3, &A));
            T_OK(lr_p14s_unfold(&m, 0, &C));
            char what[64];
            snprintf(what, sizeof what, "%dx%d, %d gain bits", m.rows, m.cols, gb);
            if (same_layout(&A, &B, what) || same_layout(&C, &B, what)) return T_FAIL;
            T_ASSERT(m.rows * m.nblk < 301 || A.nexc > 0, "%s: no exceptions exercised", what);
            lr_p14s_free(&A), lr_p14s_free(&B), lr_p14s_free(&C);
            lr_leech_random_free(&m);
        }
    /* ball 13 (archives hold ball-12 indices, the start of ball 13's
     * numbering): threads agree, blocks decode to unrank(idx, 13), kernel view */
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(33, 24 * 21 + 5, 12, 2, 0, 77, &m));
    m.max_shell = 13;
    uint64_t *idx;
    uint8_t *gain;
    T_OK(lr_leech_random_indices(&m, &idx, &gain));
    lr_p14s A, B;
    T_OK(lr_p14s_unfold(&m, 1, &B));
    T_OK(lr_p14s_unfold(&m, 2, &A));
    if (same_layout(&A, &B, "ball 13")) return T_FAIL;
    T_OK(lr_p14s_validate(&A));
    T_ASSERT(A.nexc > 0, "ball 13: no exceptions exercised");
    for (int r = 0; r < m.rows; r++)
        for (int b = 0; b < m.nblk; b++) {
            int8_t want[24], got[24];
            int g;
            size_t k = (size_t)r * m.nblk + b;
            T_OK(lr_leech_unrank(idx[k], 13, want));
            T_OK(lr_p14s_get(&A, r, b, got, &g));
            T_ASSERT(!memcmp(want, got, 24) && g == gain[k], "ball 13: row %d block %d", r, b);
            if (kernel_view(&A, r, b, want, g)) return T_FAIL;
        }
    free(idx), free(gain);
    lr_p14s_free(&A), lr_p14s_free(&B);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* ---- size ---- */

/* The fast unfold (codes straight from the indices) equals the reference
 * (unrank + put) byte for byte, and fails the same way. */
static int test_fast_equals_reference(void)
{
    int shapes[][2] = { { 40, 24 * 20 + 5 }, { 33, 24 * 21 }, { 1, 25 }, { 17, 24 * 9 + 23 }, { 64, 24 * 40 + 3 } };
    for (int i = 0; i < 5; i++)
        for (int gb = 0; gb <= 2; gb++)
            for (int adv = 0; adv < 2; adv++) {
                lr_leech_matrix m;
                uint64_t seed = 500 + 10 * (uint64_t)i + 3 * (uint64_t)gb + (uint64_t)adv;
                T_OK(lr_leech_random_matrix(shapes[i][0], shapes[i][1], 12, gb, i == 4 && !adv ? LR_RANDOM_BALL : adv,
                                            seed, &m));
                lr_p14s A, B;
                T_OK(lr_p14s_unfold(&m, 2, &A));
                T_OK(lr_p14s_unfold_ref(&m, 2, &B));
                char what[80];
                snprintf(what, sizeof what, "fast vs reference, %dx%d, %d gain bits%s", m.rows, m.cols, gb,
                         adv ? ", adversarial" : "");
                if (same_layout(&A, &B, what)) return T_FAIL;
                lr_p14s_free(&A), lr_p14s_free(&B);
                lr_leech_random_free(&m);
            }
    /* an index outside the ball: the same status and message */
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(20, 24 * 9 + 2, 12, 1, 0, 300, &m));
    size_t bit = 37 * 48;
    for (int i = 0; i < 47; i++, bit++) m.archive[bit / 8] |= (uint8_t)(0x80u >> bit % 8);
    lr_p14s L;
    char msg[512];
    int r1 = lr_p14s_unfold(&m, 1, &L);
    snprintf(msg, sizeof msg, "%s", lr_errmsg());
    lr_clear_error();
    int r2 = lr_p14s_unfold_ref(&m, 1, &L);
    T_ASSERT(r1 != LR_OK && r1 == r2 && !strcmp(msg, lr_errmsg()), "errors differ: %d `%s` vs %d `%s`", r1, msg, r2,
             lr_errmsg());
    lr_clear_error();
    lr_leech_random_free(&m);
    /* speed, one thread (informational) */
    T_OK(lr_leech_random_matrix(256, 24 * 64, 12, 1, LR_RANDOM_BALL, 77, &m));
    double t0 = lr_now();
    T_OK(lr_p14s_unfold(&m, 1, &L));
    double t1 = lr_now();
    lr_p14s_free(&L);
    T_OK(lr_p14s_unfold_ref(&m, 1, &L));
    double t2 = lr_now();
    lr_p14s_free(&L);
    double nb = 256.0 * 64;
    printf("    unfold, one thread, ball-uniform: fast %.0f ns per block, reference %.0f\n", 1e9 * (t1 - t0) / nb,
           1e9 * (t2 - t1) / nb);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* Several matrices in one layout (fused q|k|v, gate|up): rows 37|77|16|5,
 * three distinct centroid vectors (parts 0 and 3 share one): every block
 * decodes to its part's point and gain with its part's table, the fast and
 * reference unfolds agree, a header into another part's table and
 * mismatched parts are rejected, too many tables are refused. */
/* Two parts interleaved (gate|up for the fused SwiGLU end): row 2i + p of
 * the pair layout holds what row part_row0[p] + i of the concatenated one
 * holds: the same point, gain, table, scale, exceptions and tail; fast and
 * reference unfolds agree byte for byte; unequal rows are refused. */
static int test_pair(void)
{
    const int R = 37, cols = 24 * 17 + 5;
    lr_leech_matrix m[2];
    for (int p = 0; p < 2; p++) T_OK(lr_leech_random_matrix(R, cols, 12, 1, p, 960 + (uint64_t)p, &m[p]));
    m[1].centroid[1] *= 1.5f; /* two tables */
    const lr_leech_matrix *pp[2] = { &m[0], &m[1] };
    lr_p14s P, Q, C;
    T_OK(lr_p14s_unfold_pair(pp, 2, &P));
    T_OK(lr_p14s_unfold_pair_ref(pp, 1, &Q));
    if (same_layout(&P, &Q, "pair, fast vs reference")) return T_FAIL;
    T_OK(lr_p14s_unfold_parts(pp, 2, 1, &C));
    T_ASSERT(P.pair == 1 && C.pair == 0 && P.rows == 2 * R && P.ntabs == 2, "pair %d rows %d tables %d", P.pair, P.rows,
             P.ntabs);
    T_OK(lr_p14s_validate(&P));
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < R; i++) {
            const int rp = 2 * i + p, rc_ = C.part_row0[p] + i;
            T_ASSERT(lr_p14s_part_of(&P, rp) == p, "row %d part %d", rp, lr_p14s_part_of(&P, rp));
            T_ASSERT(P.row_scale[rp] == C.row_scale[rc_], "row %d scale", rp);
            T_ASSERT(!P.tail || !memcmp(P.tail_f16 + (size_t)rp * P.tail, C.tail_f16 + (size_t)rc_ * C.tail, 2 * P.tail),
                     "row %d tail", rp);
            T_ASSERT(P.exc_ptr[rp + 1] - P.exc_ptr[rp] == C.exc_ptr[rc_ + 1] - C.exc_ptr[rc_], "row %d exceptions", rp);
            for (uint32_t e = 0; e < P.exc_ptr[rp + 1] - P.exc_ptr[rp]; e++)
                T_ASSERT(P.exc_col[P.exc_ptr[rp] + e] == C.exc_col[C.exc_ptr[rc_] + e] &&
                             P.exc_dw[P.exc_ptr[rp] + e] == C.exc_dw[C.exc_ptr[rc_] + e],
                         "row %d exception %u", rp, e);
            for (int b = 0; b < P.nblk; b++) {
                int8_t a[24], c[24];
                int ga, gc;
                T_OK(lr_p14s_get(&P, rp, b, a, &ga));
                T_OK(lr_p14s_get(&C, rc_, b, c, &gc));
                T_ASSERT(!memcmp(a, c, 24) && ga == gc, "row %d block %d", rp, b);
                T_ASSERT(lr_p14s_kernel_header(P.data, P.rows, P.cols, rp, b) ==
                             lr_p14s_kernel_header(C.data, C.rows, C.cols, rc_, b),
                         "row %d block %d: header (table)", rp, b);
            }
        }
    lr_p14s_free(&P), lr_p14s_free(&Q), lr_p14s_free(&C);
    lr_leech_matrix o;
    T_OK(lr_leech_random_matrix(R + 1, cols, 12, 1, 0, 970, &o));
    const lr_leech_matrix *bad[2] = { &m[0], &o };
    T_ASSERT(lr_p14s_unfold_pair(bad, 1, &P) == LR_EINVAL && strstr(lr_errmsg(), "equal rows"), "%s", lr_errmsg());
    lr_clear_error();
    lr_leech_random_free(&o);
    for (int p = 0; p < 2; p++) lr_leech_random_free(&m[p]);
    return T_PASS;
}

static int test_parts(void)
{
    int rows[4] = { 37, 77, 16, 5 }, cols = 24 * 17 + 5;
    lr_leech_matrix m[4];
    const lr_leech_matrix *pp[8];
    for (int p = 0; p < 4; p++) {
        T_OK(lr_leech_random_matrix(rows[p], cols, 12, 1, p & 1, 900 + (uint64_t)p, &m[p]));
        pp[p] = &m[p];
    }
    memcpy(m[3].centroid, m[0].centroid, sizeof m[0].centroid);
    m[1].centroid[1] *= 1.5f, m[2].centroid[0] *= 0.75f; /* keep them distinct from part 0 */
    lr_p14s L, R;
    T_OK(lr_p14s_unfold_parts(pp, 4, 2, &L));
    T_OK(lr_p14s_unfold_parts_ref(pp, 4, 1, &R));
    if (same_layout(&L, &R, "parts, fast vs reference")) return T_FAIL;
    T_ASSERT(L.nparts == 4 && L.ntabs == 3 && L.nentries == 3 * L.nent1 && L.rows == 135, "parts %d tables %d rows %d",
             L.nparts, L.ntabs, L.rows);
    T_OK(lr_p14s_validate(&L));
    for (int p = 0; p < 4; p++) {
        uint64_t *idx;
        uint8_t *gain;
        T_OK(lr_leech_random_indices(&m[p], &idx, &gain));
        for (int r = 0; r < rows[p]; r++)
            for (int b = 0; b < m[p].nblk; b++) {
                int row = L.part_row0[p] + r, g, e = lr_p14s_kernel_header(L.data, L.rows, L.cols, row, b) / 16;
                int8_t want[24], got[24];
                size_t k = (size_t)r * m[p].nblk + b;
                T_OK(lr_leech_unrank(idx[k], 12, want));
                T_OK(lr_p14s_get(&L, row, b, got, &g));
                T_ASSERT(!memcmp(want, got, 24) && (!idx[k] || g == gain[k]), "part %d row %d block %d", p, r, b);
                T_ASSERT(!idx[k] ? e == 0 : e / L.nent1 == L.part_tab[p], "part %d row %d block %d: entry %d", p, r, b, e);
                if (idx[k]) {
                    /* the kernel's scale is the part's centroid's */
                    T_ASSERT(tab_scale(L.tab, e) == lr_half_to_float(lr_float_to_half((float)(
                                 m[p].centroid[gain[k]] / sqrt((double)lr_leech_norm(want))))),
                             "part %d row %d block %d: scale", p, r, b);
                }
            }
        free(idx), free(gain);
    }
    /* a header moved into another part's table */
    int row = L.part_row0[1], blk = 0;
    while (blk < L.nblk && !lr_p14s_kernel_header(L.data, L.rows, L.cols, row, blk)) blk++;
    T_ASSERT(blk < L.nblk, "no block to damage");
    int h = lr_p14s_kernel_header(L.data, L.rows, L.cols, row, blk);
    set_header(&L, row, blk, h - 16 * L.part_tab[1] * L.nent1 + 16 * L.part_tab[0] * L.nent1);
    int8_t x[24];
    int g;
    T_ASSERT(lr_p14s_get(&L, row, blk, x, &g) == LR_EFORMAT && strstr(lr_errmsg(), "another part"), "%s", lr_errmsg());
    lr_clear_error();
    lr_p14s_free(&L), lr_p14s_free(&R);
    /* mismatched columns and gain widths name the part */
    lr_leech_matrix o;
    T_OK(lr_leech_random_matrix(8, cols + 24, 12, 1, 0, 950, &o));
    const lr_leech_matrix *bad[2] = { &m[0], &o };
    T_ASSERT(lr_p14s_unfold_parts(bad, 2, 1, &L) == LR_EINVAL && strstr(lr_errmsg(), "part 1"), "%s", lr_errmsg());
    lr_clear_error();
    lr_leech_random_free(&o);
    T_OK(lr_leech_random_matrix(8, cols, 12, 2, 0, 951, &o));
    T_ASSERT(lr_p14s_unfold_parts(bad, 2, 1, &L) == LR_EINVAL && strstr(lr_errmsg(), "gain bits"), "%s", lr_errmsg());
    lr_clear_error();
    lr_leech_random_free(&o);
    /* eight distinct tables of 603 entries: past 4096 entries */
    lr_leech_matrix q[8];
    for (int p = 0; p < 8; p++) {
        T_OK(lr_leech_random_matrix(3, cols, 12, 1, 0, 960 + (uint64_t)p, &q[p]));
        q[p].centroid[0] = 0.5f + 0.01f * (float)p;
        pp[p] = &q[p];
    }
    T_ASSERT(lr_p14s_unfold_parts(pp, 8, 1, &L) == LR_ERANGE && strstr(lr_errmsg(), "16-bit"), "%s", lr_errmsg());
    lr_clear_error();
    for (int p = 0; p < 8; p++) lr_leech_random_free(&q[p]);
    for (int p = 0; p < 4; p++) lr_leech_random_free(&m[p]);
    return T_PASS;
}

/* Blocks of L carrying at least one exception. */
static int blocks_with_exceptions(const lr_p14s *L)
{
    int with = 0;
    for (int r = 0; r < L->rows; r++) {
        int last = -1;
        for (uint32_t k = L->exc_ptr[r]; k < L->exc_ptr[r + 1]; k++)
            if ((int)(L->exc_col[k] / 24) != last) with++, last = (int)(L->exc_col[k] / 24);
    }
    return with;
}

/* The two ways of drawing random matrices (layouts/leech_vram/random.h)
 * give the exception shares they are meant to: class-uniform overweights
 * the rare classes that need exceptions, ball-uniform matches the ball. */
static int test_bits_per_weight(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(256, 24 * 64, 12, 1, LR_RANDOM_CLASSES, 9, &m));
    lr_p14s L;
    T_OK(lr_p14s_unfold(&m, 0, &L));
    double cu = lr_p14s_bits_per_weight(&L), cu_exc = (double)L.nexc / (256.0 * 64);
    int cu_with = blocks_with_exceptions(&L);
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    T_OK(lr_leech_random_matrix(256, 24 * 64, 12, 1, LR_RANDOM_BALL, 9, &m));
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    T_OK(lr_p14s_unfold(&m, 0, &L));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    T_OK(lr_p14s_validate(&L));
    double bpw = lr_p14s_bits_per_weight(&L);
    int with = blocks_with_exceptions(&L);
    printf("    ball-uniform 256x%d: %.4f b/w (segments %.4f), %.3f%% of blocks with an exception, %.4f exceptions per "
           "block; class-uniform: %.4f b/w, %.3f%% of blocks, %.4f exceptions per block; unfold %.0f blocks/s\n",
           m.cols, bpw, 8.0 * LR_P14S_SEG / (16 * 192), 100.0 * with / (256 * 64), (double)L.nexc / (256 * 64), cu,
           100.0 * cu_with / (256 * 64), cu_exc, 256 * 64 / s);
    T_ASSERT(bpw > 4.6 && bpw < 5.0, "bits per weight %g", bpw);
    T_ASSERT(with > 0.01 * 256 * 64 && with < 0.03 * 256 * 64, "ball-uniform: %d blocks with exceptions", with);
    T_ASSERT(cu_with > 0.06 * 256 * 64, "class-uniform: only %d blocks with exceptions", cu_with);
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    T_ASSERT(lr_leech_random_matrix(4, 48, 12, 1, 3, 1, &m) == LR_EINVAL, "mode 3 accepted");
    lr_clear_error();
    return T_PASS;
}

/* ---- errors ---- */

static int expect_fail(const lr_leech_matrix *m, int status, const char *needle, const char *what)
{
    lr_p14s L;
    memset(&L, 0x5a, sizeof L);
    int rc = lr_p14s_unfold(m, 2, &L);
    T_ASSERT(rc == status, "%s: status %d (%s), want %d", what, rc, lr_errmsg(), status);
    T_ASSERT(strstr(lr_errmsg(), needle), "%s: message `%s` lacks `%s`", what, lr_errmsg(), needle);
    T_ASSERT(!L.data && !L.tab && !L.exc_ptr, "%s: layout not released", what);
    lr_clear_error();
    lr_p14s_free(&L); /* a freed layout frees again harmlessly */
    return T_PASS;
}

static int test_errors(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(20, 24 * 9 + 2, 12, 1, 0, 300, &m));
    /* an index outside the ball: block 37 (row 4, block 1) set to all ones */
    size_t bit = 37 * 48;
    for (int i = 0; i < 47; i++, bit++) m.archive[bit / 8] |= (uint8_t)(0x80u >> bit % 8);
    if (expect_fail(&m, LR_ERANGE, "block 37", "out-of-ball index")) return T_FAIL;
    lr_leech_random_free(&m);

    T_OK(lr_leech_random_matrix(40, 24 * 12, 12, 1, 0, 301, &m));
    float keep = m.row_scale[9];
    m.row_scale[9] = NAN;
    if (expect_fail(&m, LR_EINVAL, "row 9 scale not finite", "NaN row scale")) return T_FAIL;
    m.row_scale[9] = INFINITY;
    if (expect_fail(&m, LR_EINVAL, "row 9 scale not finite", "inf row scale")) return T_FAIL;
    m.row_scale[9] = keep;
    m.centroid[1] = NAN;
    if (expect_fail(&m, LR_EINVAL, "centroid 1 not finite", "NaN centroid")) return T_FAIL;
    m.centroid[1] = -INFINITY;
    if (expect_fail(&m, LR_EINVAL, "centroid 1 not finite", "inf centroid")) return T_FAIL;
    m.centroid[1] = 1e9f;
    if (expect_fail(&m, LR_ERANGE, "out of f16 range", "f16-overflowing centroid")) return T_FAIL;
    m.centroid[1] = 1.0f;
    m.nblk++;
    if (expect_fail(&m, LR_EINVAL, "disagree", "nblk")) return T_FAIL;
    m.nblk--;
    lr_p14s L;
    T_OK(lr_p14s_unfold(&m, 2, &L));
    T_OK(lr_p14s_validate(&L));

    /* put: not a point, outside the ball, a bad gain, a bad position */
    int8_t x[24] = { 1 }, y[24];
    lr_p14s_exc ex[24];
    int ne, g;
    T_ASSERT(lr_p14s_put(&L, 0, 0, x, 0, ex, &ne) == LR_EINVAL && ne == 0, "non-point stored");
    lr_clear_error();
    memset(x, 0, sizeof x);
    x[0] = 16; /* a lattice point of shell 16, outside the ball */
    T_ASSERT(lr_p14s_put(&L, 0, 0, x, 0, ex, &ne) != LR_OK, "point outside the ball stored");
    lr_clear_error();
    T_OK(lr_p14s_get(&L, 0, 0, y, &g));
    T_ASSERT(lr_p14s_put(&L, 0, 0, y, 2, ex, &ne) == LR_EINVAL, "gain 2 with 1 gain bit stored");
    T_ASSERT(lr_p14s_put(&L, 40, 0, y, 0, ex, &ne) == LR_ERANGE, "row 40 stored");
    T_ASSERT(lr_p14s_get(&L, 0, 12, y, &g) == LR_ERANGE, "block 12 read");
    lr_clear_error();
    T_OK(lr_p14s_validate(&L));
    /* stored(): outside values and classes give -1 */
    T_ASSERT(lr_p14s_stored(12, -1, 0) == 0 && lr_p14s_stored(12, -1, 2) == -1, "origin");
    T_ASSERT(lr_p14s_stored(12, 301, 2) == -1 && lr_p14s_stored(12, 0, 3) == -1, "bad class / value");
    lr_clear_error();
    /* a table too small, a bad shape */
    uint8_t small[16];
    T_ASSERT(lr_p14s_tab_build(12, 0, m.centroid, small, sizeof small) == LR_EINVAL, "tiny table");
    lr_p14s K;
    T_ASSERT(lr_p14s_alloc(&K, 0, 24, 12, 0) == LR_EINVAL && lr_p14s_alloc(&K, 4, 24, 11, 0) == LR_EINVAL &&
                 lr_p14s_alloc(&K, 4, 24, 12, 3) == LR_EINVAL,
             "bad shapes allocated");
    lr_clear_error();
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

/* The int8 form: the word regrouping (row g's nibbles 1, 3, 5, 7 become
 * 0..3, row g + 8's 0, 2, 4, 6 become 4..7) and its inverse on random words;
 * a pool byte that is no int8 value is refused, naming the entry. */
static int test_int8_form(void)
{
    T_ASSERT(lr_p14s_i8_word(0x76543210u) == 0x64207531u, "word 0x76543210 -> 0x%08x", lr_p14s_i8_word(0x76543210u));
    uint64_t z = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 100000; i++) {
        z ^= z << 13, z ^= z >> 7, z ^= z << 17;
        const uint32_t w = (uint32_t)z;
        T_ASSERT(lr_p14s_i8_word_inv(lr_p14s_i8_word(w)) == w, "word 0x%08x does not round-trip", w);
    }
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(16, 24 * 8, 12, 1, 0, 401, &m));
    lr_p14s L;
    T_OK(lr_p14s_unfold(&m, 2, &L));
    uint8_t *d = malloc(L.bytes), *t = malloc((size_t)L.nentries * 16);
    T_ASSERT(d && t, "out of memory");
    T_OK(lr_p14s_i8_form(&L, d, t));
    L.tab[16 * 5 + 2] = 0x38; /* f16 0x3800 = 0.5 */
    T_ASSERT(lr_p14s_i8_form(&L, d, t) == LR_EFORMAT && strstr(lr_errmsg(), "entry 5"), "0.5 accepted: %s",
             lr_errmsg());
    L.tab[16 * 5 + 2] = 0x7c; /* inf */
    T_ASSERT(lr_p14s_i8_form(&L, d, t) == LR_EFORMAT, "inf accepted");
    lr_clear_error();
    free(d), free(t);
    lr_p14s_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

T_MAIN(T_CASE(test_every_class_ball12), T_CASE(test_int8_form), T_CASE(test_gain_widths_and_shapes), T_CASE(test_every_class_both_balls),
       T_CASE(test_rejects_damage), T_CASE(test_unfold_threads_identical), T_CASE(test_fast_equals_reference), T_CASE(test_parts), T_CASE(test_pair), T_CASE(test_bits_per_weight),
       T_CASE(test_errors))
