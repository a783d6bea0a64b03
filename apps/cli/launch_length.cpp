#include "launch_length.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpubudget::cli {

namespace {

std::int64_t round_down_friendly(std::int64_t tokens) {
  const std::int64_t step = tokens >= 4096 ? 256 : 16;
  return tokens / step * step;
}

}  // namespace

LaunchLength launch_length(const FitResult& r, double margin_percent) {
  if (!r.vllm_would_start) return {0, "vLLM would not start this deployment: " + r.start_blocker};
  if (r.max_model_len == 0) return {0, "no length fits: " + r.vllm_error};
  const double keep = 1.0 - margin_percent / 100.0;
  const WorkerBudget& binding = r.binding_worker();
  const double budget = static_cast<double>(binding.check_memory.count());
  if (r.fits && static_cast<double>(r.needed.count()) <= keep * budget) return {r.judged_max_model_len, ""};
  const std::int64_t edge = r.max_model_len;
  if (margin_percent <= 0) return {edge, ""};
  const std::int64_t lowered = static_cast<std::int64_t>(std::floor(static_cast<double>(edge) * keep));
  const std::int64_t length = std::min(edge, std::max(r.block_size, round_down_friendly(lowered)));
  if (length == edge) return {edge, ""};
  return {length, fmt::format("--max-model-len {} is {:g}% below the largest length gpubudget computes ({}), "
                              "because the overheads it rests on are estimates; --safety-margin 0 prints the edge",
                              length, margin_percent, edge)};
}

}  // namespace gpubudget::cli
