// vLLM's derived maximum length: ModelArchConfigConvertorBase.derive_max_model_len_and_key and
// config/model.py::_get_and_verify_max_len (without a user value).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/parse_context.h"

namespace gpubudget::detail {

namespace {

constexpr const char* kLengthKeys[] = {
    "max_position_embeddings", "n_positions",          "max_seq_len",    "seq_length",
    "model_max_length",        "max_target_positions", "max_sequence_length",
    "max_seq_length",          "seq_len",
};

constexpr std::int64_t kMaxLength = std::int64_t{1} << 34;

}  // namespace

void derive_max_model_len(const JsonReader& text, ModelSpec& model, std::int64_t config_class_default) {
  double derived = std::numeric_limits<double>::infinity();
  std::string key_used;
  for (const char* key : kLengthKeys) {
    if (!text.has(key)) continue;
    const auto value = text.integer(key, 1, kMaxLength);
    if (static_cast<double>(value) < derived) {
      derived = static_cast<double>(value);
      key_used = key;
    }
  }
  if (text.has("model_max_length")) {
    derived = static_cast<double>(text.integer("model_max_length", 1, kMaxLength));
    key_used = "model_max_length";
  }
  if (key_used.empty() && config_class_default > 0) {
    // The config class's own default for max_position_embeddings (what transformers would fill in).
    derived = static_cast<double>(config_class_default);
    key_used = "max_position_embeddings (config class default)";
  }
  if (key_used.empty()) {
    model.derived_max_model_len = 2048;
    model.derived_max_model_len_source = "no length key in config.json: vLLM assumes 2048";
    return;
  }

  std::string source = key_used;
  // RoPE scaling (skipped by vLLM for gemma3): every type but su/longrope/llama3 multiplies the
  // length by `factor`; YaRN starts from original_max_position_embeddings.
  const char* rope_key = text.has("rope_scaling") ? "rope_scaling"
                         : text.has("rope_parameters") ? "rope_parameters" : nullptr;
  if (rope_key != nullptr && model.model_type != "gemma3_text" && model.model_type != "gemma3") {
    const JsonReader rope = text.object(rope_key);
    std::string type = rope.optional_string("rope_type").value_or(rope.optional_string("type").value_or(""));
    if (type != "su" && type != "longrope" && type != "llama3") {
      if (type == "yarn" && rope.has("original_max_position_embeddings")) {
        derived = static_cast<double>(rope.integer("original_max_position_embeddings", 1, kMaxLength));
        source = fmt::format("{}.original_max_position_embeddings", rope_key);
      }
      const double factor = rope.optional_number("factor", 1e-6, 1024).value_or(1.0);
      derived *= factor;
      source += fmt::format(" x {}.factor {}", rope_key, factor);
    }
  }
  if (derived > static_cast<double>(kMaxLength)) {
    throw InputError(fmt::format("{}: derived max_model_len {} is absurd", text.file(), derived));
  }
  model.derived_max_model_len = static_cast<std::int64_t>(derived);
  model.derived_max_model_len_source = source;
}

}  // namespace gpubudget::detail
