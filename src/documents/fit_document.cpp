// fit_json (json_documents.h): the `fit --json` document of docs/cli.md.
#include "documents/document_text.h"
#include "gpubudget/json_documents.h"

namespace gpubudget {

using detail::Document;

std::string fit_json(const FitQuery& q, const FitResult& r, const std::vector<Remedy>& remedies) {
  const WorkerBudget& w = r.binding_worker();
  const GpuSpec& gpu = q.gpus.front();
  const Deployment& d = q.deployment;
  Document j;
  j["schema_version"] = 1;
  j["model"] = {{"architecture", q.model.architecture},
                {"model_type", q.model.model_type},
                {"family", q.model.family},
                {"num_layers", q.model.layers.size()},
                {"attention", attention_mix(q.model)},
                {"derived_max_model_len", q.model.derived_max_model_len},
                {"derived_max_model_len_source", q.model.derived_max_model_len_source},
                {"source", q.model.source}};
  j["deployment"] = {{"gpu", gpu.name},
                     {"gpu_memory_bytes", gpu.memory.count()},
                     {"tensor_parallel_size", d.tensor_parallel_size},
                     {"pipeline_parallel_size", d.pipeline_parallel_size},
                     {"data_parallel_size", d.data_parallel_size},
                     {"decode_context_parallel_size", d.decode_context_parallel_size},
                     {"enable_expert_parallel", d.enable_expert_parallel},
                     {"gpu_memory_utilization", r.gpu_memory_utilization},
                     {"kv_cache_dtype", r.kv_cache_dtype.name},
                     {"kv_cache_dtype_reason", r.kv_cache_dtype.reason},
                     {"block_size", r.block_size},
                     {"attention_backend", detail::string_or_null(r.attention_backend)},
                     {"max_num_seqs", r.scheduler.max_num_seqs},
                     {"max_num_batched_tokens", r.scheduler.max_num_batched_tokens},
                     {"enforce_eager", d.enforce_eager},
                     {"skip_mm_profiling", d.skip_mm_profiling},
                     {"vllm_version", q.vllm_version.empty() ? q.profile.version : q.vllm_version},
                     {"vllm_profile", q.profile.version},
                     {"max_model_len_auto", d.max_model_len_auto},
                     {"hybrid_kv_cache_manager", r.hybrid_kv_cache_manager}};
  // Launch options (docs/cli.md §Launch options): null / false when not used.
  j["deployment"]["speculative_method"] =
      d.speculative.method == SpeculativeMethod::kNone ? Document() : Document(speculative_method_name(d.speculative.method));
  j["deployment"]["num_speculative_tokens"] = d.speculative.num_speculative_tokens;
  j["deployment"]["lora"] = d.lora.enabled ? Document{{"max_loras", d.lora.max_loras},
                                                      {"max_lora_rank", d.lora.max_lora_rank},
                                                      {"lora_dtype", model_dtype_choice_name(d.lora.dtype)},
                                                      {"fully_sharded_loras", d.lora.fully_sharded}}
                                           : Document();
  j["deployment"]["quantization"] =
      d.quantization == OnlineQuantization::kNone ? Document() : Document(online_quantization_name(d.quantization));
  j["deployment"]["cpu_offload_gb"] = d.cpu_offload_gb;
  j["deployment"]["offload_group_size"] = d.offload_group_size;
  j["deployment"]["offload_num_in_group"] = d.offload_num_in_group;
  j["deployment"]["offload_prefetch_step"] = d.offload_prefetch_step;
  j["deployment"]["language_model_only"] = d.language_model_only;
  j["deployment"]["mm_encoder_tp_mode"] = encoder_tp_mode_name(d.mm_encoder_tp_mode);
  j["deployment"]["optimization_level"] = d.optimization_level ? Document(*d.optimization_level) : Document();
  j["deployment"]["cudagraph_mode"] = d.cudagraph_mode.empty() ? Document() : Document(d.cudagraph_mode);
  j["deployment"]["cudagraph_capture_sizes"] = d.cudagraph_capture_sizes.empty() ? Document()
                                                                                 : Document(d.cudagraph_capture_sizes);
  j["deployment"]["max_cudagraph_capture_size"] =
      d.max_cudagraph_capture_size ? Document(*d.max_cudagraph_capture_size) : Document();
  j["deployment"]["mla_disabled"] = d.mla_disabled;
  if (r.hybrid) {
    j["deployment"]["enable_prefix_caching"] = r.prefix_caching;
    j["deployment"]["mamba_cache_mode"] = mamba_cache_mode_name(r.mamba_cache_mode);
    j["deployment"]["mamba_cache_dtype"] = dtype_name(r.mamba_dtypes.conv);
    j["deployment"]["mamba_ssm_cache_dtype"] = dtype_name(r.mamba_dtypes.ssm);
  }
  Document components = Document::array();
  for (const auto& comp : w.weights.components) {
    components.push_back({{"name", component_name(comp.component)}, {"bytes", comp.bytes.count()}});
  }
  j["per_gpu"] = {{"pp_rank", w.pp_rank},
                  {"requested_bytes", w.requested.count()},
                  {"weights_bytes", w.weights.total.count()},
                  {"weights_components", components},
                  {"cpu_offloaded_bytes", w.weights.cpu_offloaded.count()},
                  {"prefetch_buffer_bytes", w.weights.prefetch_buffers.count()},
                  {"activation_peak_bytes", w.overheads.activation_peak.count()},
                  {"encoder_profile_bytes", w.overheads.encoder.pass.count()},
                  {"dequantized_weights_bytes", w.overheads.dequantized_weights.count()},
                  {"non_torch_bytes", w.overheads.non_torch.count()},
                  {"cudagraph_bytes", w.overheads.cudagraph_charged ? w.overheads.cudagraph.count() : 0},
                  {"cudagraph_estimate_bytes", w.overheads.cudagraph.count()},
                  {"kv_cache_bytes", w.kv_cache.count()},
                  {"overhead_relative_uncertainty", w.overheads.relative_uncertainty},
                  {"kv_cache_uncertainty_bytes", r.kv_budget_swing.count()}};
  j["cuda_graphs"] = {{"capture_sizes", r.cuda_graph_capture_sizes},
                      {"piecewise", r.cuda_graphs_piecewise},
                      {"full", r.cuda_graphs_full}};
  // The drafter's KV layers are numbered after the target's decoder layers.
  std::int64_t draft_token_bytes = 0;
  for (const auto& l : w.kv.layers) {
    if (l.index >= static_cast<std::int64_t>(q.model.layers.size())) draft_token_bytes += l.token_bytes.count();
  }
  j["kv_cache"] = {{"bytes_per_token", w.kv.bytes_per_token().count()},
                   {"draft_bytes_per_token", draft_token_bytes},
                   {"block_bytes", w.kv.block_bytes().count()},
                   {"num_blocks", r.num_blocks},
                   {"tokens", r.kv_cache_tokens},
                   {"max_concurrency", detail::two_decimals(r.max_concurrency)}};
  j["max_model_len"] = r.max_model_len;
  j["max_model_len_range"] = {r.max_model_len_low, r.max_model_len_high};
  j["request"] = {{"max_model_len", r.judged_max_model_len},
                  {"needed_bytes", r.needed.count()},
                  {"fits", r.fits},
                  {"kv_fits", r.kv_fits},
                  {"auto_fitted", r.auto_fitted},
                  {"vllm_error", detail::string_or_null(r.vllm_error)}};
  j["vllm_would_start"] = r.vllm_would_start;
  j["start_blocker"] = detail::string_or_null(r.start_blocker);
  Document workers = Document::array();
  for (const auto& wk : r.workers) {
    workers.push_back({{"pp_rank", wk.pp_rank},
                       {"gpu", wk.gpu},
                       {"layers", {wk.first_layer, wk.end_layer}},
                       {"weights_bytes", wk.weights.total.count()},
                       {"kv_cache_bytes", wk.kv_cache.count()},
                       {"num_blocks", wk.num_blocks},
                       {"needed_bytes", wk.needed.count()},
                       {"max_model_len", wk.max_model_len}});
  }
  j["workers"] = workers;
  Document remedy_list = Document::array();
  for (const auto& rem : remedies) {
    remedy_list.push_back({{"change", rem.change},
                           {"flags", rem.flags},
                           {"max_model_len", rem.max_model_len},
                           {"reaches_target", rem.reaches_target},
                           {"vllm_would_start", !rem.blocked},
                           {"caveat", detail::string_or_null(rem.caveat)}});
  }
  j["remedies"] = remedy_list;
  j["warnings"] = notice_texts(r.warnings);
  j["warning_codes"] = notice_code_names(r.warnings);  // docs/warnings.md
  j["notes"] = notice_texts(r.notes);
  j["note_codes"] = notice_code_names(r.notes);
  return detail::document_text(j);
}

}  // namespace gpubudget
