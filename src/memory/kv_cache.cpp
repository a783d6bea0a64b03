// KV-cache specs, grouping and block arithmetic (vllm/v1/kv_cache_interface.py,
// vllm/v1/core/kv_cache_utils.py: get_kv_cache_groups, unify_hybrid_kv_cache_specs,
// unify_kv_cache_spec_page_size, _get_kv_cache_groups_uniform_page_size,
// _project_kv_cache_groups_to_worker, get_kv_cache_config_from_groups,
// _max_memory_usage_bytes_from_groups, get_max_concurrency_for_kv_cache_config).
#include "gpubudget/kv_cache.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/error.h"

namespace gpubudget {

KvCacheDtype kv_cache_dtype_named(const std::string& name, std::string reason) {
  KvCacheDtype d{name, 1, std::move(reason)};
  if (name == "bfloat16" || name == "float16") d.element_bytes = 2;
  if (name == "float32") d.element_bytes = 4;
  if (name == "int8_per_token_head" || name == "fp8_per_token_head") d.layout = KvElementLayout::kPerTokenHead;
  if (name == "nvfp4") d.layout = KvElementLayout::kNvfp4;
  if (name == "fp8_ds_mla") d.layout = KvElementLayout::kFp8DsMla;
  return d;
}

namespace {

KvCacheDtype model_dtype_kv(const ModelSpec& model, const std::string& reason) {
  switch (model.dtype) {
    case Dtype::kFloat16: return kv_cache_dtype_named("float16", reason);
    case Dtype::kFloat32: return kv_cache_dtype_named("float32", reason);
    default: return kv_cache_dtype_named("bfloat16", reason);
  }
}

}  // namespace

KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, KvCacheDtypeChoice requested, const KvCacheRules& rules) {
  const auto& q = model.quantization;
  // Attention.__init__ (#30141, 0.15): a compressed-tensors kv_cache_scheme stores the cache in fp8; until
  // #42782 (0.22) even over an explicit --kv-cache-dtype.
  if (q.kv_cache_scheme == CheckpointKvScheme::kCompressedTensors) {
    const bool forces = rules.compressed_tensors_kv_scheme == CheckpointKvSchemeRule::kForcesFp8 &&
                        requested != KvCacheDtypeChoice::kAuto;
    const bool autos = rules.compressed_tensors_kv_scheme != CheckpointKvSchemeRule::kIgnored &&
                       requested == KvCacheDtypeChoice::kAuto;
    if (forces || autos) {
      KvCacheDtype d = kv_cache_dtype_named("fp8", fmt::format("the checkpoint's {}", q.kv_cache_declaration));
      if (forces) {
        d.warning = Notice{NoticeCode::kKvDtypeForcedByCheckpoint,
                           fmt::format("the checkpoint's {} makes this vLLM store the KV cache in fp8 whatever "
                                       "--kv-cache-dtype says (Attention.__init__)",
                                       q.kv_cache_declaration)};
      }
      return d;
    }
  }
  if (requested != KvCacheDtypeChoice::kAuto) {
    return kv_cache_dtype_named(std::string(kv_cache_dtype_choice_name(requested)), "--kv-cache-dtype");
  }
  // resolve_kv_cache_dtype_string (0.14+): a ModelOpt kv_cache_quant_algo through
  // MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP; anything else is warned about and stays `auto`.
  if (q.kv_cache_scheme == CheckpointKvScheme::kModelOpt && !rules.modelopt_kv_cache_dtypes.empty()) {
    for (const auto& [algo, dtype] : rules.modelopt_kv_cache_dtypes) {
      if (algo == q.kv_cache_algo) {
        return kv_cache_dtype_named(dtype, fmt::format("auto: the checkpoint's {}", q.kv_cache_declaration));
      }
    }
    KvCacheDtype d = model_dtype_kv(model, "auto: the model dtype");
    d.warning =
        Notice{NoticeCode::kKvDtypeDeclarationUnknown,
               fmt::format("this vLLM does not know the checkpoint's {} and keeps the KV cache in the model dtype "
                           "(\"Unknown kv_cache_quant_algo\")",
                           q.kv_cache_declaration)};
    return d;
  }
  return model_dtype_kv(model, "auto: the model dtype");
}

KvCacheDtype resolve_kv_cache_dtype(const ModelSpec& model, KvCacheDtypeChoice requested) {
  KvCacheRules newest;
  newest.modelopt_kv_cache_dtypes = {{"fp8", "fp8_e4m3"}, {"nvfp4", "nvfp4"}};
  return resolve_kv_cache_dtype(model, requested, newest);
}

Bytes layer_kv_bytes_per_token(const AttentionSpec& a, std::int64_t tp, const KvCacheDtype& dtype) {
  if (a.fixed_token_bytes.count() > 0) return a.fixed_token_bytes;
  // One K or V vector of `d` values in the dtype's layout (nvfp4_kv_cache_full_dim: d/2 + d/16).
  const auto vector_bytes = [&](std::int64_t d) -> std::int64_t {
    switch (dtype.layout) {
      case KvElementLayout::kNvfp4: return d / 2 + d / 16;
      case KvElementLayout::kPerTokenHead: return d + 4;  // + one fp32 scale (AttentionSpec.page_size_bytes)
      default: return d * dtype.element_bytes;
    }
  };
  if (a.kind == AttentionKind::kMla) {
    // fp8_ds_mla (FlashMLA sparse): 512 fp8 latent + 4 fp32 scales + 64 bf16 rope = 656 B.
    if (dtype.layout == KvElementLayout::kFp8DsMla) return Bytes(656);
    return Bytes(vector_bytes(a.head_dim));  // one latent vector, the same on every TP rank
  }
  const std::int64_t heads = std::max<std::int64_t>(1, a.num_key_value_heads / tp);
  return Bytes(heads * (vector_bytes(a.head_dim) + vector_bytes(a.head_dim_v)));
}

namespace {

Bytes usage(const KvLayer& l, std::int64_t block_size, std::int64_t m, std::int64_t t, std::int64_t dcp) {
  const Bytes page = l.page_at(block_size);
  switch (l.kind) {
    case AttentionKind::kFull:
    case AttentionKind::kMla: {
      const std::int64_t per_rank = dcp > 1 ? cdiv(m, dcp) : m;
      return page * cdiv(per_rank, block_size);
    }
    case AttentionKind::kSlidingWindow:
      return page * (cdiv(std::min(l.window - 1 + t, m), block_size) + 1);
    case AttentionKind::kChunkedLocal:
      return page * cdiv(std::min(l.window + t, m), block_size);
    case AttentionKind::kMamba:
      return page * ((l.state_blocks > 0 ? l.state_blocks : cdiv(m, l.mamba_block_size)) + l.speculative_blocks);
    case AttentionKind::kNone:
      return Bytes(0);
  }
  return Bytes(0);
}

}  // namespace

Bytes KvLayer::page_at(std::int64_t tokens) const {
  if (kind == AttentionKind::kMamba) return state_bytes;
  if (padded_page.count() > 0) return padded_page;
  // real_page_size_bytes: storage_block_size (= tokens / compress_ratio) entries; then
  // _apply_alignment_padding rounds the page up to the alignment.
  const Bytes raw = token_bytes * (tokens / compress_ratio);
  return alignment > 0 ? Bytes(round_up(raw.count(), alignment)) : raw;
}

Bytes KvLayer::max_memory_usage(std::int64_t m, std::int64_t t, std::int64_t dcp) const {
  return usage(*this, block_size, m, t, dcp);
}

Bytes KvLayer::registered_max_memory_usage(std::int64_t m, std::int64_t t, std::int64_t dcp) const {
  return usage(*this, registered_block_size, m, t, dcp);
}

bool KvLayer::same_spec(const KvLayer& o) const {
  return kind == o.kind && token_bytes == o.token_bytes && block_size == o.block_size && window == o.window &&
         state_bytes == o.state_bytes && state_blocks == o.state_blocks && mamba_block_size == o.mamba_block_size &&
         speculative_blocks == o.speculative_blocks &&
         compress_ratio == o.compress_ratio && alignment == o.alignment && padded_page == o.padded_page &&
         mla_window == o.mla_window;
}

namespace {

bool full_like(AttentionKind k) { return k == AttentionKind::kFull || k == AttentionKind::kMla; }

// UniformTypeKVCacheSpecs.is_uniform_type: one block size, and all full attention (MLA included), or all
// sliding window with one window, or all chunked with one chunk, or all Mamba.
bool is_uniform_type(const std::vector<KvLayer>& layers) {
  const KvLayer& first = layers.front();
  return std::all_of(layers.begin(), layers.end(), [&](const KvLayer& l) {
    if (l.block_size != first.block_size) return false;
    if (full_like(first.kind)) return full_like(l.kind);
    if (first.kind == AttentionKind::kMamba) return l.kind == AttentionKind::kMamba && l.state_blocks == first.state_blocks;
    return l.kind == first.kind && l.window == first.window;
  });
}

struct Bucket {
  KvLayer spec;
  std::vector<std::int64_t> layers;  // decoder layer indices, in model order
  std::vector<KvLayer> members;      // kUniformGroups: the group's layers (several per decoder layer)
};

// The model's groups (global), each with the decoder layers it holds.
struct GlobalGroups {
  KvGrouping grouping = KvGrouping::kEmpty;
  std::vector<Bucket> groups;
  Bytes page;  // kHybrid: unified page
};

// _approximate_gcd: the d in [lower_bound, max(values)] that pads the values least when each is rounded
// up to a multiple of d; ties go to the larger d.
std::int64_t approximate_gcd(const std::vector<std::int64_t>& values, std::int64_t lower_bound) {
  const std::int64_t lo = std::max<std::int64_t>(1, lower_bound);
  const std::int64_t hi = *std::max_element(values.begin(), values.end());
  if (lo > hi) return lo;
  std::int64_t best = lo;
  std::int64_t best_pad = -1;
  for (std::int64_t d = lo; d <= hi; ++d) {
    std::int64_t pad = 0;
    for (const auto x : values) pad += (d - x % d) % d;
    if (best_pad < 0 || pad <= best_pad) {
      best_pad = pad;
      best = d;
    }
  }
  return best;
}

// Pages and how many layers have each, in first-seen order (Counter / get_page_sizes).
std::vector<std::pair<Bytes, std::int64_t>> page_counts(const std::vector<KvLayer>& layers) {
  std::vector<std::pair<Bytes, std::int64_t>> out;
  for (const auto& l : layers) {
    const Bytes page = l.page_bytes();
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == page; });
    if (it == out.end()) {
      out.emplace_back(page, 1);
    } else {
      ++it->second;
    }
  }
  return out;
}

// UniformTypeKVCacheSpecs.get_num_layer_tuples: how many layers share the most common page size.
std::int64_t most_layers_of_one_page(const std::vector<KvLayer>& layers) {
  std::int64_t most = 0;
  for (const auto& [page, count] : page_counts(layers)) most = std::max(most, count);
  return most;
}

// DeepSeek-V4 (group_and_unify_kv_cache_specs, _get_kv_cache_groups_uniform_groups): every MLA layer in
// one group; the MLA-format sliding windows grouped by (block size, window), each page padded to the
// nearest full-MLA page at least as large, and each window group split into sub-groups of whole layer
// tuples (one layer per padded page size) so that no group holds more tuples than the model's chosen
// count. Padded pages are written back into `layers`.
GlobalGroups group_uniform_groups(std::vector<KvLayer>& layers) {
  GlobalGroups out;
  out.grouping = KvGrouping::kUniformGroups;
  std::vector<std::size_t> mla;
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>>> windows;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const KvLayer& l = layers[i];
    if (l.mla_window) {
      const std::pair key{l.block_size, l.window};
      auto it = std::find_if(windows.begin(), windows.end(), [&](const auto& w) { return w.first == key; });
      if (it == windows.end()) {
        windows.push_back({key, {}});
        it = windows.end() - 1;
      }
      it->second.push_back(i);
    } else if (l.kind == AttentionKind::kMla) {
      mla.push_back(i);
    } else {
      throw InputError("a model with MLA-format sliding-window caches and other kinds of KV layers: vLLM's "
                       "group_and_unify_kv_cache_specs keeps only MLA specs; not modelled");
    }
  }
  const auto gather = [&](const std::vector<std::size_t>& positions) {
    std::vector<KvLayer> v;
    for (const auto i : positions) v.push_back(layers[i]);
    return v;
  };
  if (mla.empty()) throw InputError("MLA-format sliding-window caches without full MLA layers (vLLM asserts)");
  const std::vector<KvLayer> full = gather(mla);
  if (std::any_of(full.begin(), full.end(), [&](const KvLayer& l) { return l.block_size != full.front().block_size; })) {
    throw InputError("MLA layers of different block sizes cannot form one UniformTypeKVCacheSpecs (vLLM asserts)");
  }
  std::vector<std::int64_t> tuples_per_group = {most_layers_of_one_page(full)};
  for (const auto& w : windows) tuples_per_group.push_back(most_layers_of_one_page(gather(w.second)));
  const std::int64_t tuples = approximate_gcd(tuples_per_group, tuples_per_group.front());
  std::vector<Bytes> full_pages;
  for (const auto& [page, count] : page_counts(full)) full_pages.push_back(page);
  std::sort(full_pages.begin(), full_pages.end());

  Bucket full_group{full.front(), {}, full};
  for (const auto& l : full) full_group.layers.push_back(l.index);
  out.groups.push_back(std::move(full_group));
  for (const auto& w : windows) {
    // Pad each page to its candidate; collect positions per candidate page, in first-seen order.
    std::vector<std::pair<Bytes, std::vector<std::size_t>>> per_size;
    for (const auto i : w.second) {
      const Bytes page = layers[i].page_bytes();
      const auto candidate = std::find_if(full_pages.begin(), full_pages.end(), [&](Bytes p) { return p >= page; });
      if (candidate == full_pages.end()) {
        throw InputError(fmt::format("a sliding-window MLA page of {} B exceeds every full-MLA page (largest {} B); "
                                     "vLLM asserts",
                                     page.count(), full_pages.back().count()));
      }
      if (page < *candidate) layers[i].padded_page = *candidate;
      auto it = std::find_if(per_size.begin(), per_size.end(), [&](const auto& p) { return p.first == *candidate; });
      if (it == per_size.end()) {
        per_size.push_back({*candidate, {}});
        it = per_size.end() - 1;
      }
      it->second.push_back(i);
    }
    const std::size_t per_page = per_size.front().second.size();
    if (std::any_of(per_size.begin(), per_size.end(), [&](const auto& p) { return p.second.size() != per_page; })) {
      throw InputError("a sliding-window MLA group whose page sizes have different layer counts (vLLM asserts)");
    }
    const auto num_groups = static_cast<std::size_t>(cdiv(static_cast<std::int64_t>(per_page), tuples));
    for (std::size_t g = 0; g < num_groups; ++g) {
      Bucket group;
      for (std::size_t t = g; t < per_page; t += num_groups) {  // layer_tuples[g::num_groups]
        for (const auto& [page, positions] : per_size) {
          group.members.push_back(layers[positions[t]]);
          group.layers.push_back(layers[positions[t]].index);
        }
      }
      group.spec = group.members.front();
      out.groups.push_back(std::move(group));
    }
  }
  return out;
}

GlobalGroups group_layers(std::vector<KvLayer>& layers, const KvCacheSettings& s) {
  GlobalGroups out;
  if (layers.empty()) return out;
  const KvLayer& first = layers.front();
  std::vector<std::int64_t> all;
  for (const auto& l : layers) all.push_back(l.index);
  if (std::all_of(layers.begin(), layers.end(), [&](const KvLayer& l) { return l.same_spec(first); })) {
    out.grouping = KvGrouping::kSingleGroup;
    out.groups.push_back({first, all, {}});
    return out;
  }
  if (is_uniform_type(layers)) {
    out.grouping = KvGrouping::kUniformType;
    out.groups.push_back({first, all, {}});
    return out;
  }
  // Hybrid: unify page sizes (smaller pages must divide the largest; their block grows by the ratio),
  // then bucket identical specs and cut them into groups of `group_size` layers.
  out.grouping = KvGrouping::kHybrid;
  Bytes page;
  for (const auto& l : layers) page = std::max(page, l.page_bytes());
  for (auto& l : layers) {
    if (l.page_bytes() == page) continue;
    if (!s.unify_page_sizes) {
      throw InputError(fmt::format("KV page sizes {} and {} bytes differ and this vLLM cannot unify them "
                                   "(get_kv_cache_groups raises NotImplementedError)",
                                   l.page_bytes().count(), page.count()));
    }
    if ((page % l.page_bytes()).count() != 0 || l.kind == AttentionKind::kMamba) {
      throw InputError(fmt::format("KV page sizes {} and {} bytes cannot be unified (vLLM raises NotImplementedError "
                                   "in unify_kv_cache_spec_page_size)",
                                   l.page_bytes().count(), page.count()));
    }
    l.block_size *= page / l.page_bytes();
  }
  out.page = page;
  std::vector<Bucket> buckets;
  for (const auto& l : layers) {
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](const Bucket& b) { return b.spec.same_spec(l); });
    if (it == buckets.end()) {
      buckets.push_back({l, {}, {}});
      it = buckets.end() - 1;
    }
    it->layers.push_back(l.index);
  }
  std::size_t min_count = layers.size(), max_count = 0;
  for (const auto& b : buckets) {
    min_count = std::min(min_count, b.layers.size());
    max_count = std::max(max_count, b.layers.size());
  }
  // The smallest bucket sets the group size, unless the largest is under `hybrid_group_ratio` x the
  // smallest (then padding the small buckets wastes less).
  const auto group_size = static_cast<double>(max_count) < s.hybrid_group_ratio * static_cast<double>(min_count)
                              ? max_count
                              : min_count;
  for (const auto& b : buckets) {
    const std::size_t num = (b.layers.size() + group_size - 1) / group_size;
    for (std::size_t g = 0; g < num; ++g) {
      Bucket group{b.spec, {}, {}};
      for (std::size_t i = g; i < b.layers.size(); i += num) group.layers.push_back(b.layers[i]);  // layers[g::num]
      out.groups.push_back(std::move(group));
    }
  }
  return out;
}

// unify_hybrid_kv_cache_specs: with the hybrid manager off, sliding-window and chunked layers become full
// attention (keeping their page) when the model has full attention; anything still mixed is refused.
void disable_hybrid_manager(std::vector<KvLayer>& layers) {
  if (layers.empty()) return;
  const KvLayer& first = layers.front();
  if (std::all_of(layers.begin(), layers.end(), [&](const KvLayer& l) { return l.same_spec(first); }) ||
      is_uniform_type(layers)) {
    return;
  }
  const bool has_full = std::any_of(layers.begin(), layers.end(), [](const KvLayer& l) { return full_like(l.kind); });
  if (has_full) {
    std::vector<std::int64_t> windows;
    for (auto& l : layers) {
      if (l.kind != AttentionKind::kSlidingWindow && l.kind != AttentionKind::kChunkedLocal) continue;
      if (l.kind == AttentionKind::kSlidingWindow && std::find(windows.begin(), windows.end(), l.window) == windows.end()) {
        windows.push_back(l.window);
      }
      l.kind = AttentionKind::kFull;
      l.window = 0;
    }
    if (windows.size() > 1) {
      throw InputError(fmt::format("with the hybrid KV cache manager off, vLLM merges the sliding windows {} into one "
                                   "full-attention spec and raises ValueError (merge_window_sizes)",
                                   fmt::join(windows, ", ")));
    }
  }
  if (!is_uniform_type(layers) &&
      !std::all_of(layers.begin(), layers.end(), [&](const KvLayer& l) { return l.same_spec(layers.front()); })) {
    throw InputError("Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one unified "
                     "type (vLLM raises ValueError: this model's layers cannot share one spec, e.g. Mamba states "
                     "beside attention)");
  }
}

bool skips(const KvCacheSettings& s, const LayerSpec& layer) {
  if (s.skip_sliding_window && layer.attention.kind == AttentionKind::kSlidingWindow) return true;
  return std::find(s.skip_layers.begin(), s.skip_layers.end(), layer.index) != s.skip_layers.end();
}

}  // namespace

KvCacheLayout make_kv_cache_layout(const ModelSpec& model, const ParallelLayout& layout, const KvCacheSettings& s,
                                   const std::vector<Bytes>& mamba_state_bytes) {
  // A recurrent layer's page is the padded state page fit() derives (worker_kv_cache_layout); without it
  // every page count below would divide by zero.
  const bool recurrent = std::any_of(model.layers.begin(), model.layers.end(),
                                     [](const LayerSpec& l) { return recurrent_state(l) != nullptr; });
  if (recurrent && s.mamba_state_page.count() <= 0) {
    throw InputError(fmt::format("{}: a model with recurrent (Mamba / linear-attention) layers needs "
                                 "KvCacheSettings::mamba_state_page; use worker_kv_cache_layout, which derives it",
                                 model.source));
  }
  KvCacheLayout kv;
  kv.dcp = layout.dcp;
  kv.max_num_batched_tokens = s.max_num_batched_tokens;
  kv.need = s.need;
  std::vector<KvLayer> layers;
  // The drafter's attention layers (speculative decoding) take KV from the same pool, on the last stage.
  std::vector<const LayerSpec*> kv_layers;
  for (const LayerSpec& layer : model.layers) kv_layers.push_back(&layer);
  if (model.drafter) {
    for (const LayerSpec& layer : model.drafter->layers) kv_layers.push_back(&layer);
  }
  for (const LayerSpec* layer_ptr : kv_layers) {
    const LayerSpec& layer = *layer_ptr;
    // MambaSpec: the state, padded to one attention page (page_size_padded) when the model has
    // attention layers.
    const auto add_state = [&] {
      KvLayer m;
      m.index = layer.index;
      m.kind = AttentionKind::kMamba;
      const auto i = static_cast<std::size_t>(layer.index);
      m.state_bytes = s.mamba_state_page.count() > 0 ? s.mamba_state_page
                                                     : (i < mamba_state_bytes.size() ? mamba_state_bytes[i] : Bytes(0));
      m.state_blocks = s.mamba_state_blocks;
      m.speculative_blocks = s.mamba_speculative_blocks;
      m.mamba_block_size = s.mamba_block_size;
      m.block_size = m.registered_block_size = std::max<std::int64_t>(1, s.mamba_block_size);
      layers.push_back(m);
    };
    const AttentionKind kind = layer.attention.kind;
    if (kind == AttentionKind::kMamba) {
      add_state();
      continue;
    }
    // Falcon-H1's parallel Mamba2 mixer: a KV layer of its own (model.{L+i}.mixer); where it stands in
    // the list does not change the groups' sizes.
    if (layer.parallel_state) add_state();
    if (kind == AttentionKind::kNone) continue;
    KvLayer l;
    l.index = layer.index;
    l.kind = kind;
    // Attention.__init__: --kv-cache-dtype-skip-layers keeps these layers in the model dtype (MLA layers
    // do not read the list in the versions modelled).
    const KvCacheDtype& dtype = kind != AttentionKind::kMla && skips(s, layer) ? s.skip_dtype : s.dtype;
    auto add = [&](const AttentionSpec& a) {
      KvLayer x = l;
      x.kind = a.kind;
      x.token_bytes = layer_kv_bytes_per_token(a, layout.tp, dtype);
      x.block_size = x.registered_block_size = a.block_size > 0 ? a.block_size : s.block_size;
      x.window = a.window;
      x.compress_ratio = a.compress_ratio;
      x.alignment = a.page_alignment;
      x.mla_window = a.mla_window;
      layers.push_back(x);
    };
    add(layer.attention);
    for (const auto& extra : layer.extra_kv) add(extra);
  }
  if (layout.dcp > 1 && std::any_of(layers.begin(), layers.end(), [](const KvLayer& l) {
        return l.kind == AttentionKind::kSlidingWindow;
      }) && s.hybrid_manager) {
    throw InputError(fmt::format("--decode-context-parallel-size {}: vLLM does not support it with sliding-window "
                                 "layers (SlidingWindowSpec asserts \"DCP not support sliding window.\")",
                                 layout.dcp));
  }
  const bool uniform_groups = std::any_of(layers.begin(), layers.end(), [](const KvLayer& l) { return l.mla_window; });
  if (uniform_groups && !s.hybrid_manager) {
    throw InputError("DeepSeek-V4's caches with the hybrid KV cache manager off (unify_hybrid_kv_cache_specs turns "
                     "every sliding-window cache into a full one) are not modelled");
  }
  if (!s.hybrid_manager) disable_hybrid_manager(layers);
  const auto target_layers = static_cast<std::int64_t>(model.layers.size());
  const auto on_worker = [&](std::int64_t index) {
    return index >= target_layers ? layout.is_last_stage() : index >= layout.first_layer && index < layout.end_layer;
  };
  // Unifies the block sizes (or pads the pages) in `layers`.
  const GlobalGroups global = uniform_groups ? group_uniform_groups(layers) : group_layers(layers, s);
  kv.all_layers = layers;
  kv.grouping = global.grouping;
  for (const auto& l : layers) {
    if (on_worker(l.index)) kv.layers.push_back(l);
  }
  // _project_kv_cache_groups_to_worker: every group kept, holding only this worker's layers.
  for (const auto& g : global.groups) {
    KvGroup group{g.spec, 0, static_cast<std::int64_t>(g.layers.size()), {}};
    group.num_layers = std::count_if(g.layers.begin(), g.layers.end(), on_worker);
    for (const auto& m : g.members) {
      if (on_worker(m.index)) group.members.push_back(m);
    }
    kv.group_size = std::max(kv.group_size, group.num_layers);
    kv.global_group_size = std::max(kv.global_group_size, group.global_layers);
    kv.groups.push_back(group);
  }
  switch (kv.grouping) {
    case KvGrouping::kEmpty: break;
    case KvGrouping::kUniformGroups: {
      // _get_kv_cache_config_deepseek_v4: a block is one tuple of the full-MLA group's page sizes, repeated
      // for the longest run of one page size in any group.
      for (const auto& [page, count] : page_counts(kv.groups.front().members)) kv.layer_tuple_bytes += page;
      for (const auto& g : kv.groups) kv.layer_tuples = std::max(kv.layer_tuples, most_layers_of_one_page(g.members));
      kv.page_bytes = kv.layer_tuple_bytes;
      break;
    }
    case KvGrouping::kHybrid: kv.page_bytes = global.page; break;
    case KvGrouping::kSingleGroup: kv.page_bytes = kv.groups.front().spec.page_bytes(); break;
    case KvGrouping::kUniformType:
      for (const auto& l : kv.layers) kv.page_bytes += l.page_bytes();
      break;
  }
  if (kv.grouping != KvGrouping::kEmpty && kv.group_size == 0) {
    throw InputError(fmt::format("pipeline stage with decoder layers [{}, {}) holds no KV-cache layer while other "
                                 "stages do; vLLM's get_kv_cache_config_from_groups asserts group_size > 0",
                                 layout.first_layer, layout.end_layer));
  }
  return kv;
}

std::int64_t KvGroup::max_pages(std::int64_t m, std::int64_t t, std::int64_t dcp) const {
  std::int64_t most = 0;
  for (const auto& l : members) most = std::max(most, cdiv(l.max_memory_usage(m, t, dcp), l.page_bytes()));
  return most;
}

Bytes KvGroup::member_pages() const {
  Bytes sum;
  for (const auto& l : members) sum += l.page_bytes();
  return sum;
}

Bytes KvCacheLayout::bytes_per_token() const {
  if (grouping == KvGrouping::kUniformGroups) return Bytes(cdiv(block_bytes().count(), groups.front().spec.block_size));
  Bytes sum;
  for (const auto& l : layers) {
    if (l.grows_with_length()) sum += l.token_bytes;
  }
  return sum;
}

Bytes KvCacheLayout::block_bytes() const {
  switch (grouping) {
    case KvGrouping::kEmpty: return Bytes(0);
    case KvGrouping::kUniformType: return page_bytes;
    case KvGrouping::kUniformGroups: return layer_tuple_bytes * layer_tuples;
    case KvGrouping::kSingleGroup:
    case KvGrouping::kHybrid: return page_bytes * group_size;
  }
  return Bytes(0);
}

Bytes KvCacheLayout::needed(std::int64_t m) const {
  const std::int64_t t = max_num_batched_tokens;
  if (grouping == KvGrouping::kEmpty) return Bytes(0);
  if (grouping == KvGrouping::kUniformGroups) {
    // _max_memory_usage_bytes_from_groups: every group's pages reserve a whole block's tuple slots.
    std::int64_t pages = 0;
    for (const auto& g : groups) pages += g.max_pages(m, t, dcp);
    return block_bytes() * pages;
  }
  if (need == KvNeedRule::kPerLayerSum) {
    Bytes sum;
    for (const auto& l : layers) sum += l.registered_max_memory_usage(m, t, dcp);
    return sum;
  }
  const bool global = need == KvNeedRule::kGlobalFirstGroup;
  if (grouping == KvGrouping::kUniformType) {
    Bytes sum;
    for (const auto& l : global ? all_layers : layers) sum += l.max_memory_usage(m, t, dcp);
    return sum;
  }
  // group_size pools, each shared by one layer of every group: group_size · page · blocks needed.
  const Bytes page = groups.front().spec.page_bytes();
  std::int64_t blocks = 0;
  if (need == KvNeedRule::kWorkerGroups) {
    for (const auto& g : groups) blocks += cdiv(g.spec.max_memory_usage(m, t, dcp), page);
  } else {
    blocks = cdiv(groups.front().spec.max_memory_usage(m, t, dcp), page);  // the first group only
  }
  return page * (global ? global_group_size : group_size) * blocks;
}

std::int64_t KvCacheLayout::num_blocks(Bytes available) const {
  if (available.count() <= 0 || grouping == KvGrouping::kEmpty) return 0;
  if (grouping == KvGrouping::kUniformType) return available / page_bytes;
  if (grouping == KvGrouping::kUniformGroups) return available / block_bytes();
  return available / page_bytes / group_size;
}

std::int64_t KvCacheLayout::blocks_per_request(std::int64_t m) const {
  if (grouping == KvGrouping::kEmpty) return 1;
  const std::int64_t t = max_num_batched_tokens;
  if (grouping == KvGrouping::kUniformType) {
    // UniformTypeKVCacheSpecs.max_memory_usage_bytes: the most blocks any layer needs × Σ pages.
    std::int64_t most = 0;
    for (const auto& l : layers) most = std::max(most, cdiv(l.max_memory_usage(m, t, dcp), l.page_bytes()));
    return most;
  }
  if (grouping == KvGrouping::kUniformGroups) {
    // n · Σ_g max_pages_g · Σ pages_g / (Σ pages_0 · n), n = the most layers in a group: n cancels.
    Bytes per_request;
    for (const auto& g : groups) per_request += g.member_pages() * g.max_pages(m, t, dcp);
    return cdiv(per_request, groups.front().member_pages());
  }
  // n_lpg · Σ max_memory_usage / (page · n_lpg): the group size cancels.
  Bytes per_request;
  for (const auto& g : groups) per_request += g.spec.max_memory_usage(m, t, dcp);
  return cdiv(per_request, groups.front().spec.page_bytes());
}

std::int64_t KvCacheLayout::num_groups() const {
  return grouping == KvGrouping::kHybrid || grouping == KvGrouping::kUniformGroups
             ? static_cast<std::int64_t>(groups.size())
             : 1;
}

std::int64_t KvCacheLayout::min_block_size() const {
  std::int64_t smallest = 0;
  for (const auto& g : groups) {
    if (g.spec.kind == AttentionKind::kMamba) continue;
    smallest = smallest == 0 ? g.spec.block_size : std::min(smallest, g.spec.block_size);
  }
  return smallest == 0 ? 16 : smallest;
}

std::int64_t KvCacheLayout::attention_block_size() const {
  if (grouping == KvGrouping::kUniformGroups) return groups.front().spec.block_size;  // the cache's block size
  std::int64_t smallest = 0;
  for (const auto& g : groups) {
    if (g.spec.kind == AttentionKind::kMamba) continue;
    smallest = smallest == 0 ? g.spec.block_size : std::min(smallest, g.spec.block_size);
  }
  return smallest;
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
