/* A GGUF file's tokenizer (llama.cpp's tokenizer.ggml.* metadata) written
 * as a Hugging Face tokenizer.json, so an artifact imported from GGUF
 * carries its tokenizer the same way as one imported from a Hugging Face
 * folder. Byte-level BPE ("gpt2") only. The pre-tokenizer is chosen by
 * tokenizer.ggml.pre:
 *   qwen2              NFC, Split(Qwen2 pattern), ByteLevel
 *   llama-bpe, llama3  Split(Llama-3 pattern), ByteLevel; ignore_merges
 *   gpt-2, gpt2        ByteLevel with its own pattern
 *   smollm             Digits(individual), ByteLevel with its own pattern
 * Tokens of type control (3) become special added tokens, user-defined (4)
 * non-special added tokens; the rest form the BPE vocabulary. */
#ifndef LR_IMPORT_GGUF_TOKJSON_H
#define LR_IMPORT_GGUF_TOKJSON_H
#include <stddef.h>

struct lr_gguf;
/* *json is malloc'd text (NUL-terminated, *n excludes the NUL).
 * LR_EUNSUPPORTED for another tokenizer model or an unknown pre-tokenizer. */
int lr_gguf_tokenizer_json(const struct lr_gguf *g, char **json, size_t *n);

#endif
