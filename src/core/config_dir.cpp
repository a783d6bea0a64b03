#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/config_dir.h"

#ifndef GPUBUDGET_SOURCE_CONFIG_DIR
#define GPUBUDGET_SOURCE_CONFIG_DIR ""
#endif
#ifndef GPUBUDGET_INSTALL_CONFIG_DIR
#define GPUBUDGET_INSTALL_CONFIG_DIR ""
#endif

namespace gpubudget {

ConfigDir find_config_dir(const std::string& explicit_dir, const std::filesystem::path& executable) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto usable = [&](const fs::path& p) { return !p.empty() && fs::is_directory(p / "gpus", ec); };
  if (!explicit_dir.empty()) {
    if (!usable(explicit_dir)) {
      throw InputError(fmt::format("--config-dir {}: not a gpubudget config directory (no gpus/ inside)", explicit_dir));
    }
    return {explicit_dir};
  }
  if (const char* env = std::getenv("GPUBUDGET_CONFIG_DIR"); env != nullptr && *env != '\0') {
    if (!usable(env)) {
      throw InputError(fmt::format("GPUBUDGET_CONFIG_DIR={}: not a gpubudget config directory (no gpus/ inside)", env));
    }
    return {env};
  }
  if (!executable.empty()) {
    const fs::path installed = executable.parent_path() / ".." / "share" / "gpubudget" / "configs";
    if (usable(installed)) return {installed.lexically_normal()};
  }
  if (usable(GPUBUDGET_INSTALL_CONFIG_DIR)) return {GPUBUDGET_INSTALL_CONFIG_DIR};
  if (usable(GPUBUDGET_SOURCE_CONFIG_DIR)) return {GPUBUDGET_SOURCE_CONFIG_DIR};
  throw InputError("no gpubudget config directory found; pass --config-dir or set GPUBUDGET_CONFIG_DIR");
}

std::vector<std::string> list_bundled_models(const ConfigDir& configs) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(configs.root / "models", ec)) {
    const std::string folder = e.path().filename().string();
    const auto sep = folder.find("__");
    ids.push_back(sep == std::string::npos ? folder : folder.substr(0, sep) + "/" + folder.substr(sep + 2));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace gpubudget
