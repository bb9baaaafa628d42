/* The SASS readers: the innermost mma loop of a listing (synthetic listings
 * in nvdisasm -c's format) and the register count of a cubin (a synthetic
 * ELF, and one NVRTC compiles here). */
#include "jit/jit.h"
#include "jit/nvrtc.h"
#include "jit/sass.h"
#include "jit/spec_examples.h"
#include "test/t.h"
#include "util/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INS(a, text) "        /*" a "*/                   " text " ;\n"

/* an outer loop holding an inner one with 2 HMMA; a loop without mma */
static const char g_nested[] = "\t.section\t.text.k,\"ax\",@progbits\n"
                               ".L_x_0:\n" INS("0000", "LDG.E R2, desc[UR4][R4.64]")
                               ".L_x_1:\n" INS("0010", "HMMA.16816.F32 R8, R12, R16, RZ")
                               INS("0020", "PRMT R1, R2, R3, R4")
                               INS("0030", "HMMA.16816.F32 R8, R12, R16, R8")
                               INS("0040", "@P0 BRA `(.L_x_1)")
                               INS("0050", "IADD3 R1, R1, 0x1, RZ")
                               INS("0060", "@!P1 BRA `(.L_x_0)")
                               ".L_x_2:\n" INS("0070", "IADD3 R1, R1, 0x1, RZ")
                               INS("0080", "@P2 BRA `(.L_x_2)")
                               INS("0090", "EXIT");

static int test_inner_loop(void)
{
    lr_sass_loop l;
    T_OK(lr_sass_mma_loop(g_nested, strlen(g_nested), &l));
    /* .L_x_1 .. its BRA: HMMA PRMT HMMA BRA */
    T_ASSERT(l.instrs == 4 && l.mma == 2 && l.m == 16 && l.n == 8 && l.k == 16, "loop %d instrs %d mma %d %d %d", l.instrs,
             l.mma, l.m, l.n, l.k);
    T_ASSERT(l.per_weight == 4.0 / 16.0, "per weight %g", l.per_weight); /* 2 mma x 16 x 16 / 32 = 16 weights per lane */
    /* its lines: from the first HMMA's line to the branch back's, whole lines */
    const char *a = g_nested + l.begin, *z = g_nested + l.end;
    int lines = 0;
    for (const char *c = a; c < z; c++) lines += *c == '\n';
    T_ASSERT(!strncmp(a, "        /*0010*/", 16) && z - a > 20 && !strncmp(z - 20, "@P0 BRA `(.L_x_1) ;\n", 20) && lines == 4,
             "loop lines [%zu, %zu): %d lines", l.begin, l.end, lines);
    return T_PASS;
}

static int test_imma_and_missing(void)
{
    const char imma[] = ".L_x_5:\n" INS("0000", "IMMA.16832.S8.S8 R8, R12, R16, R8") INS("0010", "LDL R3, [R1+0x8]")
        INS("0020", "BRA `(.L_x_5)");
    lr_sass_loop l;
    T_OK(lr_sass_mma_loop(imma, strlen(imma), &l));
    T_ASSERT(l.instrs == 3 && l.mma == 1 && l.k == 32 && l.per_weight == 3.0 / 16.0 && l.local == 1,
             "imma loop %d %d %g, %d spills", l.instrs, l.mma, l.per_weight, l.local);
    /* a forward branch is no loop; no mma in the only loop */
    const char none[] = INS("0000", "BRA `(.L_x_9)") ".L_x_9:\n" INS("0010", "HMMA.16816.F32 R8, R12, R16, RZ")
        ".L_x_3:\n" INS("0020", "IADD3 R1, R1, 0x1, RZ") INS("0030", "@P0 BRA `(.L_x_3)");
    T_ASSERT(lr_sass_mma_loop(none, strlen(none), &l) == LR_EFORMAT, "a loop found where there is none");
    T_ASSERT(lr_sass_mma_loop("", 0, &l) == LR_EFORMAT, "empty listing");
    return T_PASS;
}

/* A minimal ELF64: header, the section-name table and one .nv.info section
 * holding {EIFMT_SVAL, EIATTR_REGCOUNT, 8, symbol 3, regs}. */
static size_t tiny_elf(uint8_t *b, int regs, int truncate_info)
{
    memset(b, 0, 512);
    memcpy(b, "\177ELF", 4);
    b[4] = 2, b[5] = 1;
    const char names[] = "\0.shstrtab\0.nv.info\0";
    memcpy(b + 64, names, sizeof names);
    uint8_t *info = b + 96;
    const uint8_t rec[12] = { 0x04, 0x2f, 8, 0, 3, 0, 0, 0, (uint8_t)regs, 0, 0, 0 };
    memcpy(info, rec, sizeof rec);
    const uint64_t shoff = 128;
    memcpy(b + 0x28, &shoff, 8);
    const uint16_t shentsize = 64, shnum = 3, shstrndx = 1;
    memcpy(b + 0x3a, &shentsize, 2), memcpy(b + 0x3c, &shnum, 2), memcpy(b + 0x3e, &shstrndx, 2);
    /* section 1: .shstrtab at 64, section 2: .nv.info at 96 */
    uint8_t *s1 = b + shoff + 64, *s2 = b + shoff + 128;
    const uint32_t n1 = 1, n2 = 11;
    const uint64_t o1 = 64, z1 = sizeof names, o2 = 96, z2 = truncate_info ? 6 : 12;
    memcpy(s1, &n1, 4), memcpy(s1 + 0x18, &o1, 8), memcpy(s1 + 0x20, &z1, 8);
    memcpy(s2, &n2, 4), memcpy(s2 + 0x18, &o2, 8), memcpy(s2 + 0x20, &z2, 8);
    return shoff + 3 * 64;
}

static int test_regcount_elf(void)
{
    uint8_t b[512];
    int regs = 0;
    size_t n = tiny_elf(b, 77, 0);
    T_OK(lr_cubin_regcount(b, n, &regs));
    T_ASSERT(regs == 77, "regs %d", regs);
    n = tiny_elf(b, 77, 1); /* the record cut short: no count, no read past the section */
    T_ASSERT(lr_cubin_regcount(b, n, &regs) == LR_EFORMAT, "cut record accepted");
    T_ASSERT(lr_cubin_regcount(b, 40, &regs) == LR_EFORMAT, "short file accepted");
    b[0] = 0;
    T_ASSERT(lr_cubin_regcount(b, n, &regs) == LR_EFORMAT, "not an ELF accepted");
    return T_PASS;
}

/* NVRTC's cubin: 1024 threads per CTA leave at most 64 registers per thread. */
static int test_regcount_nvrtc(void)
{
    lr_jit_spec s;
    const char line[] = "gemv_leech_p14s rows=34816 cols=5120 threads=1024 rg=1 ntab=603 prefetch=1 shr=1 groups=8";
    T_OK(lr_spec_parse("gemv_leech_p14s.cu", line, sizeof line - 1, &s));
    void *cubin;
    size_t n;
    T_SKIP_IF(!lr_nvrtc_available(), "no NVRTC");
    int rc = lr_jit_cubin(&s, "sm_90", 13000, &cubin, &n, NULL);
    T_OK(rc);
    int regs = 0;
    rc = lr_cubin_regcount(cubin, n, &regs);
    free(cubin);
    T_OK(rc);
    T_ASSERT(regs >= 32 && regs <= 64, "regs %d at 1024 threads", regs);
    return T_PASS;
}

static int test_spec_parse(void)
{
    lr_jit_spec s;
    const char line[] = "gemv_f16 rows=8 cols=0x10 threads=128\nnot this";
    T_OK(lr_spec_parse("gemv_f16.cu", line, strlen("gemv_f16 rows=8 cols=0x10 threads=128"), &s));
    T_ASSERT(!strcmp(s.kernel, "gemv_f16") && lr_jit_spec_get(&s, "cols", 0) == 16 &&
                 lr_jit_spec_get(&s, "threads", 0) == 128 && s.nparams == 3,
             "parsed %s with %d params", s.kernel, s.nparams);
    T_ASSERT(lr_spec_parse("gemv_f16.cu", "gemv_f16 rows", 13, &s) == LR_EINVAL, "item without '=' accepted");
    T_ASSERT(lr_spec_parse("gemv_f16.cu", "gemv_f16 rows=8x", 16, &s) == LR_EINVAL, "8x accepted");
    T_ASSERT(lr_spec_parse("gemv_f16.cu", "gemv_f16 rows=", 14, &s) == LR_EINVAL, "empty value accepted");
    T_ASSERT(lr_spec_parse("gemv_f16.cu", "gemv_f16 rows=99999999999999999999", 34, &s) == LR_EINVAL,
             "a value past 64 bits accepted");
    return T_PASS;
}

/* loads before the PDL wait: the weights' wide and streaming ones (and a
 * cp.async) are wide; an f32 / f64 load there is narrow, loads after the
 * first ACQBULK are not counted; no ACQBULK: has_wait 0 */
static int test_prewait_loads(void)
{
    const char k[] = INS("0000", "LDC.64 R2, c[0x0][0x210]") INS("0010", "LDG.E.EF.64 R4, desc[UR4][R2.64]")
        INS("0020", "LDG.E.NA.128.CONSTANT R8, desc[UR4][R2.64+0x100]") INS("0030", "LDGSTS.E.BYPASS.128 [R1], desc[UR4][R2.64]") INS("0038", "LDGDEPBAR")
        INS("0040", "@!P0 LDG.E.64.CONSTANT R12, desc[UR4][R6.64]") INS("0050", "LDS.128 R16, [R1]")
        INS("0060", "LDG.E.CONSTANT R14, desc[UR4][R6.64]") INS("0070", "ACQBULK")
        INS("0080", "LDG.E.64.CONSTANT R20, desc[UR4][R6.64]") INS("0090", "ACQBULK") INS("00a0", "EXIT");
    lr_sass_prewait w;
    T_OK(lr_sass_prewait_loads(k, strlen(k), &w));
    T_ASSERT(w.has_wait && w.wide == 3 && w.narrow == 2 && !strcmp(w.first_narrow, "LDG.E.64.CONSTANT"),
             "wait %d wide %d narrow %d first %s", w.has_wait, w.wide, w.narrow, w.first_narrow);
    const char none[] = INS("0000", "LDG.E R2, desc[UR4][R4.64]") INS("0010", "EXIT");
    T_OK(lr_sass_prewait_loads(none, strlen(none), &w));
    T_ASSERT(!w.has_wait && !w.wide && !w.narrow, "no wait: %d %d %d", w.has_wait, w.wide, w.narrow);
    return T_PASS;
}

T_MAIN(T_CASE(test_inner_loop), T_CASE(test_prewait_loads), T_CASE(test_imma_and_missing), T_CASE(test_regcount_elf), T_CASE(test_regcount_nvrtc),
       T_CASE(test_spec_parse))
