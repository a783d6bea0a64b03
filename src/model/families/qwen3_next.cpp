// Qwen3-Next (vLLM model_executor/models/qwen3_next.py): three Gated-DeltaNet linear-attention layers
// per full-attention layer (`full_attention_interval` or `layer_types`), a sparse MoE with a gated
// shared expert in every layer. Linear-attention layers keep a fixed recurrent state per request.
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_qwen3_next(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  // Qwen3.5 dense models (qwen3_5_text) have a gated MLP instead of experts.
  const bool dense = !t.has("num_experts");
  const CommonHparams hp = read_common_hparams(t, {std::nullopt, std::nullopt, std::nullopt, true, dense, std::nullopt});
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads,
                     kv = hp.num_key_value_heads, d = hp.head_dim;
  const auto nk = t.integer("linear_num_key_heads", 1, kMaxHeads);
  const auto nv = t.integer("linear_num_value_heads", 1, kMaxHeads);
  const auto dk = t.integer("linear_key_head_dim", 1, kMaxHidden);
  const auto dv = t.integer("linear_value_head_dim", 1, kMaxHidden);
  const auto conv_kernel = t.integer("linear_conv_kernel_dim", 2, 64);
  const auto E = dense ? 0 : t.integer("num_experts", 1, kMaxExperts);
  const auto moe_I = dense ? 0 : t.integer("moe_intermediate_size", 1, kMaxIntermediate);
  const std::int64_t dense_I = dense ? hp.intermediate_size : 0;
  const auto shared_I = t.optional_integer("shared_expert_intermediate_size", 0, kMaxIntermediate).value_or(0);
  const auto sparse_step = t.optional_integer("decoder_sparse_step", 1, kMaxLayers).value_or(1);
  if (sparse_step != 1 || !t.integer_list("mlp_only_layers", 0, kMaxLayers).empty()) {
    t.fail("decoder_sparse_step", "1 with no mlp_only_layers (dense Qwen3-Next layers are not modelled)");
  }
  std::vector<bool> full(static_cast<std::size_t>(L), false);
  if (t.has("layer_types")) {
    const auto types = t.string_list("layer_types");
    if (static_cast<std::int64_t>(types.size()) != L) t.fail("layer_types", fmt::format("{} entries", L));
    for (std::size_t i = 0; i < types.size(); ++i) full[i] = types[i] == "full_attention";
  } else {
    const auto interval = t.integer("full_attention_interval", 1, kMaxLayers);
    for (std::int64_t i = 0; i < L; ++i) full[static_cast<std::size_t>(i)] = (i + 1) % interval == 0;
  }
  // The temporal state's dtype the config asks for (Qwen3.5 says float32); vLLM 0.17+ uses it.
  const std::optional<Dtype> ssm_dtype = optional_dtype_field(t, "mamba_ssm_dtype");
  model.hidden_size = H;
  model.num_experts_per_token = dense ? 0 : t.integer("num_experts_per_tok", 1, kMaxExperts);
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  const std::int64_t key_dim = nk * dk, value_dim = nv * dv;
  const std::int64_t conv_dim = 2 * key_dim + value_dim;
  // The checkpoints carry next-token-prediction layers (mtp.*): full-attention MoE layers that vLLM
  // loads only for speculative decoding. The config does not state their number; vLLM's
  // qwen3_next_mtp assumes one.
  const auto mtp = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers)
                       .value_or(t.optional_integer("mtp_num_hidden_layers", 0, kMaxLayers).value_or(1));
  // Qwen3.5 stores the linear-attention input projections as four tensors (qkv, z, b, a).
  const bool split_projections = model.model_type.rfind("qwen3_5", 0) == 0;
  model.skipped_mtp_layers = mtp;
  for (std::int64_t i = 0; i < L + mtp; ++i) {
    LayerSpec layer;
    layer.index = i;
    const std::string p = i < L ? fmt::format("model.layers.{}.", i) : fmt::format("mtp.layers.{}.", i - L);
    if (i >= L || full[static_cast<std::size_t>(i)]) {
      layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
      const std::string a = p + "self_attn.";
      // The query projection also yields the output gate (attn_output_gate): 2·n·d outputs.
      add_gqa_attention(c, layer, a, H, 2 * n, n, kv, d);
      layer.replicated.push_back({a + "q_norm", Component::kAttention, d, dt});
      layer.replicated.push_back({a + "k_norm", Component::kAttention, d, dt});
    } else {
      layer.attention.kind = AttentionKind::kMamba;
      layer.attention.num_attention_heads = nv;
      layer.attention.state = {conv_dim, conv_kernel - 1, nv, dk * dv, MambaMixer::kGatedDeltaNet, ssm_dtype};
      const std::string g = p + "linear_attn.";
      if (split_projections) {
        layer.linears.push_back(make_linear(g + "in_proj_qkvz", Component::kAttention, Parallelism::kColumn,
                                            {2 * key_dim + value_dim, value_dim}, H,
                                            c.format_for({g + "in_proj_qkv", g + "in_proj_z"})));
        layer.linears.push_back(make_linear(g + "in_proj_ba", Component::kAttention, Parallelism::kColumn, {nv, nv}, H,
                                            c.format_for({g + "in_proj_b", g + "in_proj_a"})));
      } else {
        layer.linears.push_back(make_linear(g + "in_proj_qkvz", Component::kAttention, Parallelism::kColumn,
                                            {2 * key_dim + 2 * value_dim}, H, c.format_for({g + "in_proj_qkvz"})));
        layer.linears.push_back(make_linear(g + "in_proj_ba", Component::kAttention, Parallelism::kColumn, {2 * nv},
                                            H, c.format_for({g + "in_proj_ba"})));
      }
      layer.linears.push_back(make_linear(g + "conv1d", Component::kAttention, Parallelism::kColumn, {conv_dim},
                                          conv_kernel, plain));
      layer.linears.push_back(make_linear(g + "dt_bias", Component::kAttention, Parallelism::kColumn, {nv}, 1, plain));
      layer.linears.push_back(make_linear(g + "A_log", Component::kAttention, Parallelism::kColumn, {nv}, 1, plain));
      layer.replicated.push_back({g + "norm", Component::kAttention, dv, dt});
      layer.linears.push_back(make_linear(g + "out_proj", Component::kAttention, Parallelism::kRow, {H}, value_dim,
                                          c.format_for({g + "out_proj"})));
    }
    const std::string m = p + "mlp.";
    if (dense) {
      add_gated_mlp(c, layer, m, H, dense_I, Component::kDenseMlp);
      add_layer_norms(layer, p, H, dt);
      (i < L ? model.layers : model.mtp_layers).push_back(std::move(layer));
      continue;
    }
    layer.linears.push_back(make_linear(m + "gate", Component::kRouter, Parallelism::kReplicated, {E}, H, plain));
    add_experts(c, layer, m + "experts", E, moe_I, H);
    if (shared_I > 0) {
      add_gated_mlp(c, layer, m + "shared_expert.", H, shared_I, Component::kSharedExperts);
      layer.linears.push_back(make_linear(m + "shared_expert_gate", Component::kRouter, Parallelism::kReplicated, {1},
                                          H, plain));
    }
    add_layer_norms(layer, p, H, dt);
    (i < L ? model.layers : model.mtp_layers).push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  if (mtp > 0) {
    model.mtp_linears.push_back(make_linear("mtp.fc", Component::kAttention, Parallelism::kReplicated, {H}, 2 * H,
                                            plain));
    for (const char* norm : {"mtp.pre_fc_norm_embedding", "mtp.pre_fc_norm_hidden", "mtp.norm"}) {
      model.mtp_tensors.push_back({norm, Component::kNorms, H, dt});
    }
  }
  const double partial = partial_rotary_factor(t, 1.0);
  add_rotary_caches(t, model, static_cast<std::int64_t>(static_cast<double>(d) * partial), dt, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"qwen3_next"}, {"qwen3_5_text"}, {"qwen3_5_moe_text"}};
constexpr std::string_view kArchitectures[] = {
    "Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"use_sliding_window", "false", "no sliding window"},
    {"attention_bias", "false", "no attention bias"},
    {"attn_output_gate", "true", "the parser builds the gated query projection"},
    {"full_attention_interval", "", "the layer types are read from layer_types"},
    {"mtp_use_dedicated_embeddings", "", "MTP layers are loaded only with speculative decoding"},
    {"output_gate_type", "\"swish\"", "the gate's activation"},
};

}  // namespace

const Family& family_qwen3_next() {
  static constexpr Family kFamily{.name = "qwen3_next",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_qwen3_next};
  return kFamily;
}

}  // namespace gpubudget::detail
