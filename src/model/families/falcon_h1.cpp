// Falcon-H1 (`falcon_h1`; vllm/model_executor/models/falcon_h1.py): every layer runs GQA attention
// (head_dim from the config, no biases whatever the config says) and a Mamba2 mixer of mamba_d_ssm
// channels in parallel, then a gated MLP (`feed_forward`); input_layernorm and pre_ff_layernorm, a final
// `final_layernorm`, an untied head built without quant config. So each layer holds a KV cache and a
// recurrent state (vLLM's KV layers model.layers.i.attn and model.{L+i}.mixer). Beside the weights each
// layer keeps a `mup_vector` buffer as wide as its in_proj rows on the rank (ones, in the model dtype),
// and the model one RoPE cache of [max_position_embeddings, attn_rotary_emb or head_dim].
#include <fmt/format.h>

#include "model/blocks.h"
#include "model/families.h"
#include "model/hparams.h"

namespace gpubudget::detail {

void parse_falcon_h1(const ParseContext& c, ModelSpec& model) {
  const JsonReader& t = c.text;
  HparamsDefaults defaults;
  defaults.intermediate_required = true;
  const CommonHparams h = read_common_hparams(t, defaults);
  const std::int64_t H = h.hidden_size, L = h.num_hidden_layers, n = h.num_attention_heads, kv = h.num_key_value_heads,
                     d = h.head_dim;
  model.hidden_size = H;
  // d_ssm = mamba_d_ssm, else mamba_expand x hidden_size (FalconH1SSMDecoderLayer).
  Mamba2Geometry mamba = read_mamba2_geometry(t, H, /*reads_d_ssm=*/true, model);
  mamba.rms_norm = t.boolean("mamba_rms_norm", false);
  const Dtype dt = c.dtype;

  for (std::int64_t i = 0; i < L; ++i) {
    LayerSpec layer;
    layer.index = i;
    const std::string p = fmt::format("model.layers.{}.", i);
    LayerSpec mixer;  // the Mamba2 block's modules and state, moved beside the attention
    add_mamba2_mixer(c, mixer, p + "mamba.", H, mamba);
    layer.parallel_state = mixer.attention;
    layer.attention = standard_attention(AttentionKind::kFull, n, kv, d);
    add_gqa_attention(c, layer, p + "self_attn.", H, n, n, kv, d);
    for (auto& m : mixer.linears) layer.linears.push_back(std::move(m));
    // mup_vector: [1, in_proj rows on the rank], created with the layer (not in the checkpoint).
    LinearModule mup = make_linear(p + "mamba.mup_vector", Component::kExtraCopies, Parallelism::kColumn,
                                   {2 * mamba.inner + 2 * mamba.groups * mamba.state + mamba.heads}, 1, c.unquantized());
    mup.mamba_groups = mamba.groups;
    mup.mamba_group_rows = mamba.state;
    layer.linears.push_back(mup);
    add_gated_mlp(c, layer, p + "feed_forward.", H, h.intermediate_size, Component::kDenseMlp);
    layer.replicated.push_back({p + "input_layernorm", Component::kNorms, H, dt});
    layer.replicated.push_back({p + "pre_ff_layernorm", Component::kNorms, H, dt});
    model.layers.push_back(std::move(layer));
  }
  model.final_norms.push_back({"model.final_layernorm", Component::kNorms, H, dt});
  const auto rotary = t.optional_integer("attn_rotary_emb", 1, kMaxHidden).value_or(d);
  add_rotary_caches(t, model, rotary, dt, 8192);  // FalconH1: max_position_embeddings defaults to 8192
}


namespace {

// The family: the model types and vLLM architectures it reads, and the config keys of theirs without
// an effect on memory (model/families.h).
// FalconH1Config's max_position_embeddings is 8192 when a config omits it.
constexpr ModelType kModelTypes[] = {{"falcon_h1", 8192}};
constexpr std::string_view kArchitectures[] = {"FalconH1ForCausalLM"};
constexpr ReviewedConfigKey kReviewedKeys[] = {
    {"attention_bias", "false", "falcon_h1.py builds q/k/v and o without bias"},
    {"mlp_bias", "false", "falcon_h1.py builds the MLP without bias"},
    {"projectors_bias", "false", "falcon_h1.py builds no projector bias"},
    {"mamba_expand", "", "used only when mamba_d_ssm is absent, which the parser then reads"},
};

}  // namespace

const Family& family_falcon_h1() {
  static constexpr Family kFamily{.name = "falcon_h1",
                                  .model_types = kModelTypes,
                                  .architectures = kArchitectures,
                                  .reviewed_keys = kReviewedKeys,
                                  .parse = parse_falcon_h1};
  return kFamily;
}

}  // namespace gpubudget::detail
