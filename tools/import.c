/* import: a Hugging Face folder or a GGUF file -> a leechrt artifact
 * (loader/import/import.h, docs/import.md). */
#include "loader/import/import.h"
#include "loader/import/source.h"
#include "loader/model.h"
#include "util/args.h"
#include "util/err.h"
#include "util/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: import (--hf DIR | --gguf FILE) -o OUT.lrt [--gain-bits G] [--keep f16] [--embed f16]\n"
            "              [--no-rotate] [--o-rotation heads|full] [--residual plain|rotated] [--quant-layers A:B] [--gptq CALIB.txt [--calib-tokens N] [--refit MODE]\n"
            "              [--gptq-damp D] [--gptq-target own|teacher [--target-damp D]]]\n"
            "              [--threads N] [--seed N] [--layers N] [--list] [--help]\n"
            "Imports a Qwen3 or Llama/Mistral model into a leechrt artifact (docs/import.md): projections\n"
            "rotated and quantized to the 2-bit Leech archive, embedding and head as int8 groups of 64,\n"
            "norms f32. The output is written to a temp file and renamed only when complete and valid.\n"
            "  --hf DIR          Hugging Face folder: config.json, *.safetensors, tokenizer.json\n"
            "  --gguf FILE       GGUF file (f32, f16, bf16, q8_0, q4_0, q4_1 tensors)\n"
            "  -o OUT            output artifact\n"
            "  --gain-bits G     Leech gain bits 0..2 (default 1)\n"
            "  --keep f16        store the projections as f16 instead of Leech (side-by-side runs)\n"
            "  --embed f16       store token_embd and output as f16 instead of int8 groups\n"
            "  --no-rotate       quantize without the input rotation (ablation)\n"
            "  --o-rotation R    attn_output's input rotation: heads (per head, applied inside the attention\n"
            "                    kernel: one launch fewer per layer; rotation kind 2; default) or full\n"
            "                    (the whole width, kind 1)\n"
            "  --residual R      the residual stream held rotated (rotated, default: the same model with\n"
            "                    the norms' gains folded into the matrices after them and the hidden\n"
            "                    width's rotation into every matrix writing or reading the stream: no\n"
            "                    rotation launch before q|k|v and gate|up, 3.5-9%% faster decode; a tied head\n"
            "                    is written untied, so the file grows by the head) or as in the source\n"
            "                    (plain; the default with --no-rotate or where the hidden width has no\n"
            "                    rotation; docs/import.md compares their quality)\n"
            "  --quant-layers A:B  Leech only for layers A..B-1, the other projections f16\n"
            "                    (sensitivity studies)\n"
            "  --gptq CALIB.txt  quantize with GPTQ: Hessians of each projection's input from the model\n"
            "                    run on this text (sequentially, through the already quantized layers)\n"
            "  --calib-tokens N  calibration tokens for --gptq (default 16384)\n"
            "  --gptq-damp D     with --gptq: damping added to diag(H), D times its mean (default 0.01)\n"
            "  --gptq-target T   with --gptq, what each projection aims at: teacher (the source model's\n"
            "                    output on the same tokens, GPTAQ's objective: the calibration runs the\n"
            "                    source beside the quantized model, twice its work; default) or own (W\n"
            "                    times the input the quantized model gives it; docs/import.md)\n"
            "  --target-damp D   with --gptq-target teacher: the target's damping, D times the mean of\n"
            "                    diag(H) (default 0.3)\n"
            "  --refit MODE      with --gptq, afterwards: `scales` refits each row's scale, `all` the gain\n"
            "                    centroids and the row scales (two rounds), to their least-squares optimum\n"
            "                    on the calibration second moment (docs/import.md: measured effects)\n"
            "  --threads N       worker threads (default: all cores)\n"
            "  --seed N          rotation seed base (default 1)\n"
            "  --layers N        import only the first N layers (a truncated model, for tests)\n"
            "  --list            print the source's config and tensors, write nothing\n");
}

static void print_config(const lr_src *s)
{
    const lr_model_config *c = &s->cfg;
    printf("%s (%s): %s \"%s\", hidden %u, layers %u, heads %u/%u x %u, ffn %u, vocab %u, context %u,\n"
           "  rope theta %g, norm eps %g, %s head, bos %d, eos %d, tokenizer %s (%zu bytes)\n",
           s->label, s->kind, c->arch, c->name, c->hidden, c->n_layers, c->n_heads, c->n_kv_heads, c->head_dim,
           c->intermediate, c->vocab, c->max_context, c->rope_theta, c->norm_eps, c->tied_head ? "tied" : "untied",
           c->bos_id == LR_NO_TOKEN ? -1 : (int)c->bos_id, c->eos_id == LR_NO_TOKEN ? -1 : (int)c->eos_id,
           s->tok_kind == LR_TOK_NONE ? "none" : "tokenizer.json", s->tok_bytes);
}

int main(int argc, char **argv)
{
    lr_program_init("import");
    const char *hf = NULL, *gguf = NULL, *out = NULL;
    int list = 0, target = -1; /* --gptq-target: -1 unset (teacher with --gptq), 0 own, 1 teacher */
    int residual = -1;         /* --residual: -1 unset (rotated where it can be), 0 plain, 1 rotated */
    lr_import_opts o = { .gain_bits = 1, .seed = 1, .progress = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if (!strcmp(a, "--no-rotate")) { o.no_rotate = 1; continue; }
        if (!strcmp(a, "--list")) { list = 1; continue; }
        if (!v) {
            /* the last argument: an option that takes a value, or not an option at all */
            static const char *const valued[] = { "--hf", "--gguf", "-o", "--out", "--gain-bits", "--gptq",
                                                  "--calib-tokens", "--gptq-damp", "--o-rotation", "--residual",
                                                  "--target-damp", "--gptq-target", "--refit", "--threads",
                                                  "--layers", "--seed", "--quant-layers", "--keep", "--embed", NULL };
            fprintf(stderr, lr_arg_in(a, valued) ? "import: %s needs a value\n" : "import: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        char *end = NULL;
        if (!strcmp(a, "--hf")) hf = v;
        else if (!strcmp(a, "--gguf")) gguf = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--gain-bits")) { if (lr_arg_int("import", a, v, 0, 2, &o.gain_bits)) return 2; }
        else if (!strcmp(a, "--gptq")) o.gptq_calib = v;
        else if (!strcmp(a, "--calib-tokens")) { if (lr_arg_int("import", a, v, 1, 1 << 30, &o.calib_tokens)) return 2; }
        else if (!strcmp(a, "--gptq-damp")) {
            o.gptq_damp = strtod(v, &end);
            if (end == v || *end || !(o.gptq_damp > 0 && o.gptq_damp <= 10)) {
                fprintf(stderr, "import: --gptq-damp %s (a number in (0, 10])\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--o-rotation")) {
            if (strcmp(v, "heads") && strcmp(v, "full")) {
                fprintf(stderr, "import: --o-rotation %s (heads or full)\n", v);
                return 2;
            }
            o.o_rot_full = !strcmp(v, "full");
        }
        else if (!strcmp(a, "--residual")) {
            if (strcmp(v, "plain") && strcmp(v, "rotated")) {
                fprintf(stderr, "import: --residual %s (plain or rotated)\n", v);
                return 2;
            }
            residual = !strcmp(v, "rotated");
        }
        else if (!strcmp(a, "--target-damp")) {
            o.target_damp = strtod(v, &end);
            if (end == v || *end || !(o.target_damp > 0 && o.target_damp <= 100)) {
                fprintf(stderr, "import: --target-damp %s (a number in (0, 100])\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--gptq-target")) {
            if (strcmp(v, "own") && strcmp(v, "teacher")) {
                fprintf(stderr, "import: --gptq-target %s (own or teacher)\n", v);
                return 2;
            }
            target = !strcmp(v, "teacher") ? 1 : 0;
        }
        else if (!strcmp(a, "--refit")) {
            if (strcmp(v, "scales") && strcmp(v, "all")) {
                fprintf(stderr, "import: --refit %s (scales or all)\n", v);
                return 2;
            }
            o.refit = !strcmp(v, "all") ? LR_REFIT_ALL : LR_REFIT_SCALES;
        }
        else if (!strcmp(a, "--threads")) { if (lr_arg_int("import", a, v, 0, 4096, &o.nthreads)) return 2; }
        else if (!strcmp(a, "--layers")) { if (lr_arg_int("import", a, v, 1, 1 << 20, &o.max_layers)) return 2; }
        else if (!strcmp(a, "--seed")) {
            unsigned long long seed;
            if (lr_arg_u64("import", a, v, &seed)) return 2;
            o.seed = seed;
        }
        else if (!strcmp(a, "--quant-layers")) {
            const char *colon = strchr(v, ':');
            char lo[32] = "";
            if (colon && (size_t)(colon - v) < sizeof lo) memcpy(lo, v, (size_t)(colon - v));
            /* both ends whole numbers (sscanf took "1:5x") */
            if (!colon || lr_parse_int(lo, 0, 1 << 20, &o.quant_lo) || lr_parse_int(colon + 1, 0, 1 << 20, &o.quant_hi) ||
                o.quant_hi <= o.quant_lo) {
                fprintf(stderr, "import: --quant-layers %s (A:B with 0 <= A < B)\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--keep") || !strcmp(a, "--embed")) {
            if (strcmp(v, "f16")) { fprintf(stderr, "import: %s %s (only f16)\n", a, v); return 2; }
            if (!strcmp(a, "--keep")) o.keep_f16 = 1;
            else o.embed_f16 = 1;
        } else { fprintf(stderr, "import: unknown option %s\n", a); usage(stderr); return 2; }
        if (end && *end) { fprintf(stderr, "import: %s %s is not a number\n", a, v); return 2; }
        i++;
    }
    if (!hf == !gguf || (!out && !list)) { usage(stderr); return 2; }
    if (o.gain_bits < 0 || o.gain_bits > 2) { fprintf(stderr, "import: --gain-bits %d (0..2)\n", o.gain_bits); return 2; }
    if (residual == 1 && o.no_rotate) {
        fprintf(stderr, "import: --residual rotated needs the rotation (not with --no-rotate)\n");
        return 2;
    }
    if (o.refit && !o.gptq_calib) {
        fprintf(stderr, "import: --refit needs --gptq\n");
        return 2;
    }
    if (target >= 0 && !o.gptq_calib) {
        fprintf(stderr, "import: --gptq-target needs --gptq\n");
        return 2;
    }
    o.gptq_asym = o.gptq_calib && target != 0;
    if (o.target_damp > 0 && !o.gptq_asym) {
        fprintf(stderr, "import: --target-damp needs --gptq with the teacher's target (not --gptq-target own)\n");
        return 2;
    }
    if (o.gptq_damp > 0 && !o.gptq_calib) {
        fprintf(stderr, "import: --gptq-damp needs --gptq\n");
        return 2;
    }
    if (o.calib_tokens < 0 || (o.calib_tokens && !o.gptq_calib)) {
        fprintf(stderr, "import: --calib-tokens needs --gptq and a positive count\n");
        return 2;
    }
    if (o.nthreads < 0 || o.max_layers < 0) { fprintf(stderr, "import: negative --threads or --layers\n"); return 2; }

    lr_src *s;
    if (hf ? lr_src_open_hf(hf, &s) : lr_src_open_gguf(gguf, &s)) {
        fprintf(stderr, "import: %s\n", lr_errmsg());
        return 1;
    }
    print_config(s);
    /* The rotated residual is the default since the forty-fifth session (docs/import.md); it
       needs the hidden width's rotation, so without one the default falls back to plain. */
    o.rotated_residual = residual == 1 || (residual < 0 && lr_import_residual_rotatable(s, &o));
    if (!list) {
        if (o.rotated_residual)
            printf("residual stream: rotated%s\n", s->cfg.tied_head ? " (the tied head is written untied: --residual plain "
                                                                      "keeps it tied, a smaller file)" : "");
        else
            printf("residual stream: plain%s\n", residual == 0 ? "" : o.no_rotate ? " (--no-rotate)"
                                                                 : " (the hidden width has no rotation)");
    }
    if (list) {
        for (int i = 0; i < s->n; i++) {
            const lr_src_tensor *t = &s->t[i];
            if (t->ndim == 2) printf("  %-22s [%llu, %llu]  %s\n", t->name, (unsigned long long)t->rows,
                                     (unsigned long long)t->cols, t->origin);
            else printf("  %-22s [%llu]  %s\n", t->name, (unsigned long long)t->cols, t->origin);
        }
        lr_src_close(s);
        return 0;
    }
    fflush(stdout);
    lr_import_stats st;
    int rc = lr_import_write(s, out, &o, &st);
    lr_src_close(s);
    if (rc) {
        fprintf(stderr, "import: %s\n", lr_errmsg());
        return 1;
    }
    printf("%s: %d tensors (%d leech, %d f16, %d int8g, %d f32), %llu weights, %.1f MB, %.1f s (quantize %.1f s)\n",
           out, st.tensors, st.leech, st.f16, st.int8g, st.f32, (unsigned long long)st.weights,
           (double)st.payload_bytes / 1e6, st.seconds, st.quant_seconds);
    if (st.calib_tokens)
        printf("  gptq: %d calibration tokens, forward pass and Hessians %.1f s\n", st.calib_tokens, st.calib_seconds);
    if (st.leech)
        printf("  leech relative squared error (sampled rows): %.4f overall, worst %.4f (%s)\n", st.rel_err,
               st.worst_rel_err, st.worst);
    return 0;
}
