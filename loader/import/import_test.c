/* The importer on small synthetic models written by the test itself: the
 * config.json reader, the Hugging Face name mapping (single file and
 * shards), the GGUF dequantizers against hand-computed blocks, the GGUF
 * source (metadata, names, types), llama.cpp's Q/K permutation undone (the
 * GGUF and Hugging Face sources of one model agree), the GGUF tokenizer as
 * tokenizer.json, and the pipeline end to end (f16 exact, Leech within the
 * expected error, int8 groups, atomic output, truncated layers). */
#include "kernels/rotation.h"
#include "loader/artifact_write.h"
#include "loader/gguf/gguf.h"
#include "loader/import/gguf_tokjson.h"
#include "loader/import/hf_config.h"
#include "loader/import/import.h"
#include "loader/import/import_testlib.h"
#include "loader/tokenizer/tokenizer.h"
#include "test/t.h"
#include "util/err.h"
#include "util/gunzip.h"
#include "util/log.h"

#include <dirent.h>

/* ---- config.json ---- */

static int parse_cfg(const char *json, lr_model_config *c)
{
    return lr_hf_config_parse(json, strlen(json), "config.json", "folder", c);
}

static int test_hf_config(void)
{
    lr_model_config c;
    lr_set_warn_handler(NULL); /* the defaults filled in warn */
    T_OK(parse_cfg("{\"architectures\": [\"Qwen3ForCausalLM\"], \"hidden_size\": 1024, \"num_hidden_layers\": 28,"
                   " \"num_attention_heads\": 16, \"num_key_value_heads\": 8, \"head_dim\": 128, \"intermediate_size\": 3072,"
                   " \"vocab_size\": 151936, \"max_position_embeddings\": 40960, \"rope_theta\": 1000000, \"rms_norm_eps\": 1e-06,"
                   " \"tie_word_embeddings\": true, \"bos_token_id\": 151643, \"eos_token_id\": 151645, \"hidden_act\": \"silu\","
                   " \"use_sliding_window\": false, \"sliding_window\": 32768, \"rope_scaling\": null, \"attention_bias\": false}",
                   &c));
    T_ASSERT(!strcmp(c.arch, "qwen3") && c.hidden == 1024 && c.n_layers == 28 && c.n_heads == 16 && c.n_kv_heads == 8 &&
             c.head_dim == 128 && c.intermediate == 3072 && c.vocab == 151936 && c.max_context == 40960 &&
             c.rope_theta == 1e6 && c.norm_eps == 1e-6 && c.tied_head == 1 && c.bos_id == 151643 && c.eos_id == 151645 &&
             !strcmp(c.name, "folder"), "qwen3 fields");
    /* Llama: no head_dim (hidden / heads), no kv heads (= heads), eos list, defaults. */
    T_OK(parse_cfg("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 576, \"num_hidden_layers\": 30,"
                   " \"num_attention_heads\": 9, \"intermediate_size\": 1536, \"vocab_size\": 49152,"
                   " \"max_position_embeddings\": 8192, \"eos_token_id\": [2, 0], \"_name_or_path\": \"org/SmolLM2\"}", &c));
    T_ASSERT(!strcmp(c.arch, "llama") && c.head_dim == 64 && c.n_kv_heads == 9 && c.eos_id == 2 && c.bos_id == LR_NO_TOKEN &&
             c.rope_theta == 10000 && c.tied_head == 0 && !strcmp(c.name, "SmolLM2"), "llama defaults");
    /* Mistral: a sliding window shorter than the context limits it. */
    T_OK(parse_cfg("{\"architectures\": [\"MistralForCausalLM\"], \"hidden_size\": 4096, \"num_hidden_layers\": 32,"
                   " \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, \"vocab_size\": 32000,"
                   " \"max_position_embeddings\": 32768, \"sliding_window\": 4096, \"rope_theta\": 10000.0}", &c));
    T_ASSERT(!strcmp(c.arch, "llama") && c.max_context == 4096 && c.head_dim == 128, "mistral window");
    static const struct { const char *json, *want; int code; } bad[] = {
        { "{\"architectures\": [\"GPT2LMHeadModel\"]}", "GPT2LMHeadModel", LR_EUNSUPPORTED },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"num_hidden_layers\": 2}", "hidden_size", LR_EFORMAT },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": \"64\", \"num_hidden_layers\": 2}", "hidden_size",
          LR_EFORMAT },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}}",
          "rope_scaling", LR_EUNSUPPORTED },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"attention_bias\": true}", "attention_bias", LR_EUNSUPPORTED },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"hidden_act\": \"gelu\"}", "hidden_act", LR_EUNSUPPORTED },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"quantization_config\": {}}", "quantized", LR_EUNSUPPORTED },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 3,"
          " \"intermediate_size\": 8, \"vocab_size\": 8}", "head_dim", LR_EFORMAT },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": -2}", "num_hidden_layers",
          LR_EFORMAT },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"eos_token_id\": -1}", "eos_token_id", LR_EFORMAT },
        /* flags and the window with the wrong type: refused (once read as false / no window) */
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"attention_bias\": 1}", "attention_bias is not a boolean", LR_EFORMAT },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"mlp_bias\": \"true\"}", "mlp_bias is not a boolean", LR_EFORMAT },
        { "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 8, \"vocab_size\": 8, \"sliding_window\": \"4096\"}", "sliding_window", LR_EFORMAT },
        { "[]", "not a JSON object", LR_EFORMAT },
        { "{\"a\": ", "JSON", LR_EFORMAT },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = parse_cfg(bad[i].json, &c);
        T_ASSERT(rc == bad[i].code && strstr(lr_errmsg(), bad[i].want) && strstr(lr_errmsg(), "config.json"),
                 "case %zu: rc %d, %s", i, rc, rc ? lr_errmsg() : "accepted");
    }
    return T_PASS;
}

/* ---- Hugging Face folders ---- */

static int same_values(const lr_src *s, const tmodel *m, double tol, const char **bad)
{
    for (int i = 0; i < m->n; i++) {
        const tm_tensor *t = &m->t[i];
        const lr_src_tensor *st = lr_src_find(s, t->name);
        *bad = t->name;
        if (!st || st->ndim != t->ndim || st->rows != t->rows || st->cols != t->cols) return 0;
        float *v = malloc(t->rows * t->cols * sizeof *v);
        if (lr_src_read(s, st, 0, t->rows, v)) { free(v); return 0; }
        int ok = 1;
        for (uint64_t k = 0; k < t->rows * t->cols && ok; k++) ok = fabs((double)v[k] - t->v[k]) <= tol;
        free(v);
        if (!ok) return 0;
    }
    return 1;
}

static int test_hf_source(void)
{
    char dir[256], sub[300];
    tl_tmpdir(dir, sizeof dir, "hf");
    T_ASSERT(dir[0], "mkdtemp");
    static const char *const dtypes[] = { "F32", "F16", "BF16" };
    for (int tied = 0; tied < 2; tied++)
        for (int d = 0; d < 3; d++) {
            lr_model_config cfg = tm_config("qwen3", tied);
            tmodel m;
            tm_make(&m, &cfg, 10 + (uint64_t)d);
            snprintf(sub, sizeof sub, "%s/m%d%d", dir, tied, d);
            int shards = d == 1 ? 3 : 1;
            /* A tied checkpoint that still stores lm_head.weight: ignored. */
            T_ASSERT(tm_write_hf(&m, sub, dtypes[d], shards, tied ? "lm_head.weight" : NULL) == 0, "write");
            lr_src *s;
            T_OK(lr_src_open_hf(sub, &s));
            T_ASSERT(!strcmp(s->cfg.arch, "qwen3") && s->cfg.hidden == 128 && s->cfg.tied_head == tied &&
                     !strcmp(s->cfg.name, "tiny-qwen3"), "config");
            T_ASSERT(s->n == m.n, "%d tensors, want %d", s->n, m.n);
            /* Canonical order and the mapping of every name. */
            T_ASSERT(!strcmp(s->t[0].name, "token_embd") && !strcmp(s->t[1].name, "blk.0.attn_norm") &&
                     !strcmp(s->t[2].name, "blk.0.attn_q") && !strcmp(s->t[5].name, "blk.0.attn_q_norm") &&
                     !strcmp(s->t[7].name, "blk.0.attn_output") && !strcmp(s->t[11].name, "blk.0.ffn_down") &&
                     !strcmp(s->t[12].name, "blk.1.attn_norm"), "order");
            T_ASSERT(!strcmp(s->t[s->n - 1].name, tied ? "output_norm" : "output"), "last tensor");
            const lr_src_tensor *q = lr_src_find(s, "blk.1.attn_q");
            T_ASSERT(q && strstr(q->origin, "model.layers.1.self_attn.q_proj.weight") && strstr(q->origin, dtypes[d]),
                     "origin %s", q ? q->origin : "-");
            T_ASSERT(s->tok_kind == LR_TOK_JSON_GZIP && s->tok_bytes > 0, "tokenizer");
            const char *bad;
            T_ASSERT(same_values(s, &m, 0, &bad), "values of %s (%s)", bad, dtypes[d]);
            lr_src_close(s);
            tm_free(&m);
        }
    tl_rmrf(dir);
    return T_PASS;
}

/* The stored tokenizer (gunzipped) of an opened source, loaded alone, as the
   runtime loads it from the artifact; *text gets its JSON (free it). */
static lr_tok *stored_tok(const lr_src *s, char **text)
{
    size_t n;
    lr_tok *t = NULL;
    *text = NULL;
    if (s->tok_kind != LR_TOK_JSON_GZIP || lr_gunzip(s->tok, s->tok_bytes, 1u << 30, "test", text, &n) ||
        lr_tok_load_hf_mem(*text, n, NULL, 0, "stored", &t))
        return NULL;
    return t;
}

/* A tiny tied Qwen3 as a Hugging Face folder (f32 safetensors): sub is
 * DIR/m, DIR a fresh temporary folder tagged tag. 0 on success. */
static int hf_tiny_folder(char *dir, size_t dn, char *sub, size_t sn, const char *tag)
{
    tl_tmpdir(dir, dn, tag);
    if (!dir[0]) return -1;
    lr_model_config cfg = tm_config("qwen3", 1);
    tmodel m;
    tm_make(&m, &cfg, 3);
    snprintf(sub, sn, "%s/m", dir);
    const int rc = tm_write_hf(&m, sub, "F32", 1, NULL);
    tm_free(&m);
    return rc;
}

/* tokenizer_config.json's add_bos_token reaches the artifact through the
   stored tokenizer.json: written into its post-processor when the pair says
   something else than tokenizer.json alone, the file kept byte for byte
   otherwise. */
static int test_hf_tokenizer_bos(void)
{
#define J(post)                                                                                                    \
    "{\"added_tokens\":[{\"id\":2,\"content\":\"<s>\",\"special\":true}],\"pre_tokenizer\":{\"type\":\"ByteLevel\"}," \
    "\"post_processor\":" post ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[]}}"
    static const char plain[] = J("null");
    static const char templ[] = J("{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\"}},"
                                  "{\"Sequence\":{\"id\":\"A\"}}]}");
#undef J
    static const struct {
        const char *json, *config; /* config NULL: no tokenizer_config.json */
        int add, kept;
    } cases[] = {
        { plain, NULL, 0, 1 },
        { templ, NULL, 1, 1 },
        { plain, "{\"add_bos_token\": true, \"bos_token\": {\"content\": \"<s>\"}}", 1, 0 },
        { templ, "{\"add_bos_token\": false}", 0, 0 },
        { templ, "{\"add_bos_token\": true, \"bos_token\": \"<s>\"}", 1, 1 },
        { plain, "{\"add_bos_token\": false}", 0, 1 },
        { plain, "{not json", 0, 1 },
        /* transformers' Llama/Gemma classes: no add_bos_token is true, null is false */
        { plain, "{\"tokenizer_class\": \"LlamaTokenizerFast\", \"bos_token\": \"<s>\"}", 1, 0 },
        { plain, "{\"tokenizer_class\": \"GemmaTokenizer\", \"bos_token\": \"<s>\"}", 1, 0 },
        { templ, "{\"tokenizer_class\": \"LlamaTokenizer\", \"bos_token\": \"<s>\"}", 1, 1 },
        { templ, "{\"tokenizer_class\": \"GemmaTokenizerFast\", \"add_bos_token\": null}", 0, 0 },
        { plain, "{\"tokenizer_class\": \"PreTrainedTokenizerFast\", \"bos_token\": \"<s>\"}", 0, 1 },
    };
    char dir[256], sub[300], path[400];
    T_ASSERT(hf_tiny_folder(dir, sizeof dir, sub, sizeof sub, "hfbos") == 0, "the HF folder");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(path, sizeof path, "%s/tokenizer.json", sub);
        T_ASSERT(tl_write(path, cases[i].json, strlen(cases[i].json)) == 0, "tokenizer.json");
        snprintf(path, sizeof path, "%s/tokenizer_config.json", sub);
        unlink(path);
        if (cases[i].config) T_ASSERT(tl_write(path, cases[i].config, strlen(cases[i].config)) == 0, "config");
        lr_src *s;
        T_OK(lr_src_open_hf(sub, &s));
        char *text;
        lr_tok *t = stored_tok(s, &text);
        T_ASSERT(t, "case %zu: the stored tokenizer does not load: %s", i, lr_errmsg());
        T_ASSERT(lr_tok_add_bos(t) == cases[i].add && (!cases[i].add || lr_tok_bos(t) == 2),
                 "case %zu: add_bos %d bos %d, want %d", i, lr_tok_add_bos(t), lr_tok_bos(t), cases[i].add);
        T_ASSERT((strcmp(text, cases[i].json) == 0) == cases[i].kept, "case %zu: the file was%s rewritten", i,
                 cases[i].kept ? "" : " not");
        lr_tok_free(t);
        free(text);
        lr_src_close(s);
    }
    tl_rmrf(dir);
    return T_PASS;
}

/* The import reads and stores a tokenizer.json only up to the bound every
   reader has (LR_TOK_JSON_MAX, lowered here): exactly the bound taken, a
   byte more refused, and so is one that the folded tokenizer_config.json
   takes past it. */
static int hf_tokenizer_bound(const char *sub, const char *json, size_t n)
{
    char path[400];
    lr_src *s;
    snprintf(path, sizeof path, "%s/tokenizer.json", sub);
    T_ASSERT(tl_write(path, json, n) == 0, "tokenizer.json");
    lr_tok_json_set_max(n);
    T_OK(lr_src_open_hf(sub, &s));
    lr_src_close(s);
    lr_tok_json_set_max(n - 1);
    T_ASSERT(lr_src_open_hf(sub, &s) != LR_OK && strstr(lr_errmsg(), "tokenizer.json"), "%zu bytes past %zu taken", n, n - 1);
    lr_tok_json_set_max(n);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", sub);
    static const char cfg[] = "{\"add_bos_token\": true, \"bos_token\": \"<s>\"}";
    T_ASSERT(tl_write(path, cfg, sizeof cfg - 1) == 0, "config");
    T_ASSERT(lr_src_open_hf(sub, &s) != LR_OK && strstr(lr_errmsg(), "past"), "the folded tokenizer taken: %s", lr_errmsg());
    return T_PASS;
}

static int test_hf_tokenizer_bound(void)
{
    static const char json[] = "{\"added_tokens\":[{\"id\":2,\"content\":\"<s>\",\"special\":true}],"
                               "\"pre_tokenizer\":{\"type\":\"ByteLevel\"},\"post_processor\":null,"
                               "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[]}}";
    char dir[256], sub[300];
    T_ASSERT(hf_tiny_folder(dir, sizeof dir, sub, sizeof sub, "hfbound") == 0, "the HF folder");
    const int r = hf_tokenizer_bound(sub, json, sizeof json - 1);
    lr_tok_json_set_max(0);
    tl_rmrf(dir);
    return r;
}

static int test_hf_rejects(void)
{
    char dir[256], sub[300], path[400];
    tl_tmpdir(dir, sizeof dir, "hfbad");
    T_ASSERT(dir[0], "mkdtemp");
    lr_model_config cfg = tm_config("qwen3", 0);
    tmodel m;
    tm_make(&m, &cfg, 3);
    lr_src *s;
    static const struct { const char *extra, *want; } extras[] = {
        { "model.layers.0.self_attn.q_proj.bias", "biases" },
        { "model.layers.0.mlp.experts.0.weight", "model.layers.0.mlp.experts.0.weight" },
        { "model.layers.5.input_layernorm.weight", "layer 5" },
        { "vision_tower.weight", "vision_tower.weight" },
    };
    for (size_t i = 0; i < sizeof extras / sizeof *extras; i++) {
        snprintf(sub, sizeof sub, "%s/x%zu", dir, i);
        T_ASSERT(tm_write_hf(&m, sub, "F16", 1, extras[i].extra) == 0, "write");
        T_ASSERT(lr_src_open_hf(sub, &s) != LR_OK && strstr(lr_errmsg(), extras[i].want), "extra %s: %s", extras[i].extra,
                 lr_errmsg());
    }
    /* A missing tensor, a wrong shape. */
    tm_tensor saved = m.t[3];
    m.t[3] = m.t[--m.n];
    snprintf(sub, sizeof sub, "%s/missing", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F16", 1, NULL) == 0, "write");
    T_ASSERT(lr_src_open_hf(sub, &s) == LR_EFORMAT && strstr(lr_errmsg(), saved.name) && strstr(lr_errmsg(), "missing"),
             "missing: %s", lr_errmsg());
    m.t[m.n++] = m.t[3];
    m.t[3] = saved;
    m.t[3].cols /= 2; /* blk.0.attn_k with half its columns */
    snprintf(sub, sizeof sub, "%s/shape", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F16", 1, NULL) == 0, "write");
    T_ASSERT(lr_src_open_hf(sub, &s) == LR_EFORMAT && strstr(lr_errmsg(), "k_proj") && strstr(lr_errmsg(), "[64, 64]") &&
             strstr(lr_errmsg(), "[64, 128]"), "shape: %s", lr_errmsg());
    m.t[3].cols *= 2;
    /* A config.json that is not JSON, a folder without weights, a hostile shard. */
    snprintf(sub, sizeof sub, "%s/cfg", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F16", 1, NULL) == 0, "write");
    snprintf(path, sizeof path, "%s/config.json", sub);
    T_ASSERT(tl_write(path, "{\"hidden_size\": ", 16) == 0, "write");
    T_ASSERT(lr_src_open_hf(sub, &s) == LR_EFORMAT && strstr(lr_errmsg(), "config.json"), "config: %s", lr_errmsg());
    snprintf(sub, sizeof sub, "%s/noweights", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F16", 1, NULL) == 0, "write");
    snprintf(path, sizeof path, "%s/model.safetensors", sub);
    T_ASSERT(unlink(path) == 0, "unlink");
    T_ASSERT(lr_src_open_hf(sub, &s) != LR_OK && strstr(lr_errmsg(), "safetensors"), "no weights: %s", lr_errmsg());
    T_ASSERT(tl_write(path, "\x10\0\0\0\0\0\0\0{\"a\": 1}        ", 24) == 0, "write");
    T_ASSERT(lr_src_open_hf(sub, &s) == LR_EFORMAT && strstr(lr_errmsg(), "model.safetensors"), "hostile: %s", lr_errmsg());
    /* An index naming a file outside the folder. */
    snprintf(sub, sizeof sub, "%s/index", dir);
    T_ASSERT(tm_write_hf(&m, sub, "F16", 2, NULL) == 0, "write");
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", sub);
    const char *evil = "{\"weight_map\": {\"model.norm.weight\": \"../../etc/passwd\"}}";
    T_ASSERT(tl_write(path, evil, strlen(evil)) == 0, "write");
    T_ASSERT(lr_src_open_hf(sub, &s) == LR_EFORMAT && strstr(lr_errmsg(), "not a file name"), "index: %s", lr_errmsg());
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

/* ---- GGML dequantization against hand-computed blocks ---- */

static int test_ggml_dequant(void)
{
    float out[64];
    /* q8_0: d = 0.5 (f16 0x3800), q = -128, -1, 0, 1, 127, then 2, 3, ... */
    uint8_t q8[34] = { 0x00, 0x38 };
    int8_t qv[32] = { -128, -1, 0, 1, 127 };
    for (int i = 5; i < 32; i++) qv[i] = (int8_t)(i - 3);
    memcpy(q8 + 2, qv, 32);
    T_OK(lr_ggml_dequant(LR_GGML_Q8_0, q8, 32, out));
    T_ASSERT(out[0] == -64.0f && out[1] == -0.5f && out[2] == 0 && out[3] == 0.5f && out[4] == 63.5f && out[31] == 14.0f,
             "q8_0: %g %g %g %g %g %g", out[0], out[1], out[2], out[3], out[4], out[31]);
    /* q4_0: d = 2 (0x4000); byte j = (lo = j) | (hi = 15 - j) << 4:
     * weight j = (j - 8) * 2, weight j + 16 = (7 - j) * 2. */
    uint8_t q40[18] = { 0x00, 0x40 };
    for (int j = 0; j < 16; j++) q40[2 + j] = (uint8_t)(j | (15 - j) << 4);
    T_OK(lr_ggml_dequant(LR_GGML_Q4_0, q40, 32, out));
    for (int j = 0; j < 16; j++)
        T_ASSERT(out[j] == (float)((j - 8) * 2) && out[j + 16] == (float)((7 - j) * 2), "q4_0 %d: %g %g", j, out[j], out[j + 16]);
    /* q4_1: d = 0.25 (0x3400), m = -1 (0xbc00); same nibbles: w = q * 0.25 - 1. */
    uint8_t q41[20] = { 0x00, 0x34, 0x00, 0xbc };
    for (int j = 0; j < 16; j++) q41[4 + j] = (uint8_t)(j | (15 - j) << 4);
    T_OK(lr_ggml_dequant(LR_GGML_Q4_1, q41, 32, out));
    for (int j = 0; j < 16; j++)
        T_ASSERT(out[j] == j * 0.25f - 1 && out[j + 16] == (15 - j) * 0.25f - 1, "q4_1 %d: %g %g", j, out[j], out[j + 16]);
    /* Two blocks in a row, misaligned source. */
    uint8_t two[1 + 2 * 34];
    memcpy(two + 1, q8, 34);
    memcpy(two + 35, q8, 34);
    two[35] = 0x00, two[36] = 0x3c; /* second block d = 1 */
    T_OK(lr_ggml_dequant(LR_GGML_Q8_0, two + 1, 64, out));
    T_ASSERT(out[0] == -64.0f && out[32] == -128.0f && out[63] == 28.0f, "two blocks");
    /* f16, bf16, f32 */
    uint8_t h[4] = { 0x00, 0x3c, 0x00, 0xc2 }, bf[4] = { 0x80, 0x3f, 0x40, 0xc0 };
    T_OK(lr_ggml_dequant(LR_GGML_F16, h, 2, out));
    T_ASSERT(out[0] == 1.0f && out[1] == -3.0f, "f16");
    T_OK(lr_ggml_dequant(LR_GGML_BF16, bf, 2, out));
    T_ASSERT(out[0] == 1.0f && out[1] == -3.0f, "bf16");
    float f[2] = { 1.25f, -7.5f };
    T_OK(lr_ggml_dequant(LR_GGML_F32, f, 2, out));
    T_ASSERT(out[0] == 1.25f && out[1] == -7.5f, "f32");
    T_ASSERT(lr_ggml_dequant(LR_GGML_Q8_0, q8, 31, out) == LR_EINVAL, "partial block");
    T_ASSERT(lr_ggml_dequant(12 /* q4_K */, q8, 256, out) == LR_EUNSUPPORTED, "q4_K");
    T_ASSERT(lr_ggml_row_bytes(LR_GGML_Q4_1, 64) == 40 && lr_ggml_row_bytes(LR_GGML_Q8_0, 33) == 0, "row bytes");
    return T_PASS;
}

/* ---- GGUF sources ---- */

static int test_gguf_source(void)
{
    char dir[256], path[300];
    tl_tmpdir(dir, sizeof dir, "gguf");
    T_ASSERT(dir[0], "mkdtemp");
    lr_set_warn_handler(NULL);
    /* Exact types: values come back bit for bit. */
    lr_model_config cfg = tm_config("qwen3", 1);
    tmodel m;
    tm_make(&m, &cfg, 21);
    snprintf(path, sizeof path, "%s/exact.gguf", dir);
    tl_gguf_opts o = { LR_GGML_F16, LR_GGML_BF16, LR_GGML_F32, LR_GGML_F32, 0, NULL, 0 };
    T_ASSERT(tm_write_gguf(&m, path, &o) == 0, "write");
    lr_src *s;
    T_OK(lr_src_open_gguf(path, &s));
    const lr_model_config *c = &s->cfg;
    T_ASSERT(!strcmp(c->arch, "qwen3") && c->hidden == 128 && c->n_layers == 2 && c->n_heads == 4 && c->n_kv_heads == 2 &&
             c->head_dim == 32 && c->intermediate == 192 && c->vocab == 160 && c->max_context == 256 &&
             c->rope_theta == 1e6 && fabs(c->norm_eps - 1e-6) < 1e-12 && c->tied_head && c->bos_id == 1 && c->eos_id == 2 &&
             !strcmp(c->name, "tiny-qwen3") && s->tok_kind == LR_TOK_NONE, "config from metadata");
    const char *bad;
    T_ASSERT(s->n == m.n && same_values(s, &m, 0, &bad), "values of %s", bad);
    T_ASSERT(!strcmp(s->t[0].name, "token_embd") && strstr(lr_src_find(s, "blk.1.ffn_up")->origin, "blk.1.ffn_up.weight (bf16)"),
             "names");
    lr_src_close(s);
    /* Block types: within half a quantization step of the originals. */
    static const uint32_t types[3] = { LR_GGML_Q8_0, LR_GGML_Q4_0, LR_GGML_Q4_1 };
    for (int k = 0; k < 3; k++) {
        tl_gguf_opts q = { types[k], types[k], LR_GGML_F32, types[k], 0, NULL, 0 };
        cfg = tm_config("qwen3", 0);
        tmodel mq;
        tm_make(&mq, &cfg, 30 + (uint64_t)k);
        T_ASSERT(tm_write_gguf(&mq, path, &q) == 0, "write");
        T_OK(lr_src_open_gguf(path, &s));
        T_ASSERT(!s->cfg.tied_head, "untied");
        for (int i = 0; i < mq.n; i++) {
            const tm_tensor *t = &mq.t[i];
            const lr_src_tensor *st = lr_src_find(s, t->name);
            T_ASSERT(st, "%s", t->name);
            float *v = malloc(t->rows * t->cols * sizeof *v);
            T_OK(lr_src_read(s, st, 0, t->rows, v));
            for (uint64_t b = 0; b < t->rows * t->cols; b += 32) {
                float mn = t->v[b], mx = t->v[b], amax = 0;
                for (int j = 0; j < 32 && b + (uint64_t)j < t->rows * t->cols; j++) {
                    float x = t->v[b + (uint64_t)j];
                    mn = fminf(mn, x), mx = fmaxf(mx, x), amax = fmaxf(amax, fabsf(x));
                }
                float step = t->ndim == 1 ? 0 : k == 0 ? amax / 127 : k == 1 ? amax / 7 : (mx - mn) / 15;
                for (int j = 0; j < 32 && b + (uint64_t)j < t->rows * t->cols; j++) {
                    float e = fabsf(v[b + (uint64_t)j] - t->v[b + (uint64_t)j]);
                    T_ASSERT(e <= 0.51f * step * 1.01f + 1e-6f, "%s (%s) [%llu]: %g vs %g (step %g)", t->name,
                             lr_ggml_type_name(types[k]), (unsigned long long)(b + (uint64_t)j), v[b + (uint64_t)j],
                             t->v[b + (uint64_t)j], step);
                }
            }
            free(v);
        }
        lr_src_close(s);
        tm_free(&mq);
    }
    /* Rejected: an unsupported type, a rope_freqs table, a bias, an unknown arch. */
    static const struct { const char *extra, *want; } extras[] = {
        { "rope_freqs.weight", "rope scaling" }, { "blk.0.attn_q.bias", "biases" }, { "blk.0.attn_q_norm.weight", NULL },
        { "mm.0.weight", "mm.0.weight" },
    };
    for (size_t i = 0; i < sizeof extras / sizeof *extras; i++) {
        tl_gguf_opts x = o;
        x.extra_tensor = extras[i].extra;
        T_ASSERT(tm_write_gguf(&m, path, &x) == 0, "write");
        int rc = lr_src_open_gguf(path, &s);
        T_ASSERT(rc != LR_OK && (!extras[i].want || strstr(lr_errmsg(), extras[i].want)), "%s: %s", extras[i].extra,
                 rc ? lr_errmsg() : "accepted");
    }
    /* A type that is not imported: patch blk.0.ffn_up's type to q5_0 (its
     * 32-weight blocks fit in the bytes of the f16 tensor). */
    size_t n;
    uint8_t *bytes = tm_gguf_bytes(&m, &o, &n);
    const char *nm = "blk.0.ffn_up.weight";
    uint8_t *at = memmem(bytes, n, nm, strlen(nm));
    T_ASSERT(at, "tensor info");
    at += strlen(nm) + 4 + 2 * 8; /* name, n_dims, two dims: the type */
    T_ASSERT(at[0] == LR_GGML_BF16 && at[1] == 0, "type field found");
    at[0] = 6; /* q5_0 */
    T_ASSERT(tl_write(path, bytes, n) == 0, "write");
    free(bytes);
    T_ASSERT(lr_src_open_gguf(path, &s) == LR_EUNSUPPORTED && strstr(lr_errmsg(), "blk.0.ffn_up.weight") &&
             strstr(lr_errmsg(), "q5_0"), "q5_0: %s", lr_errmsg());
    snprintf(m.cfg.arch, sizeof m.cfg.arch, "gemma3");
    T_ASSERT(tm_write_gguf(&m, path, &o) == 0, "write");
    T_ASSERT(lr_src_open_gguf(path, &s) == LR_EUNSUPPORTED && strstr(lr_errmsg(), "gemma3"), "arch: %s", lr_errmsg());
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

/* The same Llama model as a Hugging Face folder and as a GGUF file (Q/K
 * permuted the llama.cpp way): the two sources must agree exactly. */
static int test_qk_permutation(void)
{
    char dir[256], hf[300], gg[300];
    tl_tmpdir(dir, sizeof dir, "perm");
    T_ASSERT(dir[0], "mkdtemp");
    /* The index formula against the reshape/swapaxes definition. */
    for (uint64_t hd = 2; hd <= 64; hd += 2)
        for (uint64_t h = 0; h < 3; h++)
            for (uint64_t i = 0; i < hd / 2; i++)
                for (uint64_t s = 0; s < 2; s++)
                    T_ASSERT(lr_qk_gguf_row(h * hd + s * (hd / 2) + i, hd) == (h * (hd / 2) + i) * 2 + s, "hd %llu",
                             (unsigned long long)hd);
    lr_set_warn_handler(NULL);
    lr_model_config cfg = tm_config("llama", 0);
    tmodel m;
    tm_make(&m, &cfg, 5);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(gg, sizeof gg, "%s/m.gguf", dir);
    T_ASSERT(tm_write_hf(&m, hf, "F32", 1, NULL) == 0, "write hf");
    tl_gguf_opts o = { LR_GGML_F32, LR_GGML_F32, LR_GGML_F32, LR_GGML_F32, 0, NULL, 0 };
    T_ASSERT(tm_write_gguf(&m, gg, &o) == 0, "write gguf");
    lr_src *a, *b;
    T_OK(lr_src_open_hf(hf, &a));
    T_OK(lr_src_open_gguf(gg, &b));
    T_ASSERT(!strcmp(a->cfg.arch, "llama") && !strcmp(b->cfg.arch, "llama") && a->n == b->n && a->n == m.n &&
             !lr_src_find(a, "blk.0.attn_q_norm"), "llama tensor sets");
    for (int i = 0; i < a->n; i++) {
        const lr_src_tensor *x = &a->t[i], *y = &b->t[i];
        T_ASSERT(!strcmp(x->name, y->name) && x->rows == y->rows && x->cols == y->cols, "tensor %d", i);
        float *u = malloc(x->rows * x->cols * 4), *v = malloc(x->rows * x->cols * 4);
        T_OK(lr_src_read(a, x, 0, x->rows, u));
        T_OK(lr_src_read(b, y, 0, y->rows, v));
        T_ASSERT(!memcmp(u, v, x->rows * x->cols * 4), "%s differs between HF and GGUF", x->name);
        /* Partial reads through the permutation. */
        if (x->rows > 5) {
            T_OK(lr_src_read(b, y, 3, 2, v));
            T_ASSERT(!memcmp(u + 3 * x->cols, v, 2 * x->cols * 4), "%s rows 3..4", x->name);
        }
        free(u);
        free(v);
    }
    lr_src_close(b);
    /* Written without the permutation, the GGUF's Q differs: the check above bites. */
    o.no_permute = 1;
    T_ASSERT(tm_write_gguf(&m, gg, &o) == 0, "write gguf");
    T_OK(lr_src_open_gguf(gg, &b));
    const lr_src_tensor *x = lr_src_find(a, "blk.0.attn_q"), *y = lr_src_find(b, "blk.0.attn_q");
    float *u = malloc(x->rows * x->cols * 4), *v = malloc(x->rows * x->cols * 4);
    T_OK(lr_src_read(a, x, 0, x->rows, u));
    T_OK(lr_src_read(b, y, 0, y->rows, v));
    T_ASSERT(memcmp(u, v, x->rows * x->cols * 4) != 0, "unpermuted file reads the same");
    free(u);
    free(v);
    lr_src_close(a);
    lr_src_close(b);
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

/* ---- GGUF tokenizer as tokenizer.json ---- */

/* The two tokenizers of one GGUF (its own reader's and through the converted
 * tokenizer.json), the JSON, the parsed GGUF and the built file, freed. */
static void tok_pair_close(lr_tok *ta, lr_tok *tb, char *json, lr_gguf *g, void *file)
{
    lr_tok_free(ta);
    lr_tok_free(tb);
    free(json);
    lr_gguf_close(g);
    free(file);
}

/* A GGUF's add_bos_token becomes the converted tokenizer.json's
   post-processor: both tokenizers add the same BOS, or none. */
static int test_gguf_tokenizer_bos(void)
{
    /* -1: no add_bos_token key: llama.cpp's default, BOS for the Llama-3 pre-tokenizers only */
    static const char *const pres[] = { "gpt-2", "llama-bpe" };
    for (int p = 0; p < 2; p++)
    for (int add = -1; add <= 1; add++) {
        gb_buf b;
        memset(&b, 0, sizeof b);
        gb_header(&b, 3);
        tl_gguf_tokenizer(&b, pres[p], 0);
        gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", 265); /* <|end|>, a control token */
        if (add >= 0) gb_kv_bool(&b, "tokenizer.ggml.add_bos_token", add);
        gb_finish(&b);
        T_ASSERT(!b.failed, "build");
        lr_gguf *g;
        T_OK(lr_gguf_parse(b.p, b.n, "tok.gguf", &g));
        char *json;
        size_t jn;
        T_OK(lr_gguf_tokenizer_json(g, &json, &jn));
        lr_tok *ta, *tb;
        T_OK(lr_tok_from_gguf(g, &ta));
        T_OK(lr_tok_load_hf_mem(json, jn, NULL, 0, "tok.json", &tb));
        const int want = add == 1 || (add < 0 && p == 1);
        T_ASSERT(lr_tok_add_bos(ta) == want && lr_tok_add_bos(tb) == want && (!want || lr_tok_bos(tb) == 265),
                 "%s, add_bos_token %d: GGUF %d, json %d (bos %d)", pres[p], add, lr_tok_add_bos(ta), lr_tok_add_bos(tb),
                 lr_tok_bos(tb));
        T_ASSERT(!strstr(json, "TemplateProcessing") == !want, "%s, add_bos_token %d: template %s", pres[p], add,
                 strstr(json, "TemplateProcessing") ? "written" : "missing");
        tok_pair_close(ta, tb, json, g, b.p);
    }
    return T_PASS;
}

static int test_gguf_tokenizer_json(void)
{
    static const char *const pres[] = { "gpt-2", "qwen2", "llama-bpe" };
    static const char *const texts[] = { "hello world", "hello  world 123 4567!", "he said: 'll hello\n\nworld<|end|>x",
                                         "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80", "" };
    for (size_t p = 0; p < sizeof pres / sizeof *pres; p++) {
        gb_buf b;
        memset(&b, 0, sizeof b);
        gb_header(&b, 3);
        gb_kv_str(&b, "general.architecture", "llama");
        tl_gguf_tokenizer(&b, pres[p], 0);
        gb_finish(&b);
        T_ASSERT(!b.failed, "build");
        lr_gguf *g;
        T_OK(lr_gguf_parse(b.p, b.n, "tok.gguf", &g));
        char *json;
        size_t jn;
        T_OK(lr_gguf_tokenizer_json(g, &json, &jn));
        T_ASSERT(strstr(json, "\"<|end|>\"") && strstr(json, "\"special\":true") && strstr(json, "\"hell o\""), "json");
        lr_tok *ta, *tb;
        T_OK(lr_tok_from_gguf(g, &ta));
        T_OK(lr_tok_load_hf_mem(json, jn, NULL, 0, "tok.json", &tb));
        T_ASSERT(lr_tok_vocab_size(ta) == lr_tok_vocab_size(tb), "vocab %d vs %d", lr_tok_vocab_size(ta), lr_tok_vocab_size(tb));
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
            for (int special = 0; special < 2; special++) {
                lr_tok_ids x = { 0 }, y = { 0 };
                T_OK(lr_tok_encode(ta, texts[i], strlen(texts[i]), special, &x));
                T_OK(lr_tok_encode(tb, texts[i], strlen(texts[i]), special, &y));
                T_ASSERT(x.n == y.n && (x.n == 0 || !memcmp(x.ids, y.ids, x.n * sizeof *x.ids)), "%s: \"%s\" %zu vs %zu ids",
                         pres[p], texts[i], x.n, y.n);
                lr_tok_ids_free(&x);
                lr_tok_ids_free(&y);
            }
        tok_pair_close(ta, tb, json, g, b.p);
    }
    /* Unknown pre-tokenizer and a SentencePiece model are refused. */
    gb_buf b;
    memset(&b, 0, sizeof b);
    gb_header(&b, 3);
    tl_gguf_tokenizer(&b, "mystery", 0);
    gb_finish(&b);
    lr_gguf *g;
    T_OK(lr_gguf_parse(b.p, b.n, "tok.gguf", &g));
    char *json;
    size_t jn;
    T_ASSERT(lr_gguf_tokenizer_json(g, &json, &jn) == LR_EUNSUPPORTED && strstr(lr_errmsg(), "mystery"), "%s", lr_errmsg());
    lr_gguf_close(g);
    free(b.p);
    memset(&b, 0, sizeof b);
    gb_header(&b, 3);
    gb_kv_str(&b, "tokenizer.ggml.model", "t5");
    gb_finish(&b);
    T_OK(lr_gguf_parse(b.p, b.n, "tok.gguf", &g));
    T_ASSERT(lr_gguf_tokenizer_json(g, &json, &jn) == LR_EUNSUPPORTED && strstr(lr_errmsg(), "t5"), "%s", lr_errmsg());
    lr_gguf_close(g);
    free(b.p);
    return T_PASS;
}

/* Two tokens with one text: the lower id keeps it in the converted vocab, as
   the GGUF loader keeps it (the converter once moved it to the higher id and
   dropped the lower one), and both say so. */
static int g_warned;

/* A GGUF of three keys whose first two name a gpt2 tokenizer with the gpt-2 pre-tokenizer. */
static void gpt2_tokenizer_start(gb_buf *b)
{
    memset(b, 0, sizeof *b);
    gb_header(b, 3);
    gb_kv_str(b, "tokenizer.ggml.model", "gpt2");
    gb_kv_str(b, "tokenizer.ggml.pre", "gpt-2");
}

static void count_warning(const char *msg) { g_warned += strstr(msg, "repeat the text of a lower id") != NULL; }

static int test_gguf_tokenizer_json_duplicates(void)
{
    gb_buf b;
    gpt2_tokenizer_start(&b);
    gb_kv_arr(&b, "tokenizer.ggml.tokens", LR_GGUF_STR, 4);
    gb_str(&b, "a"), gb_str(&b, "b"), gb_str(&b, "ab"), gb_str(&b, "ab"); /* id 3 repeats id 2's text */
    gb_kv_arr(&b, "tokenizer.ggml.merges", LR_GGUF_STR, 1);
    gb_str(&b, "a b");
    gb_finish(&b);
    T_ASSERT(!b.failed, "build");
    lr_gguf *g;
    T_OK(lr_gguf_parse(b.p, b.n, "dup.gguf", &g));
    g_warned = 0;
    lr_set_warn_handler(count_warning);
    char *json;
    size_t jn;
    lr_tok *ta = NULL, *tb = NULL;
    int rc = lr_tok_from_gguf(g, &ta);
    if (!rc) rc = lr_gguf_tokenizer_json(g, &json, &jn);
    lr_set_warn_handler(NULL);
    T_OK(rc);
    T_ASSERT(g_warned == 2, "%d warnings (want the loader's and the converter's)", g_warned);
    {
        /* token types that are not integers: both readers refuse them (the converter let
           strings or floats through as type 0, a control token then plain vocabulary) */
        gb_buf t;
        gpt2_tokenizer_start(&t);
        gb_kv_arr(&t, "tokenizer.ggml.tokens", LR_GGUF_STR, 2);
        gb_str(&t, "a"), gb_str(&t, "b");
        gb_kv_arr(&t, "tokenizer.ggml.token_type", LR_GGUF_STR, 2);
        gb_str(&t, "1"), gb_str(&t, "3");
        gb_finish(&t);
        lr_gguf *gt;
        T_OK(lr_gguf_parse(t.p, t.n, "types.gguf", &gt));
        char *js;
        size_t jl;
        lr_tok *tt;
        T_ASSERT(lr_gguf_tokenizer_json(gt, &js, &jl) == LR_EFORMAT && strstr(lr_errmsg(), "token_type"), "converter: %s",
                 lr_errmsg());
        T_ASSERT(lr_tok_from_gguf(gt, &tt) == LR_EFORMAT, "loader accepted string token types");
        lr_gguf_close(gt);
        free(t.p);
    }
    T_OK(lr_tok_load_hf_mem(json, jn, NULL, 0, "dup.json", &tb));
    lr_tok_ids x = { 0 }, y = { 0 };
    T_OK(lr_tok_encode(ta, "ab", 2, 1, &x));
    T_OK(lr_tok_encode(tb, "ab", 2, 1, &y));
    T_ASSERT(x.n == 1 && y.n == 1 && x.ids[0] == 2 && y.ids[0] == 2, "\"ab\" -> %d (GGUF) and %d (tokenizer.json), want 2",
             x.n ? x.ids[0] : -1, y.n ? y.ids[0] : -1);
    size_t l;
    const char *t = lr_tok_token(tb, 2, &l);
    T_ASSERT(t && l == 2 && !memcmp(t, "ab", 2), "token 2 lost its text in tokenizer.json");
    lr_tok_ids_free(&x);
    lr_tok_ids_free(&y);
    tok_pair_close(ta, tb, json, g, b.p);
    return T_PASS;
}

/* Unused tokens (type 5; llama.cpp's converter writes "[PAD<id>]" ones for
   the ids a Hugging Face vocabulary lacks) are gaps in both readers of a GGUF:
   no text, so they decode to nothing as llama.cpp decodes them, and never
   produced by encoding. The converter once wrote them into the vocabulary,
   where BPE could reach one (here " xyz", a whole word under llama-bpe's
   ignore_merges) and decoding gave its text, while the GGUF loader kept them
   out of encoding but decoded their text. A BOS that is an unused token is no
   BOS in either, with a warning (both added it before; so would llama.cpp, a
   BOS that decodes to nothing). */
static int test_gguf_tokenizer_unused(void)
{
    static const char *const merges[] = { "h e", "l l", "he ll", "hell o" };
    static const char *const texts[] = { "hello xyz", " xyz", "xyz", "[PAD260] hello", "<|end|>hello [PAD264]", "" };
    /* ids 256-259 the merges', 260 and 261 unused, 262 a control token, 263 and 264 unused */
    static const char *const extra[] = { "he", "ll", "hell", "hello", "[PAD260]", "\xc4\xa0xyz", "<|end|>", "[PAD263]",
                                         "[PAD264]" };
    static const int types[] = { 1, 1, 1, 1, 5, 5, 3, 5, 5 };
    const int ne = (int)(sizeof extra / sizeof *extra), nm = (int)(sizeof merges / sizeof *merges);
    for (int bos = 260; bos <= 262; bos += 2) { /* an unused BOS, then the control token */
        gb_buf b;
        memset(&b, 0, sizeof b);
        gb_header(&b, 3);
        gb_kv_str(&b, "tokenizer.ggml.model", "gpt2");
        gb_kv_str(&b, "tokenizer.ggml.pre", "llama-bpe");
        gb_kv_arr(&b, "tokenizer.ggml.tokens", LR_GGUF_STR, 256 + (uint64_t)ne);
        char t[8];
        for (int i = 0; i < 256; i++) gb_strn(&b, t, (size_t)tl_byte_char(i, t));
        for (int i = 0; i < ne; i++) gb_str(&b, extra[i]);
        gb_kv_arr(&b, "tokenizer.ggml.token_type", LR_GGUF_I32, 256 + (uint64_t)ne);
        for (int i = 0; i < 256 + ne; i++) gb_u32(&b, i < 256 ? 1 : (uint32_t)types[i - 256]);
        gb_kv_arr(&b, "tokenizer.ggml.merges", LR_GGUF_STR, (uint64_t)nm);
        for (int i = 0; i < nm; i++) gb_str(&b, merges[i]);
        gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", (uint32_t)bos);
        gb_kv_bool(&b, "tokenizer.ggml.add_bos_token", 1);
        gb_finish(&b);
        T_ASSERT(!b.failed, "build");
        lr_gguf *g;
        T_OK(lr_gguf_parse(b.p, b.n, "unused.gguf", &g));
        char *json;
        size_t jn;
        lr_tok *ta = NULL, *tb = NULL;
        lr_warn_mute(1); /* (the unused BOS is warned about) */
        int rc = lr_gguf_tokenizer_json(g, &json, &jn);
        if (!rc) rc = lr_tok_from_gguf(g, &ta);
        if (!rc) rc = lr_tok_load_hf_mem(json, jn, NULL, 0, "unused.json", &tb);
        lr_warn_mute(0);
        T_OK(rc);
        T_ASSERT(!strstr(json, "PAD26") && !strstr(json, "\xc4\xa0xyz"), "an unused token is in the tokenizer.json");
        /* the trailing unused ids are past the vocabulary in both, as past a Hugging Face one */
        T_ASSERT(lr_tok_vocab_size(ta) == 263 && lr_tok_vocab_size(tb) == 263, "vocab %d (GGUF) and %d (json), want 263",
                 lr_tok_vocab_size(ta), lr_tok_vocab_size(tb));
        const int want_bos = bos == 262;
        T_ASSERT(lr_tok_add_bos(ta) == want_bos && lr_tok_add_bos(tb) == want_bos &&
                     (!want_bos || (lr_tok_bos(ta) == 262 && lr_tok_bos(tb) == 262)),
                 "BOS %d: add_bos %d/%d, bos %d/%d", bos, lr_tok_add_bos(ta), lr_tok_add_bos(tb), lr_tok_bos(ta),
                 lr_tok_bos(tb));
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
            for (int special = 0; special < 2; special++) {
                lr_tok_ids x = { 0 }, y = { 0 };
                T_OK(lr_tok_encode(ta, texts[i], strlen(texts[i]), special, &x));
                T_OK(lr_tok_encode(tb, texts[i], strlen(texts[i]), special, &y));
                T_ASSERT(x.n == y.n && (x.n == 0 || !memcmp(x.ids, y.ids, x.n * sizeof *x.ids)),
                         "\"%s\": %zu ids (GGUF) vs %zu (json), first %d vs %d", texts[i], x.n, y.n, x.n ? x.ids[0] : -1,
                         y.n ? y.ids[0] : -1);
                for (size_t k = 0; k < x.n; k++)
                    T_ASSERT(x.ids[k] != 260 && x.ids[k] != 261, "\"%s\" encodes to unused %d", texts[i], x.ids[k]);
                char *d;
                size_t dn;
                T_OK(lr_tok_decode(tb, y.ids, y.n, 0, &d, &dn));
                T_ASSERT(dn == strlen(texts[i]) && !memcmp(d, texts[i], dn), "\"%s\" decodes as \"%s\"", texts[i], d);
                free(d);
                lr_tok_ids_free(&x);
                lr_tok_ids_free(&y);
            }
        /* decoding: an unused id gives nothing, as llama.cpp's token_to_piece */
        const int32_t ids[] = { 259, 260, 261, 262 };
        lr_tok *both[] = { ta, tb };
        for (int k = 0; k < 2; k++) {
            char *d;
            size_t dn, tl;
            T_OK(lr_tok_decode(both[k], ids, 4, 0, &d, &dn));
            T_ASSERT(dn == 12 && !memcmp(d, "hello<|end|>", 12), "%s decodes 259..262 as \"%s\"", k ? "json" : "GGUF", d);
            free(d);
            T_ASSERT(!lr_tok_token(both[k], 260, &tl) && !lr_tok_token(both[k], 261, &tl) &&
                         lr_tok_find(both[k], " xyz", 4) < 0,
                     "%s: an unused token has text", k ? "json" : "GGUF");
        }
        tok_pair_close(ta, tb, json, g, b.p);
    }
    return T_PASS;
}

/* ---- the pipeline ---- */

static int import_hf(const tmodel *m, const char *dir, const char *out, const lr_import_opts *o, lr_import_stats *st)
{
    if (tm_write_hf(m, dir, "BF16", 1, NULL)) return LR_FAIL(LR_EIO, "write %s", dir);
    lr_src *s;
    int rc = lr_src_open_hf(dir, &s);
    if (rc) return rc;
    rc = lr_import_write(s, out, o, st);
    lr_src_close(s);
    return rc;
}

static int test_import_f16(void)
{
    char dir[256], hf[300], out[300];
    tl_tmpdir(dir, sizeof dir, "imp16");
    T_ASSERT(dir[0], "mkdtemp");
    lr_model_config cfg = tm_config("qwen3", 0);
    tmodel m;
    tm_make(&m, &cfg, 41);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(out, sizeof out, "%s/m.lrt", dir);
    lr_import_opts o = { .keep_f16 = 1, .embed_f16 = 1, .nthreads = 2, .seed = 1 };
    lr_import_stats st;
    T_OK(import_hf(&m, hf, out, &o, &st));
    T_ASSERT(st.tensors == m.n && st.f16 == 2 * 7 + 2 && st.leech == 0 && st.f32 == m.n - st.f16, "stats %d %d %d",
             st.tensors, st.f16, st.f32);
    lr_model *am;
    T_OK(lr_model_open(out, 0, &am));
    const lr_model_config *c = lr_model_cfg(am);
    T_ASSERT(!strcmp(c->arch, "qwen3") && c->hidden == 128 && c->n_layers == 2 && c->vocab == 160 && c->eos_id == 2 &&
             c->rope_theta == 1e6 && !c->tied_head, "config");
    T_ASSERT(lr_model_tensor_count(am) == m.n, "tensor count");
    for (int i = 0; i < m.n; i++) {
        const tm_tensor *t = &m.t[i];
        const lr_tensor_view *v = lr_model_tensor(am, t->name);
        T_ASSERT(v && v->codec == (t->ndim == 1 ? LR_CODEC_F32 : LR_CODEC_F16), "%s codec", t->name);
        float *f = malloc(t->rows * t->cols * sizeof *f);
        T_OK(lr_tensor_dequant_rows(v, 0, t->rows, f));
        for (uint64_t k = 0; k < t->rows * t->cols; k++)
            T_ASSERT(f[k] == t->v[k], "%s[%llu]: %g vs %g", t->name, (unsigned long long)k, f[k], t->v[k]);
        free(f);
    }
    char *json;
    size_t jn;
    T_OK(lr_model_tokenizer_json(am, &json, &jn));
    T_ASSERT(jn == strlen(TM_TOKENIZER_JSON) && !memcmp(json, TM_TOKENIZER_JSON, jn), "tokenizer.json kept");
    free(json);
    lr_model_close(am);
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

/* y = W x against the artifact's (rotated) W' applied to Q x (kind 2: Q per
 * head_dim block). */
static int check_projection(const lr_tensor_view *v, const tm_tensor *t, int head_dim, double *rel)
{
    const lr_leech_params *L = &v->u.leech;
    lr_rot r;
    int rc = L->rot_kind == LR_ROT_HADAMARD ? lr_rot_init(&r, (int)t->cols, L->rot_seed)
             : L->rot_kind == LR_ROT_HEADS  ? lr_rot_init_blocks(&r, (int)t->cols, head_dim, L->rot_seed)
                                            : LR_OK;
    if (rc) return rc;
    float *w = malloc(t->rows * t->cols * sizeof *w);
    double *x = malloc(t->cols * sizeof *x), *qx = malloc(t->cols * sizeof *qx), *row = malloc(t->cols * sizeof *row);
    rc = lr_tensor_dequant_rows(v, 0, t->rows, w);
    lr_rng g;
    lr_rng_seed(&g, 99);
    for (uint64_t i = 0; i < t->cols; i++) x[i] = lr_rng_signed(&g);
    if (!rc && L->rot_kind != LR_ROT_NONE) rc = lr_rot_apply(&r, x, qx);
    else memcpy(qx, x, t->cols * sizeof *x);
    /* Weights: undo the rotation of each row (W = W' Q) and compare. */
    double e = 0, n = 0, ye = 0, yn = 0;
    for (uint64_t i = 0; i < t->rows && !rc; i++) {
        double y = 0, yq = 0;
        for (uint64_t k = 0; k < t->cols; k++) {
            y += (double)t->v[i * t->cols + k] * x[k];
            yq += (double)w[i * t->cols + k] * qx[k];
            row[k] = w[i * t->cols + k];
        }
        ye += (y - yq) * (y - yq);
        yn += y * y;
        if (L->rot_kind != LR_ROT_NONE) rc = lr_rot_apply_t(&r, row, row);
        for (uint64_t k = 0; k < t->cols; k++) {
            double d = row[k] - t->v[i * t->cols + k];
            e += d * d;
            n += (double)t->v[i * t->cols + k] * t->v[i * t->cols + k];
        }
    }
    rel[0] = e / n;
    rel[1] = ye / yn;
    free(w);
    free(x);
    free(qx);
    free(row);
    if (L->rot_kind != LR_ROT_NONE) lr_rot_free(&r);
    return rc;
}

static int test_import_leech(void)
{
    char dir[256], hf[300], out[300];
    tl_tmpdir(dir, sizeof dir, "impl");
    T_ASSERT(dir[0], "mkdtemp");
    lr_model_config cfg = tm_config("qwen3", 1);
    tmodel m;
    tm_make(&m, &cfg, 43);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(out, sizeof out, "%s/m.lrt", dir);
    for (int variant = 0; variant < 3; variant++) {
        /* 0: 1 gain bit, rotated (o per head, the default); 1: 2 gain bits, o over
           its whole width; 2: 0 gain bits, no rotation */
        lr_import_opts o = { .gain_bits = variant == 0 ? 1 : variant == 1 ? 2 : 0, .no_rotate = variant == 2,
                             .o_rot_full = variant == 1, .nthreads = 2, .seed = 1 + (uint64_t)variant };
        lr_import_stats st;
        T_OK(import_hf(&m, hf, out, &o, &st));
        T_ASSERT(st.leech == 14 && st.int8g == 1 && st.rel_err > 0.01 && st.rel_err < 0.2, "stats: %d leech, err %g", st.leech,
                 st.rel_err);
        lr_model *am;
        T_OK(lr_model_open(out, 0, &am));
        uint64_t seed_h = 0;
        for (int i = 0; i < m.n; i++) {
            const tm_tensor *t = &m.t[i];
            const lr_tensor_view *v = lr_model_tensor(am, t->name);
            T_ASSERT(v, "%s", t->name);
            if (t->ndim == 1) {
                T_ASSERT(v->codec == LR_CODEC_F32, "%s: norm f32", t->name);
                continue;
            }
            if (!strcmp(t->role, "token_embd")) {
                /* int8 groups: within half a step of each group's range. */
                T_ASSERT(v->codec == LR_CODEC_INT8G && v->u.i8.group == 64, "embedding int8g");
                float *f = malloc(t->rows * t->cols * sizeof *f);
                T_OK(lr_tensor_dequant_rows(v, 0, t->rows, f));
                for (uint64_t g0 = 0; g0 < t->rows * t->cols; g0 += 64) {
                    float mn = t->v[g0], mx = t->v[g0];
                    for (int k = 0; k < 64; k++) mn = fminf(mn, t->v[g0 + (uint64_t)k]), mx = fmaxf(mx, t->v[g0 + (uint64_t)k]);
                    for (int k = 0; k < 64; k++)
                        T_ASSERT(fabsf(f[g0 + (uint64_t)k] - t->v[g0 + (uint64_t)k]) <= (mx - mn) / 254 * 0.51f + 1e-3f * (mx - mn) / 254,
                                 "embedding [%llu]", (unsigned long long)(g0 + (uint64_t)k));
                }
                free(f);
                continue;
            }
            const lr_leech_params *L = &v->u.leech;
            T_ASSERT(v->codec == LR_CODEC_LEECH && L->gain_bits == o.gain_bits && L->max_shell == 12, "%s leech", t->name);
            const int want_kind = variant == 2                                  ? LR_ROT_NONE
                                  : variant == 0 && !strcmp(t->role, "attn_output") ? LR_ROT_HEADS
                                                                                    : LR_ROT_HADAMARD;
            T_ASSERT(L->rot_kind == want_kind, "%s rotation kind %d, want %d", t->name, L->rot_kind, want_kind);
            if (variant != 2) {
                T_ASSERT(L->rot_seed == lr_import_rot_seed(o.seed, t->cols), "%s seed", t->name);
                /* One rotation per input width: q/k/v/gate/up (hidden) share it. */
                if (t->cols == cfg.hidden) {
                    if (!seed_h) seed_h = L->rot_seed;
                    T_ASSERT(L->rot_seed == seed_h, "%s shares the hidden-width seed", t->name);
                } else {
                    T_ASSERT(L->rot_seed != lr_import_rot_seed(o.seed, cfg.hidden), "%s other width", t->name);
                }
            }
            double rel[2];
            T_OK(check_projection(v, t, (int)cfg.head_dim, rel));
            /* Gaussian weights at ~2 bits/weight: about 0.07-0.1 relative squared error. */
            double lim = o.gain_bits == 0 ? 0.15 : 0.12;
            T_ASSERT(rel[0] > 0.005 && rel[0] < lim && rel[1] < 3 * lim, "%s (gain %d): weight err %g, output err %g",
                     t->name, o.gain_bits, rel[0], rel[1]);
        }
        lr_model_close(am);
    }
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

static int test_import_atomic_and_layers(void)
{
    char dir[256], hf[300], out[300], outdir[300];
    tl_tmpdir(dir, sizeof dir, "impa");
    T_ASSERT(dir[0], "mkdtemp");
    lr_set_warn_handler(NULL);
    lr_model_config cfg = tm_config("qwen3", 0);
    tmodel m;
    tm_make(&m, &cfg, 47);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    mkdir(outdir, 0755);
    snprintf(out, sizeof out, "%s/m.lrt", outdir);
    /* --layers 1: a one-layer artifact that opens. */
    lr_import_opts o = { .keep_f16 = 1, .nthreads = 1, .seed = 1, .max_layers = 1 };
    T_OK(import_hf(&m, hf, out, &o, NULL));
    lr_model *am;
    T_OK(lr_model_open(out, 0, &am));
    T_ASSERT(lr_model_cfg(am)->n_layers == 1 && !lr_model_tensor(am, "blk.1.attn_q") && lr_model_tensor(am, "output"),
             "one layer");
    lr_model_close(am);
    /* --quant-layers 1:2: layer 1's projections Leech, layer 0's f16. */
    lr_import_opts oq = { .gain_bits = 1, .nthreads = 1, .seed = 1, .quant_lo = 1, .quant_hi = 2 };
    lr_import_stats st;
    T_OK(import_hf(&m, hf, out, &oq, &st));
    T_ASSERT(st.leech == 7 && st.f16 == 7, "%d leech, %d f16", st.leech, st.f16);
    T_OK(lr_model_open(out, 0, &am));
    T_ASSERT(lr_model_tensor(am, "blk.0.ffn_up")->codec == LR_CODEC_F16 &&
             lr_model_tensor(am, "blk.1.ffn_up")->codec == LR_CODEC_LEECH, "codecs by layer");
    lr_model_close(am);
    oq.quant_lo = 2, oq.quant_hi = 2;
    T_ASSERT(import_hf(&m, hf, out, &oq, NULL) == LR_EINVAL, "empty layer range");
    /* counts past the model's 2 layers are refused by name (they were taken as "all") */
    oq.quant_lo = 0, oq.quant_hi = 3;
    T_ASSERT(import_hf(&m, hf, out, &oq, NULL) == LR_EINVAL && strstr(lr_errmsg(), "0:3"), "--quant-layers 0:3: %s",
             lr_errmsg());
    lr_import_opts o3 = o;
    o3.max_layers = 3;
    T_ASSERT(import_hf(&m, hf, out, &o3, NULL) == LR_EINVAL && strstr(lr_errmsg(), "--layers 3"), "--layers 3: %s",
             lr_errmsg());
    o3.max_layers = 1, o3.quant_lo = 1, o3.quant_hi = 2, o3.keep_f16 = 0, o3.gain_bits = 1;
    T_ASSERT(import_hf(&m, hf, out, &o3, NULL) == LR_EINVAL && strstr(lr_errmsg(), "1 layers imported"),
             "--layers 1 --quant-layers 1:2: %s", lr_errmsg());
    /* A NaN in layer 1: the error names the tensor; the old file stays, no temp file is left. */
    struct stat before, after;
    T_ASSERT(stat(out, &before) == 0, "stat");
    tm_tensor *t = (tm_tensor *)tm_find(&m, "blk.1.ffn_up");
    t->v[77] = NAN;
    o.max_layers = 0;
    int rc = import_hf(&m, hf, out, &o, NULL);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), "model.layers.1.mlp.up_proj.weight") && strstr(lr_errmsg(), "not finite"),
             "NaN: %s", rc ? lr_errmsg() : "accepted");
    T_ASSERT(stat(out, &after) == 0 && after.st_size == before.st_size && after.st_ino == before.st_ino, "old file kept");
    T_ASSERT(count_files(outdir) == 1, "%d files in the output folder", count_files(outdir));
    /* The same with Leech, and with a fresh destination: nothing is created. */
    o.keep_f16 = 0;
    snprintf(out, sizeof out, "%s/new.lrt", outdir);
    rc = import_hf(&m, hf, out, &o, NULL);
    T_ASSERT(rc == LR_EINVAL && access(out, F_OK) != 0 && count_files(outdir) == 1, "fresh destination: %s", lr_errmsg());
    /* Options out of range. */
    lr_src *s;
    T_OK(lr_src_open_hf(hf, &s));
    o.gain_bits = 3;
    T_ASSERT(lr_import_write(s, out, &o, NULL) == LR_EINVAL, "gain bits 3");
    lr_src_close(s);
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

/* A Llama model imports when loader/arch.c knows the architecture; until
 * then the error says what is missing. */
static int test_import_llama(void)
{
    char dir[256], gg[300], out[300];
    tl_tmpdir(dir, sizeof dir, "impll");
    T_ASSERT(dir[0], "mkdtemp");
    lr_set_warn_handler(NULL);
    lr_model_config cfg = tm_config("llama", 1);
    tmodel m;
    tm_make(&m, &cfg, 53);
    snprintf(gg, sizeof gg, "%s/m.gguf", dir);
    snprintf(out, sizeof out, "%s/m.lrt", dir);
    tl_gguf_opts go = { LR_GGML_Q8_0, LR_GGML_Q4_1, LR_GGML_F32, LR_GGML_Q8_0, 0, NULL, 0 };
    T_ASSERT(tm_write_gguf(&m, gg, &go) == 0, "write");
    lr_src *s;
    T_OK(lr_src_open_gguf(gg, &s));
    lr_import_opts o = { .keep_f16 = 1, .nthreads = 1, .seed = 1 };
    int rc = lr_import_write(s, out, &o, NULL);
    int known = lr_arch_known("llama");
    if (!known) T_ASSERT(rc == LR_EUNSUPPORTED && strstr(lr_errmsg(), "llama") && access(out, F_OK) != 0, "%s", lr_errmsg());
    else T_OK(rc);
    lr_src_close(s);
    tm_free(&m);
    tl_rmrf(dir);
    T_SKIP_IF(!known, "loader/arch.c has no llama table yet: the Llama write path is checked for its refusal only");
    return T_PASS;
}

/* ---- the rotated residual ---- */

/* A copy of a dense (f32 / f16) artifact with the rows of tensor `name`
 * changed by fn: a deliberately wrong model. */
static int copy_tampered(const char *in, const char *out, const char *name, int (*fn)(float *row, void *u), void *u)
{
    lr_model *m;
    int rc = lr_model_open(in, 0, &m);
    if (rc) return rc;
    int kind;
    const void *blob;
    size_t bn;
    lr_writer *w = NULL;
    if (!(rc = lr_model_tokenizer(m, &kind, &blob, &bn))) rc = lr_writer_open(out, lr_model_cfg(m), kind, blob, bn, &w);
    for (int i = 0; i < lr_model_tensor_count(m) && !rc; i++) {
        const lr_tensor_view *v = lr_model_tensor_at(m, i);
        if (v->codec != LR_CODEC_F32 && v->codec != LR_CODEC_F16) {
            rc = LR_FAIL(LR_EINVAL, "%s: codec %d is not dense", v->name, v->codec);
            break;
        }
        lr_tensor_desc d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "%s", v->name);
        d.codec = v->codec, d.ndim = v->ndim;
        memcpy(d.dims, v->dims, sizeof d.dims);
        float *f = malloc(v->nelem * sizeof *f);
        uint16_t *h = malloc(v->nelem * sizeof *h);
        rc = lr_tensor_dequant_rows(v, 0, v->rows, f);
        for (uint64_t r = 0; r < v->rows && !rc && !strcmp(v->name, name); r++) rc = fn(f + r * v->cols, u);
        for (uint64_t k = 0; k < v->nelem; k++) h[k] = lr_float_to_half(f[k]);
        const void *parts[1] = { v->codec == LR_CODEC_F32 ? (void *)f : (void *)h };
        if (!rc) rc = lr_writer_tensor(w, &d, parts);
        free(f), free(h);
    }
    if (w && rc) lr_writer_abort(w);
    else if (w) rc = lr_writer_finish(w);
    lr_model_close(m);
    return rc;
}

/* A stored embedding row R e -> R F e, F = element 0 negated: R with one
 * sign flipped in this tensor only (flipping it everywhere would be another
 * valid R). */
static int flip_one_sign(float *row, void *u)
{
    const lr_rot *r = u;
    double d[512];
    for (int i = 0; i < r->n; i++) d[i] = row[i];
    int rc = lr_rot_apply_t(r, d, d);
    d[0] = -d[0];
    if (!rc) rc = lr_rot_apply(r, d, d);
    for (int i = 0; i < r->n; i++) row[i] = (float)d[i];
    return rc;
}

/* The stream's norms are ones, the q/k norms (on heads) are the source's. */
static int check_rres_norms(const lr_model *am, const tmodel *m, const char **bad)
{
    for (int i = 0; i < m->n; i++) {
        const tm_tensor *t = &m->t[i];
        if (t->ndim != 1) continue;
        *bad = t->name;
        const int unit = !strcmp(t->role, "attn_norm") || !strcmp(t->role, "ffn_norm") || !strcmp(t->role, "output_norm");
        const lr_tensor_view *v = lr_model_tensor(am, t->name);
        float f[512];
        if (!v || v->codec != LR_CODEC_F32 || lr_tensor_dequant_rows(v, 0, 1, f)) return 0;
        for (uint64_t k = 0; k < t->cols; k++)
            if (f[k] != (unit ? 1.0f : t->v[k])) return 0;
    }
    return 1;
}

#define RRES_STEPS 12

/* Rotated against plain, every weight f16 (keep + embed f16; the source's
 * values are f16-exact, so the plain artifact is the source model): the same
 * function. The tolerance: each stored rotated weight is its exact value
 * rounded once to f16, a relative error <= 2^-11 (rms 2^-11/sqrt 3 ~ 2.8e-4)
 * of independent sign; a logit goes through ~10 such matrices in series
 * (embedding, 2 layers of q/k/v -> o and gate/up -> down, head), so ~
 * sqrt(10) x 2.8e-4 ~ 1e-3 relative; the engine's own f32/f64 arithmetic
 * is ~1e-7. Bound 4e-3 (the margin for the amplification through softmax,
 * SiLU and the norms). A wrong fold is O(0.1): one sign of R flipped in the
 * embedding alone must move the logits far past the bound. */
static int test_rotated_residual_same_function(void)
{
    char dir[256], hf[300], plain[300], rot[300], bad[300];
    tl_tmpdir(dir, sizeof dir, "rres");
    T_ASSERT(dir[0], "mkdtemp");
    lr_set_warn_handler(NULL);
    static const struct { const char *arch; int tied; } cases[] = { { "qwen3", 1 }, { "llama", 0 } };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        lr_model_config cfg = tm_config(cases[c].arch, cases[c].tied);
        tmodel m;
        tm_make(&m, &cfg, 61 + c);
        snprintf(hf, sizeof hf, "%s/hf%zu", dir, c);
        snprintf(plain, sizeof plain, "%s/plain%zu.lrt", dir, c);
        snprintf(rot, sizeof rot, "%s/rot%zu.lrt", dir, c);
        snprintf(bad, sizeof bad, "%s/bad%zu.lrt", dir, c);
        lr_import_opts o = { .keep_f16 = 1, .embed_f16 = 1, .nthreads = 2, .seed = 5 };
        T_OK(import_hf(&m, hf, plain, &o, NULL));
        o.rotated_residual = 1;
        lr_import_stats st;
        T_OK(import_hf(&m, hf, rot, &o, &st));
        const uint64_t S = lr_import_rot_seed(o.seed, cfg.hidden);
        lr_model *am;
        T_OK(lr_model_open(rot, 0, &am));
        const lr_model_config *k = lr_model_cfg(am);
        const char *which = "";
        T_ASSERT(k->rotated_residual == 1 && k->residual_seed == S && k->tied_head == 0 && lr_model_tensor(am, "output"),
                 "%s: flag %d, seed %llu (want %llu), tied %d", cases[c].arch, k->rotated_residual,
                 (unsigned long long)k->residual_seed, (unsigned long long)S, k->tied_head);
        T_ASSERT(check_rres_norms(am, &m, &which), "%s: norm %s", cases[c].arch, which);
        T_ASSERT(st.tensors == m.n + cases[c].tied, "%d tensors", st.tensors);
        lr_model_close(am);

        int32_t ids[RRES_STEPS];
        lr_rng r;
        lr_rng_seed(&r, 17 + c);
        for (int i = 0; i < RRES_STEPS; i++) ids[i] = (int32_t)lr_rng_below(&r, cfg.vocab);
        float *lp, *lr_, *lb;
        T_OK(tl_logits(plain, ids, RRES_STEPS, &lp));
        T_OK(tl_logits(rot, ids, RRES_STEPS, &lr_));
        lr_rot R;
        T_OK(lr_rot_init(&R, (int)cfg.hidden, S));
        T_OK(copy_tampered(rot, bad, "token_embd", flip_one_sign, &R));
        lr_rot_free(&R);
        T_OK(tl_logits(bad, ids, RRES_STEPS, &lb));
        const size_t n = (size_t)RRES_STEPS * cfg.vocab;
        const double d = tl_rel_diff(lr_, lp, n), dbad = tl_rel_diff(lb, lp, n), tol = 4e-3;
        printf("    %s: rotated vs plain logits %.2e, with one sign of R flipped in the embedding %.2e (bound %.0e)\n",
               cases[c].arch, d, dbad, tol);
        T_ASSERT(d < tol, "%s: rotated residual differs from plain by %g", cases[c].arch, d);
        T_ASSERT(dbad > 10 * tol, "%s: a wrong fold moves the logits by only %g", cases[c].arch, dbad);
        free(lp), free(lr_), free(lb);
        tm_free(&m);
    }
    tl_rmrf(dir);
    return T_PASS;
}

/* A Leech import with the rotated residual: the config's flag and seed, the
 * stream's norms 1, q/k/v and gate/up stored against R (kind 1, seed S), o
 * per head and down with their own input rotation, a tied source untied; the
 * sampled weight error and the logits' error against the source (the f16
 * artifact) in the range of the plain-residual import's. */
static int test_rotated_residual_leech(void)
{
    char dir[256], hf[300], ref[300], plain[300], rot[300];
    tl_tmpdir(dir, sizeof dir, "rresl");
    T_ASSERT(dir[0], "mkdtemp");
    lr_set_warn_handler(NULL);
    lr_model_config cfg = tm_config("qwen3", 1);
    tmodel m;
    tm_make(&m, &cfg, 71);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(ref, sizeof ref, "%s/ref.lrt", dir);
    snprintf(plain, sizeof plain, "%s/plain.lrt", dir);
    snprintf(rot, sizeof rot, "%s/rot.lrt", dir);
    lr_import_opts o = { .keep_f16 = 1, .embed_f16 = 1, .nthreads = 2, .seed = 3 };
    T_OK(import_hf(&m, hf, ref, &o, NULL));
    o = (lr_import_opts){ .gain_bits = 1, .nthreads = 2, .seed = 3 };
    lr_import_stats sp, sr;
    T_OK(import_hf(&m, hf, plain, &o, &sp));
    o.rotated_residual = 1;
    T_OK(import_hf(&m, hf, rot, &o, &sr));
    const uint64_t S = lr_import_rot_seed(o.seed, cfg.hidden);
    lr_model *am;
    T_OK(lr_model_open(rot, 0, &am));
    const lr_model_config *k = lr_model_cfg(am);
    T_ASSERT(k->rotated_residual == 1 && k->residual_seed == S && k->tied_head == 0, "config: flag %d seed %llu tied %d",
             k->rotated_residual, (unsigned long long)k->residual_seed, k->tied_head);
    const lr_tensor_view *head = lr_model_tensor(am, "output");
    T_ASSERT(head && head->codec == LR_CODEC_INT8G && sr.int8g == 2 && sr.leech == 14, "untied int8 head; %d int8g %d leech",
             sr.int8g, sr.leech);
    const char *which = "";
    T_ASSERT(check_rres_norms(am, &m, &which), "norm %s", which);
    lr_rot R;
    T_OK(lr_rot_init(&R, (int)cfg.hidden, S));
    for (int i = 0; i < m.n; i++) {
        const tm_tensor *t = &m.t[i];
        const lr_tensor_view *v = lr_model_tensor(am, t->name);
        if (!v || v->codec != LR_CODEC_LEECH) continue;
        const lr_leech_params *L = &v->u.leech;
        const int reader = lr_reads_residual(t->name), o_proj = !strcmp(t->role, "attn_output");
        const int want_kind = o_proj ? LR_ROT_HEADS : LR_ROT_HADAMARD;
        const uint64_t want_seed = lr_import_rot_seed(o.seed, t->cols);
        T_ASSERT(L->rot_kind == want_kind && L->rot_seed == want_seed && (!reader || L->rot_seed == S),
                 "%s: rotation kind %d seed %llu", t->name, L->rot_kind, (unsigned long long)L->rot_seed);
        /* The matrix the stored one quantizes before its input rotation: W diag(g)
         * for a reader (its input rotation is R), R W for o and down. */
        tm_tensor f = *t;
        f.v = malloc(t->rows * t->cols * sizeof *f.v);
        double col[512];
        if (reader) {
            char nn[64];
            lr_tensor_name(nn, t->layer, t->role[0] == 'a' ? "attn_norm" : "ffn_norm");
            const float *g = tm_find(&m, nn)->v;
            for (uint64_t e = 0; e < t->rows * t->cols; e++) f.v[e] = t->v[e] * g[e % t->cols];
        } else {
            for (uint64_t c = 0; c < t->cols; c++) {
                for (uint64_t rr = 0; rr < t->rows; rr++) col[rr] = t->v[rr * t->cols + c];
                T_OK(lr_rot_apply(&R, col, col));
                for (uint64_t rr = 0; rr < t->rows; rr++) f.v[rr * t->cols + c] = (float)col[rr];
            }
        }
        double rel[2];
        T_OK(check_projection(v, &f, (int)cfg.head_dim, rel));
        free(f.v);
        /* as test_import_leech's bounds; a missing or wrong fold is O(1) */
        T_ASSERT(rel[0] > 0.005 && rel[0] < 0.12 && rel[1] < 0.36, "%s: weight err %g, output err %g", t->name, rel[0], rel[1]);
    }
    lr_rot_free(&R);
    lr_model_close(am);
    int32_t ids[RRES_STEPS];
    lr_rng r;
    lr_rng_seed(&r, 23);
    for (int i = 0; i < RRES_STEPS; i++) ids[i] = (int32_t)lr_rng_below(&r, cfg.vocab);
    float *lref, *lp, *lr_;
    T_OK(tl_logits(ref, ids, RRES_STEPS, &lref));
    T_OK(tl_logits(plain, ids, RRES_STEPS, &lp));
    T_OK(tl_logits(rot, ids, RRES_STEPS, &lr_));
    const size_t n = (size_t)RRES_STEPS * cfg.vocab;
    const double ep = tl_rel_diff(lp, lref, n), er = tl_rel_diff(lr_, lref, n);
    printf("    sampled weight error plain %.4f, rotated %.4f; logits vs the source: plain %.3f, rotated %.3f\n", sp.rel_err,
           sr.rel_err, ep, er);
    /* one quantizer on matrices of the same statistics: within a factor 1.5 either way */
    T_ASSERT(sr.rel_err > sp.rel_err / 1.5 && sr.rel_err < sp.rel_err * 1.5, "weight error %g vs %g", sr.rel_err, sp.rel_err);
    T_ASSERT(er > ep / 1.5 && er < ep * 1.5, "logits error %g vs %g", er, ep);
    free(lref), free(lp), free(lr_);
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

/* What the rotated residual cannot do: without the rotation (the readers
 * must be stored against R), or at a hidden width the rotation does not
 * serve (37 x 4); nothing is written. */
static int test_rotated_residual_refusals(void)
{
    char dir[256], hf[300], out[300];
    tl_tmpdir(dir, sizeof dir, "rresr");
    T_ASSERT(dir[0], "mkdtemp");
    lr_set_warn_handler(NULL);
    lr_model_config cfg = tm_config("llama", 0);
    tmodel m;
    tm_make(&m, &cfg, 73);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    snprintf(out, sizeof out, "%s/m.lrt", dir);
    lr_import_opts o = { .gain_bits = 1, .nthreads = 1, .seed = 1, .rotated_residual = 1, .no_rotate = 1 };
    int rc = import_hf(&m, hf, out, &o, NULL);
    T_ASSERT(rc == LR_EINVAL && strstr(lr_errmsg(), "no-rotate") && access(out, F_OK) != 0, "no rotation: %s",
             rc ? lr_errmsg() : "accepted");
    tm_free(&m);
    cfg.hidden = 148;
    tm_make(&m, &cfg, 74);
    snprintf(hf, sizeof hf, "%s/hf148", dir);
    o.no_rotate = 0, o.keep_f16 = 1;
    rc = import_hf(&m, hf, out, &o, NULL);
    T_ASSERT(rc == LR_EUNSUPPORTED && strstr(lr_errmsg(), "hidden 148") && access(out, F_OK) != 0, "hidden 148: %s",
             rc ? lr_errmsg() : "accepted");
    o.rotated_residual = 0; /* the same source imports with a plain residual */
    T_OK(import_hf(&m, hf, out, &o, NULL));
    tm_free(&m);
    tl_rmrf(dir);
    return T_PASS;
}

T_MAIN(T_CASE(test_hf_config), T_CASE(test_hf_source), T_CASE(test_hf_rejects), T_CASE(test_ggml_dequant),
       T_CASE(test_gguf_source), T_CASE(test_qk_permutation), T_CASE(test_gguf_tokenizer_json),
       T_CASE(test_gguf_tokenizer_json_duplicates),
       T_CASE(test_gguf_tokenizer_unused), T_CASE(test_hf_tokenizer_bos), T_CASE(test_hf_tokenizer_bound), T_CASE(test_gguf_tokenizer_bos), T_CASE(test_import_f16),
       T_CASE(test_import_leech), T_CASE(test_import_atomic_and_layers), T_CASE(test_import_llama),
       T_CASE(test_rotated_residual_same_function), T_CASE(test_rotated_residual_leech),
       T_CASE(test_rotated_residual_refusals))
