// KV-cache specs and block arithmetic (vllm/v1/kv_cache_interface.py, vllm/v1/core/kv_cache_utils.py).
#include "gpubudget/kv_cache.h"

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget {

KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, const std::string& requested) {
  if (requested == "auto") {
    const auto& q = model.quantization;
    if (q.kv_cache_dtype == "fp8_e4m3") {
      return {"fp8_e4m3", 1, fmt::format("auto: the checkpoint's {}", q.kv_cache_declaration)};
    }
    if (q.kv_cache_dtype == "fp8") {
      return {"fp8", 1, fmt::format("auto: the checkpoint's compressed-tensors {}", q.kv_cache_declaration)};
    }
    switch (model.dtype) {
      case Dtype::kFloat16: return {"float16", 2, "auto: the model dtype"};
      case Dtype::kFloat32: return {"float32", 4, "auto: the model dtype"};
      default: return {"bfloat16", 2, "auto: the model dtype"};
    }
  }
  if (requested == "bfloat16" || requested == "float16") return {requested, 2, "--kv-cache-dtype"};
  if (requested == "fp8" || requested == "fp8_e4m3" || requested == "fp8_e5m2") {
    return {requested, 1, "--kv-cache-dtype"};
  }
  throw InputError(fmt::format("--kv-cache-dtype: unsupported value \"{}\" (expected auto, bfloat16, float16, fp8, "
                               "fp8_e4m3 or fp8_e5m2)",
                               requested));
}

std::int64_t layer_kv_bytes_per_token(const AttentionSpec& a, std::int64_t tp, std::int64_t dtype_bytes) {
  switch (a.kind) {
    case AttentionKind::kMla:
      // One latent vector per token, the same on every TP rank (ModelConfig.get_num_kv_heads → 1).
      return a.head_dim * dtype_bytes;
    case AttentionKind::kFull: {
      const std::int64_t heads = std::max<std::int64_t>(1, a.num_key_value_heads / tp);
      return heads * (a.head_dim + a.head_dim_v) * dtype_bytes;
    }
  }
  return 0;
}

KvCacheLayout make_kv_cache_layout(const ModelSpec& model, const ParallelLayout& layout, std::int64_t dtype_bytes,
                                   std::int64_t block_size) {
  KvCacheLayout kv;
  kv.block_size = block_size;
  kv.dcp = layout.dcp;
  for (std::int64_t i = layout.first_layer; i < layout.end_layer; ++i) {
    kv.layer_token_bytes.push_back(
        layer_kv_bytes_per_token(model.layers[static_cast<std::size_t>(i)].attention, layout.tp, dtype_bytes));
  }
  return kv;
}

std::int64_t KvCacheLayout::bytes_per_token() const {
  std::int64_t sum = 0;
  for (const auto b : layer_token_bytes) sum += b;
  return sum;
}

std::int64_t KvCacheLayout::block_bytes() const { return bytes_per_token() * block_size; }

std::int64_t KvCacheLayout::blocks_per_request(std::int64_t max_model_len) const {
  const std::int64_t per_rank_len = dcp > 1 ? cdiv(max_model_len, dcp) : max_model_len;
  return cdiv(per_rank_len, block_size);
}

Bytes KvCacheLayout::needed(std::int64_t max_model_len) const {
  // Every layer's FullAttentionSpec/MLAAttentionSpec.max_memory_usage_bytes = cdiv(M', B)·page.
  return Bytes(blocks_per_request(max_model_len) * block_bytes());
}

std::int64_t KvCacheLayout::num_blocks(Bytes available) const {
  if (available.count() <= 0 || layer_token_bytes.empty()) return 0;
  // One group of identical layers: avail // page // num_layers; layers of different page sizes
  // (UniformTypeKVCacheSpecs) share one block count: avail // Σ pages. Both equal
  // avail // Σ pages when the pages are equal, up to the order of the two floor divisions.
  bool uniform = true;
  for (const auto b : layer_token_bytes) uniform = uniform && b == layer_token_bytes.front();
  if (uniform) {
    const std::int64_t page = layer_token_bytes.front() * block_size;
    return available.count() / page / static_cast<std::int64_t>(layer_token_bytes.size());
  }
  return available.count() / block_bytes();
}

std::int64_t largest_fitting_length(const KvCacheLayout& kv, Bytes available, std::int64_t upper) {
  // estimate_max_model_len: binary search on [1, upper] with predicate needed(mid) <= available.
  std::int64_t lo = 1;
  std::int64_t hi = upper;
  std::int64_t best = 0;
  while (lo <= hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (kv.needed(mid) <= available) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

}  // namespace gpubudget
