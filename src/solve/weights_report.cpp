// weights_report (weights_report.h): the per-stage units of weight_units(), grouped as `--by` asks,
// with the header comparison of each stage when the checkpoint's headers were read.
#include "gpubudget/weights_report.h"

#include <array>
#include <map>

#include <fmt/format.h>

#include "gpubudget/fit.h"
#include "gpubudget/weight_units.h"

namespace gpubudget {

std::string_view grouping_name(WeightsGrouping grouping) {
  switch (grouping) {
    case WeightsGrouping::kComponent: return "component";
    case WeightsGrouping::kLayer: return "layer";
    case WeightsGrouping::kTensor: return "tensor";
  }
  return "component";
}

namespace {

std::string row_key(const WeightUnit& u, WeightsGrouping by) {
  switch (by) {
    case WeightsGrouping::kComponent: return std::string(component_name(u.component));
    case WeightsGrouping::kLayer:
      if (u.checkpoint_only) return "checkpoint only (MTP)";
      return u.layer >= 0 ? fmt::format("layer {}", u.layer) : "outside the layers";
    case WeightsGrouping::kTensor: return u.name;
  }
  return u.name;
}

// Whether a worker's report lists `u`: what it holds, the units of its own decoder layers, and (on the
// last stage, which the checkpoint's MTP layers follow) the checkpoint-only units. Other stages' units
// are theirs: listing every unit on every stage made a deep pipeline's report quadratic in size.
bool listed_on(const WeightUnit& u, const ParallelLayout& layout) {
  if (u.per_gpu.count() != 0) return true;
  if (u.checkpoint_only) return layout.is_last_stage();
  return u.layer >= layout.first_layer && u.layer < layout.end_layer;
}

// Units grouped by `by`; rows keep the first-seen order (model order).
std::vector<WeightsRow> group_rows(const std::vector<WeightUnit>& units, const HeaderComparison* headers,
                                   WeightsGrouping by, const ParallelLayout& layout) {
  std::vector<WeightsRow> rows;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const WeightUnit& u = units[i];
    if (!listed_on(u, layout)) continue;
    auto [it, inserted] = index.emplace(row_key(u, by), rows.size());
    if (inserted) {
      rows.push_back({it->first, by == WeightsGrouping::kTensor ? std::string(component_name(u.component)) : "",
                      Bytes(0), Bytes(0), Bytes(0)});
    }
    WeightsRow& r = rows[it->second];
    r.per_gpu += u.per_gpu;
    r.checkpoint += u.checkpoint;
    if (headers != nullptr) r.header_per_gpu += headers->header_unit_per_gpu[i];
  }
  return rows;
}

// Per-GPU bytes by component, in Component order, zero entries omitted (as WeightsBreakdown lists them).
std::vector<ComponentBytes> by_component(const std::vector<WeightUnit>& units, const HeaderComparison* headers) {
  std::array<Bytes, kComponentCount> sums{};
  for (std::size_t i = 0; i < units.size(); ++i) {
    sums[static_cast<std::size_t>(units[i].component)] +=
        headers != nullptr ? headers->header_unit_per_gpu[i] : units[i].per_gpu;
  }
  std::vector<ComponentBytes> out;
  for (std::size_t c = 0; c < kComponentCount; ++c) {
    if (sums[c].count() != 0) out.push_back({static_cast<Component>(c), sums[c]});
  }
  return out;
}

}  // namespace

WeightsReport weights_report(const ModelSpec& model, const std::optional<GpuSpec>& gpu, const Deployment& d,
                             const VllmProfile& profile, WeightsGrouping by,
                             const std::optional<CheckpointHeaders>& headers) {
  WeightsReport report;
  report.architecture = model.architecture;
  report.model_type = model.model_type;
  report.family = model.family;
  report.model_source = model.source;
  report.gpu = gpu ? gpu->name : "";
  report.tensor_parallel_size = d.tensor_parallel_size;
  report.pipeline_parallel_size = d.pipeline_parallel_size;
  report.data_parallel_size = d.data_parallel_size;
  report.enable_expert_parallel = d.enable_expert_parallel;
  report.by = by;
  report.checkpoint = checkpoint_bytes(model);
  if (headers) {
    report.read_headers = true;
    report.index_path = headers->index_path;
    report.header_files = static_cast<std::int64_t>(headers->files.size());
    report.header_tensors = headers->tensor_count();
    report.header_tensor_bytes = headers->tensor_bytes();
  }
  report.source = headers ? "safetensors" : "config";
  for (std::int64_t stage = 0; stage < d.pipeline_parallel_size; ++stage) {
    const ParallelLayout layout =
        gpu ? make_worker_layout(model, *gpu, d, profile, stage) : make_parallel_layout(model, d, stage);
    const std::vector<WeightUnit> units = weight_units(model, layout);
    WeightsWorker worker;
    worker.pp_rank = stage;
    worker.first_layer = layout.first_layer;
    worker.end_layer = layout.end_layer;
    if (headers) worker.headers = compare_with_headers(units, *headers);
    const HeaderComparison* cmp = worker.headers ? &*worker.headers : nullptr;
    worker.rows = group_rows(units, cmp, by, layout);
    for (const auto& r : worker.rows) worker.config_per_gpu += r.per_gpu;
    worker.components = by_component(units, cmp);
    const Bytes per_gpu = cmp != nullptr ? cmp->header_per_gpu : worker.config_per_gpu;
    if (report.workers.empty() || per_gpu > report.per_gpu) {
      report.binding = report.workers.size();
      report.per_gpu = per_gpu;
    }
    report.workers.push_back(std::move(worker));
  }
  return report;
}

}  // namespace gpubudget
