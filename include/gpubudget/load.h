// Loading models, GPU presets and vLLM version profiles from disk.
//
// Every loader throws InputError naming the file, the JSON path and the offending value.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpubudget/gpu_spec.h"
#include "gpubudget/model_spec.h"
#include "gpubudget/safetensors.h"
#include "gpubudget/vllm_profile.h"

namespace gpubudget {

// Where presets and bundled models live: `<root>/gpus`, `<root>/vllm`, `<root>/models`.
struct ConfigDir {
  std::filesystem::path root;
};

// Search order: `explicit_dir` if not empty, then $GPUBUDGET_CONFIG_DIR, then relative to the
// executable (`<exe>/../share/gpubudget/configs`, the source tree's `configs/` for build trees),
// then the install prefix compiled in. Throws InputError if none exists.
ConfigDir find_config_dir(const std::string& explicit_dir, const std::filesystem::path& executable);

// The Hugging Face ids of the bundled models (`<root>/models/<org>__<name>` → "org/name"), sorted.
std::vector<std::string> list_bundled_models(const ConfigDir& configs);

// `model` is a directory holding config.json, a path to a config.json, or the Hugging Face id of a
// bundled model ("nvidia/Kimi-K2.5-NVFP4" → <root>/models/nvidia__Kimi-K2.5-NVFP4).
ModelSpec load_model(const std::string& model, const ConfigDir& configs);

// The architecture families gpubudget parses, in the order tried: each parser's name, the language-model
// `model_type`s it reads and the config.json `architectures` vLLM registers for them. The generic path
// (family "generic", any other type, sized from safetensors headers) is not among them.
struct FamilyInfo {
  std::string name;
  std::vector<std::string> model_types;
  std::vector<std::string> architectures;
};
std::vector<FamilyInfo> list_families();

// Parses an already-read config.json (plus an optional hf_quant_config.json text, "" if absent).
// `source` names the file in error messages.
ModelSpec parse_model_config(const std::string& config_json, const std::string& hf_quant_config_json,
                             const std::string& source);
// The same with the checkpoint's safetensors headers at hand: an architecture no family parser knows
// is then sized from them (family "generic", ModelSpec::generic_assumptions; docs/methodology.md
// §Generic) unless it is one gpubudget knows the generic layout gets wrong.
ModelSpec parse_model_config(const std::string& config_json, const std::string& hf_quant_config_json,
                             const std::string& source, const CheckpointHeaders& headers);

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

// The profile for vLLM `version` ("0.15", "0.15.1"): the newest profile whose version is ≤ it; for a
// version older than every profile the oldest, for a source build ("0.0.0+local") the newest, and
// VllmProfile::version_note says so whenever the profile is not that release's own (pre-releases and
// nightlies included). Empty `version` = the newest profile. InputError for text that is no version.
VllmProfile load_vllm_profile(const std::string& version, const ConfigDir& configs);
// A profile file given by path (`fit --profile`, e.g. the output of `gpubudget calibrate`). A profile
// that extends another ("extends": "0.16") finds it beside itself, else among `configs`' profiles.
VllmProfile load_vllm_profile_file(const std::string& path);
VllmProfile load_vllm_profile_file(const std::string& path, const ConfigDir& configs);
// The versions of the profiles in `<root>/vllm`, oldest first ("0.11", "0.13", ...).
std::vector<std::string> list_vllm_profiles(const ConfigDir& configs);

}  // namespace gpubudget
