// Estimates of what vLLM measures at startup and charges to the budget besides weights and KV:
// the profile run's activation peak, the non-torch increase and (from vLLM 0.20) CUDA-graph memory.
//
// These are estimates, not reproductions: the coefficients come from the version profile and were
// fitted on real vLLM logs (docs/methodology.md §Overheads, tests/data/observations).
#pragma once

#include <cstdint>

#include "gpubudget/bytes.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

struct SchedulerLimits {
  std::int64_t max_num_batched_tokens = 0;  // T: tokens in the profile run's forward pass
  std::int64_t max_num_seqs = 0;            // S
  bool defaulted = false;                   // true when taken from the version's defaults
  std::int64_t max_model_len = 0;           // L the engine starts with (sizes sparse-attention workspaces)
};

// The profile run's multimodal encoder pass (first pipeline stage of a model with a vision tower).
struct EncoderProfileEstimate {
  bool video = false;        // the profiled item is the dummy video (more tokens than the largest image)
  std::int64_t items = 0;    // largest-size images (or videos) profiled together
  std::int64_t tokens = 0;   // language-model tokens they produce
  std::int64_t patches = 0;  // ViT patches they are cut into
  Bytes pass;                // peak while the encoder runs (activations, pixel values, outputs)
  Bytes cached_outputs;      // outputs kept in the encoder cache through the text-model run
};

struct OverheadEstimate {
  Bytes sampler;         // dummy sampler run on [min(T, S), vocab] logits (last PP stage only)
  // With speculative decoding (last PP stage only): the rejection sampler's dummy run, mechanism-derived
  // (SpeculativeRules), and the drafter's dummy pass over the T tokens: one of its layers at a time plus
  // the target's hidden states it is fed (three more for EAGLE-3's auxiliary layers). Zero without.
  Bytes rejection_sampler;
  Bytes drafter_pass;
  Bytes forward;         // forward pass of T tokens through one layer at a time
  EncoderProfileEstimate encoder;
  // The model's profile-run workspace (ModelSpec::profile_workspace): the largest reservation, kept
  // for the rest of the run, and the transient buffer allocated beside it during the forward pass.
  Bytes workspace;
  Bytes workspace_transient;
  // bitsandbytes NF4 (online --quantization bitsandbytes): the largest weight the forward pass rebuilds
  // in the model dtype at once (a dense shard, or a MoE layer's local experts), beside its activations.
  Bytes dequantized_weights;
  // max(encoder.pass, max(sampler, rejection_sampler, forward + workspace_transient + dequantized_weights,
  // drafter_pass) +
  // encoder.cached_outputs) + workspace: the encoder runs first and its outputs stay cached; the forward
  // pass, the drafter's pass and the samplers do not overlap in time; the workspace, once reserved, stays.
  Bytes activation_peak;
  Bytes non_torch;
  Bytes cudagraph;       // estimated graph memory (charged only when the profile says so): base +
                         // per_layer x (layers x extra graphs + drafter layers x extra piecewise graphs)
                         // / kReferenceExtraCudaGraphs
  bool cudagraph_charged = false;
  double relative_uncertainty = 0;

  // What the KV budget loses to the estimated terms: activation peak + non-torch, plus the graphs when
  // charged. relative_uncertainty is a fraction of this.
  [[nodiscard]] Bytes charged() const { return activation_peak + non_torch + (cudagraph_charged ? cudagraph : Bytes(0)); }
};

// The overhead uncertainty of a family no observation calibrated (ModelSpec::overheads_caveat) is this
// multiple of the profile's. Three: the one DeepSeek-V4 startup log (observation vo-007) left 4.3 GiB
// less for the KV cache than predicted, 70% of the predicted overheads (docs/accuracy.md).
inline constexpr double kUncalibratedOverheadFactor = 3.0;

// The CUDA graphs beyond each mode's first that the graph coefficients are calibrated for: vLLM's
// default FULL_AND_PIECEWISE capture with max_num_seqs >= 256 (51 piecewise sizes 1..512 and 51 full
// decode sizes). The per-layer part of the graph estimate scales with the deployment's count over this,
// as vLLM's own estimate extrapolates: first capture + per-graph increase x (graphs - 1) per mode
// (GPUModelRunner.profile_cudagraph_memory, vLLM 0.20+).
inline constexpr std::int64_t kReferenceExtraCudaGraphs = 100;

// The graphs captured beyond each mode's first (detail::CudaGraphChoice): all modes, and PIECEWISE alone,
// whose captures run the drafter's layers too (_dummy_run drafts with CUDA graphs in PIECEWISE only).
struct ExtraCudaGraphs {
  std::int64_t all = kReferenceExtraCudaGraphs;
  std::int64_t piecewise = kReferenceExtraCudaGraphs / 2;
};

// `profile_encoder` false models vLLM's --skip-mm-profiling.
OverheadEstimate estimate_overheads(const ModelSpec& model, const ParallelLayout& layout,
                                    const GpuSpec& gpu, const VllmProfile& profile,
                                    const SchedulerLimits& limits, bool enforce_eager,
                                    bool profile_encoder = true, ExtraCudaGraphs graphs = {});

// The encoder pass alone (zero for a model without a vision tower); exposed for the accuracy tools.
EncoderProfileEstimate estimate_encoder_profile(const ModelSpec& model, const ParallelLayout& layout,
                                                const SchedulerLimits& limits);

}  // namespace gpubudget
