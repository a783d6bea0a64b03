// The smallest deployments that serve a given load: C concurrent requests of L tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/fit.h"

namespace gpubudget {

// The most concurrent requests and pipeline stages a plan considers (InputError beyond them).
inline constexpr std::int64_t kMaxPlanConcurrency = std::int64_t{1} << 20;  // as --max-num-seqs
inline constexpr std::int64_t kMaxPlanPipeline = 1024;                      // as --pipeline-parallel-size

struct PlanRequest {
  std::int64_t max_model_len = 0;  // L: --max-model-len of the deployment
  std::int64_t concurrency = 1;    // C: requests of L tokens held in the KV cache at once
  // Layouts tried, as vLLM's docs recommend deploying: TP within a node (these sizes, at most
  // gpus_per_node), and pipeline stages across nodes — PP > 1 only with whole nodes per stage
  // (TP = gpus_per_node), up to max_pipeline stages. Each TP x PP layout is tried plain, then, when
  // only the KV cache is short and the TP group duplicates the KV (MLA, or TP above the KV heads),
  // with the smallest decode context parallelism that serves, then (MoE models) the same with
  // expert parallelism.
  std::vector<std::int64_t> tensor_parallel = {1, 2, 4, 8};
  std::int64_t max_pipeline = 8;
  std::int64_t gpus_per_node = 8;
};

struct PlanAnswer {
  std::string gpu;
  bool found = false;
  std::string why_not;        // when nothing up to the largest layout works
  // TP, PP, DCP, expert parallelism; max_model_len = L, max_num_seqs raised to C if needed.
  Deployment deployment;
  std::int64_t gpus = 0;      // TP x PP (DCP and EP use the TP group's GPUs)
  double concurrency = 0;     // vLLM's "Maximum concurrency" at L
  std::int64_t max_model_len = 0;  // largest length that fits in that layout (>= L)
  Bytes weights_per_gpu;
  Bytes kv_cache_per_gpu;
  // The layouts tried before the answer (or all, when none serves), cheapest first, each with why it
  // does not serve: "TP 8 alone: holds 0.41 requests of 65536 tokens (16 needed); MLA's latent KV is
  // replicated on all 8 ranks", "TP 8 + DCP 2: ...", "TP 8 x PP 2 + EP: ...".
  std::vector<std::string> rejected_layouts;
};

// True when `deployment` on `gpu` starts and holds `request.concurrency` requests of
// `request.max_model_len` tokens (fit() fits, vLLM would start, concurrency >= C). `used` receives
// the deployment evaluated (max_model_len = L; max_num_seqs raised to C when vLLM's default is lower).
// A deployment vLLM would refuse returns false (never throws).
// `why_not` receives the reason when it does not serve.
bool serves(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment, const VllmProfile& profile,
            const PlanRequest& request, FitResult* result = nullptr, Deployment* used = nullptr,
            std::string* why_not = nullptr);

// For each GPU, the node-shaped layout (PlanRequest) with the fewest GPUs that serves the request, the
// simplest variant first (plain, + DCP, + EP). Answers are ordered cheapest first: found before not
// found, then by GPU count, then by total GPU memory. Layouts vLLM would refuse are skipped, not thrown; a GPU where nothing up to TP
// max(tensor_parallel) × PP max_pipeline works is an answer with `found` false and `why_not`. Throws
// InputError when the request is beyond kMaxPlanConcurrency, kMaxPlanPipeline or a length of 2^34,
// names no TP size in [1, 1024], or gpus_per_node is outside [1, 1024].
std::vector<PlanAnswer> plan_deployments(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                         const Deployment& base, const VllmProfile& profile,
                                         const PlanRequest& request);

}  // namespace gpubudget
