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

    LinearModule qkv;
    qkv.name = a + "qkv_proj";
    qkv.component = Component::kAttention;
    qkv.parallelism = Parallelism::kQkv;
    qkv.output_sizes = {n * d, kv * d, kv * d};
    qkv.input_size = H;
    qkv.has_bias = qkv_bias;
    qkv.num_heads = n;
    qkv.num_kv_heads = kv;
    qkv.head_dim = d;
    qkv.format = c.format_for({a + "q_proj", a + "k_proj", a + "v_proj"});
    layer.linears.push_back(qkv);

    LinearModule o;
    o.name = a + "o_proj";
    o.component = Component::kAttention;
    o.parallelism = Parallelism::kRow;
    o.output_sizes = {H};
    o.input_size = n * d;
    o.has_bias = false;
    o.format = c.format_for({a + "o_proj"});
    layer.linears.push_back(o);
    if (qk_norm) {
      layer.replicated.push_back({a + "q_norm", Component::kAttention, d, dt});
      layer.replicated.push_back({a + "k_norm", Component::kAttention, d, dt});
    }

    const std::string m = p + "mlp.";
    LinearModule gate_up;
    gate_up.name = m + "gate_up_proj";
    gate_up.component = Component::kDenseMlp;
    gate_up.parallelism = Parallelism::kColumn;
    gate_up.output_sizes = {I, I};
    gate_up.input_size = H;
    gate_up.has_bias = mlp_bias;
    gate_up.format = c.format_for({m + "gate_proj", m + "up_proj"});
    layer.linears.push_back(gate_up);

    LinearModule down;
    down.name = m + "down_proj";
    down.component = Component::kDenseMlp;
    down.parallelism = Parallelism::kRow;
    down.output_sizes = {H};
    down.input_size = I;
    down.has_bias = mlp_bias;
    down.format = c.format_for({m + "down_proj"});
    layer.linears.push_back(down);

    layer.replicated.push_back({p + "input_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "post_attention_layernorm", Component::kNorms, H, dt});
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
}

}  // namespace gpubudget::detail
