/* For tests: a small SentencePiece-style tokenizer.json (Llama 2's form and
 * variants): <unk> <s> </s>, the 256 <0xNN> byte-fallback tokens, a few
 * words over the metaspace and their merges. */
#ifndef LR_TEST_SPM_TOKENIZER_H
#define LR_TEST_SPM_TOKENIZER_H
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS "\xE2\x96\x81" /* U+2581 */

/* ids 0-2 specials, 3..258 <0x00>..<0xFF>, then these */
enum { SPM_UNK = 0, SPM_BOS = 1, SPM_EOS = 2, SPM_SP = 259, SPM_H, SPM_E, SPM_L, SPM_O, SPM_W, SPM_R, SPM_D, SPM_SP_H, SPM_LL, SPM_SP_HE, SPM_LLO, SPM_SP_HELLO, SPM_SP_W, SPM_OR,
       SPM_SP_WOR, SPM_LD, SPM_SP_WORLD, SPM_E_ACUTE, SPM_SP_SP, SPM_X, SPM_Y, SPM_X_SP };
static const char *const WORDS[] = { MS, "h", "e", "l", "o", "w", "r", "d", MS "h", "ll", MS "he", "llo",
                                     MS "hello", MS "w", "or", MS "wor", "ld", MS "world", "\xC3\xA9",
                                     MS MS, "x", "y", "x" MS };
/* in rank order */
static const char *const MERGES[] = { MS " h", "l l", MS "h e", "ll o", MS "he llo", MS " w", "o r",
                                      MS "w or", "l d", MS "wor ld", MS " " MS, "x " MS };

static inline int32_t spm_fb(unsigned byte) { return 3 + (int32_t)byte; }

/* The tokenizer.json text. model_extra: JSON members added to the model
 * (byte_fallback is given there); normalizer / pretok / decoder: JSON values
 * or NULL for null. */
static inline char *t_spm_json(const char *model_extra, const char *normalizer, const char *pretok, const char *decoder)
{
    json_t *vocab = json_object();
    json_object_set_new(vocab, "<unk>", json_integer(SPM_UNK));
    json_object_set_new(vocab, "<s>", json_integer(SPM_BOS));
    json_object_set_new(vocab, "</s>", json_integer(SPM_EOS));
    for (unsigned b = 0; b < 256; b++) {
        char k[8];
        snprintf(k, sizeof k, "<0x%02X>", b);
        json_object_set_new(vocab, k, json_integer(spm_fb(b)));
    }
    for (size_t i = 0; i < sizeof WORDS / sizeof WORDS[0]; i++)
        json_object_set_new(vocab, WORDS[i], json_integer(SPM_SP + (json_int_t)i));
    json_t *merges = json_array();
    for (size_t i = 0; i < sizeof MERGES / sizeof MERGES[0]; i++) json_array_append_new(merges, json_string(MERGES[i]));
    char *v = json_dumps(vocab, JSON_COMPACT), *m = json_dumps(merges, JSON_COMPACT);
    json_decref(vocab);
    json_decref(merges);
    const char *added = "[{\"id\":0,\"content\":\"<unk>\",\"special\":true,\"normalized\":false},"
                        "{\"id\":1,\"content\":\"<s>\",\"special\":true,\"normalized\":false},"
                        "{\"id\":2,\"content\":\"</s>\",\"special\":true,\"normalized\":false}]";
    size_t n = strlen(v) + strlen(m) + 4096;
    char *out = malloc(n);
    if (out)
        snprintf(out, n,
                 "{\"version\":\"1.0\",\"added_tokens\":%s,\"normalizer\":%s,\"pre_tokenizer\":%s,"
                 "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\","
                 "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\","
                 "\"ids\":[1],\"tokens\":[\"<s>\"]}}},\"decoder\":%s,"
                 "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":\"<unk>\",\"continuing_subword_prefix\":null,"
                 "\"end_of_word_suffix\":null%s,\"vocab\":%s,\"merges\":%s}}",
                 added, normalizer ? normalizer : "null", pretok ? pretok : "null", decoder ? decoder : "null",
                 model_extra ? model_extra : "", v, m);
    free(v);
    free(m);
    return out;
}

/* Llama 2's tokenizer.json form. */
#define LLAMA2_NORM "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"" MS "\"}," \
                    "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" MS "\"}]}"
#define LLAMA2_DEC "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"" MS "\"}," \
                   "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\"," \
                   "\"content\":\" \",\"start\":1,\"stop\":0}]}"
#define FB ",\"fuse_unk\":true,\"byte_fallback\":true"

#endif
