#include "fit_command.h"

#include <filesystem>

#include <fmt/format.h>

#include "cli_values.h"
#include "fit_report.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/header_weights.h"
#include "gpubudget/weight_units.h"

namespace gpubudget::cli {

namespace {

// A model folder with safetensors files: the config-derived weights are checked against the headers'
// (`gpubudget weights` shows the comparison module by module).
void warn_if_headers_differ(const ModelSpec& model, const GpuSpec& gpu, const Deployment& d, const VllmProfile& profile,
                            std::ostream& err) {
  std::error_code ec;
  const std::filesystem::path source(model.source);
  const auto headers = read_checkpoint_headers(
      (std::filesystem::is_directory(source, ec) ? source : source.parent_path()).string());
  if (!headers) return;
  const ModelSpec built = model_for_dtype(model, d.dtype);
  const auto units = weight_units(built, make_worker_layout(built, gpu, d, profile, 0));
  const HeaderComparison cmp = compare_with_headers(units, *headers);
  const Bytes diff = cmp.header_per_gpu - cmp.config_per_gpu;
  if (diff.count() == 0 && cmp.missing_units.empty() && cmp.unmatched_tensors.empty()) return;
  err << fmt::format("warning: the safetensors headers imply {:+.3f} GiB of weights per GPU against the config "
                     "({} modules differ, {} missing, {} header tensors unmatched); see `gpubudget weights {}`\n",
                     to_gib(diff), cmp.differences.size(), cmp.missing_units.size(), cmp.unmatched_tensors.size(),
                     model.source);
}

}  // namespace

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
  warn_if_headers_differ(model, gpu, d, profile, err);
  return result.fits ? 0 : 1;
}

}  // namespace gpubudget::cli
