#include "weights_command.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "cli_errors.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/json_documents.h"
#include "gpubudget/weights_report.h"
#include "text_width.h"

namespace gpubudget::cli {

namespace {

// GiB for model-sized figures, smaller units for small ones (tiny test models, single norms).
std::string gib(Bytes size) {
  const std::int64_t bytes = size.count();
  const double b = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.3f} GiB", b / static_cast<double>(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.2f} MiB", b / static_cast<double>(kMiB));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

WeightsGrouping parse_grouping(const std::string& by) {
  if (by == "component") return WeightsGrouping::kComponent;
  if (by == "layer") return WeightsGrouping::kLayer;
  if (by == "tensor") return WeightsGrouping::kTensor;
  throw UsageError(fmt::format("--by: expected component, layer or tensor, got \"{}\"", by));
}

void write_text(const WeightsReport& report, std::ostream& out) {
  out << fmt::format("{} ({}): weights per GPU, TP={} PP={} DP={}{}{}\n", report.architecture, report.model_source,
                     report.tensor_parallel_size, report.pipeline_parallel_size, report.data_parallel_size,
                     report.enable_expert_parallel ? " EP" : "", report.gpu.empty() ? "" : " on " + report.gpu);
  out << fmt::format("checkpoint (all ranks, TP=1): {}\n", gib(report.checkpoint));
  if (report.read_headers) {
    out << fmt::format("safetensors headers: {} files, {} tensors, {}{}\n", report.header_files, report.header_tensors,
                       gib(report.header_tensor_bytes),
                       report.index_path.empty() ? "" : " (per " + report.index_path + ")");
  }
  const std::string by(grouping_name(report.by));
  // The name column leaves the figures within 80 columns; a longer name (a tensor's) takes a line of its
  // own, its figures on the next.
  const bool compared = std::any_of(report.workers.begin(), report.workers.end(),
                                    [](const WeightsWorker& w) { return w.headers.has_value(); });
  const std::size_t width = report.by == WeightsGrouping::kTensor ? (compared ? 35 : 43) : 24;
  auto name_cell = [&](const std::string& name) {
    return name.size() <= width ? name : name + "\n  " + std::string(width, ' ');
  };
  for (const WeightsWorker& w : report.workers) {
    const HeaderComparison* cmp = w.headers ? &*w.headers : nullptr;
    out << fmt::format("\npipeline stage {} (layers {}-{}):\n", w.pp_rank, w.first_layer, w.end_layer - 1);
    if (cmp) {
      out << fmt::format("  {:<{}} {:>14} {:>14} {:>12}\n", by, width, "config", "headers", "diff. bytes");
    } else {
      out << fmt::format("  {:<{}} {:>14} {:>18}\n", by, width, "per GPU", "checkpoint (all)");
    }
    for (const auto& r : w.rows) {
      if (cmp) {
        out << fmt::format("  {:<{}} {:>14} {:>14} {:>+12}\n", name_cell(r.name), width, gib(r.per_gpu), gib(r.header_per_gpu),
                           (r.header_per_gpu - r.per_gpu).count());
      } else {
        out << fmt::format("  {:<{}} {:>14} {:>18}\n", name_cell(r.name), width, gib(r.per_gpu), gib(r.checkpoint));
      }
    }
    out << fmt::format("  {:<{}} {:>14}", "total", width, gib(w.config_per_gpu));
    if (cmp) out << fmt::format(" {:>14} {:>+12}", gib(cmp->header_per_gpu), (cmp->header_per_gpu - cmp->config_per_gpu).count());
    out << "\n";
    if (cmp && w.pp_rank == 0) {
      for (const auto& diff : cmp->differences) {
        out << fmt::format("  differs: {}: config {} bytes, headers {} bytes\n", diff.unit,
                           diff.config_checkpoint.count(), diff.header_checkpoint.count());
      }
      for (const auto& m : cmp->missing_units) out << "  not in the headers: " << m << "\n";
      for (const auto& t : cmp->unmatched_tensors) out << "  header tensor of no known module (counted whole): " << t << "\n";
    }
  }
}

}  // namespace

int run_weights(const WeightsOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  const WeightsGrouping by = parse_grouping(o.by);
  const ModelSpec model = model_for_dtype(load_cli_model(o.model, o.hub, configs, err), parse_model_dtype_choice(o.dtype));
  if (o.strict) refuse_unmodelled_keys(model);
  for (const auto& assumption : model.generic_assumptions) {
    err << "warning: generic estimate (" << model.architecture << " is no modelled family): " << assumption << "\n";
  }
  for (const auto& key : model.unmodelled_config_keys) {
    err << fmt::format("warning: config key `{}` is not modelled by the {} parser; the figures may be wrong\n", key,
                       model.family);
  }
  const VllmProfile profile = load_vllm_profile(o.vllm_version, configs);
  std::optional<GpuSpec> gpu;  // without --gpu: no backend padding
  if (!o.gpu.empty()) gpu = load_gpu_preset(o.gpu, configs);
  bool mxfp4 = false;
  for (const auto& l : model.layers) {
    for (const auto& e : l.experts) mxfp4 = mxfp4 || e.format.kind == QuantKind::kMxfp4;
  }
  if (mxfp4 && !gpu) {
    err << "warning: MXFP4 experts are padded per GPU backend; without --gpu they are counted unpadded\n";
  }
  std::optional<CheckpointHeaders> headers;
  if (!o.no_headers) {
    std::error_code ec;
    const std::filesystem::path p(model.source);
    const auto dir = std::filesystem::is_directory(p, ec) ? p : p.parent_path();
    headers = read_checkpoint_headers(dir.string());
  }
  const WeightsReport report = weights_report(model, gpu, o.deployment, profile, by, headers);
  if (o.json) {
    out << weights_json(report);
  } else {
    std::ostringstream text;
    write_text(report, text);
    out << wrap_long_lines(text.str(), o.width);
  }
  return 0;
}

}  // namespace gpubudget::cli
