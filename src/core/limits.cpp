// check_deployment_limits (limits.h).
#include "gpubudget/limits.h"

#include <fmt/format.h>

#include "gpubudget/deployment.h"
#include "gpubudget/error.h"

namespace gpubudget {

namespace {

void in_range(std::string_view flag, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min || value > max) {
    throw InputError(fmt::format("{} {}: expected a value from {} to {}", flag, value, min, max));
  }
}

}  // namespace

void check_deployment_limits(const Deployment& d) {
  in_range("--tensor-parallel-size", d.tensor_parallel_size, 1, kMaxTensorParallelSize);
  in_range("--pipeline-parallel-size", d.pipeline_parallel_size, 1, kMaxPipelineParallelSize);
  in_range("--data-parallel-size", d.data_parallel_size, 1, kMaxDataParallelSize);
  in_range("--decode-context-parallel-size", d.decode_context_parallel_size, 1, kMaxDecodeContextParallelSize);
  // Each factor is bounded above, so the product cannot wrap.
  const std::int64_t world = d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size;
  if (world > kMaxWorldSize) {
    throw InputError(fmt::format("--tensor-parallel-size {} x --pipeline-parallel-size {} x --data-parallel-size {} = "
                                 "{} GPUs: expected at most {}",
                                 d.tensor_parallel_size, d.pipeline_parallel_size, d.data_parallel_size, world,
                                 kMaxWorldSize));
  }
  in_range("--num-redundant-experts", d.num_redundant_experts, 0, kMaxRedundantExperts);
  if (static_cast<std::int64_t>(d.pp_layer_partition.size()) > kMaxPipelineParallelSize) {
    throw InputError(fmt::format("--pp-layer-partition: {} entries, expected at most {}", d.pp_layer_partition.size(),
                                 kMaxPipelineParallelSize));
  }
  for (const auto layers : d.pp_layer_partition) in_range("--pp-layer-partition", layers, 1, kMaxModelLen);
  if (d.gpu_memory_utilization && !(*d.gpu_memory_utilization > 0.0 && *d.gpu_memory_utilization <= 1.0)) {
    throw InputError(fmt::format("--gpu-memory-utilization: expected a value in (0, 1], got {}",
                                 *d.gpu_memory_utilization));
  }
  if (d.max_model_len) in_range("--max-model-len", *d.max_model_len, 1, kMaxModelLen);
  in_range("--offload-group-size", d.offload_group_size, 0, std::int64_t{1} << 20);
  in_range("--offload-prefetch-step", d.offload_prefetch_step, 1, std::int64_t{1} << 20);
  // OffloadConfig: 1 <= offload_num_in_group <= offload_group_size when a group size is set.
  in_range("--offload-num-in-group", d.offload_num_in_group, 1,
           d.offload_group_size > 0 ? d.offload_group_size : std::int64_t{1} << 20);
  if (d.max_num_seqs) in_range("--max-num-seqs", *d.max_num_seqs, 1, kMaxNumSeqs);
  if (d.max_num_batched_tokens) in_range("--max-num-batched-tokens", *d.max_num_batched_tokens, 1, kMaxBatchedTokens);
  if (d.block_size) in_range("--block-size", *d.block_size, 1, kMaxBlockSize);
  if (d.mamba_block_size) in_range("--mamba-block-size", *d.mamba_block_size, 1, kMaxMambaBlockSize);
  if (d.num_gpu_blocks_override) {
    in_range("--num-gpu-blocks-override", *d.num_gpu_blocks_override, 1, kMaxNumGpuBlocks);
  }
  if (static_cast<std::int64_t>(d.kv_cache_dtype_skip_layers.size()) > kMaxSkipLayers) {
    throw InputError(fmt::format("--kv-cache-dtype-skip-layers: {} entries, expected at most {}",
                                 d.kv_cache_dtype_skip_layers.size(), kMaxSkipLayers));
  }
  if (d.kv_cache_memory) in_range("--kv-cache-memory-bytes", d.kv_cache_memory->count(), 0, kMaxKvCacheMemory.count());
}

}  // namespace gpubudget
