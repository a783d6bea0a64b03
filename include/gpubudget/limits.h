// The largest values gpubudget accepts for the settings of a deployment and the sizes of a model,
// and what it does beyond them: an InputError naming the flag (or field), the value and the limit
// (the CLI's exit 3). Each limit is far above what vLLM or any GPU can mean, and low enough that no
// product of them overflows 64-bit arithmetic (byte arithmetic is checked as well: Bytes, bytes.h).
// docs/testing.md lists every limit per input.
#pragma once

#include <cstdint>

#include "gpubudget/bytes.h"

namespace gpubudget {

inline constexpr std::int64_t kMaxTensorParallelSize = 1024;            // --tensor-parallel-size
inline constexpr std::int64_t kMaxPipelineParallelSize = 1024;          // --pipeline-parallel-size
inline constexpr std::int64_t kMaxDataParallelSize = 65536;             // --data-parallel-size
inline constexpr std::int64_t kMaxDecodeContextParallelSize = 1024;     // --decode-context-parallel-size
inline constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 20;    // TP x PP x DP GPUs
inline constexpr std::int64_t kMaxRedundantExperts = 65536;             // --num-redundant-experts
inline constexpr std::int64_t kMaxModelLen = std::int64_t{1} << 34;     // --max-model-len, tokens
inline constexpr std::int64_t kMaxNumSeqs = std::int64_t{1} << 20;      // --max-num-seqs
inline constexpr std::int64_t kMaxBatchedTokens = std::int64_t{1} << 34;  // --max-num-batched-tokens
inline constexpr std::int64_t kMaxBlockSize = std::int64_t{1} << 20;    // --block-size, tokens
inline constexpr std::int64_t kMaxMambaBlockSize = std::int64_t{1} << 20;  // --mamba-block-size, tokens
inline constexpr std::int64_t kMaxNumGpuBlocks = std::int64_t{1} << 34;   // --num-gpu-blocks-override
inline constexpr std::int64_t kMaxSkipLayers = 65536;                    // --kv-cache-dtype-skip-layers entries
inline constexpr Bytes kMaxGpuMemory = Bytes(std::int64_t{1} << 50);    // a GPU's total, 1 PiB
inline constexpr Bytes kMaxKvCacheMemory = Bytes(std::int64_t{1} << 50);  // --kv-cache-memory-bytes

struct Deployment;

// Throws InputError naming the flag, its value and the limit when a setting of `deployment` is beyond
// the limits above (or below 1 where a count must be positive, or a utilization outside (0, 1]).
// fit() and make_parallel_layout() call it first, so that every caller is covered.
void check_deployment_limits(const Deployment& deployment);

}  // namespace gpubudget
