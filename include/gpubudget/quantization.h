// How a checkpoint stores its linear and expert weights, resolved per module at parse time.
//
// A QuantFormat says how one logical weight matrix [N_out, K_in] is stored on a GPU after vLLM has
// loaded and post-processed it; weights.h turns it into exact bytes (docs/methodology.md §Weights).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpubudget/dtype.h"

namespace gpubudget {

enum class QuantKind {
  kUnquantized,  // `dtype` elements, e.g. bf16
  kFp8Block,     // fp8 e4m3 weight + fp32 scale per [block_n x block_k] tile (DeepSeek `weight_block_size`)
  kNvfp4,        // 4-bit e2m1 weight (2 per byte) + fp8 e4m3 scale per `group_size` inputs + fp32 globals
  kMxfp4,        // OCP MXFP4: e2m1 weight (2 per byte) + e8m0 scale per 32 inputs, sizes padded per backend
  kIntPacked,    // compressed-tensors pack-quantized INT4/INT8 weight-only: int32-packed weight + 16-bit
                 // scale per `group_size` inputs (+ int32-packed zero points when asymmetric)
  kFp8Tensor,    // fp8 e4m3 weight + one fp32 scale per tensor (ModelOpt FP8, `fp8` without blocks,
                 // compressed-tensors tensor strategy); fused shards share the maximum after loading
  kChannel8,     // 8-bit weight (fp8 e4m3 or int8) + fp32 scale per output channel (compressed-tensors
                 // FP8_DYNAMIC, W8A8 INT8)
  kGptq,         // GPTQ: int32-packed weight + 16-bit scales per group (+ zeros if asymmetric, + g_idx
                 // and its sort order with act-order), Marlin layout
  kAwq,          // AWQ: int32-packed weight + 16-bit scales + int32-packed zero points per group
  kBnbNf4,       // bitsandbytes NF4 as vLLM quantizes a 16-bit checkpoint online: uint8-packed 4-bit
                 // weight (2 per byte), fp32 absmax per 64 weights and a 16-entry fp32 code table per
                 // on-disk weight (the nested statistics are undone at load, vLLM 0.9.2+)
};

struct QuantFormat {
  QuantKind kind = QuantKind::kUnquantized;
  Dtype dtype = Dtype::kBFloat16;  // element type when kind == kUnquantized
  std::int64_t block_n = 0;        // kFp8Block: output rows per scale tile
  std::int64_t block_k = 0;        // kFp8Block: input columns per scale tile
  std::int64_t scale_bytes = 4;    // kFp8Block: bytes per tile scale (fp32; 1 for e8m0, DeepSeek-V4)
  std::int64_t group_size = 0;     // kNvfp4: inputs per fp8 scale (16); kIntPacked: inputs per scale,
                                   // 0 = one scale per output channel
  std::int64_t bits = 0;           // kIntPacked: 4 or 8
  bool symmetric = true;           // kIntPacked, kGptq: false adds zero points; kAwq: always false
  bool integer = false;            // kChannel8: int8 weight (W8A8) rather than fp8
  bool static_input_scale = false; // kFp8Tensor, kChannel8: a calibrated fp32 input scale per module
  bool act_order = false;          // kGptq: desc_act (g_idx kept; row-parallel scales not split)

  friend bool operator==(const QuantFormat&, const QuantFormat&) = default;
};

// A short human description ("nvfp4 group 16", "fp8 block 128x128") for reports.
std::string describe(const QuantFormat& format);

// The checkpoint's quantization as declared by `quantization_config` (config.json) or
// A KV-cache quantization declared by the checkpoint.
enum class CheckpointKvScheme {
  kNone,
  kModelOpt,           // kv_cache_quant_algo / kv_cache_scheme of a ModelOpt checkpoint
  kCompressedTensors,  // kv_cache_scheme of a compressed-tensors checkpoint (8-bit float)
};

// `hf_quant_config.json` (ModelOpt), before it is applied to modules.
struct CheckpointQuantization {
  // "" (none), "fp8", "modelopt", "modelopt_fp4" ... as vLLM names the method.
  std::string method;
  // The format of modules the quantization applies to (kUnquantized when method is empty).
  QuantFormat format;
  // Checkpoint module-name patterns left unquantized (`exclude_modules`, `ignore`); matched as vLLM
  // does (exact, or glob where `*` is any run and `.` is literal; `re:` prefix = regular expression).
  std::vector<std::string> excluded_modules;
  // The KV-cache quantization the checkpoint declares; what vLLM does with it depends on the version
  // (resolve_kv_cache_dtype, kv_cache.h).
  CheckpointKvScheme kv_cache_scheme = CheckpointKvScheme::kNone;
  // kModelOpt: the algorithm as vLLM normalises it, lower case ("fp8", "nvfp4", or the unknown text).
  std::string kv_cache_algo;
  // The declaration behind kv_cache_dtype, for explanations ("hf_quant_config.json kv_cache_quant_algo FP8").
  std::string kv_cache_declaration;
  // Where the declaration came from, for explanations ("config.json:/quantization_config").
  std::string source;
  // True when only FusedMoE experts are quantized and every linear layer stays unquantized (MXFP4).
  bool experts_only = false;
  // ModelOpt MIXED_PRECISION: the format of each listed checkpoint module (`quantized_layers`);
  // modules not listed stay unquantized. Empty for single-format checkpoints.
  std::vector<std::pair<std::string, QuantFormat>> per_module;
};

// A checkpoint's module-name patterns (`ignore`, `exclude_modules`, `modules_to_not_convert`), prepared
// once so that asking about each of a model's modules costs a prefix compare per pattern, not a
// regular-expression build. Matching follows vLLM: `re:` = Python re.match (anchored at the start only,
// compressed-tensors); a pattern with `*` or `.` = glob full match where `*` is any run and every other
// character is literal (ModelOpt); a bare word = substring ("lm_head").
// Throws InputError (naming the pattern) when a `re:` pattern is not a valid regular expression.
class ModuleNamePatterns {
 public:
  ModuleNamePatterns() = default;
  explicit ModuleNamePatterns(const std::vector<std::string>& patterns);

  // True when every name in `shard_names` matches one of the patterns (a fused module is excluded only
  // when all its shards are). Names are full checkpoint prefixes without the `.weight` suffix.
  [[nodiscard]] bool excludes_all(std::span<const std::string> shard_names) const;
  [[nodiscard]] bool matches(std::string_view name) const;
  [[nodiscard]] bool empty() const { return index_ == nullptr; }

 private:
  struct Index;
  std::shared_ptr<const Index> index_;  // null when there are no patterns; shared, never modified
};

// True when every checkpoint shard name of a module matches one of `patterns` (ModuleNamePatterns,
// prepared for this one call).
bool is_excluded(const std::vector<std::string>& patterns, const std::vector<std::string>& shard_names);

}  // namespace gpubudget
