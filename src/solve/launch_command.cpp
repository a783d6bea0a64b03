// The launch line of a fit (launch_command.h).
#include "gpubudget/launch_command.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpubudget {

namespace {

std::int64_t round_down_friendly(std::int64_t tokens) {
  const std::int64_t step = tokens >= 4096 ? 256 : 16;
  return tokens / step * step;
}

}  // namespace

LaunchLength launch_length(const FitResult& r, double margin_percent) {
  if (!r.vllm_would_start) return {0, "vLLM would not start this deployment: " + r.start_blocker};
  if (r.max_model_len == 0) return {0, "no length fits: " + r.vllm_error};
  const double keep = 1.0 - margin_percent / 100.0;
  const WorkerBudget& binding = r.binding_worker();
  const double budget = static_cast<double>(binding.check_memory.count());
  if (r.fits && static_cast<double>(r.needed.count()) <= keep * budget) return {r.judged_max_model_len, ""};
  const std::int64_t edge = r.max_model_len;
  if (margin_percent <= 0) return {edge, ""};
  const std::int64_t lowered = static_cast<std::int64_t>(std::floor(static_cast<double>(edge) * keep));
  const std::int64_t length = std::min(edge, std::max(r.block_size, round_down_friendly(lowered)));
  if (length == edge) return {edge, ""};
  return {length, fmt::format("--max-model-len {} is {:g}% below the largest length gpubudget computes ({}), "
                              "because the overheads it rests on are estimates; --safety-margin 0 prints the edge",
                              length, margin_percent, edge)};
}

std::string vllm_serve_command(const std::string& model, const VllmArguments& given, const Deployment& d,
                               const FitResult& r, std::int64_t max_model_len) {
  std::string line = "vllm serve " + model;
  auto add = [&line](const std::string& flag, const std::string& value) { line += " " + flag + " " + value; };
  if (d.tensor_parallel_size > 1) add("--tensor-parallel-size", std::to_string(d.tensor_parallel_size));
  if (d.pipeline_parallel_size > 1) add("--pipeline-parallel-size", std::to_string(d.pipeline_parallel_size));
  if (d.data_parallel_size > 1) add("--data-parallel-size", std::to_string(d.data_parallel_size));
  if (d.decode_context_parallel_size > 1) {
    add("--decode-context-parallel-size", std::to_string(d.decode_context_parallel_size));
  }
  if (d.enable_expert_parallel) line += " --enable-expert-parallel";
  if (d.num_redundant_experts > 0) {
    line += fmt::format(" --enable-eplb --eplb-config '{{\"num_redundant_experts\": {}}}'", d.num_redundant_experts);
  }
  if (d.dtype != ModelDtypeChoice::kAuto) add("--dtype", std::string(model_dtype_choice_name(d.dtype)));
  if (d.kv_cache_dtype != KvCacheDtypeChoice::kAuto) {
    add("--kv-cache-dtype", std::string(kv_cache_dtype_choice_name(d.kv_cache_dtype)));
  }
  add("--max-model-len", std::to_string(max_model_len));
  add("--gpu-memory-utilization", fmt::format("{}", r.gpu_memory_utilization));
  if (d.max_num_seqs) add("--max-num-seqs", std::to_string(*d.max_num_seqs));
  if (d.max_num_batched_tokens) add("--max-num-batched-tokens", std::to_string(*d.max_num_batched_tokens));
  if (d.block_size) add("--block-size", std::to_string(*d.block_size));
  if (d.enforce_eager) line += " --enforce-eager";
  if (d.skip_mm_profiling) line += " --skip-mm-profiling";
  if (d.kv_cache_memory) add("--kv-cache-memory-bytes", std::to_string(d.kv_cache_memory->count()));
  if (d.enable_prefix_caching) line += *d.enable_prefix_caching ? " --enable-prefix-caching" : " --no-enable-prefix-caching";
  if (d.mamba_cache_mode) add("--mamba-cache-mode", std::string(mamba_cache_mode_name(*d.mamba_cache_mode)));
  if (d.mamba_cache_dtype != MambaDtypeChoice::kAuto) {
    add("--mamba-cache-dtype", std::string(mamba_dtype_choice_name(d.mamba_cache_dtype)));
  }
  if (d.mamba_ssm_cache_dtype != MambaDtypeChoice::kAuto) {
    add("--mamba-ssm-cache-dtype", std::string(mamba_dtype_choice_name(d.mamba_ssm_cache_dtype)));
  }
  if (d.mamba_block_size) add("--mamba-block-size", std::to_string(*d.mamba_block_size));
  if (d.num_gpu_blocks_override) add("--num-gpu-blocks-override", std::to_string(*d.num_gpu_blocks_override));
  if (!d.kv_cache_dtype_skip_layers.empty()) {
    add("--kv-cache-dtype-skip-layers", fmt::format("{}", fmt::join(d.kv_cache_dtype_skip_layers, " ")));
  }
  if (d.disable_hybrid_kv_cache_manager) {
    line += *d.disable_hybrid_kv_cache_manager ? " --disable-hybrid-kv-cache-manager"
                                               : " --no-disable-hybrid-kv-cache-manager";
  }
  if (!given.kv_transfer_config.empty()) add("--kv-transfer-config", "'" + given.kv_transfer_config + "'");
  if (!given.kv_offloading_size.empty()) add("--kv-offloading-size", given.kv_offloading_size);
  if (!given.kv_offloading_backend.empty()) add("--kv-offloading-backend", given.kv_offloading_backend);
  line += launch_options_for_vllm(given.launch);
  // The other VLLM_* variables the launch gave (MLA off, all-to-all sizes, the CUDA-graph estimate, ...), as
  // given: without them the command would launch another deployment.
  std::string environment;
  for (const auto& assignment : given.vllm_env) {
    const std::string var = assignment.substr(0, assignment.find('='));
    if (var == "VLLM_PP_LAYER_PARTITION" || var == "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE") continue;
    environment += assignment + " ";
  }
  line = environment + line;
  if (d.allow_chunked_local_attn_with_hybrid_kv_cache) {
    line = fmt::format("VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE={} {}",
                       *d.allow_chunked_local_attn_with_hybrid_kv_cache ? 1 : 0, line);
  }
  if (!d.pp_layer_partition.empty()) {
    line = fmt::format("VLLM_PP_LAYER_PARTITION={} {}", fmt::join(d.pp_layer_partition, ","), line);
  }
  return line;
}

std::string vllm_serve_caveat(const Deployment& d) {
  if (d.entry_point != EntryPoint::kLlm) return "";
  return "--entry-point llm: the offline LLM class takes these settings as keyword arguments "
         "(LLM(model=..., max_model_len=...)); launched with `vllm serve` the deployment gets the server's "
         "scheduler defaults instead";
}

}  // namespace gpubudget
