// Startup-overhead estimates (docs/methodology.md §Overheads). vLLM measures these on the GPU
// (Worker.determine_available_memory); gpubudget models them from what the profile run does:
//  - GPUModelRunner.profile_run pushes T = max_num_batched_tokens tokens through the model, one
//    layer at a time, then runs the sampler on min(T, max_num_seqs) rows of vocabulary logits;
//  - with speculative decoding the drafter's dummy pass follows the forward pass, and the rejection
//    sampler's dummy run the sampler's;
//  - non-torch memory grows by NCCL / custom all-reduce buffers when several GPUs talk;
//  - from vLLM 0.20 the CUDA-graph estimate is subtracted from the budget as well.
#include "gpubudget/overheads.h"

#include "gpubudget/weights.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpubudget {

namespace {

// Widest per-token activation (elements) of any layer on the worker: the MLP's gate/up output plus
// its activated half for dense layers; top-k copies of the hidden state and of the expert
// intermediate for fused MoE (intermediate caches of fused_moe).
std::int64_t widest_activation(const ModelSpec& model, const std::vector<LayerSpec>& layers, std::int64_t first,
                               std::int64_t end, const ParallelLayout& layout) {
  std::int64_t widest = model.hidden_size;
  for (std::int64_t i = first; i < end; ++i) {
    const LayerSpec& layer = layers[static_cast<std::size_t>(i)];
    for (const auto& m : layer.linears) {
      if (m.component != Component::kDenseMlp || m.parallelism != Parallelism::kColumn) continue;
      std::int64_t out = 0;
      for (const auto o : m.output_sizes) out += o;
      widest = std::max(widest, out / layout.tp + out / layout.tp / 2);
    }
    for (const auto& e : layer.experts) {
      const std::int64_t local_I = e.intermediate_size / layout.moe_tp;
      widest = std::max(widest, model.num_experts_per_token * (e.hidden_size + 3 * local_I));
    }
  }
  return widest;
}

std::int64_t widest_activation(const ModelSpec& model, const ParallelLayout& layout) {
  return widest_activation(model, model.layers, layout.first_layer, layout.end_layer, layout);
}

Bytes scaled(double bytes) { return bytes_from_double(std::round(bytes)); }

// bitsandbytes NF4 weights are rebuilt in the model dtype to be multiplied: apply_bnb_4bit's
// matmul_4bit dequantizes one on-disk shard at a time for a batch of more than one token, and
// BitsAndBytesMoEMethod dequantizes a layer's whole w13 and w2 before its experts run
// (layers/quantization/bitsandbytes.py). The largest such copy on the worker, in bytes; 0 without NF4.
Bytes dequantized_nf4_bytes(const ModelSpec& model, const ParallelLayout& layout) {
  const std::int64_t e = element_bytes(model.dtype);
  std::int64_t largest = 0;
  for (std::int64_t i = layout.first_layer; i < layout.end_layer; ++i) {
    const LayerSpec& layer = model.layers[static_cast<std::size_t>(i)];
    for (const auto& m : layer.linears) {
      if (m.format.kind != QuantKind::kBnbNf4) continue;
      const bool row = m.parallelism == Parallelism::kRow;
      const std::int64_t in = row ? m.input_size / layout.tp : m.input_size;
      for (std::size_t s = 0; s < m.output_sizes.size(); ++s) {
        largest = std::max(largest, local_shard_rows(m, layout.tp, s) * in * e);
      }
    }
    for (const auto& x : layer.experts) {
      if (x.format.kind != QuantKind::kBnbNf4) continue;
      const std::int64_t local_experts =
          layout.moe_ep > 1 ? (x.num_experts + layout.redundant_experts + layout.moe_ep - 1) / layout.moe_ep
                            : x.num_experts;
      const std::int64_t I = x.intermediate_size / layout.moe_tp;
      largest = std::max(largest, local_experts * ((x.gated ? 2 : 1) + 1) * I * x.hidden_size * e);
    }
  }
  return Bytes(largest);
}

// GPUModelRunner._dummy_run: after the target's forward pass the drafter's dummy_run pushes the same T
// tokens through its own layers (num_speculative_tokens passes one after the other, so the peak is one
// pass) while the target's output hidden states [T, H] (and EAGLE-3's three auxiliary hidden states)
// stay referenced. Its layers' activation follows the target's forward model.
Bytes drafter_pass_bytes(const ModelSpec& model, const ParallelLayout& layout, const VllmProfile& profile,
                         const SchedulerLimits& limits) {
  if (!model.drafter) return Bytes(0);
  const auto& profiled = profile.speculative.profiled_drafters;
  if (std::find(profiled.begin(), profiled.end(), model.drafter->method) == profiled.end()) return Bytes(0);
  const Drafter& drafter = *model.drafter;
  const double e = static_cast<double>(element_bytes(model.dtype));
  const double tokens = static_cast<double>(limits.max_num_batched_tokens);
  const std::int64_t widest =
      widest_activation(model, drafter.layers, 0, static_cast<std::int64_t>(drafter.layers.size()), layout);
  const double kept_hidden_states = drafter.method == "eagle3" ? 4.0 : 1.0;
  return scaled(profile.overheads.forward_activation_factor * tokens * static_cast<double>(widest) * e +
                kept_hidden_states * tokens * static_cast<double>(model.hidden_size) * e);
}

}  // namespace

// Tokens of the Qwen2-VL family's dummy video (get_num_frames_with_most_features, _get_vision_info):
// the largest image over the most frames whose tokens fit max_model_len (at least 1, at most the cap);
// frames are padded to whole temporal patches.
namespace {

std::int64_t dummy_video_tokens(const EncoderProfileShape& s, std::int64_t max_model_len) {
  const auto tokens = [&](std::int64_t frames) {
    return std::max<std::int64_t>((frames + frames % s.temporal_patch) / s.temporal_patch, 1) * s.max_tokens_per_item;
  };
  std::int64_t frames = 1;
  while (frames < s.video_max_frames && tokens(frames + 1) <= max_model_len) ++frames;
  return tokens(frames);
}

}  // namespace

// GPUModelRunner.profile_run, multimodal branch: only the modality with the most tokens per item is
// profiled (MultiModalBudget.get_modality_with_max_tokens; a tie goes to "video"); the encoder budget
// is max(T, tokens of one such item); that many tokens' worth of items (at least one, at most S) go
// through the ViT in one batch, and their outputs stay in the encoder cache while the text model is
// profiled.
// Live elements per patch inside a ViT block (q/k/v, fc1 sharded over TP; residual and norm output
// whole): attention 2d + 6d/tp (q, k, v, rotated q and k, output), MLP 2d + 2I/tp (3I/tp gated); a
// replicated tower (Gemma 4's) holds them whole (tp = 1).
// Pixel values arrive in fp32 from the processor and are cast to the model dtype.
EncoderProfileEstimate estimate_encoder_profile(const ModelSpec& model, const ParallelLayout& layout,
                                                const SchedulerLimits& limits) {
  EncoderProfileEstimate out;
  if (!model.vision || !layout.is_first_stage()) return out;
  const EncoderProfileShape& s = model.vision->profile;
  if (s.max_tokens_per_item <= 0) return out;
  const std::int64_t image_tokens = s.image_profiled ? s.max_tokens_per_item : 0;
  const std::int64_t video_tokens = s.video_max_frames > 0 ? dummy_video_tokens(s, limits.max_model_len) : 0;
  out.video = video_tokens >= image_tokens;
  const std::int64_t item_tokens = std::max(image_tokens, video_tokens);
  if (item_tokens <= 0) return out;
  const std::int64_t budget = std::max(limits.max_num_batched_tokens, item_tokens);
  out.items = std::clamp<std::int64_t>(budget / item_tokens, 1, std::max<std::int64_t>(limits.max_num_seqs, 1));
  out.tokens = out.items * item_tokens;
  out.patches = out.tokens * s.patches_per_token;
  const std::int64_t tp = s.replicated ? 1 : layout.tp;
  const std::int64_t attention = 2 * s.hidden + 6 * s.hidden / tp;
  const std::int64_t mlp = 2 * s.hidden + (s.gated_mlp ? 3 : 2) * s.mlp_intermediate / tp;
  const double e = static_cast<double>(element_bytes(model.dtype));
  const double patches = static_cast<double>(out.patches);
  const double outputs = static_cast<double>(out.tokens) * static_cast<double>(s.output_width) * e;
  out.cached_outputs = scaled(outputs);
  out.pass = scaled(patches * static_cast<double>(std::max(attention, mlp)) * e +
                    patches * static_cast<double>(s.values_per_patch) * (4.0 + e) + outputs);
  return out;
}

OverheadEstimate estimate_overheads(const ModelSpec& model, const ParallelLayout& layout, const GpuSpec& gpu,
                                    const VllmProfile& profile, const SchedulerLimits& limits, bool enforce_eager,
                                    bool profile_encoder, ExtraCudaGraphs graphs) {
  const OverheadModel& c = profile.overheads;
  OverheadEstimate out;
  const std::int64_t rows = std::min(limits.max_num_batched_tokens, limits.max_num_seqs);
  if (layout.is_last_stage()) {
    out.sampler = scaled(c.sampler_bytes_per_logit * static_cast<double>(rows) * static_cast<double>(model.vocab_size));
  }
  if (layout.is_last_stage() && model.num_speculative_tokens > 0) {
    // _dummy_sampler_run: one draft token per request whatever num_speculative_tokens is.
    const SpeculativeRules& sp = profile.speculative;
    out.rejection_sampler = Bytes(rows * model.vocab_size *
                                  (sp.rejection_logit_copies * element_bytes(model.dtype) + sp.rejection_fp32_bytes));
    out.drafter_pass = drafter_pass_bytes(model, layout, profile, limits);
  }
  const double activation_bytes = static_cast<double>(element_bytes(model.dtype));
  out.forward = scaled(c.forward_activation_factor * static_cast<double>(limits.max_num_batched_tokens) *
                       static_cast<double>(widest_activation(model, layout)) * activation_bytes);
  if (profile_encoder) out.encoder = estimate_encoder_profile(model, layout, limits);
  for (const auto& w : model.profile_workspace) {
    out.workspace = std::max(out.workspace, w.bytes(limits.max_model_len, limits.max_num_batched_tokens));
  }
  if (!model.profile_workspace.empty()) out.workspace_transient = model.profile_workspace_transient;
  out.dequantized_weights = dequantized_nf4_bytes(model, layout);
  out.activation_peak =
      std::max(out.encoder.pass, std::max({out.sampler, out.rejection_sampler,
                                           out.forward + out.workspace_transient + out.dequantized_weights,
                                           out.drafter_pass}) +
                                     out.encoder.cached_outputs) +
      out.workspace;

  // The tensor-parallel group's communicators (NCCL, custom all-reduce) hold the buffers; pipeline
  // stages alone add next to nothing (observations vo-067/068: TP 1 with PP 2 and 4 log 0.07 GiB).
  const bool single_gpu = layout.tp == 1;
  out.non_torch = single_gpu ? c.non_torch_single_gpu
                             : (gpu.nvlink ? c.non_torch_multi_nvlink : c.non_torch_multi_pcie);

  if (!enforce_eager) {
    // The per-layer part is the graphs after each mode's first: each adds its layers' kernel nodes. The
    // drafter (last stage) runs inside every PIECEWISE capture, so its layers count there too.
    const double layers = static_cast<double>(layout.end_layer - layout.first_layer);
    const double drafter_layers =
        layout.is_last_stage() && model.drafter ? static_cast<double>(model.drafter->layers.size()) : 0.0;
    const double layer_graphs = layers * static_cast<double>(std::max<std::int64_t>(graphs.all, 0)) +
                                drafter_layers * static_cast<double>(std::max<std::int64_t>(graphs.piecewise, 0));
    out.cudagraph = c.cudagraph_base + scaled(static_cast<double>(c.cudagraph_per_layer.count()) * layer_graphs /
                                              static_cast<double>(kReferenceExtraCudaGraphs));
  }
  out.cudagraph_charged = profile.charges_cudagraph_memory && !enforce_eager;
  out.relative_uncertainty = c.relative_uncertainty * (model.overheads_caveat.empty() ? 1.0 : kUncalibratedOverheadFactor);
  return out;
}

}  // namespace gpubudget
