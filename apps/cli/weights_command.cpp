#include "weights_command.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/header_weights.h"
#include "gpubudget/weight_units.h"
#include "gpubudget/weights.h"

namespace gpubudget::cli {

namespace {

struct Row {
  std::string name;
  std::string component;  // --by tensor only
  std::int64_t per_gpu = 0;
  std::int64_t checkpoint = 0;
  std::int64_t header_per_gpu = 0;
};

// Units grouped as --by asks; rows keep the first-seen order (model order).
std::vector<Row> group_rows(const std::vector<WeightUnit>& units, const HeaderComparison* headers,
                            const std::string& by) {
  std::vector<Row> rows;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const WeightUnit& u = units[i];
    std::string key;
    if (by == "component") {
      key = std::string(component_name(u.component));
    } else if (by == "layer") {
      key = u.layer >= 0 ? fmt::format("layer {}", u.layer) : "outside the layers";
      if (u.checkpoint_only) key = "checkpoint only (MTP)";
    } else {
      key = u.name;
    }
    auto [it, inserted] = index.emplace(key, rows.size());
    if (inserted) rows.push_back({key, by == "tensor" ? std::string(component_name(u.component)) : "", 0, 0, 0});
    Row& r = rows[it->second];
    r.per_gpu += u.per_gpu.count();
    r.checkpoint += u.checkpoint.count();
    if (headers != nullptr) r.header_per_gpu += headers->header_unit_per_gpu[i].count();
  }
  return rows;
}

// GiB for model-sized figures, smaller units for small ones (tiny test models, single norms).
std::string gib(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.3f} GiB", b / static_cast<double>(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.2f} MiB", b / static_cast<double>(kMiB));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

}  // namespace

int run_weights(const WeightsOptions& o, const ConfigDir& configs, std::ostream& out, std::ostream& err) {
  if (o.by != "component" && o.by != "layer" && o.by != "tensor") {
    throw UsageError(fmt::format("--by: expected component, layer or tensor, got \"{}\"", o.by));
  }
  const ModelSpec model = model_for_dtype(load_model(o.model, configs), o.deployment.dtype);
  const VllmProfile profile = load_vllm_profile(o.vllm_version, configs);
  GpuSpec gpu;  // without --gpu: no backend padding
  const bool has_gpu = !o.gpu.empty();
  if (has_gpu) gpu = load_gpu_preset(o.gpu, configs);
  bool mxfp4 = false;
  for (const auto& l : model.layers) {
    for (const auto& e : l.experts) mxfp4 = mxfp4 || e.format.kind == QuantKind::kMxfp4;
  }
  if (mxfp4 && !has_gpu) {
    err << "warning: MXFP4 experts are padded per GPU backend; without --gpu they are counted unpadded\n";
  }

  std::optional<CheckpointHeaders> headers;
  if (!o.no_headers) {
    std::error_code ec;
    const std::filesystem::path p(model.source);
    const auto dir = std::filesystem::is_directory(p, ec) ? p : p.parent_path();
    headers = read_checkpoint_headers(dir.string());
  }

  const Deployment& d = o.deployment;
  nlohmann::ordered_json json;
  json["model"] = {{"architecture", model.architecture}, {"model_type", model.model_type}, {"source", model.source}};
  json["parallel"] = {{"tensor_parallel_size", d.tensor_parallel_size},
                      {"pipeline_parallel_size", d.pipeline_parallel_size},
                      {"data_parallel_size", d.data_parallel_size},
                      {"enable_expert_parallel", d.enable_expert_parallel}};
  json["gpu"] = has_gpu ? nlohmann::ordered_json(gpu.name) : nlohmann::ordered_json(nullptr);
  json["by"] = o.by;
  json["checkpoint_bytes"] = checkpoint_bytes(model).count();
  json["workers"] = nlohmann::ordered_json::array();

  if (!o.json) {
    out << fmt::format("{} ({}): weights per GPU, TP={} PP={} DP={}{}{}\n", model.architecture, model.source,
                       d.tensor_parallel_size, d.pipeline_parallel_size, d.data_parallel_size,
                       d.enable_expert_parallel ? " EP" : "", has_gpu ? " on " + gpu.name : "");
    out << fmt::format("checkpoint (all ranks, TP=1): {}\n", gib(checkpoint_bytes(model).count()));
    if (headers) {
      out << fmt::format("safetensors headers: {} files, {} tensors, {}{}\n", headers->files.size(),
                         headers->tensor_count(), gib(headers->tensor_bytes()),
                         headers->index_path.empty() ? "" : " (per " + headers->index_path + ")");
    }
  }
  for (std::int64_t stage = 0; stage < d.pipeline_parallel_size; ++stage) {
    const ParallelLayout layout = has_gpu ? make_worker_layout(model, gpu, d, profile, stage)
                                          : make_parallel_layout(model, d, stage);
    const std::vector<WeightUnit> units = weight_units(model, layout);
    std::optional<HeaderComparison> cmp;
    if (headers) cmp = compare_with_headers(units, *headers);
    const auto rows = group_rows(units, cmp ? &*cmp : nullptr, o.by);
    std::int64_t total = 0;
    for (const auto& r : rows) total += r.per_gpu;

    nlohmann::ordered_json worker;
    worker["pp_rank"] = stage;
    worker["layers"] = {layout.first_layer, layout.end_layer};
    worker["weights_bytes"] = total;
    nlohmann::ordered_json jrows = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json row = {{"name", r.name}};
      if (!r.component.empty()) row["component"] = r.component;
      row["bytes"] = r.per_gpu;
      row["checkpoint_bytes"] = r.checkpoint;
      if (cmp) row["header_bytes"] = r.header_per_gpu;
      jrows.push_back(row);
    }
    worker["rows"] = jrows;
    if (cmp) {
      nlohmann::ordered_json h;
      h["weights_bytes"] = cmp->header_per_gpu.count();
      h["difference_bytes"] = (cmp->header_per_gpu - cmp->config_per_gpu).count();
      h["checkpoint_bytes"] = cmp->header_checkpoint.count();
      h["config_checkpoint_bytes"] = cmp->config_checkpoint.count();
      h["differences"] = nlohmann::ordered_json::array();
      for (const auto& diff : cmp->differences) {
        h["differences"].push_back({{"unit", diff.unit},
                                    {"config_bytes", diff.config_checkpoint.count()},
                                    {"header_bytes", diff.header_checkpoint.count()}});
      }
      h["missing_units"] = cmp->missing_units;
      h["unmatched_tensors"] = cmp->unmatched_tensors;
      h["unmatched_bytes"] = cmp->unmatched_bytes.count();
      worker["headers"] = h;
    }
    json["workers"].push_back(worker);

    if (o.json) continue;
    out << fmt::format("\npipeline stage {} (layers {}-{}):\n", stage, layout.first_layer, layout.end_layer - 1);
    const std::size_t width = std::max<std::size_t>(20, o.by == "tensor" ? 56 : 24);
    if (cmp) {
      out << fmt::format("  {:<{}} {:>14} {:>14} {:>12}\n", o.by, width, "config", "headers", "diff. bytes");
    } else {
      out << fmt::format("  {:<{}} {:>14} {:>18}\n", o.by, width, "per GPU", "checkpoint (all)");
    }
    for (const auto& r : rows) {
      if (cmp) {
        out << fmt::format("  {:<{}} {:>14} {:>14} {:>+12}\n", r.name, width, gib(r.per_gpu), gib(r.header_per_gpu),
                           r.header_per_gpu - r.per_gpu);
      } else {
        out << fmt::format("  {:<{}} {:>14} {:>18}\n", r.name, width, gib(r.per_gpu), gib(r.checkpoint));
      }
    }
    out << fmt::format("  {:<{}} {:>14}", "total", width, gib(total));
    if (cmp) {
      out << fmt::format(" {:>14} {:>+12}", gib(cmp->header_per_gpu.count()),
                         (cmp->header_per_gpu - cmp->config_per_gpu).count());
    }
    out << "\n";
    if (cmp && stage == 0) {
      for (const auto& diff : cmp->differences) {
        out << fmt::format("  differs: {}: config {} bytes, headers {} bytes\n", diff.unit,
                           diff.config_checkpoint.count(), diff.header_checkpoint.count());
      }
      for (const auto& m : cmp->missing_units) out << "  not in the headers: " << m << "\n";
      for (const auto& t : cmp->unmatched_tensors) out << "  header tensor of no known module (counted whole): " << t << "\n";
    }
  }
  if (o.json) out << json.dump(2) << "\n";
  return 0;
}

}  // namespace gpubudget::cli
