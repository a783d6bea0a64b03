// The whole startup decision, per worker (docs/methodology.md §Budget, §Solver).
#include "gpubudget/fit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/limits.h"

namespace gpubudget {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool runs_on(const AttentionBackend& b, const GpuSpec& gpu) {
  if (b.platform != gpu.platform) return false;
  if (b.compute_capability_majors.empty()) return true;
  return std::find(b.compute_capability_majors.begin(), b.compute_capability_majors.end(),
                   gpu.compute_capability_major) != b.compute_capability_majors.end();
}

// vLLM's backend choice: the first backend in priority order that runs on this GPU and accepts the
// KV dtype (vllm/platforms/cuda.py::_get_backend_priorities).
const AttentionBackend* select_backend(const VllmProfile& profile, const GpuSpec& gpu, AttentionKind kind, bool sparse,
                                       const std::string& kv_dtype) {
  for (const auto& b : profile.attention_backends) {
    if (b.kind == kind && b.sparse == sparse && runs_on(b, gpu) && contains(b.kv_cache_dtypes, kv_dtype)) return &b;
  }
  return nullptr;
}

const AttentionBackend* first_backend_on(const VllmProfile& profile, const GpuSpec& gpu, AttentionKind kind,
                                         bool sparse) {
  for (const auto& b : profile.attention_backends) {
    if (b.kind == kind && b.sparse == sparse && runs_on(b, gpu)) return &b;
  }
  return nullptr;
}

SchedulerLimits scheduler_limits(const Deployment& d, const GpuSpec& gpu, const VllmProfile& profile,
                                 std::int64_t max_model_len) {
  SchedulerLimits limits;
  const BatchDefaults* chosen = nullptr;
  for (const auto& b : profile.batch_defaults) {
    const bool big_enough = to_gib(gpu.memory) >= b.min_memory_gib;
    const bool excluded = !b.excluded_device_substring.empty() &&
                          lower(gpu.device_name).find(b.excluded_device_substring) != std::string::npos;
    if (big_enough && !excluded) {
      chosen = &b;
      break;
    }
  }
  const bool llm = d.entry_point == EntryPoint::kLlm;
  limits.max_num_batched_tokens = d.max_num_batched_tokens.value_or(
      chosen ? (llm ? chosen->llm_class_max_num_batched_tokens : chosen->max_num_batched_tokens) : 2048);
  limits.max_num_seqs =
      d.max_num_seqs.value_or(chosen ? (llm ? chosen->llm_class_max_num_seqs : chosen->max_num_seqs) : 128);
  limits.defaulted = !d.max_num_batched_tokens || !d.max_num_seqs;
  // SchedulerConfig never schedules more tokens than max_num_seqs full-length requests hold.
  limits.max_num_batched_tokens = std::min(limits.max_num_batched_tokens, limits.max_num_seqs * max_model_len);
  return limits;
}

std::string gib_text(Bytes b) { return fmt::format("{:.2f} GiB", to_gib(b)); }

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

std::string vllm_error_text(const FitResult& r, const WorkerBudget& w, const VllmMessages& m) {
  if (w.kv_cache.count() <= 0) return m.no_kv_memory;
  if (r.fits) return "";
  std::string estimate;
  if (r.max_model_len > 0) {
    estimate = m.estimate_sentence;
    replace_all(estimate, "{estimated_max_model_len}", std::to_string(r.max_model_len));
  }
  std::string text = m.kv_cache_too_small;
  replace_all(text, "{max_model_len}", std::to_string(r.judged_max_model_len));
  replace_all(text, "{needed_gib}", format_vllm_gib(w.needed, m.gib_fixed_two_decimals));
  replace_all(text, "{available_gib}", format_vllm_gib(w.kv_cache, m.gib_fixed_two_decimals));
  replace_all(text, "{estimate}", estimate);
  return text;
}

}  // namespace

std::string format_vllm_gib(Bytes b, bool fixed_two_decimals) {
  const double rounded = std::round(to_gib(b) * 100.0) / 100.0;
  std::string text = fmt::format("{:.2f}", rounded);
  if (fixed_two_decimals) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text += '0';
  return text;
}

void check_max_model_len(const ModelSpec& model, std::int64_t requested) {
  if (requested < 1) {
    throw InputError(fmt::format("--max-model-len: expected a positive length, `auto` or -1, got {}", requested));
  }
  if (requested > model.derived_max_model_len) {
    throw InputError(fmt::format(
        "--max-model-len: User-specified max_model_len ({}) is greater than the derived max_model_len ({} = {} "
        "in {}); vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
        requested, model.derived_max_model_len_source, model.derived_max_model_len, model.source));
  }
}

namespace {

// The MXFP4 MoE padding of the profile's backend for the GPU's compute capability.
ParallelLayout with_mxfp4_padding(ParallelLayout layout, const GpuSpec& gpu, const VllmProfile& profile) {
  for (const auto& mx : profile.mxfp4_moe_backends) {
    const auto& ccs = mx.compute_capability_majors;
    if (std::find(ccs.begin(), ccs.end(), gpu.compute_capability_major) != ccs.end()) {
      layout.mxfp4_intermediate_align = mx.intermediate_align;
      layout.mxfp4_hidden_align = mx.hidden_align;
      break;
    }
  }
  return layout;
}

}  // namespace

ParallelLayout make_worker_layout(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment,
                                  const VllmProfile& profile, std::int64_t pp_rank) {
  return with_mxfp4_padding(make_parallel_layout(model, deployment, pp_rank), gpu, profile);
}

struct FitMemo::Entries {
  struct LayoutKey {
    std::int64_t tp, pp, dp, dcp, redundant_experts, pp_rank;
    bool expert_parallel;
    std::vector<std::int64_t> pp_partition;
    auto operator<=>(const LayoutKey&) const = default;
  };
  struct LayoutEntry {
    std::optional<ParallelLayout> layout;
    std::string error;  // the InputError's message when vLLM refuses the layout
  };
  std::map<LayoutKey, LayoutEntry> layouts;
  std::vector<std::pair<ParallelLayout, std::unique_ptr<const WeightsBreakdown>>> weights;
};

FitMemo::FitMemo(const ModelSpec& model) : model_(&model), entries_(std::make_unique<Entries>()) {}
FitMemo::~FitMemo() = default;

const ParallelLayout& FitMemo::layout(const Deployment& d, std::int64_t pp_rank) {
  Entries::LayoutKey key{d.tensor_parallel_size,       d.pipeline_parallel_size, d.data_parallel_size,
                         d.decode_context_parallel_size, d.num_redundant_experts,  pp_rank,
                         d.enable_expert_parallel,       d.pp_layer_partition};
  auto [it, added] = entries_->layouts.try_emplace(std::move(key));
  Entries::LayoutEntry& entry = it->second;
  if (added) {
    try {
      entry.layout = make_parallel_layout(*model_, d, pp_rank);
    } catch (const InputError& e) {
      entry.error = e.what();
    }
  }
  if (!entry.layout) throw InputError(entry.error);
  return *entry.layout;
}

const WeightsBreakdown& FitMemo::weights(const ParallelLayout& layout) {
  ParallelLayout key = layout;
  key.dcp = 1;  // no weight depends on it
  for (const auto& [have, weights] : entries_->weights) {
    if (have == key) return *weights;
  }
  entries_->weights.emplace_back(key, std::make_unique<const WeightsBreakdown>(weights_per_gpu(*model_, layout)));
  return *entries_->weights.back().second;
}

ModelSpec model_for_dtype(const ModelSpec& checkpoint, ModelDtypeChoice dtype) {
  switch (dtype) {
    case ModelDtypeChoice::kAuto: return checkpoint;
    case ModelDtypeChoice::kBFloat16: return with_dtype(checkpoint, Dtype::kBFloat16);
    case ModelDtypeChoice::kFloat16: return with_dtype(checkpoint, Dtype::kFloat16);
    case ModelDtypeChoice::kFloat32: return with_dtype(checkpoint, Dtype::kFloat32);
  }
  return checkpoint;
}

FitResult fit(const ModelSpec& checkpoint, const GpuSpec& gpu, const Deployment& d, const VllmProfile& profile) {
  return fit(checkpoint, std::vector<GpuSpec>(static_cast<std::size_t>(std::max<std::int64_t>(1, d.pipeline_parallel_size)), gpu),
             d, profile);
}

FitResult fit(const ModelSpec& checkpoint, const std::vector<GpuSpec>& stage_gpus, const Deployment& d,
              const VllmProfile& profile, FitMemo* memo) {
  check_deployment_limits(d);
  if (stage_gpus.empty() || (stage_gpus.size() != 1 && static_cast<std::int64_t>(stage_gpus.size()) != d.pipeline_parallel_size)) {
    throw InputError(fmt::format("--gpu: {} GPU presets for --pipeline-parallel-size {}; give one, or one per stage",
                                 stage_gpus.size(), d.pipeline_parallel_size));
  }
  auto gpu_of = [&](std::int64_t stage) -> const GpuSpec& {
    return stage_gpus.size() == 1 ? stage_gpus.front() : stage_gpus[static_cast<std::size_t>(stage)];
  };
  // The engine's choices (attention backend, scheduler defaults) are made on the first stage's GPU.
  const GpuSpec& gpu = stage_gpus.front();
  // --dtype rebuilds the unquantized tensors in another dtype.
  const bool converts = d.dtype != ModelDtypeChoice::kAuto;
  const ModelSpec converted = converts ? model_for_dtype(checkpoint, d.dtype) : ModelSpec{};
  const ModelSpec& model = converts ? converted : checkpoint;
  if (memo != nullptr && &memo->model() != &model) memo = nullptr;
  FitResult r;
  r.gpu_memory_utilization = d.gpu_memory_utilization.value_or(profile.default_gpu_memory_utilization);
  if (!(r.gpu_memory_utilization > 0.0 && r.gpu_memory_utilization <= 1.0)) {
    throw InputError(fmt::format("--gpu-memory-utilization: expected a value in (0, 1], got {}",
                                 r.gpu_memory_utilization));
  }
  r.kv_cache_dtype = resolve_kv_cache_dtype(model, d.kv_cache_dtype);

  // Attention backend and block size.
  const bool any_mla = std::any_of(model.layers.begin(), model.layers.end(),
                                   [](const LayerSpec& l) { return l.attention.kind == AttentionKind::kMla; });
  const AttentionKind kind = any_mla ? AttentionKind::kMla : AttentionKind::kFull;
  const bool sparse = model.sparse_attention;
  const AttentionBackend* backend = select_backend(profile, gpu, kind, sparse, r.kv_cache_dtype.name);
  if (backend == nullptr) {
    const AttentionBackend* fallback = first_backend_on(profile, gpu, kind, sparse);
    r.vllm_would_start = false;
    r.start_blocker = fmt::format(
        "no {} attention backend of the vLLM {} profile accepts a {} KV cache on {}{}; vLLM would fail to start "
        "with it",
        kind == AttentionKind::kMla ? "MLA" : "standard", profile.version, r.kv_cache_dtype.name, gpu.name,
        gpu.platform == Platform::kCuda
            ? fmt::format(" (compute capability {}.{})", gpu.compute_capability_major, gpu.compute_capability_minor)
            : "");
    r.warnings.push_back(r.start_blocker);
    backend = fallback;
  }
  r.attention_backend = backend != nullptr ? backend->name : "";
  // MLAAttention: FLASHMLA_SPARSE stores any quantized KV cache in its fp8_ds_mla layout.
  if (backend != nullptr && !backend->quantized_kv_layout.empty() && r.kv_cache_dtype.element_bytes == 1) {
    r.kv_cache_dtype = {backend->quantized_kv_layout, 1,
                        fmt::format("{}, stored by {} as {}", r.kv_cache_dtype.name, backend->name,
                                    backend->quantized_kv_layout)};
  }
  r.block_size = d.block_size.value_or(backend != nullptr ? backend->block_size : 16);
  if (r.block_size < 1) throw InputError(fmt::format("--block-size: expected a positive value, got {}", r.block_size));

  // The judged length: --max-model-len, or the model's own maximum.
  r.judged_is_derived = !d.max_model_len.has_value();
  r.judged_max_model_len = d.max_model_len.value_or(model.derived_max_model_len);
  check_max_model_len(model, r.judged_max_model_len);
  r.scheduler = scheduler_limits(d, gpu, profile, r.judged_max_model_len);

  for (std::int64_t stage = 0; stage < d.pipeline_parallel_size; ++stage) {
    const GpuSpec& stage_gpu = gpu_of(stage);
    if (stage_gpu.memory.count() < 1 || stage_gpu.memory > kMaxGpuMemory) {
      throw InputError(fmt::format("--gpu-memory {} bytes ({}): expected from 1 to {} bytes", stage_gpu.memory.count(),
                                   stage_gpu.name, kMaxGpuMemory.count()));
    }
    if (stage_gpu.compute_capability_major != gpu.compute_capability_major || stage_gpu.platform != gpu.platform) {
      const AttentionBackend* here =
          select_backend(profile, stage_gpu, kind, sparse, r.kv_cache_dtype.name);
      if (here == nullptr || here->name != r.attention_backend) {
        r.warnings.push_back(fmt::format("pipeline stage {} runs on {}, where vLLM would not pick the {} backend of "
                                         "stage 0 ({}); the budget assumes {}",
                                         stage, stage_gpu.name, r.attention_backend, gpu.name, r.attention_backend));
      }
    }
    const Bytes requested(static_cast<std::int64_t>(
        std::ceil(static_cast<double>(stage_gpu.memory.count()) * r.gpu_memory_utilization)));
    const ParallelLayout layout = memo != nullptr ? with_mxfp4_padding(memo->layout(d, stage), stage_gpu, profile)
                                                  : make_worker_layout(model, stage_gpu, d, profile, stage);
    WorkerBudget w;
    w.pp_rank = stage;
    w.first_layer = layout.first_layer;
    w.end_layer = layout.end_layer;
    w.requested = requested;
    w.weights = memo != nullptr ? memo->weights(layout) : weights_per_gpu(model, layout);
    w.gpu = stage_gpu.name;
    w.overheads =
        estimate_overheads(model, layout, stage_gpu, profile, r.scheduler, d.enforce_eager, !d.skip_mm_profiling);
    if (d.kv_cache_memory) {
      w.kv_cache = *d.kv_cache_memory;
    } else {
      w.kv_cache = requested - w.weights.total - w.overheads.activation_peak - w.overheads.non_torch;
      if (w.overheads.cudagraph_charged) w.kv_cache -= w.overheads.cudagraph;
    }
    const MambaCacheMode mamba_mode = d.mamba_cache_mode.value_or(profile.mamba_cache_mode);
    w.kv = make_kv_cache_layout(model, layout, r.kv_cache_dtype, r.block_size, r.scheduler.max_num_batched_tokens,
                                mamba_mode);
    w.num_blocks = w.kv.num_blocks(w.kv_cache);
    w.needed = w.kv.needed(r.judged_max_model_len);
    w.max_model_len = largest_fitting_length(w.kv, w.kv_cache, r.judged_max_model_len);
    r.workers.push_back(std::move(w));
  }

  // vLLM takes the minimum over workers for both the block count and the auto-fitted length.
  r.binding = 0;
  r.num_blocks = r.workers.front().num_blocks;
  for (std::size_t i = 0; i < r.workers.size(); ++i) {
    const auto& w = r.workers[i];
    r.num_blocks = std::min(r.num_blocks, w.num_blocks);
    const auto& best = r.workers[r.binding];
    if (w.max_model_len < best.max_model_len ||
        (w.max_model_len == best.max_model_len && w.num_blocks < best.num_blocks)) {
      r.binding = i;
    }
  }
  const WorkerBudget& bw = r.binding_worker();
  // Hybrid models raise the attention block size to hold a recurrent state per page.
  if (bw.kv.attention_block_size() > 0) r.block_size = bw.kv.attention_block_size();
  r.needed = bw.needed;
  r.max_model_len = bw.max_model_len;
  r.max_model_len_low = r.max_model_len_high = r.max_model_len;
  if (!d.kv_cache_memory) {
    const auto& o = bw.overheads;
    const double overheads = static_cast<double>(o.activation_peak.count() + o.non_torch.count() +
                                                 (o.cudagraph_charged ? o.cudagraph.count() : 0));
    const Bytes swing(static_cast<std::int64_t>(overheads * o.relative_uncertainty));
    r.max_model_len_low = largest_fitting_length(bw.kv, bw.kv_cache - swing, r.judged_max_model_len);
    r.max_model_len_high = largest_fitting_length(bw.kv, bw.kv_cache + swing, r.judged_max_model_len);
  }
  r.fits = true;
  for (const auto& w : r.workers) r.fits = r.fits && w.needed <= w.kv_cache && w.kv_cache.count() > 0;

  // _report_kv_cache_config: concurrency = num_blocks / blocks per request of length M.
  const std::int64_t blocks_per_request = bw.kv.blocks_per_request(r.judged_max_model_len);
  r.max_concurrency = static_cast<double>(r.num_blocks) / static_cast<double>(blocks_per_request);
  if (profile.kv_tokens_from_concurrency) {
    r.kv_cache_tokens = static_cast<std::int64_t>(r.max_concurrency * static_cast<double>(r.judged_max_model_len));
  } else {
    r.kv_cache_tokens = r.num_blocks / bw.kv.num_groups() * bw.kv.min_block_size() * d.decode_context_parallel_size;
  }

  // The worker vLLM would fail on first: the binding one.
  r.vllm_error = vllm_error_text(r, bw, profile.messages);

  return r;
}

std::vector<Explanation> explain_fit(const ModelSpec& checkpoint, const std::vector<GpuSpec>& stage_gpus,
                                     const Deployment& d, const VllmProfile& profile, const FitResult& r) {
  const auto gpu_of = [&](std::int64_t stage) -> const GpuSpec& {
    return stage_gpus.size() == 1 ? stage_gpus.front() : stage_gpus.at(static_cast<std::size_t>(stage));
  };
  const GpuSpec& gpu = stage_gpus.at(0);
  const bool converts = d.dtype != ModelDtypeChoice::kAuto;
  const ModelSpec converted = converts ? model_for_dtype(checkpoint, d.dtype) : ModelSpec{};
  const ModelSpec& model = converts ? converted : checkpoint;
  const WorkerBudget& bw = r.binding_worker();
  const auto& o = bw.overheads;
  std::vector<Explanation> out = {
      {"requested", fmt::format("ceil(total {} B x gpu_memory_utilization {})", gpu_of(bw.pp_rank).memory.count(),
                                r.gpu_memory_utilization),
       fmt::format("{} B = {}", bw.requested.count(), gib_text(bw.requested))},
      {"weights", "sum of every local tensor shard (see `weights`)", gib_text(bw.weights.total)},
      {"activation_peak",
       fmt::format("max(sampler {} B/logit x min(T {}, S {}) x vocab {}, forward {} x T x widest activation x {} B)"
                   " + cached encoder outputs, or the encoder pass if larger",
                   profile.overheads.sampler_bytes_per_logit, r.scheduler.max_num_batched_tokens,
                   r.scheduler.max_num_seqs, model.vocab_size, profile.overheads.forward_activation_factor,
                   element_bytes(model.dtype)),
       fmt::format("max({}, {}) + {} vs {} = {}", gib_text(o.sampler), gib_text(o.forward),
                   gib_text(o.encoder.cached_outputs), gib_text(o.encoder.pass), gib_text(o.activation_peak))},
      {"encoder_profile",
       model.vision ? fmt::format("{} item(s) x {} tokens ({}), {} patches through the ViT; {}", o.encoder.items,
                                  model.vision->profile.max_tokens_per_item, model.vision->profile.max_item_source,
                                  o.encoder.patches,
                                  d.skip_mm_profiling ? "skipped (--skip-mm-profiling)" : "first pipeline stage")
                    : std::string("no multimodal encoder"),
       fmt::format("pass {}, cached outputs {}", gib_text(o.encoder.pass), gib_text(o.encoder.cached_outputs))},
      {"non_torch", fmt::format("vLLM {} profile, {} GPU(s), {}", profile.version, d.tensor_parallel_size *
                                d.pipeline_parallel_size, gpu.nvlink ? "NVLink" : "PCIe"),
       gib_text(o.non_torch)},
      {"cudagraph", fmt::format("base + per-layer x {} layers; {}", bw.end_layer - bw.first_layer,
                                o.cudagraph_charged ? "charged (vLLM >= 0.21)" : "not charged by this vLLM"),
       gib_text(o.cudagraph)},
      {"kv_cache", d.kv_cache_memory ? std::string("--kv-cache-memory-bytes")
                                     : std::string("requested - weights - activation_peak - non_torch") +
                                           (o.cudagraph_charged ? " - cudagraph" : ""),
       fmt::format("{} B = {}", bw.kv_cache.count(), gib_text(bw.kv_cache))},
      {"kv_bytes_per_token",
       fmt::format("sum over the {} KV layers that grow with length of their bytes per token ({} B for the first), "
                   "dtype {} ({} B)",
                   std::count_if(bw.kv.layers.begin(), bw.kv.layers.end(), [](const KvLayer& l) {
                     return l.grows_with_length();
                   }),
                   bw.kv.layers.empty() ? 0 : bw.kv.layers.front().token_bytes.count(), r.kv_cache_dtype.name,
                   r.kv_cache_dtype.element_bytes),
       fmt::format("{} B", bw.kv.bytes_per_token().count())},
      {"needed", fmt::format("per-layer max_memory_usage for {} tokens (block {}), {}", r.judged_max_model_len,
                             r.block_size, bw.kv.grouping == KvGrouping::kHybrid
                                               ? fmt::format("padded to {} groups of {} layers", bw.kv.groups.size(),
                                                             bw.kv.group_size)
                                               : std::string("summed over layers")),
       fmt::format("{} B = {}", r.needed.count(), gib_text(r.needed))},
      {"num_blocks",
       bw.kv.grouping == KvGrouping::kUniformType ? std::string("kv_cache // sum of the layers' pages")
                                                  : std::string("kv_cache // page // layers per group"),
       std::to_string(r.num_blocks)},
      {"max_model_len", "binary search on [1, judged length] for needed(M) <= kv_cache (estimate_max_model_len)",
       std::to_string(r.max_model_len)},
  };
  return out;
}

}  // namespace gpubudget
