// The KV cache of one worker as vLLM's KVCacheSpec describes it: bytes per token and per block of
// each attention layer, blocks that fit a budget, and what one request of a given length needs.
//
// Mirrors vllm/v1/kv_cache_interface.py and vllm/v1/core/kv_cache_utils.py
// (docs/methodology.md §KV cache).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"

namespace gpubudget {

// A resolved --kv-cache-dtype.
struct KvCacheDtype {
  std::string name;            // "bfloat16", "float16", "fp8_e4m3", "fp8_e5m2", "fp8"
  std::int64_t element_bytes;  // 2 or 1
  std::string reason;          // how it was resolved ("checkpoint kv_cache_scheme", "explicit", ...)
};

// vLLM's resolution: an explicit value wins; `auto` takes the checkpoint's KV quantization
// (ModelOpt FP8 → fp8_e4m3; compressed-tensors scheme → fp8) else the model dtype.
// Throws InputError for a value vLLM does not accept.
KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, const std::string& requested);

struct KvCacheLayout {
  std::int64_t block_size = 16;                 // tokens per block
  std::int64_t dcp = 1;                         // decode context parallel size
  std::vector<std::int64_t> layer_token_bytes;  // per attention layer on this worker: bytes per token

  // Σ layers' bytes per token (the per-GPU cost of one more token of context).
  [[nodiscard]] std::int64_t bytes_per_token() const;
  // Bytes of one block summed over the worker's layers.
  [[nodiscard]] std::int64_t block_bytes() const;
  // _check_enough_kv_cache_memory's need for one request of `max_model_len` tokens:
  // Σ layers cdiv(M', B) × page, M' = cdiv(M, dcp). Requires max_model_len >= 0.
  [[nodiscard]] Bytes needed(std::int64_t max_model_len) const;
  // get_kv_cache_config_from_groups: blocks that fit `available` (0 if negative).
  [[nodiscard]] std::int64_t num_blocks(Bytes available) const;
  // Blocks one request of `max_model_len` occupies (cdiv(M', B)).
  [[nodiscard]] std::int64_t blocks_per_request(std::int64_t max_model_len) const;
};

// Per-token bytes of one layer's KV on a worker: full attention 2·max(1, kv/tp)·d·dsz (K and V),
// MLA (kv_lora_rank + qk_rope_head_dim)·dsz, not divided by TP.
std::int64_t layer_kv_bytes_per_token(const AttentionSpec& attention, std::int64_t tp,
                                      std::int64_t dtype_bytes);

KvCacheLayout make_kv_cache_layout(const ModelSpec& model, const ParallelLayout& layout,
                                   std::int64_t dtype_bytes, std::int64_t block_size);

// vLLM's estimate_max_model_len: integer binary search on [1, upper] for the largest M whose need
// fits `available`; 0 if not even one token fits.
std::int64_t largest_fitting_length(const KvCacheLayout& kv, Bytes available, std::int64_t upper);

}  // namespace gpubudget
