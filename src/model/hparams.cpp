// read_common_hparams (hparams.h).
#include "model/hparams.h"

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget::detail {

CommonHparams read_common_hparams(const JsonReader& t, const HparamsDefaults& defaults) {
  CommonHparams h;
  h.hidden_size = t.integer("hidden_size", 1, kMaxHidden);
  h.num_hidden_layers = defaults.num_hidden_layers
                            ? t.optional_integer("num_hidden_layers", 1, kMaxLayers).value_or(*defaults.num_hidden_layers)
                            : t.integer("num_hidden_layers", 1, kMaxLayers);
  h.num_attention_heads = defaults.num_attention_heads
                              ? t.optional_integer("num_attention_heads", 1, kMaxHeads).value_or(*defaults.num_attention_heads)
                              : t.integer("num_attention_heads", 1, kMaxHeads);
  h.intermediate_size = defaults.intermediate_required ? t.integer("intermediate_size", 1, kMaxIntermediate)
                                                       : t.optional_integer("intermediate_size", 1, kMaxIntermediate).value_or(0);
  if (!defaults.has_kv_heads) return h;
  const std::int64_t n = h.num_attention_heads;
  h.num_key_value_heads = t.optional_integer("num_key_value_heads", 1, kMaxHeads).value_or(defaults.num_key_value_heads.value_or(n));
  if (n % h.num_key_value_heads != 0) {
    throw InputError(fmt::format("{}: num_key_value_heads {} does not divide num_attention_heads {}",
                                 t.path("num_key_value_heads"), h.num_key_value_heads, n));
  }
  if (t.has("head_dim")) {
    h.head_dim = t.integer("head_dim", 1, kMaxHidden);
  } else if (defaults.head_dim) {
    h.head_dim = *defaults.head_dim;
  } else if (h.hidden_size % n != 0) {
    throw InputError(fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {} and no head_dim is given",
                                 t.path("hidden_size"), h.hidden_size, n));
  } else {
    h.head_dim = h.hidden_size / n;  // vLLM's get_head_size
  }
  return h;
}

}  // namespace gpubudget::detail
