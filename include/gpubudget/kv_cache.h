// The KV cache of one worker as vLLM's KVCacheSpec / KV-cache groups describe it: bytes per token and
// per block of each attention layer, how layers are grouped, the blocks a budget holds, and what one
// request of a given length needs.
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
  std::string name;            // "bfloat16", "float16", "fp8_e4m3", "fp8_e5m2", "fp8", "fp8_ds_mla"
  std::int64_t element_bytes;  // 2 or 1
  std::string reason;          // how it was resolved ("checkpoint kv_cache_scheme", "explicit", ...)
};

// vLLM's resolution: an explicit value wins; `auto` takes the checkpoint's KV quantization
// (ModelOpt FP8 → fp8_e4m3; compressed-tensors scheme → fp8) else the model dtype. Does not throw.
KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, KvCacheDtypeChoice requested);

// One KV layer of a worker (vLLM: one entry of the KV-cache spec dict).
struct KvLayer {
  AttentionKind kind = AttentionKind::kFull;
  Bytes token_bytes;              // per token per layer on this worker (0 for kMamba)
  std::int64_t block_size = 16;   // tokens per block, after hybrid page unification
  std::int64_t window = 0;        // sliding window / chunk size, tokens
  Bytes state_bytes;              // kMamba: one request's state, padded to the attention page
  std::int64_t state_blocks = 1;  // kMamba: pages one request holds (1 + spec tokens; 2 in `align` mode)

  [[nodiscard]] Bytes page_bytes() const {
    return kind == AttentionKind::kMamba ? state_bytes : token_bytes * block_size;
  }
  // KVCacheSpec.max_memory_usage_bytes: the worst case of one request of `max_model_len` tokens.
  //   full / MLA:  cdiv(M', B)·page, M' = cdiv(M, dcp)
  //   sliding W:   (cdiv(min(W − 1 + T, M), B) + 1)·page
  //   chunked C:   cdiv(min(C + T, M), B)·page
  //   mamba:       state_blocks·page (mamba_cache_mode none: 1, align: 2)
  [[nodiscard]] Bytes max_memory_usage(std::int64_t max_model_len, std::int64_t max_num_batched_tokens,
                                       std::int64_t dcp) const;
  [[nodiscard]] bool grows_with_length() const {
    return kind == AttentionKind::kFull || kind == AttentionKind::kMla;
  }
  friend bool operator==(const KvLayer&, const KvLayer&) = default;
};

// How vLLM groups the worker's KV layers (get_kv_cache_groups).
enum class KvGrouping {
  kEmpty,        // no KV layers (attention-free model)
  kSingleGroup,  // every layer has the same spec
  kUniformType,  // same kind of spec and block size, different page sizes (UniformTypeKVCacheSpecs)
  kHybrid,       // different kinds: pages unified, layers split into groups of `group_size`
};

struct KvGroup {
  KvLayer spec;
  std::int64_t num_layers = 0;  // ≤ group_size (the rest is padding)
};

struct KvCacheLayout {
  std::int64_t dcp = 1;
  std::int64_t max_num_batched_tokens = 0;  // T, for sliding-window and chunked needs
  std::vector<KvLayer> layers;
  KvGrouping grouping = KvGrouping::kEmpty;
  std::vector<KvGroup> groups;   // kHybrid: the groups; otherwise one entry describing all layers
  std::int64_t group_size = 0;   // layers per group (= number of layers unless hybrid)
  Bytes page_bytes;              // kHybrid: the unified page; kUniformType: Σ pages; else one layer's page

  // Σ bytes per token of the layers whose cache grows with length (full attention and MLA).
  [[nodiscard]] Bytes bytes_per_token() const;
  // Bytes one block costs across all layers (kSingleGroup / kUniformType) or across the layers of
  // every group sharing a block index (kHybrid: group_size × page per group).
  [[nodiscard]] Bytes block_bytes() const;
  // _check_enough_kv_cache_memory's need for one request of `max_model_len` tokens on this worker.
  [[nodiscard]] Bytes needed(std::int64_t max_model_len) const;
  // get_kv_cache_config_from_groups: blocks that fit `available` (0 if not positive).
  [[nodiscard]] std::int64_t num_blocks(Bytes available) const;
  // _report_kv_cache_config: blocks one request of `max_model_len` occupies across groups.
  [[nodiscard]] std::int64_t blocks_per_request(std::int64_t max_model_len) const;
  // Number of KV-cache groups and their smallest block size (the pre-0.21 token report).
  [[nodiscard]] std::int64_t num_groups() const;
  [[nodiscard]] std::int64_t min_block_size() const;
  // The attention block size in effect (raised for hybrid models); 0 without attention layers.
  [[nodiscard]] std::int64_t attention_block_size() const;
};

// Per-token bytes of one cache of a layer on a worker: full attention 2·max(1, kv/tp)·d·dsz (K and V),
// MLA (kv_lora_rank + qk_rope_head_dim)·dsz not divided by TP (656 B in the fp8_ds_mla layout), or the
// cache's fixed size.
Bytes layer_kv_bytes_per_token(const AttentionSpec& attention, std::int64_t tp, const KvCacheDtype& dtype);

// Builds the worker's KV layers and groups them as vLLM does. Throws InputError when vLLM cannot
// unify the page sizes (a smaller page that does not divide the largest).
// `mamba_cache_mode`: how many state pages one request of a hybrid model holds.
// With Mamba layers the attention block size is raised so that an attention page holds a state
// (Platform._align_hybrid_block_size) and the state is padded to the page.
KvCacheLayout make_kv_cache_layout(const ModelSpec& model, const ParallelLayout& layout, const KvCacheDtype& dtype,
                                   std::int64_t block_size, std::int64_t max_num_batched_tokens,
                                   MambaCacheMode mamba_cache_mode = MambaCacheMode::kNone);

// vLLM's estimate_max_model_len: integer binary search on [1, upper] for the largest M whose need fits
// `available`; 0 if not even one token fits. Requires needed() non-decreasing in M.
std::int64_t largest_fitting_length(const KvCacheLayout& kv, Bytes available, std::int64_t upper);

}  // namespace gpubudget
