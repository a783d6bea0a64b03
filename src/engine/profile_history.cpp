// The shipped profiles read as a history (profile_history.h).
#include "engine/profile_history.h"

#include <filesystem>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/profile_loading.h"

namespace gpubudget::detail {

std::string first_version_where(const VllmProfile& profile, const std::function<bool(const VllmProfile&)>& holds) {
  const std::filesystem::path dir = std::filesystem::path(profile.source).parent_path();
  std::error_code ec;
  if (profile.source.empty() || dir.filename() != "vllm" || !std::filesystem::is_directory(dir, ec)) return "";
  const auto own = parse_vllm_version(profile.version);
  if (!own) return "";
  const ConfigDir configs{dir.parent_path()};
  try {
    for (const auto& version : list_vllm_profiles(configs)) {  // oldest first
      const auto number = parse_vllm_version(version);
      if (!number || !(*own < *number)) continue;
      if (holds(load_vllm_profile(version, configs))) return version;
    }
  } catch (const InputError&) {
    return "";  // a broken neighbour: the message goes without the version rather than failing
  }
  return "";
}

std::string arrival_phrase(const VllmProfile& profile, const std::function<bool(const VllmProfile&)>& holds) {
  const auto version = first_version_where(profile, holds);
  return version.empty() ? std::string("no vLLM release gpubudget models has it")
                         : fmt::format("it arrived in vLLM {}", version);
}

}  // namespace gpubudget::detail
