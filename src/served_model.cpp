// The model as a deployment makes vLLM build it (served_model.h; docs/methodology.md §Launch options).
#include "gpubudget/served_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"

namespace gpubudget {

namespace {

bool is_vocabulary_table(const ReplicatedTensor& t) {
  return t.component == Component::kEmbedding || t.component == Component::kLmHead;
}

// --quantization fp8 on an unquantized checkpoint (Fp8Config without a serialized checkpoint:
// Fp8OnlineLinearMethod / Fp8OnlineMoEMethod): every linear layer and FusedMoE block becomes fp8 e4m3
// with one fp32 scale per module (per expert for w13 and for w2), no input scale; embeddings, the head,
// norms and buffers stay in the model dtype.
void quantize_online_fp8(ModelSpec& m) {
  QuantFormat fp8;
  fp8.kind = QuantKind::kFp8Tensor;
  auto convert = [&](QuantFormat& f) {
    if (f.kind == QuantKind::kUnquantized) f = fp8;
  };
  for (auto& layer : m.layers) {
    for (auto& l : layer.linears) {
      if (l.component != Component::kExtraCopies) convert(l.format);
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

// --speculative-config method mtp: the checkpoint's next-n layers (DeepSeekMTP, Glm4MoeMTP ...) are
// built on the last pipeline stage and loaded. EagleProposer.load_model (llm_base_proposer.py
// _maybe_share_embeddings, _maybe_share_lm_head) then replaces the MTP model's head (every
// shared_head.head) with the target's and, with a single pipeline stage, its embedding too; with
// several stages the draft keeps one embedding of its own, split over TP like the target's. Before vLLM
// 0.17 (#34385) each layer's shared_head.head stayed the draft's own.
Drafter mtp_drafter(ModelSpec& m, std::int64_t pipeline_stages, bool shares_head) {
  if (m.mtp_layers.empty() && m.mtp_linears.empty()) {
    throw InputError(fmt::format("--speculative-config method mtp: {} has no MTP / next-n layers in its config "
                                 "(num_nextn_predict_layers or the family's own key)",
                                 m.source));
  }
  Drafter d;
  d.method = "mtp";
  d.source = m.source;
  d.in_target_checkpoint = true;
  d.layers = std::move(m.mtp_layers);
  d.linears = std::move(m.mtp_linears);
  bool own_embedding = pipeline_stages > 1;
  for (auto& t : m.mtp_tensors) {
    if (own_embedding && t.component == Component::kEmbedding) {
      d.vocab_tables.push_back(std::move(t));
      own_embedding = false;
    } else if (!shares_head && t.component == Component::kLmHead) {
      d.vocab_tables.push_back(std::move(t));
    } else {
      (is_vocabulary_table(t) ? d.shared_with_target : d.tensors).push_back(std::move(t));
    }
  }
  m.mtp_layers.clear();
  m.mtp_linears.clear();
  m.mtp_tensors.clear();
  m.skipped_mtp_layers = 0;
  return d;
}

}  // namespace

bool deployment_rebuilds_model(const Deployment& d) {
  return d.dtype != ModelDtypeChoice::kAuto || d.quantization != OnlineQuantization::kNone || d.language_model_only ||
         d.mm_encoder_tp_mode != EncoderTpMode::kWeights || d.speculative.method != SpeculativeMethod::kNone;
}

ModelSpec model_as_served(const ModelSpec& checkpoint, const Deployment& d, const SpeculativeRules& rules) {
  const SpeculativeMethod method = d.speculative.method;
  if (method != SpeculativeMethod::kNone &&
      (d.speculative.num_speculative_tokens < 1 || d.speculative.num_speculative_tokens > 64)) {
    throw InputError(fmt::format("--speculative-config num_speculative_tokens {}: expected from 1 to 64",
                                 d.speculative.num_speculative_tokens));
  }
  if (method == SpeculativeMethod::kEagle || method == SpeculativeMethod::kEagle3 ||
      method == SpeculativeMethod::kDraftModel || method == SpeculativeMethod::kMedusa) {
    throw InputError(fmt::format("--speculative-config method {}: a separate draft checkpoint's weights and KV layers "
                                 "are not modelled yet; gpubudget refuses rather than give a budget without the draft "
                                 "(methods modelled: mtp, ngram, ngram_gpu, suffix)",
                                 speculative_method_name(method)));
  }
  ModelSpec m = model_for_dtype(checkpoint, d.dtype);
  check_online_quantization(m, d.quantization);
  if (d.quantization == OnlineQuantization::kFp8 && m.quantization.method.empty()) quantize_online_fp8(m);
  if (d.language_model_only) {
    m.vision.reset();  // _mark_tower_model: the tower is a missing stage; no weights, no encoder profile
  } else if (d.mm_encoder_tp_mode == EncoderTpMode::kData && m.vision && m.vision->supports_encoder_tp_data) {
    for (auto& l : m.vision->linears) l.parallelism = Parallelism::kReplicated;
    m.vision->profile.replicated = true;
  }
  if (d.speculative.method == SpeculativeMethod::kMtp) {
    if (d.speculative.draft_tensor_parallel_size && *d.speculative.draft_tensor_parallel_size != d.tensor_parallel_size) {
      throw InputError(fmt::format("--speculative-config draft_tensor_parallel_size {}: MTP layers run with the "
                                   "target's --tensor-parallel-size {} in vLLM",
                                   *d.speculative.draft_tensor_parallel_size, d.tensor_parallel_size));
    }
    Drafter drafter = mtp_drafter(m, d.pipeline_parallel_size, rules.mtp_shares_head);
    if (d.quantization == OnlineQuantization::kFp8 && checkpoint.quantization.method.empty()) {
      ModelSpec layers_only;
      layers_only.layers = std::move(drafter.layers);
      quantize_online_fp8(layers_only);
      drafter.layers = std::move(layers_only.layers);
    }
    m.drafter = std::move(drafter);
  }
  return m;
}

}  // namespace gpubudget
