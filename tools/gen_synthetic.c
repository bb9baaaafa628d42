/* gen_synthetic: writes a synthetic Qwen3-architecture artifact with
 * deterministic random weights (loader/synthetic.h). */
#include "loader/synthetic.h"
#include "loader/tokenizer/tokenizer.h"
#include "util/args.h"
#include "util/atomic_file.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/program.h"
#include "util/read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gen_synthetic -c CONFIG -o OUT.lrt [--seed N] [--tokenizer PATH] [--threads N]\n"
            "                     [--gain-bits G] [--proj leech|f16] [--o-rotation heads|full] [--residual plain|rotated]\n"
            "                     [--align 64|4096] [--help]\n"
            "Writes a synthetic leechrt model artifact (docs/format.md): Leech-archive projections\n"
            "(random valid indices, lognormal row scales, G gain bits, default 1), int8 embedding\n"
            "and head (groups of 64, f16 scale+bias), f32 norms near 1 (the residual stream's exactly 1\n"
            "when it is held rotated).\n"
            "  -c CONFIG         %s\n"
            "  -o OUT            output file (written to a temp file, renamed at the end)\n"
            "  --seed N          random seed (default 1; decimal, or hexadecimal after 0x); same seed, same bytes\n"
            "  --tokenizer PATH  tokenizer.json or tokenizer.json.gz to embed as it is (optional; a\n"
            "                    tokenizer_config.json beside it is not read: import folds one in)\n"
            "  --threads N       generator threads (default: all cores)\n"
            "  --gain-bits G     Leech gain bits per block, 0..2 (default 1)\n"
            "  --proj P          leech (default: the 2-bit Leech archive) or f16 (the same shapes as f16,\n"
            "                    for side-by-side runs)\n"
            "  --o-rotation R    attn_output's input rotation: heads (per head, applied by the attention\n"
            "                    kernel; rotation kind 2; default) or full (the whole width, its own launch)\n"
            "  --residual K      rotated (default, as import's): the residual stream held rotated, no\n"
            "                    rotation before q|k|v or gate|up, the GEMVs take the norm and the add\n"
            "                    (the model is named ...-rotated); or plain: as a source model holds it\n"
            "  --align A         alignment of every tensor (default: 4096 for >= 1 MiB, else 64)\n",
            lr_synth_config_names());
}

int main(int argc, char **argv)
{
    lr_program_init("gen_synthetic");
    const char *cfg_name = NULL, *out = NULL;
    /* the rotated residual is the default, as import's (docs/engine.md: the faster step) */
    lr_synth_opts o = { .seed = 1, .gain_bits = 1, .rotated_residual = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        static const char *const valued[] = { "-c", "--config", "-o", "--out", "--seed", "--tokenizer", "--threads",
                                              "--gain-bits", "--proj", "--o-rotation", "--residual", "--align", NULL };
        if (!lr_arg_in(a, valued)) { fprintf(stderr, "gen_synthetic: unknown option %s\n", a); usage(stderr); return 2; }
        if (!v) { fprintf(stderr, "gen_synthetic: %s needs a value\n", a); usage(stderr); return 2; }
        if (!strcmp(a, "-c") || !strcmp(a, "--config")) cfg_name = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--seed")) {
            unsigned long long seed;
            if (lr_arg_u64("gen_synthetic", a, v, &seed)) return 2;
            o.seed = seed;
        }
        else if (!strcmp(a, "--tokenizer")) o.tokenizer_path = v;
        else if (!strcmp(a, "--threads")) { if (lr_arg_int("gen_synthetic", a, v, 0, 4096, &o.nthreads)) return 2; }
        else if (!strcmp(a, "--gain-bits")) { if (lr_arg_int("gen_synthetic", a, v, 0, 2, &o.gain_bits)) return 2; }
        else if (!strcmp(a, "--proj")) {
            if (strcmp(v, "f16") && strcmp(v, "leech")) { fprintf(stderr, "gen_synthetic: --proj takes f16 or leech\n"); return 2; }
            o.proj_f16 = !strcmp(v, "f16");
        }
        else if (!strcmp(a, "--o-rotation")) {
            if (strcmp(v, "heads") && strcmp(v, "full")) {
                fprintf(stderr, "gen_synthetic: --o-rotation takes heads or full\n");
                return 2;
            }
            o.o_rot_full = !strcmp(v, "full");
        }
        else if (!strcmp(a, "--residual")) {
            if (strcmp(v, "plain") && strcmp(v, "rotated")) {
                fprintf(stderr, "gen_synthetic: --residual takes plain or rotated\n");
                return 2;
            }
            o.rotated_residual = !strcmp(v, "rotated");
        }
        else if (!strcmp(a, "--align")) {
            int al;
            if (lr_arg_int("gen_synthetic", a, v, 0, 1 << 20, &al)) return 2;
            if (al != 0 && al != 64 && al != 4096) { fprintf(stderr, "gen_synthetic: --align %d (64 or 4096)\n", al); return 2; }
            o.align = (uint32_t)al;
        }
        else { fprintf(stderr, "gen_synthetic: unknown option %s\n", a); usage(stderr); return 2; }
        i++;
    }
    if (!cfg_name || !out) { usage(stderr); return 2; }
    lr_model_config cfg;
    if (lr_synth_config(cfg_name, &cfg)) { fprintf(stderr, "gen_synthetic: %s\n", lr_errmsg()); return 2; }
    /* the tokenizer file read once: the bytes checked are the bytes embedded */
    void *tok = NULL;
    if (o.tokenizer_path) {
        /* (a file past the tokenizer bound is refused before it is all read) */
        const lr_read_opts ro = { .max = lr_tok_json_max() };
        if (lr_read_file_opts(o.tokenizer_path, &ro, &tok, &o.tokenizer_n) ||
            lr_synth_check_tokenizer(tok, o.tokenizer_n, o.tokenizer_path, &cfg)) {
            fprintf(stderr, "gen_synthetic: %s\n", lr_errmsg());
            free(tok);
            return 1;
        }
        o.tokenizer = tok;
    }
    lr_progress p;
    o.progress = &p;
    double t0 = lr_now();
    const int rc = lr_synth_write(out, &cfg, &o);
    free(tok);
    if (rc) {
        fprintf(stderr, "gen_synthetic: %s\n", lr_errmsg());
        return 1;
    }
    struct stat st;
    double s = lr_now() - t0, gb = stat(out, &st) == 0 ? (double)st.st_size / 1e9 : 0;
    printf("%s: %s, %.3f GB in %.2f s (%.2f GB/s)\n", out, cfg.name, gb, s, s > 0 ? gb / s : 0);
    return 0;
}
