// Links the installed library and computes the Llama-3.1-8B KV bytes per token on one H100:
// 32 layers x 2 (K and V) x 8 KV heads x 128 x 2 bytes = 131072.
#include <cstdio>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/version.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const gpubudget::ConfigDir configs{argv[1]};
  const auto model = gpubudget::load_model("meta-llama/Llama-3.1-8B", configs);
  const auto gpu = gpubudget::load_gpu_preset("h100", configs);
  const auto profile = gpubudget::load_vllm_profile("", configs);
  const auto result = gpubudget::fit(model, gpu, gpubudget::Deployment{}, profile);
  const auto per_token = result.binding_worker().kv.bytes_per_token();
  std::printf("gpubudget %s: %lld bytes per token\n", gpubudget::kVersion, static_cast<long long>(per_token));
  return per_token == 131072 ? 0 : 1;
}
