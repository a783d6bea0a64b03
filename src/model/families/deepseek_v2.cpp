// DeepSeek-V2/V3/R1 and Kimi-K2 text models (vLLM model_executor/models/deepseek_v2.py):
// multi-head latent attention + routed/shared-expert MoE after `first_k_dense_replace` dense layers.
#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

namespace {

ReplicatedTensor tensor(std::string name, Component component, std::int64_t elements, Dtype dtype) {
  return ReplicatedTensor{std::move(name), component, elements, dtype};
}

}  // namespace

void parse_deepseek_v2(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  const CommonHparams hp = read_common_hparams(t, {std::nullopt, std::nullopt, std::nullopt, false, true, std::nullopt});
  const std::int64_t H = hp.hidden_size, n = hp.num_attention_heads, L = hp.num_hidden_layers,
                     dense_I = hp.intermediate_size;
  const auto q_lora = t.optional_integer("q_lora_rank", 1, kMaxHidden);  // null: plain q_proj
  const auto kv_lora = t.integer("kv_lora_rank", 1, kMaxHidden);
  const auto nope = t.integer("qk_nope_head_dim", 1, kMaxHidden);
  const auto rope = t.integer("qk_rope_head_dim", 1, kMaxHidden);
  const auto v_dim = t.integer("v_head_dim", 1, kMaxHidden);
  model.mla_qk_nope_head_dim = nope;
  // VLLM_MLA_DISABLE=1: DeepseekV2Attention's K and V head size (served_model.cpp).
  model.mla_disabled_head_dim = nope + rope;
  const auto experts = t.optional_integer("n_routed_experts", 1, kMaxExperts).value_or(0);
  const auto shared = t.optional_integer("n_shared_experts", 0, kMaxExperts).value_or(0);
  const auto moe_I = experts > 0 ? t.integer("moe_intermediate_size", 1, kMaxIntermediate) : 0;
  const auto first_dense = t.optional_integer("first_k_dense_replace", 0, kMaxLayers).value_or(0);
  const auto moe_freq = t.optional_integer("moe_layer_freq", 1, kMaxLayers).value_or(1);
  const bool noaux = t.optional_string("topk_method").value_or("") == "noaux_tc";
  // GLM-4.7-Flash (glm4_moe_lite.py): DeepSeek's MLA with GLM's MoE block, whose router is a float32
  // nn.Linear with an always-present float32 correction bias (Glm4MoE).
  const bool glm_moe = model.model_type == "glm4_moe_lite";
  // An EAGLE-3 head (deepseek_eagle3.py DeepseekV2Eagle3DecoderLayer): every layer's MLP is a dense
  // DeepseekV2MLP of intermediate_size whatever the MoE keys say, and vLLM builds no next-n layers of
  // it. Its layer 0's wider input and its extra norms are the drafter's (drafters.cpp).
  const bool eagle3_head = declares_eagle_head(c.root, model.architecture);
  const auto next_n = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  model.skipped_mtp_layers = eagle3_head ? 0 : next_n;
  model.num_experts_per_token = experts > 0 ? t.integer("num_experts_per_tok", 1, kMaxExperts) : 0;
  // DeepSeek sparse attention (V3.2, GLM-5): a lightning indexer per layer.
  const auto index_heads = t.optional_integer("index_n_heads", 1, kMaxHeads).value_or(0);
  const auto index_dim = index_heads > 0 ? t.integer("index_head_dim", 1, kMaxHidden) : 0;
  model.sparse_attention = index_heads > 0;
  // DeepseekV2Model (is_v32 = the config has index_topk): one int32 [max_num_batched_tokens, index_topk]
  // buffer of top-k indices shared by the indexers, allocated with the model (since #25896).
  if (const auto index_topk = t.optional_integer("index_topk", 1, kMaxHidden)) {
    model.batched_token_buffers.push_back(
        {"topk_indices_buffer", Component::kBuffers, *index_topk, Dtype::kInt32});
  }
  model.hidden_size = H;

  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();
  // Layers [L, L + MTP) are the checkpoint's next-n predictors: built alike, kept apart.
  const std::int64_t mtp = model.skipped_mtp_layers;
  for (std::int64_t i = 0; i < L + mtp; ++i) {
    LayerSpec layer;
    layer.index = i;
    layer.attention.kind = AttentionKind::kMla;
    layer.attention.num_attention_heads = n;
    layer.attention.num_key_value_heads = 1;
    layer.attention.head_dim = kv_lora + rope;  // one latent "head", not split by TP
    layer.attention.head_dim_v = 0;
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = cat(p, "self_attn.");

    if (q_lora) {
      // q_a_proj ⊕ kv_a_proj_with_mqa fused and replicated (DeepSeekV2FusedQkvAProjLinear).
      layer.linears.push_back(make_linear(cat(a, "fused_qkv_a_proj"), Component::kAttention, Parallelism::kReplicated,
                                     {*q_lora, kv_lora + rope}, H,
                                     c.format_for(a, {"q_a_proj", "kv_a_proj_with_mqa"})));
      layer.replicated.push_back(tensor(cat(a, "q_a_layernorm"), Component::kAttention, *q_lora, dt));
      layer.linears.push_back(make_linear(cat(a, "q_b_proj"), Component::kAttention, Parallelism::kColumn,
                                     {n * (nope + rope)}, *q_lora, c.format_for(a, {"q_b_proj"})));
    } else {
      layer.linears.push_back(make_linear(cat(a, "q_proj"), Component::kAttention, Parallelism::kColumn,
                                     {n * (nope + rope)}, H, c.format_for(a, {"q_proj"})));
      layer.linears.push_back(make_linear(cat(a, "kv_a_proj_with_mqa"), Component::kAttention, Parallelism::kReplicated,
                                     {kv_lora + rope}, H, c.format_for(a, {"kv_a_proj_with_mqa"})));
    }
    layer.replicated.push_back(tensor(cat(a, "kv_a_layernorm"), Component::kAttention, kv_lora, dt));
    LinearModule kv_b = make_linear(cat(a, "kv_b_proj"), Component::kAttention, Parallelism::kColumn,
                               {n * (nope + v_dim)}, kv_lora, c.format_for(a, {"kv_b_proj"}));
    layer.linears.push_back(kv_b);
    if (kv_b.format.kind != QuantKind::kUnquantized) {
      // MLAAttention.process_weights_after_loading materialises W_UK_T / W_UV in bf16 from a
      // quantized kv_b_proj: one bf16 copy of the local [n/tp·(P+Vd), kv_lora] matrix.
      layer.linears.push_back(make_linear(cat(a, "kv_b_proj(bf16 W_UK_T/W_UV)"), Component::kExtraCopies,
                                     Parallelism::kColumn, {n * (nope + v_dim)}, kv_lora, plain));
    }
    layer.linears.push_back(make_linear(cat(a, "o_proj"), Component::kAttention, Parallelism::kRow, {H}, n * v_dim,
                                   c.format_for(a, {"o_proj"})));
    if (index_heads > 0) {
      // Indexer (replicated): wq_b in the checkpoint's format; wk (dequantized to bf16 at load) fused
      // with weights_proj; k_norm weight and bias in fp32. Its key cache is its own KV layer of
      // index_head_dim uint8 values + one fp32 scale per 128 (132 B/token), whatever --kv-cache-dtype says.
      const std::string x = cat(a, "indexer.");
      layer.linears.push_back(make_linear(cat(x, "wq_b"), Component::kAttention, Parallelism::kReplicated,
                                          {index_heads * index_dim}, q_lora.value_or(H), c.format_for(x, {"wq_b"})));
      LinearModule wk = make_linear(cat(x, "wk_weights_proj"), Component::kAttention, Parallelism::kReplicated,
                                    {index_dim, index_heads}, H, plain);
      wk.checkpoint_formats = {c.format_for(x, {"wk"}), plain};
      layer.linears.push_back(wk);
      layer.replicated.push_back(tensor(cat(x, "k_norm"), Component::kAttention, 2 * index_dim, Dtype::kFloat32));
      AttentionSpec indexer_cache;
      indexer_cache.kind = AttentionKind::kMla;
      indexer_cache.num_attention_heads = n;
      indexer_cache.num_key_value_heads = 1;
      indexer_cache.head_dim = index_dim;
      indexer_cache.fixed_token_bytes = Bytes(index_dim + index_dim / 128 * 4);
      layer.extra_kv.push_back(indexer_cache);
    }
    layer.replicated.push_back(tensor(cat(p, "input_layernorm"), Component::kNorms, H, dt));
    layer.replicated.push_back(tensor(cat(p, "post_attention_layernorm"), Component::kNorms, H, dt));

    const std::string m = cat(p, "mlp.");
    layer.is_moe = !eagle3_head && experts > 0 && i >= first_dense && i % moe_freq == 0;
    if (layer.is_moe) {
      // Router: ReplicatedLinear without quantization, plus the fp32 correction bias for noaux_tc.
      const QuantFormat router = glm_moe ? c.unquantized_float32() : plain;
      layer.linears.push_back(
          make_linear(cat(m, "gate"), Component::kRouter, Parallelism::kReplicated, {experts}, H, router));
      if (noaux || glm_moe) {
        layer.replicated.push_back(
            tensor(cat(m, "gate.e_score_correction_bias"), Component::kRouter, experts, Dtype::kFloat32));
      }
      add_experts(c, layer, cat(m, "experts"), experts, moe_I, H);
      if (shared > 0) add_gated_mlp(c, layer, cat(m, "shared_experts."), H, shared * moe_I, Component::kSharedExperts);
    } else {
      add_gated_mlp(c, layer, m, H, dense_I, Component::kDenseMlp);
    }
    (i < L ? model.layers : model.mtp_layers).push_back(std::move(layer));
  }
  model.final_norms.push_back(tensor("model.norm", Component::kNorms, H, dt));
  const auto V = c.root.has("vocab_size") ? c.root.integer("vocab_size", 1, kMaxVocab) : t.integer("vocab_size", 1, kMaxVocab);
  for (std::int64_t i = L; i < L + mtp; ++i) {
    // DeepSeekMultiTokenPredictorLayer: enorm, hnorm, eh_proj [H, 2H] (bf16), and a shared_head with
    // its own norm, plus copies of the embedding and the head.
    const std::string p = fmt::format("model.layers.{}.", i);
    model.mtp_tensors.push_back(tensor(cat(p, "enorm"), Component::kNorms, H, dt));
    model.mtp_tensors.push_back(tensor(cat(p, "hnorm"), Component::kNorms, H, dt));
    model.mtp_tensors.push_back(tensor(cat(p, "shared_head.norm"), Component::kNorms, H, dt));
    model.mtp_tensors.push_back(tensor(cat(p, "embed_tokens"), Component::kEmbedding, V * H, dt));
    model.mtp_tensors.push_back(tensor(cat(p, "shared_head.head"), Component::kLmHead, V * H, dt));
    model.mtp_linears.push_back(make_linear(cat(p, "eh_proj"), Component::kAttention, Parallelism::kReplicated, {H},
                                            2 * H, plain));
  }
  // A scaled RoPE becomes deepseek_yarn, whose DeepseekScalingRotaryEmbedding keeps its cache in fp32;
  // the default type is a plain RotaryEmbedding in the model dtype (DeepseekV2MLAAttention).
  add_rotary_caches(t, model, rope, rope_type(t) == "default" ? dt : Dtype::kFloat32, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"deepseek_v2"}, {"deepseek_v3"}, {"kimi_k2"}, {"deepseek_v32"}, {"glm_moe_dsa"},
                                        {"glm4_moe_lite"}};
constexpr std::string_view kArchitectures[] = {
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM",
    "Glm4MoeLiteForCausalLM",
    "KimiK25ForConditionalGeneration", "KimiVLForConditionalGeneration",
    // The EAGLE-3 head on MLA (deepseek_eagle3.py; eagle_head.cpp).
    "Eagle3DeepseekV2ForCausalLM", "Eagle3DeepseekV3ForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"attention_bias", "", "vLLM's MLA projections have no bias"},
    {"mlp_bias", "false", "DeepSeek MLPs without bias"},
    {"num_key_value_heads", "", "MLA: one latent KV per token, no KV heads"},
    {"head_dim", "", "MLA sizes heads by qk_nope_head_dim + qk_rope_head_dim and v_head_dim"},
    {"qk_head_dim", "", "qk_nope_head_dim + qk_rope_head_dim, read separately"},
    {"partial_rotary_factor", "1.0", "MLA rotates qk_rope_head_dim, read"},
    {"use_unified_vision_chunk", "", "Kimi-K2.5's video chunking in the processor"},
};

}  // namespace

const Family& family_deepseek_v2() {
  static constexpr Family kFamily{.name = "deepseek_v2",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_deepseek_v2,
                                  .reads_eagle_head = true};
  return kFamily;
}

}  // namespace gpubudget::detail
