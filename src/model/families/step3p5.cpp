// Step-3.5 (vLLM model_executor/models/step3p5.py, transformers_utils/configs/step3p5.py): GQA with q/k
// norms and a head-wise output gate; sliding layers (`layer_types`) take their own head count from
// `attention_other_setting`; MoE on the layers `moe_layers_enum` lists, with a float32 router and bias and
// a shared expert; per-layer RoPE theta and partial rotary factor, the scaled RoPE only on
// `yarn_only_types`. The MTP layers (`num_nextn_predict_layers`) are the draft of speculative decoding:
// load_weights skips them, the checkpoint stores them.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

namespace {

std::vector<std::int64_t> moe_layers(const JsonReader& t, std::int64_t layers) {
  std::vector<std::int64_t> out;
  const auto text = t.optional_string("moe_layers_enum");
  if (!text) {
    for (std::int64_t i = 1; i < layers; ++i) out.push_back(i);  // vLLM's default: every layer but the first
    return out;
  }
  std::stringstream in(*text);
  for (std::string item; std::getline(in, item, ',');) {
    std::int64_t index = -1;
    try {
      std::size_t used = 0;
      index = std::stoll(item, &used);
      if (item.find_first_not_of(" ", used) != std::string::npos) index = -1;
    } catch (const std::exception&) {
      index = -1;
    }
    if (index < 0 || index >= kMaxLayers) t.fail("moe_layers_enum", "comma-separated decoder layer indices");
    out.push_back(index);
  }
  return out;
}

}  // namespace

void parse_step3p5(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  // num_attention_groups are the KV heads of the full layers.
  const auto groups = t.integer("num_attention_groups", 1, kMaxHeads);
  const CommonHparams hp = read_common_hparams(t, {std::nullopt, std::nullopt, std::nullopt, false, true, std::nullopt});
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, dense_I = hp.intermediate_size;
  const auto head_dim = t.integer("head_dim", 1, kMaxHidden);
  const auto type = t.optional_string("att_impl_type").value_or("GQA");
  if (type != "GQA") t.fail("att_impl_type", "\"GQA\" (vLLM raises ValueError for any other)");
  const auto window = t.optional_integer("sliding_window", 1, std::int64_t{1} << 32);
  const auto types = t.has("layer_types") ? t.string_list("layer_types") : std::vector<std::string>{};
  // Step3p5Config keeps the first num_hidden_layers entries (the checkpoint lists the MTP layers too).
  if (!types.empty() && static_cast<std::int64_t>(types.size()) < L) {
    t.fail("layer_types", fmt::format("at least {} entries", L));
  }
  std::optional<JsonReader> other = t.optional_object("attention_other_setting");
  const std::string other_type = other ? other->string("attention_type") : "";
  const std::int64_t other_heads = other ? other->integer("num_attention_heads", 1, kMaxHeads) : 0;
  const std::int64_t other_groups = other ? other->integer("num_attention_groups", 1, kMaxHeads) : 0;
  const std::int64_t other_head_dim = other ? other->integer("head_dim", 1, kMaxHidden) : 0;
  if (other) (void)other->optional_integer("true_head_dim", 1, kMaxHidden);  // vLLM reads head_dim only
  const bool gate = t.boolean("use_head_wise_attn_gate", false);
  const bool use_moe = t.boolean("use_moe", true);
  const auto moe_set = use_moe ? moe_layers(t, L) : std::vector<std::int64_t>{};
  const auto E = use_moe ? t.integer("moe_num_experts", 1, kMaxExperts) : 0;
  const auto moe_I = use_moe ? t.integer("moe_intermediate_size", 1, kMaxIntermediate) : 0;
  const auto top_k = use_moe ? t.integer("moe_top_k", 1, kMaxExperts) : 0;
  const auto shared_I =
      use_moe ? t.optional_integer("share_expert_dim", 1, kMaxIntermediate).value_or(moe_I * top_k) : 0;
  if (use_moe && (!t.boolean("use_moe_router_bias", false) || !t.boolean("need_fp32_gate", false))) {
    t.fail("use_moe_router_bias", "true, with need_fp32_gate true (vLLM's FusedMoEBlock asserts both)");
  }
  const auto mtp = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  model.hidden_size = H;
  model.num_experts_per_token = top_k;
  model.skipped_mtp_layers = mtp;
  const Dtype dt = c.dtype;
  const QuantFormat plain = c.unquantized();

  const auto sliding_at = [&](std::int64_t i) {
    if (types.empty()) return i % 2 == 0;  // Step3p5Attention without layer_types
    return i < static_cast<std::int64_t>(types.size()) && types[static_cast<std::size_t>(i)] == "sliding_attention";
  };
  for (std::int64_t i = 0; i < L + mtp; ++i) {
    const bool is_mtp = i >= L;
    LayerSpec layer;
    layer.index = i;
    const bool sliding = sliding_at(i) && window.has_value();
    const bool swapped = other && !types.empty() && i < static_cast<std::int64_t>(types.size()) &&
                         types[static_cast<std::size_t>(i)] == other_type;
    const std::int64_t n = swapped ? other_heads : hp.num_attention_heads;
    const std::int64_t kv = swapped ? other_groups : groups;
    const std::int64_t d = swapped ? other_head_dim : head_dim;
    if (n % kv != 0) t.fail("num_attention_groups", fmt::format("a divisor of the layer's {} heads", n));
    layer.attention = standard_attention(sliding ? AttentionKind::kSlidingWindow : AttentionKind::kFull, n, kv, d,
                                         sliding ? *window : 0);
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = cat(p, "self_attn.");
    add_gqa_attention(c, layer, a, H, n, n, kv, d);
    layer.replicated.push_back({cat(a, "q_norm"), Component::kAttention, d, dt});
    layer.replicated.push_back({cat(a, "k_norm"), Component::kAttention, d, dt});
    if (gate) {
      layer.linears.push_back(
          make_linear(cat(a, "g_proj"), Component::kAttention, Parallelism::kColumn, {n}, H, c.format_for(a, {"g_proj"})));
    }
    if (std::find(moe_set.begin(), moe_set.end(), i) != moe_set.end()) {
      // FP32ReplicatedLinear router and its float32 bias; the shared expert beside the routed ones.
      const std::string m = cat(p, "moe.");
      layer.linears.push_back(
          make_linear(cat(m, "gate"), Component::kRouter, Parallelism::kReplicated, {E}, H, c.unquantized_float32()));
      layer.replicated.push_back({cat(m, "router_bias"), Component::kRouter, E, Dtype::kFloat32});
      add_experts(c, layer, cat(m, "experts"), E, moe_I, H);
      add_gated_mlp(c, layer, cat(p, "share_expert."), H, shared_I, Component::kSharedExperts);
    } else {
      add_gated_mlp(c, layer, cat(p, "mlp."), H, dense_I, Component::kDenseMlp);
    }
    add_layer_norms(layer, p, H, dt);
    if (is_mtp) {
      // Step3p5MTP (step3p5_mtp.py): enorm, hnorm, eh_proj [H, 2H] and a shared head with its own norm and
      // output projection per layer.
      model.mtp_tensors.push_back({cat(p, "enorm"), Component::kNorms, H, dt});
      model.mtp_tensors.push_back({cat(p, "hnorm"), Component::kNorms, H, dt});
      model.mtp_tensors.push_back({cat(p, "shared_head.norm"), Component::kNorms, H, dt});
      model.mtp_tensors.push_back({cat(p, "shared_head.output"), Component::kLmHead, model.vocab_size * H, dt});
      model.mtp_linears.push_back(make_linear(cat(p, "eh_proj"), Component::kAttention, Parallelism::kReplicated, {H},
                                              2 * H, plain));
    }
    (is_mtp ? model.mtp_layers : model.layers).push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});

  // RoPE: get_rope shares one cache per (theta, rotary dim, scaling); each is [max_position_embeddings,
  // rotary dim] (the llama3 scaling keeps the positions), rotary dim = head_dim x partial factor (1 or 0.5).
  std::vector<double> thetas;
  if (t.has("rope_theta") && t.value()["rope_theta"].is_array()) {
    for (const auto v : t.number_list("rope_theta", 1, 1e12)) thetas.push_back(v);
  } else {
    thetas.push_back(t.optional_number("rope_theta", 1, 1e12).value_or(10000.0));
  }
  std::vector<double> factors;
  if (t.has("partial_rotary_factors")) factors = t.number_list("partial_rotary_factors", 0.5, 1.0);
  const auto scaled_types = t.has("yarn_only_types") ? t.string_list("yarn_only_types") : std::vector<std::string>{};
  const bool has_scaling = t.has("rope_scaling") && t.value()["rope_scaling"].is_object();
  if (has_scaling) (void)t.object("rope_scaling");
  const auto positions = t.integer("max_position_embeddings", 1, std::int64_t{1} << 34);
  struct Rope {
    double theta;
    std::int64_t dim;
    bool scaled;
    bool operator==(const Rope&) const = default;
  };
  std::vector<Rope> ropes;
  for (std::int64_t i = 0; i < L; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const double factor = at < factors.size() ? factors[at] : 1.0;
    if (factor != 1.0 && factor != 0.5) t.fail("partial_rotary_factors", "entries 1.0 or 0.5 (vLLM asserts)");
    const std::int64_t d = model.layers[at].attention.head_dim;
    const bool scaled = has_scaling && (scaled_types.empty() ||
                                        (at < types.size() && std::find(scaled_types.begin(), scaled_types.end(),
                                                                        types[at]) != scaled_types.end()));
    const Rope r{thetas.size() > 1 ? thetas.at(std::min(at, thetas.size() - 1)) : thetas.front(),
                 factor == 1.0 ? d : d / 2, scaled};
    if (std::find(ropes.begin(), ropes.end(), r) == ropes.end()) ropes.push_back(r);
  }
  for (std::size_t k = 0; k < ropes.size(); ++k) {
    model.buffers.push_back({fmt::format("rotary_emb[{}].cos_sin_cache", k), Component::kBuffers,
                             positions * ropes[k].dim, dt});
  }
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"step3p5"}};
constexpr std::string_view kArchitectures[] = {"Step3p5ForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"use_qk_norm", "true", "vLLM builds q_norm and k_norm in every layer"},
    {"moe_layer_offset", "", "vLLM places MoE layers by moe_layers_enum, read"},
    {"moe_every_n_layer", "", "vLLM places MoE layers by moe_layers_enum, read"},
    {"norm_expert_weight", "", "expert weight normalisation (routing)"},
    {"moe_router_activation", "", "router activation (routing)"},
    {"moe_router_scaling_factor", "", "routed scaling (routing)"},
    {"sink", "false", "no attention sinks"},
    {"use_rope_layers", "", "which layers apply RoPE (the cache is built either way)"},
    {"swiglu_limits", "", "activation clamp (numerics)"},
    {"swiglu_limits_shared", "", "activation clamp of the shared expert (numerics)"},
    {"zero_centered", "true", "GemmaRMSNorm: same weight shape"},
};

}  // namespace

const Family& family_step3p5() {
  static constexpr Family kFamily{.name = "step3p5",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_step3p5};
  return kFamily;
}

}  // namespace gpubudget::detail
