#include "plan_command.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli_values.h"
#include "cli_errors.h"
#include "gpubudget/error.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/plan.h"

namespace gpubudget::cli {

int run_plan(const PlanOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  const ModelSpec model = load_cli_model(o.model, o.hub, configs, err);
  const VllmProfile profile = load_vllm_profile(o.vllm_version, configs);
  PlanRequest request;
  const auto length = parse_max_model_len(o.max_model_len).length;  // auto: the model's maximum
  request.max_model_len = length.value_or(model.derived_max_model_len);
  if (o.concurrency < 1) throw UsageError("--concurrency: at least 1");
  request.concurrency = o.concurrency;
  request.max_pipeline = o.max_pipeline;
  request.gpus_per_node = o.gpus_per_node;
  std::vector<GpuSpec> gpus;
  if (o.gpus.empty()) {
    gpus = list_gpu_presets(configs);
  } else {
    for (const auto& name : split_list(o.gpus)) gpus.push_back(load_gpu_preset(name, configs));
  }
  Deployment base = o.deployment;
  base.dtype = parse_model_dtype_choice(o.dtype);
  base.kv_cache_dtype = parse_kv_cache_dtype_choice(o.kv_cache_dtype);
  const auto answers = plan_deployments(model, gpus, base, profile, request);
  bool any = false;
  if (o.json) {
    out << plan_json(answers);
    return std::any_of(answers.begin(), answers.end(), [](const PlanAnswer& a) { return a.found; }) ? 0 : 1;
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
    if (d.kv_cache_dtype != KvCacheDtypeChoice::kAuto) {
      launch += fmt::format(" --kv-cache-dtype {}", kv_cache_dtype_choice_name(d.kv_cache_dtype));
    }
    if (d.gpu_memory_utilization) launch += fmt::format(" --gpu-memory-utilization {}", *d.gpu_memory_utilization);
    out << fmt::format("{:<14} {:>5} {:>4} {:>4} {:>11.2f}x {:>10.2f} {:>9.2f}  {}\n", a.gpu, a.gpus,
                       d.tensor_parallel_size, d.pipeline_parallel_size, a.concurrency, to_gib(a.weights_per_gpu),
                       to_gib(a.kv_cache_per_gpu), launch);
    // Why the next simpler layout is not enough.
    if (!a.rejected_layouts.empty()) out << fmt::format("{:<14} not {}\n", "", a.rejected_layouts.back());
  }
  return any ? 0 : 1;
}

}  // namespace gpubudget::cli
