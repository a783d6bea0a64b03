// decide_kv_cache (kv_settings.h): the KV dtype, attention backend, block size and hybrid-model
// choices vLLM makes once per engine, with the version's rules from the profile.
#include "memory/kv_settings.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/error.h"
#include "engine/profile_history.h"

namespace gpubudget {

bool AttentionBackend::supports_block_size(std::int64_t b) const {
  if (kernel_block_multiple > 0) return b % kernel_block_multiple == 0;
  if (kernel_block_sizes.empty()) return true;
  return std::any_of(kernel_block_sizes.begin(), kernel_block_sizes.end(),
                     [&](std::int64_t k) { return b % k == 0; });
}

std::int64_t AttentionBackend::min_kernel_block_size() const {
  if (kernel_block_multiple > 0) return kernel_block_multiple;
  if (kernel_block_sizes.empty()) return block_size;
  return *std::min_element(kernel_block_sizes.begin(), kernel_block_sizes.end());
}

namespace detail {

namespace {

template <typename T>
bool contains(const std::vector<T>& values, const T& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool runs_on(const AttentionBackend& b, const GpuSpec& gpu) {
  if (b.platform != gpu.platform) return false;
  return b.compute_capability_majors.empty() || contains(b.compute_capability_majors, gpu.compute_capability_major);
}

const LayerSpec* first_attention_layer(const ModelSpec& model) {
  for (const auto& l : model.layers) {
    const auto k = l.attention.kind;
    if (k != AttentionKind::kNone && k != AttentionKind::kMamba) return &l;
  }
  return nullptr;
}

std::string gpu_text(const GpuSpec& gpu) {
  return gpu.platform == Platform::kCuda
             ? fmt::format("{} (compute capability {}.{})", gpu.name, gpu.compute_capability_major,
                           gpu.compute_capability_minor)
             : gpu.name;
}

// The KV dtype a backend stores: `auto` may map to the backend's own default (0.11.0 FlashMLA-sparse).
KvCacheDtype dtype_on(const AttentionBackend& b, const KvCacheDtype& resolved, bool requested_auto) {
  if (requested_auto && !b.auto_kv_cache_dtype.empty() && resolved.reason.rfind("auto", 0) == 0) {
    return kv_cache_dtype_named(b.auto_kv_cache_dtype, fmt::format("auto: {}'s default on this vLLM", b.name));
  }
  return resolved;
}

// vLLM's backend choice: the first backend in priority order that runs on this GPU, accepts the KV
// dtype, meets its model conditions and (0.18+) runs a user-given block size
// (vllm/platforms/cuda.py::_get_backend_priorities, get_attn_backend).
struct BackendChoice {
  const AttentionBackend* backend = nullptr;
  std::string blocker;
};

BackendChoice select_backend(const ModelSpec& model, const GpuSpec& gpu, const Deployment& d, const VllmProfile& profile,
                             AttentionKind kind, const KvCacheDtype& dtype) {
  const bool sparse = model.sparse_attention;
  const LayerSpec* attn = first_attention_layer(model);
  const std::int64_t heads_per_rank = attn ? attn->attention.num_attention_heads / d.tensor_parallel_size : 0;
  const bool requested_auto = d.kv_cache_dtype == KvCacheDtypeChoice::kAuto;
  const bool check_block = d.block_size && profile.kv_cache.user_block_size == UserBlockSizeRule::kKernelCompatible;
  BackendChoice out;
  // --attention-backend wins over the model's own choice (its config hook applies only when none is named).
  const std::string& forced_name = d.attention_backend.empty() ? model.forced_attention_backend : d.attention_backend;
  const std::string forced_by = d.attention_backend.empty() ? "the model forces it" : "--attention-backend";
  if (!d.attention_backend.empty() &&
      std::none_of(profile.attention_backends.begin(), profile.attention_backends.end(),
                   [&](const AttentionBackend& b) { return b.name == d.attention_backend; })) {
    std::vector<std::string> names;
    for (const auto& b : profile.attention_backends) {
      if (b.kind == kind && std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
    }
    throw InputError(fmt::format("--attention-backend {}: not an attention backend of the vLLM {} profile for {} "
                                 "attention (it knows {})",
                                 d.attention_backend, profile.version, kind == AttentionKind::kMla ? "MLA" : "standard",
                                 fmt::join(names, ", ")));
  }
  // The profile's lists are vLLM's priority lists per GPU generation: a backend vLLM can be made to use
  // elsewhere is not listed there, so a forced backend listed only for other GPUs is not judged.
  const auto same_kind = [&](const AttentionBackend& b) {
    return b.name == d.attention_backend && b.kind == kind && b.platform == gpu.platform;
  };
  if (!d.attention_backend.empty() &&
      std::any_of(profile.attention_backends.begin(), profile.attention_backends.end(), same_kind) &&
      std::none_of(profile.attention_backends.begin(), profile.attention_backends.end(),
                   [&](const AttentionBackend& b) { return same_kind(b) && runs_on(b, gpu); })) {
    throw InputError(fmt::format("--attention-backend {}: the vLLM {} profile lists it among the backends vLLM picks "
                                 "on other GPUs, not on {}; whether it runs there, and with which block size and KV "
                                 "dtypes, is not modelled",
                                 d.attention_backend, profile.version, gpu_text(gpu)));
  }
  const AttentionBackend* block_refused = nullptr;
  for (const auto& b : profile.attention_backends) {
    if (b.kind != kind || b.sparse != sparse || !runs_on(b, gpu)) continue;
    if (!forced_name.empty() && b.name != forced_name) continue;
    if (b.max_query_heads_per_rank > 0 && heads_per_rank > b.max_query_heads_per_rank) continue;
    if (b.qk_nope_head_dim > 0 && model.mla_qk_nope_head_dim != b.qk_nope_head_dim) continue;
    if (!contains(b.kv_cache_dtypes, dtype_on(b, dtype, requested_auto).name)) continue;
    if (check_block && !b.supports_block_size(*d.block_size)) {
      if (block_refused == nullptr) block_refused = &b;
      continue;
    }
    out.backend = &b;
    return out;
  }
  const char* kind_name = kind == AttentionKind::kMla ? (sparse ? "sparse MLA" : "MLA") : "standard";
  const auto forced = std::find_if(profile.attention_backends.begin(), profile.attention_backends.end(), [&](const auto& b) {
    return b.name == forced_name && b.kind == kind && runs_on(b, gpu);
  });
  if (!forced_name.empty() && forced == profile.attention_backends.end()) {
    out.blocker = fmt::format("{} runs only on the {} attention backend ({}), which vLLM {} does not run for its {} "
                              "attention on {}; vLLM would fail to start (\"Selected backend {} is not valid for this "
                              "configuration\")",
                              model.architecture, forced_name, forced_by, profile.version,
                              kind == AttentionKind::kMla ? "MLA" : "standard", gpu_text(gpu), forced_name);
  } else if (!forced_name.empty() && !forced->kv_cache_dtype_error.empty() &&
             !contains(forced->kv_cache_dtypes, dtype_on(*forced, dtype, requested_auto).name)) {
    out.blocker = fmt::format(fmt::runtime(forced->kv_cache_dtype_error), kv_cache_dtype_choice_name(d.kv_cache_dtype)) +
                  " (vLLM would fail to start; pass --kv-cache-dtype fp8)";
  } else if (block_refused != nullptr) {
    out.blocker = fmt::format("no {} attention backend of vLLM {} runs a block size of {} with a {} KV cache on {} "
                              "({} kernels take {}); vLLM would fail to start with it",
                              kind_name, profile.version, *d.block_size, dtype.name, gpu_text(gpu), block_refused->name,
                              block_refused->kernel_block_multiple > 0
                                  ? fmt::format("multiples of {}", block_refused->kernel_block_multiple)
                                  : fmt::format("multiples of {}", fmt::join(block_refused->kernel_block_sizes, " or ")));
  } else {
    out.blocker = fmt::format("no {} attention backend of the vLLM {} profile accepts a {} KV cache on {}; vLLM would "
                              "fail to start with it",
                              kind_name, profile.version, dtype.name, gpu_text(gpu));
  }
  // The budget is still computed, with the model's own backend (on whatever GPU the profile lists it) or
  // the first of the kind on this GPU.
  if (!forced_name.empty()) {
    for (const auto& b : profile.attention_backends) {
      if (b.name == forced_name && b.kind == kind && b.platform == gpu.platform) {
        out.backend = &b;
        return out;
      }
    }
  }
  for (const auto& b : profile.attention_backends) {
    if (b.kind == kind && b.sparse == sparse && runs_on(b, gpu)) {
      out.backend = &b;
      break;
    }
  }
  return out;
}

// --kv-cache-dtype-skip-layers entries: decoder layer indices or "sliding_window".
void parse_skip_layers(const Deployment& d, const ModelSpec& model, KvCacheSettings& s) {
  for (const auto& entry : d.kv_cache_dtype_skip_layers) {
    if (entry == "sliding_window") {
      s.skip_sliding_window = true;
      continue;
    }
    std::int64_t index = -1;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
    const auto layers = static_cast<std::int64_t>(model.layers.size());
    if (ec != std::errc() || end != entry.data() + entry.size() || index < 0 || index >= layers) {
      throw InputError(fmt::format("--kv-cache-dtype-skip-layers: \"{}\" is neither \"sliding_window\" nor a decoder "
                                   "layer index in [0, {})",
                                   entry, layers));
    }
    s.skip_layers.push_back(index);
  }
}

bool hybrid_manager_on(const ModelSpec& model, const Deployment& d, const KvCacheRules& rules,
                       std::vector<Notice>& notes) {
  const bool chunked = std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) {
    return l.attention.kind == AttentionKind::kChunkedLocal;
  });
  const bool chunked_allowed =
      d.allow_chunked_local_attn_with_hybrid_kv_cache.value_or(rules.chunked_local_keeps_hybrid_manager);
  const bool runtime_disables = chunked && !chunked_allowed;
  const bool connector_disables =
      !d.kv_connector.empty() && !contains(rules.kv_connectors_with_hybrid_manager, d.kv_connector);
  if (runtime_disables) {
    notes.push_back({NoticeCode::kHybridKvManagerOff,
                     "chunked-local attention turns the hybrid KV cache manager off "
                     "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0)"});
  }
  if (!rules.hybrid_manager_flag_overrides) {
    // Before 0.14 the flag is a plain bool: any connector and chunked-local attention turn it off.
    return !d.disable_hybrid_kv_cache_manager.value_or(false) && !runtime_disables && d.kv_connector.empty();
  }
  if (!d.disable_hybrid_kv_cache_manager) {
    if (connector_disables) {
      notes.push_back({NoticeCode::kHybridKvManagerOff,
                       fmt::format("KV connector {} turns the hybrid KV cache manager off", d.kv_connector)});
    }
    return !runtime_disables && !connector_disables;
  }
  if (!*d.disable_hybrid_kv_cache_manager && runtime_disables) {
    throw InputError("--no-disable-hybrid-kv-cache-manager: Hybrid KV cache manager was explicitly enabled but is not "
                     "supported in this configuration (vLLM raises ValueError; chunked-local attention needs "
                     "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1)");
  }
  return !*d.disable_hybrid_kv_cache_manager;
}

// Prefix caching and mamba_cache_mode of a hybrid model (EngineArgs defaults; MambaModelConfig.
// verify_and_update_config).
void decide_mamba_mode(const ModelSpec& model, const Deployment& d, const VllmProfile& profile, KvDecisions& out) {
  const HybridRules& rules = profile.hybrid;
  const bool supports = contains(rules.mamba_prefix_caching_architectures, model.architecture);
  const bool asked = d.enable_prefix_caching.value_or(rules.prefix_caching_default);
  if (d.mamba_cache_mode && !rules.mamba_cache_mode_flag) {
    throw InputError(fmt::format("--mamba-cache-mode: vLLM {} has no such option ({})", profile.version,
                                 detail::arrival_phrase(profile, [](const VllmProfile& p) { return p.hybrid.mamba_cache_mode_flag; })));
  }
  if (d.mamba_block_size && !rules.mamba_block_size_flag) {
    throw InputError(fmt::format("--mamba-block-size: vLLM {} has no such option ({})", profile.version,
                                 detail::arrival_phrase(profile, [](const VllmProfile& p) { return p.hybrid.mamba_block_size_flag; })));
  }
  out.prefix_caching = asked;
  out.mamba_cache_mode = MambaCacheMode::kNone;
  if (rules.prefix_caching == "never") {
    if (asked) {
      out.warnings.push_back({NoticeCode::kPrefixCachingDisabled,
                              "Hybrid or mamba-based model detected: disabling prefix caching since it is not yet "
                              "supported."});
    }
    out.prefix_caching = false;
  } else if (rules.prefix_caching == "supporting_models") {
    if (asked && supports) {
      out.mamba_cache_mode = MambaCacheMode::kAll;  // states cached per block, as `all` later
    } else if (asked) {
      out.warnings.push_back({NoticeCode::kPrefixCachingDisabled,
                              "Hybrid or mamba-based model detected without support for prefix caching: disabling."});
      out.prefix_caching = false;
    }
  } else if (!asked) {
    if (d.mamba_cache_mode && *d.mamba_cache_mode != MambaCacheMode::kNone) {
      out.warnings.push_back(
          {NoticeCode::kMambaCacheModeChanged, "Mamba cache mode is set to 'none' when prefix caching is disabled"});
    }
  } else if (d.mamba_cache_mode && *d.mamba_cache_mode != MambaCacheMode::kNone) {
    out.mamba_cache_mode = *d.mamba_cache_mode;
    if (out.mamba_cache_mode == MambaCacheMode::kAll && !supports) {
      out.warnings.push_back({NoticeCode::kMambaCacheModeChanged,
                              fmt::format("{} does not support mamba_cache_mode 'all'; falling back to 'align' mode.",
                                          model.architecture)});
      out.mamba_cache_mode = MambaCacheMode::kAlign;
    }
  } else {
    out.mamba_cache_mode = supports ? MambaCacheMode::kAll : MambaCacheMode::kAlign;
    out.notes.push_back({NoticeCode::kMambaCacheModeDefault,
                         fmt::format("Mamba cache mode is set to '{}' for {} by default when prefix caching is enabled",
                                     mamba_cache_mode_name(out.mamba_cache_mode), model.architecture)});
  }
  if (d.mamba_block_size && !out.prefix_caching) {
    throw InputError("--mamba-block-size can only be set with --enable-prefix-caching (vLLM raises ValueError)");
  }
}

// DeepSeek-V4's caches (MLA-format sliding windows, grouped as group_and_unify_kv_cache_specs does): what
// this vLLM and gpubudget support of them.
void check_uniform_group_caches(const ModelSpec& model, const GpuSpec& gpu, const Deployment& d,
                                const VllmProfile& profile) {
  const bool has = std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) {
    return l.attention.mla_window ||
           std::any_of(l.extra_kv.begin(), l.extra_kv.end(), [](const AttentionSpec& a) { return a.mla_window; });
  });
  if (!has) return;
  if (!profile.kv_cache.deepseek_v4_kv_groups) {
    const auto first = detail::first_version_where(profile, [](const VllmProfile& p) { return p.kv_cache.deepseek_v4_kv_groups; });
    const std::string first_release_phrase = first.empty() ? "" : fmt::format(", first released in vLLM {}", first);
    throw InputError(fmt::format("{}: vLLM {} has no implementation of it (DeepseekV4ForCausalLM and its KV cache "
                                 "groups arrived in #40860, 2026-04-26{})",
                                 model.architecture, profile.version, first_release_phrase));
  }
  if (gpu.platform != Platform::kCuda) {
    throw InputError(fmt::format("{} on {}: vLLM's ROCm path for it (DeepseekV4ROCMAiterMLASparseBackend) is not "
                                 "modelled",
                                 model.architecture, gpu.name));
  }
  if (d.pipeline_parallel_size > 1) {
    throw InputError(fmt::format("{} with --pipeline-parallel-size {}: its KV cache groups per pipeline stage are not "
                                 "modelled",
                                 model.architecture, d.pipeline_parallel_size));
  }
  if (d.block_size && *d.block_size != 256) {
    throw InputError(fmt::format("--block-size {}: {}'s caches are laid out for 256-token blocks (its sliding "
                                 "windows and compressor states share the full-MLA pages); other sizes are not modelled",
                                 *d.block_size, model.architecture));
  }
}

}  // namespace

KvDecisions decide_kv_cache(const ModelSpec& model, const GpuSpec& gpu, const Deployment& d, const VllmProfile& profile,
                            std::int64_t max_num_batched_tokens) {
  const KvCacheRules& rules = profile.kv_cache;
  KvDecisions out;
  KvCacheSettings& s = out.settings;
  s.max_num_batched_tokens = max_num_batched_tokens;
  s.need = rules.need;
  s.hybrid_group_ratio = rules.hybrid_group_ratio;
  s.unify_page_sizes = rules.unify_page_sizes;

  // Argument parsing: the version's CacheDType and BlockSize literals.
  const std::string requested(kv_cache_dtype_choice_name(d.kv_cache_dtype));
  if (!contains(rules.kv_cache_dtypes, requested)) {
    throw InputError(fmt::format("--kv-cache-dtype: vLLM {} does not accept \"{}\" (it accepts {})", profile.version,
                                 requested, fmt::join(rules.kv_cache_dtypes, ", ")));
  }
  if (d.block_size && !rules.block_sizes.empty() && !contains(rules.block_sizes, *d.block_size)) {
    throw InputError(fmt::format("--block-size: vLLM {} does not accept {} (it accepts {})", profile.version,
                                 *d.block_size, fmt::join(rules.block_sizes, ", ")));
  }
  if (!d.kv_cache_dtype_skip_layers.empty() && !rules.skip_layers) {
    throw InputError(fmt::format("--kv-cache-dtype-skip-layers: vLLM {} has no such option ({})", profile.version,
                                 detail::arrival_phrase(profile, [](const VllmProfile& p) { return p.kv_cache.skip_layers; })));
  }
  parse_skip_layers(d, model, s);
  s.skip_dtype = kv_cache_dtype_named(std::string(dtype_name(model.dtype)), "--kv-cache-dtype-skip-layers: the model dtype");

  KvCacheDtype dtype = resolve_kv_cache_dtype(model, d.kv_cache_dtype, rules);
  if (dtype.warning && rules.compressed_tensors_kv_scheme == CheckpointKvSchemeRule::kForcesFp8) {
    const auto honoured = detail::first_version_where(profile, [](const VllmProfile& p) {
      return p.kv_cache.compressed_tensors_kv_scheme != CheckpointKvSchemeRule::kForcesFp8;
    });
    if (!honoured.empty()) dtype.warning->text += fmt::format("; vLLM {} honours the flag", honoured);
  }
  if (dtype.warning) out.warnings.push_back(*dtype.warning);
  // DeepseekV32ForCausalLM.verify_and_update_config (<= 0.17): fp8 becomes the FlashMLA-sparse layout.
  if (contains(rules.fp8_ds_mla_architectures, model.architecture) &&
      (dtype.name == "fp8" || dtype.name == "fp8_e4m3")) {
    dtype = kv_cache_dtype_named("fp8_ds_mla", fmt::format("{}, stored as fp8_ds_mla for {}", dtype.name,
                                                           model.architecture));
  }

  check_uniform_group_caches(model, gpu, d, profile);

  // Attention backend and block size. DeepSeek-V4's MLA caches sit beside its sliding window.
  const bool any_mla = std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) {
    return l.attention.kind == AttentionKind::kMla ||
           std::any_of(l.extra_kv.begin(), l.extra_kv.end(), [](const AttentionSpec& a) { return a.kind == AttentionKind::kMla; });
  });
  const AttentionKind kind = any_mla ? AttentionKind::kMla : AttentionKind::kFull;
  const BackendChoice choice = select_backend(model, gpu, d, profile, kind, dtype);
  out.backend = choice.backend;
  out.start_blocker = choice.blocker;
  const AttentionBackend* backend = out.backend;
  if (backend != nullptr) {
    dtype = dtype_on(*backend, dtype, d.kv_cache_dtype == KvCacheDtypeChoice::kAuto);
    // MLAAttention: FLASHMLA_SPARSE stores any quantized KV cache in its fp8_ds_mla layout.
    if (!backend->quantized_kv_layout.empty() && dtype.element_bytes == 1 && dtype.layout == KvElementLayout::kPlain) {
      dtype = kv_cache_dtype_named(backend->quantized_kv_layout, fmt::format("{}, stored by {} as {}", dtype.name,
                                                                             backend->name,
                                                                             backend->quantized_kv_layout));
    }
  }
  s.dtype = dtype;
  std::int64_t block = d.block_size.value_or(backend != nullptr ? backend->block_size : 16);
  if (backend != nullptr && d.block_size) {
    if (backend->ignores_user_block_size && *d.block_size != backend->block_size) {
      out.warnings.push_back({NoticeCode::kBlockSizeReplaced,
                              fmt::format("vLLM {} sets block size {} for {} whatever --block-size says; {} is ignored",
                                          profile.version, backend->block_size, backend->name, *d.block_size)});
      block = backend->block_size;
    } else if (rules.user_block_size == UserBlockSizeRule::kForcedByBackend && !backend->supports_block_size(block)) {
      if (backend->kind == AttentionKind::kMla) {
        out.warnings.push_back(
            {NoticeCode::kBlockSizeReplaced, fmt::format("vLLM {} replaces --block-size {} by {} for {}",
                                                         profile.version, block, backend->block_size, backend->name)});
        block = backend->block_size;
      } else if (out.start_blocker.empty()) {
        out.start_blocker = fmt::format("{} cannot run a block size of {} (its kernels take multiples of {}); vLLM would "
                                        "fail to start with it",
                                        backend->name, block, backend->min_kernel_block_size());
      }
    }
  }
  s.block_size = block;

  std::vector<Notice> hma_notes;
  s.hybrid_manager = hybrid_manager_on(model, d, rules, hma_notes);
  for (auto& n : hma_notes) out.notes.push_back(std::move(n));

  // Hybrid models: the state dtypes and bytes, the mode, and the block that holds a state per page.
  const MambaState* state = nullptr;
  for (const auto& l : model.layers) {
    if (const AttentionSpec* r = recurrent_state(l)) {
      state = &r->state;
      break;
    }
  }
  out.hybrid = state != nullptr;
  if (!out.hybrid) {
    if (d.mamba_block_size || d.mamba_cache_mode) {
      out.notes.push_back({NoticeCode::kMambaOptionsIgnored,
                           "the Mamba options have no effect: the model has no Mamba / linear-attention layers"});
    }
    return out;
  }
  decide_mamba_mode(model, d, profile, out);
  out.mamba_dtypes = resolve_mamba_state_dtypes(model, *state, d, profile.hybrid);
  out.mamba_state_bytes.assign(model.layers.size(), Bytes(0));
  for (const auto& l : model.layers) {
    const AttentionSpec* r = recurrent_state(l);
    if (r == nullptr) continue;
    const Bytes b = mamba_state_bytes(r->state, d.tensor_parallel_size, out.mamba_dtypes);
    out.mamba_state_bytes[static_cast<std::size_t>(l.index)] = b;
    out.mamba_state = std::max(out.mamba_state, b);
  }
  if (const LayerSpec* attn = first_attention_layer(model)) {
    out.attention_token_bytes = layer_kv_bytes_per_token(attn->attention, d.tensor_parallel_size, dtype);
  }
  s.mamba_state_blocks = out.mamba_cache_mode == MambaCacheMode::kNone ? 1 : out.mamba_cache_mode == MambaCacheMode::kAlign ? 2 : 0;
  // MambaSpec.num_speculative_blocks: every draft token holds one more state page (any method).
  s.mamba_speculative_blocks =
      d.speculative.method == SpeculativeMethod::kNone ? 0 : d.speculative.num_speculative_tokens;
  if (out.attention_token_bytes.count() == 0) {
    // Attention-free Mamba model: no padding, states of their own size.
    s.mamba_block_size = std::max<std::int64_t>(1, d.mamba_block_size.value_or(model.mamba_chunk_size));
    return out;
  }
  HybridAlignmentInputs in;
  in.block_size = block;
  in.user_block_size = d.block_size.has_value();
  in.min_kernel_block = backend != nullptr ? backend->min_kernel_block_size() : 16;
  in.mla = any_mla;
  if (const LayerSpec* attn = first_attention_layer(model)) {
    in.blackwell_head_256 = gpu.platform == Platform::kCuda && gpu.compute_capability_major == 10 &&
                            attn->attention.head_dim == 256 && backend != nullptr && backend->name == "FLASHINFER";
  }
  in.mode = out.mamba_cache_mode;
  in.user_mamba_block_size = d.mamba_block_size.value_or(0);
  in.mamba_chunk_size = model.mamba_chunk_size;
  out.alignment = align_hybrid_block_size(out.mamba_state, out.attention_token_bytes, in, profile.hybrid);
  s.block_size = out.alignment.block_size;
  // <= 0.17: the platform's MLA block forcing runs after the alignment (not verified on hardware).
  if (backend != nullptr && rules.user_block_size == UserBlockSizeRule::kForcedByBackend &&
      backend->kind == AttentionKind::kMla && !backend->supports_block_size(s.block_size)) {
    out.warnings.push_back(
        {NoticeCode::kBlockSizeUnverified,
         fmt::format("vLLM {} forces {}'s block size {} after aligning the hybrid block to {} tokens; "
                     "this combination is not verified on hardware",
                     profile.version, backend->name, backend->block_size, s.block_size)});
    if (backend->block_size * out.attention_token_bytes.count() < out.mamba_state.count() && out.start_blocker.empty()) {
      out.start_blocker = fmt::format("{} forces a block of {} tokens, whose attention page ({} B) cannot hold one "
                                      "Mamba state ({} B); vLLM would fail to start",
                                      backend->name, backend->block_size,
                                      backend->block_size * out.attention_token_bytes.count(), out.mamba_state.count());
    }
    s.block_size = backend->block_size;
  }
  s.mamba_state_page = out.attention_token_bytes * s.block_size;
  s.mamba_block_size = out.mamba_cache_mode == MambaCacheMode::kAll ? out.alignment.mamba_block_size : 0;
  if (out.mamba_cache_mode == MambaCacheMode::kAlign && profile.hybrid.align_block_at_most_batched_tokens &&
      s.block_size > max_num_batched_tokens && out.start_blocker.empty()) {
    out.start_blocker = fmt::format("In Mamba cache align mode, block_size ({}) must be <= max_num_batched_tokens ({}). "
                                    "(VllmConfig.validate_block_size; raise --max-num-batched-tokens)",
                                    s.block_size, max_num_batched_tokens);
  }
  return out;
}

}  // namespace detail

}  // namespace gpubudget
