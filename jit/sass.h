/* What a compiled kernel costs per weight, read from its cubin and its
 * disassembly: the register count (the cubin's EIATTR_REGCOUNT) and the
 * innermost loop that issues tensor-core instructions (nvdisasm's listing).
 * Why: the README's SASS counts (bench/results/sass_instr_per_weight.csv)
 * must come from a program anyone can rerun, not from a session's scripts;
 * tools/sass_count runs these on a spec and checks the committed rows. */
#ifndef LR_JIT_SASS_H
#define LR_JIT_SASS_H
#include <stddef.h>

/* Registers per thread of the cubin's first kernel with a REGCOUNT
 * attribute (an sm_xx ELF from NVRTC or nvcc). */
int lr_cubin_regcount(const void *cubin, size_t n, int *regs);

typedef struct lr_sass_loop {
    int instrs;       /* instructions from the loop's label to its backward branch */
    int mma;          /* HMMA / IMMA instructions among them */
    int m, n, k;      /* the mma shape (HMMA.16816: 16, 8, 16) */
    int local;        /* LDL / STL among them: register spills the loop pays for */
    double per_weight; /* instrs / (mma * m * k / 32): per weight of the A operand, per lane */
    size_t begin, end; /* the loop's lines in the listing: [begin, end) byte offsets */
} lr_sass_loop;

/* The innermost loop (a backward branch to a label) of an `nvdisasm -c`
 * listing (len bytes) holding mma instructions of one shape. LR_EFORMAT
 * when there is none. */
int lr_sass_mma_loop(const char *listing, size_t len, lr_sass_loop *out);

/* The global loads a kernel issues before its PDL wait (ACQBULK, what
 * griddepcontrol.wait compiles to), in listing order up to the first one:
 * wide ones (128-bit, cp.async LDGSTS, or evict-first streaming .EF: how the
 * Leech GEMVs read their weights and class tables, which no kernel writes)
 * and narrow ones (the rest: f32 / f64 loads, the way x and other vectors an
 * earlier kernel wrote are read). Why: at 5693b47 NVVM hoisted one load of x
 * above the wait of a GEMV that loads its weights before it, and the engine
 * read a stale x (docs/engine.md); a narrow load there is the sign.
 * has_wait 0: no ACQBULK (nothing is counted). */
typedef struct lr_sass_prewait {
    int has_wait;
    int wide, narrow;
    char first_narrow[24]; /* the first narrow load's opcode */
} lr_sass_prewait;
int lr_sass_prewait_loads(const char *listing, size_t len, lr_sass_prewait *out);

#endif
