// VllmProfile: the behaviour of one vLLM release line, loaded from configs/vllm/<version>.json.
//
// Supporting a new vLLM release is a data change: defaults, attention-backend block sizes, the
// "GPU KV cache size" report formula, CUDA-graph charging and overhead coefficients all live here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/model_spec.h"

namespace gpubudget {

// One attention backend in vLLM's priority order for a platform.
struct AttentionBackend {
  std::string name;                       // "FLASH_ATTN_MLA", "TRITON_MLA", ...
  AttentionKind kind = AttentionKind::kFull;  // kFull (standard attention) or kMla
  bool sparse = false;                        // a sparse-MLA backend (DeepSeek-V3.2 / GLM-5 indexer models)
  Platform platform = Platform::kCuda;
  std::vector<int> compute_capability_majors;  // empty = any
  std::vector<std::string> kv_cache_dtypes;    // resolved dtypes it accepts ("bfloat16", "fp8_e4m3"...)
  std::int64_t block_size = 16;                // block size it picks when --block-size is not given
  // When not empty: a quantized KV dtype is stored in this layout instead (FLASHMLA_SPARSE → fp8_ds_mla).
  std::string quantized_kv_layout;
};

// The MXFP4 MoE backend vLLM picks on a GPU and the padding it applies (Mxfp4MoEMethod).
struct Mxfp4MoeBackend {
  std::string name;
  std::vector<int> compute_capability_majors;
  std::int64_t intermediate_align = 1;
  std::int64_t hidden_align = 1;
};

// max_num_batched_tokens / max_num_seqs defaults for `vllm serve` (EngineArgs.get_batch_defaults).
struct BatchDefaults {
  double min_memory_gib = 0;             // GPU total at or above this ...
  std::string excluded_device_substring;  // ... and device name not containing this (lower case)
  std::int64_t max_num_batched_tokens = 0;  // `vllm serve` (UsageContext.OPENAI_API_SERVER)
  std::int64_t max_num_seqs = 0;
  std::int64_t llm_class_max_num_batched_tokens = 0;  // the offline `LLM` class (UsageContext.LLM_CLASS)
  std::int64_t llm_class_max_num_seqs = 0;
};

// Coefficients of the startup-overhead estimate (docs/methodology.md §Overheads).
struct OverheadModel {
  // Dummy sampler run: bytes per element of the [num_reqs, vocab] logits (fp32 logits, sort, softmax).
  double sampler_bytes_per_logit = 0;
  // Forward pass of the profile run: multiple of the largest per-token activation width, in bytes.
  double forward_activation_factor = 0;
  Bytes non_torch_single_gpu;     // non-torch increase at TP*PP == 1
  Bytes non_torch_multi_nvlink;   // ... with several GPUs and custom all-reduce (NVLink)
  Bytes non_torch_multi_pcie;     // ... with several GPUs on PCIe (custom all-reduce off)
  Bytes cudagraph_base;           // CUDA-graph estimate: fixed part
  Bytes cudagraph_per_layer;      // ... plus this per decoder layer on the worker
  double relative_uncertainty = 0;  // 1-sigma relative error of (activation + non-torch + graphs)
};

// vLLM's own error texts, with placeholders {max_model_len}, {needed_gib}, {available_gib},
// {estimate} and {estimated_max_model_len}, so that gpubudget prints what that vLLM would print.
struct VllmMessages {
  std::string kv_cache_too_small;  // _check_enough_kv_cache_memory, need > available
  std::string estimate_sentence;   // inserted as {estimate} when the estimated length is > 0
  std::string no_kv_memory;        // available <= 0
  bool gib_fixed_two_decimals = false;  // "%.2f" (old) or format_gib: round to 2, no trailing zeros
};

// A vLLM version as numbers, comparable: {0, 15, 1} for "0.15.1".
using VllmVersionNumber = std::array<int, 3>;
// "0.15", "0.15.1", "v0.21.0rc1", "0.11.1rc2.dev45+g1234" → {major, minor, patch} (what follows the
// numbers is ignored; a part of more than six digits is refused); nullopt when the text does not start
// with a version.
std::optional<VllmVersionNumber> parse_vllm_version(std::string_view text);

struct VllmProfile {
  std::string version;          // "0.15"
  std::string description;
  double default_gpu_memory_utilization = 0.9;
  bool charges_cudagraph_memory = false;  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default
  // "GPU KV cache size" report: true = int(concurrency * max_model_len) (vLLM >= 0.21),
  // false = num_blocks // num_groups * block_size (older).
  bool kv_tokens_from_concurrency = false;
  // Default mamba_cache_mode of hybrid models (none; align once prefix caching covers them).
  MambaCacheMode mamba_cache_mode = MambaCacheMode::kNone;
  std::vector<BatchDefaults> batch_defaults;  // first matching entry wins
  std::vector<AttentionBackend> attention_backends;  // priority order
  std::vector<Mxfp4MoeBackend> mxfp4_moe_backends;
  OverheadModel overheads;
  VllmMessages messages;
  std::string source;  // file it was loaded from
};

}  // namespace gpubudget
