// A deployment tool built on the installed library (find_package(gpubudget)), through the one-include
// API. Usage: package_consumer CONFIG_DIR. Exits 0 when every figure is the one derived by hand:
//   Llama-3.1-8B on one H100: 32 layers x 2 (K and V) x 8 KV heads x 128 x 2 B = 131,072 B per token;
//   the incident (Kimi-K2.5-NVFP4, 8 x RTX PRO 6000, bf16 KV): one 262,144-token request needs
//   cdiv(262144, 16) x 16 x 61 layers x 576 x 2 B = 18,421,383,168 B per GPU, which does not fit at 0.9;
//   decode context parallel 8 divides that need by 8.
#include <cstdio>

#include "gpubudget/gpubudget.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const gpubudget::ConfigDir configs{argv[1]};
  try {
    const auto llama = gpubudget::load_model("meta-llama/Llama-3.1-8B", configs);
    const auto h100 = gpubudget::load_gpu_preset("h100", configs);
    const auto newest = gpubudget::load_vllm_profile("", configs);
    const auto per_token = gpubudget::fit(llama, h100, gpubudget::Deployment{}, newest).binding_worker().kv.bytes_per_token().count();

    const auto kimi = gpubudget::load_model("nvidia/Kimi-K2.5-NVFP4", configs);
    const auto rtx = gpubudget::load_gpu_preset("rtx-pro-6000", configs);
    const auto v015 = gpubudget::load_vllm_profile("0.15", configs);
    gpubudget::Deployment incident;
    incident.tensor_parallel_size = 8;
    incident.kv_cache_dtype = gpubudget::KvCacheDtypeChoice::kBFloat16;
    incident.gpu_memory_utilization = 0.9;
    const gpubudget::FitResult r = gpubudget::fit(kimi, rtx, incident, v015);

    gpubudget::SweepAxes axes;
    axes.gpus = {rtx};
    axes.tensor_parallel = {8};
    axes.decode_context_parallel = {1, 8};
    axes.kv_cache_dtypes = {gpubudget::KvCacheDtypeChoice::kBFloat16};
    axes.utilizations = {0.9};
    const auto rows = gpubudget::run_sweep(kimi, axes, gpubudget::Deployment{}, v015, 262144);

    std::printf("gpubudget %s: Llama-3.1-8B %lld B/token; incident needs %lld B, largest --max-model-len %lld; "
                "with -dcp 8: %lld\n",
                gpubudget::kVersion, static_cast<long long>(per_token), static_cast<long long>(r.needed.count()),
                static_cast<long long>(r.max_model_len), static_cast<long long>(rows.at(1).max_model_len));
    const bool ok = per_token == 131072 && r.needed.count() == 18421383168LL && !r.fits &&
                    rows.size() == 2 && rows[1].max_model_len == 262144;
    return ok ? 0 : 1;
  } catch (const gpubudget::Error& e) {
    std::fprintf(stderr, "package_consumer: %s\n", e.what());
    return 3;
  }
}
