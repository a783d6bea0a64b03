// Fuzzes the safetensors header parser. Input: 8 little-endian bytes giving the data-section size
// the header must describe, then the header JSON.
// Differential check: the parser reads JSON with simdjson; a header it accepts must be JSON by
// nlohmann's parser too, or the run aborts.
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "gpubudget/error.h"
#include "gpubudget/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t data_bytes = 0;
  for (int i = 7; i >= 0; --i) data_bytes = (data_bytes << 8) | data[i];
  const std::string_view header(reinterpret_cast<const char*>(data + 8), size - 8);
  try {
    const auto file = gpubudget::parse_safetensors_header(header, static_cast<std::int64_t>(data_bytes >> 1),
                                                          "fuzz.safetensors");
    (void)file.tensors.size();
    if (!nlohmann::json::accept(header)) std::abort();  // accepted text that is not JSON
  } catch (const gpubudget::InputError&) {
  }
  return 0;
}
