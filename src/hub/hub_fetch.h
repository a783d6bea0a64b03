// Fetching one commit of a Hub model repository into gpubudget's cache: the model info (commit and
// file list), the small configuration files, and each safetensors shard's header by HTTP Range.
#pragma once

#include <filesystem>
#include <string>

#include "gpubudget/hub.h"

namespace gpubudget::detail {

// The files fetched whole when the repository has them (config.json is required).
inline constexpr const char* kHubConfigFiles[] = {
    "config.json",          "hf_quant_config.json",    "quant_config.json",           "quantize_config.json",
    "preprocessor_config.json", "processor_config.json", "model.safetensors.index.json"};

// The bytes asked for first from each shard: the 8-byte length and, for most checkpoints, the whole
// header; a longer header costs one more request for the rest.
inline constexpr std::int64_t kSpeculativeHeaderBytes = 256 << 10;

struct HubSnapshot {
  std::filesystem::path folder;  // <repo_dir>/snapshots/COMMIT, complete
  std::string commit;
};

// Asks the Hub which commit `revision` of `repo` is, and fetches that commit's files into
// `repo_dir`/snapshots/COMMIT unless that folder is already there; records refs/REVISION. InputError
// (naming the repository and the URL) for every HTTP, network or content failure.
HubSnapshot fetch_hub_snapshot(const std::string& repo, const std::string& revision, const HubOptions& options,
                               const std::filesystem::path& repo_dir);

}  // namespace gpubudget::detail
