// Deployment: the vLLM launch being evaluated, mirroring `vllm serve` arguments.
//
// Values that vLLM takes as strings (--dtype, --kv-cache-dtype, the entry point, --mamba-cache-mode)
// are enums here, parsed once where they enter (the CLI, the C ABI, a log's settings) with the parse_*
// functions below; the maths never compares strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/bytes.h"

namespace gpubudget {

// --dtype: the dtype vLLM builds unquantized weights, activations and an `auto` KV cache in.
enum class ModelDtypeChoice {
  kAuto,  // the checkpoint's own (`dtype` / `torch_dtype`)
  kBFloat16,
  kFloat16,
  kFloat32,
};

// --kv-cache-dtype, as given. Which of them a vLLM version and attention backend accept is data
// (configs/vllm/*.json); resolve_kv_cache_dtype (kv_cache.h) turns `auto` into the checkpoint's choice.
enum class KvCacheDtypeChoice {
  kAuto,
  kBFloat16,
  kFloat16,
  kFp8,       // fp8 (e4m3 on CUDA)
  kFp8E4M3,
  kFp8E5M2,
  kFp8DsMla,  // FlashMLA-sparse's own layout
};

// How vLLM is started; the two have different scheduler defaults (EngineArgs.get_batch_defaults).
enum class EntryPoint {
  kServe,  // `vllm serve`, the OpenAI server (UsageContext.OPENAI_API_SERVER)
  kLlm,    // the offline `LLM` class (UsageContext.LLM_CLASS)
};

// --mamba-cache-mode of hybrid models: how many state pages one request holds.
enum class MambaCacheMode {
  kNone,   // one state per request
  kAlign,  // two (the running state and one aligned to a block boundary, for prefix caching)
};

// Each enum's vLLM spelling ("auto", "bfloat16", "fp8_e4m3", "serve", "align", ...); static storage.
std::string_view model_dtype_choice_name(ModelDtypeChoice choice);
std::string_view kv_cache_dtype_choice_name(KvCacheDtypeChoice choice);
std::string_view entry_point_name(EntryPoint entry_point);
std::string_view mamba_cache_mode_name(MambaCacheMode mode);

// Parsers of vLLM's spellings. Each throws InputError naming `flag`, the text and the accepted values.
// parse_model_dtype_choice also takes torch's aliases ("half", "float", "bf16" ...).
ModelDtypeChoice parse_model_dtype_choice(std::string_view text, std::string_view flag = "--dtype");
KvCacheDtypeChoice parse_kv_cache_dtype_choice(std::string_view text, std::string_view flag = "--kv-cache-dtype");
EntryPoint parse_entry_point(std::string_view text, std::string_view flag = "--entry-point");
MambaCacheMode parse_mamba_cache_mode(std::string_view text, std::string_view flag = "--mamba-cache-mode");

struct Deployment {
  // --tensor-parallel-size / -tp. Default: 1. Requires >= 1.
  std::int64_t tensor_parallel_size = 1;
  // --pipeline-parallel-size / -pp. Default: 1. Requires 1 <= pp <= the number of decoder layers.
  std::int64_t pipeline_parallel_size = 1;
  // --data-parallel-size / -dp. Default: 1. Requires >= 1.
  std::int64_t data_parallel_size = 1;
  // --decode-context-parallel-size / -dcp. Default: 1. Divides each rank's KV need for one request.
  // Requires a divisor of tensor_parallel_size.
  std::int64_t decode_context_parallel_size = 1;
  // --enable-expert-parallel. Default: false.
  bool enable_expert_parallel = false;
  // --num-redundant-experts (EPLB): extra physical experts spread with EP; ceil((E + R) / ep) per GPU.
  // Default: 0.
  std::int64_t num_redundant_experts = 0;
  // VLLM_PP_LAYER_PARTITION / --pp-layer-partition: decoder layers per pipeline stage (empty: vLLM's
  // even split). Requires pipeline_parallel_size entries summing to the number of layers.
  std::vector<std::int64_t> pp_layer_partition;
  // --gpu-memory-utilization in (0, 1]. Default (nullopt): the vLLM version's (0.9 before 0.21, 0.92 after).
  std::optional<double> gpu_memory_utilization;
  // --dtype. Default: auto.
  ModelDtypeChoice dtype = ModelDtypeChoice::kAuto;
  // --kv-cache-dtype. Default: auto.
  KvCacheDtypeChoice kv_cache_dtype = KvCacheDtypeChoice::kAuto;
  // --max-model-len: the length to judge. Default (nullopt): the model's derived maximum, what vLLM
  // uses when the flag is absent. (The CLI's `auto` and -1 map to nullopt.) Requires >= 1.
  std::optional<std::int64_t> max_model_len;
  // --max-num-seqs / --max-num-batched-tokens. Default (nullopt): the vLLM version's for the GPU.
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
  // --block-size. Default (nullopt): the chosen attention backend's.
  std::optional<std::int64_t> block_size;
  // How vLLM is started. Default: `vllm serve`.
  EntryPoint entry_point = EntryPoint::kServe;
  // --enforce-eager: no CUDA graphs, so no graph memory. Default: false.
  bool enforce_eager = false;
  // --skip-mm-profiling: vLLM does not run the multimodal encoder in its profile run. Default: false.
  bool skip_mm_profiling = false;
  // --mamba-cache-mode for hybrid models. Default (nullopt): the vLLM version's.
  std::optional<MambaCacheMode> mamba_cache_mode;
  // --kv-cache-memory-bytes: the KV budget per GPU, bypassing the utilization budget entirely.
  // Default (nullopt): requested memory minus weights and overheads.
  std::optional<Bytes> kv_cache_memory;
};

}  // namespace gpubudget
