// The --max-model-len that `fit --vllm-args` launches with: the length that fits, kept a margin below
// the edge gpubudget computes, because that edge rests on estimated overheads (activation peak,
// non-torch memory, CUDA graphs) that real startups scatter around.
#pragma once

#include <cstdint>
#include <string>

#include "gpubudget/fit.h"

namespace gpubudget::cli {

// The default --safety-margin, in percent of the length.
inline constexpr double kDefaultSafetyMarginPercent = 5.0;
inline constexpr double kMaxSafetyMarginPercent = 50.0;

struct LaunchLength {
  std::int64_t max_model_len = 0;  // 0: nothing fits, so no launch line is printed
  std::string note;                // why the length is below the judged one ("" when it is not)
};

// Contract, for a fit result `r` and a margin in percent (0 to kMaxSafetyMarginPercent):
// - nothing fits (r.max_model_len == 0) or vLLM would not start: 0, with the reason in `note`;
// - the judged length fits with its KV need at most (100 - margin)% of the binding worker's KV budget:
//   the judged length, unchanged;
// - otherwise (the judged length does not fit, or only within the margin): the length that fits
//   (r.max_model_len), lowered by the margin and rounded down to a multiple of 256 tokens (16 below
//   4,096), never below one block; `note` names the edge and the margin. A margin of 0 gives the edge.
LaunchLength launch_length(const FitResult& r, double margin_percent);

}  // namespace gpubudget::cli
