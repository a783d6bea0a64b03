// plan_json (json_documents.h): the `plan --json` document of docs/cli.md.
#include "documents/document_text.h"
#include "gpubudget/json_documents.h"

namespace gpubudget {

using detail::Document;

std::string plan_json(const std::vector<PlanAnswer>& answers) {
  Document j = Document::array();
  for (const auto& a : answers) {
    Document row = {{"gpu", a.gpu}, {"found", a.found}};
    if (a.found) {
      row["gpus"] = a.gpus;
      row["tensor_parallel_size"] = a.deployment.tensor_parallel_size;
      row["pipeline_parallel_size"] = a.deployment.pipeline_parallel_size;
      row["decode_context_parallel_size"] = a.deployment.decode_context_parallel_size;
      row["enable_expert_parallel"] = a.deployment.enable_expert_parallel;
      row["max_num_seqs"] = detail::value_or_null(a.deployment.max_num_seqs);
      row["max_concurrency"] = detail::two_decimals(a.concurrency);
      row["weights_bytes"] = a.weights_per_gpu.count();
      row["kv_cache_bytes"] = a.kv_cache_per_gpu.count();
    } else {
      row["why_not"] = a.why_not;
    }
    row["rejected_layouts"] = a.rejected_layouts;
    j.push_back(std::move(row));
  }
  return detail::document_text(j);
}

}  // namespace gpubudget
