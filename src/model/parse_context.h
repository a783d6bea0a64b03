// Shared state of one config.json parse, handed to the family parsers.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_reader.h"
#include "gpubudget/model_spec.h"

namespace gpubudget::detail {

// Upper bounds on config fields. They reject absurd configs early and keep every byte product
// below 2^63 (a model of 10^17 parameters is refused separately in check_model_size).
inline constexpr std::int64_t kMaxHidden = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxLayers = 10'000;
inline constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxHeads = std::int64_t{1} << 14;
inline constexpr std::int64_t kMaxExperts = std::int64_t{1} << 14;
inline constexpr std::int64_t kMaxIntermediate = std::int64_t{1} << 22;

struct ParseContext {
  JsonReader root;  // the whole config.json
  JsonReader text;  // the language model's config (`text_config` or the root)
  // Checkpoint tensor-name prefix of the language model ("" or "language_model.").
  std::string checkpoint_prefix;
  Dtype dtype = Dtype::kBFloat16;
  CheckpointQuantization quantization;
  ModuleNamePatterns excluded;  // quantization.excluded_modules, prepared once

  // The stored format of a quantizable module whose checkpoint shards are `shard_names`
  // (without the checkpoint prefix): the checkpoint's format unless the module is excluded.
  [[nodiscard]] QuantFormat format_for(const std::vector<std::string>& shard_names) const;
  // format_for of the shards `module_prefix` + each of `shard_suffixes` ("model.layers.3.mlp." and
  // {"gate_proj", "up_proj"}), without building each name as a string of its own.
  [[nodiscard]] QuantFormat format_for(std::string_view module_prefix,
                                       std::initializer_list<std::string_view> shard_suffixes) const;
  // The stored format of a FusedMoE block (the only modules MXFP4 checkpoints quantize).
  [[nodiscard]] QuantFormat expert_format_for(const std::string& name) const;
  [[nodiscard]] QuantFormat unquantized() const;
  // Unquantized in float32 whatever the model dtype: what vLLM keeps in fp32 (routers built as
  // nn.Linear(dtype=float32), Mamba's A).
  [[nodiscard]] QuantFormat unquantized_float32() const;
};

// `a` followed by `b` in one allocation (std::string's operator+ copies `a`, then grows the copy).
inline std::string cat(std::string_view a, std::string_view b) {
  std::string out;
  out.reserve(a.size() + b.size());
  out.append(a).append(b);
  return out;
}

// A linear module of the per-layer spec (no bias; QKV geometry set separately when needed).
inline LinearModule make_linear(std::string name, Component component, Parallelism parallelism,
                                std::vector<std::int64_t> outputs, std::int64_t input, QuantFormat format,
                                bool has_bias = false) {
  LinearModule m;
  m.name = std::move(name);
  m.component = component;
  m.parallelism = parallelism;
  m.output_sizes = std::move(outputs);
  m.input_size = input;
  m.has_bias = has_bias;
  m.format = format;
  return m;
}

// Reads `quantization_config` / `hf_quant_config.json` into a CheckpointQuantization.
// Throws InputError for a method or algorithm this version does not model.
// `dtype` is the model's unquantized dtype (the 16-bit type of integer schemes' scales).
CheckpointQuantization parse_quantization(const JsonReader& root, const JsonReader* text,
                                          const JsonReader* hf_quant_config, Dtype dtype);

// vLLM's derived maximum length (ModelConfig._get_and_verify_max_len without a user value).
// `config_class_default` > 0 stands in for max_position_embeddings when a sparse config omits it.
void derive_max_model_len(const JsonReader& text, ModelSpec& model, std::int64_t config_class_default);

// Whether a config is an EAGLE draft head's: an architecture vLLM registers only as a draft, or EAGLE's
// keys (draft_vocab_size, eagle_config, ...) on a Llama or DeepSeek config.
bool declares_eagle_head(const JsonReader& root, std::string_view architecture);

// ModelSpec::eagle_head of an EAGLE draft head's config (declares_eagle_head).
void parse_eagle_head(const JsonReader& root, ModelSpec& model);

// A Medusa draft's config (model_type "medusa", medusa.cpp): ModelSpec::medusa, family "medusa".
// `config_json` is the file's text (MedusaConfig renames keys in their order in the file).
void parse_medusa(const std::string& config_json, const JsonReader& root, ModelSpec& model);

// The vision tower and projector of a multimodal wrapper (`vision_config` present). Throws InputError
// naming the vision model type when it is not modelled: weights are never silently left out.
void parse_vision(const JsonReader& root, ModelSpec& model);

// The RoPE type of `rope_scaling` (or transformers 5's `rope_parameters`): "default" when absent.
std::string rope_type(const JsonReader& text);

// get_rope's partial_rotary_factor: rope_parameters' (or rope_scaling's) own, else the config's top-level
// key (transformers v5 and vLLM's patch_rope_parameters move it into rope_parameters), else `fallback`.
double partial_rotary_factor(const JsonReader& text, double fallback);

// Adds the model's shared rotary cos/sin cache(s) of `rotary_dim` columns to ModelSpec::buffers.
// `default_max_position` stands in for a sparse config's missing max_position_embeddings.
void add_rotary_caches(const JsonReader& text, ModelSpec& model, std::int64_t rotary_dim, Dtype cache_dtype,
                       std::int64_t default_max_position);

// Whether a config.json key is on the reviewed list of keys that change nothing vLLM allocates (token
// ids, training settings, transformers metadata, ...; src/model/config_keys.cpp gives each one's reason).
// `family` is the parser's name (FamilyParser::name); `value` the key's value (some keys are without
// effect only at one value, e.g. attention_bias false).
bool is_without_memory_effect(std::string_view family, std::string_view key, const nlohmann::json& value);

// Refuses configs whose parameter count is absurd (would overflow byte arithmetic).
void check_model_size(const ModelSpec& model);

}  // namespace gpubudget::detail
