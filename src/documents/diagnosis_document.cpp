// diagnosis_json (json_documents.h): the `diagnose --json` document of docs/cli.md.
#include <cmath>

#include "documents/document_text.h"
#include "gpubudget/json_documents.h"

namespace gpubudget {

namespace {

using Json = detail::Document;
constexpr double kGiBd = 1073741824.0;

// Logged and predicted GiB are within ±kMaxLoggedGib (vllm_log.h), far inside 64-bit bytes.
Json bytes_or_null(const std::optional<double>& gib) {
  if (!gib || !(std::fabs(*gib) <= kMaxLoggedGib * 4)) return Json(nullptr);
  return Json(static_cast<std::int64_t>(std::llround(*gib * kGiBd)));
}

}  // namespace

std::string diagnosis_json(const VllmLogFacts& f, const Diagnosis& d) {
  Json j;
  j["schema_version"] = 1;
  j["log"] = f.source;
  j["root_cause"] = d.root_cause;
  j["summary"] = d.sentence;
  j["startup_outcome"] = outcome_name(f.outcome);
  j["vllm_version"] = f.vllm_version ? Json(*f.vllm_version) : Json(nullptr);
  j["model"] = f.model ? Json(*f.model) : Json(nullptr);
  j["max_model_len"] = d.max_model_len ? Json(*d.max_model_len) : Json(nullptr);
  j["needed_kv_cache_bytes"] = bytes_or_null(d.needed_gib);
  j["needed_kv_cache_basis"] = d.needed_gib ? (d.needed_predicted ? "predicted" : "logged") : "";
  j["available_kv_cache_bytes"] = bytes_or_null(d.available_gib);
  j["available_kv_cache_basis"] = d.available_gib ? (d.available_predicted ? "predicted" : "logged") : "";
  j["estimated_max_model_len"] = d.fitting_max_model_len ? Json(*d.fitting_max_model_len) : Json(nullptr);
  j["estimated_max_model_len_basis"] = d.fitting_basis;
  j["remedies"] = d.remedies;
  Json logged;
  auto put = [&logged](const char* key, const auto& v) {
    if (v) logged[key] = *v;
  };
  put("tensor_parallel_size", f.tensor_parallel_size);
  put("pipeline_parallel_size", f.pipeline_parallel_size);
  put("data_parallel_size", f.data_parallel_size);
  put("decode_context_parallel_size", f.decode_context_parallel_size);
  put("gpu_memory_utilization", f.gpu_memory_utilization);
  put("kv_cache_dtype", f.kv_cache_dtype);
  put("block_size", f.block_size);
  put("attention_backend", f.attention_backend);
  put("quantization", f.quantization);
  put("model_loading_gib", f.model_loading_gib);
  put("activation_peak_gib", f.activation_peak_gib);
  put("non_torch_gib", f.non_torch_gib);
  put("cudagraph_gib", f.cudagraph_gib);
  put("available_kv_cache_gib", f.available_kv_cache_gib);
  put("kv_cache_tokens", f.kv_cache_tokens);
  put("max_concurrency", f.max_concurrency);
  put("gpu_blocks", f.gpu_blocks);
  put("error_needed_gib", f.error_needed_gib);
  put("error_available_gib", f.error_available_gib);
  put("error_estimated_max_model_len", f.estimated_max_model_len);
  if (f.out_of_memory) {
    logged["oom_phase"] = f.out_of_memory->phase;
    put("oom_tried_gib", f.out_of_memory->tried_gib);
  }
  j["logged"] = logged.is_null() ? Json::object() : logged;
  Json comparison = Json::array();
  for (const auto& c : d.comparison) {
    comparison.push_back({{"figure", c.figure},
                          {"unit", c.unit},
                          {"logged", c.logged ? Json(*c.logged) : Json(nullptr)},
                          {"predicted", c.predicted ? Json(*c.predicted) : Json(nullptr)},
                          {"basis", c.basis}});
  }
  j["comparison"] = comparison;
  j["gpu"] = d.gpu.empty() ? Json(nullptr) : Json(d.gpu);
  j["notes"] = notice_texts(d.notes);
  j["note_codes"] = notice_code_names(d.notes);
  j["lines"] = f.lines;
  return detail::document_text(j);
}

}  // namespace gpubudget
