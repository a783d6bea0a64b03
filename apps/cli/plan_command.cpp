#include "plan_command.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_values.h"
#include "gpubudget/error.h"
#include "gpubudget/plan.h"

namespace gpubudget::cli {

int run_plan(const PlanOptions& o, const ConfigDir& configs, std::ostream& out) {
  const ModelSpec model = load_model(o.model, configs);
  const VllmProfile profile = load_vllm_profile(o.vllm_version, configs);
  PlanRequest request;
  const auto length = parse_max_model_len(o.max_model_len);
  request.max_model_len = length.value_or(model.derived_max_model_len);
  if (o.concurrency < 1) throw UsageError("--concurrency: at least 1");
  request.concurrency = o.concurrency;
  request.max_pipeline = o.max_pipeline;
  std::vector<GpuSpec> gpus;
  if (o.gpus.empty()) {
    gpus = list_gpu_presets(configs);
  } else {
    for (const auto& name : split_list(o.gpus)) gpus.push_back(load_gpu_preset(name, configs));
  }
  const auto answers = plan_deployments(model, gpus, o.deployment, profile, request);
  bool any = false;
  if (o.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& a : answers) {
      nlohmann::ordered_json row = {{"gpu", a.gpu}, {"found", a.found}};
      if (a.found) {
        row["gpus"] = a.gpus;
        row["tensor_parallel_size"] = a.deployment.tensor_parallel_size;
        row["pipeline_parallel_size"] = a.deployment.pipeline_parallel_size;
        row["max_num_seqs"] = a.deployment.max_num_seqs ? nlohmann::ordered_json(*a.deployment.max_num_seqs)
                                                        : nlohmann::ordered_json(nullptr);
        row["max_concurrency"] = std::round(a.concurrency * 100.0) / 100.0;
        row["weights_bytes"] = a.weights_per_gpu.count();
        row["kv_cache_bytes"] = a.kv_cache_per_gpu.count();
      } else {
        row["why_not"] = a.why_not;
      }
      any = any || a.found;
      j.push_back(row);
    }
    out << j.dump(2) << "\n";
    return any ? 0 : 1;
  }
  out << fmt::format("{}: {} concurrent requests of {} tokens, cheapest first (fewest GPUs)\n", o.model,
                     request.concurrency, request.max_model_len);
  out << fmt::format("{:<14} {:>5} {:>4} {:>4} {:>12} {:>10} {:>9}  {}\n", "gpu", "GPUs", "tp", "pp", "concurrency",
                     "weights", "kv GiB", "launch");
  for (const auto& a : answers) {
    any = any || a.found;
    if (!a.found) {
      out << fmt::format("{:<14} {}\n", a.gpu, a.why_not);
      continue;
    }
    const Deployment& d = a.deployment;
    std::string launch = fmt::format("vllm serve {} -tp {}", o.model, d.tensor_parallel_size);
    if (d.pipeline_parallel_size > 1) launch += fmt::format(" -pp {}", d.pipeline_parallel_size);
    launch += fmt::format(" --max-model-len {}", request.max_model_len);
    if (d.max_num_seqs) launch += fmt::format(" --max-num-seqs {}", *d.max_num_seqs);
    if (d.kv_cache_dtype != "auto") launch += " --kv-cache-dtype " + d.kv_cache_dtype;
    if (d.gpu_memory_utilization) launch += fmt::format(" --gpu-memory-utilization {}", *d.gpu_memory_utilization);
    out << fmt::format("{:<14} {:>5} {:>4} {:>4} {:>11.2f}x {:>10.2f} {:>9.2f}  {}\n", a.gpu, a.gpus,
                       d.tensor_parallel_size, d.pipeline_parallel_size, a.concurrency, to_gib(a.weights_per_gpu),
                       to_gib(a.kv_cache_per_gpu), launch);
  }
  return any ? 0 : 1;
}

}  // namespace gpubudget::cli
