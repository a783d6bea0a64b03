// Rendering a FitResult: the fixed JSON document of docs/cli.md, or a human-readable budget.
#pragma once

#include <ostream>
#include <string>

#include "gpubudget/fit.h"
#include "gpubudget/remedies.h"

namespace gpubudget::cli {

struct ReportContext {
  const ModelSpec& model;
  const GpuSpec& gpu;
  const Deployment& deployment;
  const VllmProfile& profile;
  std::string vllm_version;  // as requested (or the profile's, when not given)
  std::vector<Remedy> remedies;  // when the judged length does not fit
};

void write_fit_json(const ReportContext& context, const FitResult& result, std::ostream& out);
// `explanations` (explain_fit) are printed after the report when not empty (`--explain`).
void write_fit_text(const ReportContext& context, const FitResult& result,
                    const std::vector<Explanation>& explanations, std::ostream& out);

}  // namespace gpubudget::cli
