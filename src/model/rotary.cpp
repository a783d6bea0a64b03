// Rotary cos/sin caches (vLLM model_executor/layers/rotary_embedding/: get_rope shares one instance
// per distinct setting; each holds a persistent cos_sin_cache of [positions, rotary_dim]). They are
// allocated with the model, so vLLM's "Model loading took" includes them.
//   default, llama3:     positions = max_position_embeddings
//   linear, dynamic:     positions = max_position_embeddings × factor
//   yarn (incl. DeepSeek): positions = original_max_position_embeddings × factor
//   longrope / su (Phi-3): positions = original_max_position_embeddings + max_position_embeddings (short
//                        and long caches in one buffer, phi3_long_rope_scaled_rope.py)
//   multimodal (mrope_section, MRotaryEmbedding): 4 × those positions ("the maximum index value is
//   related to the duration of the input video", mrope.py cache_max_position_num)
#include <cmath>

#include <fmt/format.h>

#include "model/parse_context.h"

namespace gpubudget::detail {

namespace {

constexpr std::int64_t kMaxPositions = std::int64_t{1} << 34;  // as the derived max_model_len (limits.h)

// positions × factor, refused (naming the factor) beyond kMaxPositions.
std::int64_t scaled_positions(const JsonReader& rope, std::int64_t positions, double factor) {
  const double scaled = std::round(static_cast<double>(positions) * factor);
  if (!(scaled <= static_cast<double>(kMaxPositions))) {
    rope.fail("factor", fmt::format("a factor that keeps {} positions x factor at most {}", positions, kMaxPositions));
  }
  return static_cast<std::int64_t>(scaled);
}

std::int64_t rope_positions(const JsonReader& t, const JsonReader* rope, std::int64_t default_max_position) {
  const auto max_pos = t.optional_integer("max_position_embeddings", 1, kMaxPositions).value_or(default_max_position);
  if (rope == nullptr) return max_pos;
  const auto type = rope->optional_string("rope_type").value_or(rope->optional_string("type").value_or("default"));
  const double factor = rope->optional_number("factor", 1e-6, 1024).value_or(1.0);
  if (type == "linear" || type == "dynamic") return scaled_positions(*rope, max_pos, factor);
  if (type == "longrope" || type == "su") {
    // Phi3LongRoPEScaledRotaryEmbedding: one buffer of the short (original length) and long caches.
    const auto original = rope->optional_integer("original_max_position_embeddings", 1, kMaxPositions)
                              .value_or(t.optional_integer("original_max_position_embeddings", 1, kMaxPositions).value_or(0));
    return max_pos + original;
  }
  if (type == "yarn") {
    const auto original = rope->optional_integer("original_max_position_embeddings", 1, kMaxPositions).value_or(max_pos);
    return scaled_positions(*rope, original, factor);
  }
  return max_pos;
}

}  // namespace

std::string rope_type(const JsonReader& t) {
  std::optional<JsonReader> rope = t.optional_object("rope_scaling");
  if (!rope) rope = t.optional_object("rope_parameters");
  if (!rope) return "default";
  return rope->optional_string("rope_type").value_or(rope->optional_string("type").value_or("default"));
}

double partial_rotary_factor(const JsonReader& t, double fallback) {
  std::optional<JsonReader> rope = t.optional_object("rope_parameters");
  if (!rope) rope = t.optional_object("rope_scaling");
  const auto top = t.optional_number("partial_rotary_factor", 0.0, 1.0);
  if (rope) {
    if (const auto own = rope->optional_number("partial_rotary_factor", 0.0, 1.0)) return *own;
  }
  return top.value_or(fallback);
}

void add_rotary_caches(const JsonReader& t, ModelSpec& model, std::int64_t rotary_dim, Dtype cache_dtype,
                       std::int64_t default_max_position) {
  std::optional<JsonReader> rope = t.optional_object("rope_scaling");
  if (!rope) rope = t.optional_object("rope_parameters");
  std::int64_t positions = rope_positions(t, rope ? &*rope : nullptr, default_max_position);
  if (rope && rope->has("mrope_section")) positions *= 4;
  if (positions == 0 || rotary_dim == 0) return;
  model.buffers.push_back({"rotary_emb.cos_sin_cache", Component::kBuffers, positions * rotary_dim, cache_dtype});
  if (model.model_type == "gemma3_text" || (model.model_type == "olmo3" && rope)) {
    // Gemma 3's sliding layers use a second, unscaled RoPE (rope_local_base_freq); OLMo 3's sliding
    // layers a plain one beside the full layers' scaled one (olmo2.py).
    const auto local = t.optional_integer("max_position_embeddings", 1, std::int64_t{1} << 34).value_or(default_max_position);
    model.buffers.push_back({"rotary_emb_local.cos_sin_cache", Component::kBuffers, local * rotary_dim, cache_dtype});
  }
}

}  // namespace gpubudget::detail
