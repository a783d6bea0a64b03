// sweep_json (json_documents.h): the `sweep --format json` document of docs/cli.md.
#include "documents/document_text.h"
#include "gpubudget/json_documents.h"

namespace gpubudget {

using detail::Document;

namespace {

// An error message without the model file's name in front (every row would repeat it).
std::string without_source(const std::string& error, const std::string& source) {
  if (error.rfind(source + ": ", 0) == 0) return error.substr(source.size() + 2);
  return error;
}

// The row's deployment as `fit --json` names it (resolved values where vLLM would run it).
Document deployment_document(const SweepRow& r, const std::string& vllm_version) {
  const Deployment& d = r.deployment;
  Document j = {{"gpu", r.gpu},
                {"gpu_memory_bytes", r.gpu_memory.count()},
                {"tensor_parallel_size", d.tensor_parallel_size},
                {"pipeline_parallel_size", d.pipeline_parallel_size},
                {"data_parallel_size", d.data_parallel_size},
                {"decode_context_parallel_size", d.decode_context_parallel_size},
                {"enable_expert_parallel", d.enable_expert_parallel}};
  if (r.valid) {
    j["gpu_memory_utilization"] = r.gpu_memory_utilization;
    j["kv_cache_dtype"] = r.kv_cache_dtype;
    j["block_size"] = r.block_size;
  } else {
    j["gpu_memory_utilization"] = detail::value_or_null(d.gpu_memory_utilization);
    j["kv_cache_dtype"] = std::string(kv_cache_dtype_choice_name(d.kv_cache_dtype));
  }
  j["vllm_version"] = vllm_version;
  return j;
}

}  // namespace

std::string sweep_json(const ModelSpec& model, const std::vector<SweepRow>& rows, std::int64_t target_len,
                       const std::string& vllm_version) {
  Document j = Document::array();
  for (const auto& r : rows) {
    const Deployment& d = r.deployment;
    Document row = {{"gpu", r.gpu},
                    {"tensor_parallel_size", d.tensor_parallel_size},
                    {"pipeline_parallel_size", d.pipeline_parallel_size},
                    {"decode_context_parallel_size", d.decode_context_parallel_size},
                    {"kv_cache_dtype", r.valid ? r.kv_cache_dtype : std::string(kv_cache_dtype_choice_name(d.kv_cache_dtype))},
                    {"gpu_memory_utilization", detail::value_or_null(d.gpu_memory_utilization)},
                    {"max_num_seqs", detail::value_or_null(d.max_num_seqs)},
                    {"valid", r.valid},
                    {"error", r.valid ? Document(nullptr) : Document(without_source(r.error, model.source))}};
    if (r.valid) {
      row["max_model_len"] = r.max_model_len;
      row["kv_cache_tokens"] = r.kv_cache_tokens;
      row["target_len"] = target_len;
      row["concurrency_at_target"] = detail::two_decimals(r.concurrency_at_target);
      row["weights_bytes"] = r.weights_per_gpu.count();
      row["kv_cache_bytes"] = r.kv_cache_per_gpu.count();
      row["vllm_would_start"] = r.starts;
      row["warnings"] = notice_texts(r.warnings);
      row["warning_codes"] = notice_code_names(r.warnings);
    }
    row["deployment"] = deployment_document(r, vllm_version);
    j.push_back(std::move(row));
  }
  return detail::document_text(j);
}

}  // namespace gpubudget
