// Many deployments of one model at once: every combination of the listed GPUs and settings, each
// evaluated with fit(). Combinations vLLM would refuse are rows with the reason, not errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/fit.h"

namespace gpubudget {

// The most combinations one sweep evaluates (InputError beyond it, naming the count).
inline constexpr std::int64_t kMaxSweepScenarios = 100'000;

// One GPU at one tensor-parallel size: "4 x H200" is {h200, 4}.
struct GpuLayout {
  GpuSpec gpu;
  std::int64_t tensor_parallel_size = 1;
};

struct SweepAxes {
  std::vector<GpuSpec> gpus;                          // at least one (unless `layouts` is given)
  std::vector<std::int64_t> tensor_parallel = {1};
  // When not empty, these (GPU, TP) pairs replace the product of `gpus` and `tensor_parallel`, so
  // that "4 x H200 or 8 x H100" is one sweep of two rows (per value of the other axes).
  std::vector<GpuLayout> layouts;
  std::vector<std::int64_t> pipeline_parallel = {1};
  std::vector<std::int64_t> decode_context_parallel = {1};
  std::vector<KvCacheDtypeChoice> kv_cache_dtypes = {KvCacheDtypeChoice::kAuto};
  std::vector<std::optional<double>> utilizations = {std::nullopt};  // nullopt: the version's default
  std::vector<std::optional<std::int64_t>> max_num_seqs = {std::nullopt};
};

struct SweepRow {
  std::string gpu;
  Deployment deployment;       // the combination (base deployment with the axes applied)
  bool valid = false;          // false: vLLM would refuse it; `error` says why
  std::string error;
  std::string kv_cache_dtype;  // as resolved ("fp8_e4m3" for a checkpoint's FP8 declaration)
  std::int64_t max_model_len = 0;      // largest length that fits, up to the model's maximum
  std::int64_t kv_cache_tokens = 0;    // "GPU KV cache size" at the model's maximum length
  double concurrency_at_target = 0;    // requests of `target_len` tokens the KV cache holds
  Bytes weights_per_gpu;               // binding worker
  Bytes kv_cache_per_gpu;              // binding worker
  bool starts = true;                  // false when vLLM would not start (FitResult::vllm_would_start)
  std::string start_blocker;           // why not, when `starts` is false (FitResult::start_blocker)
  Bytes gpu_memory;                    // the GPU's CUDA-visible total
  double gpu_memory_utilization = 0;   // as resolved (valid rows)
  std::int64_t block_size = 0;         // as resolved (valid rows)
  std::vector<Notice> warnings;
};

// Rows in axis order: GPU, then TP, PP, DCP, KV dtype, utilization, max_num_seqs (the last varies
// fastest). `target_len` (> 0) sets the length the concurrency column is computed for; 0 uses the
// model's maximum. Each row equals fit() of its deployment alone (weights are computed once per
// layout). A combination vLLM would refuse is a row with `valid` false and the reason; the only throws
// are InputError for an empty axis or more than kMaxSweepScenarios combinations. Thread-safe for
// distinct calls (no shared state).
std::vector<SweepRow> run_sweep(const ModelSpec& model, const SweepAxes& axes, const Deployment& base,
                                const VllmProfile& profile, std::int64_t target_len);

}  // namespace gpubudget
