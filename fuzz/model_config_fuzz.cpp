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

gpubudget::VllmProfile fuzz_profile() {
  gpubudget::VllmProfile p;
  p.version = "fuzz";
  p.batch_defaults.push_back({});
  p.batch_defaults.back().max_num_batched_tokens = 8192;
  p.batch_defaults.back().max_num_seqs = 1024;
  p.batch_defaults.back().llm_class_max_num_batched_tokens = 16384;
  p.batch_defaults.back().llm_class_max_num_seqs = 1024;
  p.overheads.sampler_bytes_per_logit = 15.2;
  p.overheads.forward_activation_factor = 1.45;
  return p;
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
  static const gpubudget::VllmProfile profile = fuzz_profile();
  for (const std::int64_t tp : {1, 2, 8}) {
    gpubudget::Deployment d;
    d.tensor_parallel_size = tp;
    try {
      (void)gpubudget::fit(model, gpu, d, profile);
    } catch (const gpubudget::InputError&) {
    }
  }
  return 0;
}
