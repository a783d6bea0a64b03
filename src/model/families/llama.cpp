// Llama-style decoders: GQA attention + gated MLP or MoE, with per-family details as data
// (vLLM model_executor/models/{llama,mistral,qwen2,qwen3,qwen2_moe,qwen3_moe,mixtral,gemma,gemma2,
// gemma3,phi3,granite,commandr,olmo2,exaone4}.py). Command-R / Command-A (commandr.py): one weight-only
// LayerNorm feeding attention and MLP in parallel, always tied embeddings, optional per-head q/k norms
// split with the heads. OLMo 2 / 3 (olmo2.py): post-norms only, q/k norms over the whole projection,
// replicated. EXAONE 4 (exaone4.py): post-norms only, per-head-dim q/k norms.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

namespace {

// How a member's layers hold their experts.
enum class MoeStyle {
  kDense,    // no experts
  kQwen,     // `num_experts`; dense layers by decoder_sparse_step and mlp_only_layers
  kMixtral,  // `num_local_experts` on every layer (block_sparse_moe)
  kMiniMax,  // as Mixtral, with an fp32 router and a score-correction bias
  kErnie,    // ERNIE 4.5 (ernie45_moe.py): MoE on layers (i+1) % moe_layer_interval == 0 within
             // [moe_layer_start_index, moe_layer_end_index], a float32 router and score-correction bias,
             // shared experts of moe_intermediate_size x moe_num_shared_experts; dense layers elsewhere
  kHunyuan,  // every layer: `num_experts` of moe_intermediate_size (per layer or one), router mlp.gate.wg,
             // and with use_mixed_mlp_moe a shared MLP of intermediate_size x num_shared_expert
};

// A key that is one integer for every layer or a list of one per layer (Hunyuan's moe_topk,
// moe_intermediate_size, num_shared_expert).
std::vector<std::int64_t> per_layer_integers(const JsonReader& t, const std::string& key, std::int64_t layers,
                                             std::int64_t min, std::int64_t max) {
  if (t.has(key) && t.value()[key].is_array()) {
    auto values = t.integer_list(key, min, max);
    if (static_cast<std::int64_t>(values.size()) != layers) t.fail(key, fmt::format("{} entries or one integer", layers));
    return values;
  }
  return std::vector<std::int64_t>(static_cast<std::size_t>(layers), t.integer(key, min, max));
}

// What distinguishes the members of the family.
struct Traits {
  std::string_view model_type;
  // The config class's max_position_embeddings, for a sparse config that omits it (0: none).
  std::int64_t default_max_position = 0;
  bool qkv_bias = false;       // q/k/v biases regardless of attention_bias (Qwen2)
  bool qk_norm = false;        // per-head q_norm / k_norm weights (Qwen3, Gemma 3)
  int norms_per_layer = 2;     // 2, or 4 with pre/post feed-forward norms (Gemma 2/3)
  bool tie_default = false;    // tie_word_embeddings when the config does not say
  MoeStyle moe = MoeStyle::kDense;
  bool qk_norm_over_all_heads = false;  // MiniMax-M2: one norm over all heads, split over TP
  // Which norms each layer holds (checkpoint names below).
  enum class Norms { kPrePost, kSandwich, kPostOnly, kParallel } norms = Norms::kPrePost;
  bool qk_norm_replicated_over_all_heads = false;  // OLMo 2/3: q_norm [n·d], k_norm [kv·d], whole on every GPU
  bool qk_norm_by_config = false;                  // Command-R: per-head norms only with use_qk_norm
  bool always_tied = false;                        // Command-R: the head is the embedding (vLLM asserts it)
  // Hunyuan (hunyuan_v1.py): o_proj biased like q/k/v by attention_bias, and with use_qk_norm per-head
  // query_layernorm / key_layernorm [head_dim], replicated.
  bool hunyuan_attention = false;
  // PhiMoE (phimoe.py): q/k/v and o_proj always biased, LayerNorms with a bias, a biased lm_head.
  bool phimoe_layout = false;
};

constexpr Traits kTraits[] = {
    {.model_type = "llama"},
    {.model_type = "mistral"},
    {.model_type = "ministral3"},  // Devstral 2 / Ministral 3: vLLM's MistralForCausalLM
    {.model_type = "qwen2", .qkv_bias = true},
    {.model_type = "qwen2_vl", .qkv_bias = true},  // Qwen2-VL's language model: Qwen2
    {.model_type = "qwen2_5_vl", .qkv_bias = true},  // Qwen2.5-VL's: Qwen2
    {.model_type = "mimo", .qkv_bias = true},  // MiMo (mimo.py): Qwen2, MTP layers skipped
    {.model_type = "qwen3", .qk_norm = true},
    {.model_type = "phi3"},
    {.model_type = "granite"},
    {.model_type = "gemma", .tie_default = true},
    {.model_type = "gemma2", .norms_per_layer = 4, .tie_default = true},
    // Gemma3TextConfig's max_position_embeddings is 131,072 (its published configs omit it).
    {.model_type = "gemma3_text", .default_max_position = 131072, .qk_norm = true, .norms_per_layer = 4,
     .tie_default = true},
    {.model_type = "qwen2_moe", .qkv_bias = true, .moe = MoeStyle::kQwen},
    {.model_type = "qwen3_moe", .qk_norm = true, .moe = MoeStyle::kQwen},
    {.model_type = "mixtral", .moe = MoeStyle::kMixtral},
    {.model_type = "minimax_m2", .moe = MoeStyle::kMiniMax, .qk_norm_over_all_heads = true},
    {.model_type = "qwen3_vl_text", .qk_norm = true},
    {.model_type = "qwen3_vl_moe_text", .qk_norm = true, .moe = MoeStyle::kQwen},
    {.model_type = "cohere", .norms_per_layer = 1, .tie_default = true, .norms = Traits::Norms::kParallel,
     .qk_norm_by_config = true, .always_tied = true},
    {.model_type = "cohere2", .norms_per_layer = 1, .tie_default = true, .norms = Traits::Norms::kParallel,
     .qk_norm_by_config = true, .always_tied = true},
    {.model_type = "olmo2", .norms = Traits::Norms::kPostOnly, .qk_norm_replicated_over_all_heads = true},
    {.model_type = "olmo3", .norms = Traits::Norms::kPostOnly, .qk_norm_replicated_over_all_heads = true},
    {.model_type = "exaone4", .qk_norm = true, .norms = Traits::Norms::kPostOnly},
    // Seed-OSS (seed_oss.py): q/k/v biased whatever attention_bias says, o_proj never; head_dim from
    // the config (80 x 128 = 2 x hidden for the 36B).
    {.model_type = "seed_oss", .qkv_bias = true},
    {.model_type = "hunyuan_v1_dense", .hunyuan_attention = true},
    {.model_type = "hunyuan_v1_moe", .moe = MoeStyle::kHunyuan, .hunyuan_attention = true},
    // ERNIE 4.5 (ernie45.py is vLLM's Llama with non-neox RoPE; ernie45_moe.py): q/k/v bias only with
    // use_bias (the MoE model; the dense one refuses it, as vLLM's Llama class would drop those biases).
    {.model_type = "ernie4_5", .tie_default = true},
    {.model_type = "ernie4_5_moe", .tie_default = true, .moe = MoeStyle::kErnie},
    {.model_type = "phimoe", .qkv_bias = true, .moe = MoeStyle::kMixtral, .phimoe_layout = true},
};

// Which layers keep only a sliding window, as the family's vLLM model decides it.
std::vector<bool> sliding_layers(const JsonReader& t, const std::string& model_type, std::int64_t L) {
  std::vector<bool> sliding(static_cast<std::size_t>(L), false);
  const auto window = t.optional_integer("sliding_window", 1, std::int64_t{1} << 32);
  if (t.has("layer_types")) {
    const auto types = t.string_list("layer_types");
    if (static_cast<std::int64_t>(types.size()) != L) {
      t.fail("layer_types", fmt::format("{} entries (num_hidden_layers)", L));
    }
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] != "sliding_attention" && types[i] != "full_attention") {
        t.fail("layer_types", "entries \"sliding_attention\" or \"full_attention\"");
      }
      sliding[i] = types[i] == "sliding_attention";
    }
  } else if (model_type == "gemma2") {
    for (std::int64_t i = 0; i < L; i += 2) sliding[static_cast<std::size_t>(i)] = true;  // even layers local
  } else if (model_type == "gemma3_text") {
    const auto pattern = t.optional_integer("sliding_window_pattern", 1, kMaxLayers).value_or(6);
    for (std::int64_t i = 0; i < L; ++i) sliding[static_cast<std::size_t>(i)] = (i + 1) % pattern != 0;
  } else if (model_type == "qwen2" || model_type == "mimo" || model_type == "qwen2_vl" || model_type == "qwen2_5_vl" || model_type == "qwen2_moe" || model_type == "qwen3" ||
             model_type == "qwen3_moe" || model_type == "qwen3_vl_text" || model_type == "qwen3_vl_moe_text") {
    if (t.boolean("use_sliding_window", false)) {
      const auto from = t.optional_integer("max_window_layers", 0, kMaxLayers).value_or(L);
      for (std::int64_t i = from; i < L; ++i) sliding[static_cast<std::size_t>(i)] = true;
    }
  } else if (model_type == "cohere2") {
    // Cohere2Config without layer_types: every sliding_window_pattern-th layer is global (default 4).
    const auto pattern = t.optional_integer("sliding_window_pattern", 1, kMaxLayers).value_or(4);
    for (std::int64_t i = 0; i < L; ++i) sliding[static_cast<std::size_t>(i)] = (i + 1) % pattern != 0;
  } else if ((model_type == "mistral" || model_type == "phi3" || model_type == "phimoe") && window) {
    // Not interleaved: vLLM sets cache_config.sliding_window from the config and every layer, passing
    // no window of its own, takes it (Mistral 7B v0.1, Phi-3).
    std::fill(sliding.begin(), sliding.end(), true);
  }
  if (std::find(sliding.begin(), sliding.end(), true) != sliding.end() && !window) {
    t.fail("sliding_window", "a window size for the sliding-attention layers");
  }
  return sliding;
}

// MiMo's next-n predictors (mimo_mtp.py, MiMoMultiTokenPredictorLayer): token_layernorm,
// hidden_layernorm, input_proj [H, 2H] (no bias), a Qwen2 decoder layer as mtp_block, final_layernorm.
// vLLM skips them at load (mimo.py drops "mtp_layers" weights); the checkpoint stores them.
void add_mimo_mtp_layers(const JsonReader& t, ModelSpec& model, std::int64_t H, Dtype dt, const QuantFormat& plain) {
  const auto nextn = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  model.skipped_mtp_layers = nextn;
  for (std::int64_t k = 0; k < nextn && !model.layers.empty(); ++k) {
    const std::string p = fmt::format("model.mtp_layers.{}.", k);
    LayerSpec block = model.layers.front();
    rename_layer_modules(block, "model.layers.0.", p + "mtp_block.");
    block.index = static_cast<std::int64_t>(model.layers.size()) + k;
    model.mtp_layers.push_back(std::move(block));
    for (const char* norm : {"token_layernorm", "hidden_layernorm", "final_layernorm"}) {
      model.mtp_tensors.push_back({p + norm, Component::kNorms, H, dt});
    }
    model.mtp_linears.push_back(make_linear(p + "input_proj", Component::kAttention, Parallelism::kReplicated, {H},
                                            2 * H, plain));
  }
}

// ERNIE 4.5's next-token predictors (ernie_mtp.py; vLLM's main model skips every "mtp" weight):
// mtp_emb_norm.K and mtp_hidden_norm.K [H], mtp_linear_proj.K [H, 2H] (a plain nn.Linear), and
// mtp_block.K, a dense decoder layer of intermediate_size (the first layer's shape when it is dense).
void add_ernie_mtp_layers(const JsonReader& t, ModelSpec& model, std::int64_t H, Dtype dt, const QuantFormat& plain) {
  const auto nextn = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  if (nextn == 0 || model.layers.empty()) return;
  if (model.layers.front().is_moe) {
    t.fail("num_nextn_predict_layers", "0 when layer 0 is a MoE layer (the MTP block is dense and sized from it)");
  }
  model.skipped_mtp_layers = nextn;
  for (std::int64_t k = 0; k < nextn; ++k) {
    LayerSpec block = model.layers.front();
    rename_layer_modules(block, "model.layers.0.", fmt::format("model.mtp_block.{}.", k));
    block.index = static_cast<std::int64_t>(model.layers.size()) + k;
    model.mtp_layers.push_back(std::move(block));
    for (const char* norm : {"mtp_emb_norm", "mtp_hidden_norm"}) {
      model.mtp_tensors.push_back({fmt::format("model.{}.{}", norm, k), Component::kNorms, H, dt});
    }
    model.mtp_linears.push_back(make_linear(fmt::format("model.mtp_linear_proj.{}", k), Component::kAttention,
                                            Parallelism::kReplicated, {H}, 2 * H, plain));
  }
}

}  // namespace

void parse_llama(const ParseContext& c, ModelSpec& model) {
  const auto* found = std::find_if(std::begin(kTraits), std::end(kTraits),
                                   [&](const Traits& x) { return model.model_type == x.model_type; });
  if (found == std::end(kTraits)) {
    throw std::logic_error(fmt::format("the llama family lists model_type {} without its traits", model.model_type));
  }
  const Traits& tr = *found;
  const JsonReader& t = c.text;
  // Qwen3-MoE's gate takes the quant_config (qwen3_moe.py, #25455), and so does Qwen3-VL-MoE's, whose text
  // model reuses the block; every other router here is built with quant_config=None.
  model.router_takes_quant_config =
      model.architecture == "Qwen3MoeForCausalLM" || model.architecture == "Qwen3VLMoeForConditionalGeneration";
  // Gemma3TextConfig's defaults (its published configs are sparse): 8 heads, 4 KV heads, head_dim 256.
  const bool gemma3 = model.model_type == "gemma3_text";
  const CommonHparams hp = read_common_hparams(
      t, gemma3 ? HparamsDefaults{8, 4, 256, true, true, std::nullopt} : HparamsDefaults{});
  const std::int64_t H = hp.hidden_size, n = hp.num_attention_heads, kv = hp.num_key_value_heads, d = hp.head_dim,
                     I = hp.intermediate_size, L = hp.num_hidden_layers;
  const bool ernie = tr.moe == MoeStyle::kErnie;
  const bool use_bias = model.model_type.starts_with("ernie4_5") && t.boolean("use_bias", false);
  if (use_bias && !ernie) {
    t.fail("use_bias", "false (vLLM's Ernie4_5ForCausalLM is its Llama model, which does not read use_bias and "
                       "would drop the checkpoint's biases)");
  }
  const bool attention_bias =
      t.boolean("attention_bias", false) || (tr.hunyuan_attention && t.boolean("bias", false)) || use_bias;
  const bool hunyuan_qk_norm = tr.hunyuan_attention && t.boolean("use_qk_norm", false);
  if (tr.hunyuan_attention && t.has("attention_head_dim")) {
    // hunyuan_v1.py: head_dim if set, else attention_head_dim, else hidden / heads.
    const auto alias = t.integer("attention_head_dim", 1, kMaxHidden);
    if (!t.has("head_dim") && alias != d) t.fail("attention_head_dim", fmt::format("{} (hidden_size / heads) or a head_dim", d));
  }
  if (tr.hunyuan_attention && t.boolean("use_cla", false) && t.optional_integer("cla_share_factor", 1, kMaxLayers).value_or(1) > 1) {
    t.fail("use_cla", "false (cross-layer attention layers fail vLLM's KV-cache spec: its Attention asserts a decoder layer)");
  }
  const bool qkv_bias = tr.qkv_bias || attention_bias;
  const bool mlp_bias = t.boolean("mlp_bias", false);
  const bool use_qk_norm = tr.qk_norm_by_config && t.boolean("use_qk_norm", false);
  model.hidden_size = H;
  model.tie_word_embeddings = c.root.boolean("tie_word_embeddings", t.boolean("tie_word_embeddings", tr.tie_default));
  if (tr.always_tied && !model.tie_word_embeddings) {
    t.fail("tie_word_embeddings", fmt::format("true (vLLM's {} ties the head to the embedding)", model.model_type));
  }
  const auto sliding = sliding_layers(t, model.model_type, L);
  const auto window = t.optional_integer("sliding_window", 1, std::int64_t{1} << 32).value_or(0);

  // MoE shape.
  const MoeStyle moe = tr.moe;
  std::int64_t experts = 0, moe_I = 0, sparse_step = 1, shared_I = 0;
  std::vector<std::int64_t> dense_only;
  if (moe == MoeStyle::kQwen) {
    experts = t.integer("num_experts", 1, kMaxExperts);
    moe_I = t.integer("moe_intermediate_size", 1, kMaxIntermediate);
    sparse_step = t.optional_integer("decoder_sparse_step", 1, kMaxLayers).value_or(1);
    dense_only = t.integer_list("mlp_only_layers", 0, kMaxLayers);
    shared_I = t.optional_integer("shared_expert_intermediate_size", 0, kMaxIntermediate).value_or(0);
  } else if (moe == MoeStyle::kMixtral || moe == MoeStyle::kMiniMax) {
    experts = t.integer("num_local_experts", 1, kMaxExperts);
    moe_I = I;
    if (moe == MoeStyle::kMiniMax) {
      shared_I = t.optional_integer("shared_intermediate_size", 0, kMaxIntermediate).value_or(0);
      if (shared_I > 0) t.fail("shared_intermediate_size", "0 (MiniMax shared experts are not modelled yet)");
      for (const auto type : t.integer_list("attn_type_list", 0, 1)) {
        if (type != 1) t.fail("attn_type_list", "1 for every layer (lightning attention layers are not modelled)");
      }
    }
  }
  std::vector<std::int64_t> layer_moe_I, layer_shared;
  std::int64_t moe_first = 0, moe_last = L - 1;
  if (moe == MoeStyle::kErnie) {
    experts = t.integer("moe_num_experts", 1, kMaxExperts);
    moe_I = t.integer("moe_intermediate_size", 1, kMaxIntermediate);
    shared_I = moe_I * t.optional_integer("moe_num_shared_experts", 0, 64).value_or(0);
    sparse_step = t.optional_integer("moe_layer_interval", 1, kMaxLayers).value_or(1);
    moe_first = t.optional_integer("moe_layer_start_index", 0, L - 1).value_or(0);
    const auto end = t.optional_integer("moe_layer_end_index", -1, L - 1).value_or(L - 1);
    moe_last = end < 0 ? L - 1 : end;
    model.num_experts_per_token = t.integer("moe_k", 1, experts);
  } else if (moe == MoeStyle::kHunyuan) {
    experts = t.integer("num_experts", 2, kMaxExperts);
    layer_moe_I = per_layer_integers(t, "moe_intermediate_size", L, 1, kMaxIntermediate);
    const auto topk = per_layer_integers(t, "moe_topk", L, 1, experts);
    model.num_experts_per_token = *std::max_element(topk.begin(), topk.end());
    layer_shared = t.boolean("use_mixed_mlp_moe", false) ? per_layer_integers(t, "num_shared_expert", L, 0, 64)
                                                         : std::vector<std::int64_t>(static_cast<std::size_t>(L), 0);
  } else if (experts > 0 && !ernie) {
    model.num_experts_per_token = t.integer("num_experts_per_tok", 1, kMaxExperts);
  }

  const Dtype dt = c.dtype;
  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const bool is_sliding = sliding[static_cast<std::size_t>(i)];
    layer.attention = standard_attention(is_sliding ? AttentionKind::kSlidingWindow : AttentionKind::kFull, n, kv, d,
                                         is_sliding ? window : 0);
    const std::string p = fmt::format("model.layers.{}.", i);
    const std::string a = p + "self_attn.";

    add_gqa_attention(c, layer, a, H, n, n, kv, d, qkv_bias, (tr.hunyuan_attention && qkv_bias) || tr.phimoe_layout);
    if (tr.hunyuan_attention && hunyuan_qk_norm) {
      layer.replicated.push_back({a + "query_layernorm", Component::kAttention, d, dt});
      layer.replicated.push_back({a + "key_layernorm", Component::kAttention, d, dt});
    }
    if (tr.qk_norm) {
      layer.replicated.push_back({a + "q_norm", Component::kAttention, d, dt});
      layer.replicated.push_back({a + "k_norm", Component::kAttention, d, dt});
    }
    if (tr.qk_norm_replicated_over_all_heads) {
      layer.replicated.push_back({a + "q_norm", Component::kAttention, n * d, dt});
      layer.replicated.push_back({a + "k_norm", Component::kAttention, kv * d, dt});
    }
    if (tr.qk_norm_over_all_heads || (tr.qk_norm_by_config && use_qk_norm)) {
      // One weight per channel of all query / key heads, split over TP like the heads.
      layer.linears.push_back(make_linear(a + "q_norm", Component::kAttention, Parallelism::kColumn, {n * d}, 1,
                                          c.unquantized()));
      layer.linears.push_back(make_linear(a + "k_norm", Component::kAttention, Parallelism::kColumn, {kv * d}, 1,
                                          c.unquantized()));
    }

    const std::string m = p + "mlp.";
    layer.is_moe = experts > 0 && (i + 1) % sparse_step == 0 && i >= moe_first && i <= moe_last &&
                   std::find(dense_only.begin(), dense_only.end(), i) == dense_only.end();
    if (layer.is_moe && ernie) {
      LinearModule gate = make_linear(m + "gate", Component::kRouter, Parallelism::kReplicated, {experts}, H,
                                      c.unquantized_float32());
      gate.checkpoint_formats = {c.unquantized()};  // float32 in vLLM (params_dtype), stored in the model dtype
      layer.linears.push_back(gate);
      layer.replicated.push_back({m + "moe_statics.e_score_correction_bias", Component::kRouter, experts,
                                  Dtype::kFloat32});
      add_experts(c, layer, m + "experts", experts, moe_I, H);
      if (shared_I > 0) add_gated_mlp(c, layer, m + "shared_experts.", H, shared_I, Component::kSharedExperts);
    } else if (layer.is_moe && moe == MoeStyle::kHunyuan) {
      // hunyuan_v1.py HunYuanSparseMoeBlock: the router in the model dtype (ReplicatedLinear).
      const auto at = static_cast<std::size_t>(i);
      layer.linears.push_back(make_linear(m + "gate.wg", Component::kRouter, Parallelism::kReplicated, {experts}, H,
                                          c.unquantized()));
      add_experts(c, layer, m + "experts", experts, layer_moe_I[at], H);
      if (layer_shared[at] > 0) {
        add_gated_mlp(c, layer, m + "shared_mlp.", H, I * layer_shared[at], Component::kSharedExperts);
      }
    } else if (layer.is_moe) {
      const bool block_sparse = moe == MoeStyle::kMixtral || moe == MoeStyle::kMiniMax;
      const std::string gate_name = block_sparse ? p + "block_sparse_moe.gate" : m + "gate";
      // MiniMax-M2 keeps its router in fp32.
      const QuantFormat router = moe == MoeStyle::kMiniMax ? c.unquantized_float32() : c.unquantized();
      layer.linears.push_back(make_linear(gate_name, Component::kRouter, Parallelism::kReplicated, {experts}, H, router));
      if (moe == MoeStyle::kMiniMax) {
        layer.replicated.push_back({p + "block_sparse_moe.e_score_correction_bias", Component::kRouter, experts,
                                    Dtype::kFloat32});
      }
      add_experts(c, layer, block_sparse ? p + "block_sparse_moe.experts" : m + "experts", experts, moe_I, H);
      if (shared_I > 0) {
        add_gated_mlp(c, layer, m + "shared_expert.", H, shared_I, Component::kSharedExperts);
        layer.linears.push_back(make_linear(m + "shared_expert_gate", Component::kRouter, Parallelism::kReplicated,
                                            {1}, H, c.unquantized()));
      }
    } else {
      add_gated_mlp(c, layer, m, H, I, Component::kDenseMlp, mlp_bias);
    }
    static constexpr const char* kNormNames[] = {"input_layernorm", "post_attention_layernorm",
                                                 "pre_feedforward_layernorm", "post_feedforward_layernorm"};
    static constexpr int kPostOnly[] = {1, 3};
    const std::int64_t norm_elements = tr.phimoe_layout ? 2 * H : H;  // LayerNorm: weight and bias
    if (tr.norms == Traits::Norms::kPostOnly) {
      for (const int k : kPostOnly) layer.replicated.push_back({p + kNormNames[k], Component::kNorms, H, dt});
    } else {
      for (int k = 0; k < tr.norms_per_layer; ++k) {
        layer.replicated.push_back({p + kNormNames[k], Component::kNorms, norm_elements, dt});
      }
    }
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, tr.phimoe_layout ? 2 * H : H, dt});
  model.lm_head_bias = tr.phimoe_layout && t.boolean("lm_head_bias", true);
  if (model.model_type == "mimo") add_mimo_mtp_layers(t, model, H, dt, c.unquantized());
  if (ernie) add_ernie_mtp_layers(t, model, H, dt, c.unquantized());
  const double partial = partial_rotary_factor(t, 1.0);
  const auto rotary_dim = t.optional_integer("rotary_dim", 1, kMaxHidden)
                              .value_or(static_cast<std::int64_t>(static_cast<double>(d) * partial));
  add_rotary_caches(t, model, rotary_dim, dt, gemma3 ? 131072 : 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
// Every model type of kTraits, with its config class's default length.
constexpr auto kModelTypes = [] {
  std::array<ModelType, std::size(kTraits)> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = {kTraits[i].model_type, kTraits[i].default_max_position};
  return out;
}();
constexpr std::string_view kArchitectures[] = {
    "LlamaForCausalLM",   "LLaMAForCausalLM",     "MistralForCausalLM",    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",   "Phi3ForCausalLM",      "GraniteForCausalLM",    "GemmaForCausalLM",
    "Gemma2ForCausalLM",  "Gemma3ForCausalLM",    "Gemma3ForConditionalGeneration", "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM", "MixtralForCausalLM",  "MiniMaxM2ForCausalLM",  "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration",         "Mistral3ForConditionalGeneration", "CohereForCausalLM",
    "Cohere2ForCausalLM", "Olmo2ForCausalLM",     "Olmo3ForCausalLM",      "Exaone4ForCausalLM",
    "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "MiMoForCausalLM",
    "SeedOssForCausalLM", "HunYuanDenseV1ForCausalLM", "HunYuanMoEV1ForCausalLM", "PhiMoEForCausalLM",
    "Ernie4_5ForCausalLM", "Ernie4_5_MoeForCausalLM",
    // EAGLE draft heads (speculative-decoding models of vLLM's registry; eagle_head.cpp).
    "EagleLlamaForCausalLM", "Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3", "PeagleLlamaForCausalLM",
    "PEagleDraftModel", "Eagle3MiniMaxM2ForCausalLM", "Eagle3Qwen2_5vlForCausalLM", "Eagle3Qwen3vlForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"max_window_layers", "", "used by vLLM only with use_sliding_window, which the parser reads"},
    {"qkv_bias", "", "not read by vLLM's Qwen3-MoE (its biases follow attention_bias)"},
    {"input_jitter_noise", "", "PhiMoE's training-time input noise"},
    {"attention_out_bias", "false", "Seed-OSS: o_proj without bias, as seed_oss.py builds it"},
    {"use_qk_norm", "true", "the family builds q/k norms whatever the key says"},
    {"sliding_window_size", "", "Gemma 2's alias of sliding_window, which the parser reads"},
    {"sliding_window_pattern", "\"LLLG\"", "EXAONE 4's pattern, shipped with the layer_types the parser reads"},
    {"vision_feature_layer", "-1", "every vision layer is kept (vLLM drops the layers after another one)"},
    {"use_routing_bias", "true", "MiniMax-M2's score-correction bias, which the parser adds"},
    {"qk_norm_type", "\"per_layer\"", "MiniMax-M2's q/k norms over all heads, which the parser builds"},
    {"use_mtp", "", "MTP modules are loaded only with speculative decoding"},
    {"num_mtp_modules", "", "MTP modules are loaded only with speculative decoding"},
    {"mtp_transformer_layers", "", "MTP modules are loaded only with speculative decoding"},
    {"use_mrope", "false", "MiMo: plain RoPE"},
};

}  // namespace

const Family& family_llama() {
  static constexpr Family kFamily{.name = "llama",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_llama,
                                  .reads_eagle_head = true};
  return kFamily;
}

}  // namespace gpubudget::detail
