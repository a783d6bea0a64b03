// Weight units: the model's weights as a list of named pieces (one linear module, one FusedMoE block,
// one norm, the embedding ...), each with its checkpoint bytes and the bytes one GPU holds.
//
// This is the single place where a ModelSpec becomes bytes per piece: weights_per_gpu() and
// checkpoint_bytes() sum it, the CLI lists it (`gpubudget weights --by tensor|layer`), and the
// safetensors comparison (header_weights.h) matches checkpoint tensors to it by name.
#pragma once

#include <cstdint>
#include <array>
#include <string>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/safetensors.h"  // canonical_module_name
#include "gpubudget/model_spec.h"
#include "gpubudget/parallel_layout.h"

namespace gpubudget {

struct WeightUnit {
  std::string name;  // vLLM module name, e.g. "model.layers.3.self_attn.qkv_proj"
  // Checkpoint module names whose tensors make up the unit (canonical_module_name form; a fused
  // module lists its unfused shards: q_proj, k_proj, v_proj). Empty for runtime-only units.
  std::vector<std::string> checkpoint_names;
  // True when every checkpoint tensor *under* a name belongs to the unit (FusedMoE blocks:
  // "layers.3.mlp.experts." covers per-expert and fused expert tensors alike).
  bool prefix_match = false;
  Component component = Component::kNorms;
  std::int64_t layer = -1;        // decoder layer index, -1 outside the decoder layers
  Bytes checkpoint;               // bytes in the checkpoint, all ranks together (0: runtime-only)
  Bytes per_gpu;                  // bytes on the GPU of the layout (0: not on this rank or checkpoint-only)
  bool checkpoint_only = false;   // in the checkpoint but never loaded (MTP layers without speculation)
  bool runtime_only = false;      // created by vLLM, not in the checkpoint (extra copies, buffers)
};

// Every unit of `model`, in model order, with per-GPU bytes for the worker of `layout`.
std::vector<WeightUnit> weight_units(const ModelSpec& model, const ParallelLayout& layout);

inline constexpr std::size_t kComponentCount = static_cast<std::size_t>(Component::kBuffers) + 1;

}  // namespace gpubudget
