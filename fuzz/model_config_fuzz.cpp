// Fuzzes config.json parsing and, for configs that parse, the whole fit on a few deployments: a
// config either yields a clean InputError or numbers (never a crash, overflow or other exception).
#include <string>

#include "fuzz_target.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/load.h"

namespace {

gpubudget::GpuSpec fuzz_gpu() {
  gpubudget::GpuSpec g = gpubudget::custom_gpu(gpubudget::Bytes(80LL << 30));
  g.compute_capability_major = 9;
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpubudget::ModelSpec model;
  try {
    model = gpubudget::parse_model_config(text, "", "fuzz/config.json");
  } catch (const gpubudget::InputError&) {
    return 0;
  }
  static const gpubudget::GpuSpec gpu = fuzz_gpu();
  static const gpubudget::VllmProfile profile = gpubudget::fuzz::minimal_profile();
  gpubudget::fuzz::fit_at_a_few_tps(model, gpu, profile);
  return 0;
}
