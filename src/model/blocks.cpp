#include "model/blocks.h"

namespace gpubudget::detail {

void add_gated_mlp(const ParseContext& c, LayerSpec& layer, const std::string& p, std::int64_t hidden,
                   std::int64_t intermediate, Component component, bool bias) {
  layer.linears.push_back(make_linear(cat(p, "gate_up_proj"), component, Parallelism::kColumn,
                                      {intermediate, intermediate}, hidden, c.format_for(p, {"gate_proj", "up_proj"}),
                                      bias));
  layer.linears.push_back(make_linear(cat(p, "down_proj"), component, Parallelism::kRow, {hidden}, intermediate,
                                      c.format_for(p, {"down_proj"}), bias));
}

void add_experts(const ParseContext& c, LayerSpec& layer, const std::string& name, std::int64_t experts,
                 std::int64_t intermediate, std::int64_t hidden, bool gated) {
  ExpertsModule e;
  e.name = name;
  e.num_experts = experts;
  e.intermediate_size = intermediate;
  e.hidden_size = hidden;
  e.gated = gated;
  e.format = c.expert_format_for(name);
  layer.experts.push_back(e);
  layer.is_moe = true;
}

void add_gqa_attention(const ParseContext& c, LayerSpec& layer, const std::string& p, std::int64_t hidden,
                       std::int64_t query_heads, std::int64_t attention_heads, std::int64_t kv_heads,
                       std::int64_t head_dim, bool qkv_bias, bool o_bias) {
  LinearModule qkv = make_linear(cat(p, "qkv_proj"), Component::kAttention, Parallelism::kQkv,
                                 {query_heads * head_dim, kv_heads * head_dim, kv_heads * head_dim}, hidden,
                                 c.format_for(p, {"q_proj", "k_proj", "v_proj"}), qkv_bias);
  qkv.num_heads = query_heads;
  qkv.num_kv_heads = kv_heads;
  qkv.head_dim = head_dim;
  layer.linears.push_back(qkv);
  layer.linears.push_back(make_linear(cat(p, "o_proj"), Component::kAttention, Parallelism::kRow, {hidden},
                                      attention_heads * head_dim, c.format_for(p, {"o_proj"}), o_bias));
}

Mamba2Geometry read_mamba2_geometry(const JsonReader& t, std::int64_t H, bool reads_d_ssm, ModelSpec& model) {
  Mamba2Geometry g;
  g.heads = t.integer("mamba_n_heads", 1, kMaxHeads);
  g.head_dim = t.integer("mamba_d_head", 1, kMaxHidden);
  g.groups = t.integer("mamba_n_groups", 1, kMaxHeads);
  g.state = t.integer("mamba_d_state", 1, kMaxHidden);
  g.conv_kernel = t.integer("mamba_d_conv", 2, 64);
  g.inner = reads_d_ssm && t.has("mamba_d_ssm") && !t.value()["mamba_d_ssm"].is_null()
                ? t.integer("mamba_d_ssm", 1, kMaxIntermediate)
                : t.integer("mamba_expand", 1, 64) * H;
  g.conv_bias = t.boolean("mamba_conv_bias", true);
  g.proj_bias = t.boolean("mamba_proj_bias", false);
  model.mamba_chunk_size = t.optional_integer("mamba_chunk_size", 1, kMaxHidden).value_or(256);
  return g;
}

void add_mamba2_mixer(const ParseContext& c, LayerSpec& layer, const std::string& x, std::int64_t H,
                      const Mamba2Geometry& g) {
  const std::int64_t inner = g.inner > 0 ? g.inner : g.heads * g.head_dim;
  const std::int64_t conv_dim = inner + 2 * g.groups * g.state;
  const QuantFormat plain = c.unquantized();
  layer.attention.kind = AttentionKind::kMamba;
  layer.attention.num_attention_heads = g.heads;
  layer.attention.state = {conv_dim, g.conv_kernel - 1, g.heads, g.head_dim * g.state, MambaMixer::kMamba2,
                           g.ssm_dtype, g.groups, g.state};
  LinearModule in = make_linear(x + "in_proj", Component::kAttention, Parallelism::kColumn,
                                {inner, inner, g.groups * g.state, g.groups * g.state, g.heads}, H,
                                c.format_for({x + "in_proj"}), g.proj_bias);
  in.mamba_groups = g.groups;
  in.mamba_group_rows = g.state;
  layer.linears.push_back(in);
  LinearModule conv = make_linear(x + "conv1d", Component::kAttention, Parallelism::kColumn,
                                  {inner, g.groups * g.state, g.groups * g.state}, g.conv_kernel, plain, g.conv_bias);
  conv.mamba_groups = g.groups;
  conv.mamba_group_rows = g.state;
  layer.linears.push_back(conv);
  LinearModule a = make_linear(x + "A_log", Component::kAttention, Parallelism::kColumn, {g.heads}, 1,
                               c.unquantized_float32());
  a.checkpoint_formats = {plain};
  layer.linears.push_back(a);
  for (const char* per_head : {"D", "dt_bias"}) {
    layer.linears.push_back(make_linear(x + per_head, Component::kAttention, Parallelism::kColumn, {g.heads}, 1, plain));
  }
  if (g.rms_norm) {
    layer.linears.push_back(make_linear(x + "norm", Component::kAttention, Parallelism::kColumn, {inner}, 1, plain));
  }
  layer.linears.push_back(make_linear(x + "out_proj", Component::kAttention, Parallelism::kRow, {H}, inner,
                                      c.format_for({x + "out_proj"}), g.proj_bias));
}

Dtype dtype_field(const JsonReader& config, const std::string& key, Dtype fallback) {
  return optional_dtype_field(config, key).value_or(fallback);
}

std::optional<Dtype> optional_dtype_field(const JsonReader& config, const std::string& key) {
  if (!config.has(key)) return std::nullopt;
  const auto parsed = parse_torch_dtype(config.string(key));
  if (!parsed) config.fail(key, "\"float32\", \"bfloat16\" or \"float16\"");
  return parsed;
}

AttentionSpec standard_attention(AttentionKind kind, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                                 std::int64_t window) {
  AttentionSpec a;
  a.kind = kind;
  a.num_attention_heads = heads;
  a.num_key_value_heads = kv_heads;
  a.head_dim = head_dim;
  a.head_dim_v = head_dim;
  a.window = window;
  return a;
}

void add_layer_norms(LayerSpec& layer, const std::string& p, std::int64_t hidden, Dtype dtype) {
  layer.replicated.push_back({cat(p, "input_layernorm"), Component::kNorms, hidden, dtype});
  layer.replicated.push_back({cat(p, "post_attention_layernorm"), Component::kNorms, hidden, dtype});
}

}  // namespace gpubudget::detail
