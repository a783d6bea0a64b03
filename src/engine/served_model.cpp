// The model as a deployment makes vLLM build it (served_model.h; docs/methodology.md §Launch options).
#include "gpubudget/served_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/drafters.h"
#include "gpubudget/error.h"

namespace gpubudget {

namespace {

// --quantization of an unquantized checkpoint, applied at load to every linear layer and FusedMoE block
// built with the model's quant_config; embeddings, the head, norms and buffers stay in the model dtype.
// fp8 (Fp8Config without a serialized checkpoint: Fp8OnlineLinearMethod / Fp8OnlineMoEMethod): fp8 e4m3
// with one fp32 scale per module (per expert for w13 and for w2), no input scale. bitsandbytes
// (BitsAndBytesModelLoader._unquantized_generator): NF4 of each rank's slice (QuantKind::kBnbNf4).
// MoE routers are built with quant_config=None (ReplicatedLinear, GateLinear or nn.Linear) and stay in
// their dtype, unless the parser says the model class passes its quant_config
// (ModelSpec::router_takes_quant_config).
void quantize_online(ModelSpec& m, OnlineQuantization method) {
  const bool quantized_router = m.router_takes_quant_config;
  QuantFormat target;
  target.kind = method == OnlineQuantization::kBitsAndBytes ? QuantKind::kBnbNf4 : QuantKind::kFp8Tensor;
  auto convert = [&](QuantFormat& f) {
    if (f.kind != QuantKind::kUnquantized) return;
    target.dtype = f.dtype;  // the dtype the weight is dequantized to (biases stay in it)
    f = target;
  };
  for (auto& layer : m.layers) {
    for (auto& l : layer.linears) {
      if (l.component == Component::kExtraCopies || (l.component == Component::kRouter && !quantized_router)) continue;
      convert(l.format);
    }
    for (auto& e : layer.experts) convert(e.format);
  }
  if (m.vision) {
    for (auto& l : m.vision->linears) convert(l.format);
  }
}

void check_online_quantization(const ModelSpec& m, OnlineQuantization q) {
  if (q == OnlineQuantization::kNone || m.quantization.method.empty()) return;
  // ModelConfig._verify_quantization: a checkpoint's own method must match --quantization.
  if (q == OnlineQuantization::kFp8 && m.quantization.method == "fp8") return;
  throw InputError(fmt::format("--quantization {}: {} is a {} checkpoint; vLLM refuses a --quantization that differs "
                               "from the checkpoint's (\"Quantization method specified in the model config ({}) does "
                               "not match the quantization method specified in the `quantization` argument ({})\")",
                               online_quantization_name(q), m.source, m.quantization.method, m.quantization.method,
                               online_quantization_name(q)));
}

// VLLM_MLA_DISABLE=1: ModelConfig.use_mla is false, so DeepseekV2DecoderLayer builds DeepseekV2Attention
// (deepseek_v2.py) for every MLA layer, MTP layers included: Attention(num_local_heads, qk_head_dim,
// num_kv_heads=num_local_heads), K and V of qk_nope + qk_rope elements per head (V padded to it), split
// over TP like any full attention. The weights are the MLA layer's, without the bf16 W_UK_T / W_UV
// copies that only MLAAttention makes.
void run_mla_as_multi_head_attention(ModelSpec& m) {
  const auto convert = [&](std::vector<LayerSpec>& layers) {
    for (auto& layer : layers) {
      if (layer.attention.kind != AttentionKind::kMla) continue;
      if (m.mla_disabled_head_dim <= 0 || !layer.extra_kv.empty()) {
        throw InputError(fmt::format("VLLM_MLA_DISABLE=1: {} ({}) has no multi-head attention path modelled; vLLM "
                                     "builds one only in deepseek_v2.py and glm4_moe_lite.py, and not for sparse "
                                     "or compressed attention",
                                     m.source, m.architecture));
      }
      layer.attention.kind = AttentionKind::kFull;
      layer.attention.num_key_value_heads = layer.attention.num_attention_heads;
      layer.attention.head_dim = m.mla_disabled_head_dim;
      layer.attention.head_dim_v = m.mla_disabled_head_dim;
      std::erase_if(layer.linears, [](const LinearModule& l) { return l.component == Component::kExtraCopies; });
    }
  };
  convert(m.layers);
  convert(m.mtp_layers);
}

// What --speculative-config "model" names for a draft read from `source` (its folder, not config.json).
std::string draft_model_argument(const std::string& source) {
  constexpr std::string_view kConfig = "/config.json";
  return source.ends_with(kConfig) ? source.substr(0, source.size() - kConfig.size()) : source;
}

}  // namespace

ModelSpec model_for_dtype(const ModelSpec& checkpoint, ModelDtypeChoice dtype) {
  switch (dtype) {
    case ModelDtypeChoice::kAuto: return checkpoint;
    case ModelDtypeChoice::kBFloat16: return with_dtype(checkpoint, Dtype::kBFloat16);
    case ModelDtypeChoice::kFloat16: return with_dtype(checkpoint, Dtype::kFloat16);
    case ModelDtypeChoice::kFloat32: return with_dtype(checkpoint, Dtype::kFloat32);
  }
  return checkpoint;
}

void check_servable_alone(const ModelSpec& model) {
  if (model.medusa) {
    throw InputError(fmt::format("{}: a Medusa draft (model_type \"medusa\"), which vLLM builds only beside its "
                                 "target; size the target with --speculative-config '{{\"method\": \"medusa\", "
                                 "\"model\": \"{}\", \"num_speculative_tokens\": {}}}'",
                                 model.source, draft_model_argument(model.source), model.medusa->checkpoint_heads));
  }
  if (!model.eagle_head) return;
  throw InputError(fmt::format(
      "{}: {} is an EAGLE draft head ({}), which vLLM builds only beside its target; size the target with "
      "--speculative-config '{{\"method\": \"eagle3\", \"model\": \"{}\", \"num_speculative_tokens\": 3}}' "
      "(method eagle for an EAGLE-1 head)",
      model.source, model.architecture,
      model.eagle_head->draft_only_architecture ? "a draft-only architecture of vLLM's registry"
                                                : "its config has EAGLE keys such as draft_vocab_size",
      draft_model_argument(model.source)));
}

namespace {

// The encoder profile as --limit-mm-per-prompt and --mm-processor-kwargs leave it: a modality given 0
// items is not profiled; max_pixels resizes the Qwen2-VL family's largest image (and so its video).
void apply_multimodal_limits(EncoderProfileShape& profile, const Deployment& d) {
  const auto disabled = [&](const char* modality) {
    return std::find(d.disabled_modalities.begin(), d.disabled_modalities.end(), modality) !=
           d.disabled_modalities.end();
  };
  if (disabled("video")) profile.video_max_frames = 0;
  if (disabled("image") && profile.video_max_frames > 0) profile.image_profiled = false;
  if (d.mm_max_pixels > 0 && profile.pixels_per_token_side > 0) {
    profile.max_tokens_per_item = qwen2_vl_largest_image_tokens(d.mm_max_pixels, profile.pixels_per_token_side);
    profile.max_item_source = fmt::format("--mm-processor-kwargs max_pixels {}", d.mm_max_pixels);
  }
}

}  // namespace

bool deployment_rebuilds_model(const Deployment& d) {
  return d.dtype != ModelDtypeChoice::kAuto || d.quantization != OnlineQuantization::kNone || d.language_model_only ||
         d.mm_encoder_tp_mode != EncoderTpMode::kWeights || d.speculative.method != SpeculativeMethod::kNone ||
         !d.disabled_modalities.empty() || d.mm_max_pixels > 0 || d.mla_disabled;
}

ModelSpec model_as_served(const ModelSpec& checkpoint, const Deployment& d, const SpeculativeRules& rules) {
  const SpeculativeMethod method = d.speculative.method;
  if (method != SpeculativeMethod::kNone &&
      (d.speculative.num_speculative_tokens < 1 || d.speculative.num_speculative_tokens > 64)) {
    throw InputError(fmt::format("--speculative-config num_speculative_tokens {}: expected from 1 to 64",
                                 d.speculative.num_speculative_tokens));
  }
  const bool separate_draft = method == SpeculativeMethod::kEagle || method == SpeculativeMethod::kEagle3 ||
                              method == SpeculativeMethod::kDraftModel || method == SpeculativeMethod::kMedusa;
  if (separate_draft && !d.speculative.draft_model) {
    throw InputError(fmt::format("--speculative-config method {}: the draft checkpoint (\"model\") was not read",
                                 speculative_method_name(method)));
  }
  ModelSpec m = model_for_dtype(checkpoint, d.dtype);
  if (d.mla_disabled) run_mla_as_multi_head_attention(m);
  check_online_quantization(m, d.quantization);
  if (d.quantization != OnlineQuantization::kNone && m.quantization.method.empty()) quantize_online(m, d.quantization);
  if (d.language_model_only) {
    m.vision.reset();  // _mark_tower_model: the tower is a missing stage; no weights, no encoder profile
  } else if (d.mm_encoder_tp_mode == EncoderTpMode::kData && m.vision && m.vision->supports_encoder_tp_data) {
    for (auto& l : m.vision->linears) l.parallelism = Parallelism::kReplicated;
    m.vision->profile.replicated = true;
  }
  if (m.vision) apply_multimodal_limits(m.vision->profile, d);
  if (method != SpeculativeMethod::kNone) m.num_speculative_tokens = d.speculative.num_speculative_tokens;
  if (method == SpeculativeMethod::kMtp) {
    if (d.speculative.draft_tensor_parallel_size && *d.speculative.draft_tensor_parallel_size != d.tensor_parallel_size) {
      throw InputError(fmt::format("--speculative-config draft_tensor_parallel_size {}: MTP layers run with the "
                                   "target's --tensor-parallel-size {} in vLLM",
                                   *d.speculative.draft_tensor_parallel_size, d.tensor_parallel_size));
    }
    Drafter drafter = detail::mtp_drafter(m, d.pipeline_parallel_size, rules.mtp_shares_head);
    if (d.quantization != OnlineQuantization::kNone && checkpoint.quantization.method.empty()) {
      ModelSpec layers_only;
      layers_only.layers = std::move(drafter.layers);
      quantize_online(layers_only, d.quantization);
      drafter.layers = std::move(layers_only.layers);
    }
    m.drafter = std::move(drafter);
  } else if (method == SpeculativeMethod::kEagle || method == SpeculativeMethod::kEagle3) {
    // The head is quantized by its own checkpoint only (get_draft_quant_config), not by --quantization.
    m.drafter = detail::eagle_drafter(m, *d.speculative.draft_model, d);
  } else if (method == SpeculativeMethod::kDraftModel) {
    m.drafter = detail::separate_draft_model(m, *d.speculative.draft_model, d);
  } else if (method == SpeculativeMethod::kMedusa) {
    m.drafter = detail::medusa_drafter(m, *d.speculative.draft_model, d);
  }
  return m;
}

}  // namespace gpubudget
