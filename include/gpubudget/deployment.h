// Deployment: the vLLM launch being evaluated, mirroring `vllm serve` arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"

namespace gpubudget {

struct Deployment {
  // --tensor-parallel-size / -tp. Default: 1. Requires >= 1.
  std::int64_t tensor_parallel_size = 1;
  // --pipeline-parallel-size / -pp. Default: 1.
  std::int64_t pipeline_parallel_size = 1;
  // --data-parallel-size / -dp. Default: 1.
  std::int64_t data_parallel_size = 1;
  // --decode-context-parallel-size / -dcp. Default: 1. Divides each rank's KV need for one request.
  std::int64_t decode_context_parallel_size = 1;
  // --enable-expert-parallel. Default: false.
  bool enable_expert_parallel = false;
  // --num-redundant-experts (EPLB): extra physical experts spread with EP; ceil((E + R) / ep) per GPU.
  std::int64_t num_redundant_experts = 0;
  // VLLM_PP_LAYER_PARTITION / --pp-layer-partition: decoder layers per pipeline stage (empty: vLLM's
  // even split). Must have pipeline_parallel_size entries summing to the number of layers.
  std::vector<std::int64_t> pp_layer_partition;
  // --gpu-memory-utilization. Default: the vLLM version's default (0.9 before 0.21, 0.92 after).
  std::optional<double> gpu_memory_utilization;
  // --dtype: "auto" (the checkpoint's dtype) or bfloat16 / float16 / float32 for unquantized weights,
  // activations and an `auto` KV cache.
  std::string dtype = "auto";
  // --kv-cache-dtype: "auto" (default) or an explicit dtype.
  std::string kv_cache_dtype = "auto";
  // --max-model-len: the length to judge; empty or -1 = the model's derived maximum ("auto").
  std::optional<std::int64_t> max_model_len;
  // --max-num-seqs / --max-num-batched-tokens: default from the vLLM version and GPU size.
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
  // --block-size: default from the attention backend vLLM would pick.
  std::optional<std::int64_t> block_size;
  // How vLLM is started: "serve" (`vllm serve`, the OpenAI server) or "llm" (the offline `LLM` class),
  // which have different scheduler defaults.
  std::string entry_point = "serve";
  // --enforce-eager: no CUDA graphs, so no graph memory.
  bool enforce_eager = false;
  // --skip-mm-profiling: vLLM does not run the multimodal encoder in its profile run.
  bool skip_mm_profiling = false;
  // --mamba-cache-mode for hybrid models: "none" (one state per request) or "align" (two, for prefix
  // caching). Default: the vLLM version's.
  std::optional<std::string> mamba_cache_mode;
  // --kv-cache-memory-bytes: bypasses the utilization budget entirely.
  std::optional<Bytes> kv_cache_memory;
};

}  // namespace gpubudget
