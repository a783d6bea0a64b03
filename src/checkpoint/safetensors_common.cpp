// What the safetensors reader (safetensors.cpp) and the web build's stand-in
// (platform/safetensors_unavailable.cpp) share: dtype sizes and checkpoint totals.
#include <cstdint>
#include <optional>
#include <string_view>

#include "gpubudget/safetensors.h"

namespace gpubudget {

std::optional<std::int64_t> safetensors_dtype_bytes(std::string_view dtype) {
  struct Known {
    std::string_view name;
    std::int64_t bytes;
  };
  static constexpr Known kKnown[] = {
      {"BF16", 2}, {"F8_E4M3", 1}, {"U8", 1},      {"F32", 4},  {"F16", 2}, {"I32", 4},
      {"I8", 1},   {"F8_E5M2", 1}, {"F8_E8M0", 1}, {"BOOL", 1}, {"I16", 2}, {"U16", 2},
      {"U32", 4},  {"I64", 8},     {"U64", 8},     {"F64", 8},  {"C64", 8}};
  for (const Known& k : kKnown) {
    if (k.name == dtype) return k.bytes;
  }
  return std::nullopt;
}

Bytes CheckpointHeaders::tensor_bytes() const {
  Bytes total;
  for (const auto& f : files) {
    for (const auto& t : f.tensors) total += t.bytes();
  }
  return total;
}

std::int64_t CheckpointHeaders::tensor_count() const {
  std::int64_t total = 0;
  for (const auto& f : files) total += static_cast<std::int64_t>(f.tensors.size());
  return total;
}

std::string canonical_module_name(std::string_view name) {
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const std::string_view prefix : {"model.", "language_model."}) {
      if (name.substr(0, prefix.size()) == prefix) {
        name.remove_prefix(prefix.size());
        stripped = true;
      }
    }
  }
  return std::string(name);
}

}  // namespace gpubudget
