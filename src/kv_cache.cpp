// KV-cache specs, grouping and block arithmetic (vllm/v1/kv_cache_interface.py,
// vllm/v1/core/kv_cache_utils.py: get_kv_cache_groups, unify_kv_cache_spec_page_size,
// get_kv_cache_config_from_groups, _max_memory_usage_bytes_from_groups, _report_kv_cache_config).
#include "gpubudget/kv_cache.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget {

KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, KvCacheDtypeChoice requested) {
  if (requested == KvCacheDtypeChoice::kAuto) {
    const auto& q = model.quantization;
    if (q.kv_cache_dtype == "fp8_e4m3" || q.kv_cache_dtype == "fp8") {
      return {q.kv_cache_dtype, 1, fmt::format("auto: the checkpoint's {}", q.kv_cache_declaration)};
    }
    switch (model.dtype) {
      case Dtype::kFloat16: return {"float16", 2, "auto: the model dtype"};
      case Dtype::kFloat32: return {"float32", 4, "auto: the model dtype"};
      default: return {"bfloat16", 2, "auto: the model dtype"};
    }
  }
  const std::string name(kv_cache_dtype_choice_name(requested));
  switch (requested) {
    case KvCacheDtypeChoice::kBFloat16:
    case KvCacheDtypeChoice::kFloat16: return {name, 2, "--kv-cache-dtype"};
    default: return {name, 1, "--kv-cache-dtype"};
  }
}

Bytes layer_kv_bytes_per_token(const AttentionSpec& a, std::int64_t tp, const KvCacheDtype& dtype) {
  if (a.fixed_token_bytes.count() > 0) return a.fixed_token_bytes;
  if (a.kind == AttentionKind::kMla) {
    // fp8_ds_mla (FlashMLA sparse): 512 fp8 latent + 4 fp32 scales + 64 bf16 rope = 656 B.
    if (dtype.name == "fp8_ds_mla") return Bytes(656);
    return Bytes(a.head_dim * dtype.element_bytes);  // one latent vector, the same on every TP rank
  }
  const std::int64_t heads = std::max<std::int64_t>(1, a.num_key_value_heads / tp);
  return Bytes(heads * (a.head_dim + a.head_dim_v) * dtype.element_bytes);
}

Bytes KvLayer::max_memory_usage(std::int64_t m, std::int64_t t, std::int64_t dcp) const {
  switch (kind) {
    case AttentionKind::kFull:
    case AttentionKind::kMla: {
      const std::int64_t per_rank = dcp > 1 ? cdiv(m, dcp) : m;
      return page_bytes() * cdiv(per_rank, block_size);
    }
    case AttentionKind::kSlidingWindow:
      return page_bytes() * (cdiv(std::min(window - 1 + t, m), block_size) + 1);
    case AttentionKind::kChunkedLocal:
      return page_bytes() * cdiv(std::min(window + t, m), block_size);
    case AttentionKind::kMamba:
      return page_bytes() * state_blocks;
    case AttentionKind::kNone:
      return Bytes(0);
  }
  return Bytes(0);
}

namespace {

bool full_like(AttentionKind k) { return k == AttentionKind::kFull || k == AttentionKind::kMla; }

void group_layers(KvCacheLayout& kv) {
  if (kv.layers.empty()) {
    kv.grouping = KvGrouping::kEmpty;
    return;
  }
  const KvLayer& first = kv.layers.front();
  const auto n = static_cast<std::int64_t>(kv.layers.size());
  if (std::all_of(kv.layers.begin(), kv.layers.end(), [&](const KvLayer& l) { return l == first; })) {
    kv.grouping = KvGrouping::kSingleGroup;
    kv.groups = {{first, n}};
    kv.group_size = n;
    kv.page_bytes = first.page_bytes();
    return;
  }
  // UniformTypeKVCacheSpecs: every spec a full-attention kind (MLA included) with one block size.
  const bool uniform_type = std::all_of(kv.layers.begin(), kv.layers.end(), [&](const KvLayer& l) {
    return full_like(l.kind) && l.block_size == first.block_size;
  });
  if (uniform_type) {
    kv.grouping = KvGrouping::kUniformType;
    kv.groups = {{first, n}};
    kv.group_size = n;
    kv.page_bytes = Bytes(0);
    for (const auto& l : kv.layers) kv.page_bytes += l.page_bytes();
    return;
  }
  // Hybrid: unify page sizes (smaller pages must divide the largest; their block grows by the ratio),
  // then bucket identical specs and cut them into groups of `group_size` layers.
  kv.grouping = KvGrouping::kHybrid;
  Bytes page;
  for (const auto& l : kv.layers) page = std::max(page, l.page_bytes());
  for (auto& l : kv.layers) {
    if ((page % l.page_bytes()).count() != 0) {
      throw InputError(fmt::format("KV page sizes {} and {} bytes cannot be unified (vLLM raises NotImplementedError "
                                   "in unify_kv_cache_spec_page_size)",
                                   l.page_bytes().count(), page.count()));
    }
    l.block_size *= page / l.page_bytes();
  }
  kv.page_bytes = page;
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, std::pair<KvLayer, std::int64_t>>
      buckets;
  for (const auto& l : kv.layers) {
    auto& entry =
        buckets[{static_cast<int>(l.kind), l.token_bytes.count(), l.block_size, l.window, l.state_bytes.count()}];
    entry.first = l;
    entry.second += 1;
  }
  std::int64_t min_count = n, max_count = 0;
  for (const auto& [key, entry] : buckets) {
    min_count = std::min(min_count, entry.second);
    max_count = std::max(max_count, entry.second);
  }
  // _get_kv_cache_groups_uniform_page_size: the smallest bucket sets the group size, unless the
  // largest is under 1.5x the smallest (then padding the small buckets wastes less).
  kv.group_size = 2 * max_count < 3 * min_count ? max_count : min_count;
  for (const auto& [key, entry] : buckets) {
    const std::int64_t count = entry.second;
    const std::int64_t num = cdiv(count, kv.group_size);
    for (std::int64_t g = 0; g < num; ++g) {
      // layers[i::num] → group g holds ceil((count - g) / num) layers.
      kv.groups.push_back({entry.first, cdiv(count - g, num)});
    }
  }
}

}  // namespace

KvCacheLayout make_kv_cache_layout(const ModelSpec& model, const ParallelLayout& layout, const KvCacheDtype& dtype,
                                   std::int64_t block_size, std::int64_t max_num_batched_tokens,
                                   MambaCacheMode mamba_cache_mode) {
  KvCacheLayout kv;
  kv.dcp = layout.dcp;
  kv.max_num_batched_tokens = max_num_batched_tokens;
  auto add = [&](const AttentionSpec& a) {
    KvLayer l;
    l.kind = a.kind;
    l.token_bytes = layer_kv_bytes_per_token(a, layout.tp, dtype);
    l.block_size = block_size;
    l.window = a.window;
    kv.layers.push_back(l);
  };
  Bytes mamba_state;
  for (std::int64_t i = layout.first_layer; i < layout.end_layer; ++i) {
    const LayerSpec& layer = model.layers[static_cast<std::size_t>(i)];
    if (layer.attention.kind == AttentionKind::kNone) continue;
    if (layer.attention.kind == AttentionKind::kMamba) {
      // MambaSpec.page_size_bytes: conv state + temporal state of this rank's channels and heads.
      const MambaState& st = layer.attention.state;
      KvLayer l;
      l.kind = AttentionKind::kMamba;
      l.state_bytes = Bytes(st.conv_channels / layout.tp * st.conv_width * element_bytes(st.conv_dtype) +
                            st.ssm_heads / layout.tp * st.ssm_head_elements * element_bytes(st.ssm_dtype));
      l.state_blocks = mamba_cache_mode == MambaCacheMode::kAlign ? 2 : 1;
      mamba_state = std::max(mamba_state, l.state_bytes);
      kv.layers.push_back(l);
      continue;
    }
    add(layer.attention);
    for (const auto& extra : layer.extra_kv) add(extra);
  }
  if (mamba_state.count() > 0) {
    // _align_hybrid_block_size: the attention block grows (in steps of 16 tokens) until one attention
    // page holds a state; the states are then padded to exactly one attention page.
    Bytes attention_token_bytes;
    for (const auto& l : kv.layers) {
      if (l.kind != AttentionKind::kMamba) attention_token_bytes = std::max(attention_token_bytes, l.token_bytes);
    }
    if (attention_token_bytes.count() > 0) {
      const std::int64_t needed_block = 16 * cdiv(mamba_state, attention_token_bytes * 16);
      const std::int64_t raised = std::max(block_size, needed_block);
      for (auto& l : kv.layers) {
        if (l.kind == AttentionKind::kMamba) {
          l.state_bytes = attention_token_bytes * raised;
        } else {
          l.block_size = raised;
        }
      }
    }
  }
  group_layers(kv);
  return kv;
}

Bytes KvCacheLayout::bytes_per_token() const {
  Bytes sum;
  for (const auto& l : layers) {
    if (l.grows_with_length()) sum += l.token_bytes;
  }
  return sum;
}

Bytes KvCacheLayout::block_bytes() const {
  switch (grouping) {
    case KvGrouping::kEmpty: return Bytes(0);
    case KvGrouping::kSingleGroup: return page_bytes * group_size;
    case KvGrouping::kUniformType: return page_bytes;
    case KvGrouping::kHybrid: return page_bytes * group_size;
  }
  return Bytes(0);
}

Bytes KvCacheLayout::needed(std::int64_t m) const {
  const std::int64_t t = max_num_batched_tokens;
  switch (grouping) {
    case KvGrouping::kEmpty: return Bytes(0);
    case KvGrouping::kSingleGroup:
      return groups.front().spec.max_memory_usage(m, t, dcp) * group_size;
    case KvGrouping::kUniformType: {
      Bytes sum;
      for (const auto& l : layers) sum += l.max_memory_usage(m, t, dcp);
      return sum;
    }
    case KvGrouping::kHybrid: {
      // Padding-aware: every group reserves group_size layers' worth of pages.
      std::int64_t blocks = 0;
      for (const auto& g : groups) blocks += cdiv(g.spec.max_memory_usage(m, t, dcp), page_bytes);
      return page_bytes * group_size * blocks;
    }
  }
  return Bytes(0);
}

std::int64_t KvCacheLayout::num_blocks(Bytes available) const {
  if (available.count() <= 0 || grouping == KvGrouping::kEmpty) return 0;
  switch (grouping) {
    case KvGrouping::kSingleGroup:
    case KvGrouping::kHybrid:
      return available / page_bytes / group_size;
    case KvGrouping::kUniformType:
      return available / page_bytes;
    case KvGrouping::kEmpty: break;
  }
  return 0;
}

std::int64_t KvCacheLayout::blocks_per_request(std::int64_t m) const {
  if (grouping == KvGrouping::kEmpty) return 1;
  const std::int64_t t = max_num_batched_tokens;
  Bytes per_request;
  switch (grouping) {
    case KvGrouping::kSingleGroup:
      per_request = groups.front().spec.max_memory_usage(m, t, dcp);
      break;
    case KvGrouping::kUniformType: {
      // UniformTypeKVCacheSpecs.max_memory_usage_bytes: the most blocks any layer needs × Σ pages.
      std::int64_t most = 0;
      for (const auto& l : layers) most = std::max(most, cdiv(l.max_memory_usage(m, t, dcp), l.page_bytes()));
      return most;
    }
    case KvGrouping::kHybrid:
      for (const auto& g : groups) per_request += g.spec.max_memory_usage(m, t, dcp);
      break;
    case KvGrouping::kEmpty: break;
  }
  // n_lpg · Σ max_memory_usage / (page · n_lpg): the group size cancels.
  return cdiv(per_request, page_bytes);
}

std::int64_t KvCacheLayout::num_groups() const {
  return grouping == KvGrouping::kHybrid ? static_cast<std::int64_t>(groups.size()) : 1;
}

std::int64_t KvCacheLayout::min_block_size() const {
  std::int64_t smallest = 0;
  for (const auto& l : layers) {
    if (l.kind == AttentionKind::kMamba) continue;
    smallest = smallest == 0 ? l.block_size : std::min(smallest, l.block_size);
  }
  return smallest == 0 ? 16 : smallest;
}

std::int64_t KvCacheLayout::attention_block_size() const {
  for (const auto& l : layers) {
    if (l.kind != AttentionKind::kMamba) return l.block_size;
  }
  return 0;
}

std::int64_t largest_fitting_length(const KvCacheLayout& kv, Bytes available, std::int64_t upper) {
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
