/* Helpers shared by the loader tests: temp folders, files read into
 * 64-byte aligned buffers, and surgery on artifacts in memory (find a
 * section or tensor record, recompute every checksum after a patch) so a
 * test can make one precise defect and see the reader name it. */
#ifndef LR_ARTIFACT_TESTLIB_H
#define LR_ARTIFACT_TESTLIB_H
#include "loader/artifact_format.h"
#include "loader/model.h"
#include "loader/synthetic.h"
#include "util/atomic_file.h"
#include "util/err.h"
#include "util/read_file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

static char tl_dir[256];

static inline void tl_cleanup(void)
{
    DIR *d = opendir(tl_dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", tl_dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(tl_dir);
}

/* A private temp folder, removed with its files at exit. */
static inline const char *tl_tmpdir(void)
{
    if (!tl_dir[0]) {
        snprintf(tl_dir, sizeof tl_dir, "/tmp/lr-loader-test.XXXXXX");
        if (!mkdtemp(tl_dir)) {
            snprintf(tl_dir, sizeof tl_dir, "/tmp");
            return tl_dir;
        }
        atexit(tl_cleanup);
    }
    return tl_dir;
}

static inline void tl_path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tl_tmpdir(), name); }

/* The whole file in a 64-byte aligned buffer (lr_model_open_mem needs it). */
static inline uint8_t *tl_read(const char *path, size_t *n)
{
    void *d;
    if (lr_read_file(path, &d, n)) return NULL;
    uint8_t *b = aligned_alloc(64, (*n + 64) / 64 * 64);
    if (b) memcpy(b, d, *n);
    free(d);
    return b;
}

static inline uint8_t *tl_dup(const uint8_t *b, size_t n)
{
    uint8_t *c = aligned_alloc(64, (n + 64) / 64 * 64);
    if (c) memcpy(c, b, n);
    return c;
}

/* Section table entry of a type, or NULL. */
static inline uint8_t *tl_section(uint8_t *b, uint32_t type)
{
    uint64_t so = lra_rd64(b + LRA_H_SECT_OFFSET);
    uint32_t sc = lra_rd32(b + LRA_H_SECT_COUNT);
    for (uint32_t i = 0; i < sc; i++) {
        uint8_t *e = b + so + (size_t)i * LRA_SECT_ENTRY_BYTES;
        if (lra_rd32(e + LRA_S_TYPE) == type) return e;
    }
    return NULL;
}

static inline uint8_t *tl_section_bytes(uint8_t *b, uint32_t type)
{
    uint8_t *e = tl_section(b, type);
    return e ? b + lra_rd64(e + LRA_S_OFFSET) : NULL;
}

/* Tensor record by name (strncmp over the name field), or NULL. */
static inline uint8_t *tl_record(uint8_t *b, const char *name)
{
    uint8_t *tt = tl_section_bytes(b, LRA_SECT_TENSORS);
    uint32_t n = lra_rd32(tt + LRA_TT_COUNT);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *r = tt + LRA_TT_HEAD_BYTES + (size_t)i * LRA_TENSOR_BYTES;
        if (!strncmp((const char *)r, name, LRA_NAME_LEN)) return r;
    }
    return NULL;
}

/* The tensor's data in the buffer. */
static inline uint8_t *tl_data(uint8_t *b, const uint8_t *rec) { return b + lra_rd64(rec + LRA_T_OFFSET); }

/* Recomputes every checksum, innermost first, skipping anything a patch has
 * pushed out of bounds (the reader will complain about that instead). */
static inline void tl_refresh(uint8_t *b, size_t n)
{
    uint8_t *tt_e = tl_section(b, LRA_SECT_TENSORS), *tt = b + lra_rd64(tt_e + LRA_S_OFFSET);
    uint32_t nt = lra_rd32(tt + LRA_TT_COUNT);
    for (uint32_t i = 0; i < nt && LRA_TT_HEAD_BYTES + (uint64_t)(i + 1) * LRA_TENSOR_BYTES <= lra_rd64(tt_e + LRA_S_LENGTH);
         i++) {
        uint8_t *r = tt + LRA_TT_HEAD_BYTES + (size_t)i * LRA_TENSOR_BYTES;
        uint64_t off = lra_rd64(r + LRA_T_OFFSET), len = lra_rd64(r + LRA_T_LENGTH);
        if (off <= n && len <= n - off) lra_wr64(r + LRA_T_SUM, XXH3_64bits(b + off, len));
    }
    uint64_t so = lra_rd64(b + LRA_H_SECT_OFFSET);
    uint32_t sc = lra_rd32(b + LRA_H_SECT_COUNT);
    for (uint32_t i = 0; i < sc; i++) {
        uint8_t *e = b + so + (size_t)i * LRA_SECT_ENTRY_BYTES;
        uint64_t off = lra_rd64(e + LRA_S_OFFSET), len = lra_rd64(e + LRA_S_LENGTH);
        if (off <= n && len <= n - off) lra_wr64(e + LRA_S_SUM, XXH3_64bits(b + off, len));
    }
    lra_wr64(b + LRA_H_SECT_SUM, XXH3_64bits(b + so, (size_t)sc * LRA_SECT_ENTRY_BYTES));
    lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
}

/* A small tokenizer.json for tests. */
static inline int tl_write_tokenizer(char *path, size_t n)
{
    static const char json[] = "{\"version\":\"1.0\",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[]}}";
    tl_path(path, n, "tokenizer.json");
    return lr_write_file_atomic(path, json, sizeof json - 1);
}

/* Writes a synthetic artifact of a named config (align 64: small files). */
static inline int tl_synth(const char *path, const char *config, uint64_t seed, const char *tokenizer, int nthreads)
{
    lr_model_config c;
    int rc = lr_synth_config(config, &c);
    if (rc) return rc;
    lr_synth_opts o = { .seed = seed, .nthreads = nthreads, .tokenizer_path = tokenizer, .align = 64, .gain_bits = 1 };
    return lr_synth_write(path, &c, &o);
}

#endif
