// The hyperparameters every decoder family states, read once with their defaults spelled out and
// their invariants checked (llama.cpp's load_hparams shape). Family parsers read only what is theirs.
#pragma once

#include <cstdint>
#include <optional>

#include "model/parse_context.h"

namespace gpubudget::detail {

// What a family's config class fills in when its config.json omits a key (transformers' defaults),
// and which of the keys the family's attention has at all.
struct HparamsDefaults {
  std::optional<std::int64_t> num_attention_heads;  // absent: the key is required
  std::optional<std::int64_t> num_key_value_heads;  // absent: num_attention_heads (multi-head attention)
  std::optional<std::int64_t> head_dim;             // absent: hidden_size / num_attention_heads
  bool has_kv_heads = true;                         // false: MLA (no num_key_value_heads / head_dim)
  bool intermediate_required = true;                // false: intermediate_size is optional (0 when absent)
  std::optional<std::int64_t> num_hidden_layers;    // absent: the key is required
};

struct CommonHparams {
  std::int64_t hidden_size = 0;          // hidden_size
  std::int64_t num_hidden_layers = 0;    // num_hidden_layers
  std::int64_t num_attention_heads = 0;  // num_attention_heads
  std::int64_t num_key_value_heads = 0;  // num_key_value_heads (0 without standard attention)
  std::int64_t head_dim = 0;             // head_dim (0 without standard attention)
  std::int64_t intermediate_size = 0;    // intermediate_size (0 when optional and absent)
};

// Reads the common keys of `c.text`. Throws InputError naming the key and value when one is
// missing, out of range, or inconsistent: num_key_value_heads must divide num_attention_heads, and
// without head_dim, num_attention_heads must divide hidden_size.
CommonHparams read_common_hparams(const JsonReader& text, const HparamsDefaults& defaults = {});

}  // namespace gpubudget::detail
