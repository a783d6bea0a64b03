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
#include <utility>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/deployment.h"
#include "gpubudget/gpu_spec.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"

namespace gpubudget {

// vLLM's rules for the LoRA buffers of one version (configs/vllm/*.json `lora`).
struct LoraRules {
  // Architectures whose vLLM class lists embed_tokens and lm_head in `embedding_modules`: the token
  // embedding and the logits processor get adapter slots too (Llama always; Qwen3 from 0.16).
  std::vector<std::string> embedding_architectures;
  // The largest vocabulary LogitsProcessorWithLoRA accepts (258,048 from 0.17; 257,024 before).
  std::int64_t max_lm_head_vocab = 258048;
};

// What a vLLM version does with speculative decoding's drafter (configs/vllm/*.json `speculative`).
struct SpeculativeRules {
  // MTP layers' shared_head.head replaced by the target's lm_head (0.17+, #34385); before, each keeps its
  // own vocabulary-split copy.
  bool mtp_shares_head = true;
  // The profile run with speculative decoding (GPUModelRunner._dummy_run / _dummy_sampler_run):
  // methods whose drafter runs its dummy pass on the T profiled tokens (use_eagle(); draft_model from 0.15);
  // the others (medusa, ngram, suffix) load weights but run nothing there.
  std::vector<std::string> profiled_drafters = {"eagle", "eagle3", "mtp"};
  // The rejection sampler's dummy run on R = min(T, S) requests of one draft token each holds, at its
  // peak, R x vocab x (logit_copies x logit bytes + fp32_bytes) bytes: the dummy logits and bonus
  // logits in the logits dtype, and fp32 copies, probabilities and their inverse.
  std::int64_t rejection_logit_copies = 3;
  std::int64_t rejection_fp32_bytes = 24;
};

// One attention backend in vLLM's priority order for a platform.
struct AttentionBackend {
  std::string name;                       // "FLASH_ATTN_MLA", "TRITON_MLA", ...
  AttentionKind kind = AttentionKind::kFull;  // kFull (standard attention) or kMla
  bool sparse = false;                        // a sparse-MLA backend (DeepSeek-V3.2 / GLM-5 indexer models)
  Platform platform = Platform::kCuda;
  std::vector<int> compute_capability_majors;  // empty = any
  std::vector<std::string> kv_cache_dtypes;    // resolved dtypes it accepts ("bfloat16", "fp8_e4m3"...)
  std::int64_t block_size = 16;                // block size it picks when --block-size is not given
  // get_supported_kernel_block_sizes: a KV block of B tokens runs on this backend when some kernel size
  // k divides B. `kernel_block_multiple` > 0 stands for MultipleOf(n). Both empty: any block size.
  std::vector<std::int64_t> kernel_block_sizes;
  std::int64_t kernel_block_multiple = 0;
  // vLLM <= 0.17 (CudaPlatform.check_and_update_config): the platform replaces a --block-size this
  // backend's kernels cannot run with its own block size (MLA backends), or ignores --block-size
  // altogether (sparse MLA: always 64).
  bool ignores_user_block_size = false;
  // Selection conditions: query heads per TP rank at most this (0 = no limit); the model's
  // qk_nope_head_dim must equal this (0 = any) - FlashInfer-MLA's TRT-LLM kernels.
  std::int64_t max_query_heads_per_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  // When not empty: a quantized KV dtype is stored in this layout instead (FLASHMLA_SPARSE → fp8_ds_mla).
  std::string quantized_kv_layout;
  // When not empty: `--kv-cache-dtype auto` becomes this dtype on this backend (vLLM 0.11.0 stores
  // DeepSeek-V3.2's cache as fp8_ds_mla by default).
  std::string auto_kv_cache_dtype;
  // When not empty: vLLM's words when the model forces this backend and the KV dtype is not one it
  // accepts, `{}` standing for the --kv-cache-dtype value (DeepSeek-V4's assert).
  std::string kv_cache_dtype_error;

  // Whether a KV block of `block_size` tokens runs on this backend's kernels.
  [[nodiscard]] bool supports_block_size(std::int64_t block_size) const;
  // The smallest kernel block size (MultipleOf(n) counts as n); `block_size` when none is listed.
  [[nodiscard]] std::int64_t min_kernel_block_size() const;
};

// The MXFP4 MoE backend vLLM picks on a GPU and the padding it applies (Mxfp4MoEMethod).
struct Mxfp4MoeBackend {
  std::string name;
  std::vector<int> compute_capability_majors;
  Mxfp4Packing packing;
  // The oracle has two priority lists (fused_moe/oracle/mxfp4.py): gpt-oss's, and every other model's
  // (DeepSeek-V4); an entry belongs to one of them.
  bool for_gpt_oss = true;
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
  Bytes non_torch_single_gpu;     // non-torch increase at TP == 1 (pipeline stages alone add ~nothing)
  Bytes non_torch_multi_nvlink;   // ... with TP > 1 and custom all-reduce (NVLink)
  Bytes non_torch_multi_pcie;     // ... with TP > 1 on PCIe (custom all-reduce off)
  Bytes cudagraph_base;           // CUDA-graph estimate: fixed part
  Bytes cudagraph_per_layer;      // ... plus this per decoder layer on the worker
  // The swing of the KV budget as a fraction of the estimated overheads (activation + non-torch +
  // charged graphs): calibrate_profile sets it to cover 90% of its rows out of sample (calibrate.h).
  double relative_uncertainty = 0;
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

// How _check_enough_kv_cache_memory and the max-length estimate count one request's KV need.
enum class KvNeedRule {
  kPerLayerSum,       // <= 0.13: Σ per-layer max_memory_usage_bytes on the worker (no group padding)
  kGlobalFirstGroup,  // 0.14-0.15: every layer of the model (all stages) against the smallest worker budget;
                      // group_size x page x cdiv(first group's need, page)
  kWorkerFirstGroup,  // 0.16-0.17: the worker's projected groups, first group's need only (#33698)
  kWorkerGroups,      // 0.18+: the worker's projected groups, Σ over groups (#36030)
};

// What --num-gpu-blocks-override does.
enum class BlocksOverrideRule {
  kReplacesBlocks,  // <= 0.20: the block count is replaced; the memory check still uses real memory
  kSetsMemory,      // 0.21+ (#41069): available memory = override x bytes per block, for the check too
};

// --block-size given by the user.
enum class UserBlockSizeRule {
  kForcedByBackend,   // <= 0.17: MLA backends replace a block size their kernels cannot run
  kKernelCompatible,  // 0.18+: backends whose kernels cannot run it are skipped; none left is an error
};

// How a compressed-tensors checkpoint's kv_cache_scheme sets the KV dtype (Attention.__init__).
enum class CheckpointKvSchemeRule {
  kIgnored,         // <= 0.14: only its scales are loaded; `auto` stays the model dtype
  kForcesFp8,       // 0.15-0.21 (#30141): the cache is fp8 whatever --kv-cache-dtype says
  kAutoBecomesFp8,  // 0.22+ (#42782): `auto` becomes fp8; an explicit --kv-cache-dtype wins
};

// The KV-cache accounting rules of a vLLM line (docs/vllm-versions.md lists where each starts).
struct KvCacheRules {
  std::vector<std::string> kv_cache_dtypes;  // values --kv-cache-dtype accepts (CacheDType)
  std::vector<std::int64_t> block_sizes;     // values --block-size accepts (BlockSize literal); empty: any
  UserBlockSizeRule user_block_size = UserBlockSizeRule::kKernelCompatible;
  KvNeedRule need = KvNeedRule::kWorkerGroups;
  // _get_kv_cache_groups_uniform_page_size: the group size is the largest bucket when it is under
  // this multiple of the smallest (1.0: always the smallest).
  double hybrid_group_ratio = 1.5;
  bool unify_page_sizes = true;         // unify_kv_cache_spec_page_size (0.13+); else mixed pages raise
  bool auto_fit_max_model_len = true;   // --max-model-len auto / -1 (0.14+)
  BlocksOverrideRule num_gpu_blocks_override = BlocksOverrideRule::kSetsMemory;
  bool skip_layers = true;              // --kv-cache-dtype-skip-layers exists (0.19+)
  // ModelOpt kv_cache_quant_algo → --kv-cache-dtype `auto` resolution (resolve_kv_cache_dtype_string,
  // 0.14+): lower-case algorithm → dtype. Empty: the checkpoint never sets the KV dtype.
  std::vector<std::pair<std::string, std::string>> modelopt_kv_cache_dtypes;
  CheckpointKvSchemeRule compressed_tensors_kv_scheme = CheckpointKvSchemeRule::kAutoBecomesFp8;
  // DeepSeek-V3.2-style remap of an fp8 request to the FlashMLA-sparse layout for these architectures
  // (vLLM <= 0.17 DeepseekV32ForCausalLM.verify_and_update_config); empty: none.
  std::vector<std::string> fp8_ds_mla_architectures;
  // Hybrid KV cache manager (VllmConfig.__post_init__): chunked-local attention keeps it on by default
  // (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default 1, 0.14+); KV connectors that keep it on
  // (0.21+: those implementing SupportsHMA; empty: every connector turns it off); whether an explicit
  // --no-disable-hybrid-kv-cache-manager can keep it on (0.14+).
  bool chunked_local_keeps_hybrid_manager = true;
  std::vector<std::string> kv_connectors_with_hybrid_manager;
  bool hybrid_manager_flag_overrides = true;
  // The DeepSeek-V4 KV layout (group_and_unify_kv_cache_specs, _get_kv_cache_config_deepseek_v4) exists:
  // DeepseekV4ForCausalLM arrived with it (#40860, 2026-04-26; vLLM 0.20.0).
  bool deepseek_v4_kv_groups = false;
};

// How a mixer's temporal (SSM) state dtype defaults for some architectures (models/config.py).
struct SsmDtypeDefault {
  std::vector<std::string> architectures;
  // The config's own key (Nemotron-H mamba_ssm_cache_dtype, Qwen3.5 mamba_ssm_dtype) when present,
  // else this ("" = the model dtype).
  std::string fallback;
};

// The rules of hybrid (Mamba / linear-attention + attention) models.
struct HybridRules {
  // Prefix caching for hybrid models: off unless --enable-prefix-caching (through 0.26).
  bool prefix_caching_default = false;
  // What --enable-prefix-caching does on a hybrid model: "never" (0.11.0: forced off), "supporting_models"
  // (0.11.1-0.14: on only for mamba_prefix_caching_architectures, per-block states), "modes" (0.15+:
  // mamba_cache_mode `all` for those, `align` for the others).
  std::string prefix_caching = "modes";
  std::vector<std::string> mamba_prefix_caching_architectures;  // SupportsMambaPrefixCaching
  bool mamba_cache_mode_flag = true;   // --mamba-cache-mode exists (0.15+)
  bool mamba_block_size_flag = true;   // --mamba-block-size exists (0.11.1+)
  // Block alignment: "fixed" (<= 0.19: HybridAttentionMambaModelConfig, steps of alignment_unit tokens,
  // alignment_unit_mla for MLA models) or "kernel" (0.20+: Platform._align_hybrid_block_size, steps of
  // max(smallest kernel block of the backend, block size)).
  std::string alignment = "kernel";
  std::int64_t alignment_unit = 16;
  std::int64_t alignment_unit_mla = 64;
  // 0.11.1-0.17 (#27994): the unit on Blackwell (SM100) for head size 256 with FlashInfer; 0 = none.
  std::int64_t alignment_unit_blackwell_head_256 = 0;
  // `align` mode refuses a block size above max_num_batched_tokens (0.17-0.26).
  bool align_block_at_most_batched_tokens = true;
  std::vector<std::string> mamba_dtypes = {"auto", "float32", "float16", "bfloat16"};  // MambaDType
  bool gated_delta_net_ssm_dtype_flag = true;  // GDN honours --mamba-ssm-cache-dtype (0.17+)
  std::vector<SsmDtypeDefault> ssm_dtype_defaults;
};

// What a vLLM version's expert-parallel all-to-all backends do (configs/vllm/*.json `all2all`).
struct All2AllRules {
  // deepep_high_throughput with DP > 1 sets cudagraph_mode NONE (config/compilation.py; #25093, lifted
  // in 0.13 by #29558, back from 0.14 by #30910).
  bool deepep_high_throughput_disables_cuda_graphs = true;
  // VLLM_ALL2ALL_BACKEND picks the backend when --all2all-backend is not given (removed in 0.16, #33535).
  bool backend_env = false;
  // Tokens per DeepEP low-latency dispatch: VLLM_MOE_DP_CHUNK_SIZE before 0.20, max_num_batched_tokens
  // from 0.20 (#39107, MoE DP chunking removed).
  bool dispatch_tokens_are_batched_tokens = false;
  std::int64_t moe_dp_chunk_size = 256;
  // max_num_batched_tokens default with deepep_low_latency / nixl_ep, EP and DP > 1
  // (SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP, 0.20+); 0 = the usual defaults.
  std::int64_t batched_dp_moe_default_tokens = 0;
  // Backend names (vLLM's spelling) this version does not accept (`unknown_backends`: added in a later
  // release, a start blocker) or accepts and replaces by allgather_reducescatter (`fallback_backends`:
  // removed, with vLLM's warning).
  std::vector<std::string> unknown_backends;
  std::vector<std::string> fallback_backends;
  // Token formats flashinfer_nvlink_one_sided dispatches ("nvfp4", "bf16"); vLLM raises for any other.
  std::vector<std::string> one_sided_dispatch_formats = {"nvfp4"};
};

// How a vLLM version builds its CUDA-graph capture sizes when the launch does not list them
// (VllmConfig._set_cudagraph_sizes; configs/vllm/*.json `cuda_graphs`).
struct CudaGraphRules {
  // The generated list: [1, 2, 4], every 8 up to 248, then every `stride_above_256` up to the largest
  // size (16 from 0.11.1, #26016; 0.11.0 strides by 8 throughout).
  std::int64_t stride_above_256 = 16;
  // The default largest size is min(2 x S x (1 + k), 512) with k speculative tokens (#30330, 0.13);
  // before, min(2 x S, 512).
  bool max_size_counts_speculative_tokens = true;
  // max_num_batched_tokens is captured too when it is below the largest size and off the grid (#40734, 0.21).
  bool captures_max_num_batched_tokens = true;
};

struct VllmProfile {
  std::string version;          // "0.15"
  // How load_vllm_profile matched the version asked for when the profile is not that release's own (an
  // older or newer release, a pre-release, nightly or source build): a sentence fit() adds to its
  // warnings; "" for an exact match or the default.
  std::string version_note;
  std::string description;
  double default_gpu_memory_utilization = 0.9;
  bool charges_cudagraph_memory = false;  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default
  // "GPU KV cache size" report: true = int(concurrency * max_model_len) (vLLM >= 0.21),
  // false = num_blocks // num_groups * block_size (older).
  bool kv_tokens_from_concurrency = false;
  bool attention_backend_env = false;
  // -O is the optimization level (-O0: no compile, no CUDA graphs), not the compilation level (0.13+, #26847).
  bool optimization_levels = false;  // VLLM_ATTENTION_BACKEND forces the backend (before 0.15)
  // --offload-group-size and the prefetch offloader exist (0.17+, #29941).
  bool prefetch_offloader = false;
  KvCacheRules kv_cache;
  HybridRules hybrid;
  LoraRules lora;
  SpeculativeRules speculative;
  All2AllRules all2all;
  CudaGraphRules cuda_graphs;
  std::vector<BatchDefaults> batch_defaults;  // first matching entry wins
  std::vector<AttentionBackend> attention_backends;  // priority order
  std::vector<Mxfp4MoeBackend> mxfp4_moe_backends;
  OverheadModel overheads;
  VllmMessages messages;
  std::string source;  // file it was loaded from
};

}  // namespace gpubudget
