// Granite 4.0 (`granitemoehybrid`; vllm/model_executor/models/granitemoehybrid.py, granitemoe.py,
// granitemoeshared.py): layer_types[i] is "mamba" (MambaMixer2 under `mamba.`) or "attention"
// (GQA of head_dim = hidden_size / num_attention_heads, biased when attention_bias; RoPE only when
// position_embedding_type is "rope", the hybrid models' "nope" builds none). Every layer then has the
// same feed-forward: a MoE block (router `block_sparse_moe.gate` [E, H], replicated, built without
// quant config; experts of intermediate_size stored fused as input_linear [E, 2I, H] and
// output_linear [E, H, I]) when num_local_experts > 0, and a shared MLP (input_linear [2S, H], column;
// output_linear [H, S], row) when shared_intermediate_size > 0 — the dense models' only MLP. Embeddings
// tied in every published config. The all-attention granite-4.0-micro is a plain GQA model.
#include <algorithm>

#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_granite_hybrid(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  HparamsDefaults defaults;
  defaults.intermediate_required = false;
  const CommonHparams h = read_common_hparams(t, defaults);
  const std::int64_t H = h.hidden_size, L = h.num_hidden_layers, n = h.num_attention_heads, kv = h.num_key_value_heads;
  model.hidden_size = H;
  // The model sizes heads by hidden_size / heads whatever head_dim says, while the KV cache spec would
  // take a config head_dim (ModelConfig.get_head_size): a config where they differ is refused.
  if (H % n != 0 || h.head_dim != H / n) {
    t.fail("head_dim", fmt::format("hidden_size / num_attention_heads = {} (vLLM's Granite 4 attention)", H / n));
  }
  const std::int64_t d = H / n;
  const auto types = t.string_list("layer_types");
  if (static_cast<std::int64_t>(types.size()) != L) t.fail("layer_types", fmt::format("{} entries", L));
  const bool attention_bias = t.boolean("attention_bias", false);
  const auto position_type = t.optional_string("position_embedding_type").value_or("rope");
  if (position_type != "rope" && position_type != "nope") t.fail("position_embedding_type", "\"rope\" or \"nope\"");
  const auto norm = t.optional_string("normalization_function").value_or("rmsnorm");
  if (norm != "rmsnorm") t.fail("normalization_function", "\"rmsnorm\"");
  const std::int64_t E = t.optional_integer("num_local_experts", 0, kMaxExperts).value_or(0);
  const std::int64_t I = E > 0 ? t.integer("intermediate_size", 1, kMaxIntermediate) : 0;
  const std::int64_t S = t.optional_integer("shared_intermediate_size", 0, kMaxIntermediate).value_or(0);
  if (E > 0) model.num_experts_per_token = t.integer("num_experts_per_tok", 1, E);

  Mamba2Geometry mamba;
  const bool hybrid = std::find(types.begin(), types.end(), "mamba") != types.end();
  if (hybrid) {
    mamba = read_mamba2_geometry(t, H, /*reads_d_ssm=*/false, model);
    if (mamba.inner != mamba.heads * mamba.head_dim) {
      t.fail("mamba_d_head", fmt::format("mamba_expand x hidden_size / mamba_n_heads = {}", mamba.inner / mamba.heads));
    }
  }
  const Dtype dt = c.dtype;

  for (std::int64_t i = 0; i < L; ++i) {
    const std::string& type = types[static_cast<std::size_t>(i)];
    LayerSpec layer;
    layer.index = i;
    const std::string p = fmt::format("model.layers.{}.", i);
    if (type == "mamba") {
      add_mamba2_mixer(c, layer, p + "mamba.", H, mamba);
    } else if (type == "attention") {
      layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
      add_gqa_attention(c, layer, p + "self_attn.", H, n, n, kv, d, attention_bias, attention_bias);
    } else {
      t.fail("layer_types", "entries \"mamba\" or \"attention\"");
    }
    if (E > 0) {
      const std::string m = p + "block_sparse_moe.";
      // The checkpoint's router.layer, renamed to gate by vLLM's loader.
      layer.linears.push_back(make_linear(m + "router.layer", Component::kRouter, Parallelism::kReplicated, {E}, H,
                                          c.unquantized()));
      add_experts(c, layer, p + "block_sparse_moe", E, I, H);
    }
    if (S > 0) {
      const std::string s = p + "shared_mlp.";
      const Component component = E > 0 ? Component::kSharedExperts : Component::kDenseMlp;
      layer.linears.push_back(make_linear(s + "input_linear", component, Parallelism::kColumn, {S, S}, H,
                                          c.format_for({s + "input_linear"})));
      layer.linears.push_back(make_linear(s + "output_linear", component, Parallelism::kRow, {H}, S,
                                          c.format_for({s + "output_linear"})));
    }
    add_layer_norms(layer, p, H, dt);
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  if (position_type == "rope") add_rotary_caches(t, model, d, dt, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"granitemoehybrid"}};
constexpr std::string_view kArchitectures[] = {"GraniteMoeHybridForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"attention_multiplier", "", "muP scale of the attention scores: no tensor"},
    {"embedding_multiplier", "", "muP scale of the embeddings: no tensor"},
    {"logits_scaling", "", "muP scale of the logits: no tensor"},
    {"residual_multiplier", "", "muP scale of the residual stream: no tensor"},
};

}  // namespace

const Family& family_granite_hybrid() {
  static constexpr Family kFamily{.name = "granitemoehybrid",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_granite_hybrid};
  return kFamily;
}

}  // namespace gpubudget::detail
