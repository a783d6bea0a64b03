// The sweep as an SVG chart, one row per configuration: a bar of the KV cache in tokens (vLLM's
// "GPU KV cache size"), a bar of the requests of the target length it holds at once, and the largest
// --max-model-len that fits as a figure. A refused or non-starting row is a grey band with its whole
// reason written across the bars (wrapped, never cut).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/sweep.h"

namespace gpubudget::cli {

struct SweepChart {
  std::string title;
  std::int64_t model_max = 0;       // the model's own maximum length (tokens)
  std::int64_t target_len = 0;      // the length the concurrency is for (tokens; > 0)
  std::vector<std::string> labels;  // one per row
  std::vector<std::string> notes;   // one per row: "" or why the row has no KV cache (refused, no start)
};

std::string sweep_svg(const SweepChart& chart, const std::vector<SweepRow>& rows);

}  // namespace gpubudget::cli
