// The JSON documents gpubudget answers with: what `gpubudget <command> --json` prints, built by the
// library so that the CLI, the C ABI and the Python module return the same text for the same question.
//
// Every function returns one document laid out with two-space indentation and a final newline; sizes
// are integer bytes; strings that are not valid UTF-8 (a folder name, a log line) have the offending
// bytes replaced by U+FFFD. docs/cli.md names every field; the fields of ../docs/cli-contract.md are fixed.
// None of them throws except std::bad_alloc.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/diagnosis.h"
#include "gpubudget/fit.h"
#include "gpubudget/plan.h"
#include "gpubudget/remedies.h"
#include "gpubudget/sweep.h"
#include "gpubudget/vllm_log.h"
#include "gpubudget/weights_report.h"

namespace gpubudget {

// What a fit was asked: the arguments fit() ran with, and the version as the user named it.
struct FitQuery {
  const ModelSpec& model;
  const std::vector<GpuSpec>& gpus;  // one, or one per pipeline stage
  const Deployment& deployment;
  const VllmProfile& profile;
  std::string vllm_version;          // as requested; "" = the profile's own version
};

// `fit --json`: the model, the resolved deployment, the binding worker's budget, the KV cache, the
// largest length and its range, the judged request, every worker, the remedies and the warnings.
std::string fit_json(const FitQuery& query, const FitResult& result, const std::vector<Remedy>& remedies);

// `weights --json`.
std::string weights_json(const WeightsReport& report);

// `sweep --format json`: one element per row; `target_len` is the length the concurrency column is
// for; `vllm_version` the version the rows reproduce (as requested, or the profile's).
std::string sweep_json(const ModelSpec& model, const std::vector<SweepRow>& rows, std::int64_t target_len,
                       const std::string& vllm_version);

// `plan --json`: one element per GPU, cheapest first.
std::string plan_json(const std::vector<PlanAnswer>& answers);

// `diagnose --json`.
std::string diagnosis_json(const VllmLogFacts& facts, const Diagnosis& diagnosis);

// `gpus --json`: every preset.
std::string gpus_json(const std::vector<GpuSpec>& presets);

// `models --json`: the bundled model ids, sorted.
std::string models_json(const std::vector<std::string>& ids);

}  // namespace gpubudget
