// Nemotron-H and Nemotron-3 (vLLM model_executor/models/nemotron_h.py): one mixer per layer, chosen
// by `hybrid_override_pattern` (M = Mamba2, * = attention, - = squared-ReLU MLP, E = MoE of non-gated
// experts with a shared expert and a float32 router), or by the newer config class's
// `layers_block_type` list ("mamba", "attention", "mlp", "moe"), from which it derives the pattern and
// num_hidden_layers. Latent MoE (Nemotron-3 Super / Ultra, `moe_latent_size` ℓ; vLLM fcd5306f6,
// NemotronHMoE): the routed experts work at width ℓ between two replicated projections,
// fc1_latent_proj [ℓ, H] and fc2_latent_proj [H, ℓ]; the router and the shared expert stay at H.
// The MTP layers (`mtp.*`, num_nextn_predict_layers) are loaded only with speculative decoding.
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_nemotron_h(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  std::string pattern;
  if (t.has("hybrid_override_pattern") || !t.has("layers_block_type")) {
    pattern = t.string("hybrid_override_pattern");
  } else {
    for (const auto& block : t.string_list("layers_block_type")) {
      const char symbol = block == "mamba" ? 'M' : block == "attention" ? '*' : block == "mlp" ? '-' : block == "moe" ? 'E' : '?';
      if (symbol == '?') t.fail("layers_block_type", "an array of \"mamba\", \"attention\", \"mlp\" and \"moe\"");
      pattern.push_back(symbol);
    }
  }
  HparamsDefaults defaults;
  defaults.num_hidden_layers = static_cast<std::int64_t>(pattern.size());
  defaults.head_dim = t.optional_integer("attention_head_dim", 1, kMaxHidden);  // the older config class's name
  const CommonHparams hp = read_common_hparams(t, defaults);
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads,
                     kv = hp.num_key_value_heads, d = hp.head_dim, I = hp.intermediate_size;
  if (static_cast<std::int64_t>(pattern.size()) != L) {
    t.fail("hybrid_override_pattern", fmt::format("{} characters (num_hidden_layers) of M, *, - or E", L));
  }
  // Mamba2 mixer geometry.
  Mamba2Geometry mamba;
  mamba.heads = t.integer("mamba_num_heads", 1, kMaxHeads);
  mamba.head_dim = t.integer("mamba_head_dim", 1, kMaxHidden);
  mamba.groups = t.integer("n_groups", 1, kMaxHeads);
  mamba.state = t.integer("ssm_state_size", 1, kMaxHidden);
  mamba.conv_kernel = t.integer("conv_kernel", 2, 64);
  mamba.conv_bias = t.boolean("use_conv_bias", true);
  mamba.proj_bias = t.boolean("mamba_proj_bias", t.boolean("use_bias", false));
  // The SSM cache dtype the config asks for; vLLM 0.13+ uses it (NemotronHForCausalLMConfig).
  mamba.ssm_dtype = optional_dtype_field(t, "mamba_ssm_cache_dtype");
  // ModelConfig.get_mamba_chunk_size: mamba_chunk_size, else chunk_size, else 2048.
  model.mamba_chunk_size = t.optional_integer("mamba_chunk_size", 1, kMaxHidden)
                               .value_or(t.optional_integer("chunk_size", 1, kMaxHidden).value_or(2048));
  // MoE (Nemotron-3).
  const auto E = t.optional_integer("n_routed_experts", 1, kMaxExperts).value_or(0);
  const auto moe_I = E > 0 ? t.integer("moe_intermediate_size", 1, kMaxIntermediate) : 0;
  const auto shared_I = t.optional_integer("moe_shared_expert_intermediate_size", 0, kMaxIntermediate).value_or(0);
  const auto latent = t.optional_integer("moe_latent_size", 1, kMaxHidden);
  model.skipped_mtp_layers = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  const bool mlp_bias = t.boolean("mlp_bias", false);
  model.hidden_size = H;
  if (E > 0) model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  const Dtype dt = c.dtype;
  const QuantFormat router = c.unquantized_float32();

  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const std::string p = fmt::format("backbone.layers.{}.", i);
    const char type = pattern[static_cast<std::size_t>(i)];
    layer.attention.kind = AttentionKind::kNone;
    if (type == 'M') {
      add_mamba2_mixer(c, layer, p + "mixer.", H, mamba);
    } else if (type == '*') {
      const std::string x = p + "mixer.";
      layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
      add_gqa_attention(c, layer, x, H, n, n, kv, d);
    } else if (type == '-') {
      const std::string x = p + "mixer.";
      layer.linears.push_back(make_linear(x + "up_proj", Component::kDenseMlp, Parallelism::kColumn, {I}, H,
                                          c.format_for({x + "up_proj"})));
      layer.linears.push_back(make_linear(x + "down_proj", Component::kDenseMlp, Parallelism::kRow, {H}, I,
                                          c.format_for({x + "down_proj"})));
    } else if (type == 'E') {
      if (E == 0) t.fail("n_routed_experts", "an expert count for the E layers of hybrid_override_pattern");
      const std::string x = p + "mixer.";
      layer.linears.push_back(make_linear(x + "gate", Component::kRouter, Parallelism::kReplicated, {E}, H, router));
      layer.replicated.push_back({x + "gate.e_score_correction_bias", Component::kRouter, E, Dtype::kFloat32});
      if (latent) {
        layer.linears.push_back(make_linear(x + "fc1_latent_proj", Component::kRoutedExperts, Parallelism::kReplicated,
                                            {*latent}, H, c.format_for({x + "fc1_latent_proj"}), mlp_bias));
        layer.linears.push_back(make_linear(x + "fc2_latent_proj", Component::kRoutedExperts, Parallelism::kReplicated,
                                            {H}, *latent, c.format_for({x + "fc2_latent_proj"}), mlp_bias));
      }
      add_experts(c, layer, x + "experts", E, moe_I, latent.value_or(H), /*gated=*/false);
      if (shared_I > 0) {
        const std::string s = x + "shared_experts.";
        layer.linears.push_back(make_linear(s + "up_proj", Component::kSharedExperts, Parallelism::kColumn, {shared_I},
                                            H, c.format_for({s + "up_proj"})));
        layer.linears.push_back(make_linear(s + "down_proj", Component::kSharedExperts, Parallelism::kRow, {H},
                                            shared_I, c.format_for({s + "down_proj"})));
      }
    } else {
      t.fail("hybrid_override_pattern", "only the characters M, *, - and E");
    }
    layer.replicated.push_back({p + "norm", Component::kNorms, H, dt});
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"backbone.norm_f", Component::kNorms, H, dt});
  model.embedding_name = "backbone.embeddings";
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"nemotron_h"}};
constexpr std::string_view kArchitectures[] = {"NemotronHForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"attention_bias", "false", "no attention bias"},
    {"sliding_window", "null", "no sliding window"},
    {"n_shared_experts", "1", "one shared expert of moe_shared_expert_intermediate_size"},
    {"partial_rotary_factor", "1.0", "full rotary width"},
    {"expand", "", "the Mamba width is mamba_num_heads x mamba_head_dim, read"},
    {"mtp_layers_block_type", "", "MTP layers are loaded only with speculative decoding"},
    {"moe_shared_expert_overlap", "", "whether the shared expert runs overlapped (compute)"},
};

}  // namespace

const Family& family_nemotron_h() {
  static constexpr Family kFamily{.name = "nemotron_h",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_nemotron_h};
  return kFamily;
}

}  // namespace gpubudget::detail
