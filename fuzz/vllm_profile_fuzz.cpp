// Fuzzes `fit --profile FILE`: input = a profile's text. A profile either yields a clean InputError or
// one that fit() runs with for a dense and an MLA model; never a crash, an overflow or another exception.
#include <string>

#include "fuzz_target.h"
#include "engine/profile_reader.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/load.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpubudget::ConfigDir configs{GPUBUDGET_FUZZ_CONFIG_DIR};
  static const gpubudget::ModelSpec llama = gpubudget::load_model("meta-llama/Llama-3.1-8B", configs);
  static const gpubudget::ModelSpec kimi = gpubudget::load_model("nvidia/Kimi-K2.5-NVFP4", configs);
  static const gpubudget::GpuSpec gpu = gpubudget::load_gpu_preset("h100", configs);
  try {
    const gpubudget::VllmProfile profile =
        gpubudget::detail::parse_vllm_profile(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    gpubudget::Deployment d;
    (void)gpubudget::fit(llama, gpu, d, profile);
    d.tensor_parallel_size = 8;
    (void)gpubudget::fit(kimi, gpu, d, profile);
  } catch (const gpubudget::InputError&) {
  }
  return 0;
}
