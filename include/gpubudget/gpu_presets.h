// GPU presets (configs/gpus, docs/gpus.md) and GPUs of one's own.
//
// Every loader throws InputError naming the file, the JSON path and the offending value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/bytes.h"
#include "gpubudget/config_dir.h"
#include "gpubudget/gpu_spec.h"

namespace gpubudget {

// `<root>/gpus/<name>.json` (docs/gpus.md), a preset named case- and separator-insensitively or by an
// alias of `<root>/gpu-aliases.json`, or, when `name` ends in ".json", that file in the preset format
// (a GPU of one's own). InputError for an unknown name (listing the presets), a missing file or a
// malformed preset (naming the file and field).
GpuSpec load_gpu_preset(const std::string& name, const ConfigDir& configs);
// Every preset, by name. InputError when one is malformed.
std::vector<GpuSpec> list_gpu_presets(const ConfigDir& configs);
// The GPUs of a deployment: one preset for every pipeline stage, or one per stage (`names`), each
// with `memory` as its CUDA-visible total when given; a custom GPU of `memory` when `names` is empty.
// InputError for an unknown preset, for neither names nor memory, or for a count that is neither 1
// nor `pipeline_parallel_size`.
std::vector<GpuSpec> load_stage_gpus(const std::vector<std::string>& names, std::optional<Bytes> memory,
                                     std::int64_t pipeline_parallel_size, const ConfigDir& configs);

// The preset a device name means, as logs, observation rows and nvidia-smi print it ("H100 80GB
// HBM3"): the first rule of `<root>/gpu-names.json` whose every text the name contains; "" when none
// does. InputError when the rules file is malformed.
std::string gpu_preset_for_device_name(std::string_view device_name, const ConfigDir& configs);

// The measured preset (not memory_estimated) whose CUDA-visible total is nearest `total_gib` (a log's
// "total capacity") within 0.5%, or nullopt when none is, or when a second one is nearly as near
// (within 0.01 GiB more). InputError when a preset is malformed.
std::optional<GpuSpec> find_gpu_preset_by_memory(const ConfigDir& configs, double total_gib);
// "major.minor" as CUDA prints a compute capability ("9.0", "12.0"): major 1 to 99, minor 0 to 9;
// nullopt for anything else.
std::optional<ComputeCapability> parse_compute_capability(std::string_view text);
// A GPU that is no preset: `memory` bytes, CUDA, `compute_capability`. Default (nullopt): 9.0
// (Hopper) is assumed, which decides the attention backend and so the block size; `memory_source`
// says so.
GpuSpec custom_gpu(Bytes memory, std::optional<ComputeCapability> compute_capability = std::nullopt);

}  // namespace gpubudget
