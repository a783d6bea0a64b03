// gpt-oss (vLLM model_executor/models/gpt_oss.py): GQA attention with q/k/v/o biases and per-head
// attention sinks, sliding window on the layers `layer_types` says, MoE on every layer with a biased
// router and MXFP4 experts (with bf16 biases); everything but the experts is bf16.
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "parse_context.h"

namespace gpubudget::detail {

void parse_gpt_oss(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const auto H = t.integer("hidden_size", 1, kMaxHidden);
  const auto n = t.integer("num_attention_heads", 1, kMaxHeads);
  const auto kv = t.integer("num_key_value_heads", 1, kMaxHeads);
  const auto d = t.integer("head_dim", 1, kMaxHidden);
  const auto I = t.integer("intermediate_size", 1, kMaxIntermediate);
  const auto L = t.integer("num_hidden_layers", 1, kMaxLayers);
  const auto E = t.integer("num_local_experts", 1, kMaxExperts);
  const auto window = t.integer("sliding_window", 1, std::int64_t{1} << 32);
  const auto types = t.string_list("layer_types");
  if (static_cast<std::int64_t>(types.size()) != L) t.fail("layer_types", fmt::format("{} entries", L));
  if (n % kv != 0) {
    throw InputError(fmt::format("{}: num_key_value_heads {} does not divide num_attention_heads {}",
                                 t.path("num_key_value_heads"), kv, n));
  }
  model.hidden_size = H;
  model.family = "gpt_oss";
  model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const bool sliding = types[static_cast<std::size_t>(i)] == "sliding_attention";
    layer.attention.kind = sliding ? AttentionKind::kSlidingWindow : AttentionKind::kFull;
    layer.attention.window = sliding ? window : 0;
    layer.attention.num_attention_heads = n;
    layer.attention.num_key_value_heads = kv;
    layer.attention.head_dim = d;
    layer.attention.head_dim_v = d;
    const std::string p = fmt::format("model.layers.{}.", i);
    LinearModule qkv = make_linear(p + "attn.qkv_proj", Component::kAttention, Parallelism::kQkv,
                                   {n * d, kv * d, kv * d}, H, plain, true);
    qkv.num_heads = n;
    qkv.num_kv_heads = kv;
    qkv.head_dim = d;
    layer.linears.push_back(qkv);
    layer.linears.push_back(make_linear(p + "attn.o_proj", Component::kAttention, Parallelism::kRow, {H}, n * d, plain,
                                        true));
    // One sink logit per local query head.
    layer.linears.push_back(make_linear(p + "attn.sinks", Component::kAttention, Parallelism::kColumn, {n}, 1, plain));
    layer.linears.push_back(make_linear(p + "mlp.router", Component::kRouter, Parallelism::kReplicated, {E}, H, plain,
                                        true));
    ExpertsModule e;
    e.name = p + "mlp.experts";
    e.num_experts = E;
    e.intermediate_size = I;
    e.hidden_size = H;
    e.format = c.expert_format_for(e.name);
    layer.experts.push_back(e);
    layer.is_moe = true;
    layer.replicated.push_back({p + "input_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "post_attention_layernorm", Component::kNorms, H, dt});
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  add_rotary_caches(t, model, d, dt, 0);
}

}  // namespace gpubudget::detail
