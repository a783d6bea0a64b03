#include "fit_command.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "captured_warnings.h"
#include "gpubudget/argument_values.h"
#include "fit_report.h"
#include "gpubudget/launch_command.h"
#include "text_width.h"
#include "cli_errors.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/header_weights.h"
#include "gpubudget/remedies.h"
#include "gpubudget/weight_units.h"
#include "gpubudget/vllm_command.h"

namespace gpubudget::cli {

namespace {

// A model folder with safetensors files: the config-derived weights are checked against the headers'
// (`gpubudget weights` shows the comparison module by module).
void warn_if_headers_differ(const ModelSpec& model, const GpuSpec& gpu, const Deployment& d, const VllmProfile& profile,
                            CapturedWarnings& held) {
  std::error_code ec;
  const std::filesystem::path source(model.source);
  std::optional<CheckpointHeaders> headers;
  try {
    headers = read_checkpoint_headers((std::filesystem::is_directory(source, ec) ? source : source.parent_path()).string());
  } catch (const InputError& e) {
    // fit's figures come from the config; a checkpoint that cannot be read is said, not fatal
    // (`gpubudget weights` refuses it).
    held.warn({NoticeCode::kHeadersUnreadable,
               fmt::format("the weights could not be checked against the safetensors headers: {}", e.what())});
    return;
  }
  if (!headers) return;
  const ModelSpec built = model_for_dtype(model, d.dtype);
  const auto units = weight_units(built, make_worker_layout(built, gpu, d, profile, 0));
  const HeaderComparison cmp = compare_with_headers(units, *headers);
  const Bytes diff = cmp.header_per_gpu - cmp.config_per_gpu;
  if (diff.count() == 0 && cmp.missing_units.empty() && cmp.unmatched_tensors.empty()) return;
  held.warn({NoticeCode::kHeadersDiffer,
             fmt::format("the safetensors headers imply {:+.3f} GiB of weights per GPU against the config "
                         "({} modules differ, {} missing, {} header tensors unmatched); see `gpubudget weights {}`",
                         to_gib(diff), cmp.differences.size(), cmp.missing_units.size(), cmp.unmatched_tensors.size(),
                         model.source)});
}

// --gpu auto: memory already in use on a GPU the deployment would take can fail vLLM's startup check
// (vllm/v1/worker/utils.py request_memory: the free memory must cover utilization x total), before any
// budget matters.
void warn_if_gpus_busy(const ResolvedFit& f, const FitResult& result, CapturedWarnings& held) {
  const Deployment& d = f.deployment;
  const std::int64_t world = d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size;
  const double total = static_cast<double>(f.gpus.front().memory.count());
  const double requested = result.gpu_memory_utilization * total;
  for (const auto& g : f.detected) {
    if (g.index >= world || !g.used_mib) continue;
    const double used = static_cast<double>(*g.used_mib) * (1 << 20);
    if (total - used >= requested) continue;
    held.warn(
        {NoticeCode::kGpuMemoryInUse,
         fmt::format("GPU {} already has {:.2f} GiB in use: vLLM's startup check needs {:.2f} GiB free "
                     "(--gpu-memory-utilization {} of {:.2f} GiB) and would stop with \"Free memory on device ... "
                     "is less than desired GPU memory utilization\"; free the GPU or lower the utilization to "
                     "{:.2f}",
                     g.index, used / (1 << 30), requested / (1 << 30), result.gpu_memory_utilization, total / (1 << 30),
                     std::floor((total - used) / total * 100) / 100)});
  }
}

}  // namespace

namespace {


}  // namespace

ResolvedFit resolve_fit_options(const FitOptions& o, const ConfigDir& configs, CapturedWarnings& held) {
  std::ostream& err = held.stream();
  if (!o.profile_file.empty() && !o.vllm_version.empty()) {
    throw UsageError("give --profile or --vllm-version, not both");
  }
  ResolvedFit out{load_cli_model(o.model, o.hub, configs, err), {}, {},
                  o.profile_file.empty() ? load_vllm_profile(o.vllm_version, configs)
                                         : load_vllm_profile_file(o.profile_file, configs),
                  {}};
  if (o.strict) refuse_unmodelled_keys(out.model);
  std::vector<Notice> warnings;
  out.deployment = resolve_vllm_arguments(
      o.vllm, out.model, out.profile,
      [&](const std::string& id) { return load_cli_draft_model(id, o.hub, configs, err); }, warnings);
  for (auto& w : warnings) held.warn(std::move(w));
  const Deployment& d = out.deployment;
  if (o.gpu.empty() && o.gpu_memory.empty()) {
    throw UsageError("fit: give --gpu NAME (see `gpubudget gpus`) or --gpu-memory SIZE");
  }
  const std::vector<std::string> names = o.gpu.empty() ? std::vector<std::string>{} : split_list(o.gpu);
  if (names.size() > 1 && static_cast<std::int64_t>(names.size()) != d.pipeline_parallel_size) {
    throw UsageError(fmt::format("--gpu lists {} GPUs: give one, or one per pipeline stage "
                                 "(--pipeline-parallel-size {})",
                                 names.size(), d.pipeline_parallel_size));
  }
  std::optional<Bytes> memory;
  if (!o.gpu_memory.empty()) memory = Bytes(parse_memory_size("--gpu-memory", o.gpu_memory));
  if (o.gpu == "auto") {
    out.detected = detect_nvidia_gpus();
    GpuSpec gpu = gpu_for_detected(out.detected.front(), configs);
    if (memory) {
      gpu.memory = *memory;
      gpu.memory_source = "--gpu-memory";
      gpu.memory_estimated = false;
    }
    err << fmt::format("note: --gpu auto: {} GPU(s); budgeting for GPU 0, {} ({}: {:.2f} GiB CUDA-visible{})\n",
                       out.detected.size(), out.detected.front().name, gpu.name, to_gib(gpu.memory),
                       gpu.memory_estimated ? ", estimated" : "");
    for (const auto& other : out.detected) {
      if (other.name != out.detected.front().name || other.total_mib != out.detected.front().total_mib) {
        held.warn({NoticeCode::kGpuAutoMixed,
                   fmt::format("--gpu auto: GPU {} is a different GPU ({}); give one preset per stage with --gpu a,b",
                               other.index, other.name)});
        break;
      }
    }
    const std::int64_t world = d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size;
    if (static_cast<std::int64_t>(out.detected.size()) < world) {
      held.warn({NoticeCode::kGpuAutoTooFew,
                 fmt::format("--gpu auto: this machine has {} GPU(s), the deployment needs {} (TP x PP x DP)",
                             out.detected.size(), world)});
    }
    out.gpus.assign(names.size() > 1 ? names.size() : 1, gpu);
    return out;
  }
  if (!o.compute_capability.empty()) {
    if (!names.empty()) {
      throw UsageError(fmt::format("--compute-capability {}: it describes a GPU given by --gpu-memory alone; "
                                   "--gpu {} has its own (a GPU of your own: --gpu FILE.json, docs/gpus.md)",
                                   o.compute_capability, o.gpu));
    }
    const auto cc = parse_compute_capability(o.compute_capability);
    if (!cc) {
      throw UsageError(fmt::format("--compute-capability {}: expected major.minor as CUDA prints it, e.g. 8.0, 9.0, 12.0",
                                   o.compute_capability));
    }
    out.gpus = {custom_gpu(*memory, *cc)};
    return out;
  }
  out.gpus = load_stage_gpus(names, memory, d.pipeline_parallel_size, configs);
  return out;
}

int run_fit(const FitOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  CapturedWarnings held(err);  // the flags' notes and warnings, until the result has them too
  const ResolvedFit f = resolve_fit_options(o, configs, held);
  const Deployment& d = f.deployment;
  FitMemo memo(f.model);  // the remedies mostly keep the fit's layout and weights
  const FitResult result = fit(f.model, f.gpus, d, f.profile, &memo);
  const FitQuery query{f.model, f.gpus, d, f.profile, o.vllm_version};
  std::vector<Remedy> remedies;
  if (!result.fits) remedies = find_remedies(f.model, f.gpus, d, f.profile, result, &memo);
  warn_if_gpus_busy(f, result, held);
  warn_if_headers_differ(f.model, f.gpus.front(), d, f.profile, held);
  // What is shown (JSON `warnings`, the verdict's count) has every warning: the fit's own, the pasted
  // vLLM command's, and those of the flags and checks above.
  FitResult shown = result;
  for (const auto& w : o.pasted_command_warnings) add_unique(shown.warnings, w);
  for (const auto& w : held.warnings()) add_unique(shown.warnings, w);
  int status = result.fits ? 0 : 1;
  if (o.vllm_args) {
    const LaunchLength length = launch_length(result, o.safety_margin_percent);
    if (length.max_model_len > 0) {
      out << vllm_serve_command(o.model, o.vllm, d, shown, length.max_model_len) << "\n";
      status = 0;
    } else {
      status = 1;
    }
    if (!length.note.empty()) held.stream() << (length.max_model_len > 0 ? "note: " : "error: ") << length.note << "\n";
    if (const std::string caveat = vllm_serve_caveat(d); !caveat.empty() && length.max_model_len > 0) {
      held.stream() << "note: " << caveat << "\n";
    }
  } else if (o.json) {
    out << fit_json(query, shown, remedies);
  } else {
    std::ostringstream text;
    write_fit_text(query, shown, remedies,
                   o.explain ? explain_fit(f.model, f.gpus, d, f.profile, result) : std::vector<Explanation>{}, text);
    out << wrap_long_lines(text.str(), o.width);
  }
  held.flush();
  for (const auto& w : result.warnings) err << "warning: " << w.text << "\n";
  return status;
}

}  // namespace gpubudget::cli
