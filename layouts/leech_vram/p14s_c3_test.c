/* Planes14S's 3-bit form (layouts/leech_vram/p14s_c3.h): every block of an
 * archive, through Planes14S and its 3-bit form, decodes to the codec's
 * unrank and gain (random and adversarial matrices, every class, gain widths
 * 0-2, odd shapes); the kernel view (raw bytes: 12-bit header, 3-bit code,
 * int8 pool byte times the entry's f32 scale) plus the row's exceptions
 * gives the point's weights; the word arithmetic the template uses gives the
 * same codes and headers as the documented bit positions; parts and pair
 * layouts keep their tables; negative tops go through entry mirrors;
 * ball-drawn blocks take <= 3.6 bits per weight; damage is rejected. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/ctab.h"
#include "layouts/leech_vram/layout_testlib.h"
#include "layouts/leech_vram/p14s_c3.h"
#include "layouts/leech_vram/random.h"
#include "test/t.h"
#include "util/err.h"
#include "util/rng.h"

#include <math.h>
#include <stdio.h>

typedef struct { lr_p14s L; lr_p14s_c3 F; } c3_pair;

static float f32_at(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

static const float *exc_of(const lr_p14s_c3 *F, int row, int col)
{
    for (uint32_t k = F->exc_ptr[row]; k < F->exc_ptr[row + 1]; k++)
        if (F->exc_col[k] == (uint32_t)col) return &F->exc_dw[k];
    return NULL;
}

/* Where a block's class has a top code (five values, 0 among them): its
 * entry's mirror when the form has mirrors and the block's tops are all
 * negative (p14s_c3.h); the mirrors counted here from the class list. */
static int mirrored(const lr_p14s_c3 *F, const lr_p14s *L, const lr_leech_class *cl, const int8_t x[24])
{
    if (!cl || cl->nvals != 5 || cl->vals[0] != 0 || F->nentries == L->nentries) return 0;
    int pos = 0, neg = 0;
    for (int k = 0; k < 24; k++) pos |= x[k] == cl->vals[4], neg |= x[k] == -cl->vals[4];
    return neg && !pos;
}

static int expected_entry(const lr_p14s_c3 *F, const lr_p14s *L, int c, int g, int part_base, const int8_t x[24])
{
    const lr_leech_class *all;
    int n;
    if (c < 0 || lr_leech_classes(L->max_shell, &all, &n)) return 0;
    if (!mirrored(F, L, &all[c], x)) return part_base + lr_ctab_entry(c, g, L->gain_bits);
    int i = 0, m = 0;
    for (int k = 0; k < n; k++) {
        const int tc = all[k].nvals == 5 && all[k].vals[0] == 0;
        i += tc && k < c, m += tc;
    }
    return L->nentries + ((part_base / L->nent1 * m + i) << L->gain_bits) + g;
}

/* The weights the kernel applies, plus the row's exceptions, are the point's. */
static int kernel_view(const c3_pair *P, int r, int b, const int8_t x[24], int g, int part_base)
{
    const lr_p14s *L = &P->L;
    const lr_p14s_c3 *F = &P->F;
    int c;
    T_OK(lr_leech_class_of(x, L->max_shell, &c));
    const int e = expected_entry(F, L, c, g, part_base, x);
    T_ASSERT(lr_p14s_c3_kernel_header(F->data, L->rows, L->cols, r, b) == e, "row %d block %d: entry %d, want %d", r, b,
             lr_p14s_c3_kernel_header(F->data, L->rows, L->cols, r, b), e);
    const lr_leech_class *cl = NULL;
    int nc;
    if (c >= 0) {
        T_OK(lr_leech_classes(L->max_shell, &cl, &nc));
        cl += c;
    }
    const int mir = mirrored(F, L, cl, x);
    float w[24];
    lr_p14s_c3_kernel_block(F->data, F->tab, L->rows, L->cols, r, b, w);
    const float s = f32_at(F->tab + 16 * (size_t)e + 12);
    for (int k = 0; k < 24; k++) {
        /* a five-valued class's top: code 4 holds +v4 when the class has
         * a zero, -v4 in a mirror, else stored as v3 with an exception */
        const int a = abs(x[k]), sign = x[k] < 0 ? -1 : 1;
        const int top = cl && cl->nvals == 5 && a == cl->vals[4] && !(cl->vals[0] == 0 && (sign > 0) != mir);
        const int stored = top ? cl->vals[3] : a;
        T_ASSERT(w[k] == (float)(sign * stored) * s, "row %d block %d coord %d (x %d): kernel weight %g", r, b, k, x[k],
                 (double)w[k]);
        const float *dw = exc_of(F, r, 24 * b + k);
        T_ASSERT(!dw == !top, "row %d block %d coord %d (x %d): exception %s", r, b, k, x[k], dw ? "listed" : "missing");
        if (dw) T_ASSERT(*dw == (float)(sign * (a - stored)) * s, "row %d block %d coord %d: dw %g", r, b, k, (double)*dw);
    }
    return T_PASS;
}

static int unfold_hook(const lr_leech_matrix *m, int nthreads, void **out)
{
    c3_pair *P = calloc(1, sizeof *P);
    T_ASSERT(P, "out of memory");
    int rc = lr_p14s_c3_unfold(m, nthreads, &P->L, &P->F);
    if (rc) lr_p14s_free(&P->L), free(P);
    T_OK(rc);
    *out = P;
    return T_PASS;
}

static int get_hook(const void *p, int r, int b, int8_t x[24], int *g)
{
    const c3_pair *P = p;
    return lr_p14s_c3_get(&P->L, &P->F, r, b, x, g);
}

static int block_hook(const void *p, const lr_leech_matrix *m, int r, int b, const int8_t want[24], int g)
{
    (void)m;
    return kernel_view(p, r, b, want, g, 0);
}

/* The fast conversion (what the unfold used) and the reference: the same
 * bytes, table and exception lists. */
static int same_as_ref(const lr_p14s *L, const lr_p14s_c3 *F)
{
    lr_p14s_c3 R;
    T_OK(lr_p14s_c3_form_ref(L, 2, &R));
    T_ASSERT(R.bytes == F->bytes && R.nexc == F->nexc, "fast %zu bytes %u exceptions, reference %zu / %u", F->bytes,
             F->nexc, R.bytes, R.nexc);
    for (size_t i = 0; i < R.bytes; i++)
        T_ASSERT(R.data[i] == F->data[i], "byte %zu (segment %zu offset %zu): fast %#x, reference %#x", i,
                 i / LR_P14S_C3_SEG, i % LR_P14S_C3_SEG, F->data[i], R.data[i]);
    T_ASSERT(!memcmp(R.tab, F->tab, (size_t)R.nentries * 16), "class tables differ");
    T_ASSERT(!memcmp(R.exc_ptr, F->exc_ptr, ((size_t)L->rows + 1) * 4) && !memcmp(R.exc_col, F->exc_col, R.nexc * 4ul) &&
                 !memcmp(R.exc_dw, F->exc_dw, R.nexc * 4ul),
             "exception lists differ");
    lr_p14s_c3_free(&R);
    return T_PASS;
}

static int all_hook(const void *p, const lr_leech_matrix *m)
{
    const c3_pair *P = p;
    if (same_as_ref(&P->L, &P->F)) return T_FAIL;
    T_ASSERT(P->F.bytes == (size_t)((m->rows + 15) / 16) * ((m->cols / 24 + 7) / 8) * LR_P14S_C3_SEG, "bytes %zu",
             P->F.bytes);
    /* pads weigh nothing */
    for (int r = 0; r < P->L.rg * 16; r++)
        for (int b = (r < m->rows ? m->nblk : 0); b < P->L.sc * 8; b++) {
            float w[24];
            lr_p14s_c3_kernel_block(P->F.data, P->F.tab, m->rows, m->cols, r, b, w);
            for (int k = 0; k < 24; k++) T_ASSERT(w[k] == 0.f, "pad (%d, %d) weight %g", r, b, (double)w[k]);
        }
    T_OK(lr_p14s_c3_validate(&P->L, &P->F));
    return T_PASS;
}

static void destroy_hook(void *p)
{
    c3_pair *P = p;
    lr_p14s_c3_free(&P->F);
    lr_p14s_free(&P->L);
    free(P);
}

static const lt_layout C3 = { "Planes14S 3-bit form", unfold_hook, get_hook, block_hook, all_hook, destroy_hook };

static int test_every_class(void)
{
    for (int gb = 0; gb <= 2; gb++) {
        if (lt_exact(&C3, 40, 24 * 20 + 5, 12, gb, LR_RANDOM_CLASSES, 1 + (uint64_t)gb)) return T_FAIL;
        if (lt_exact(&C3, 33, 24 * 21, 12, gb, LR_RANDOM_ADVERSARIAL, 4 + (uint64_t)gb)) return T_FAIL;
    }
    static const int shapes[][2] = { { 1, 24 }, { 17, 24 * 9 + 1 }, { 31, 24 * 17 + 23 }, { 16, 24 * 8 } };
    for (int i = 0; i < 4; i++)
        if (lt_exact(&C3, shapes[i][0], shapes[i][1], 12, i % 3, LR_RANDOM_BALL, 20 + (uint64_t)i)) return T_FAIL;
    return T_PASS;
}

/* The template's word arithmetic (gemv_leech_p14s.cu, LR_C3) on the raw
 * bytes gives the documented codes and headers, for every position of
 * random segments (any bits: the arithmetic must not depend on the writer). */
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static int test_template_arithmetic(void)
{
    uint8_t seg[LR_P14S_C3_SEG];
    lr_rng rng;
    lr_rng_seed(&rng, 99);
    for (int trial = 0; trial < 50; trial++) {
        for (int i = 0; i < LR_P14S_C3_SEG; i++) seg[i] = (uint8_t)lr_rng_u64(&rng);
        for (int lane = 0; lane < 32; lane++) {
            const int g = lane / 4, q = lane % 4;
            uint32_t S[9];
            for (int i = 0; i < 4; i++) S[i] = rd32(seg + 16 * lane + 4 * i), S[4 + i] = rd32(seg + 512 + 16 * lane + 4 * i);
            S[8] = rd32(seg + 1024 + 8 * lane);
            const uint32_t H = rd32(seg + 1024 + 8 * lane + 4), H2 = (uint32_t)seg[1280 + 2 * lane] | (uint32_t)seg[1281 + 2 * lane] << 8;
            uint32_t V[12];
            for (int G = 0; G < 3; G++) {
                const uint32_t A = S[3 * G], B = S[3 * G + 1], C = S[3 * G + 2];
                V[4 * G] = A & 0x77777777u, V[4 * G + 1] = B & 0x77777777u, V[4 * G + 2] = C & 0x77777777u;
                V[4 * G + 3] = ((A >> 3) & 0x11111111u) | ((B >> 2) & 0x22222222u) | ((C >> 1) & 0x44444444u);
            }
            const uint32_t hx = H & 0xfff0fff0u;
            const uint32_t o11 = ((H & 0xfu) << 4) | ((H >> 8) & 0xf00u) | ((H2 & 0xfu) << 12);
            const uint32_t hy = (H2 & 0xfff0u) | o11 << 16;
            for (int h = 0; h < 2; h++)
                for (int u = 0; u < 2; u++) {
                    const int row = g + 8 * h, blk = 2 * q + u;
                    const uint32_t off = ((h ? hy : hx) >> (16 * u)) & 0xffffu;
                    T_ASSERT(off == 16u * (uint32_t)lr_p14s_c3_kernel_header(seg, 16, 192, row, blk),
                             "lane %d row %d block %d: header offset %u", lane, row, blk, off);
                    for (int k = 0; k < 24; k++) {
                        const int t = 6 * u + k / 4, n = 4 * h + k % 4;
                        const int code = (int)(V[t] >> (4 * n)) & 15;
                        T_ASSERT(code == lr_p14s_c3_kernel_code(seg, 16, 192, row, blk, k),
                                 "lane %d row %d block %d coord %d: code %d", lane, row, blk, k, code);
                    }
                }
        }
    }
    return T_PASS;
}

/* Fused q|k|v-like parts (three centroid vectors) and a gate/up pair keep
 * their tables: every block decodes as the f16 form does, the kernel view
 * agrees, and a header into another part's table is refused. */
static int test_parts_and_pair(void)
{
    lr_leech_matrix m[3];
    const int rows[3] = { 37, 21, 16 };
    for (int i = 0; i < 3; i++) {
        T_OK(lr_leech_random_matrix(rows[i], 24 * 11 + 3, 12, 1, LR_RANDOM_BALL, 40 + (uint64_t)i, &m[i]));
        m[i].centroid[0] *= 1.0f + 0.25f * (float)i;
    }
    for (int pass = 0; pass < 2; pass++) {
        c3_pair P;
        memset(&P, 0, sizeof P);
        if (pass == 0) {
            const lr_leech_matrix *pp[3] = { &m[0], &m[1], &m[2] };
            T_OK(lr_p14s_unfold_parts(pp, 3, 2, &P.L));
        } else {
            lr_leech_matrix a, b;
            T_OK(lr_leech_random_matrix(19, 24 * 9, 12, 1, LR_RANDOM_BALL, 50, &a));
            T_OK(lr_leech_random_matrix(19, 24 * 9, 12, 1, LR_RANDOM_BALL, 51, &b));
            b.centroid[0] *= 1.25f;
            const lr_leech_matrix *pp[2] = { &a, &b };
            T_OK(lr_p14s_unfold_pair(pp, 2, &P.L));
            lr_leech_random_free(&a), lr_leech_random_free(&b);
        }
        T_ASSERT(P.L.ntabs > 1, "one table");
        T_OK(lr_p14s_c3_form(&P.L, 2, &P.F));
        T_OK(lr_p14s_c3_validate(&P.L, &P.F));
        if (same_as_ref(&P.L, &P.F)) return T_FAIL;
        for (int r = 0; r < P.L.rows; r++)
            for (int b = 0; b < P.L.nblk; b++) {
                int8_t x[24], y[24];
                int g, h;
                T_OK(lr_p14s_get(&P.L, r, b, x, &g));
                T_OK(lr_p14s_c3_get(&P.L, &P.F, r, b, y, &h));
                T_ASSERT(!memcmp(x, y, 24) && g == h, "pass %d row %d block %d decodes differently", pass, r, b);
                const int base = P.L.part_tab[lr_p14s_part_of(&P.L, r)] * P.L.nent1;
                if (kernel_view(&P, r, b, x, g, base)) return T_FAIL;
            }
        /* a nonzero block's header moved into the next part's table */
        int done = 0;
        for (int r = 0; r < P.L.rows && !done; r++)
            for (int b = 0; b < P.L.nblk && !done; b++) {
                const int e = lr_p14s_c3_kernel_header(P.F.data, P.L.rows, P.L.cols, r, b);
                if (!e) continue;
                const int other = (e + P.L.nent1) % P.L.nentries;
                const size_t so = ((size_t)(r / 16) * P.L.sc + b / 8) * LR_P14S_C3_SEG;
                uint8_t save[LR_P14S_C3_SEG];
                memcpy(save, P.F.data + so, sizeof save);
                /* rewrite the 12 header bits through the documented positions:
                 * flip each bit that differs until the header reads `other` */
                for (int off = 1024; off < LR_P14S_C3_SEG; off++)
                    for (int bit = 0; bit < 8; bit++) {
                        const int before = lr_p14s_c3_kernel_header(P.F.data, P.L.rows, P.L.cols, r, b);
                        P.F.data[so + off] ^= (uint8_t)(1u << bit);
                        const int after = lr_p14s_c3_kernel_header(P.F.data, P.L.rows, P.L.cols, r, b);
                        if (after == before || ((after ^ other) & (after ^ before))) P.F.data[so + off] ^= (uint8_t)(1u << bit);
                    }
                T_ASSERT(lr_p14s_c3_kernel_header(P.F.data, P.L.rows, P.L.cols, r, b) == other, "header not rewritten");
                int8_t x[24];
                int g;
                T_ASSERT(lr_p14s_c3_get(&P.L, &P.F, r, b, x, &g) == LR_EFORMAT, "header into another table accepted");
                T_ASSERT(strstr(lr_errmsg(), "another part"), "error: %s", lr_errmsg());
                lr_clear_error();
                memcpy(P.F.data + so, save, sizeof save);
                done = 1;
            }
        T_ASSERT(done, "no nonzero block");
        lr_p14s_c3_free(&P.F);
        lr_p14s_free(&P.L);
    }
    for (int i = 0; i < 3; i++) lr_leech_random_free(&m[i]);
    return T_PASS;
}

/* Ball-drawn blocks (real weights' class mix): <= 3.6 bits per weight, also
 * at 14B's 5120 columns, whose 213 blocks pad to 216 (+1.4% segment bytes);
 * with the mirrors almost no exceptions are left (1.8 per 100 blocks
 * without them). */
static int bits_of(int cols, double *b3)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(256, cols, 12, 1, LR_RANDOM_BALL, 77, &m));
    c3_pair P;
    T_OK(lr_p14s_c3_unfold(&m, 0, &P.L, &P.F));
    const double b16 = lr_p14s_bits_per_weight(&P.L), blk = (double)P.L.rows * P.L.nblk;
    *b3 = lr_p14s_c3_bits_per_weight(&P.L, &P.F);
    printf("    256 x %d, ball-drawn: f16 form %.3f b/w, 3-bit form %.3f b/w (%.2f exceptions per 100 blocks)\n", cols,
           b16, *b3, 100.0 * P.F.nexc / blk);
    lr_p14s_c3_free(&P.F);
    lr_p14s_free(&P.L);
    lr_leech_random_free(&m);
    return T_PASS;
}

static int test_bits_per_weight(void)
{
    double full, padded;
    if (bits_of(4608, &full) || bits_of(5120, &padded)) return T_FAIL;
    T_ASSERT(full <= 3.52 && full > 3.5, "3-bit form %.3f b/w over whole super-chunks", full);
    T_ASSERT(padded <= 3.6, "3-bit form %.3f b/w at 5120 columns", padded);
    return T_PASS;
}

/* Mirrors: a block of a class with a top code whose tops are all negative
 * takes its entry's mirror (pool byte 4 = -v4) and needs no exception; one
 * with tops of both signs (class 314 of shell 13 has two tops) keeps its
 * entry and its negative top is an exception, as is every top of a
 * five-valued class without 0. Blocks of every five-valued class at shells
 * 12 and 13, random points: each decodes to its point, the kernel view
 * agrees, the two conversions agree byte for byte. */
static int test_mirrors(void)
{
    for (int ms = 12; ms <= 13; ms++) {
        const lr_leech_class *cl;
        int ncl, five[64], nfive = 0;
        T_OK(lr_leech_classes(ms, &cl, &ncl));
        for (int c = 0; c < ncl; c++)
            if (cl[c].nvals == 5 && nfive < 64) five[nfive++] = c;
        enum { R = 32, NB = 24 };
        c3_pair P;
        T_OK(lr_p14s_alloc(&P.L, R, 24 * NB, ms, 1));
        const float cent[2] = { 0.75f, 1.25f };
        T_OK(lr_p14s_tab_build(ms, 1, cent, P.L.tab, (size_t)P.L.nentries * 16));
        static int8_t pts[R][NB][24];
        static int gains[R][NB];
        static uint32_t er[R * NB * 24];
        static lr_p14s_exc ee[R * NB * 24];
        size_t n = 0;
        int mixed = 0, neg = 0, want_exc = 0;
        lr_rng rng;
        lr_rng_seed(&rng, 300 + (uint64_t)ms);
        for (int r = 0; r < R; r++)
            for (int b = 0; b < NB; b++) {
                const lr_leech_class *c = &cl[five[(r * NB + b) % nfive]];
                T_OK(lr_leech_unrank(c->offset + lr_rng_below(&rng, c->count), ms, pts[r][b]));
                gains[r][b] = (int)(lr_rng_u64(&rng) & 1);
                int pos_top = 0, neg_top = 0;
                for (int k = 0; k < 24; k++) pos_top += pts[r][b][k] == c->vals[4], neg_top += pts[r][b][k] == -c->vals[4];
                if (c->vals[0] != 0) want_exc += pos_top + neg_top;
                else if (pos_top && neg_top) mixed++, want_exc += neg_top;
                else neg += neg_top > 0;
                lr_p14s_exc ex[24];
                int m;
                T_OK(lr_p14s_put(&P.L, r, b, pts[r][b], gains[r][b], ex, &m));
                for (int i = 0; i < m; i++) er[n] = (uint32_t)r, ee[n++] = ex[i];
            }
        T_OK(lr_p14s_set_exceptions(&P.L, er, ee, n));
        T_OK(lr_p14s_c3_form(&P.L, 2, &P.F));
        T_OK(lr_p14s_c3_validate(&P.L, &P.F));
        if (same_as_ref(&P.L, &P.F)) return T_FAIL;
        int mirrors = 0;
        for (int r = 0; r < R; r++)
            for (int b = 0; b < NB; b++) {
                int8_t y[24];
                int g;
                T_OK(lr_p14s_c3_get(&P.L, &P.F, r, b, y, &g));
                T_ASSERT(!memcmp(y, pts[r][b], 24) && g == gains[r][b], "shell %d block (%d, %d) decodes differently", ms,
                         r, b);
                if (kernel_view(&P, r, b, y, g, 0)) return T_FAIL;
                mirrors += lr_p14s_c3_kernel_header(P.F.data, R, 24 * NB, r, b) >= P.L.nentries;
            }
        printf("    shell %d: %d blocks, %d mirrored, %d with tops of both signs, %u exceptions (f16 form %u)\n", ms,
               R * NB, mirrors, mixed, P.F.nexc, P.L.nexc);
        T_ASSERT(mirrors == neg && mirrors > 0, "shell %d: %d blocks mirrored, %d have only negative tops", ms, mirrors, neg);
        T_ASSERT((int)P.F.nexc == want_exc, "shell %d: %u exceptions, want %d", ms, P.F.nexc, want_exc);
        T_ASSERT(ms == 12 || mixed > 0, "no block with tops of both signs");
        lr_p14s_c3_free(&P.F);
        lr_p14s_free(&P.L);
    }
    /* where the mirrors would not fit 12-bit headers there are none */
    int n;
    T_OK(lr_p14s_c3_entries(12, 0, 13 * 302, 13, &n));
    T_ASSERT(n == 13 * 302, "%d entries for 13 tables without room for mirrors", n);
    T_OK(lr_p14s_c3_entries(12, 1, 603, 1, &n));
    T_ASSERT(n == 603 + 30, "%d entries for one table, gain bits 1", n);
    return T_PASS;
}

static int expect_reject(const c3_pair *P, const char *what, const char *needle)
{
    int rc = lr_p14s_c3_validate(&P->L, &P->F);
    T_ASSERT(rc == LR_EFORMAT, "%s accepted (status %d)", what, rc);
    T_ASSERT(!needle || strstr(lr_errmsg(), needle), "%s: error \"%s\"", what, lr_errmsg());
    lr_clear_error();
    return T_PASS;
}

/* Single-bit flips of a segment, the class table and the exceptions. */
static int test_rejects_damage(void)
{
    lr_leech_matrix m;
    /* 24 blocks a row: the first 301 cycle through the classes, so class
       294 (five values without 0: its tops are exceptions) is in segment 0 */
    T_OK(lr_leech_random_matrix(16, 24 * 24, 12, 1, LR_RANDOM_CLASSES, 7, &m));
    c3_pair P;
    T_OK(lr_p14s_c3_unfold(&m, 1, &P.L, &P.F));
    T_ASSERT(P.F.nexc > 0, "no exceptions");
    int rejected = 0, trials = 0;
    for (size_t off = 0; off < LR_P14S_C3_SEG; off++)
        for (int bit = 0; bit < 8; bit++) {
            P.F.data[off] ^= (uint8_t)(1u << bit);
            int rc = lr_p14s_c3_validate(&P.L, &P.F);
            trials++;
            if (rc == LR_EFORMAT) rejected++;
            else {
                /* accepted: still points whose kernel view is exact */
                T_ASSERT(rc == LR_OK, "flip %zu.%d: status %d", off, bit, rc);
                for (int r = 0; r < P.L.rows; r++)
                    for (int b = 0; b < P.L.nblk; b++) {
                        int8_t x[24];
                        int g;
                        T_OK(lr_p14s_c3_get(&P.L, &P.F, r, b, x, &g));
                        T_ASSERT(lr_leech_is_point(x), "not a point");
                        if (kernel_view(&P, r, b, x, g, 0)) return T_FAIL;
                    }
            }
            lr_clear_error();
            P.F.data[off] ^= (uint8_t)(1u << bit);
        }
    T_OK(lr_p14s_c3_validate(&P.L, &P.F));
    printf("    %d of %d single-bit flips rejected (%.1f%%); the rest decode to points\n", rejected, trials,
           100.0 * rejected / trials);
    T_ASSERT(rejected >= 0.9 * trials, "only %d of %d flips rejected", rejected, trials);
    /* the table: every byte of a used entry */
    const int e = lr_p14s_c3_kernel_header(P.F.data, P.L.rows, P.L.cols, 0, 0);
    T_ASSERT(e > 0, "block (0, 0) is the origin");
    for (int i = 0; i < 16; i++) {
        P.F.tab[16 * e + i] ^= 0x10;
        if (expect_reject(&P, "table byte", "malformed")) return T_FAIL;
        P.F.tab[16 * e + i] ^= 0x10;
    }
    /* exceptions: changed value, one ulp off, moved column, dropped */
    const float dw = P.F.exc_dw[0];
    P.F.exc_dw[0] = dw * 2;
    if (expect_reject(&P, "changed exception", "fits no value")) return T_FAIL;
    P.F.exc_dw[0] = nextafterf(dw, 0);
    if (expect_reject(&P, "exception one ulp off", "fits no value")) return T_FAIL;
    P.F.exc_dw[0] = dw;
    const uint32_t col = P.F.exc_col[0];
    P.F.exc_col[0] = col ^ 1u;
    if (P.F.nexc < 2 || P.F.exc_ptr[1] < 2 || P.F.exc_col[0] < P.F.exc_col[1])
        if (expect_reject(&P, "moved exception", NULL)) return T_FAIL;
    P.F.exc_col[0] = col;
    T_OK(lr_p14s_c3_validate(&P.L, &P.F));
    uint32_t r0 = 0;
    while (P.F.exc_ptr[r0 + 1] == 0) r0++;
    for (uint32_t r = r0 + 1; r <= (uint32_t)P.L.rows; r++) P.F.exc_ptr[r]--; /* drops exception 0 from its row */
    memmove(P.F.exc_col, P.F.exc_col + 1, (P.F.nexc - 1) * sizeof *P.F.exc_col);
    memmove(P.F.exc_dw, P.F.exc_dw + 1, (P.F.nexc - 1) * sizeof *P.F.exc_dw);
    P.F.nexc--;
    if (expect_reject(&P, "dropped exception", NULL)) return T_FAIL;
    lr_p14s_c3_free(&P.F);
    lr_p14s_free(&P.L);
    lr_leech_random_free(&m);
    /* a malformed f16 form is refused by the conversion, naming the block */
    T_OK(lr_leech_random_matrix(16, 24 * 8, 12, 1, LR_RANDOM_CLASSES, 8, &m));
    T_OK(lr_p14s_unfold(&m, 1, &P.L));
    const uint8_t orig = P.L.data[256 + 3];
    P.L.data[256 + 3] = 0xff; /* codes 15: invalid in the f16 form */
    for (int fast = 0; fast < 2; fast++) {
        T_ASSERT((fast ? lr_p14s_c3_form : lr_p14s_c3_form_ref)(&P.L, 1, &P.F) == LR_EFORMAT, "malformed layout converted");
        T_ASSERT(strstr(lr_errmsg(), "p14s_c3 form: row"), "error: %s", lr_errmsg());
        lr_clear_error();
        T_ASSERT(!P.F.data, "partial form left");
    }
    /* an exception the fast conversion finds on no coordinate (on a zero) */
    P.L.data[256 + 3] = orig;
    T_OK(lr_p14s_validate(&P.L));
    int zr = -1, zc = -1;
    for (int r = 0; r < P.L.rows && zr < 0; r++)
        for (int c = 0; c < 24 * P.L.nblk && zr < 0; c++)
            if (lr_p14s_kernel_code(P.L.data, P.L.rows, P.L.cols, r, c) == LR_P14S_ZERO && P.L.exc_ptr[r] == P.L.exc_ptr[r + 1])
                zr = r, zc = c;
    T_ASSERT(zr >= 0, "no zero coordinate in a row without exceptions");
    const uint32_t er = (uint32_t)zr;
    const lr_p14s_exc ee = { (uint32_t)zc, 1.0f };
    T_OK(lr_p14s_set_exceptions(&P.L, &er, &ee, 1));
    for (int fast = 0; fast < 2; fast++) {
        T_ASSERT((fast ? lr_p14s_c3_form : lr_p14s_c3_form_ref)(&P.L, 1, &P.F) == LR_EFORMAT, "exception on a zero converted");
        lr_clear_error();
    }
    lr_p14s_free(&P.L);
    lr_leech_random_free(&m);
    /* an exception on the dense tail (past the blocks) is no block's: both
       conversions refuse it, naming row and column (the reference once
       dropped it; p14s_fuzz found the two disagreeing) */
    T_OK(lr_leech_random_matrix(16, 24 * 8 + 5, 12, 1, LR_RANDOM_CLASSES, 9, &m));
    T_OK(lr_p14s_unfold(&m, 1, &P.L));
    T_ASSERT(P.L.tail == 5, "tail %d", P.L.tail);
    /* the layout's own exceptions, and row 3's list gains one on column 194 */
    const size_t n0 = P.L.nexc;
    uint32_t *tr = malloc((n0 + 1) * sizeof *tr);
    lr_p14s_exc *te = malloc((n0 + 1) * sizeof *te);
    T_ASSERT(tr && te, "out of memory");
    size_t nt = 0;
    for (uint32_t r = 0; r < (uint32_t)P.L.rows; r++) {
        for (uint32_t j = P.L.exc_ptr[r]; j < P.L.exc_ptr[r + 1]; j++)
            tr[nt] = r, te[nt].col = P.L.exc_col[j], te[nt++].dw = P.L.exc_dw[j];
        if (r == 3) tr[nt] = r, te[nt].col = 24 * 8 + 2, te[nt++].dw = 0.5f;
    }
    T_OK(lr_p14s_set_exceptions(&P.L, tr, te, nt));
    free(tr), free(te);
    for (int fast = 0; fast < 2; fast++) {
        T_ASSERT((fast ? lr_p14s_c3_form : lr_p14s_c3_form_ref)(&P.L, 1, &P.F) == LR_EFORMAT, "exception on the tail converted");
        T_ASSERT(strstr(lr_errmsg(), "row 3") && strstr(lr_errmsg(), "column 194"), "error: %s", lr_errmsg());
        T_ASSERT(!P.F.data, "partial form left");
        lr_clear_error();
    }
    lr_p14s_free(&P.L);
    lr_leech_random_free(&m);
    return T_PASS;
}

T_MAIN(T_CASE(test_every_class), T_CASE(test_template_arithmetic), T_CASE(test_parts_and_pair), T_CASE(test_bits_per_weight),
       T_CASE(test_mirrors),
       T_CASE(test_rejects_damage))
