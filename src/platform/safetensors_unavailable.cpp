// safetensors.h in the WebAssembly build, which has no simdjson: a config-only folder (the page's
// uploads and bundled models) reads as one (nullopt), and anything that would need a header read is
// refused with an InputError that says so, never read differently.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/safetensors.h"

namespace gpubudget {
namespace {

[[noreturn]] void refuse(const std::string& path) {
  throw InputError(fmt::format("{}: reading safetensors headers is not part of the web build; "
                               "give the model's config.json (and its quantization config) alone",
                               path));
}

}  // namespace

SafetensorsFile parse_safetensors_header(std::string_view, std::int64_t, const std::string& path) { refuse(path); }

SafetensorsFile read_safetensors_header(const std::string& path) { refuse(path); }

std::optional<CheckpointHeaders> read_checkpoint_headers(const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) return std::nullopt;
  const fs::path dir(model_dir);
  if (fs::exists(dir / "model.safetensors.index.json", ec) || fs::exists(dir / kHeaderCopiesManifest, ec)) {
    refuse(model_dir);
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".safetensors") refuse(e.path().string());
  }
  return std::nullopt;
}

std::vector<std::string> read_index_shard_names(const std::string& index_path) { refuse(index_path); }

}  // namespace gpubudget
