// Medusa draft configs (vllm/transformers_utils/configs/medusa.py MedusaConfig, chosen by model_type
// "medusa"; the heads themselves are built in drafters.cpp from model_executor/models/medusa.py).
// MedusaConfig.from_pretrained renames every key holding "num" and "heads" to num_heads, and every
// other key holding "num" and "layers" to num_hidden_layers, in the file's order (so the last such
// key wins); absent fields take MedusaConfig's defaults.
#include <optional>
#include <string>

#include "model/parse_context.h"

namespace gpubudget::detail {

namespace {

// MedusaConfig.__init__'s defaults.
constexpr std::int64_t kDefaultHidden = 4096;
constexpr std::int64_t kDefaultVocab = 32001;
constexpr std::int64_t kDefaultHeads = 5;
constexpr std::int64_t kDefaultLayers = 1;

}  // namespace

void parse_medusa(const std::string& config_json, const JsonReader& root, ModelSpec& model) {
  model.family = "medusa";
  const auto architectures = root.string_list("architectures");
  model.architecture = architectures.empty() ? "MedusaModel" : architectures.front();
  // The draft runs in the target's dtype (SpeculativeConfig: dtype=target_model_config.dtype).
  (void)root.optional_string("torch_dtype");
  (void)root.optional_string("dtype");
  model.hidden_size = root.optional_integer("hidden_size", 1, kMaxHidden).value_or(kDefaultHidden);
  model.vocab_size = root.optional_integer("vocab_size", 1, kMaxVocab).value_or(kDefaultVocab);
  MedusaHeads heads;
  heads.truncated_vocab_size =
      root.optional_integer("truncated_vocab_size", 1, model.vocab_size).value_or(model.vocab_size);
  heads.original_lm_head = root.boolean("original_lm_head", false);
  heads.fc_bias = root.boolean("medusa_fc_bias", false);
  (void)root.optional_number("logit_scale", 0.0, 1e9);  // scales the logits: no tensor

  // The renamed keys, in document order (the reader's own object is sorted by key). Every renamed key
  // is popped, so each counts as read; only the last of each kind takes effect.
  const auto ordered = nlohmann::ordered_json::parse(config_json, nullptr, false);
  std::optional<std::string> heads_key, layers_key;
  for (const auto& [key, value] : ordered.items()) {
    if (key.find("num") == std::string::npos) continue;
    if (key.find("heads") != std::string::npos) {
      heads_key = key;
    } else if (key.find("layers") != std::string::npos) {
      layers_key = key;
    } else {
      continue;
    }
    (void)root.has(key);
  }
  heads.checkpoint_heads = heads_key ? root.integer(*heads_key, 1, kMaxLayers) : kDefaultHeads;
  heads.layers_per_head = layers_key ? root.integer(*layers_key, 0, kMaxLayers) : kDefaultLayers;
  model.medusa = heads;
}

}  // namespace gpubudget::detail
