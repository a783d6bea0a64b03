// Fuzzes the generic path (src/model/generic.cpp): an input is a config.json, a NUL byte, then one
// safetensors header (its data section as long as the header's largest end offset). A config of an
// unknown architecture with such a checkpoint either yields a clean InputError or numbers, on a few
// deployments (never a crash, overflow or other exception).
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/safetensors.h"

namespace {


// The data-section length the header claims: its largest end offset (0 when it names none).
std::int64_t claimed_data_bytes(const std::string& header) {
  const auto j = nlohmann::json::parse(header, nullptr, false);
  std::int64_t end = 0;
  if (!j.is_object()) return 0;
  for (const auto& [name, t] : j.items()) {
    if (!t.is_object() || !t.contains("data_offsets") || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2 ||
        !t["data_offsets"][1].is_number_integer()) {
      continue;
    }
    end = std::max(end, t["data_offsets"][1].get<std::int64_t>());
  }
  return end;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto nul = input.find('\0');
  if (nul == std::string::npos) return 0;
  const std::string config = input.substr(0, nul);
  const std::string header = input.substr(nul + 1);
  gpubudget::ModelSpec model;
  try {
    gpubudget::CheckpointHeaders headers;
    headers.files.push_back(gpubudget::parse_safetensors_header(header, claimed_data_bytes(header), "fuzz/model.safetensors"));
    model = gpubudget::parse_model_config(config, "", "fuzz/config.json", headers);
  } catch (const gpubudget::InputError&) {
    return 0;
  }
  static const gpubudget::GpuSpec gpu = gpubudget::custom_gpu(gpubudget::Bytes(80LL << 30));
  static const gpubudget::VllmProfile profile = gpubudget::fuzz::minimal_profile();
  gpubudget::fuzz::fit_at_a_few_tps(model, gpu, profile);
  return 0;
}
