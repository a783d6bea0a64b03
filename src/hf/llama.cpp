// Llama-style dense GQA decoders: Llama 2/3.x, Mistral, Qwen2/2.5, Qwen3 (q/k norm)
// (vLLM model_executor/models/{llama,qwen2,qwen3}.py).
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "parse_context.h"

namespace gpubudget::detail {

void parse_llama(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const auto H = t.integer("hidden_size", 1, kMaxHidden);
  const auto n = t.integer("num_attention_heads", 1, kMaxHeads);
  // num_key_value_heads defaults to num_attention_heads (multi-head attention).
  const auto kv = t.optional_integer("num_key_value_heads", 1, kMaxHeads).value_or(n);
  // head_dim defaults to hidden_size / num_attention_heads (vLLM get_head_size).
  const auto d = t.optional_integer("head_dim", 1, kMaxHidden).value_or(H / n);
  const auto I = t.integer("intermediate_size", 1, kMaxIntermediate);
  const auto L = t.integer("num_hidden_layers", 1, kMaxLayers);
  if (n % kv != 0) {
    throw InputError(fmt::format("{}: num_key_value_heads {} does not divide num_attention_heads {}",
                                 t.path("num_key_value_heads"), kv, n));
  }
  if (!t.has("head_dim") && H % n != 0) {
    throw InputError(fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {} and no head_dim "
                                 "is given",
                                 t.path("hidden_size"), H, n));
  }
  // Qwen2 always has q/k/v biases; others say so with attention_bias.
  const bool qkv_bias = model.model_type == "qwen2" || t.boolean("attention_bias", false);
  const bool mlp_bias = t.boolean("mlp_bias", false);
  const bool qk_norm = model.model_type == "qwen3";
  model.hidden_size = H;
  model.family = "llama";

  const Dtype dt = c.dtype;
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    layer.attention.kind = AttentionKind::kFull;
    layer.attention.num_attention_heads = n;
    layer.attention.num_key_value_heads = kv;
    layer.attention.head_dim = d;
    layer.attention.head_dim_v = d;
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = p + "self_attn.";

    LinearModule qkv = make_linear(a + "qkv_proj", Component::kAttention, Parallelism::kQkv, {n * d, kv * d, kv * d},
                                   H, c.format_for({a + "q_proj", a + "k_proj", a + "v_proj"}), qkv_bias);
    qkv.num_heads = n;
    qkv.num_kv_heads = kv;
    qkv.head_dim = d;
    layer.linears.push_back(qkv);
    layer.linears.push_back(make_linear(a + "o_proj", Component::kAttention, Parallelism::kRow, {H}, n * d,
                                        c.format_for({a + "o_proj"})));
    if (qk_norm) {
      layer.replicated.push_back({a + "q_norm", Component::kAttention, d, dt});
      layer.replicated.push_back({a + "k_norm", Component::kAttention, d, dt});
    }
    const std::string m = p + "mlp.";
    layer.linears.push_back(make_linear(m + "gate_up_proj", Component::kDenseMlp, Parallelism::kColumn, {I, I}, H,
                                        c.format_for({m + "gate_proj", m + "up_proj"}), mlp_bias));
    layer.linears.push_back(make_linear(m + "down_proj", Component::kDenseMlp, Parallelism::kRow, {H}, I,
                                        c.format_for({m + "down_proj"}), mlp_bias));

    layer.replicated.push_back({p + "input_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "post_attention_layernorm", Component::kNorms, H, dt});
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
}

}  // namespace gpubudget::detail
