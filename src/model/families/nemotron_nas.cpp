// DeciLM / Llama-Nemotron "NAS" models (vLLM model_executor/models/nemotron_nas.py,
// DeciLMForCausalLM, model_type nemotron-nas): Llama layers whose attention and MLP each come from
// `block_configs[i]`. An attention that is `no_op` is absent (no input_layernorm, no KV cache layer);
// otherwise it is Llama's with num_key_value_heads = num_attention_heads / n_heads_in_group. An MLP
// that is `no_op` is absent (no post_attention_layernorm); otherwise its width is
// _ffn_mult_to_intermediate_size: int(2 x ffn_mult x hidden / 3) rounded up to a multiple of 256.
// vLLM builds neither `replace_with_linear` blocks nor windowed / sink attention: such configs are refused.
#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_nemotron_nas(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  HparamsDefaults defaults;
  defaults.intermediate_required = false;  // per layer, from block_configs
  defaults.has_kv_heads = false;           // per layer, from n_heads_in_group
  const CommonHparams hp = read_common_hparams(t, defaults);
  const std::int64_t H = hp.hidden_size, L = hp.num_hidden_layers, n = hp.num_attention_heads;
  (void)t.has("num_key_value_heads");  // null in these configs: each block says
  const std::int64_t d = t.optional_integer("head_dim", 1, kMaxHidden).value_or(H / n);
  const bool attention_bias = t.boolean("attention_bias", false);
  const bool mlp_bias = t.boolean("mlp_bias", false);
  if (!t.has("block_configs") || !t.value()["block_configs"].is_array() ||
      static_cast<std::int64_t>(t.value()["block_configs"].size()) != L) {
    t.fail("block_configs", fmt::format("an array of {} (num_hidden_layers) block configs", L));
  }
  model.hidden_size = H;
  model.tie_word_embeddings = t.boolean("tie_word_embeddings", false);
  const Dtype dt = c.dtype;
  for (std::int64_t i = 0; i < L; ++i) {
    const JsonReader block(t.value()["block_configs"][static_cast<std::size_t>(i)], t.file(),
                           fmt::format("/block_configs/{}", i));
    const JsonReader attention = block.object("attention");
    const JsonReader ffn = block.object("ffn");
    LayerSpec layer;
    layer.index = i;
    layer.attention.kind = AttentionKind::kNone;
    const std::string p = fmt::format("model.layers.{}.", i);
    for (const JsonReader* part : {&attention, &ffn}) {
      if (part->boolean("replace_with_linear", false)) {
        part->fail("replace_with_linear", "false (vLLM's DeciLM builds no linear replacement blocks)");
      }
    }
    for (const char* key : {"window_length", "num_sink_tokens"}) {
      if (attention.has(key)) attention.fail(key, "null (vLLM's DeciLM has no windowed or sink attention)");
    }
    if (!attention.boolean("no_op", false)) {
      const auto group = attention.integer("n_heads_in_group", 1, kMaxHeads);
      if (n % group != 0) attention.fail("n_heads_in_group", fmt::format("a divisor of num_attention_heads {}", n));
      const std::int64_t kv = n / group;
      layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
      add_gqa_attention(c, layer, p + "self_attn.", H, n, n, kv, d, attention_bias, attention_bias);
      layer.replicated.push_back({p + "input_layernorm", Component::kNorms, H, dt});
    }
    if (!ffn.boolean("no_op", false)) {
      std::int64_t I = 0;
      if (ffn.has("ffn_mult")) {
        const double mult = ffn.number("ffn_mult", 1e-6, 1024);
        I = static_cast<std::int64_t>(2.0 * mult * static_cast<double>(H) / 3.0);
        if (I % 256 != 0) I += 256 - I % 256;
        if (I > kMaxIntermediate) ffn.fail("ffn_mult", fmt::format("a multiplier giving at most {} MLP channels", kMaxIntermediate));
      } else {
        I = ffn.integer("intermediate_size", 1, kMaxIntermediate);
      }
      add_gated_mlp(c, layer, p + "mlp.", H, I, Component::kDenseMlp, mlp_bias);
      layer.replicated.push_back({p + "post_attention_layernorm", Component::kNorms, H, dt});
    }
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.norm", Component::kNorms, H, dt});
  add_rotary_caches(t, model, d, dt, 0);
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
constexpr ModelType kModelTypes[] = {{"nemotron-nas"}};
constexpr std::string_view kArchitectures[] = {"DeciLMForCausalLM"};
constexpr std::span<const ReviewedConfigKey> kReviewedKeys = {};

}  // namespace

const Family& family_nemotron_nas() {
  static constexpr Family kFamily{.name = "nemotron_nas",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_nemotron_nas};
  return kFamily;
}

}  // namespace gpubudget::detail
