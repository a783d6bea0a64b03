// run_sweep (sweep.h).
#include "gpubudget/sweep.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget {

std::vector<SweepRow> run_sweep(const ModelSpec& model, const SweepAxes& axes, const Deployment& base,
                                const VllmProfile& profile, std::int64_t target_len) {
  if (axes.gpus.empty() && axes.layouts.empty()) throw InputError("sweep: at least one GPU");
  if (!axes.layouts.empty() && !axes.gpus.empty()) {
    throw InputError("sweep: give GPU layouts (GPU and TP pairs) or GPUs and TP sizes, not both");
  }
  const bool paired = !axes.layouts.empty();
  // Each axis is bounded before the product is taken, so that the product cannot wrap.
  std::int64_t scenarios = 1;
  for (const std::size_t size : {paired ? axes.layouts.size() : axes.gpus.size(),
                                 paired ? std::size_t{1} : axes.tensor_parallel.size(), axes.pipeline_parallel.size(),
                                 axes.decode_context_parallel.size(), axes.kv_cache_dtypes.size(),
                                 axes.utilizations.size(), axes.max_num_seqs.size()}) {
    if (size == 0) throw InputError("sweep: every axis needs at least one value");
    scenarios = static_cast<std::int64_t>(size) > kMaxSweepScenarios ? kMaxSweepScenarios + 1
                                                                       : std::min(scenarios * static_cast<std::int64_t>(size),
                                                                                  kMaxSweepScenarios + 1);
  }
  if (scenarios > kMaxSweepScenarios) {
    throw InputError(fmt::format("sweep: more than {} combinations of the listed values; sweep fewer at a time",
                                 kMaxSweepScenarios));
  }
  std::vector<GpuLayout> layouts = axes.layouts;
  if (!paired) {
    for (const auto& gpu : axes.gpus) {
      for (const auto tp : axes.tensor_parallel) layouts.push_back({gpu, tp});
    }
  }
  std::vector<SweepRow> rows;
  FitMemo memo(model);
  for (const auto& [gpu, tp] : layouts) {
    for (const auto pp : axes.pipeline_parallel) {
      for (const auto dcp : axes.decode_context_parallel) {
        for (const KvCacheDtypeChoice kv : axes.kv_cache_dtypes) {
          for (const auto& util : axes.utilizations) {
            for (const auto& seqs : axes.max_num_seqs) {
              SweepRow row;
              row.gpu = gpu.name;
              row.gpu_memory = gpu.memory;
              row.deployment = base;
              Deployment& d = row.deployment;
              d.tensor_parallel_size = tp;
              d.pipeline_parallel_size = pp;
              d.decode_context_parallel_size = dcp;
              d.kv_cache_dtype = kv;
              if (util) d.gpu_memory_utilization = util;
              if (seqs) d.max_num_seqs = seqs;
              d.max_model_len.reset();  // judge the model's maximum: the largest length is capped by it
              try {
                const FitResult r = fit(model, {gpu}, d, profile, &memo);
                const WorkerBudget& w = r.binding_worker();
                row.valid = true;
                row.kv_cache_dtype = r.kv_cache_dtype.name;
                row.max_model_len = r.max_model_len;
                row.kv_cache_tokens = r.kv_cache_tokens;
                const std::int64_t target = target_len > 0 ? target_len : r.judged_max_model_len;
                const std::int64_t per_request = w.kv.blocks_per_request(target);
                row.concurrency_at_target =
                    per_request > 0 ? static_cast<double>(r.num_blocks) / static_cast<double>(per_request) : 0.0;
                row.weights_per_gpu = w.weights.total;
                row.kv_cache_per_gpu = w.kv_cache;
                row.warnings = r.warnings;
                row.starts = r.vllm_would_start;
                row.start_blocker = r.start_blocker;
                row.gpu_memory_utilization = r.gpu_memory_utilization;
                row.block_size = r.block_size;
              } catch (const InputError& e) {
                row.error = e.what();
              }
              rows.push_back(std::move(row));
            }
          }
        }
      }
    }
  }
  return rows;
}

}  // namespace gpubudget
