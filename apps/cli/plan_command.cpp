#include "plan_command.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/argument_values.h"
#include "cli_errors.h"
#include "gpubudget/error.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/plan.h"
#include "text_width.h"

namespace gpubudget::cli {

namespace {
constexpr std::size_t kIndent = 4;  // columns before a row's launch line and reasons
}  // namespace

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
  // One row per GPU (77 columns), then its launch line and why the next simpler layout is not
  // enough, each wrapped to the width.
  const auto paragraph = [&](const std::string& text) {
    return o.width == 0 ? std::string(kIndent, ' ') + text + "\n" : wrap_paragraph(text, kIndent, o.width);
  };
  const std::string title = fmt::format("{}: {} requests of {} tokens at once, fewest GPUs first", o.model,
                                        request.concurrency, request.max_model_len);
  out << (o.width == 0 ? title + "\n" : wrap_paragraph(title, 0, o.width));
  out << fmt::format("{:<14} {:>5}  {:<24} {:>11} {:>9} {:>8}\n", "gpu", "GPUs", "layout", "concurrency", "weights",
                     "KV GiB");
  for (const auto& a : answers) {
    any = any || a.found;
    if (!a.found) {
      out << fmt::format("{:<14} no layout\n", a.gpu) << paragraph(a.why_not);
      if (!a.rejected_layouts.empty()) out << paragraph("not " + a.rejected_layouts.back());
      continue;
    }
    const Deployment& d = a.deployment;
    std::string layout = fmt::format("TP {}", d.tensor_parallel_size);
    if (d.pipeline_parallel_size > 1) layout += fmt::format(" x PP {}", d.pipeline_parallel_size);
    if (d.decode_context_parallel_size > 1) layout += fmt::format(" + DCP {}", d.decode_context_parallel_size);
    if (d.enable_expert_parallel) layout += " + EP";
    out << fmt::format("{:<14} {:>5}  {:<24} {:>10.2f}x {:>9.2f} {:>8.2f}\n", a.gpu, a.gpus, layout, a.concurrency,
                       to_gib(a.weights_per_gpu), to_gib(a.kv_cache_per_gpu));
    std::string launch = fmt::format("vllm serve {} -tp {}", o.model, d.tensor_parallel_size);
    if (d.pipeline_parallel_size > 1) launch += fmt::format(" -pp {}", d.pipeline_parallel_size);
    if (d.decode_context_parallel_size > 1) launch += fmt::format(" -dcp {}", d.decode_context_parallel_size);
    if (d.enable_expert_parallel) launch += " --enable-expert-parallel";
    launch += fmt::format(" --max-model-len {}", request.max_model_len);
    if (d.max_num_seqs) launch += fmt::format(" --max-num-seqs {}", *d.max_num_seqs);
    if (d.kv_cache_dtype != KvCacheDtypeChoice::kAuto) {
      launch += fmt::format(" --kv-cache-dtype {}", kv_cache_dtype_choice_name(d.kv_cache_dtype));
    }
    if (d.gpu_memory_utilization) launch += fmt::format(" --gpu-memory-utilization {}", *d.gpu_memory_utilization);
    out << paragraph(launch);
    // Why the next simpler layout is not enough: the last plain one tried (no DCP, no EP).
    const auto plain = std::find_if(a.rejected_layouts.rbegin(), a.rejected_layouts.rend(), [](const std::string& r) {
      return r.substr(0, r.find(':')).find(" + ") == std::string::npos;
    });
    if (plain != a.rejected_layouts.rend()) out << paragraph("not " + *plain);
  }
  return any ? 0 : 1;
}

}  // namespace gpubudget::cli
