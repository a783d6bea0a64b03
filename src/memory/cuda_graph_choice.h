// Which CUDA graphs vLLM captures for a deployment: whether any (--enforce-eager, -O, --compilation-config
// cudagraph_mode; vllm/config/vllm.py OPTIMIZATION_LEVEL_00..03 and the enforce_eager override), the
// capture sizes (VllmConfig._set_cudagraph_sizes, CompilationConfig.adjust_cudagraph_sizes_for_spec_decode)
// and the graphs per mode (GPUModelRunner.profile_cudagraph_memory's counts). docs/methodology.md §6.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/deployment.h"
#include "gpubudget/notice.h"
#include "gpubudget/overheads.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

struct CudaGraphChoice {
  bool captured = true;  // false: no graph memory (the estimate's zero)
  // Why the graph estimate may not hold; "" when it does.
  std::optional<Notice> caveat;
  std::vector<std::int64_t> capture_sizes;  // ascending, in tokens; empty when nothing is captured
  std::int64_t piecewise_graphs = 0;        // PIECEWISE captures: one per size
  std::int64_t full_graphs = 0;             // FULL captures: uniform-decode sizes (every size in FULL mode)
  // Graphs beyond each mode's first: what the per-layer part of the estimate scales with
  // (kReferenceExtraCudaGraphs is the calibrated case).
  [[nodiscard]] std::int64_t extra_graphs() const;
};

// Throws InputError for sizes outside 1..2^20, more than 4096 of them, or a --max-cudagraph-capture-size
// other than the list's largest (vLLM's ValueError "should be consistent with the max value").
// `limits` gives S and T; `num_speculative_tokens` k (uniform decode batches of 1 + k tokens).
CudaGraphChoice cuda_graph_choice(const Deployment& deployment, const VllmProfile& profile,
                                  const SchedulerLimits& limits, std::int64_t num_speculative_tokens);

}  // namespace gpubudget::detail
