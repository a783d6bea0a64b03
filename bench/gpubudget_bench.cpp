// Google Benchmark measurements behind the speed figures in bench/README.md (not tests).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/safetensors.h"
#include "gpubudget/sweep.h"
#include "safetensors_writer.h"

namespace {

using namespace gpubudget;

const ConfigDir& configs() {
  static const ConfigDir dir{GPUBUDGET_BENCH_CONFIG_DIR};
  return dir;
}

Deployment incident() {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  d.gpu_memory_utilization = 0.9;
  return d;
}

// In-process fit of the incident (the model, GPU and profile already loaded).
void BM_FitKimiIncident(benchmark::State& state) {
  const ModelSpec model = load_model("nvidia/Kimi-K2.5-NVFP4", configs());
  const GpuSpec gpu = load_gpu_preset("rtx-pro-6000", configs());
  const VllmProfile profile = load_vllm_profile("0.15", configs());
  const Deployment d = incident();
  for (auto _ : state) benchmark::DoNotOptimize(fit(model, gpu, d, profile).max_model_len);
}
BENCHMARK(BM_FitKimiIncident)->Unit(benchmark::kMicrosecond);

// Sweep throughput: scenarios (rows) per second over 2 GPUs x 4 TP x 4 DCP x 2 KV dtypes x 3 utilizations.
void BM_SweepKimi(benchmark::State& state) {
  const ModelSpec model = load_model("nvidia/Kimi-K2.5-NVFP4", configs());
  const VllmProfile profile = load_vllm_profile("0.15", configs());
  SweepAxes axes;
  axes.gpus = {load_gpu_preset("rtx-pro-6000", configs()), load_gpu_preset("h200", configs())};
  axes.tensor_parallel = {1, 2, 4, 8};
  axes.decode_context_parallel = {1, 2, 4, 8};
  axes.kv_cache_dtypes = {KvCacheDtypeChoice::kBFloat16, KvCacheDtypeChoice::kFp8};
  axes.utilizations = {0.85, 0.9, 0.95};
  std::size_t rows = 0;
  for (auto _ : state) {
    const auto result = run_sweep(model, axes, Deployment{}, profile, 262144);
    rows += result.size();
    benchmark::DoNotOptimize(result.data());
  }
  state.counters["scenarios_per_s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepKimi)->Unit(benchmark::kMillisecond);

// Loading a bundled config.json (and its hf_quant_config.json) into a ModelSpec.
void BM_LoadKimiConfig(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(load_model("nvidia/Kimi-K2.5-NVFP4", configs()).layers.size());
}
BENCHMARK(BM_LoadKimiConfig)->Unit(benchmark::kMicrosecond);

// Reading the headers of a 119-shard checkpoint with Kimi-K2.5's tensor count (61 layers x 384 experts x
// 3 projections x 4 NVFP4 tensors = 281,088 tensors), tensors shrunk to 16 bytes so the files stay small;
// written as save_pretrained writes them (tests/fixtures/safetensors_writer.h). The folder is kept
// between runs; its name changes with the fixture's layout.
void BM_HeaderScan119Shards(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() / "gpubudget-bench-119-shards-v2";
  if (!std::filesystem::exists(dir / "model.safetensors.index.json")) {
    std::filesystem::create_directories(dir);
    std::vector<test::FixtureTensor> tensors;
    for (int layer = 0; layer < 61; ++layer) {
      for (int expert = 0; expert < 384; ++expert) {
        for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
          for (const char* part : {"weight", "weight_scale", "weight_scale_2", "input_scale"}) {
            tensors.push_back({"language_model.model.layers." + std::to_string(layer) + ".mlp.experts." +
                                   std::to_string(expert) + "." + proj + "." + part,
                               "U8",
                               {4, 4}});
          }
        }
      }
    }
    test::write_sharded_checkpoint(dir, tensors, 119);
  }
  std::int64_t count = 0;
  for (auto _ : state) {
    const auto headers = read_checkpoint_headers(dir.string());
    count = headers->tensor_count();
    benchmark::DoNotOptimize(count);
  }
  state.counters["tensors"] = static_cast<double>(count);
}
BENCHMARK(BM_HeaderScan119Shards)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
