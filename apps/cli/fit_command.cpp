#include "fit_command.h"

#include "cli_values.h"
#include "fit_report.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"

namespace gpubudget::cli {

int run_fit(const FitOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  Deployment d = o.deployment;
  d.max_model_len = parse_max_model_len(o.max_model_len);
  if (!o.kv_cache_memory_bytes.empty()) {
    d.kv_cache_memory = Bytes(parse_human_int("--kv-cache-memory-bytes", o.kv_cache_memory_bytes));
  }
  if (!o.max_num_batched_tokens.empty()) {
    d.max_num_batched_tokens = parse_human_int("--max-num-batched-tokens", o.max_num_batched_tokens);
  }
  const ModelSpec model = load_model(o.model, configs);
  if (o.gpu.empty() && o.gpu_memory.empty()) {
    throw UsageError("fit: give --gpu NAME (see `gpubudget gpus`) or --gpu-memory SIZE");
  }
  GpuSpec gpu = o.gpu.empty() ? custom_gpu(Bytes(parse_memory_size("--gpu-memory", o.gpu_memory)))
                              : load_gpu_preset(o.gpu, configs);
  if (!o.gpu.empty() && !o.gpu_memory.empty()) {
    gpu.memory = Bytes(parse_memory_size("--gpu-memory", o.gpu_memory));
    gpu.memory_source = "--gpu-memory";
  }
  const VllmProfile profile = load_vllm_profile(o.vllm_version, configs);
  const FitResult result = fit(model, gpu, d, profile);
  const ReportContext context{model, gpu, d, profile, o.vllm_version.empty() ? profile.version : o.vllm_version};
  if (o.json) {
    write_fit_json(context, result, out);
  } else {
    write_fit_text(context, result, o.explain, out);
  }
  for (const auto& w : result.warnings) err << "warning: " << w << "\n";
  return result.fits ? 0 : 1;
}

}  // namespace gpubudget::cli
