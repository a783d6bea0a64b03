// weights_json (json_documents.h): the `weights --json` document of docs/cli.md.
#include "documents/document_text.h"
#include "gpubudget/json_documents.h"

namespace gpubudget {

using detail::Document;

namespace {

Document components_document(const std::vector<ComponentBytes>& components) {
  Document out = Document::array();
  for (const auto& c : components) out.push_back({{"name", component_name(c.component)}, {"bytes", c.bytes.count()}});
  return out;
}

Document headers_document(const HeaderComparison& cmp) {
  Document h;
  h["weights_bytes"] = cmp.header_per_gpu.count();
  h["difference_bytes"] = (cmp.header_per_gpu - cmp.config_per_gpu).count();
  h["checkpoint_bytes"] = cmp.header_checkpoint.count();
  h["config_checkpoint_bytes"] = cmp.config_checkpoint.count();
  h["differences"] = Document::array();
  for (const auto& diff : cmp.differences) {
    h["differences"].push_back({{"unit", diff.unit},
                                {"config_bytes", diff.config_checkpoint.count()},
                                {"header_bytes", diff.header_checkpoint.count()}});
  }
  h["missing_units"] = cmp.missing_units;
  h["unmatched_tensors"] = cmp.unmatched_tensors;
  h["unmatched_bytes"] = cmp.unmatched_bytes.count();
  return h;
}

}  // namespace

std::string weights_json(const WeightsReport& report) {
  Document j;
  j["model"] = {{"architecture", report.architecture},
                {"model_type", report.model_type},
                {"family", report.family},
                {"source", report.model_source}};
  j["parallel"] = {{"tensor_parallel_size", report.tensor_parallel_size},
                   {"pipeline_parallel_size", report.pipeline_parallel_size},
                   {"data_parallel_size", report.data_parallel_size},
                   {"enable_expert_parallel", report.enable_expert_parallel}};
  j["gpu"] = detail::string_or_null(report.gpu);
  j["by"] = grouping_name(report.by);
  j["checkpoint_bytes"] = report.checkpoint.count();
  j["workers"] = Document::array();
  for (const WeightsWorker& w : report.workers) {
    Document worker;
    worker["pp_rank"] = w.pp_rank;
    worker["layers"] = {w.first_layer, w.end_layer};
    worker["weights_bytes"] = w.config_per_gpu.count();
    Document rows = Document::array();
    for (const auto& r : w.rows) {
      Document row = {{"name", r.name}};
      if (!r.component.empty()) row["component"] = r.component;
      row["bytes"] = r.per_gpu.count();
      row["checkpoint_bytes"] = r.checkpoint.count();
      if (w.headers) row["header_bytes"] = r.header_per_gpu.count();
      rows.push_back(std::move(row));
    }
    worker["rows"] = std::move(rows);
    if (w.headers) worker["headers"] = headers_document(*w.headers);
    j["workers"].push_back(std::move(worker));
  }
  // The fields fixed by the command-line contract: the binding worker's weights and components, and
  // where they come from.
  const WeightsWorker& binding = report.workers.at(report.binding);
  j["per_gpu"] = {{"pp_rank", binding.pp_rank},
                  {"weights_bytes", report.per_gpu.count()},
                  {"config_weights_bytes", binding.config_per_gpu.count()}};
  j["components"] = components_document(binding.components);
  j["source"] = report.source;
  return detail::document_text(j);
}

}  // namespace gpubudget
