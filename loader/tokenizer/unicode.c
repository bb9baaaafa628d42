/* UTF-8 helpers, class lookup and NFC (decompose, canonical order, compose:
 * the algorithm of UAX #15 over the generated tables). */
#include "loader/tokenizer/unicode.h"

#include <stdlib.h>
#include <string.h>

/* ASCII fast path of the class table; lr_uc_lookup checks it against the
 * generated runs in the tests. */
#define O LR_UC_OTHER
#define L LR_UC_L
#define N LR_UC_N
#define W LR_UC_WS
const uint8_t lr_uc_ascii[128] = {
    O, O, O, O, O, O, O, O, O, W, W, W, W, W, O, O, /* \t \n \v \f \r */
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    W, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, /* space */
    N, N, N, N, N, N, N, N, N, N, O, O, O, O, O, O, /* 0-9 */
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, /* A-Z */
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O,
    O, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, /* a-z */
    L, L, L, L, L, L, L, L, L, L, L, O, O, O, O, O,
};
#undef O
#undef L
#undef N
#undef W

int lr_utf8_encode(uint32_t cp, uint8_t out[4])
{
    if (cp >= 0x110000) { out[0] = (uint8_t)(cp - 0x110000); return 1; }
    if (cp < 0x80) { out[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Index of the run containing cp in a sorted run-start table (start[0] == 0). */
static unsigned run_index(const uint32_t *start, unsigned n, uint32_t cp)
{
    unsigned lo = 0, hi = n; /* start[lo] <= cp < start[hi] */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (start[mid] <= cp) lo = mid; else hi = mid;
    }
    return lo;
}

uint8_t lr_uc_lookup(uint32_t cp)
{
    if (cp >= 0x110000) return LR_UC_OTHER;
    return lr_uc_run_val[run_index(lr_uc_run_start, lr_uc_nruns, cp)];
}

int lr_uc_ccc(uint32_t cp)
{
    if (cp < 0x300 || cp >= 0x110000) return 0;
    return lr_uc_ccc_val[run_index(lr_uc_ccc_start, lr_uc_nccc, cp)];
}

int lr_nfc_needed(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* Nothing below U+0300 changes under NFC. */
        if (s[i] < 0xCC) { i++; continue; }
        uint32_t cp;
        i += (size_t)lr_utf8_decode(s + i, n - i, &cp);
        if (cp >= 0x300 && (lr_uc_lookup(cp) & LR_UC_NFC_FLAG)) return 1;
    }
    return 0;
}

enum {
    SBASE = 0xAC00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11A7,
    LCOUNT = 19, VCOUNT = 21, TCOUNT = 28, NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT,
};

/* Appends the full canonical decomposition of cp to d; returns the count (1..4). */
static int decompose(uint32_t cp, uint32_t *d)
{
    if (cp >= SBASE && cp < SBASE + SCOUNT) {
        uint32_t s = cp - SBASE;
        d[0] = LBASE + s / NCOUNT;
        d[1] = VBASE + s % NCOUNT / TCOUNT;
        if (s % TCOUNT == 0) return 2;
        d[2] = TBASE + s % TCOUNT;
        return 3;
    }
    unsigned lo = 0, hi = lr_uc_ndecomp;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (lr_uc_decomp_cp[mid] < cp) lo = mid + 1; else hi = mid;
    }
    if (lo < lr_uc_ndecomp && lr_uc_decomp_cp[lo] == cp) {
        int len = lr_uc_decomp_len[lo];
        memcpy(d, lr_uc_decomp_pool + lr_uc_decomp_off[lo], (size_t)len * sizeof *d);
        return len;
    }
    d[0] = cp;
    return 1;
}

/* The primary composite of (a, b), or 0. */
static uint32_t compose(uint32_t a, uint32_t b)
{
    if (a >= LBASE && a < LBASE + LCOUNT && b >= VBASE && b < VBASE + VCOUNT)
        return SBASE + ((a - LBASE) * VCOUNT + (b - VBASE)) * TCOUNT;
    if (a >= SBASE && a < SBASE + SCOUNT && (a - SBASE) % TCOUNT == 0 &&
        b > TBASE && b < TBASE + TCOUNT)
        return a + (b - TBASE);
    if (a >= 0x110000 || b >= 0x110000) return 0;
    uint64_t key = (uint64_t)a << 21 | b;
    unsigned lo = 0, hi = lr_uc_ncomp;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (lr_uc_comp_key[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < lr_uc_ncomp && lr_uc_comp_key[lo] == key ? lr_uc_comp_val[lo] : 0;
}

/* Stable sort of a run of non-starters by combining class. Short runs (the
 * normal case) use insertion sort; long ones a counting sort, so adversarial
 * input stays linear. */
static int order_run(uint32_t *c, uint8_t *k, size_t n)
{
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            uint32_t cv = c[i];
            uint8_t kv = k[i];
            size_t j = i;
            while (j > 0 && k[j - 1] > kv) { c[j] = c[j - 1]; k[j] = k[j - 1]; j--; }
            c[j] = cv;
            k[j] = kv;
        }
        return 0;
    }
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[k[i] + 1]++;
    for (int v = 0; v < 256; v++) count[v + 1] += count[v];
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return -1;
    for (size_t i = 0; i < n; i++) tmp[count[k[i]]++] = c[i];
    memcpy(c, tmp, n * sizeof *c);
    free(tmp);
    for (size_t i = 0; i < n; i++) k[i] = (uint8_t)lr_uc_ccc(c[i]);
    return 0;
}

int lr_nfc(const uint8_t *s, size_t n, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    /* A decomposition is at most 4 code points per input character, and an
     * input character takes at least one byte. */
    if (n > SIZE_MAX / 16) return -1;
    uint32_t *cps = malloc((n * 4 + 1) * sizeof *cps);
    uint8_t *ccc = malloc(n * 4 + 1);
    if (!cps || !ccc) { free(cps); free(ccc); return -1; }

    /* 1. Full canonical decomposition. */
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += (size_t)lr_utf8_decode(s + i, n - i, &cp);
        int k = cp < 0xC0 || cp >= 0x110000 ? (cps[m] = cp, 1) : decompose(cp, cps + m);
        for (int j = 0; j < k; j++) ccc[m + (size_t)j] = (uint8_t)lr_uc_ccc(cps[m + (size_t)j]);
        m += (size_t)k;
    }
    /* 2. Canonical ordering of each run of non-starters. */
    for (size_t i = 0; i < m;) {
        if (ccc[i] == 0) { i++; continue; }
        size_t j = i;
        while (j < m && ccc[j] != 0) j++;
        if (j - i > 1 && order_run(cps + i, ccc + i, j - i) != 0) {
            free(cps); free(ccc);
            return -1;
        }
        i = j;
    }
    /* 3. Canonical composition, in place: w is the write index, st the index
     * of the last starter written (or -1), last the class of the last
     * character written. A character is blocked from the starter when a
     * character between them has class 0 or a class >= its own. */
    size_t w = 0;
    ptrdiff_t st = -1;
    int last = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t c = cps[i];
        int cc = ccc[i];
        if (st >= 0) {
            int adjacent = (size_t)st == w - 1;
            if (adjacent || (last != 0 && last < cc)) {
                uint32_t comp = compose(cps[st], c);
                if (comp) { cps[st] = comp; continue; }
            }
        }
        if (cc == 0) st = (ptrdiff_t)w;
        last = cc;
        cps[w++] = c;
    }
    /* 4. Back to UTF-8. */
    uint8_t *res = malloc(w * 4 + 1);
    if (!res) { free(cps); free(ccc); return -1; }
    size_t o = 0;
    for (size_t i = 0; i < w; i++) o += (size_t)lr_utf8_encode(cps[i], res + o);
    free(cps);
    free(ccc);
    *out = res;
    *out_len = o;
    return 0;
}
