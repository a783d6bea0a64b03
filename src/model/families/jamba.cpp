// Jamba (vLLM model_executor/models/jamba.py, JambaForCausalLM): attention on the layers where
// i % attn_layer_period == attn_layer_offset (GQA without bias or RoPE, head_dim = hidden / heads),
// Mamba1 on the rest (MambaMixer, mamba_mixer.py: never quantized, A kept in float32, x_proj
// row-parallel, dt_proj always biased, dt/b/c layernorms always built); MoE where
// i % expert_layer_period == expert_layer_offset (gated experts with a replicated router in the model
// dtype), a dense MLP elsewhere; norms input_layernorm and pre_ff_layernorm; an untied head.
// Mamba1's state (mamba1_state_shape): conv [d_inner / tp, d_conv - 1] and SSM [d_inner / tp, d_state],
// with Mamba2's dtype rules (mamba1_state_dtype).
#include <cmath>

#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_jamba(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  HparamsDefaults defaults;
  const CommonHparams hp = read_common_hparams(t, defaults);
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads,
                     kv = hp.num_key_value_heads, I = hp.intermediate_size;
  const std::int64_t d = H / n;  // JambaAttention: hidden_size // num_heads, whatever head_dim says
  (void)t.has("head_dim");
  const auto attn_period = t.optional_integer("attn_layer_period", 1, kMaxLayers).value_or(8);
  const auto attn_offset = t.optional_integer("attn_layer_offset", 0, kMaxLayers).value_or(4);
  const auto expert_period = t.optional_integer("expert_layer_period", 1, kMaxLayers).value_or(2);
  const auto expert_offset = t.optional_integer("expert_layer_offset", 0, kMaxLayers).value_or(1);
  const auto E = t.optional_integer("num_experts", 1, kMaxExperts).value_or(16);
  if (E > 1) model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  const auto expand = t.optional_integer("mamba_expand", 1, 64).value_or(2);
  const auto d_state = t.optional_integer("mamba_d_state", 1, kMaxHidden).value_or(16);
  const auto d_conv = t.optional_integer("mamba_d_conv", 2, 64).value_or(4);
  // mamba_dt_rank: an integer, or "auto" = ceil(hidden / 16).
  std::int64_t dt_rank = (H + 15) / 16;
  if (t.has("mamba_dt_rank") && !(t.value()["mamba_dt_rank"].is_string() && t.string("mamba_dt_rank") == "auto")) {
    dt_rank = t.integer("mamba_dt_rank", 1, kMaxHidden);
  }
  const bool conv_bias = t.boolean("mamba_conv_bias", true);
  const bool proj_bias = t.boolean("mamba_proj_bias", false);
  (void)t.has("mamba_inner_layernorms");  // vLLM builds the three norms whatever it says
  model.mamba_chunk_size = t.optional_integer("mamba_chunk_size", 1, kMaxHidden)
                               .value_or(t.optional_integer("chunk_size", 1, kMaxHidden).value_or(2048));
  model.hidden_size = H;
  model.tie_word_embeddings = false;  // jamba.py always builds its own lm_head
  (void)t.has("tie_word_embeddings");
  if (t.has("sliding_window") && !t.value()["sliding_window"].is_null()) {
    t.fail("sliding_window", "null (Jamba's attention layers are full attention in vLLM)");
  }
  const std::int64_t Di = expand * H;
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  const QuantFormat fp32 = c.unquantized_float32();
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const std::string p = fmt::format("model.layers.{}.", i);
    if (i % attn_period == attn_offset) {
      layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
      add_gqa_attention(c, layer, p + "self_attn.", H, n, n, kv, d);
    } else {
      const std::string x = p + "mamba.";
      layer.attention.kind = AttentionKind::kMamba;
      layer.attention.num_attention_heads = n;
      layer.attention.state = {Di, d_conv - 1, Di, d_state, MambaMixer::kMamba2, std::nullopt};
      layer.linears.push_back(make_linear(x + "in_proj", Component::kAttention, Parallelism::kColumn, {Di, Di}, H,
                                          plain, proj_bias));
      layer.linears.push_back(make_linear(x + "conv1d", Component::kAttention, Parallelism::kColumn, {Di}, d_conv,
                                          plain, conv_bias));
      layer.linears.push_back(make_linear(x + "x_proj", Component::kAttention, Parallelism::kRow,
                                          {dt_rank + 2 * d_state}, Di, plain));
      layer.linears.push_back(make_linear(x + "dt_proj", Component::kAttention, Parallelism::kColumn, {Di}, dt_rank,
                                          plain, true));
      layer.linears.push_back(make_linear(x + "A", Component::kAttention, Parallelism::kColumn, {Di}, d_state, fp32));
      layer.linears.push_back(make_linear(x + "D", Component::kAttention, Parallelism::kColumn, {Di}, 1, plain));
      layer.linears.push_back(make_linear(x + "out_proj", Component::kAttention, Parallelism::kRow, {H}, Di, plain,
                                          proj_bias));
      layer.replicated.push_back({x + "dt_layernorm", Component::kAttention, dt_rank, dt});
      layer.replicated.push_back({x + "b_layernorm", Component::kAttention, d_state, dt});
      layer.replicated.push_back({x + "c_layernorm", Component::kAttention, d_state, dt});
    }
    const std::string f = p + "feed_forward.";
    layer.is_moe = E > 1 && i % expert_period == expert_offset;
    if (layer.is_moe) {
      layer.linears.push_back(make_linear(f + "router", Component::kRouter, Parallelism::kReplicated, {E}, H, plain));
      add_experts(c, layer, f + "experts", E, I, H);
    } else {
      add_gated_mlp(c, layer, f, H, I, Component::kDenseMlp);
    }
    layer.replicated.push_back({p + "input_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "pre_ff_layernorm", Component::kNorms, H, dt});
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.final_layernorm", Component::kNorms, H, dt});
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
// JambaConfig's max_position_embeddings is 262,144 (Jamba-v0.1's config predates the key).
constexpr ModelType kModelTypes[] = {{"jamba", 262144}};
constexpr std::string_view kArchitectures[] = {"JambaForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"n_ctx", "", "transformers' context default (the length is max_position_embeddings / --max-model-len)"},
    {"calc_logits_for_entire_prompt", "", "logits computed (compute)"},
};

}  // namespace

const Family& family_jamba() {
  static constexpr Family kFamily{.name = "jamba",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_jamba};
  return kFamily;
}

}  // namespace gpubudget::detail
