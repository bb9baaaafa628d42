/* Hugging Face config.json -> the artifact's model config, for
 * Qwen3ForCausalLM (arch "qwen3") and LlamaForCausalLM / MistralForCausalLM
 * (arch "llama"). Fields the artifact cannot express and that change the
 * model's function (rope_scaling, attention or MLP biases, another
 * activation, an already quantized checkpoint) are refused with
 * LR_EUNSUPPORTED naming the field; fields with a harmless default are
 * filled in (docs/import.md lists them). */
#ifndef LR_IMPORT_HF_CONFIG_H
#define LR_IMPORT_HF_CONFIG_H
#include "loader/model.h"

#include <stddef.h>

/* json[0..n) is the text of config.json; label names it in messages;
 * default_name fills cfg->name when the config has no _name_or_path. */
int lr_hf_config_parse(const char *json, size_t n, const char *label, const char *default_name,
                       lr_model_config *cfg);

#endif
