// Remedies (remedies.h): each candidate is a modified Deployment run through fit().
#include "gpubudget/remedies.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget {

namespace {

// Utilization above this leaves too little for the CUDA context, other processes and fragmentation.
constexpr double kSafeUtilization = 0.95;
// A --max-num-batched-tokens low enough to shrink the profile run, high enough to keep chunked prefill useful.
constexpr std::int64_t kSmallBatchedTokens = 2048;
// The largest CUDA-graph capture size the "fewer graphs" remedy tries: [1, 2, 4] + 8..64 by 8, 11 sizes.
constexpr std::int64_t kSmallCaptureSize = 64;

}  // namespace

std::vector<Remedy> find_remedies(const ModelSpec& model, const std::vector<GpuSpec>& stage_gpus,
                                  const Deployment& deployment, const VllmProfile& profile, const FitResult& base,
                                  FitMemo* memo) {
  const std::int64_t target = base.judged_max_model_len;
  std::vector<Remedy> out;
  std::optional<FitMemo> own_memo;  // most candidates keep the layout
  if (memo == nullptr) memo = &own_memo.emplace(model);
  auto attempt = [&](const std::string& change, std::vector<std::string> flags,
                     const std::function<void(Deployment&)>& modify, const std::vector<GpuSpec>& gpus,
                     const std::string& extra_caveat = "") {
    Deployment d = deployment;
    modify(d);
    try {
      const FitResult r = fit(model, gpus, d, profile, memo);
      Remedy remedy{change, std::move(flags), r.max_model_len, r.kv_fits, r.start_blocker, !r.vllm_would_start};
      if (remedy.caveat.empty()) remedy.caveat = extra_caveat;
      if (remedy.max_model_len > base.max_model_len) out.push_back(std::move(remedy));
    } catch (const InputError&) {
      // vLLM would reject this combination: not a remedy.
    }
  };

  if (base.kv_cache_dtype.element_bytes > 1) {
    attempt("FP8 KV cache", {"--kv-cache-dtype", "fp8"}, [](Deployment& d) { d.kv_cache_dtype = KvCacheDtypeChoice::kFp8; }, stage_gpus);
  }
  if (base.gpu_memory_utilization < kSafeUtilization && !deployment.kv_cache_memory) {
    attempt(fmt::format("GPU memory utilization {:.2f}", kSafeUtilization),
            {"--gpu-memory-utilization", fmt::format("{:.2f}", kSafeUtilization)},
            [](Deployment& d) { d.gpu_memory_utilization = kSafeUtilization; }, stage_gpus,
            "needs that much memory free on every GPU at start-up");
  }
  for (std::int64_t dcp = 2; dcp <= deployment.tensor_parallel_size; dcp *= 2) {
    if (dcp <= deployment.decode_context_parallel_size || deployment.tensor_parallel_size % dcp != 0) continue;
    attempt(fmt::format("decode context parallel {}", dcp), {"--decode-context-parallel-size", std::to_string(dcp)},
            [dcp](Deployment& d) { d.decode_context_parallel_size = dcp; }, stage_gpus,
            "decode context parallelism needs an attention backend that supports it");
  }
  if (base.scheduler.max_num_batched_tokens > kSmallBatchedTokens) {
    attempt(fmt::format("max-num-batched-tokens {}", kSmallBatchedTokens),
            {"--max-num-batched-tokens", std::to_string(kSmallBatchedTokens)},
            [](Deployment& d) { d.max_num_batched_tokens = kSmallBatchedTokens; }, stage_gpus,
            "slower prefill of long prompts");
  }
  if (!deployment.enforce_eager && base.binding_worker().overheads.cudagraph_charged &&
      base.cuda_graph_capture_sizes > 0 && deployment.cudagraph_capture_sizes.empty() &&
      deployment.max_cudagraph_capture_size.value_or(kSmallCaptureSize + 1) > kSmallCaptureSize &&
      base.scheduler.max_num_seqs * 2 > kSmallCaptureSize) {
    // Fewer graphs: the generated list up to 64 tokens (the graph estimate scales with their number).
    attempt(fmt::format("CUDA graphs up to {} tokens", kSmallCaptureSize),
            {"--max-cudagraph-capture-size", std::to_string(kSmallCaptureSize)},
            [](Deployment& d) { d.max_cudagraph_capture_size = kSmallCaptureSize; }, stage_gpus,
            "larger decode batches run without CUDA graphs");
  }
  if (!deployment.enforce_eager && base.binding_worker().overheads.cudagraph_charged) {
    attempt("no CUDA graphs", {"--enforce-eager"}, [](Deployment& d) { d.enforce_eager = true; }, stage_gpus,
            "slower decoding without CUDA graphs");
  }
  if (deployment.mla_disabled &&
      std::any_of(model.layers.begin(), model.layers.end(),
                  [](const LayerSpec& l) { return l.attention.kind == AttentionKind::kMla; })) {
    attempt("MLA kept (unset VLLM_MLA_DISABLE)", {}, [](Deployment& d) { d.mla_disabled = false; }, stage_gpus);
  }
  // Launch options that cost memory: the drafter (and hybrid models' state page per draft token), LoRA slots.
  const SpeculativeDecoding& spec = deployment.speculative;
  if (spec.method != SpeculativeMethod::kNone && spec.num_speculative_tokens > 1) {
    attempt("1 speculative token", {"--speculative-config", fmt::format(R"({{"method": "{}", "num_speculative_tokens": 1}})",
                                                                      speculative_method_name(spec.method))},
            [](Deployment& d) { d.speculative.num_speculative_tokens = 1; }, stage_gpus, "fewer tokens drafted per step");
  }
  if (spec.method != SpeculativeMethod::kNone) {
    attempt("no speculative decoding (drop --speculative-config)", {},
            [](Deployment& d) { d.speculative = SpeculativeDecoding{}; }, stage_gpus, "no speculative decoding speed-up");
  }
  if (deployment.lora.enabled && deployment.lora.max_loras > 1) {
    const std::int64_t half = deployment.lora.max_loras / 2;
    attempt(fmt::format("{} LoRA slots", half), {"--max-loras", std::to_string(half)},
            [half](Deployment& d) { d.lora.max_loras = half; }, stage_gpus, "fewer adapters resident at once");
  }
  if (deployment.lora.enabled && deployment.lora.max_lora_rank > 8) {
    const std::int64_t rank = deployment.lora.max_lora_rank == 320 ? 256 : deployment.lora.max_lora_rank / 2;
    attempt(fmt::format("LoRA rank {}", rank), {"--max-lora-rank", std::to_string(rank)},
            [rank](Deployment& d) { d.lora.max_lora_rank = rank; }, stage_gpus,
            "adapters of a higher rank cannot be loaded");
  }
  attempt(fmt::format("twice the GPUs: tensor parallel {}", 2 * deployment.tensor_parallel_size),
          {"--tensor-parallel-size", std::to_string(2 * deployment.tensor_parallel_size)},
          [](Deployment& d) { d.tensor_parallel_size *= 2; }, {stage_gpus.front()},
          "twice the GPUs");
  {
    std::vector<GpuSpec> doubled = stage_gpus;
    if (doubled.size() > 1) doubled.insert(doubled.end(), stage_gpus.begin(), stage_gpus.end());
    attempt(fmt::format("twice the GPUs: pipeline parallel {}", 2 * deployment.pipeline_parallel_size),
            {"--pipeline-parallel-size", std::to_string(2 * deployment.pipeline_parallel_size)},
            [](Deployment& d) {
              d.pipeline_parallel_size *= 2;
              d.pp_layer_partition.clear();
            },
            doubled, "twice the GPUs");
  }
  std::stable_sort(out.begin(), out.end(), [](const Remedy& a, const Remedy& b) {
    if (a.blocked != b.blocked) return !a.blocked;
    if (a.reaches_target != b.reaches_target) return a.reaches_target;
    if (a.caveat.empty() != b.caveat.empty()) return a.caveat.empty();
    return a.max_model_len > b.max_model_len;
  });
  if (base.max_model_len > 0 && base.max_model_len < target) {
    out.push_back({fmt::format("the length that fits as is: {}", base.max_model_len),
                   {"--max-model-len", std::to_string(base.max_model_len)},
                   base.max_model_len,
                   false,
                   fmt::format("requests are limited to {} tokens instead of {}", base.max_model_len, target),
                   false});
  }
  return out;
}

}  // namespace gpubudget
