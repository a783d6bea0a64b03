// The configs folder: GPU presets, vLLM profiles and bundled models (docs/configs.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

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

}  // namespace gpubudget
