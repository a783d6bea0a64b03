// The sweep as an SVG bar chart: one bar per configuration, its length the largest --max-model-len
// that fits, a dashed line at the model's maximum; refused combinations listed with their reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/sweep.h"

namespace gpubudget::cli {

struct SweepChart {
  std::string title;
  std::int64_t model_max = 0;
  std::vector<std::string> labels;  // one per row
  std::vector<std::string> notes;   // one per row: "" or a short reason / caveat
};

std::string sweep_svg(const SweepChart& chart, const std::vector<SweepRow>& rows);

}  // namespace gpubudget::cli
