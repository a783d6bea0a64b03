// The whole budget: requested memory, judged length, and the invariants of the solver.
#include "gpubudget/fit.h"

#include <cmath>

#include <algorithm>

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "test_support.h"

namespace gpubudget {
namespace {

struct Incident {
  ModelSpec model = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  GpuSpec gpu = load_gpu_preset("rtx-pro-6000", test::configs());
  VllmProfile profile = load_vllm_profile("0.15", test::configs());
  Deployment deployment() const {
    Deployment d;
    d.tensor_parallel_size = 8;
    d.gpu_memory_utilization = 0.9;
    return d;
  }
};

TEST(Fit, RequestedIsTheCeilingOfTotalTimesUtilization) {
  Incident in;
  const FitResult r = fit(in.model, in.gpu, in.deployment(), in.profile);
  // 101,972,967,424 B x 0.9 = 91,775,670,681.6 → 91,775,670,682.
  EXPECT_EQ(r.binding_worker().requested.count(), 91'775'670'682LL);
}

TEST(Fit, ExplanationsRestateTheIncidentsFiguresWithTheirInputs) {
  Incident in;
  Deployment d = in.deployment();
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  const FitResult r = fit(in.model, in.gpu, d, in.profile);
  const auto explanations = explain_fit(in.model, {in.gpu}, d, in.profile, r);
  const auto value_of = [&](const std::string& figure) {
    for (const auto& e : explanations) {
      if (e.figure == figure) return e.value;
    }
    return std::string("(missing)");
  };
  EXPECT_EQ(value_of("requested"), "91775670682 B = 85.47 GiB");
  EXPECT_EQ(value_of("kv_bytes_per_token"), "70272 B");           // 61 x (512 + 64) x 2
  EXPECT_EQ(value_of("needed"), "18421383168 B = 17.16 GiB");     // 16384 blocks x 18432 B x 61
  EXPECT_EQ(value_of("max_model_len"), std::to_string(r.max_model_len));
  EXPECT_EQ(value_of("num_blocks"), std::to_string(r.num_blocks));
}

TEST(Fit, IncidentBf16DoesNotFitTheDefaultContext) {
  Incident in;
  Deployment d = in.deployment();
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  const FitResult r = fit(in.model, in.gpu, d, in.profile);
  EXPECT_EQ(r.judged_max_model_len, 262144);
  EXPECT_EQ(r.needed.count(), 18'421'383'168LL);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.block_size, 16);  // TRITON_MLA, the only MLA backend on SM120
  EXPECT_EQ(r.attention_backend, "TRITON_MLA");
  // The answer is consistent with the budget: M fits, M + 1 does not.
  const WorkerBudget& w = r.binding_worker();
  EXPECT_LE(w.kv.needed(r.max_model_len), w.kv_cache);
  EXPECT_GT(w.kv.needed(r.max_model_len + 1), w.kv_cache);
  // vLLM before 0.21 reports "GPU KV cache size" as blocks x block size.
  EXPECT_EQ(r.kv_cache_tokens, r.num_blocks * 16);
  // The error vLLM 0.13-0.20 raises, with its estimate.
  EXPECT_EQ(r.vllm_error.rfind("To serve at least one request with the models's max seq len (262144), (17.16 GiB KV "
                               "cache is needed, which is larger than the available KV cache memory (",
                               0),
            0u)
      << r.vllm_error;
  EXPECT_NE(r.vllm_error.find("the estimated maximum model length is " + std::to_string(r.max_model_len) + ". Try"),
            std::string::npos);
}

TEST(Fit, NoMemoryLeftForTheKvCacheIsVllmsStartupError) {
  // Llama-3.1-70B bf16 (~131 GiB) on one 80 GB GPU: the weights alone exceed the budget.
  const FitResult r = fit(test::bundled("meta-llama/Llama-3.1-70B"), load_gpu_preset("h100", test::configs()),
                          Deployment{}, load_vllm_profile("0.22", test::configs()));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.max_model_len, 0);
  EXPECT_LT(r.binding_worker().kv_cache.count(), 0);
  EXPECT_EQ(r.vllm_error.rfind("No available memory for the cache blocks.", 0), 0u);
}

TEST(Fit, IncidentCheckpointFp8WouldFitButNoBackendTakesIt) {
  // vLLM 0.15 resolves the checkpoint's kv_cache_quant_algo FP8 to fp8_e4m3 (resolve_kv_cache_dtype_string,
  // 0.14+), and on SM120 the only MLA backend, TRITON_MLA, takes no fp8 cache before #34597 (0.18): the
  // KV memory check would pass, but vLLM does not start.
  Incident in;
  const FitResult r = fit(in.model, in.gpu, in.deployment(), in.profile);
  EXPECT_EQ(r.kv_cache_dtype.name, "fp8_e4m3");
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 35136);
  EXPECT_TRUE(r.kv_fits);
  EXPECT_FALSE(r.vllm_would_start);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.max_model_len, 262144);
  EXPECT_EQ(r.vllm_error, r.start_blocker);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings.front().code, NoticeCode::kWouldNotStart);
  EXPECT_NE(r.warnings.front().text.find("fp8_e4m3"), std::string::npos);
  // From vLLM 0.18 TRITON_MLA takes it, and the same deployment starts.
  const FitResult v18 = fit(in.model, in.gpu, in.deployment(), load_vllm_profile("0.18", test::configs()));
  EXPECT_TRUE(v18.vllm_would_start);
  EXPECT_EQ(v18.attention_backend, "TRITON_MLA");
  // Before vLLM 0.14 the checkpoint's declaration is not read: `auto` is the model dtype.
  const FitResult v13 = fit(in.model, in.gpu, in.deployment(), load_vllm_profile("0.13", test::configs()));
  EXPECT_EQ(v13.kv_cache_dtype.name, "bfloat16");
}

TEST(Fit, ExplicitKvCacheMemoryBypassesTheBudget) {
  Incident in;
  Deployment d = in.deployment();
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  d.kv_cache_memory = Bytes(18'421'383'168LL);
  const FitResult r = fit(in.model, in.gpu, d, in.profile);
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.max_model_len, 262144);
  d.kv_cache_memory = Bytes(18'421'383'167LL);
  EXPECT_FALSE(fit(in.model, in.gpu, d, in.profile).fits);
}

TEST(Fit, JudgedLengthAboveTheModelMaximumIsRefused) {
  Incident in;
  Deployment d = in.deployment();
  d.max_model_len = 262145;
  try {
    fit(in.model, in.gpu, d, in.profile);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("User-specified max_model_len (262145)"), std::string::npos);
  }
}

TEST(Fit, VersionDefaultsComeFromTheProfile) {
  Incident in;
  Deployment d = in.deployment();
  d.gpu_memory_utilization.reset();
  EXPECT_DOUBLE_EQ(fit(in.model, in.gpu, d, load_vllm_profile("0.15", test::configs())).gpu_memory_utilization, 0.9);
  EXPECT_DOUBLE_EQ(fit(in.model, in.gpu, d, load_vllm_profile("0.19", test::configs())).gpu_memory_utilization, 0.9);
  EXPECT_FALSE(fit(in.model, in.gpu, d, load_vllm_profile("0.19", test::configs())).binding_worker().overheads.cudagraph_charged);
  // #38284 (2026-04-21) is in v0.20.0: its stock image logs "CUDA graph memory profiling is enabled" with
  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS unset.
  const FitResult v020 = fit(in.model, in.gpu, d, load_vllm_profile("0.20", test::configs()));
  EXPECT_DOUBLE_EQ(v020.gpu_memory_utilization, 0.92);
  EXPECT_TRUE(v020.binding_worker().overheads.cudagraph_charged);
  const FitResult newest = fit(in.model, in.gpu, d, load_vllm_profile("0.21", test::configs()));
  EXPECT_DOUBLE_EQ(newest.gpu_memory_utilization, 0.92);
  EXPECT_TRUE(newest.binding_worker().overheads.cudagraph_charged);
  d.enforce_eager = true;
  EXPECT_EQ(fit(in.model, in.gpu, d, load_vllm_profile("0.21", test::configs())).binding_worker().overheads.cudagraph,
            Bytes(0));
}

// Versions users run that are no profile's own release: the nearest profile, and a note that says which
// (fit's warnings). The profiles shipped are 0.11, 0.11.1, 0.13 ... 0.22.
TEST(Fit, VersionsWithoutAProfileOfTheirOwnAreMatchedAndSaidSo) {
  const auto profile = [](const std::string& v) { return load_vllm_profile(v, test::configs()); };
  EXPECT_EQ(profile("0.13.0").version_note, "");
  EXPECT_EQ(profile("v0.15.1").version_note, "");
  EXPECT_EQ(profile("").version_note, "");
  const VllmProfile old = profile("0.10.2");
  EXPECT_EQ(old.version, "0.11");
  EXPECT_NE(old.version_note.find("older than every modelled version: the oldest profile (0.11)"), std::string::npos);
  const VllmProfile local = profile("0.0.0+local");
  EXPECT_EQ(local.version, profile("").version);
  EXPECT_NE(local.version_note.find("without a release number"), std::string::npos) << local.version_note;
  const VllmProfile nightly = profile("0.11.1rc2.dev45+g1234abc");
  EXPECT_EQ(nightly.version, "0.11.1");
  EXPECT_NE(nightly.version_note.find("pre-release or development build"), std::string::npos);
  const VllmProfile between = profile("0.12.0");
  EXPECT_EQ(between.version, "0.11.1");
  EXPECT_NE(between.version_note.find("no profile for vLLM 0.12: the 0.11.1 profile is used"), std::string::npos);
  const VllmProfile later = profile("9.1");
  EXPECT_EQ(later.version, profile("").version);
  EXPECT_NE(later.version_note.find("the newest; a later release may differ"), std::string::npos);
  test::expect_input_error([&] { (void)profile("latest"); }, "expected a version like");
  // fit() reports the note with its warnings.
  Incident in;
  const FitResult r = fit(in.model, in.gpu, in.deployment(), old);
  EXPECT_NE(std::find(r.warnings.begin(), r.warnings.end(), Notice{NoticeCode::kProfileNearest, old.version_note}),
            r.warnings.end());
}

TEST(Fit, BlockSizeFollowsTheBackendVllmWouldPick) {
  const ModelSpec ds = test::bundled("deepseek-ai/DeepSeek-V3");
  const GpuSpec h200 = load_gpu_preset("h200", test::configs());
  const GpuSpec b200 = load_gpu_preset("b200", test::configs());
  const VllmProfile newest = load_vllm_profile("0.21", test::configs());
  Deployment d;
  d.tensor_parallel_size = 8;
  // SM90: FLASH_ATTN_MLA (16) takes bf16 only; fp8 falls to FLASHMLA (64). SM100: FLASHINFER_MLA (32).
  EXPECT_EQ(fit(ds, h200, d, newest).block_size, 16);
  EXPECT_EQ(fit(ds, b200, d, newest).block_size, 32);
  d.kv_cache_dtype = KvCacheDtypeChoice::kFp8;
  EXPECT_EQ(fit(ds, h200, d, newest).block_size, 64);
  // vLLM 0.11 forced FlashMLA (64) on Hopper and CUTLASS MLA (128) on Blackwell.
  d.kv_cache_dtype = KvCacheDtypeChoice::kAuto;
  EXPECT_EQ(fit(ds, h200, d, load_vllm_profile("0.11", test::configs())).block_size, 64);
  EXPECT_EQ(fit(ds, b200, d, load_vllm_profile("0.11", test::configs())).block_size, 128);
  // --block-size wins.
  d.block_size = 256;
  EXPECT_EQ(fit(ds, h200, d, newest).block_size, 256);
}

TEST(FitProperties, MonotoneInMemoryUtilizationAndKvDtype) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  const VllmProfile p = load_vllm_profile("", test::configs());
  for (std::int64_t tp : {2, 4, 8}) {
    SCOPED_TRACE(tp);
    Deployment d;
    d.tensor_parallel_size = tp;
    std::int64_t previous = -1;
    for (int gib_total = 40; gib_total <= 200; gib_total += 8) {
      const FitResult r = fit(m, custom_gpu(gib(gib_total)), d, p);
      EXPECT_GE(r.max_model_len, previous);
      EXPECT_EQ(r.fits, r.max_model_len >= r.judged_max_model_len);
      previous = r.max_model_len;
    }
    std::int64_t by_util = -1;
    for (double util = 0.5; util <= 1.0; util += 0.05) {
      d.gpu_memory_utilization = util;
      const std::int64_t len = fit(m, load_gpu_preset("h100", test::configs()), d, p).max_model_len;
      EXPECT_GE(len, by_util);
      by_util = len;
    }
    d.gpu_memory_utilization = 0.9;
    d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
    const auto wide = fit(m, load_gpu_preset("a100-40gb", test::configs()), d, p).max_model_len;
    d.kv_cache_dtype = KvCacheDtypeChoice::kFp8;
    EXPECT_GE(fit(m, load_gpu_preset("a100-40gb", test::configs()), d, p).max_model_len, wide);
  }
}

TEST(FitProperties, PipelineStagesAreEachChecked) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  Deployment d;
  d.tensor_parallel_size = 2;
  d.pipeline_parallel_size = 3;  // 80 layers: [27, 27, 26]
  const FitResult r = fit(m, load_gpu_preset("h100", test::configs()), d, load_vllm_profile("", test::configs()));
  ASSERT_EQ(r.workers.size(), 3u);
  EXPECT_EQ(r.workers[0].end_layer - r.workers[0].first_layer, 27);
  EXPECT_EQ(r.workers[2].end_layer - r.workers[2].first_layer, 26);
  for (const auto& w : r.workers) EXPECT_GE(w.max_model_len, r.max_model_len);
  for (const auto& w : r.workers) EXPECT_GE(w.num_blocks, r.num_blocks);
}

}  // namespace
}  // namespace gpubudget
