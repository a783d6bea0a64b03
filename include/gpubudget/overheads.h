// Estimates of what vLLM measures at startup and charges to the budget besides weights and KV:
// the profile run's activation peak, the non-torch increase and (from vLLM 0.21) CUDA-graph memory.
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
};

struct OverheadEstimate {
  Bytes sampler;         // dummy sampler run on [min(T, S), vocab] logits (last PP stage only)
  Bytes forward;         // forward pass of T tokens through one layer at a time
  Bytes activation_peak; // max(sampler, forward): they do not overlap in time
  Bytes non_torch;
  Bytes cudagraph;       // estimated graph memory (charged only when the profile says so)
  bool cudagraph_charged = false;
  double relative_uncertainty = 0;
};

OverheadEstimate estimate_overheads(const ModelSpec& model, const ParallelLayout& layout,
                                    const GpuSpec& gpu, const VllmProfile& profile,
                                    const SchedulerLimits& limits, bool enforce_eager);

}  // namespace gpubudget
