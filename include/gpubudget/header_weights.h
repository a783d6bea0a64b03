// Per-GPU weights from the checkpoint's own safetensors headers, next to the config-derived figure.
//
// Each header tensor is matched by name to a weight unit (weight_units.h): a fused module's unfused
// shard names, a FusedMoE block's prefix, a norm's name. A unit's header bytes are the sum of its
// matched tensors; its per-GPU bytes are the config-derived per-GPU bytes scaled by header/config
// checkpoint bytes (equal when the two agree, which is the normal case), so vLLM's sharding and
// post-load transformations (padding, requantized scales) carry over. Runtime-only units (extra
// copies, buffers) are taken from the config. Header tensors that match no unit are counted whole on
// every GPU and listed; units with no tensor in the headers count nothing and are listed.
#pragma once

#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/safetensors.h"
#include "gpubudget/weight_units.h"

namespace gpubudget {

struct UnitDifference {
  std::string unit;
  Bytes config_checkpoint;  // bytes the config implies
  Bytes header_checkpoint;  // bytes the headers hold
};

struct HeaderComparison {
  Bytes config_per_gpu;
  Bytes header_per_gpu;
  Bytes config_checkpoint;  // all ranks, checkpoint layout
  Bytes header_checkpoint;  // sum of every header tensor
  std::vector<Bytes> header_unit_per_gpu;       // parallel to the units passed in
  std::vector<UnitDifference> differences;      // units whose bytes differ
  std::vector<std::string> missing_units;       // config units without any header tensor
  std::vector<std::string> unmatched_tensors;   // header tensors that fit no unit
  Bytes unmatched_bytes;
};

// Matches every header tensor to the unit whose checkpoint names hold it (canonical module names) and
// compares bytes unit by unit; a differing unit's per-GPU bytes are scaled by header/config. Does not
// throw; `units` come from weight_units(model, layout).
HeaderComparison compare_with_headers(const std::vector<WeightUnit>& units, const CheckpointHeaders& headers);

}  // namespace gpubudget
