// sweep: one row per combination; plan: the smallest deployments, checked against fit() directly.
#include <gtest/gtest.h>

#include "gpubudget/plan.h"
#include "gpubudget/sweep.h"
#include "test_support.h"

namespace gpubudget {
namespace {

TEST(Sweep, IncidentWhatIfsAreEightRowsMatchingSingleFits) {
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const auto profile = load_vllm_profile("", test::configs());
  SweepAxes axes;
  axes.gpus = {load_gpu_preset("rtx-pro-6000", test::configs())};
  axes.tensor_parallel = {8};
  axes.decode_context_parallel = {1, 8};
  axes.kv_cache_dtypes = {"bfloat16", "fp8"};
  axes.utilizations = {0.9, 0.95};
  const auto rows = run_sweep(m, axes, Deployment{}, profile, 262144);
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) {
    ASSERT_TRUE(row.valid) << row.error;
    // Each row is exactly what `fit` says for that deployment alone.
    const FitResult single = fit(m, axes.gpus.front(), row.deployment, profile);
    EXPECT_EQ(row.max_model_len, single.max_model_len);
    EXPECT_EQ(row.kv_cache_tokens, single.kv_cache_tokens);
  }
  // Last axis fastest: row 0 is dcp1 bf16 0.90, row 1 dcp1 bf16 0.95; DCP 8 holds 8x the tokens.
  EXPECT_EQ(*rows[0].deployment.gpu_memory_utilization, 0.9);
  EXPECT_EQ(*rows[1].deployment.gpu_memory_utilization, 0.95);
  EXPECT_EQ(rows[4].deployment.decode_context_parallel_size, 8);
  EXPECT_LT(rows[0].max_model_len, 262144);
  EXPECT_EQ(rows[4].max_model_len, 262144);
}

TEST(Sweep, RefusedCombinationsAreRowsWithTheReason) {
  SweepAxes axes;
  axes.gpus = {load_gpu_preset("h100", test::configs())};
  axes.tensor_parallel = {3, 8};
  const auto rows = run_sweep(test::bundled("meta-llama/Llama-3.1-70B"), axes, Deployment{},
                              load_vllm_profile("", test::configs()), 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].valid);
  EXPECT_NE(rows[0].error.find("not divisible by --tensor-parallel-size 3"), std::string::npos) << rows[0].error;
  EXPECT_TRUE(rows[1].valid);
}

TEST(Plan, KimiEightRequestsOf262kOnThreeGpus) {
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const auto profile = load_vllm_profile("", test::configs());
  std::vector<GpuSpec> gpus;
  for (const char* name : {"rtx-pro-6000", "h200", "b200"}) gpus.push_back(load_gpu_preset(name, test::configs()));
  PlanRequest request;
  request.max_model_len = 262144;
  request.concurrency = 8;
  const auto answers = plan_deployments(m, gpus, Deployment{}, profile, request);
  ASSERT_EQ(answers.size(), 3u);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const PlanAnswer& a = answers[i];
    ASSERT_TRUE(a.found) << a.gpu << ": " << a.why_not;
    if (i > 0) {
      EXPECT_LE(answers[i - 1].gpus, a.gpus);  // cheapest first
    }
    const GpuSpec& gpu = load_gpu_preset(a.gpu, test::configs());
    // The answer holds 8 requests of 262,144 tokens, by fit() itself.
    Deployment d = a.deployment;
    const FitResult r = fit(m, gpu, d, profile);
    EXPECT_TRUE(r.fits) << a.gpu;
    EXPECT_GE(r.max_concurrency, 8.0) << a.gpu;
    // One GPU fewer in the same family (one pipeline stage fewer, or half the TP) does not.
    Deployment smaller = a.deployment;
    if (smaller.pipeline_parallel_size > 1) {
      smaller.pipeline_parallel_size -= 1;
    } else {
      smaller.tensor_parallel_size /= 2;
    }
    if (smaller.tensor_parallel_size >= 1) {
      EXPECT_FALSE(serves(m, gpu, smaller, profile, request)) << a.gpu;
    }
  }
}

}  // namespace
}  // namespace gpubudget
