// GLM-4.5 / 4.6 / 4.7 and GLM-4.5-Air (vLLM model_executor/models/glm4_moe.py, Glm4MoeForCausalLM):
// GQA attention with q/k/v biases (attention_bias) and optional per-head q/k RMSNorms (use_qk_norm;
// Glm4MoeAttention), dense MLPs on the first `first_k_dense_replace` layers, then MoE: routed experts
// in a FusedMoE, shared experts as a separate tensor-parallel MLP of moe_intermediate_size x
// n_shared_experts, and a router that is a plain float32 nn.Linear [E, H] with an always-present
// float32 e_score_correction_bias (Glm4MoE). RoPE on `partial_rotary_factor` (default 0.5) of
// head_dim. The next-n (MTP) layers are skipped at load without speculative decoding
// (get_spec_layer_idx_from_weight_name) and only counted in the checkpoint.
#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_glm4_moe(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const CommonHparams hp = read_common_hparams(t);
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads,
                     kv = hp.num_key_value_heads, d = hp.head_dim, dense_I = hp.intermediate_size;
  const bool qkv_bias = t.boolean("attention_bias", false);
  const bool qk_norm = t.boolean("use_qk_norm", false);
  const auto experts = t.integer("n_routed_experts", 1, kMaxExperts);
  const auto shared = t.optional_integer("n_shared_experts", 0, kMaxExperts).value_or(0);
  const auto moe_I = t.integer("moe_intermediate_size", 1, kMaxIntermediate);
  const auto first_dense = t.optional_integer("first_k_dense_replace", 0, kMaxLayers).value_or(0);
  model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  model.skipped_mtp_layers = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  model.hidden_size = H;
  model.tie_word_embeddings = t.boolean("tie_word_embeddings", false);

  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  const QuantFormat router = c.unquantized_float32();
  const std::int64_t mtp = model.skipped_mtp_layers;
  for (std::int64_t i = 0; i < L + mtp; ++i) {
    LayerSpec layer;
    layer.index = i;
    layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = p + "self_attn.";
    add_gqa_attention(c, layer, a, H, n, n, kv, d, qkv_bias);
    if (qk_norm) {
      layer.replicated.push_back({a + "q_norm", Component::kAttention, d, dt});
      layer.replicated.push_back({a + "k_norm", Component::kAttention, d, dt});
    }
    add_layer_norms(layer, p, H, dt);
    const std::string m = p + "mlp.";
    layer.is_moe = i >= first_dense;
    if (layer.is_moe) {
      layer.linears.push_back(make_linear(m + "gate", Component::kRouter, Parallelism::kReplicated, {experts}, H, router));
      layer.replicated.push_back({m + "gate.e_score_correction_bias", Component::kRouter, experts, Dtype::kFloat32});
      add_experts(c, layer, m + "experts", experts, moe_I, H);
      if (shared > 0) add_gated_mlp(c, layer, m + "shared_experts.", H, shared * moe_I, Component::kSharedExperts);
    } else {
      add_gated_mlp(c, layer, m, H, dense_I, Component::kDenseMlp);
    }
    (i < L ? model.layers : model.mtp_layers).push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  const auto V = t.integer("vocab_size", 1, kMaxVocab);
  for (std::int64_t i = L; i < L + mtp; ++i) {
    // Glm4MoeMultiTokenPredictorLayer, as GLM-4.5 and 4.7 store it: enorm, hnorm, eh_proj [H, 2H],
    // shared_head.norm, and copies of the embedding and the head (GLM-4.6's checkpoint has no copies).
    const std::string p = fmt::format("model.layers.{}.", i);
    model.mtp_tensors.push_back({p + "enorm", Component::kNorms, H, dt});
    model.mtp_tensors.push_back({p + "hnorm", Component::kNorms, H, dt});
    model.mtp_tensors.push_back({p + "shared_head.norm", Component::kNorms, H, dt});
    model.mtp_tensors.push_back({p + "embed_tokens", Component::kEmbedding, V * H, dt});
    model.mtp_tensors.push_back({p + "shared_head.head", Component::kLmHead, V * H, dt});
    model.mtp_linears.push_back(make_linear(p + "eh_proj", Component::kAttention, Parallelism::kReplicated, {H}, 2 * H,
                                            plain));
  }
  // Glm4MoeAttention: rope_parameters.setdefault("partial_rotary_factor", 0.5).
  const double partial = partial_rotary_factor(t, 0.5);
  add_rotary_caches(t, model, static_cast<std::int64_t>(static_cast<double>(d) * partial), dt, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"glm4_moe"}};
constexpr std::string_view kArchitectures[] = {"Glm4MoeForCausalLM"};
constexpr std::span<const ReviewedConfigKey> kReviewedKeys = {};

}  // namespace

const Family& family_glm4_moe() {
  static constexpr Family kFamily{.name = "glm4_moe",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_glm4_moe};
  return kFamily;
}

}  // namespace gpubudget::detail
