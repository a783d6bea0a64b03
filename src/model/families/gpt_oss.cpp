// gpt-oss (vLLM model_executor/models/gpt_oss.py): GQA attention with q/k/v/o biases and per-head
// attention sinks, sliding window on the layers `layer_types` says, MoE on every layer with a biased
// router and MXFP4 experts (with bf16 biases); everything but the experts is bf16.
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_gpt_oss(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  // Mxfp4MoEMethod picks gpt-oss's MXFP4 backends by its own priority list (mxfp4.py get_mxfp4_backend).
  model.mxfp4_backends_of_gpt_oss = true;
  const CommonHparams hp = read_common_hparams(t);
  const std::int64_t H = hp.hidden_size, n = hp.num_attention_heads, kv = hp.num_key_value_heads, d = hp.head_dim,
                     I = hp.intermediate_size, L = hp.num_hidden_layers;
  const auto E = t.integer("num_local_experts", 1, kMaxExperts);
  const auto window = t.integer("sliding_window", 1, std::int64_t{1} << 32);
  const auto types = t.string_list("layer_types");
  if (static_cast<std::int64_t>(types.size()) != L) t.fail("layer_types", fmt::format("{} entries", L));
  model.hidden_size = H;
  model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const bool sliding = types[static_cast<std::size_t>(i)] == "sliding_attention";
    layer.attention = standard_attention(sliding ? AttentionKind::kSlidingWindow : AttentionKind::kFull, n, kv, d,
                                         sliding ? window : 0);
    const std::string p = fmt::format("model.layers.{}.", i);
    add_gqa_attention(c, layer, p + "self_attn.", H, n, n, kv, d, /*qkv_bias=*/true, /*o_bias=*/true);
    // One sink logit per local query head.
    layer.linears.push_back(make_linear(p + "self_attn.sinks", Component::kAttention, Parallelism::kColumn, {n}, 1, plain));
    layer.linears.push_back(make_linear(p + "mlp.router", Component::kRouter, Parallelism::kReplicated, {E}, H, plain,
                                        true));
    add_experts(c, layer, p + "mlp.experts", E, I, H);
    layer.experts.back().has_bias = true;
    add_layer_norms(layer, p, H, dt);
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  add_rotary_caches(t, model, d, dt, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"gpt_oss"}};
constexpr std::string_view kArchitectures[] = {"GptOssForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"attention_bias", "true", "the parser builds gpt-oss's q/k/v/o biases"},
    {"experts_per_token", "", "alias of num_experts_per_tok"},
};

}  // namespace

const Family& family_gpt_oss() {
  static constexpr Family kFamily{.name = "gpt_oss",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_gpt_oss};
  return kFamily;
}

}  // namespace gpubudget::detail
