// The accuracy report (docs/accuracy.md) as Markdown, from replayed observations.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/calibrate.h"

namespace gpubudget {

// `rows` in sample (the shipped profiles); `by_model` and `by_gpu` the same rows predicted out of
// sample (out_of_sample.h: coefficients fitted without the row's model, or without its GPU kind).
std::string accuracy_markdown(const std::vector<ReplayRow>& rows, const std::vector<ReplayRow>& by_model,
                              const std::vector<ReplayRow>& by_gpu);

}  // namespace gpubudget
