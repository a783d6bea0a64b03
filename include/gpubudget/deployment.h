// Deployment: the vLLM launch being evaluated, mirroring `vllm serve` arguments.
//
// Values that vLLM takes as strings (--dtype, --kv-cache-dtype, the entry point, --mamba-cache-mode)
// are enums here, parsed once where they enter (the CLI, the C ABI, a log's settings) with the parse_*
// functions below; the maths never compares strings.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/bytes.h"

namespace gpubudget {

struct ModelSpec;  // model_spec.h

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
  kFp8Inc,    // Intel Gaudi's fp8 (float8_e4m3fn); no CUDA backend accepts it
  kInt8PerTokenHead,  // int8 values + one fp32 scale per token and head for K and for V (0.20+, Triton)
  kFp8PerTokenHead,   // the same with fp8 values
  kNvfp4,     // FP4 values + one fp8 scale per 16 (0.20+; FlashInfer on SM10x from 0.21)
};

// --mamba-cache-dtype / --mamba-ssm-cache-dtype (MambaDType): `auto` is the model dtype.
enum class MambaDtypeChoice {
  kAuto,
  kFloat32,
  kFloat16,
  kBFloat16,
};

// How vLLM is started; the two have different scheduler defaults (EngineArgs.get_batch_defaults).
enum class EntryPoint {
  kServe,  // `vllm serve`, the OpenAI server (UsageContext.OPENAI_API_SERVER)
  kLlm,    // the offline `LLM` class (UsageContext.LLM_CLASS)
};

// --mamba-cache-mode of hybrid models: how many state pages one request holds.
enum class MambaCacheMode {
  kNone,   // one state per request (prefix caching off)
  kAlign,  // two: the running state and one aligned to a block boundary (prefix caching)
  kAll,    // one per mamba block of the request (prefix caching of models supporting it)
};

// --speculative-config's `method` (vllm/config/speculative.py SpeculativeConfig).
enum class SpeculativeMethod {
  kNone,        // no speculative decoding
  kNgram,       // prompt-lookup proposals on the CPU: no weights, no KV
  kNgramGpu,    // the same on the GPU: two int32 [max_num_seqs, max_model_len] token buffers
  kSuffix,      // suffix-tree proposals on the CPU: no weights, no KV
  kMtp,         // the checkpoint's own MTP / next-n layers, with their KV layers
  kEagle,       // an EAGLE draft checkpoint
  kEagle3,      // an EAGLE-3 draft checkpoint (fed three of the target's hidden states)
  kDraftModel,  // a smaller model of the same vocabulary as the draft
  kMedusa,      // Medusa heads
};

// --speculative-config: what vLLM loads beside the target for speculative decoding.
struct SpeculativeDecoding {
  SpeculativeMethod method = SpeculativeMethod::kNone;
  // num_speculative_tokens: draft tokens per step (>= 1 with a method). With MTP at most
  // num_nextn_predict_layers distinct layers are loaded; the draft reuses them for further tokens.
  std::int64_t num_speculative_tokens = 0;
  // The draft checkpoint of eagle / eagle3 / draft_model / medusa, as read (load.h), and the name it
  // was given by ("model"). Shared by copies of the deployment; never null for those methods.
  std::shared_ptr<const ModelSpec> draft_model;
  std::string draft_model_name;
  // draft_tensor_parallel_size. Default (nullopt): the target's tensor-parallel size.
  std::optional<std::int64_t> draft_tensor_parallel_size;
};

// --enable-lora and its sizes (vllm/config/lora.py LoRAConfig): every adapted linear layer holds
// stacked A and B buffers for max_loras adapters of max_lora_rank.
struct LoraAdapters {
  bool enabled = false;             // --enable-lora
  std::int64_t max_loras = 1;       // --max-loras: GPU slots. Requires >= 1.
  std::int64_t max_lora_rank = 16;  // --max-lora-rank. One of vLLM's accepted ranks.
  ModelDtypeChoice dtype = ModelDtypeChoice::kAuto;  // --lora-dtype: auto is the model dtype
  bool fully_sharded = false;       // --fully-sharded-loras: the rank side split over TP too
  // --lora-target-modules: module suffixes to adapt ("o_proj", "qkv_proj"); empty: every supported one.
  std::vector<std::string> target_modules;
};

// --quantization applied by vLLM to an unquantized checkpoint at load (online quantization).
enum class OnlineQuantization {
  kNone,          // the checkpoint's own format
  kFp8,           // `fp8` / `fp8_per_tensor`: fp8 e4m3 weights, one fp32 scale per layer
  kBitsAndBytes,  // `bitsandbytes`: NF4 weights, fp32 absmax per 64 (QuantKind::kBnbNf4)
};

// --mm-encoder-tp-mode.
enum class EncoderTpMode {
  kWeights,  // the vision tower's weights split over TP (default)
  kData,     // the tower whole on every TP rank, the images split instead
};

// --all2all-backend (VLLM_ALL2ALL_BACKEND before 0.15): the expert-parallel dispatch / combine of data
// parallel ranks (vllm/config/parallel.py All2AllBackend).
enum class All2AllBackend {
  kAllgatherReducescatter,  // the default: NCCL all-gather / reduce-scatter, no buffers of its own
  kNaive,                   // removed (falls back to allgather_reducescatter); no buffers either
  kPplx,                    // pplx-kernels; removed in 0.17 (#33724: vLLM falls back to allgather_reducescatter)
  kDeepEpHighThroughput,
  kDeepEpLowLatency,
  kFlashInferTwoSided,      // also "flashinfer_all2allv"
  kFlashInferOneSided,
  kMori,
  kNixlEp,
};

// Each enum's vLLM spelling ("auto", "bfloat16", "fp8_e4m3", "serve", "align", ...); static storage.
std::string_view model_dtype_choice_name(ModelDtypeChoice choice);
std::string_view kv_cache_dtype_choice_name(KvCacheDtypeChoice choice);
std::string_view entry_point_name(EntryPoint entry_point);
std::string_view mamba_cache_mode_name(MambaCacheMode mode);
std::string_view mamba_dtype_choice_name(MambaDtypeChoice choice);
std::string_view speculative_method_name(SpeculativeMethod method);
std::string_view online_quantization_name(OnlineQuantization method);
std::string_view encoder_tp_mode_name(EncoderTpMode mode);
std::string_view all2all_backend_name(All2AllBackend backend);

// Parsers of vLLM's spellings. Each throws InputError naming `flag`, the text and the accepted values.
// parse_model_dtype_choice also takes torch's aliases ("half", "float", "bf16" ...).
ModelDtypeChoice parse_model_dtype_choice(std::string_view text, std::string_view flag = "--dtype");
KvCacheDtypeChoice parse_kv_cache_dtype_choice(std::string_view text, std::string_view flag = "--kv-cache-dtype");
EntryPoint parse_entry_point(std::string_view text, std::string_view flag = "--entry-point");
MambaCacheMode parse_mamba_cache_mode(std::string_view text, std::string_view flag = "--mamba-cache-mode");
MambaDtypeChoice parse_mamba_dtype_choice(std::string_view text, std::string_view flag = "--mamba-cache-dtype");
SpeculativeMethod parse_speculative_method(std::string_view text, std::string_view flag = "--speculative-config");
OnlineQuantization parse_online_quantization(std::string_view text, std::string_view flag = "--quantization");
EncoderTpMode parse_encoder_tp_mode(std::string_view text, std::string_view flag = "--mm-encoder-tp-mode");
All2AllBackend parse_all2all_backend(std::string_view text, std::string_view flag = "--all2all-backend");

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
  // --gpu-memory-utilization in (0, 1]. Default (nullopt): the vLLM version's (0.9 before 0.20, 0.92 from 0.20).
  std::optional<double> gpu_memory_utilization;
  // --dtype. Default: auto.
  ModelDtypeChoice dtype = ModelDtypeChoice::kAuto;
  // --kv-cache-dtype. Default: auto.
  KvCacheDtypeChoice kv_cache_dtype = KvCacheDtypeChoice::kAuto;
  // --max-model-len: the length to judge. Default (nullopt): the model's derived maximum, what vLLM
  // uses when the flag is absent. Requires >= 1.
  std::optional<std::int64_t> max_model_len;
  // --max-model-len auto / -1: vLLM (0.14+) lowers the length to the largest that fits
  // (_auto_fit_max_model_len) instead of refusing. Excludes max_model_len. Default: false.
  bool max_model_len_auto = false;
  // --max-num-seqs / --max-num-batched-tokens. Default (nullopt): the vLLM version's for the GPU.
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
  // --block-size. Default (nullopt): the chosen attention backend's.
  std::optional<std::int64_t> block_size;
  // How vLLM is started. Default: `vllm serve`.
  EntryPoint entry_point = EntryPoint::kServe;
  // --enforce-eager: no CUDA graphs, so no graph memory. Default: false.
  bool enforce_eager = false;
  // -O / --optimization-level 0-3. From vLLM 0.13 (VllmProfile::optimization_levels) 0 means no
  // torch.compile and no CUDA graphs (as --enforce-eager), 1 PIECEWISE graphs, 2 and 3 the default
  // FULL_AND_PIECEWISE; before, -O was the compilation level. Default (nullopt): not given.
  std::optional<std::int64_t> optimization_level;
  // --compilation-config cudagraph_mode, upper case ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY",
  // "FULL_AND_PIECEWISE"); it wins over the level's. "": not given.
  std::string cudagraph_mode;
  // --cudagraph-capture-sizes (-cc cudagraph_capture_sizes): the batch sizes, in tokens, captured as CUDA
  // graphs, each from 1 to 2^20; at most 4096 of them. Empty: the version's generated list.
  std::vector<std::int64_t> cudagraph_capture_sizes;
  // --max-cudagraph-capture-size (-cc max_cudagraph_capture_size): the largest captured size, 1 to 2^20.
  // With a list, vLLM requires it to equal the list's largest size. Default (nullopt): the version's.
  std::optional<std::int64_t> max_cudagraph_capture_size;
  // --skip-mm-profiling: vLLM does not run the multimodal encoder in its profile run. Default: false.
  bool skip_mm_profiling = false;
  // --enable-prefix-caching / --no-enable-prefix-caching. Default (nullopt): the version's for the
  // model (off for hybrid models through vLLM 0.26). Only hybrid models' memory depends on it.
  std::optional<bool> enable_prefix_caching;
  // --mamba-cache-mode for hybrid models. Default (nullopt): derived from prefix caching as the version does.
  std::optional<MambaCacheMode> mamba_cache_mode;
  // --mamba-cache-dtype (convolution state, and the SSM state unless the next is given) and
  // --mamba-ssm-cache-dtype. Default: auto (the model dtype, or the model's own SSM default).
  MambaDtypeChoice mamba_cache_dtype = MambaDtypeChoice::kAuto;
  MambaDtypeChoice mamba_ssm_cache_dtype = MambaDtypeChoice::kAuto;
  // --mamba-block-size: tokens per cached state in mamba_cache_mode `all`; needs prefix caching.
  std::optional<std::int64_t> mamba_block_size;
  // --num-gpu-blocks-override: the KV block count vLLM allocates whatever the memory.
  std::optional<std::int64_t> num_gpu_blocks_override;
  // --kv-cache-dtype-skip-layers (0.19+): decoder layer indices ("0", "5") or "sliding_window" whose KV
  // cache stays in the model dtype.
  std::vector<std::string> kv_cache_dtype_skip_layers;
  // --disable-hybrid-kv-cache-manager (true) / --no-disable-hybrid-kv-cache-manager (false). Default
  // (nullopt): vLLM decides (off with a KV connector lacking hybrid support, or chunked-local attention
  // where the version says so).
  std::optional<bool> disable_hybrid_kv_cache_manager;
  // --kv-transfer-config's kv_connector ("NixlConnector", "LMCacheConnectorV1", ...); "" for none.
  std::string kv_connector;
  // VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE. Default (nullopt): the version's.
  std::optional<bool> allow_chunked_local_attn_with_hybrid_kv_cache;
  // --kv-cache-memory-bytes: the KV budget per GPU, bypassing the utilization budget entirely.
  // Default (nullopt): requested memory minus weights and overheads.
  std::optional<Bytes> kv_cache_memory;
  // Added to every worker's predicted KV budget (bytes, either sign) when kv_cache_memory is not set:
  // what a logged startup measured beyond the estimate, carried into the what-ifs of that run
  // (diagnose evaluates remedies with the logged available memory as the starting point). Default 0.
  Bytes kv_budget_correction{0};
  // --speculative-config. Default: none.
  SpeculativeDecoding speculative;
  // --enable-lora, --max-loras, --max-lora-rank, --lora-dtype, --fully-sharded-loras. Default: off.
  LoraAdapters lora;
  // --quantization of an unquantized checkpoint. Default: none (a quantized checkpoint's own format).
  OnlineQuantization quantization = OnlineQuantization::kNone;
  // --cpu-offload-gb: GiB (2^30 bytes) of weights per GPU kept in pinned CPU memory. Default: 0.
  double cpu_offload_gb = 0;
  // The prefetch offloader (vLLM 0.17+): --offload-group-size G (0: off; it wins over --cpu-offload-gb),
  // --offload-num-in-group N (1 <= N <= G; default 1) and --offload-prefetch-step P (>= 1; default 1).
  // Of every G decoder layers of a pipeline stage the last N live in pinned CPU memory and are copied
  // into P GPU slots ahead of use. Each at most 2^20.
  std::int64_t offload_group_size = 0;
  std::int64_t offload_num_in_group = 1;
  std::int64_t offload_prefetch_step = 1;
  // --limit-mm-per-prompt with 0 for every modality of the vision tower, or --language-model-only:
  // vLLM builds no tower and profiles no encoder. Default: false.
  bool language_model_only = false;
  // --limit-mm-per-prompt modalities given 0 items: not profiled ("image", "video", ...). Default: none.
  std::vector<std::string> disabled_modalities;
  // --mm-processor-kwargs max_pixels (else size.longest_edge): pixels of the largest image the processor
  // accepts, which sizes the encoder profile of the Qwen2-VL processor family. 0 = the processor's own.
  std::int64_t mm_max_pixels = 0;
  // --mm-encoder-tp-mode. Default: weights.
  EncoderTpMode mm_encoder_tp_mode = EncoderTpMode::kWeights;
  // --all2all-backend and VLLM_DEEPEP_BUFFER_SIZE_MB (MiB of DeepEP's NVLink buffer, and of its RDMA
  // buffer across nodes). The backend allocates only with --enable-expert-parallel and DP > 1.
  All2AllBackend all2all_backend = All2AllBackend::kAllgatherReducescatter;
  std::int64_t deepep_buffer_size_mb = 1024;
  // VLLM_NIXL_EP_MAX_NUM_RANKS (0.18+): the ranks nixl_ep sizes its buffer for (elastic EP). Default 32.
  std::int64_t nixl_ep_max_num_ranks = 32;
  // --attention-backend / VLLM_ATTENTION_BACKEND: the backend vLLM must use ("" lets it choose).
  std::string attention_backend;
  // VLLM_MLA_DISABLE=1 (vllm/envs.py; ModelConfig.use_mla): DeepSeek-style models run their MLA
  // layers as multi-head attention, with a full K and V per head in the KV cache.
  bool mla_disabled = false;
};

}  // namespace gpubudget
