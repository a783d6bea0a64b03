#include "cuda_graph_choice.h"

#include <fmt/format.h>

namespace gpubudget::detail {

CudaGraphChoice cuda_graph_choice(const Deployment& d, const VllmProfile& profile) {
  CudaGraphChoice out;
  // VllmConfig.__post_init__: enforce_eager sets cudagraph_mode NONE whatever else was asked.
  if (d.enforce_eager) {
    out.captured = false;
    return out;
  }
  std::string mode = d.cudagraph_mode;  // an explicit -cc value wins over the level's default
  if (d.optimization_level && !profile.optimization_levels) {
    out.caveat = fmt::format("-O{}: vLLM {} reads -O as the torch.compile level, whose effect on CUDA graphs is not "
                             "modelled; the graph estimate is the default capture's",
                             *d.optimization_level, profile.version);
  } else if (d.optimization_level && mode.empty()) {
    // OPTIMIZATION_LEVEL_00: mode NONE, cudagraph_mode NONE; _01: PIECEWISE; _02 / _03: FULL_AND_PIECEWISE.
    mode = *d.optimization_level == 0 ? "NONE" : *d.optimization_level == 1 ? "PIECEWISE" : "";
  }
  if (mode == "NONE") {
    out.captured = false;
  } else if (!mode.empty() && mode != "FULL_AND_PIECEWISE") {
    out.caveat = fmt::format("CUDA graph mode {}: the graph estimate is fitted on vLLM's default FULL_AND_PIECEWISE "
                             "captures and is kept as it is (other modes capture fewer graphs: likely an overestimate)",
                             mode);
  }
  return out;
}

}  // namespace gpubudget::detail
