// Whether vLLM captures CUDA graphs for a deployment, from --enforce-eager, -O and --compilation-config
// cudagraph_mode (vllm/config/vllm.py: OPTIMIZATION_LEVEL_00..03, the enforce_eager override).
#pragma once

#include <string>

#include "gpubudget/deployment.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget::detail {

struct CudaGraphChoice {
  bool captured = true;  // false: no graph memory (the estimate's zero)
  // Why the graph estimate (fitted on FULL_AND_PIECEWISE captures) may not hold; "" when it does.
  std::string caveat;
};

CudaGraphChoice cuda_graph_choice(const Deployment& deployment, const VllmProfile& profile);

}  // namespace gpubudget::detail
