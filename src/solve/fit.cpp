// The whole startup decision, per worker (docs/methodology.md §Budget, §Solver).
#include "gpubudget/fit.h"
#include "gpubudget/lora_buffers.h"
#include "gpubudget/served_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/limits.h"
#include "memory/all2all_buffers.h"
#include "memory/cuda_graph_choice.h"
#include "memory/kv_settings.h"
#include "engine/profile_history.h"
#include "solve/vllm_text.h"

namespace gpubudget {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
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
  // EngineArgs._set_default_max_num_seqs_and_batched_tokens_args: the batched DP MoE default (0.20+).
  if (!d.max_num_batched_tokens && profile.all2all.batched_dp_moe_default_tokens > 0 && detail::uses_batched_dp_moe(d)) {
    limits.max_num_batched_tokens = profile.all2all.batched_dp_moe_default_tokens;
  }
  limits.max_num_seqs =
      d.max_num_seqs.value_or(chosen ? (llm ? chosen->llm_class_max_num_seqs : chosen->max_num_seqs) : 128);
  limits.defaulted = !d.max_num_batched_tokens || !d.max_num_seqs;
  limits.max_model_len = max_model_len;
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

std::string vllm_error_text(const FitResult& r, Bytes needed, Bytes available, const VllmMessages& m) {
  if (available.count() <= 0) return m.no_kv_memory;
  if (r.kv_fits) return "";
  std::string estimate;
  if (r.max_model_len > 0) {
    estimate = m.estimate_sentence;
    replace_all(estimate, "{estimated_max_model_len}", std::to_string(r.max_model_len));
  }
  std::string text = m.kv_cache_too_small;
  replace_all(text, "{max_model_len}", std::to_string(r.judged_max_model_len));
  replace_all(text, "{needed_gib}", format_vllm_gib(needed, m.gib_fixed_two_decimals));
  replace_all(text, "{available_gib}", format_vllm_gib(available, m.gib_fixed_two_decimals));
  replace_all(text, "{estimate}", estimate);
  return text;
}

}  // namespace

namespace {

// vLLM's own maximum for the judged length check: "User-specified max_model_len (X) is greater
// than the derived max_model_len" unless X ≤ derived.
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

}  // namespace

namespace {

// The MXFP4 MoE padding of the profile's backend for the GPU's compute capability, from gpt-oss's
// priority list or every other model's.
// What launch options add to (or take from) a worker's weights: LoRA slots, the GPU n-gram proposer's
// token buffers, --cpu-offload-gb.
void add_launch_option_weights(WeightsBreakdown& weights, const ModelSpec& model, const ParallelLayout& layout,
                               const Deployment& d, const VllmProfile& profile, const SchedulerLimits& scheduler) {
  if (d.lora.enabled) {
    add_to_component(weights, Component::kLora,
                     lora_buffers(model, layout, d.lora, profile.lora, scheduler.max_num_batched_tokens,
                                  scheduler.max_num_seqs)
                         .total());
  }
  if (d.speculative.method == SpeculativeMethod::kNgramGpu && layout.is_last_stage()) {
    // GPUModelRunner.__init__: token_ids_gpu_tensor, int32 [max_num_seqs, max_model_len], and
    // num_tokens_no_spec_gpu, int32 [max_num_seqs].
    add_to_component(weights, Component::kDraft,
                     Bytes(detail::checked_mul(scheduler.max_num_seqs, scheduler.max_model_len) * 4 +
                           scheduler.max_num_seqs * 4));
  }
  if (d.offload_group_size > 0) {
    // create_offloader: a group size selects the prefetch offloader, whatever --cpu-offload-gb says.
    const PrefetchOffload prefetch = prefetch_offload(model, layout, d.offload_group_size, d.offload_num_in_group,
                                                      d.offload_prefetch_step);
    weights.cpu_offloaded = prefetch.offloaded;
    weights.total -= prefetch.offloaded;
    weights.prefetch_buffers = prefetch.buffers;
  } else if (d.cpu_offload_gb > 0) {
    weights.cpu_offloaded =
        cpu_offloaded_bytes(model, layout, bytes_from_double(d.cpu_offload_gb * static_cast<double>(kGiB)));
    weights.total -= weights.cpu_offloaded;
  }
}

ParallelLayout with_mxfp4_padding(ParallelLayout layout, const ModelSpec& model, const GpuSpec& gpu,
                                  const VllmProfile& profile) {
  for (const auto& mx : profile.mxfp4_moe_backends) {
    const auto& ccs = mx.compute_capability_majors;
    if (mx.for_gpt_oss == model.mxfp4_backends_of_gpt_oss && std::find(ccs.begin(), ccs.end(), gpu.compute_capability_major) != ccs.end()) {
      layout.mxfp4 = mx.packing;
      break;
    }
  }
  return layout;
}

}  // namespace

ParallelLayout make_worker_layout(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment,
                                  const VllmProfile& profile, std::int64_t pp_rank) {
  return with_mxfp4_padding(make_parallel_layout(model, deployment, pp_rank), model, gpu, profile);
}

struct FitMemo::Entries {
  struct LayoutKey {
    std::int64_t tp, pp, dp, dcp, redundant_experts, pp_rank;
    bool expert_parallel;
    std::vector<std::int64_t> pp_partition;
    // Spelled out (not a defaulted <=>): libc++ 14, the WebAssembly build's, has no <=> for vector.
    bool operator<(const LayoutKey& o) const {
      return std::tie(tp, pp, dp, dcp, redundant_experts, pp_rank, expert_parallel, pp_partition) <
             std::tie(o.tp, o.pp, o.dp, o.dcp, o.redundant_experts, o.pp_rank, o.expert_parallel, o.pp_partition);
    }
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

FitResult fit(const ModelSpec& checkpoint, const GpuSpec& gpu, const Deployment& d, const VllmProfile& profile) {
  return fit(checkpoint, std::vector<GpuSpec>(static_cast<std::size_t>(std::max<std::int64_t>(1, d.pipeline_parallel_size)), gpu),
             d, profile);
}

namespace {

// What one fit reads: the checkpoint and the model as the deployment makes vLLM build it, the GPU of
// every pipeline stage, the deployment and the version's rules.
struct FitInputs {
  const ModelSpec& checkpoint;
  const ModelSpec& model;  // model_as_served(checkpoint), or the checkpoint itself
  const std::vector<GpuSpec>& stage_gpus;
  const Deployment& d;
  const VllmProfile& profile;
  FitMemo* memo;  // null, or a memo of `model`
  // The engine's choices (attention backend, scheduler defaults) are made on the first stage's GPU.
  [[nodiscard]] const GpuSpec& gpu() const { return stage_gpus.front(); }
  [[nodiscard]] const GpuSpec& gpu_of(std::int64_t stage) const {
    return stage_gpus.size() == 1 ? stage_gpus.front() : stage_gpus[static_cast<std::size_t>(stage)];
  }
};

// The engine's decisions beyond the KV cache's that the workers' budgets need.
struct EngineChoices {
  detail::KvDecisions kv;
  detail::CudaGraphChoice graphs;
  detail::All2AllBuffers all2all;
};

// Phase 1: what vLLM refuses before it builds anything (InputError).
void check_request(const ModelSpec& checkpoint, const std::vector<GpuSpec>& stage_gpus, const Deployment& d) {
  check_deployment_limits(d);
  check_servable_alone(checkpoint);
  if (stage_gpus.empty() || (stage_gpus.size() != 1 && static_cast<std::int64_t>(stage_gpus.size()) != d.pipeline_parallel_size)) {
    throw InputError(fmt::format("--gpu: {} GPU presets for --pipeline-parallel-size {}; give one, or one per stage",
                                 stage_gpus.size(), d.pipeline_parallel_size));
  }
}

// Phase 2: the utilization, the judged length, the scheduler limits and the KV-cache decisions (dtype,
// backend, block size, hybrid mode).
detail::KvDecisions decide_engine(const FitInputs& in, FitResult& r) {
  const Deployment& d = in.d;
  const VllmProfile& profile = in.profile;
  const ModelSpec& model = in.model;
  const GpuSpec& gpu = in.gpu();
  r.gpu_memory_utilization = d.gpu_memory_utilization.value_or(profile.default_gpu_memory_utilization);
  if (!(r.gpu_memory_utilization > 0.0 && r.gpu_memory_utilization <= 1.0)) {
    throw InputError(fmt::format("--gpu-memory-utilization: expected a value in (0, 1], got {}",
                                 r.gpu_memory_utilization));
  }
  if (d.max_model_len_auto && d.max_model_len) {
    throw InputError("--max-model-len: give a length or `auto`, not both");
  }
  if (d.max_model_len_auto && !profile.kv_cache.auto_fit_max_model_len) {
    throw InputError(fmt::format("--max-model-len auto: vLLM {} has no auto-fit ({}; `auto` is an argparse error "
                                 "before); give a length",
                                 profile.version, detail::arrival_phrase(profile, [](const VllmProfile& p) {
                                   return p.kv_cache.auto_fit_max_model_len;
                                 })));
  }

  // The judged length: --max-model-len, or the model's own maximum (auto-fit starts from it).
  r.judged_is_derived = !d.max_model_len.has_value();
  r.judged_max_model_len = d.max_model_len.value_or(model.derived_max_model_len);
  check_max_model_len(model, r.judged_max_model_len);
  r.scheduler = scheduler_limits(d, gpu, profile, r.judged_max_model_len);

  // The engine's KV decisions: dtype, backend, block size, hybrid mode and alignment.
  detail::KvDecisions kv = detail::decide_kv_cache(model, gpu, d, profile, r.scheduler.max_num_batched_tokens);
  r.kv_cache_dtype = kv.settings.dtype;
  r.attention_backend = kv.backend != nullptr ? kv.backend->name : "";
  r.block_size = kv.settings.block_size;
  r.hybrid = kv.hybrid;
  r.prefix_caching = kv.prefix_caching;
  r.mamba_cache_mode = kv.mamba_cache_mode;
  r.hybrid_kv_cache_manager = kv.settings.hybrid_manager;
  r.mamba_dtypes = kv.mamba_dtypes;
  return kv;
}

// Phase 3: the launch options' decisions (CUDA graphs, all-to-all buffers) and every caveat and start
// blocker the deployment carries before any byte is counted.
EngineChoices decide_launch(const FitInputs& in, detail::KvDecisions kv, FitResult& r) {
  const Deployment& d = in.d;
  const VllmProfile& profile = in.profile;
  const ModelSpec& model = in.model;
  const ModelSpec& checkpoint = in.checkpoint;
  const GpuSpec& gpu = in.gpu();
  r.notes = kv.notes;
  r.warnings = kv.warnings;
  if (!profile.version_note.empty()) r.warnings.push_back({NoticeCode::kProfileNearest, profile.version_note});
  for (const auto& assumption : model.generic_assumptions) {
    r.warnings.push_back({NoticeCode::kGenericEstimate,
                          fmt::format("generic estimate ({} is not a modelled family; sized from its safetensors "
                                      "headers): {}",
                                      model.architecture, assumption)});
  }
  if (!model.overheads_caveat.empty()) {
    r.warnings.push_back({NoticeCode::kOverheadsUncalibrated,
                          fmt::format("overhead estimate not calibrated for {}: {}; its uncertainty is tripled",
                                      model.architecture, model.overheads_caveat)});
  }
  if (model.drafter) {
    r.warnings.push_back({NoticeCode::kSpeculativeDecodingEstimate,
                          fmt::format("speculative decoding ({}): the drafter's weights, KV layers, profile-run pass "
                                      "and the rejection sampler's are counted; its layers count in the piecewise "
                                      "CUDA graphs at the per-layer rate fitted on target models (no observation "
                                      "with a drafter calibrates it)",
                                      model.drafter->method)});
    for (const auto& assumption : model.drafter->assumptions) {
      r.warnings.push_back({NoticeCode::kSpeculativeDecodingEstimate,
                            fmt::format("speculative decoding ({}): {}", model.drafter->method, assumption)});
    }
  }
  if (d.mla_disabled) {
    const auto mla = std::count_if(checkpoint.layers.begin(), checkpoint.layers.end(),
                                   [](const LayerSpec& l) { return l.attention.kind == AttentionKind::kMla; });
    r.warnings.push_back({NoticeCode::kMlaDisabled,
                          mla > 0
                              ? fmt::format("VLLM_MLA_DISABLE=1: the {} MLA layers run as multi-head attention, a K "
                                            "and V of {} elements per head in the KV cache",
                                            mla, checkpoint.mla_disabled_head_dim)
                              : std::string("VLLM_MLA_DISABLE=1 changes nothing: the model has no MLA layers")});
  }
  if (d.offload_group_size > 0 && !profile.prefetch_offloader) {
    throw InputError(fmt::format("--offload-group-size {}: vLLM {} has no prefetch offloader ({}, #29941)",
                                 d.offload_group_size, profile.version,
                                 detail::arrival_phrase(profile, [](const VllmProfile& p) { return p.prefetch_offloader; })));
  }
  if (d.offload_group_size > 0 && d.cpu_offload_gb > 0) {
    r.warnings.push_back({NoticeCode::kCpuOffloadIgnored,
                          "--offload-group-size and --cpu-offload-gb: vLLM uses the prefetch offloader and ignores "
                          "--cpu-offload-gb"});
  }
  const detail::CudaGraphChoice graphs =
      detail::cuda_graph_choice(d, profile, r.scheduler, model.num_speculative_tokens);
  if (graphs.caveat) r.warnings.push_back(*graphs.caveat);
  if (graphs.captured) {
    r.cuda_graph_capture_sizes = static_cast<std::int64_t>(graphs.capture_sizes.size());
    r.cuda_graphs_piecewise = graphs.piecewise_graphs;
    r.cuda_graphs_full = graphs.full_graphs;
  }
  const detail::All2AllBuffers all2all = detail::all2all_buffers(model, d, gpu, profile, r.scheduler);
  for (const auto& note : all2all.notes) r.notes.push_back(note);
  for (const auto& warning : all2all.warnings) r.warnings.push_back(warning);
  if (!all2all.start_blocker.empty() && r.vllm_would_start) {
    r.vllm_would_start = false;
    r.start_blocker = all2all.start_blocker;
    r.warnings.push_back({NoticeCode::kWouldNotStart, r.start_blocker});
  }
  if (d.lora.enabled) {
    r.warnings.push_back({NoticeCode::kLoraCudaGraphsNotCounted,
                          "LoRA: the adapter slots are counted; the CUDA graphs vLLM captures again for the LoRA case "
                          "are not in the graph estimate"});
  }
  for (const auto& key : model.unmodelled_config_keys) {
    r.warnings.push_back(
        {NoticeCode::kConfigKeyNotModelled,
         fmt::format("config key `{}` is not modelled by the {} parser; the figures may be wrong", key, model.family)});
  }
  if (!kv.start_blocker.empty()) {
    r.vllm_would_start = false;
    r.start_blocker = kv.start_blocker;
    r.warnings.push_back({NoticeCode::kWouldNotStart, r.start_blocker});
  }
  return {std::move(kv), graphs, all2all};
}

// Phase 4: each pipeline stage's worker: requested memory, weights, overheads, the KV budget and layout.
void budget_workers(const FitInputs& in, const EngineChoices& e, FitResult& r) {
  const Deployment& d = in.d;
  const VllmProfile& profile = in.profile;
  const ModelSpec& model = in.model;
  const GpuSpec& gpu = in.gpu();
  FitMemo* memo = in.memo;
  const auto& kv = e.kv;
  const auto& graphs = e.graphs;
  const auto& all2all = e.all2all;
  const auto gpu_of = [&](std::int64_t stage) -> const GpuSpec& { return in.gpu_of(stage); };
  for (std::int64_t stage = 0; stage < d.pipeline_parallel_size; ++stage) {
    const GpuSpec& stage_gpu = gpu_of(stage);
    if (stage_gpu.memory.count() < 1 || stage_gpu.memory > kMaxGpuMemory) {
      throw InputError(fmt::format("--gpu-memory {} bytes ({}): expected from 1 to {} bytes", stage_gpu.memory.count(),
                                   stage_gpu.name, kMaxGpuMemory.count()));
    }
    if (stage_gpu.compute_capability_major != gpu.compute_capability_major || stage_gpu.platform != gpu.platform) {
      r.warnings.push_back(
          {NoticeCode::kPipelineStagesDiffer,
           fmt::format("pipeline stage {} runs on {}, a different GPU generation from stage 0's {}; the "
                       "budget assumes stage 0's {} backend everywhere",
                       stage, stage_gpu.name, gpu.name, r.attention_backend)});
    }
    const Bytes requested(static_cast<std::int64_t>(
        std::ceil(static_cast<double>(stage_gpu.memory.count()) * r.gpu_memory_utilization)));
    const ParallelLayout layout = memo != nullptr ? with_mxfp4_padding(memo->layout(d, stage), model, stage_gpu, profile)
                                                  : make_worker_layout(model, stage_gpu, d, profile, stage);
    WorkerBudget w;
    w.pp_rank = stage;
    w.first_layer = layout.first_layer;
    w.end_layer = layout.end_layer;
    w.requested = requested;
    w.weights = memo != nullptr ? memo->weights(layout) : weights_per_gpu(model, layout);
    add_batched_token_buffers(w.weights, model, r.scheduler.max_num_batched_tokens);
    add_launch_option_weights(w.weights, model, layout, d, profile, r.scheduler);
    w.gpu = stage_gpu.name;
    w.overheads = estimate_overheads(model, layout, stage_gpu, profile, r.scheduler,
                                     !graphs.captured || all2all.disables_cuda_graphs, !d.skip_mm_profiling,
                                     {graphs.extra_graphs(), std::max<std::int64_t>(graphs.piecewise_graphs - 1, 0)});
    w.overheads.non_torch += all2all.non_torch;
    if (d.kv_cache_memory) {
      w.kv_cache = *d.kv_cache_memory;
    } else {
      w.kv_cache = requested - w.weights.total - w.overheads.activation_peak - w.overheads.non_torch +
                   d.kv_budget_correction;
      if (w.overheads.cudagraph_charged) w.kv_cache -= w.overheads.cudagraph;
    }
    w.kv = make_kv_cache_layout(model, layout, kv.settings, kv.mamba_state_bytes);
    r.workers.push_back(std::move(w));
  }
}

// Phase 5: the prefetch offloader's slots, allocated outside vLLM's budget, against the unrequested memory.
void check_prefetch_slots(const FitInputs& in, FitResult& r) {
  const Deployment& d = in.d;
  const auto gpu_of = [&](std::int64_t stage) -> const GpuSpec& { return in.gpu_of(stage); };
  for (const auto& w : r.workers) {
    if (w.weights.prefetch_buffers.count() == 0) continue;
    const Bytes headroom = gpu_of(w.pp_rank).memory - w.requested;
    const std::string what = fmt::format(
        "prefetch offloader on pipeline stage {}: {} of weights in pinned CPU memory, and {} of GPU slots "
        "(--offload-prefetch-step {}) allocated after vLLM measures the weights, outside the requested {} it "
        "budgets (vLLM up to 0.22): the GPU needs the requested memory plus the slots, against {} left unrequested",
        w.pp_rank, gib_text(w.weights.cpu_offloaded), gib_text(w.weights.prefetch_buffers), d.offload_prefetch_step,
        gib_text(w.requested), gib_text(headroom));
    if (w.weights.prefetch_buffers > headroom && r.vllm_would_start) {
      r.vllm_would_start = false;
      r.start_blocker = what + ": the KV cache allocation runs out of GPU memory";
      r.warnings.push_back({NoticeCode::kWouldNotStart, r.start_blocker});
    } else {
      r.notes.push_back({NoticeCode::kPrefetchOffloaderSlots, what});
    }
  }
}

// Phase 6: the memory each worker's check compares against. Returns whether --num-gpu-blocks-override
// fixes it (then the overheads' uncertainty moves nothing).
bool set_check_memory(const FitInputs& in, FitResult& r) {
  const Deployment& d = in.d;
  const VllmProfile& profile = in.profile;
  // What the memory check and the length search compare against: the profiled memory, or (0.21+) the
  // capacity --num-gpu-blocks-override fixes; before 0.16 the smallest worker's, for all of them.
  const bool override_sets_memory =
      d.num_gpu_blocks_override && profile.kv_cache.num_gpu_blocks_override == BlocksOverrideRule::kSetsMemory;
  for (auto& w : r.workers) {
    w.check_memory = override_sets_memory ? w.kv.block_bytes() * *d.num_gpu_blocks_override : w.kv_cache;
  }
  if (profile.kv_cache.need == KvNeedRule::kGlobalFirstGroup) {
    Bytes smallest = r.workers.front().check_memory;
    for (const auto& w : r.workers) smallest = std::min(smallest, w.check_memory);
    for (auto& w : r.workers) w.check_memory = smallest;
  }
  return override_sets_memory;
}

// Phase 7: the lengths: --max-model-len auto, then each worker's blocks, need and largest length.
void fit_lengths(const Deployment& d, FitResult& r) {
  // --max-model-len auto (_auto_fit_max_model_len): the largest length every worker fits, capped at the
  // derived maximum; vLLM then judges that length.
  if (d.max_model_len_auto) {
    std::int64_t fitted = r.judged_max_model_len;
    for (const auto& w : r.workers) {
      if (w.kv.grouping == KvGrouping::kEmpty) continue;
      fitted = std::min(fitted, largest_fitting_length(w.kv, w.check_memory, r.judged_max_model_len));
    }
    if (fitted <= 0) {
      r.auto_fit_failed = true;
    } else {
      r.auto_fitted = fitted < r.judged_max_model_len;
      r.judged_max_model_len = fitted;
    }
  }

  for (auto& w : r.workers) {
    w.num_blocks = d.num_gpu_blocks_override ? *d.num_gpu_blocks_override : w.kv.num_blocks(w.kv_cache);
    w.needed = w.kv.needed(r.judged_max_model_len);
    w.max_model_len = largest_fitting_length(w.kv, w.check_memory, r.judged_max_model_len);
  }
}

// Phase 8: the binding worker (vLLM takes the minimum over workers), the length range from the
// overheads' uncertainty, and the verdict.
void bind(const FitInputs& in, bool override_sets_memory, FitResult& r) {
  const Deployment& d = in.d;
  const ModelSpec& model = in.model;
  // vLLM takes the minimum over workers for both the block count and the fitted length.
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
  if (!d.kv_cache_memory && !override_sets_memory) {
    const auto& o = bw.overheads;
    const double overheads = static_cast<double>(o.charged().count());
    const bool generic = !model.generic_assumptions.empty();
    const double weights = static_cast<double>(bw.weights.total.count());
    const Bytes swing(static_cast<std::int64_t>(
        overheads * o.relative_uncertainty * (generic ? kGenericOverheadUncertaintyFactor : 1.0) +
        (generic ? kGenericWeightsUncertainty * weights : 0.0)));
    r.kv_budget_swing = swing;
    r.max_model_len_low = largest_fitting_length(bw.kv, bw.check_memory - swing, r.judged_max_model_len);
    r.max_model_len_high = largest_fitting_length(bw.kv, bw.check_memory + swing, r.judged_max_model_len);
  }
  r.kv_fits = !r.auto_fit_failed;
  for (const auto& w : r.workers) {
    if (w.kv.grouping == KvGrouping::kEmpty) continue;
    r.kv_fits = r.kv_fits && w.needed <= w.check_memory && w.check_memory.count() > 0;
  }
  r.fits = r.kv_fits && r.vllm_would_start;
}

// Phase 9: what vLLM reports (concurrency, KV tokens) and the error it would raise.
void report(const FitInputs& in, FitResult& r) {
  const Deployment& d = in.d;
  const VllmProfile& profile = in.profile;
  const WorkerBudget& bw = r.binding_worker();
  // _report_kv_cache_config (the first worker's line is the one logged first): concurrency =
  // num_blocks / blocks per request of length M.
  const KvCacheLayout& reported = r.workers.front().kv;
  const std::int64_t blocks_per_request = reported.blocks_per_request(r.judged_max_model_len);
  r.max_concurrency = static_cast<double>(r.num_blocks) / static_cast<double>(blocks_per_request);
  if (profile.kv_tokens_from_concurrency) {
    r.kv_cache_tokens = static_cast<std::int64_t>(r.max_concurrency * static_cast<double>(r.judged_max_model_len));
  } else {
    r.kv_cache_tokens =
        r.num_blocks / reported.num_groups() * reported.min_block_size() * d.decode_context_parallel_size;
  }

  // What vLLM would raise: the start blocker, the failed auto-fit, or the binding worker's memory check.
  if (!r.vllm_would_start) {
    r.vllm_error = r.start_blocker;
  } else if (r.auto_fit_failed) {
    r.vllm_error = "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
                   "Try increasing `gpu_memory_utilization`.";
  } else if (bw.kv.grouping != KvGrouping::kEmpty) {
    r.vllm_error = vllm_error_text(r, bw.needed, bw.check_memory, profile.messages);
  }
}

}  // namespace

FitResult fit(const ModelSpec& checkpoint, const std::vector<GpuSpec>& stage_gpus, const Deployment& d,
              const VllmProfile& profile, FitMemo* memo) {
  check_request(checkpoint, stage_gpus, d);
  // --dtype, online --quantization, the vision tower's mode and the drafter rebuild the model.
  const bool converts = deployment_rebuilds_model(d);
  const ModelSpec converted = converts ? model_as_served(checkpoint, d, profile.speculative) : ModelSpec{};
  const ModelSpec& model = converts ? converted : checkpoint;
  if (memo != nullptr && &memo->model() != &model) memo = nullptr;
  const FitInputs in{checkpoint, model, stage_gpus, d, profile, memo};
  FitResult r;
  const EngineChoices choices = decide_launch(in, decide_engine(in, r), r);
  budget_workers(in, choices, r);
  check_prefetch_slots(in, r);
  const bool override_sets_memory = set_check_memory(in, r);
  fit_lengths(d, r);
  bind(in, override_sets_memory, r);
  report(in, r);
  return r;
}

KvCacheLayout worker_kv_cache_layout(const ModelSpec& checkpoint, const GpuSpec& gpu, const Deployment& d,
                                     const VllmProfile& profile, std::int64_t pp_rank) {
  const ModelSpec model = model_as_served(checkpoint, d, profile.speculative);
  const std::int64_t length = d.max_model_len.value_or(model.derived_max_model_len);
  const SchedulerLimits scheduler = scheduler_limits(d, gpu, profile, length);
  const detail::KvDecisions kv = detail::decide_kv_cache(model, gpu, d, profile, scheduler.max_num_batched_tokens);
  return make_kv_cache_layout(model, make_worker_layout(model, gpu, d, profile, pp_rank), kv.settings,
                              kv.mamba_state_bytes);
}

std::vector<Explanation> explain_fit(const ModelSpec& checkpoint, const std::vector<GpuSpec>& stage_gpus,
                                     const Deployment& d, const VllmProfile& profile, const FitResult& r) {
  const auto gpu_of = [&](std::int64_t stage) -> const GpuSpec& {
    return stage_gpus.size() == 1 ? stage_gpus.front() : stage_gpus.at(static_cast<std::size_t>(stage));
  };
  const GpuSpec& gpu = stage_gpus.at(0);
  const bool converts = deployment_rebuilds_model(d);
  const ModelSpec converted = converts ? model_as_served(checkpoint, d, profile.speculative) : ModelSpec{};
  const ModelSpec& model = converts ? converted : checkpoint;
  const WorkerBudget& bw = r.binding_worker();
  const auto& o = bw.overheads;
  std::vector<Explanation> out = {
      {"requested", fmt::format("ceil(total {} B x gpu_memory_utilization {})", gpu_of(bw.pp_rank).memory.count(),
                                r.gpu_memory_utilization),
       fmt::format("{} B = {}", bw.requested.count(), gib_text(bw.requested))},
      {"weights", "sum of every local tensor shard (see `weights`)", gib_text(bw.weights.total)},
      {"activation_peak",
       fmt::format("max(sampler {} B/logit x min(T {}, S {}) x vocab {}, forward {} x T x widest activation x {} B{})"
                   " + cached encoder outputs, or the encoder pass if larger",
                   profile.overheads.sampler_bytes_per_logit, r.scheduler.max_num_batched_tokens,
                   r.scheduler.max_num_seqs, model.vocab_size, profile.overheads.forward_activation_factor,
                   element_bytes(model.dtype),
                   model.num_speculative_tokens > 0
                       ? fmt::format(", rejection sampler min(T, S) x vocab x ({} x {} + {}) B = {}, drafter pass {}",
                                     profile.speculative.rejection_logit_copies, element_bytes(model.dtype),
                                     profile.speculative.rejection_fp32_bytes, gib_text(o.rejection_sampler),
                                     gib_text(o.drafter_pass))
                       : std::string()),
       o.workspace.count() > 0
           ? fmt::format("max({}, {} + transient {}) + {} vs {}, + workspace {} = {}", gib_text(o.sampler),
                         gib_text(o.forward), gib_text(o.workspace_transient), gib_text(o.encoder.cached_outputs),
                         gib_text(o.encoder.pass), gib_text(o.workspace), gib_text(o.activation_peak))
           : fmt::format("max({}, {}) + {} vs {} = {}", gib_text(o.sampler), gib_text(o.forward),
                         gib_text(o.encoder.cached_outputs), gib_text(o.encoder.pass), gib_text(o.activation_peak))},
      {"profile_workspace",
       model.profile_workspace.empty()
           ? std::string("no sparse-attention workspace")
           : fmt::format("the largest of the profile run's reservations for L = {} and T = {} ({}), kept in vLLM's "
                         "shared workspace; plus {} allocated beside it during the forward pass",
                         r.scheduler.max_model_len, r.scheduler.max_num_batched_tokens,
                         [&] {
                           std::string names;
                           for (const auto& w : model.profile_workspace) {
                             names += fmt::format("{}{} {}", names.empty() ? "" : ", ", w.name,
                                                  gib_text(w.bytes(r.scheduler.max_model_len,
                                                                   r.scheduler.max_num_batched_tokens)));
                           }
                           return names;
                         }(),
                         gib_text(model.profile_workspace_transient)),
       gib_text(o.workspace + o.workspace_transient)},
      {"encoder_profile",
       model.vision ? fmt::format("{} {}(s) x {} tokens (largest image {} tokens: {}{}), {} patches through the ViT; {}",
                                  o.encoder.items, o.encoder.video ? "video" : "image",
                                  o.encoder.items > 0 ? o.encoder.tokens / o.encoder.items : 0,
                                  model.vision->profile.max_tokens_per_item, model.vision->profile.max_item_source,
                                  o.encoder.video ? fmt::format("; the dummy video has more: that image over as many "
                                                                "frames as fit max_model_len, at most {}",
                                                                model.vision->profile.video_max_frames)
                                                  : std::string(),
                                  o.encoder.patches,
                                  d.skip_mm_profiling ? "skipped (--skip-mm-profiling)" : "first pipeline stage")
                    : std::string("no multimodal encoder"),
       fmt::format("pass {}, cached outputs {}", gib_text(o.encoder.pass), gib_text(o.encoder.cached_outputs))},
      {"non_torch", fmt::format("vLLM {} profile, tensor-parallel group of {}, {}", profile.version,
                                d.tensor_parallel_size, gpu.nvlink ? "NVLink" : "PCIe"),
       gib_text(o.non_torch)},
      {"cudagraph", fmt::format("base + per-layer x {} layers x {} extra graphs / {} ({} capture sizes: {} piecewise "
                                "and {} full graphs); {}",
                                bw.end_layer - bw.first_layer,
                                std::max<std::int64_t>(r.cuda_graphs_piecewise - 1, 0) +
                                    std::max<std::int64_t>(r.cuda_graphs_full - 1, 0),
                                kReferenceExtraCudaGraphs, r.cuda_graph_capture_sizes, r.cuda_graphs_piecewise,
                                r.cuda_graphs_full,
                                o.cudagraph_charged ? fmt::format("charged by vLLM {}", profile.version)
                                                    : std::string("not charged by this vLLM")),
       gib_text(o.cudagraph)},
      {"kv_cache", d.kv_cache_memory ? std::string("--kv-cache-memory-bytes")
                                     : std::string("requested - weights - activation_peak - non_torch") +
                                           (o.cudagraph_charged ? " - cudagraph" : ""),
       fmt::format("{} B = {}", bw.kv_cache.count(), gib_text(bw.kv_cache))},
      {"kv_bytes_per_token",
       bw.kv.grouping == KvGrouping::kUniformGroups
           ? fmt::format("one pool block ({} B: {} tuples of {} B of full-MLA pages) per {} tokens, rounded up; the "
                         "sliding windows and compressor states add a fixed number of blocks per request",
                         bw.kv.block_bytes().count(), bw.kv.layer_tuples, bw.kv.layer_tuple_bytes.count(),
                         bw.kv.groups.front().spec.block_size)
           : fmt::format("sum over the {} KV layers that grow with length of their bytes per token ({} B for the first), "
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
                                           : bw.kv.grouping == KvGrouping::kUniformGroups
                                               ? fmt::format("each of the {} groups' most pages x the {} B block",
                                                             bw.kv.groups.size(), bw.kv.block_bytes().count())
                                               : std::string("summed over layers")),
       fmt::format("{} B = {}", r.needed.count(), gib_text(r.needed))},
      {"num_blocks",
       bw.kv.grouping == KvGrouping::kUniformType     ? std::string("kv_cache // sum of the layers' pages")
       : bw.kv.grouping == KvGrouping::kUniformGroups ? std::string("kv_cache // (layer tuples x tuple bytes)")
                                                      : std::string("kv_cache // page // layers per group"),
       std::to_string(r.num_blocks)},
      {"max_model_len", "binary search on [1, judged length] for needed(M) <= kv_cache (estimate_max_model_len)",
       std::to_string(r.max_model_len)},
  };
  return out;
}

}  // namespace gpubudget
