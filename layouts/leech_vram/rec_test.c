/* The published record layouts (Planes14, Planes12x, Slot32): the field
 * positions against an independent 128-bit packer, every block unfolded
 * from an archive decodes to lr_leech_unrank and the archive's gain (every
 * class of the ball, adversarial points, gain widths), the kernel view of
 * the raw bytes equals the point's table values, damage is rejected. */
#include "layouts/leech/leech.h"
#include "layouts/leech_vram/random.h"
#include "layouts/leech_vram/rec.h"
#include "test/t.h"
#include "util/err.h"

#include <math.h>

static const char *NAME[3] = { "planes14", "planes12x", "slot32" };

static int unfold(int kind, const lr_leech_matrix *m, int nthreads, lr_rec *L)
{
    return kind == LR_REC_P14 ? lr_rec14_unfold(m, nthreads, L)
         : kind == LR_REC_P12X ? lr_p12x_unfold(m, nthreads, L)
                               : lr_slot32_unfold(m, nthreads, L);
}

static int test_levels_canonical(void)
{
    const lr_leech_class *cl;
    int nc;
    T_OK(lr_leech_classes(13, &cl, &nc));
    for (int c = 0; c < nc; c++) {
        uint8_t v[5];
        int n;
        T_OK(lr_rec_levels(13, c, v, &n));
        T_ASSERT(n == cl[c].nvals, "class %d: %d levels", c, n);
        int cnt[5];
        for (int l = 0; l < n; l++) {
            int j = 0;
            while (j < n && cl[c].vals[j] != v[l]) j++;
            T_ASSERT(j < n, "class %d: value %d not in the class", c, v[l]);
            cnt[l] = cl[c].mult[j];
        }
        for (int l = 1; l < n; l++)
            T_ASSERT(cnt[l] < cnt[l - 1] || (cnt[l] == cnt[l - 1] && v[l] < v[l - 1]), "class %d: level %d out of order", c, l);
    }
    return T_PASS;
}

/* The published field positions, packed independently into 128 bits. */
static unsigned __int128 golden(const int8_t x[24], int gain, int kind)
{
    int cls, n;
    uint8_t v[5];
    lr_leech_class_of(x, 13, &cls);
    lr_rec_levels(13, cls, v, &n);
    unsigned __int128 r = (unsigned __int128)(cls + 1) | (unsigned __int128)gain << 9;
    if (cls < 0) return r;
    uint32_t f[5] = { 0, 0, 0, 0, 0 }; /* signs, then planes or masks */
    for (int i = 0; i < 24; i++) {
        int a = x[i] < 0 ? -x[i] : x[i], l = 0;
        while (v[l] != a) l++;
        f[0] |= (uint32_t)(x[i] < 0) << i;
        if (kind == LR_REC_SLOT32) {
            if (l) f[l] |= 1u << i;
        } else {
            if (kind == LR_REC_P12X && l == 4) { /* the stand-in: nearest of levels 0..3 */
                int best = 0;
                for (int k = 1; k < 4; k++)
                    if (abs(v[k] - v[4]) < abs(v[best] - v[4])) best = k;
                l = best;
                if (!v[l]) f[0] &= ~(1u << i);
            }
            for (int k = 0; k < 3; k++) f[1 + k] |= (uint32_t)((l >> k) & 1) << i;
        }
    }
    int nf = kind == LR_REC_SLOT32 ? n : kind == LR_REC_P12X ? 3 : 4;
    for (int k = 0; k < nf; k++) r |= (unsigned __int128)f[k] << (10 + 24 * k);
    return r;
}

static int test_golden_bits(void)
{
    const lr_leech_class *cl;
    int nc;
    T_OK(lr_leech_classes(13, &cl, &nc));
    for (int c = -1; c < nc; c++) {
        for (int end = 0; end < 2; end++) {
            int8_t x[24];
            uint64_t idx = c < 0 ? 0 : cl[c].offset + (end ? cl[c].count - 1 : 0);
            T_OK(lr_leech_unrank(idx, 13, x));
            for (int kind = 0; kind < 3; kind++) {
                uint8_t rec[20], want[20];
                int exc;
                memset(rec, 0, sizeof rec);
                unsigned __int128 g = golden(x, end, kind);
                for (int i = 0; i < 16; i++) want[i] = (uint8_t)(g >> (8 * i));
                if (kind == LR_REC_P14) T_OK(lr_rec14_encode(x, 13, end, rec));
                if (kind == LR_REC_P12X) T_OK(lr_p12x_encode(x, 13, end, rec, &exc));
                if (kind == LR_REC_SLOT32) T_OK(lr_slot32_encode(x, 13, end, rec));
                int nb = kind == LR_REC_P14 ? 14 : kind == LR_REC_P12X ? 12 : 16;
                T_ASSERT(!memcmp(rec, want, (size_t)nb), "%s: class %d point %d: bytes differ from the published fields",
                         NAME[kind], c, end);
            }
        }
    }
    return T_PASS;
}

/* Every block of an unfolded random matrix against the codec. */
static int exact(int kind, int rows, int cols, int gain_bits, int adversarial, uint64_t seed)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(rows, cols, 12, gain_bits, adversarial, seed, &m));
    uint64_t *idx;
    uint8_t *gain;
    T_OK(lr_leech_random_indices(&m, &idx, &gain));
    lr_rec L;
    T_OK(unfold(kind, &m, 2, &L));
    int nc;
    const lr_leech_class *cls;
    T_OK(lr_leech_classes(12, &cls, &nc));
    char *seen = calloc((size_t)nc, 1);
    uint32_t nexc = 0;
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < m.nblk; b++) {
            size_t k = (size_t)r * m.nblk + b;
            int8_t want[24], got[24];
            int g, c, kg;
            T_OK(lr_leech_unrank(idx[k], 12, want));
            T_OK(lr_rec_get(&L, r, b, got, &g));
            T_ASSERT(!memcmp(want, got, 24), "%s: row %d block %d (index %llu) decodes differently", NAME[kind], r, b,
                     (unsigned long long)idx[k]);
            T_ASSERT(g == gain[k], "%s: row %d block %d: gain %d, want %d", NAME[kind], r, b, g, gain[k]);
            T_OK(lr_leech_index_class(idx[k], 12, &c));
            if (c >= 0) seen[c] = 1;
            /* the kernel view of the raw bytes: sign * f32(|x| / sqrt(16 m)) */
            float kv[24];
            lr_rec_view_block(kind, L.data, L.bases, L.tab, k, kv, &kg);
            T_ASSERT(kg == gain[k], "%s: kernel view gain", NAME[kind]);
            uint8_t v[5];
            int n;
            T_OK(lr_rec_levels(12, c, v, &n));
            int five = kind == LR_REC_P12X && n == 5;
            if (five) { /* the row pass sees the approximation; the exception the exact block */
                T_ASSERT(L.exc_idx[nexc] == k, "%s: exception %u is block %u, want %zu", NAME[kind], nexc, L.exc_idx[nexc], k);
                float ev[24];
                lr_rec_view_rec14(L.exc_rec + (size_t)14 * nexc, L.tab, ev, &kg);
                int differ = 0;
                for (int i = 0; i < 24; i++) differ += kv[i] != ev[i];
                T_ASSERT(differ > 0 && differ <= 2, "%s: approximation differs in %d coordinates", NAME[kind], differ);
                memcpy(kv, ev, sizeof kv);
                nexc++;
            }
            int n2 = lr_leech_norm(want);
            for (int i = 0; i < 24; i++) {
                float a = n2 ? (float)((want[i] < 0 ? -want[i] : want[i]) / sqrt((double)n2)) : 0.0f;
                /* both signs checked: a negative view of a positive coordinate fails too */
                T_ASSERT(kv[i] == (want[i] < 0 ? -a : a), "%s: row %d block %d coord %d: view %g, want %g",
                         NAME[kind], r, b, i, kv[i], want[i] < 0 ? -a : a);
            }
        }
    T_ASSERT(kind != LR_REC_P12X || nexc == L.nexc, "%u exceptions listed, %u found", L.nexc, nexc);
    int missing = 0;
    for (int c = 0; c < nc; c++) missing += !seen[c];
    T_ASSERT(rows * m.nblk < (adversarial ? 2 * nc + 2 : nc) || missing == 0, "%d classes never exercised", missing);
    T_OK(lr_rec_validate(&L));
    free(seen), free(idx), free(gain);
    lr_rec_free(&L);
    lr_leech_random_free(&m);
    return T_PASS;
}

static int test_every_class_ball12(void)
{
    for (int kind = 0; kind < 3; kind++) {
        int rc = exact(kind, 40, 24 * 20 + 5, 1, 0, 1); /* 800 blocks >= 301 classes, tail 5 */
        if (!rc) rc = exact(kind, 33, 24 * 21, 1, 1, 2); /* each class's first and last point, origin, last point */
        if (rc) return rc;
    }
    return T_PASS;
}

/* L24(13) has no 47-bit archive: every class's first and last point through
 * the record functions directly. */
static int test_every_class_ball13(void)
{
    const lr_leech_class *cl;
    int nc;
    T_OK(lr_leech_classes(13, &cl, &nc));
    for (int k = 0; k < 2 * nc; k++) {
        int8_t want[24], got[24];
        uint8_t rec[32];
        int g, exc, id;
        T_OK(lr_leech_unrank(cl[k / 2].offset + (k & 1 ? cl[k / 2].count - 1 : 0), 13, want));
        T_OK(lr_rec14_encode(want, 13, k & 1, rec));
        T_OK(lr_rec14_decode(rec, 13, 1, got, &g));
        T_ASSERT(!memcmp(want, got, 24) && g == (k & 1), "planes14: class %d point %d", k / 2, k & 1);
        memset(rec, 0, sizeof rec);
        T_OK(lr_slot32_encode(want, 13, k & 1, rec));
        T_OK(lr_slot32_decode(rec, 17, 13, 1, got, &g));
        T_ASSERT(!memcmp(want, got, 24) && g == (k & 1), "slot32: class %d point %d", k / 2, k & 1);
        T_OK(lr_p12x_encode(want, 13, k & 1, rec, &exc));
        T_OK(lr_p12x_decode_main(rec, 13, 1, got, &g, &id));
        T_ASSERT(exc == (cl[k / 2].nvals == 5) && id == k / 2 + 1, "planes12x: class %d exception flag", k / 2);
        T_ASSERT(exc || !memcmp(want, got, 24), "planes12x: class %d point %d", k / 2, k & 1);
    }
    return T_PASS;
}

static int test_gain_widths_and_shapes(void)
{
    int shapes[][2] = { { 1, 24 }, { 1, 25 }, { 3, 24 * 7 }, { 17, 24 * 9 + 23 }, { 5, 7 } };
    for (int kind = 0; kind < 3; kind++) {
        for (int gb = 0; gb <= 1; gb++) {
            int rc = exact(kind, 17, 24 * 9 + 1, gb, 0, 10 + gb);
            if (rc) return rc;
        }
        for (int i = 0; i < 5; i++) {
            int rc = exact(kind, shapes[i][0], shapes[i][1], 1, 0, 20 + i);
            if (rc) return rc;
        }
        lr_leech_matrix m;
        lr_rec L;
        T_OK(lr_leech_random_matrix(2, 48, 12, 2, 0, 3, &m));
        T_ASSERT(unfold(kind, &m, 1, &L) == LR_EINVAL, "%s: two gain bits accepted", NAME[kind]);
        lr_clear_error();
        lr_leech_random_free(&m);
    }
    return T_PASS;
}

static int flips(lr_rec *L, uint8_t *p, size_t n, int *rejected, int *trials)
{
    for (size_t off = 0; off < n; off++)
        for (int bit = 0; bit < 8; bit++) {
            p[off] ^= (uint8_t)(1u << bit);
            int rc = lr_rec_validate(L);
            p[off] ^= (uint8_t)(1u << bit);
            (*trials)++;
            *rejected += rc == LR_EFORMAT;
            if (rc && rc != LR_EFORMAT) return T_FAIL;
        }
    lr_clear_error();
    return T_PASS;
}

static int test_rejects_damage(void)
{
    for (int kind = 0; kind < 3; kind++) {
        lr_leech_matrix m;
        T_OK(lr_leech_random_matrix(4, 24 * 40, 12, 1, 0, 7 + kind, &m));
        lr_rec L;
        T_OK(unfold(kind, &m, 1, &L));
        T_OK(lr_rec_validate(&L));
        int rejected = 0, trials = 0;
        size_t n = L.bytes < 64 ? L.bytes : 64;
        T_ASSERT(!flips(&L, L.data, n, &rejected, &trials), "%s: a flip gave another error than LR_EFORMAT", NAME[kind]);
        if (kind == LR_REC_P12X) {
            T_ASSERT(L.nexc > 0, "no exceptions in 160 random blocks");
            T_ASSERT(!flips(&L, L.exc_rec, 14, &rejected, &trials), "exception flip");
            L.exc_idx[0] ^= 1; /* a moved exception */
            T_ASSERT(lr_rec_validate(&L) == LR_EFORMAT, "moved exception accepted");
            L.exc_idx[0] ^= 1;
            if (L.exc_ptr[L.rows - 1] < L.nexc) { /* the last one dropped */
                L.exc_ptr[L.rows]--, L.nexc--;
                T_ASSERT(lr_rec_validate(&L) == LR_EFORMAT, "dropped exception accepted");
                L.exc_ptr[L.rows]++, L.nexc++;
            }
        }
        if (kind == LR_REC_SLOT32) {
            L.bases[1] += 32;
            T_ASSERT(lr_rec_validate(&L) == LR_EFORMAT, "moved base accepted");
            L.bases[1] -= 32;
        }
        lr_clear_error();
        T_OK(lr_rec_validate(&L));
        printf("    %s: %d of %d single-bit flips rejected\n", NAME[kind], rejected, trials);
        T_ASSERT(rejected > trials * 3 / 4, "%s: only %d of %d flips rejected", NAME[kind], rejected, trials);
        lr_rec_free(&L);
        lr_leech_random_free(&m);
    }
    return T_PASS;
}

static int test_bits_per_weight(void)
{
    lr_leech_matrix m;
    T_OK(lr_leech_random_matrix(128, 24 * 64, 12, 1, 0, 9, &m));
    for (int kind = 0; kind < 3; kind++) {
        lr_rec L;
        double nominal;
        T_OK(unfold(kind, &m, 0, &L));
        double bpw = lr_rec_bits_per_weight(&L, &nominal);
        printf("    %s: %.3f b/w (%.3f without row pointers)\n", NAME[kind], bpw, nominal);
        if (kind == LR_REC_P12X)
            printf("    planes12x: %.2f%% of blocks are exceptions (class-uniform random blocks)\n",
                   100.0 * L.nexc / (double)L.nblocks);
        if (kind == LR_REC_P14) T_ASSERT(fabs(bpw - 112.0 / 24) < 1e-12, "planes14 %g", bpw);
        if (kind == LR_REC_P12X) T_ASSERT(fabs(nominal - (96.0 + 144.0 * L.nexc / L.nblocks) / 24) < 1e-12, "p12x %g", nominal);
        if (kind == LR_REC_SLOT32) T_ASSERT(bpw > 34.0 / 24 && bpw <= (17 * 8 + 1.0) / 24 + 0.05, "slot32 %g", bpw);
        lr_rec_free(&L);
    }
    lr_leech_random_free(&m);
    return T_PASS;
}

T_MAIN(T_CASE(test_levels_canonical), T_CASE(test_golden_bits), T_CASE(test_every_class_ball12),
       T_CASE(test_every_class_ball13), T_CASE(test_gain_widths_and_shapes), T_CASE(test_rejects_damage),
       T_CASE(test_bits_per_weight))
