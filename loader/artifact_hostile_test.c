/* Hostile artifacts: each test makes one precise defect in a valid file
 * (fixing the checksums afterwards where the defect is not the checksum
 * itself, so the check under test is the one that fires) and requires the
 * reader to refuse it with LR_EFORMAT (or LR_EUNSUPPORTED) and a message
 * naming the file, the tensor where there is one, and the problem. */
#include "layouts/leech/leech.h"
#include "loader/artifact_testlib.h"
#include "test/t.h"

#include <math.h>
#include <sys/stat.h>

#define LABEL "hostile.lrt"

static uint8_t *g_micro, *g_tiny;
static size_t g_micro_n, g_tiny_n;

static int setup(void)
{
    if (g_micro) return 0;
    char tok[512], a[512], b[512];
    if (tl_write_tokenizer(tok, sizeof tok)) return 1;
    tl_path(a, sizeof a, "micro.lrt");
    tl_path(b, sizeof b, "tiny.lrt");
    if (tl_synth(a, "micro", 3, tok, 2) || tl_synth(b, "tiny", 3, NULL, 2)) return 1;
    g_micro = tl_read(a, &g_micro_n);
    g_tiny = tl_read(b, &g_tiny_n);
    return !g_micro || !g_tiny;
}

/* Opens b (n bytes); passes when refused with rc (0 = any error) and a
 * message containing the label and each non-NULL string. */
static int refused(const uint8_t *b, size_t n, int rc_want, const char *s1, const char *s2, const char *where, int line)
{
    lr_model *m;
    lr_clear_error();
    int rc = lr_model_open_mem(b, n, LABEL, 0, &m);
    if (rc == LR_OK) {
        lr_model_close(m);
        fprintf(stderr, "    %s:%d: %s: accepted\n", __FILE__, line, where);
        return 0;
    }
    const char *msg = lr_errmsg();
    int ok = (!rc_want || rc == rc_want) && strstr(msg, LABEL) && (!s1 || strstr(msg, s1)) && (!s2 || strstr(msg, s2));
    if (!ok)
        fprintf(stderr, "    %s:%d: %s: rc %d (want %d), message \"%s\" lacks \"%s\" / \"%s\"\n", __FILE__, line, where, rc,
                rc_want, msg, s1 ? s1 : "", s2 ? s2 : "");
    return ok;
}
#define REFUSED(b, n, rc, s1, s2) \
    do { if (!refused(b, n, rc, s1, s2, #s1, __LINE__)) return T_FAIL; } while (0)

/* A fresh copy of micro to patch. */
#define COPY(b) uint8_t *b = tl_dup(g_micro, g_micro_n); T_ASSERT(b, "alloc")

static int test_valid_baseline(void)
{
    T_ASSERT(!setup(), "setup: %s", lr_errmsg());
    lr_model *m;
    T_OK(lr_model_open_mem(g_micro, g_micro_n, LABEL, 0, &m));
    lr_model_close(m);
    T_OK(lr_model_open_mem(g_tiny, g_tiny_n, LABEL, 0, &m));
    lr_model_close(m);
    /* The refresh helper itself changes nothing in a valid file. */
    COPY(b);
    tl_refresh(b, g_micro_n);
    T_ASSERT(!memcmp(b, g_micro, g_micro_n), "tl_refresh changed a valid file");
    free(b);
    return T_PASS;
}

static int test_bad_magic_and_version(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    b[3] ^= 0x20;
    REFUSED(b, g_micro_n, LR_EFORMAT, "bad magic", NULL);
    memcpy(b, g_micro, 8);
    lra_wr32(b + LRA_H_VERSION, 2);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "format version 2", NULL);
    lra_wr32(b + LRA_H_VERSION, 1);
    lra_wr32(b + LRA_H_HEADER_BYTES, 256);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "header size 256", NULL);
    REFUSED(b, 0, LR_EFORMAT, "shorter than the 128-byte header", NULL);
    free(b);
    return T_PASS;
}

static int test_truncated_everywhere(void)
{
    T_ASSERT(!setup(), "setup");
    int tried = 0;
    for (size_t cut = 0; cut < g_micro_n; cut += cut < 2048 ? 1 : 61, tried++) {
        /* As cut: the header's length no longer matches. */
        uint8_t *b = tl_dup(g_micro, cut);
        REFUSED(b, cut, LR_EFORMAT, cut < 128 ? "shorter than" : "truncated", NULL);
        /* With the header patched to the short length, a section must be out of bounds. */
        if (cut >= 128) {
            lra_wr64(b + LRA_H_FILE_BYTES, cut);
            lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
            REFUSED(b, cut, LR_EFORMAT, NULL, NULL);
        }
        free(b);
    }
    T_ASSERT(tried > 2000, "tried %d cuts", tried);
    return T_PASS;
}

static int test_each_checksum(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    b[60] ^= 1; /* a reserved header byte: the header checksum sees it first */
    REFUSED(b, g_micro_n, LR_EFORMAT, "header checksum mismatch", NULL);
    memcpy(b, g_micro, g_micro_n);
    tl_section(b, LRA_SECT_CONFIG)[LRA_S_SUBTYPE] ^= 1;
    REFUSED(b, g_micro_n, LR_EFORMAT, "section table checksum mismatch", NULL);
    memcpy(b, g_micro, g_micro_n);
    tl_section_bytes(b, LRA_SECT_CONFIG)[LRA_C_NAME] ^= 1;
    REFUSED(b, g_micro_n, LR_EFORMAT, "config section checksum mismatch", NULL);
    memcpy(b, g_micro, g_micro_n);
    tl_section_bytes(b, LRA_SECT_TOKENIZER)[5] ^= 1;
    REFUSED(b, g_micro_n, LR_EFORMAT, "tokenizer section checksum mismatch", NULL);
    memcpy(b, g_micro, g_micro_n);
    tl_record(b, "blk.0.attn_k")[LRA_T_SUM] ^= 1;
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor table checksum mismatch", NULL);
    /* Every tensor's data, one at a time (the section checksums refreshed,
     * so the tensor's own checksum is what catches it). */
    uint8_t *tt = tl_section_bytes(g_micro, LRA_SECT_TENSORS);
    uint32_t nt = lra_rd32(tt + LRA_TT_COUNT);
    for (uint32_t i = 0; i < nt; i++) {
        const uint8_t *r = tt + LRA_TT_HEAD_BYTES + (size_t)i * LRA_TENSOR_BYTES;
        memcpy(b, g_micro, g_micro_n);
        uint64_t off = lra_rd64(r + LRA_T_OFFSET), len = lra_rd64(r + LRA_T_LENGTH);
        b[off + len / 2] ^= 0x10;
        lra_wr64(tl_section(b, LRA_SECT_DATA) + LRA_S_SUM,
                 XXH3_64bits(tl_section_bytes(b, LRA_SECT_DATA), lra_rd64(tl_section(b, LRA_SECT_DATA) + LRA_S_LENGTH)));
        lra_wr64(b + LRA_H_SECT_SUM, XXH3_64bits(b + lra_rd64(b + LRA_H_SECT_OFFSET),
                                                 lra_rd32(b + LRA_H_SECT_COUNT) * (size_t)LRA_SECT_ENTRY_BYTES));
        lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
        REFUSED(b, g_micro_n, LR_EFORMAT, "data checksum mismatch", (const char *)r);
    }
    /* The data section's own checksum: a tensor byte changed with the
     * tensor's checksum (and the tables') fixed, the section's not. */
    memcpy(b, g_micro, g_micro_n);
    uint8_t *e = tl_section(b, LRA_SECT_DATA);
    uint64_t keep = lra_rd64(e + LRA_S_SUM);
    tl_data(b, tl_record(b, "blk.0.ffn_down"))[100] ^= 1;
    tl_refresh(b, g_micro_n);
    lra_wr64(e + LRA_S_SUM, keep);
    lra_wr64(b + LRA_H_SECT_SUM, XXH3_64bits(b + lra_rd64(b + LRA_H_SECT_OFFSET),
                                             lra_rd32(b + LRA_H_SECT_COUNT) * (size_t)LRA_SECT_ENTRY_BYTES));
    lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
    REFUSED(b, g_micro_n, LR_EFORMAT, "data section checksum mismatch", NULL);
    free(b);
    return T_PASS;
}

static int test_offsets_out_of_bounds(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    uint8_t *d = tl_section(b, LRA_SECT_DATA), *r = tl_record(b, "blk.0.ffn_up");
    uint64_t end = lra_rd64(d + LRA_S_OFFSET) + lra_rd64(d + LRA_S_LENGTH);
    lra_wr64(r + LRA_T_OFFSET, (end + 4095) / 4096 * 4096 + 4096);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_up", "outside the data section");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_record(b, "blk.0.ffn_up") + LRA_T_OFFSET, 1ull << 63);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_up", "outside the data section");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_record(b, "blk.0.ffn_up") + LRA_T_LENGTH, UINT64_MAX - 10);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_up", NULL);
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_section(b, LRA_SECT_DATA) + LRA_S_OFFSET, 1ull << 40);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "data section", "past the end");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_section(b, LRA_SECT_TENSORS) + LRA_S_LENGTH, UINT64_MAX);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor table section", "past the end");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(b + LRA_H_SECT_OFFSET, g_micro_n - 8);
    lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
    REFUSED(b, g_micro_n, LR_EFORMAT, "section table", "outside the file");
    free(b);
    return T_PASS;
}

static int test_overlaps(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    /* Two tensors on the same bytes. */
    lra_wr64(tl_record(b, "blk.0.attn_v") + LRA_T_OFFSET, lra_rd64(tl_record(b, "blk.0.attn_k") + LRA_T_OFFSET));
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "overlaps", "blk.0.attn_k");
    T_ASSERT(strstr(lr_errmsg(), "blk.0.attn_v"), "%s", lr_errmsg());
    /* Two parts of one tensor. */
    memcpy(b, g_micro, g_micro_n);
    uint8_t *r = tl_record(b, "blk.0.attn_q");
    lra_wr64(r + LRA_T_PARTS + 16 * 2, 0);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "part tail overlaps part scale");
    /* Two sections. */
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_section(b, LRA_SECT_CONFIG) + LRA_S_OFFSET, lra_rd64(tl_section(b, LRA_SECT_TOKENIZER) + LRA_S_OFFSET));
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "overlaps", "config");
    /* A section over the header. */
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_section(b, LRA_SECT_CONFIG) + LRA_S_OFFSET, 64);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "overlaps", "header");
    free(b);
    return T_PASS;
}

static int test_codec_sizes(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    uint8_t *r = tl_record(b, "blk.0.ffn_gate");
    lra_wr64(r + LRA_T_PARTS + 16 * 1 + 8, lra_rd64(r + LRA_T_PARTS + 16 * 1 + 8) + 1);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_gate", "part archive is");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.ffn_gate") + LRA_T_PARAMS + LRA_P_LEECH_GAIN_BITS, 2);
    lra_wrf32(tl_record(b, "blk.0.ffn_gate") + LRA_T_PARAMS + LRA_P_LEECH_CENTROID + 8, 1.3f);
    lra_wrf32(tl_record(b, "blk.0.ffn_gate") + LRA_T_PARAMS + LRA_P_LEECH_CENTROID + 12, 1.5f);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_gate", "part archive is");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "token_embd") + LRA_T_PARAMS + LRA_P_I8_GROUP, 32);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "token_embd", "part sb is");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_record(b, "blk.0.attn_q") + LRA_T_DIMS, 65);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "part scale is");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.attn_q") + LRA_T_NPARTS, 2);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "2 parts");
    memcpy(b, g_micro, g_micro_n);
    r = tl_record(b, "token_embd");
    lra_wr64(r + LRA_T_LENGTH, lra_rd64(r + LRA_T_LENGTH) + 8);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "token_embd", "parts end at");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.attn_q") + LRA_T_PARAMS + LRA_P_LEECH_MAX_SHELL, 13);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EUNSUPPORTED, "blk.0.attn_q", "max shell 13");
    memcpy(b, g_micro, g_micro_n);
    lra_wrf32(tl_record(b, "blk.0.attn_q") + LRA_T_PARAMS + LRA_P_LEECH_CENTROID + 4, NAN);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "centroid 1");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.attn_q") + LRA_T_CODEC, LR_CODEC_TRELLIS);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EUNSUPPORTED, "blk.0.attn_q", "trellis");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.attn_q") + LRA_T_CODEC, 99);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "unknown codec 99");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.attn_norm") + LRA_T_PARAMS + 20, 1);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_norm", "takes no parameters");
    free(b);
    return T_PASS;
}

/* Rotation kinds: 2 (per head) is read on attn_output and refused on any
 * other projection (its input does not come in heads); 3 is unknown. */
static int test_rotation_kinds(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    lra_wr32(tl_record(b, "blk.0.attn_output") + LRA_T_PARAMS + LRA_P_LEECH_ROT_KIND, LR_ROT_HEADS);
    tl_refresh(b, g_micro_n);
    lr_model *m;
    T_OK(lr_model_open_mem(b, g_micro_n, LABEL, 0, &m));
    T_ASSERT(lr_model_tensor(m, "blk.0.attn_output")->u.leech.rot_kind == LR_ROT_HEADS, "kind 2 not read back");
    lr_model_close(m);
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.attn_q") + LRA_T_PARAMS + LRA_P_LEECH_ROT_KIND, LR_ROT_HEADS);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "only for attn_output");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.ffn_down") + LRA_T_PARAMS + LRA_P_LEECH_ROT_KIND, 3);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_down", "unknown rotation kind 3");
    free(b);
    /* kind 1 over a width the rotation cannot serve (intermediate 66 = 2 x 33):
       refused when read, not when an engine first rotates */
    char tok[512], a[512];
    lr_model_config c;
    T_ASSERT(tl_write_tokenizer(tok, sizeof tok) == 0, "tokenizer");
    T_OK(lr_synth_config("micro", &c));
    c.intermediate = 66;
    tl_path(a, sizeof a, "micro-i66.lrt");
    lr_synth_opts o = { .seed = 3, .nthreads = 2, .align = 64, .gain_bits = 1 };
    int wrc = lr_synth_write(a, &c, &o);
    if (wrc == LR_OK) {
        size_t n;
        uint8_t *f = tl_read(a, &n);
        T_ASSERT(f, "read %s", a);
        const int ok = refused(f, n, LR_EFORMAT, "blk.0.ffn_down", "rotation kind 1 over 66 columns", "kind 1", __LINE__);
        free(f);
        T_ASSERT(ok, "kind 1 over 66 columns");
    } else
        T_ASSERT(strstr(lr_errmsg(), "66"), "the writer refused intermediate 66 without naming it: %s", lr_errmsg());
    return T_PASS;
}

/* The model name is free text that every tool prints: its control
 * characters (an escape sequence that retitles a terminal, line breaks) are
 * read as '?'. */
static int test_name_controls(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    uint8_t *name = tl_section_bytes(b, LRA_SECT_CONFIG) + LRA_C_NAME;
    memcpy(name, "a\x1b]0;X\x07\n\r\x7f\xc3\xa9", 13); /* with its NUL */
    tl_refresh(b, g_micro_n);
    lr_model *m;
    T_OK(lr_model_open_mem(b, g_micro_n, LABEL, 0, &m));
    const char *got = lr_model_cfg(m)->name;
    T_ASSERT(!strcmp(got, "a?]0;X????\xc3\xa9"), "name read as '%s'", got);
    lr_model_close(m);
    free(b);
    return T_PASS;
}

/* A model path that is not a regular file: a FIFO is refused at once (opening
 * it to read would wait for a writer), a folder by name. */
static int test_not_a_file(void)
{
    char fifo[512], dir[512];
    tl_path(fifo, sizeof fifo, "fifo.lrt");
    tl_path(dir, sizeof dir, "dir.lrt");
    unlink(fifo);
    rmdir(dir);
    T_ASSERT(mkfifo(fifo, 0600) == 0 && mkdir(dir, 0700) == 0, "fifo and folder");
    lr_model *m;
    alarm(10); /* a hang fails the test instead of CI */
    int rc = lr_model_open(fifo, 0, &m);
    alarm(0);
    T_ASSERT(rc != LR_OK && strstr(lr_errmsg(), fifo) && strstr(lr_errmsg(), "not a regular file"), "FIFO: %d %s", rc,
             lr_errmsg());
    rc = lr_model_open(dir, 0, &m);
    T_ASSERT(rc != LR_OK && strstr(lr_errmsg(), "not a regular file"), "folder: %d %s", rc, lr_errmsg());
    unlink(fifo);
    rmdir(dir);
    return T_PASS;
}

static int patch_config(uint8_t *b, size_t n, int field, uint32_t v);

/* The micro model with its residual stream held rotated (gen_synthetic
 * --residual rotated), made once. */
static uint8_t *g_rmicro;
static size_t g_rmicro_n;
static int setup_rotated(void)
{
    if (g_rmicro) return 0;
    char a[512];
    tl_path(a, sizeof a, "micro-rres.lrt");
    lr_model_config c;
    lr_synth_opts o = { .seed = 3, .nthreads = 2, .align = 64, .gain_bits = 1, .rotated_residual = 1 };
    if (lr_synth_config("micro", &c) || lr_synth_write(a, &c, &o)) return 1;
    g_rmicro = tl_read(a, &g_rmicro_n);
    return !g_rmicro;
}

/* The rotated residual (config flag bit 0, docs/format.md): the micro model
 * written with it has the flag and its seed, which its readers share; the
 * flag on a plain model (readers on another seed), the seed without the
 * flag, a reader of the stream stored against another rotation (seed or
 * kind) are refused by name; flag and seed cleared give a valid file; a
 * writer (down) keeps a rotation of its own. */
static int test_rotated_residual(void)
{
    T_ASSERT(!setup() && !setup_rotated(), "setup");
    const size_t n = g_rmicro_n;
    lr_model *m;
    T_OK(lr_model_open_mem(g_rmicro, n, LABEL, 0, &m));
    const lr_model_config c = *lr_model_cfg(m);
    const lr_tensor_view *q = lr_model_tensor(m, "blk.0.attn_q");
    T_ASSERT(c.rotated_residual == 1 && c.residual_seed != 0 && q->u.leech.rot_seed == c.residual_seed,
             "flag %d seed %llu (attn_q's %llu)", c.rotated_residual, (unsigned long long)c.residual_seed,
             (unsigned long long)q->u.leech.rot_seed);
    lr_model_close(m);
    COPY(p); /* the plain micro model with the flag set, its seed 0 */
    patch_config(p, g_micro_n, LRA_C_FLAGS, 1);
    REFUSED(p, g_micro_n, LR_EFORMAT, "blk.0.attn_q", "must be kind 1 with the residual's seed");
    free(p);
    uint8_t *b = tl_dup(g_rmicro, n); /* 64-byte aligned, as the reader requires (malloc's was luck) */
    T_ASSERT(b != NULL, "out of memory");
    patch_config(b, n, LRA_C_FLAGS, 0);
    REFUSED(b, n, LR_EFORMAT, "config", "seed without the rotated-residual flag");
    lra_wr64(tl_section_bytes(b, LRA_SECT_CONFIG) + LRA_C_RESID_SEED, 0);
    tl_refresh(b, n);
    T_OK(lr_model_open_mem(b, n, LABEL, 0, &m));
    T_ASSERT(!lr_model_cfg(m)->rotated_residual, "flag cleared but read as set");
    lr_model_close(m);
    static const char *const readers[] = { "blk.0.attn_k", "blk.0.ffn_up" };
    for (int i = 0; i < 2; i++) {
        memcpy(b, g_rmicro, n);
        uint8_t *r = tl_record(b, readers[i]) + LRA_T_PARAMS;
        lra_wr64(r + LRA_P_LEECH_ROT_SEED, lra_rd64(r + LRA_P_LEECH_ROT_SEED) + 1);
        tl_refresh(b, n);
        REFUSED(b, n, LR_EFORMAT, readers[i], "must be kind 1 with the residual's seed");
    }
    memcpy(b, g_rmicro, n);
    lra_wr32(tl_record(b, "blk.0.ffn_gate") + LRA_T_PARAMS + LRA_P_LEECH_ROT_KIND, LR_ROT_NONE);
    lra_wr64(tl_record(b, "blk.0.ffn_gate") + LRA_T_PARAMS + LRA_P_LEECH_ROT_SEED, 0);
    tl_refresh(b, n);
    REFUSED(b, n, LR_EFORMAT, "blk.0.ffn_gate", "kind 0");
    memcpy(b, g_rmicro, n);
    uint8_t *r = tl_record(b, "blk.0.ffn_down") + LRA_T_PARAMS;
    lra_wr64(r + LRA_P_LEECH_ROT_SEED, lra_rd64(r + LRA_P_LEECH_ROT_SEED) + 1);
    tl_refresh(b, n);
    T_OK(lr_model_open_mem(b, n, LABEL, 0, &m));
    lr_model_close(m);
    free(b);
    return T_PASS;
}

static int test_alignment(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    uint8_t *r = tl_record(b, "blk.0.ffn_down");
    lra_wr64(r + LRA_T_OFFSET, lra_rd64(r + LRA_T_OFFSET) + 8);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_down", "not a multiple of its alignment");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.ffn_down") + LRA_T_ALIGN, 128);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_down", "alignment 128");
    memcpy(b, g_micro, g_micro_n);
    r = tl_record(b, "blk.0.ffn_down");
    lra_wr64(r + LRA_T_PARTS + 16, lra_rd64(r + LRA_T_PARTS + 16) + 4);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_down", "part archive offset");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_section(b, LRA_SECT_CONFIG) + LRA_S_OFFSET, lra_rd64(tl_section(b, LRA_SECT_CONFIG) + LRA_S_OFFSET) + 8);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "config section offset", "aligned");
    lr_model *m;
    T_ASSERT(lr_model_open_mem(b + 8, g_micro_n - 8, LABEL, 0, &m) == LR_EINVAL, "unaligned buffer accepted");
    free(b);
    return T_PASS;
}

static int patch_config(uint8_t *b, size_t n, int field, uint32_t v)
{
    lra_wr32(tl_section_bytes(b, LRA_SECT_CONFIG) + field, v);
    tl_refresh(b, n);
    return 0;
}

static int test_absurd_dims(void)
{
    T_ASSERT(!setup(), "setup");
    static const struct { int field; uint32_t v; const char *what; } k[] = {
        { LRA_C_HIDDEN, 1u << 21, "hidden = 2097152" },  { LRA_C_HIDDEN, 0, "hidden = 0" },
        { LRA_C_LAYERS, 5000, "layers = 5000" },         { LRA_C_HEADS, 0, "heads = 0" },
        { LRA_C_KV_HEADS, 3, "kv_heads = 3" },            { LRA_C_HEAD_DIM, 33, "head_dim 33 is odd" },
        { LRA_C_HEAD_DIM, 1u << 20, "head_dim = 1048576" }, { LRA_C_INTER, 1u << 30, "intermediate" },
        { LRA_C_VOCAB, 0, "vocab = 0" },                  { LRA_C_VOCAB, 1u << 25, "vocab = 33554432" },
        { LRA_C_MAX_CTX, 0, "max_context" },              { LRA_C_BOS, 64, "bos id 64" },
        { LRA_C_EOS, 1000, "eos id 1000" },               { LRA_C_TIED, 7, "tied head flag" },
        { LRA_C_FLAGS, 2, "unknown flags" },
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        COPY(b);
        patch_config(b, g_micro_n, k[i].field, k[i].v);
        REFUSED(b, g_micro_n, LR_EFORMAT, "config", k[i].what);
        free(b);
    }
    COPY(b);
    lra_wrf64(tl_section_bytes(b, LRA_SECT_CONFIG) + LRA_C_ROPE_THETA, NAN);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "config", "rope theta");
    memcpy(b, g_micro, g_micro_n);
    lra_wrf64(tl_section_bytes(b, LRA_SECT_CONFIG) + LRA_C_NORM_EPS, -1);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "config", "norm eps");
    memcpy(b, g_micro, g_micro_n);
    memset(tl_section_bytes(b, LRA_SECT_CONFIG) + LRA_C_ARCH, 'q', 32);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "config", "architecture string");
    memcpy(b, g_micro, g_micro_n);
    memcpy(tl_section_bytes(b, LRA_SECT_CONFIG) + LRA_C_ARCH, "gpt9", 5);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EUNSUPPORTED, "config", "gpt9");
    /* Tensor dims. */
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_record(b, "blk.0.ffn_up") + LRA_T_DIMS + 8, 1ull << 33);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_up", "dims[1]");
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_record(b, "blk.0.ffn_up") + LRA_T_DIMS, 1ull << 32);
    lra_wr64(tl_record(b, "blk.0.ffn_up") + LRA_T_DIMS + 8, 1ull << 32);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_up", "2^40 elements");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_record(b, "blk.0.ffn_up") + LRA_T_NDIM, 7);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "blk.0.ffn_up", "ndim");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_section_bytes(b, LRA_SECT_TENSORS) + LRA_TT_COUNT, 0xffffffffu);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor count", NULL);
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(b + LRA_H_SECT_COUNT, 17);
    lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
    REFUSED(b, g_micro_n, LR_EFORMAT, "section count 17", NULL);
    free(b);
    return T_PASS;
}

static void rename_tensor(uint8_t *b, size_t n, const char *from, const char *to)
{
    uint8_t *r = tl_record(b, from);
    memset(r, 0, LRA_NAME_LEN);
    memcpy(r, to, strlen(to));
    tl_refresh(b, n);
}

static int test_tensor_set(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    rename_tensor(b, g_micro_n, "blk.0.ffn_up", "blk.0.ffn_uq");
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor blk.0.ffn_up", "missing");
    memcpy(b, g_micro, g_micro_n);
    rename_tensor(b, g_micro_n, "blk.0.ffn_up", "blk.0.ffn_gate");
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor blk.0.ffn_gate", "duplicate name");
    memcpy(b, g_micro, g_micro_n);
    memset(tl_record(b, "blk.0.ffn_up"), 'x', LRA_NAME_LEN);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "not NUL-terminated", NULL);
    memcpy(b, g_micro, g_micro_n);
    rename_tensor(b, g_micro_n, "blk.0.ffn_up", "blk.0.ffn up");
    REFUSED(b, g_micro_n, LR_EFORMAT, "printable", NULL);
    /* Untied config: the head is missing. */
    memcpy(b, g_micro, g_micro_n);
    patch_config(b, g_micro_n, LRA_C_TIED, 0);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor output", "missing");
    /* Tied config over an untied file: the head is unexpected. */
    uint8_t *t = tl_dup(g_tiny, g_tiny_n);
    patch_config(t, g_tiny_n, LRA_C_TIED, 1);
    REFUSED(t, g_tiny_n, LR_EFORMAT, "tensor output", "unexpected");
    /* Shapes against the config. */
    memcpy(b, g_micro, g_micro_n);
    patch_config(b, g_micro_n, LRA_C_INTER, 120);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor blk.0.ffn_gate", "implies [120, 64]");
    /* A layer count the file does not have. */
    free(t);
    t = tl_dup(g_tiny, g_tiny_n);
    patch_config(t, g_tiny_n, LRA_C_LAYERS, 1);
    REFUSED(t, g_tiny_n, LR_EFORMAT, "tensor blk.1.", "unexpected");
    free(t);
    free(b);
    return T_PASS;
}

static int test_payload(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    uint8_t *r = tl_record(b, "blk.0.attn_q");
    memset(tl_data(b, r) + lra_rd64(r + LRA_T_PARTS + 16), 0xff, 12);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor blk.0.attn_q", "outside L24(12)");
    /* Indices at the edge of the ball, in the last block and a middle one
     * (the one-gain-bit fast path and its byte-wise tail). */
    static const uint64_t blocks[2] = { 255, 77 };
    for (int k = 0; k < 2; k++)
        for (int over = 0; over < 2; over++) {
            memcpy(b, g_micro, g_micro_n);
            r = tl_record(b, "blk.0.ffn_down");
            uint8_t *a = tl_data(b, r) + lra_rd64(r + LRA_T_PARTS + 16) + 6 * blocks[k];
            uint64_t v = (LR_LEECH_BALL12_POINTS - 1 + (uint64_t)over) << 1 | 1;
            for (int i = 0; i < 6; i++) a[i] = (uint8_t)(v >> (40 - 8 * i));
            tl_refresh(b, g_micro_n);
            if (over) {
                REFUSED(b, g_micro_n, LR_EFORMAT, "tensor blk.0.ffn_down", "outside L24(12)");
            } else {
                lr_model *m;
                T_OK(lr_model_open_mem(b, g_micro_n, LABEL, 0, &m));
                lr_model_close(m);
            }
        }
    memcpy(b, g_micro, g_micro_n);
    r = tl_record(b, "blk.0.attn_k");
    lra_wrf32(tl_data(b, r) + 4 * 3, NAN);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor blk.0.attn_k", "row scale 3");
    memcpy(b, g_micro, g_micro_n);
    r = tl_record(b, "token_embd");
    lra_wr32(tl_data(b, r) + lra_rd64(r + LRA_T_PARTS + 16) + 40, 0x7c00u);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor token_embd", "scale/bias value 20");
    memcpy(b, g_micro, g_micro_n);
    r = tl_record(b, "output_norm");
    lra_wrf32(tl_data(b, r) + 8, INFINITY);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor output_norm", "value 2");
    /* Skipping the data pass accepts it; the explicit pass refuses it. */
    lr_model *m;
    T_OK(lr_model_open_mem(b, g_micro_n, LABEL, LR_MODEL_SKIP_DATA, &m));
    T_ASSERT(lr_model_verify_data(m, 2, NULL) == LR_EFORMAT && strstr(lr_errmsg(), "output_norm"), "%s", lr_errmsg());
    lr_model_close(m);
    free(b);
    return T_PASS;
}

static int test_sections(void)
{
    T_ASSERT(!setup(), "setup");
    COPY(b);
    lra_wr32(tl_section(b, LRA_SECT_TOKENIZER) + LRA_S_SUBTYPE, 7);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tokenizer section", "unknown kind 7");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_section(b, LRA_SECT_TOKENIZER) + LRA_S_SUBTYPE, LR_TOK_JSON_GZIP);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tokenizer section", "not gzip");
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_section(b, LRA_SECT_TOKENIZER) + LRA_S_TYPE, LRA_SECT_CONFIG);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "duplicate config section", NULL);
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(tl_section(b, LRA_SECT_TOKENIZER) + LRA_S_TYPE, 9);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "unknown type 9", NULL);
    memcpy(b, g_micro, g_micro_n);
    lra_wr32(b + LRA_H_SECT_COUNT, 2); /* config + tokenizer: no tensor table, no data */
    lra_wr64(b + LRA_H_SECT_SUM, XXH3_64bits(b + lra_rd64(b + LRA_H_SECT_OFFSET), 2 * LRA_SECT_ENTRY_BYTES));
    lra_wr64(b + LRA_H_SUM, XXH3_64bits(b, LRA_H_SUM));
    REFUSED(b, g_micro_n, LR_EFORMAT, "no tensor table section", NULL);
    memcpy(b, g_micro, g_micro_n);
    lra_wr64(tl_section(b, LRA_SECT_CONFIG) + LRA_S_LENGTH, 200);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "config section is 200 bytes", NULL);
    memcpy(b, g_micro, g_micro_n);
    uint8_t *e = tl_section(b, LRA_SECT_TENSORS);
    lra_wr64(e + LRA_S_LENGTH, lra_rd64(e + LRA_S_LENGTH) - LRA_TENSOR_BYTES);
    tl_refresh(b, g_micro_n);
    REFUSED(b, g_micro_n, LR_EFORMAT, "tensor table is", "records need");
    free(b);
    return T_PASS;
}

T_MAIN(T_CASE(test_valid_baseline), T_CASE(test_not_a_file), T_CASE(test_name_controls), T_CASE(test_bad_magic_and_version), T_CASE(test_truncated_everywhere),
       T_CASE(test_each_checksum), T_CASE(test_offsets_out_of_bounds), T_CASE(test_overlaps), T_CASE(test_codec_sizes), T_CASE(test_rotation_kinds), T_CASE(test_rotated_residual),
       T_CASE(test_alignment), T_CASE(test_absurd_dims), T_CASE(test_tensor_set), T_CASE(test_payload),
       T_CASE(test_sections))
