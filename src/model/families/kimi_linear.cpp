// Kimi-Linear (vLLM model_executor/models/kimi_linear.py): Kimi Delta Attention (KDA) linear-attention
// layers with a recurrent state, MLA full-attention layers (`linear_attn_config.full_attn_layers`,
// 1-based), DeepSeek-style MoE after `first_k_dense_replace` dense layers.
#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_kimi_linear(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const CommonHparams hp = read_common_hparams(t, {std::nullopt, std::nullopt, std::nullopt, false, true, std::nullopt});
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads,
                     dense_I = hp.intermediate_size;
  const auto kv_lora = t.integer("kv_lora_rank", 1, kMaxHidden);
  const auto nope = t.integer("qk_nope_head_dim", 1, kMaxHidden);
  const auto rope = t.integer("qk_rope_head_dim", 1, kMaxHidden);
  const auto v_dim = t.integer("v_head_dim", 1, kMaxHidden);
  if (t.has("q_lora_rank")) t.fail("q_lora_rank", "null (Kimi-Linear's MLA has no query LoRA)");
  const JsonReader la = t.object("linear_attn_config");
  const auto heads = la.integer("num_heads", 1, kMaxHeads);
  const auto hd = la.integer("head_dim", 1, kMaxHidden);
  const auto kernel = la.integer("short_conv_kernel_size", 2, 64);
  const auto full_layers = la.integer_list("full_attn_layers", 1, kMaxLayers);  // 1-based
  const auto E = t.integer("num_experts", 1, kMaxExperts);
  const auto moe_I = t.integer("moe_intermediate_size", 1, kMaxIntermediate);
  const auto shared = t.optional_integer("num_shared_experts", 0, kMaxExperts).value_or(0);
  const auto first_dense = t.optional_integer("first_k_dense_replace", 0, kMaxLayers).value_or(0);
  const auto moe_freq = t.optional_integer("moe_layer_freq", 1, kMaxLayers).value_or(1);
  model.hidden_size = H;
  model.mla_qk_nope_head_dim = nope;
  model.num_experts_per_token = t.integer("num_experts_per_token", 1, kMaxExperts);
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  const QuantFormat fp32 = c.unquantized_float32();
  const std::int64_t proj = heads * hd;
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = p + "self_attn.";
    const bool full = std::find(full_layers.begin(), full_layers.end(), i + 1) != full_layers.end();
    if (full) {
      layer.attention.kind = AttentionKind::kMla;
      layer.attention.num_attention_heads = n;
      layer.attention.num_key_value_heads = 1;
      layer.attention.head_dim = kv_lora + rope;
      layer.linears.push_back(make_linear(a + "q_proj", Component::kAttention, Parallelism::kColumn,
                                          {n * (nope + rope)}, H, c.format_for({a + "q_proj"})));
      layer.linears.push_back(make_linear(a + "kv_a_proj_with_mqa", Component::kAttention, Parallelism::kReplicated,
                                          {kv_lora + rope}, H, c.format_for({a + "kv_a_proj_with_mqa"})));
      layer.replicated.push_back({a + "kv_a_layernorm", Component::kAttention, kv_lora, dt});
      layer.linears.push_back(make_linear(a + "kv_b_proj", Component::kAttention, Parallelism::kColumn,
                                          {n * (nope + v_dim)}, kv_lora, c.format_for({a + "kv_b_proj"})));
      layer.linears.push_back(make_linear(a + "o_proj", Component::kAttention, Parallelism::kRow, {H}, n * v_dim,
                                          c.format_for({a + "o_proj"})));
    } else {
      // KDA: a recurrent state of heads x head_dim x head_dim (always fp32) and short convolutions of q, k, v.
      layer.attention.kind = AttentionKind::kMamba;
      layer.attention.num_attention_heads = heads;
      layer.attention.state = {3 * proj, kernel - 1, heads, hd * hd, MambaMixer::kKda, std::nullopt};
      for (const char* x : {"q_proj", "k_proj", "v_proj"}) {
        layer.linears.push_back(make_linear(a + x, Component::kAttention, Parallelism::kColumn, {proj}, H,
                                            c.format_for({a + x})));
      }
      for (const char* x : {"q_conv1d", "k_conv1d", "v_conv1d"}) {
        layer.linears.push_back(make_linear(a + x, Component::kAttention, Parallelism::kColumn, {proj}, kernel, plain));
      }
      layer.linears.push_back(make_linear(a + "f_a_proj", Component::kAttention, Parallelism::kReplicated, {hd}, H,
                                          c.format_for({a + "f_a_proj"})));
      layer.linears.push_back(make_linear(a + "f_b_proj", Component::kAttention, Parallelism::kColumn, {proj}, hd,
                                          c.format_for({a + "f_b_proj"})));
      layer.linears.push_back(make_linear(a + "b_proj", Component::kAttention, Parallelism::kColumn, {heads}, H,
                                          c.format_for({a + "b_proj"})));
      layer.linears.push_back(make_linear(a + "g_a_proj", Component::kAttention, Parallelism::kReplicated, {hd}, H,
                                          c.format_for({a + "g_a_proj"})));
      layer.linears.push_back(make_linear(a + "g_b_proj", Component::kAttention, Parallelism::kColumn, {proj}, hd,
                                          c.format_for({a + "g_b_proj"})));
      layer.linears.push_back(make_linear(a + "A_log", Component::kAttention, Parallelism::kColumn, {heads}, 1, fp32));
      layer.linears.push_back(make_linear(a + "dt_bias", Component::kAttention, Parallelism::kColumn, {proj}, 1, fp32));
      layer.replicated.push_back({a + "o_norm", Component::kAttention, hd, dt});
      layer.linears.push_back(make_linear(a + "o_proj", Component::kAttention, Parallelism::kRow, {H}, proj,
                                          c.format_for({a + "o_proj"})));
    }
    const std::string m = p + "mlp.";
    layer.is_moe = i >= first_dense && i % moe_freq == 0;
    if (layer.is_moe) {
      layer.linears.push_back(make_linear(m + "gate", Component::kRouter, Parallelism::kReplicated, {E}, H, plain));
      layer.replicated.push_back({m + "gate.e_score_correction_bias", Component::kRouter, E, dt});
      add_experts(c, layer, m + "experts", E, moe_I, H);
      if (shared > 0) add_gated_mlp(c, layer, m + "shared_experts.", H, shared * moe_I, Component::kSharedExperts);
    } else {
      add_gated_mlp(c, layer, m, H, dense_I, Component::kDenseMlp);
    }
    add_layer_norms(layer, p, H, dt);
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"kimi_linear"}};
constexpr std::string_view kArchitectures[] = {"KimiLinearForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"num_nextn_predict_layers", "0", "no MTP layer"},
    {"head_dim", "", "MLA layers are sized by the MLA keys, KDA layers by linear_attn_config"},
    {"num_key_value_heads", "", "MLA layers are sized by the MLA keys, KDA layers by linear_attn_config"},
    {"mla_use_nope", "", "whether MLA layers apply RoPE (compute)"},
};

}  // namespace

const Family& family_kimi_linear() {
  static constexpr Family kFamily{.name = "kimi_linear",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_kimi_linear};
  return kFamily;
}

}  // namespace gpubudget::detail
