// fit(): the per-GPU budget and the largest --max-model-len, as vLLM would decide at startup.
//
//   requested  = ceil(total × gpu_memory_utilization)                      (request_memory)
//   kv_cache   = requested − weights − activation_peak − non_torch − cudagraph(if charged)
//   fits(M)    ⇔ Σ layers cdiv(M', B)·page ≤ kv_cache on every worker     (_check_enough_kv_cache_memory)
//   max_model_len = min over workers of the binary search                 (estimate_max_model_len)
// See docs/methodology.md for each step and its vLLM source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/kv_cache.h"
#include "gpubudget/mamba_state.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/notice.h"
#include "gpubudget/overheads.h"
#include "gpubudget/served_model.h"  // model_for_dtype, model_as_served
#include "gpubudget/vllm_profile.h"
#include "gpubudget/weights.h"

namespace gpubudget {

// The generic path (a model sized from its safetensors headers, ModelSpec::generic_assumptions) runs on
// vLLM's Transformers backend, whose activation peak no coefficient was fitted on and whose sharding
// is assumed from module names: its length range multiplies the overhead uncertainty by this factor
// and adds this fraction of the weights on either side (docs/methodology.md §Generic).
inline constexpr double kGenericOverheadUncertaintyFactor = 2.0;
inline constexpr double kGenericWeightsUncertainty = 0.02;

// The budget of one GPU worker (one pipeline stage; all TP ranks of a stage are alike).
struct WorkerBudget {
  std::int64_t pp_rank = 0;
  std::string gpu;  // the stage's GPU preset name
  std::int64_t first_layer = 0;
  std::int64_t end_layer = 0;
  Bytes requested;
  WeightsBreakdown weights;
  OverheadEstimate overheads;
  Bytes kv_cache;  // what vLLM logs as "Available KV cache memory"
  // What the memory check and the length search compare needs against: kv_cache, or with
  // --num-gpu-blocks-override (vLLM 0.21+) the override's blocks; before 0.16 the smallest worker's.
  Bytes check_memory;
  KvCacheLayout kv;
  std::int64_t num_blocks = 0;
  Bytes needed;                      // for the judged length
  std::int64_t max_model_len = 0;    // largest length this worker fits
};

// A formula and its inputs, for `--explain`.
struct Explanation {
  std::string figure;
  std::string formula;
  std::string value;
};

struct FitResult {
  // Resolved settings.
  double gpu_memory_utilization = 0;
  KvCacheDtype kv_cache_dtype;
  std::int64_t block_size = 0;
  std::string attention_backend;  // "" when no backend of this vLLM supports the combination
  SchedulerLimits scheduler;
  // CUDA graphs vLLM captures (0 and 0 when none): the capture sizes, PIECEWISE graphs (one per size)
  // and FULL graphs (the uniform-decode sizes; every size in FULL mode).
  std::int64_t cuda_graph_capture_sizes = 0;
  std::int64_t cuda_graphs_piecewise = 0;
  std::int64_t cuda_graphs_full = 0;
  // Hybrid (Mamba / linear-attention) models: prefix caching as resolved, the mamba_cache_mode it
  // implies and the state dtypes. prefix_caching is what vLLM decides for hybrid models only.
  bool hybrid = false;
  bool prefix_caching = true;
  MambaCacheMode mamba_cache_mode = MambaCacheMode::kNone;
  MambaStateDtypes mamba_dtypes;
  bool hybrid_kv_cache_manager = true;  // false: sliding-window / chunked layers held at full length
  // Per worker; `binding` indexes the worker with the smallest largest-length.
  std::vector<WorkerBudget> workers;
  std::size_t binding = 0;
  // The judged request.
  std::int64_t judged_max_model_len = 0;
  bool judged_is_derived = true;  // judged length is the model's own maximum (no --max-model-len)
  // --max-model-len auto: vLLM lowered the judged length to the largest that fits (auto_fitted), or
  // could not fit a single token (auto_fit_failed: it raises "Cannot auto-fit max_model_len").
  bool auto_fitted = false;
  bool auto_fit_failed = false;
  Bytes needed;  // binding worker's need for the judged length
  // The judged length passes vLLM's KV memory check on every worker (kv_fits), and vLLM would start
  // (fits = kv_fits && vllm_would_start).
  bool kv_fits = false;
  bool fits = false;
  // Results.
  std::int64_t max_model_len = 0;    // largest fitting length, capped at the judged length
  // max_model_len again with the estimated overheads (activation, non-torch, CUDA graphs) moved by
  // their relative uncertainty: the binding worker's KV budget -/+ uncertainty x overheads. Equal to
  // max_model_len when --kv-cache-memory-bytes fixes the budget.
  std::int64_t max_model_len_low = 0;
  std::int64_t max_model_len_high = 0;
  // That swing of the binding worker's KV budget, in bytes (0 when the budget is fixed): the
  // available KV memory is expected within kv_cache -/+ this on a deployment like the profile's
  // calibration rows (calibrate.h: it covers 90% of them out of sample).
  Bytes kv_budget_swing;
  std::int64_t num_blocks = 0;       // min over workers (includes vLLM's null block)
  std::int64_t kv_cache_tokens = 0;  // "GPU KV cache size: N tokens"
  // "Maximum concurrency for M tokens per request: Cx": the exact quotient; vLLM prints it "%.2f"
  // (format_two_decimals), and the JSON document gives that printed value.
  double max_concurrency = 0;
  // What vLLM would raise for this deployment ("" when it starts), in the chosen version's words.
  std::string vllm_error;
  // False when vLLM would refuse to start the deployment before it sizes the KV cache (no attention
  // backend of this version accepts the KV dtype on the GPU); `start_blocker` says why. The budget
  // is still computed, with the nearest backend, so that the figures show what the change would cost.
  bool vllm_would_start = true;
  std::string start_blocker;
  std::vector<Notice> warnings;
  std::vector<Notice> notes;  // how vLLM resolved settings (for --explain), not problems

  [[nodiscard]] const WorkerBudget& binding_worker() const { return workers[binding]; }
};

// What fit() can reuse across many deployments of one model (sweep, plan, remedies, a planner's own
// loop): each distinct parallel layout, checked once, and its weights, computed once. A layout depends
// only on TP, PP, DP, DCP, expert parallelism, redundant experts, the PP partition and the stage; the
// weights on the layout without DCP. Bound to `model`, which must outlive it; not thread-safe.
class FitMemo {
 public:
  explicit FitMemo(const ModelSpec& model);
  ~FitMemo();
  FitMemo(const FitMemo&) = delete;
  FitMemo& operator=(const FitMemo&) = delete;
  // make_parallel_layout(model(), deployment, pp_rank); a refused combination throws the same
  // InputError each time it is asked for. The reference stays valid for the memo's lifetime.
  const ParallelLayout& layout(const Deployment& deployment, std::int64_t pp_rank);
  // weights_per_gpu(model(), layout). The reference stays valid for the memo's lifetime.
  const WeightsBreakdown& weights(const ParallelLayout& layout);
  [[nodiscard]] const ModelSpec& model() const { return *model_; }

 private:
  struct Entries;  // the layouts and weights seen so far (fit.cpp)
  const ModelSpec* model_;
  std::unique_ptr<Entries> entries_;
};

// The layout of pipeline stage `pp_rank` as vLLM builds it on `gpu`: make_parallel_layout plus the
// MXFP4 MoE padding of the profile's backend for the GPU's compute capability.
ParallelLayout make_worker_layout(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment,
                                  const VllmProfile& profile, std::int64_t pp_rank);

// The KV cache of pipeline stage `pp_rank` as vLLM lays it out for this deployment on `gpu` (the KV
// dtype, backend block size, hybrid alignment and groups fit() uses), without the memory budget.
// Throws what fit() throws for these settings.
KvCacheLayout worker_kv_cache_layout(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment,
                                     const VllmProfile& profile, std::int64_t pp_rank = 0);

// Throws InputError when vLLM would refuse the deployment (TP not dividing heads, a
// --max-model-len above the derived maximum, an unknown --kv-cache-dtype, ...).
FitResult fit(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment,
              const VllmProfile& profile);
// Heterogeneous pipelines: one GPU per pipeline stage (`stage_gpus.size()` == pipeline_parallel_size,
// or 1 for all). The attention backend and scheduler defaults follow stage 0's GPU, as vLLM's engine
// decides them once; each stage's budget uses its own GPU's memory.
// `memo`, when given, is bound to `model` and supplies each stage's layout and weights (callers
// evaluating many deployments of one model pass one; the result is the same). It is not used when
// --dtype converts the model or when it is bound to another model.
FitResult fit(const ModelSpec& model, const std::vector<GpuSpec>& stage_gpus, const Deployment& deployment,
              const VllmProfile& profile, FitMemo* memo = nullptr);

// The formula and inputs behind each figure of the binding worker (`fit --explain`), in the order the
// budget is built. `result` is fit(model, stage_gpus, deployment, profile) (same arguments). Kept out of
// fit(): formatting the text costs more than computing the budget. Throws what fit() throws.
std::vector<Explanation> explain_fit(const ModelSpec& model, const std::vector<GpuSpec>& stage_gpus,
                                     const Deployment& deployment, const VllmProfile& profile,
                                     const FitResult& result);

}  // namespace gpubudget
