// Gemma 4 (`gemma4_text`; vllm/model_executor/models/gemma4.py, gemma4_mm.py; docs/methodology.md §1).
//
// Per decoder layer i of layer_types[i]:
//   sliding: head_dim, num_key_value_heads, the sliding window; default RoPE over head_dim
//   full:    global_head_dim, and with attention_k_eq_v num_global_key_value_heads whose checkpoint holds
//            k_proj only: vLLM still allocates the V slot of qkv_proj and loads k_proj into it
//            (gemma4.py _weight_iterator), so per GPU it costs a V projection the file does not have;
//            "proportional" RoPE over the whole global_head_dim (gemma4_rope.py)
//   q_norm / k_norm of the layer's head dim (v_norm has no weight), four layer norms, layer_scalar [1];
//   the dense MLP (intermediate_size) always; with enable_moe_block also a router (proj [E, H], built
//   without quant config; scale [H]), per_expert_scale [E], FusedMoE experts of moe_intermediate_size
//   and three more norms.
// Layers in the last num_kv_shared_layers reuse the cache of the last earlier layer of their type:
// vLLM registers no KV cache for them (gpu_model_runner: kv_sharing_target_layer_name). Per-layer
// embeddings (hidden_size_per_layer_input > 0, the E2B / E4B models) are refused, not guessed.
#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"
#include "model/parse_context.h"

namespace gpubudget::detail {

void parse_gemma4(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  HparamsDefaults defaults;
  defaults.head_dim = 256;  // Gemma4TextConfig
  const CommonHparams h = read_common_hparams(t, defaults);
  const std::int64_t H = h.hidden_size, L = h.num_hidden_layers, n = h.num_attention_heads;
  model.hidden_size = H;
  if (t.optional_integer("hidden_size_per_layer_input", 0, kMaxHidden).value_or(0) > 0) {
    t.fail("hidden_size_per_layer_input", "0 (per-layer embeddings, as in Gemma 4 E2B / E4B, are not modelled)");
  }
  const std::int64_t global_head_dim = t.optional_integer("global_head_dim", 1, kMaxHidden).value_or(h.head_dim);
  const bool k_eq_v = t.boolean("attention_k_eq_v", false);
  const std::int64_t global_kv =
      k_eq_v ? t.optional_integer("num_global_key_value_heads", 1, kMaxHeads).value_or(h.num_key_value_heads)
             : h.num_key_value_heads;
  if (n % global_kv != 0) t.fail("num_global_key_value_heads", fmt::format("a divisor of num_attention_heads {}", n));
  const std::int64_t window = t.integer("sliding_window", 1, std::int64_t{1} << 32);
  const auto types = t.string_list("layer_types");
  if (static_cast<std::int64_t>(types.size()) != L) t.fail("layer_types", fmt::format("{} entries", L));
  const std::int64_t shared = t.optional_integer("num_kv_shared_layers", 0, L - 1).value_or(0);
  const bool double_wide = t.boolean("use_double_wide_mlp", false);
  if (t.boolean("attention_bias", false)) t.fail("attention_bias", "false (Gemma 4's projections have no bias)");
  if (c.root.has("audio_config") && !c.root.value()["audio_config"].is_null()) {
    c.root.fail("audio_config", "null (the audio tower is not modelled)");
  }
  const bool moe = t.boolean("enable_moe_block", false);
  const std::int64_t experts = moe ? t.integer("num_experts", 1, kMaxExperts) : 0;
  const std::int64_t moe_intermediate = moe ? t.integer("moe_intermediate_size", 1, kMaxIntermediate) : 0;
  if (moe) model.num_experts_per_token = t.integer("top_k_experts", 1, experts);
  const Dtype dt = c.dtype;

  for (std::int64_t i = 0; i < L; ++i) {
    const std::string& type = types[static_cast<std::size_t>(i)];
    if (type != "sliding_attention" && type != "full_attention") {
      t.fail("layer_types", "entries \"sliding_attention\" or \"full_attention\"");
    }
    const bool full = type == "full_attention";
    const std::int64_t d = full ? global_head_dim : h.head_dim;
    const std::int64_t kv = full ? global_kv : h.num_key_value_heads;
    LayerSpec layer;
    layer.index = i;
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = p + "self_attn.";
    // The k_eq_v V slot: in the QKV module's per-GPU bytes (heads x head_dim), not in its checkpoint
    // shards (output sizes q, k, 0).
    LinearModule qkv = make_linear(a + "qkv_proj", Component::kAttention, Parallelism::kQkv,
                                   {n * d, kv * d, full && k_eq_v ? 0 : kv * d}, H,
                                   c.format_for(a, {"q_proj", "k_proj", "v_proj"}));
    qkv.num_heads = n;
    qkv.num_kv_heads = kv;
    qkv.head_dim = d;
    layer.linears.push_back(qkv);
    layer.linears.push_back(
        make_linear(a + "o_proj", Component::kAttention, Parallelism::kRow, {H}, n * d, c.format_for(a, {"o_proj"})));
    layer.replicated.push_back({a + "q_norm", Component::kNorms, d, dt});
    layer.replicated.push_back({a + "k_norm", Component::kNorms, d, dt});
    const bool kv_shared = i >= L - shared;
    const std::int64_t I = h.intermediate_size * (double_wide && kv_shared ? 2 : 1);
    add_gated_mlp(c, layer, p + "mlp.", H, I, Component::kDenseMlp);
    add_layer_norms(layer, p, H, dt);
    layer.replicated.push_back({p + "pre_feedforward_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "post_feedforward_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "layer_scalar", Component::kNorms, 1, dt});
    if (moe) {
      layer.linears.push_back(make_linear(p + "router.proj", Component::kRouter, Parallelism::kReplicated, {experts}, H,
                                          c.unquantized()));
      layer.replicated.push_back({p + "router.scale", Component::kRouter, H, dt});
      layer.replicated.push_back({p + "router.per_expert_scale", Component::kRouter, experts, dt});
      add_experts(c, layer, p + "experts", experts, moe_intermediate, H);
      for (const char* norm : {"post_feedforward_layernorm_1", "post_feedforward_layernorm_2", "pre_feedforward_layernorm_2"}) {
        layer.replicated.push_back({p + norm, Component::kNorms, H, dt});
      }
    }
    if (kv_shared) {
      layer.attention.kind = AttentionKind::kNone;  // the cache of an earlier layer of its type
    } else {
      layer.attention = standard_attention(full ? AttentionKind::kFull : AttentionKind::kSlidingWindow, n, kv, d,
                                           full ? 0 : window);
    }
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  // One cos/sin cache per RoPE setting, [max_position_embeddings, rotary_dim] in the model dtype:
  // sliding layers rotate head_dim, full layers ("proportional") their whole global_head_dim.
  const std::int64_t positions = t.integer("max_position_embeddings", 1, std::int64_t{1} << 24);
  model.buffers.push_back({"rotary_emb (sliding_attention)", Component::kBuffers, positions * h.head_dim, dt});
  model.buffers.push_back({"rotary_emb (full_attention)", Component::kBuffers, positions * global_head_dim, dt});
  // Head dims above 256 that differ between layer types: vLLM's Gemma4Config.verify_and_update_config
  // forces the TRITON_ATTN backend (models/config.py).
  if (global_head_dim != h.head_dim && std::max(global_head_dim, h.head_dim) > 256) {
    model.forced_attention_backend = "TRITON_ATTN";
  }
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"gemma4_text"}};
constexpr std::string_view kArchitectures[] = {"Gemma4ForConditionalGeneration", "Gemma4ForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"use_bidirectional_attention", "", "image tokens attend both ways: a mask, no tensor"},
    {"vocab_size_per_layer_input", "", "the per-layer embeddings' vocabulary, used only with hidden_size_per_layer_input > 0 (refused)"},
    {"expert_intermediate_size", "null", "no experts"},
    {"moe_intermediate_size", "null", "no experts (enable_moe_block false)"},
    {"num_experts", "null", "no experts (enable_moe_block false)"},
    {"top_k_experts", "null", "no experts (enable_moe_block false)"},
};

}  // namespace

const Family& family_gemma4() {
  static constexpr Family kFamily{.name = "gemma4",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_gemma4};
  return kFamily;
}

}  // namespace gpubudget::detail
