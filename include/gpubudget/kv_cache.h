// The KV cache of one worker as vLLM's KVCacheSpec / KV-cache groups describe it: bytes per token and
// per block of each attention layer, how layers are grouped, the blocks a budget holds, and what one
// request of a given length needs.
//
// Mirrors vllm/v1/kv_cache_interface.py and vllm/v1/core/kv_cache_utils.py
// (docs/methodology.md §KV cache). The version-dependent rules come from KvCacheRules (vllm_profile.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/notice.h"
#include "gpubudget/parallel_layout.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

// How a KV dtype lays out one head's K or V of one token.
enum class KvElementLayout {
  kPlain,          // head_size values of element_bytes
  kPerTokenHead,   // head_size values of 1 byte + one fp32 scale (int8/fp8_per_token_head)
  kNvfp4,          // head_size/2 bytes of FP4 pairs + head_size/16 fp8 block scales
  kFp8DsMla,       // FlashMLA-sparse's MLA layout: 512 fp8 + 4 fp32 scales + 64 bf16 rope = 656 B
};

// A resolved --kv-cache-dtype.
struct KvCacheDtype {
  std::string name;            // "bfloat16", "float16", "fp8_e4m3", "fp8_e5m2", "fp8", "fp8_ds_mla", "nvfp4"...
  std::int64_t element_bytes;  // bytes per stored value: 4, 2 or 1 (FP4 pairs count 1 per two)
  std::string reason;          // how it was resolved ("checkpoint kv_cache_scheme", "explicit", ...)
  KvElementLayout layout = KvElementLayout::kPlain;
  std::optional<Notice> warning = {};  // what vLLM warns about while resolving it
};

// The KV dtype named `name` ("bfloat16", "fp8", "nvfp4", ...), with `reason`.
KvCacheDtype kv_cache_dtype_named(const std::string& name, std::string reason);

// vLLM's resolution of --kv-cache-dtype for this version: an explicit value wins (except a
// compressed-tensors kv_cache_scheme in 0.15-0.21, which forces fp8); `auto` takes the checkpoint's
// KV quantization where `rules` says the version reads it, else the model dtype. Does not throw.
KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, KvCacheDtypeChoice requested, const KvCacheRules& rules);
// The same with the newest rules (KvCacheRules' defaults).
KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, KvCacheDtypeChoice requested);

// One KV layer of the model (vLLM: one entry of the KV-cache spec dict).
struct KvLayer {
  std::int64_t index = 0;         // decoder layer it belongs to (for pipeline stages)
  AttentionKind kind = AttentionKind::kFull;
  Bytes token_bytes;              // per token per layer on one rank (0 for kMamba); per stored entry when compressed
  std::int64_t block_size = 16;   // tokens per block, after hybrid page unification
  std::int64_t registered_block_size = 16;  // tokens per block the layer registered (before unification)
  std::int64_t window = 0;        // sliding window / chunk size, tokens
  Bytes state_bytes;              // kMamba: one state, padded to the attention page
  // kMamba: pages one request holds: 1 (`none`), 2 (`align`); 0 in `all` mode = cdiv(M, mamba_block_size).
  std::int64_t state_blocks = 1;
  std::int64_t mamba_block_size = 0;  // kMamba `all` mode: tokens per cached state
  // kMamba with speculative decoding: MambaSpec.num_speculative_blocks, one more page per draft token.
  std::int64_t speculative_blocks = 0;
  // DeepSeek-V4's caches (AttentionSpec::compress_ratio): block_size / compress_ratio entries per page,
  // the page rounded up to `alignment` bytes; `padded_page` > 0 when grouping padded it to a full-MLA
  // page (page_size_padded); `mla_window`: a SlidingWindowMLASpec.
  std::int64_t compress_ratio = 1;
  std::int64_t alignment = 0;
  Bytes padded_page;
  bool mla_window = false;

  // The page of `tokens` tokens per block (page_size_bytes).
  [[nodiscard]] Bytes page_at(std::int64_t tokens) const;
  [[nodiscard]] Bytes page_bytes() const { return page_at(block_size); }
  // KVCacheSpec.max_memory_usage_bytes: the worst case of one request of `max_model_len` tokens.
  //   full / MLA:  cdiv(M', B)·page, M' = cdiv(M, dcp)
  //   sliding W:   (cdiv(min(W − 1 + T, M), B) + 1)·page
  //   chunked C:   cdiv(min(C + T, M), B)·page
  //   mamba:       state_blocks·page (none: 1, align: 2, all: cdiv(M, mamba_block_size))
  [[nodiscard]] Bytes max_memory_usage(std::int64_t max_model_len, std::int64_t max_num_batched_tokens,
                                       std::int64_t dcp) const;
  // The same for the spec as the layer registered it (before page unification).
  [[nodiscard]] Bytes registered_max_memory_usage(std::int64_t max_model_len, std::int64_t max_num_batched_tokens,
                                                  std::int64_t dcp) const;
  [[nodiscard]] bool grows_with_length() const {
    return kind == AttentionKind::kFull || kind == AttentionKind::kMla;
  }
  // Same spec (vLLM buckets layers by spec equality); the layer index is not part of the spec.
  [[nodiscard]] bool same_spec(const KvLayer& other) const;
};

// How vLLM groups the KV layers (get_kv_cache_groups).
enum class KvGrouping {
  kEmpty,        // no KV layers (attention-free model)
  kSingleGroup,  // every layer has the same spec
  kUniformType,  // same kind of spec and block size, different page sizes (UniformTypeKVCacheSpecs)
  kHybrid,       // different kinds: pages unified, layers split into groups of `group_size`
  // DeepSeek-V4 (group_and_unify_kv_cache_specs): several groups of UniformTypeKVCacheSpecs sharing one
  // pool whose block holds `layer_tuples` tuples of every full-MLA page size.
  kUniformGroups,
};

struct KvGroup {
  KvLayer spec;
  std::int64_t num_layers = 0;     // of this group on this worker (≤ group_size; the rest is padding)
  std::int64_t global_layers = 0;  // of this group in the whole model
  std::vector<KvLayer> members;    // kUniformGroups: this worker's layers of the group, pages padded
  // kUniformGroups: UniformTypeKVCacheSpecs.max_memory_usage_pages for one request of `max_model_len`.
  [[nodiscard]] std::int64_t max_pages(std::int64_t max_model_len, std::int64_t max_num_batched_tokens,
                                       std::int64_t dcp) const;
  [[nodiscard]] Bytes member_pages() const;  // Σ members' pages (UniformTypeKVCacheSpecs.page_size_bytes)
};

// What shapes the KV cache besides the model and the parallel layout (fit() resolves it from the
// deployment and the vLLM profile).
struct KvCacheSettings {
  KvCacheDtype dtype;
  KvCacheDtype skip_dtype;          // the dtype of --kv-cache-dtype-skip-layers layers (the model's)
  std::int64_t block_size = 16;     // attention block size (after hybrid alignment)
  std::int64_t max_num_batched_tokens = 0;
  KvNeedRule need = KvNeedRule::kWorkerGroups;
  double hybrid_group_ratio = 1.5;
  bool unify_page_sizes = true;
  // False: the hybrid KV cache manager is off; sliding-window and chunked layers become full attention
  // (unify_hybrid_kv_cache_specs).
  bool hybrid_manager = true;
  std::vector<std::int64_t> skip_layers;  // decoder layer indices whose KV stays in skip_dtype
  bool skip_sliding_window = false;       // "sliding_window" in --kv-cache-dtype-skip-layers
  // Mamba layers: the padded state page (block_size x attention bytes per token), the pages one request
  // holds (1, 2, or 0 for cdiv(M, mamba_block_size)), and each layer's unpadded state bytes come from
  // `mamba_state_bytes` per layer index (filled by fit()).
  Bytes mamba_state_page;
  std::int64_t mamba_state_blocks = 1;
  std::int64_t mamba_block_size = 0;
  std::int64_t mamba_speculative_blocks = 0;  // num_speculative_tokens with speculative decoding
};

struct KvCacheLayout {
  std::int64_t dcp = 1;
  std::int64_t max_num_batched_tokens = 0;  // T, for sliding-window and chunked needs
  KvNeedRule need = KvNeedRule::kWorkerGroups;
  std::vector<KvLayer> layers;      // this worker's KV layers
  std::vector<KvLayer> all_layers;  // every KV layer of the model (all pipeline stages)
  KvGrouping grouping = KvGrouping::kEmpty;
  std::vector<KvGroup> groups;      // the model's groups (kHybrid), or one entry describing all layers
  std::int64_t group_size = 0;      // this worker's: the most layers any group has on it
  std::int64_t global_group_size = 0;
  Bytes page_bytes;                 // kHybrid: the unified page; kUniformType: Σ pages here; else one page
  // kUniformGroups (_get_kv_cache_config_deepseek_v4): Σ of the full-MLA group's distinct page sizes, and
  // the tuples one block holds (the longest run of one page size in any group); page_bytes = the former.
  Bytes layer_tuple_bytes;
  std::int64_t layer_tuples = 0;

  // Σ bytes per token of this worker's layers whose cache grows with length (full attention and MLA);
  // kUniformGroups: a block's bytes per token of the full-MLA block, rounded up.
  [[nodiscard]] Bytes bytes_per_token() const;
  // Bytes one block costs on this worker: Σ pages (kUniformType), group_size × page, or (kUniformGroups)
  // layer_tuples × layer_tuple_bytes.
  [[nodiscard]] Bytes block_bytes() const;
  // _check_enough_kv_cache_memory's need for one request of `max_model_len` tokens, by `need`:
  //   kPerLayerSum        Σ this worker's layers' max_memory_usage (as registered)
  //   kGlobalFirstGroup   global_group_size · page · cdiv(first group's need, page) (kUniformType: Σ all layers)
  //   kWorkerFirstGroup   group_size · page · cdiv(first group's need, page) (kUniformType: Σ this worker's)
  //   kWorkerGroups       group_size · page · Σ_groups cdiv(need, page)       (kUniformType: Σ this worker's)
  //   kUniformGroups:     layer_tuples · layer_tuple_bytes · Σ_groups max_pages, whatever `need`
  [[nodiscard]] Bytes needed(std::int64_t max_model_len) const;
  // get_kv_cache_config_from_groups: blocks that fit `available` (0 if not positive).
  [[nodiscard]] std::int64_t num_blocks(Bytes available) const;
  // get_max_concurrency_for_kv_cache_config: blocks one request of `max_model_len` occupies.
  [[nodiscard]] std::int64_t blocks_per_request(std::int64_t max_model_len) const;
  // Number of KV-cache groups and their smallest block size (the pre-0.21 token report; DeepSeek-V4's
  // compressor-state groups count, 4 tokens).
  [[nodiscard]] std::int64_t num_groups() const;
  [[nodiscard]] std::int64_t min_block_size() const;
  // The attention block size in effect (raised for hybrid models); 0 without attention layers.
  [[nodiscard]] std::int64_t attention_block_size() const;
};

// Per-token bytes of one cache of a layer on a rank: full attention max(1, kv/tp) heads of K and V,
// MLA one latent vector (kv_lora_rank + qk_rope_head_dim) not divided by TP, or the cache's fixed size.
Bytes layer_kv_bytes_per_token(const AttentionSpec& attention, std::int64_t tp, const KvCacheDtype& dtype);

// Builds every KV layer of the model, groups them as vLLM does (get_kv_cache_groups) and projects the
// groups onto the worker holding `layout`'s layers. `mamba_state_bytes[i]` is the unpadded state of
// decoder layer i (0 for non-Mamba layers; may be empty without Mamba layers). Throws InputError when
// vLLM refuses the specs (page sizes that cannot be unified; the hybrid manager off with Mamba layers).
KvCacheLayout make_kv_cache_layout(const ModelSpec& model, const ParallelLayout& layout, const KvCacheSettings& settings,
                                   const std::vector<Bytes>& mamba_state_bytes = {});

// vLLM's estimate_max_model_len: integer binary search on [1, upper] for the largest M whose need fits
// `available`; 0 if not even one token fits. Requires needed() non-decreasing in M.
std::int64_t largest_fitting_length(const KvCacheLayout& kv, Bytes available, std::int64_t upper);

}  // namespace gpubudget
