/* inspect: prints a model artifact's header, config, tokenizer and tensor
 * table with bits per weight; --verify checks every checksum and payload. */
#include "loader/model.h"
#include "util/args.h"
#include "util/program.h"
#include "util/stdout_check.h"
#include "util/err.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: inspect MODEL.lrt [--verify] [--threads N] [--quiet] [--help]\n"
            "Validates the artifact's structure (header, sections, tensor table, the tensor set of its\n"
            "architecture) and prints its config, tokenizer and tensors with bits per weight.\n"
            "  --verify     also verify every checksum (tensors and data section) and payload\n"
            "               (Leech indices inside the ball, finite scales); exit 1 on any problem\n"
            "  --threads N  verification threads (default: all cores)\n"
            "  --quiet      no tensor table\n");
}

static void dims_str(const lr_tensor_view *t, char *s, size_t n)
{
    int k = snprintf(s, n, "[");
    for (int i = 0; i < t->ndim && k > 0 && (size_t)k < n; i++)
        k += snprintf(s + k, n - (size_t)k, "%s%llu", i ? ", " : "", (unsigned long long)t->dims[i]);
    if (k > 0 && (size_t)k < n) snprintf(s + k, n - (size_t)k, "]");
}

static void params_str(const lr_tensor_view *t, char *s, size_t n)
{
    s[0] = 0;
    if (t->codec == LR_CODEC_LEECH) {
        const lr_leech_params *L = &t->u.leech;
        int k = snprintf(s, n, "shell<=%d g=%d c={", L->max_shell, L->gain_bits);
        for (int i = 0; i < 1 << L->gain_bits; i++) k += snprintf(s + k, n - (size_t)k, "%s%.4g", i ? "," : "", (double)L->centroid[i]);
        snprintf(s + k, n - (size_t)k, "} rot=%s seed=%016llx tail=%d", L->rot_kind == LR_ROT_HEADS ? "heads" : L->rot_kind ? "hadamard" : "none",
                 (unsigned long long)L->rot_seed, L->tail);
    } else if (t->codec == LR_CODEC_INT8G) {
        snprintf(s, n, "group=%d f16 scale+bias", t->u.i8.group);
    }
}

int main(int argc, char **argv)
{
    lr_program_init("inspect");
    const char *path = NULL;
    int verify = 0, quiet = 0, threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return 0; }
        else if (!strcmp(argv[i], "--verify")) verify = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if (!strcmp(argv[i], "--threads")) {
            if (i + 1 >= argc) { fprintf(stderr, "inspect: --threads needs a value\n"); return 2; }
            if (lr_arg_int("inspect", argv[i], argv[i + 1], 0, 4096, &threads)) return 2;
            i++;
        }
        else if (argv[i][0] == '-') { fprintf(stderr, "inspect: unknown option %s\n", argv[i]); usage(stderr); return 2; }
        else if (path) {
            fprintf(stderr, "inspect: one model at a time (%s and %s given)\n", path, argv[i]);
            return 2;
        } else path = argv[i];
    }
    if (!path) { usage(stderr); return 2; }
    lr_model *m;
    double t0 = lr_now();
    if (lr_model_open(path, LR_MODEL_SKIP_DATA, &m)) {
        fprintf(stderr, "inspect: %s\n", lr_errmsg());
        return 1;
    }
    double t_open = lr_now() - t0;
    const lr_model_config *c = lr_model_cfg(m);
    printf("file         %s (%zu bytes, format version 1, structure valid in %.1f ms)\n", path, lr_model_file_bytes(m),
           1e3 * t_open);
    static const char *const sname[] = { "?", "config", "tokenizer", "tensor table", "data" };
    for (int i = 0; i < lr_model_section_count(m); i++) {
        const lr_section_info *s = lr_model_section_at(m, i);
        printf("%-12s %-13s at %12llu, %12llu bytes, xxh3 %016llx\n", i ? "" : "sections", sname[s->type <= 4 ? s->type : 0],
               (unsigned long long)s->offset, (unsigned long long)s->bytes, (unsigned long long)s->checksum);
    }
    printf("model        %s (%s)\n", c->name, c->arch);
    printf("config       hidden %u, layers %u, heads %u, kv heads %u, head dim %u, intermediate %u, vocab %u\n",
           c->hidden, c->n_layers, c->n_heads, c->n_kv_heads, c->head_dim, c->intermediate, c->vocab);
    printf("             rope theta %g, norm eps %g, max context %u, head %s\n", c->rope_theta, c->norm_eps,
           c->max_context, c->tied_head ? "tied to token_embd" : "untied");
    char bos[16] = "none", eos[16] = "none";
    if (c->bos_id != LR_NO_TOKEN) snprintf(bos, sizeof bos, "%u", c->bos_id);
    if (c->eos_id != LR_NO_TOKEN) snprintf(eos, sizeof eos, "%u", c->eos_id);
    printf("             bos %s, eos %s\n", bos, eos);
    int kind;
    const void *blob;
    size_t tn;
    lr_model_tokenizer(m, &kind, &blob, &tn);
    printf("tokenizer    %s", kind == LR_TOK_NONE ? "none" : kind == LR_TOK_JSON ? "tokenizer.json" : "tokenizer.json (gzip)");
    if (kind != LR_TOK_NONE) printf(", %zu bytes", tn);
    printf("\n");

    int n = lr_model_tensor_count(m);
    uint64_t params = 0, bytes = 0, pparams = 0, pbytes = 0;
    if (!quiet) printf("\n%-24s %-6s %-16s %12s %7s  %s\n", "tensor", "codec", "shape", "bytes", "b/w", "parameters");
    for (int i = 0; i < n; i++) {
        const lr_tensor_view *t = lr_model_tensor_at(m, i);
        uint64_t b = lr_tensor_payload_bytes(t);
        params += t->nelem;
        bytes += b;
        if (t->ndim == 2 && !strncmp(t->name, "blk.", 4)) pparams += t->nelem, pbytes += b;
        if (quiet) continue;
        char d[64], p[160];
        dims_str(t, d, sizeof d);
        params_str(t, p, sizeof p);
        printf("%-24s %-6s %-16s %12llu %7.3f  %s\n", t->name, lr_codec_name(t->codec), d, (unsigned long long)b,
               lr_tensor_bits_per_weight(t), p);
    }
    printf("\ntensors      %d, %llu parameters, %llu payload bytes\n", n, (unsigned long long)params,
           (unsigned long long)bytes);
    printf("bits/weight  %.3f whole model (embedding included)", params ? 8.0 * (double)bytes / (double)params : 0);
    if (pparams) printf(", %.3f decoder projections", 8.0 * (double)pbytes / (double)pparams);
    printf("\n");

    int rc = 0;
    if (verify) {
        lr_progress pr;
        uint64_t total = 0;
        for (int i = 0; i < n; i++) total += lr_model_tensor_at(m, i)->data_bytes;
        lr_progress_start(&pr, "verifying", total);
        t0 = lr_now();
        const int vrc = lr_model_verify_data(m, threads, &pr);
        lr_progress_finish(&pr);
        if (vrc == LR_OK) {
            printf("verify       ok: every checksum and payload (%.2f s)\n", lr_now() - t0);
        } else {
            printf("verify       FAILED: %s\n", lr_errmsg());
            rc = 1;
        }
    }
    lr_model_close(m);
    return lr_stdout_check("inspect", 0) ? 1 : rc;
}
