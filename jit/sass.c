#include "jit/sass.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- cubin: ELF64 section headers, then the .nv.info attribute records ---- */

#define EIFMT_SVAL 0x04     /* 2-byte size, then that many bytes */
#define EIATTR_REGCOUNT 0x2f /* {u32 symbol, u32 registers} */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

int lr_cubin_regcount(const void *cubin, size_t n, int *regs)
{
    const uint8_t *b = cubin;
    if (n < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2 || b[5] != 1)
        return LR_FAIL(LR_EFORMAT, "cubin: not a little-endian ELF64 file");
    uint64_t shoff = rd64(b + 0x28);
    unsigned shentsize = rd16(b + 0x3a), shnum = rd16(b + 0x3c), shstrndx = rd16(b + 0x3e);
    if (shentsize < 64 || shstrndx >= shnum || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
        return LR_FAIL(LR_EFORMAT, "cubin: section headers out of the file");
    const uint8_t *strs = b + shoff + (size_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strs + 0x18), strsize = rd64(strs + 0x20);
    if (stroff > n || strsize > n - stroff) return LR_FAIL(LR_EFORMAT, "cubin: section names out of the file");
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = b + shoff + (size_t)i * shentsize;
        uint32_t name = rd32(sh);
        uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
        if (name >= strsize || off > n || size > n - off) continue;
        const char *nm = (const char *)b + stroff + name;
        if (!memchr(nm, 0, strsize - name) || strncmp(nm, ".nv.info", 8)) continue;
        for (uint64_t p = off; p + 4 <= off + size;) {
            unsigned fmt = b[p], attr = b[p + 1], len = fmt == EIFMT_SVAL ? rd16(b + p + 2) : 0;
            if (fmt == EIFMT_SVAL && p + 4 + len > off + size) break;
            if (fmt == EIFMT_SVAL && attr == EIATTR_REGCOUNT && len >= 8) {
                *regs = (int)rd32(b + p + 8);
                return LR_OK;
            }
            p += 4 + len; /* other formats carry their value in the 4 bytes */
        }
    }
    return LR_FAIL(LR_EFORMAT, "cubin: no register count");
}

/* ---- nvdisasm -c listing ---- */

typedef struct {
    char op[24];  /* opcode with its modifiers, e.g. HMMA.16816.F32 */
    int target;   /* BRA: the label's number, else -1 */
    size_t at, next; /* the line's offset in the listing and the next line's */
} sass_ins;

/* the decimal number at p (at most up to e), -1 when none */
static int num_at(const char *p, const char *e)
{
    long v = -1;
    for (; p < e && '0' <= *p && *p <= '9' && v < 1 << 24; p++) v = (v < 0 ? 0 : v * 10) + (*p - '0');
    return (int)v;
}

/* the line's instruction (after "/\*addr*\/" and an optional @predicate);
 * the line [l, e) need not be NUL-terminated */
static int parse_ins(const char *l, const char *e, sass_ins *in)
{
    const char *c = memmem(l, (size_t)(e - l), "*/", 2);
    if (!c) return 0;
    c += 2;
    while (c < e && (*c == ' ' || *c == '\t')) c++;
    if (c < e && *c == '@') {
        while (c < e && *c != ' ' && *c != '\t') c++;
        while (c < e && (*c == ' ' || *c == '\t')) c++;
    }
    size_t k = 0;
    while (c + k < e && (('A' <= c[k] && c[k] <= 'Z') || ('0' <= c[k] && c[k] <= '9') || c[k] == '.' || c[k] == '_'))
        k++;
    if (!k) return 0;
    if (k >= sizeof in->op) k = sizeof in->op - 1;
    memcpy(in->op, c, k);
    in->op[k] = 0;
    in->target = -1;
    if (!strncmp(in->op, "BRA", 3)) {
        const char *t = memmem(c, (size_t)(e - c), ".L_x_", 5);
        if (t) in->target = num_at(t + 5, e);
    }
    return 1;
}

/* "HMMA.16816.F32" -> 16, 8, 16; 0 when not an mma of the m16 shapes */
static int mma_shape(const char *op, int *m, int *n, int *k)
{
    if (strncmp(op, "HMMA.", 5) && strncmp(op, "IMMA.", 5)) return 0;
    const char *d = op + 5;
    size_t nd = strspn(d, "0123456789");
    if (nd < 4 || strncmp(d, "16", 2)) return 0;
    *m = 16, *n = d[2] - '0', *k = atoi((char[]){ d[3], nd > 4 ? d[4] : 0, 0 });
    return *n > 0 && *k > 0;
}

int lr_sass_mma_loop(const char *listing, size_t len, lr_sass_loop *out)
{
    size_t cap = 1024, ni = 0;
    sass_ins *ins = malloc(cap * sizeof *ins);
    int nlab = 0, labcap = 256, *lab = malloc((size_t)labcap * sizeof *lab); /* label number -> instruction index */
    if (!ins || !lab) return free(ins), free(lab), LR_FAIL(LR_ENOMEM, "sass listing");
    for (int i = 0; i < labcap; i++) lab[i] = -1;
    const char *p = listing, *end = listing + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        const char *s = p;
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        if (e - s > 5 && !strncmp(s, ".L_x_", 5) && memchr(s, ':', (size_t)(e - s))) {
            int id = num_at(s + 5, e);
            if (id >= 1 << 20) id = -1; /* no listing has a million labels: not one to grow for */
            if (id >= 0 && id >= labcap) {
                int nc = id * 2 + 1;
                int *nl = realloc(lab, (size_t)nc * sizeof *lab);
                if (!nl) return free(ins), free(lab), LR_FAIL(LR_ENOMEM, "sass listing");
                for (int i = labcap; i < nc; i++) nl[i] = -1;
                lab = nl, labcap = nc;
            }
            if (id >= 0) lab[id] = (int)ni, nlab++;
        } else if (ni == cap) {
            sass_ins *nn = realloc(ins, 2 * cap * sizeof *ins);
            if (!nn) return free(ins), free(lab), LR_FAIL(LR_ENOMEM, "sass listing");
            ins = nn, cap *= 2;
            continue; /* parse this line again with room */
        } else if (parse_ins(s, e, &ins[ni])) {
            ins[ni].at = (size_t)(p - listing), ins[ni].next = (size_t)(e - listing) + (e < end);
            ni++;
        }
        p = e + 1;
    }
    int best = -1, bestlen = 0;
    lr_sass_loop r = { 0 };
    for (size_t i = 0; i < ni; i++) {
        int t = ins[i].target;
        if (t < 0 || t >= labcap || lab[t] < 0 || (size_t)lab[t] > i) continue;
        int lo = lab[t], n = (int)i - lo + 1, nmma = 0, m = 0, nn = 0, k = 0, same = 1;
        for (int j = lo; j <= (int)i; j++) {
            int a, b, c;
            if (!mma_shape(ins[j].op, &a, &b, &c)) continue;
            if (nmma && (a != m || b != nn || c != k)) same = 0;
            m = a, nn = b, k = c, nmma++;
        }
        if (!nmma || !same || (best >= 0 && n >= bestlen)) continue;
        int local = 0;
        for (int j = lo; j <= (int)i; j++) local += !strncmp(ins[j].op, "LDL", 3) || !strncmp(ins[j].op, "STL", 3);
        best = (int)i, bestlen = n;
        r = (lr_sass_loop){ .instrs = n, .mma = nmma, .m = m, .n = nn, .k = k, .local = local, .begin = ins[lo].at,
                            .end = ins[i].next };
    }
    free(ins), free(lab);
    if (best < 0) return LR_FAIL(LR_EFORMAT, "sass listing: no loop with mma instructions (%d labels)", nlab);
    r.per_weight = (double)r.instrs / ((double)r.mma * r.m * r.k / 32.0);
    *out = r;
    return LR_OK;
}

/* a global load: LDG (any width), LDGSTS, or a generic LD (not LDS, LDL,
 * LDC, nor LDGDEPBAR, cp.async's commit) */
static int is_global_load(const char *op)
{
    return (!strncmp(op, "LDG", 3) && strncmp(op, "LDGDEPBAR", 9)) || !strncmp(op, "LD.", 3);
}

int lr_sass_prewait_loads(const char *listing, size_t len, lr_sass_prewait *out)
{
    memset(out, 0, sizeof *out);
    int wide = 0, narrow = 0;
    char first[24] = "";
    const char *p = listing, *end = listing + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        sass_ins in;
        if (parse_ins(p, e, &in)) {
            if (!strcmp(in.op, "ACQBULK")) {
                out->has_wait = 1, out->wide = wide, out->narrow = narrow;
                memcpy(out->first_narrow, first, sizeof first);
                return LR_OK;
            }
            if (is_global_load(in.op)) {
                if (!strncmp(in.op, "LDGSTS", 6) || strstr(in.op, ".128") || strstr(in.op, ".EF")) wide++;
                else if (!narrow++) memcpy(first, in.op, sizeof first);
            }
        }
        p = e + 1;
    }
    return LR_OK;
}
