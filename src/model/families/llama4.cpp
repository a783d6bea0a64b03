// Llama 4 text models (vLLM model_executor/models/llama4.py): three chunked-local RoPE layers per
// global NoPE layer (`no_rope_layers`), MoE every `interleave_moe_layer_step` layers with a shared
// expert, dense layers of `intermediate_size_mlp`. QK norms carry no weights.
#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"
#include "gpubudget/error.h"

namespace gpubudget::detail {

void parse_llama4(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const CommonHparams hp = read_common_hparams(t);
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads,
                     kv = hp.num_key_value_heads, d = hp.head_dim, I = hp.intermediate_size;
  const auto chunk = t.integer("attention_chunk_size", 1, std::int64_t{1} << 32);
  const auto E = t.integer("num_local_experts", 1, kMaxExperts);
  const auto dense_I = t.integer("intermediate_size_mlp", 1, kMaxIntermediate);
  const auto step = t.optional_integer("interleave_moe_layer_step", 1, kMaxLayers).value_or(1);
  // no_rope_layers[i] == 1: RoPE with chunked local attention; 0: global NoPE attention. Default:
  // every fourth layer global (Llama4TextConfig, no_rope_layer_interval 4).
  std::vector<std::int64_t> rope_layers = t.integer_list("no_rope_layers", 0, 1);
  if (rope_layers.empty()) {
    for (std::int64_t i = 0; i < L; ++i) rope_layers.push_back((i + 1) % 4 != 0 ? 1 : 0);
  }
  if (static_cast<std::int64_t>(rope_layers.size()) != L) t.fail("no_rope_layers", fmt::format("{} entries", L));
  model.hidden_size = H;
  model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  const Dtype dt = c.dtype;
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const bool local = rope_layers[static_cast<std::size_t>(i)] == 1;
    layer.attention =
        standard_attention(local ? AttentionKind::kChunkedLocal : AttentionKind::kFull, n, kv, d, local ? chunk : 0);
    const std::string p = fmt::format("model.layers.{}.", i);
    add_gqa_attention(c, layer, p + "self_attn.", H, n, n, kv, d, t.boolean("attention_bias", false));
    const std::string m = p + "feed_forward.";
    if ((i + 1) % step == 0) {
      layer.linears.push_back(make_linear(m + "router", Component::kRouter, Parallelism::kReplicated, {E}, H,
                                          c.unquantized()));
      add_experts(c, layer, m + "experts", E, I, H);
      add_gated_mlp(c, layer, m + "shared_expert.", H, I, Component::kSharedExperts);
    } else {
      add_gated_mlp(c, layer, m, H, dense_I, Component::kDenseMlp);
    }
    add_layer_norms(layer, p, H, dt);
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  add_rotary_caches(t, model, d, dt, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"llama4_text"}};
constexpr std::string_view kArchitectures[] = {"Llama4ForCausalLM", "Llama4ForConditionalGeneration"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"use_qk_norm", "", "an L2 norm without weights (llama4.py: RMSNorm(has_weight=False))"},
};

}  // namespace

const Family& family_llama4() {
  static constexpr Family kFamily{.name = "llama4",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_llama4};
  return kFamily;
}

}  // namespace gpubudget::detail
