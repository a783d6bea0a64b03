// sweep: one row per combination; plan: the smallest deployments, checked against fit() directly.
#include <gtest/gtest.h>

#include "gpubudget/error.h"
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
  axes.kv_cache_dtypes = {KvCacheDtypeChoice::kBFloat16, KvCacheDtypeChoice::kFp8};
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

TEST(Sweep, RowsReusingWeightsAcrossSettingsEqualSingleFitsToTheByte) {
  // The sweep checks each layout and computes its weights once (FitMemo); every row must still be the single fit.
  const ModelSpec m = test::bundled("Qwen/Qwen3-30B-A3B");
  const auto profile = load_vllm_profile("", test::configs());
  SweepAxes axes;
  axes.gpus = {load_gpu_preset("h100", test::configs()), load_gpu_preset("l40s", test::configs())};
  axes.tensor_parallel = {1, 2, 4};
  axes.pipeline_parallel = {1, 2};
  axes.decode_context_parallel = {1, 2};
  axes.kv_cache_dtypes = {KvCacheDtypeChoice::kAuto, KvCacheDtypeChoice::kFp8};
  axes.utilizations = {0.8, 0.95};
  const auto rows = run_sweep(m, axes, Deployment{}, profile, 0);
  ASSERT_EQ(rows.size(), 2u * 3 * 2 * 2 * 2 * 2);
  std::size_t valid = 0;
  for (const auto& row : rows) {
    const GpuSpec& gpu = row.gpu == "h100" ? axes.gpus[0] : axes.gpus[1];
    if (!row.valid) {
      // A refused row carries the reason fit() gives for the same deployment.
      test::expect_input_error([&] { (void)fit(m, gpu, row.deployment, profile); }, row.error);
      continue;
    }
    ++valid;
    const FitResult single = fit(m, gpu, row.deployment, profile);
    EXPECT_EQ(row.weights_per_gpu, single.binding_worker().weights.total);
    EXPECT_EQ(row.kv_cache_per_gpu, single.binding_worker().kv_cache);
    EXPECT_EQ(row.max_model_len, single.max_model_len);
  }
  EXPECT_GE(valid, rows.size() / 2);
}

TEST(FitMemoTest, OneEntryPerLayoutAndTheSameAnswersAsWithoutIt) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-30B-A3B");
  FitMemo memo(m);
  Deployment d;
  d.tensor_parallel_size = 8;  // DCP over GQA needs TP above the 4 KV heads (vLLM >= 0.11.1)
  const ParallelLayout& tp8 = memo.layout(d, 0);
  EXPECT_EQ(tp8, make_parallel_layout(m, d, 0));
  d.kv_cache_dtype = KvCacheDtypeChoice::kFp8;  // not a layout setting: the same entry
  EXPECT_EQ(&memo.layout(d, 0), &tp8);
  d.decode_context_parallel_size = 2;
  const ParallelLayout& tp8_dcp2 = memo.layout(d, 0);
  EXPECT_NE(&tp8_dcp2, &tp8);
  EXPECT_EQ(tp8_dcp2.dcp, 2);
  const WeightsBreakdown& a = memo.weights(tp8);
  EXPECT_EQ(&memo.weights(tp8_dcp2), &a);  // DCP changes no weight
  EXPECT_EQ(a.total, weights_per_gpu(m, tp8).total);
  d = Deployment{};
  d.tensor_parallel_size = 4;
  EXPECT_EQ(memo.weights(memo.layout(d, 0)).total, weights_per_gpu(m, make_parallel_layout(m, d, 0)).total);
  EXPECT_NE(memo.weights(memo.layout(d, 0)).total, a.total);
}

TEST(FitMemoTest, ARefusedLayoutThrowsTheSameErrorEveryTime) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  FitMemo memo(m);
  Deployment d;
  d.tensor_parallel_size = 3;
  std::string first;
  try {
    (void)make_parallel_layout(m, d, 0);
  } catch (const InputError& e) {
    first = e.what();
  }
  ASSERT_FALSE(first.empty());
  for (int i = 0; i < 2; ++i) {
    try {
      (void)memo.layout(d, 0);
      ADD_FAILURE() << "TP 3 accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.what(), first);
    }
  }
}

TEST(FitMemoTest, FitIgnoresAMemoOfAnotherModelOrAConvertedDtype) {
  const ModelSpec qwen = test::bundled("Qwen/Qwen3-30B-A3B");
  const ModelSpec llama = test::bundled("meta-llama/Llama-3.1-70B");
  const auto profile = load_vllm_profile("", test::configs());
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  Deployment d;
  d.tensor_parallel_size = 4;
  FitMemo memo(llama);
  (void)memo.weights(memo.layout(d, 0));
  EXPECT_EQ(fit(qwen, {h100}, d, profile, &memo).binding_worker().weights.total,
            fit(qwen, h100, d, profile).binding_worker().weights.total);
  FitMemo own(qwen);
  d.dtype = ModelDtypeChoice::kFloat32;
  EXPECT_EQ(fit(qwen, {h100}, d, profile, &own).binding_worker().weights.total,
            fit(qwen, h100, d, profile).binding_worker().weights.total);
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
      // ... whatever its DCP (every size dividing the smaller TP; MLA's KV is on all its ranks).
      for (std::int64_t dcp = 1; dcp <= smaller.tensor_parallel_size; dcp *= 2) {
        smaller.decode_context_parallel_size = dcp;
        EXPECT_FALSE(serves(m, gpu, smaller, profile, request)) << a.gpu << " dcp " << dcp;
      }
    }
    // A plan's DCP is the smallest that serves: half of it does not.
    if (a.deployment.decode_context_parallel_size > 1) {
      Deployment less = a.deployment;
      less.decode_context_parallel_size /= 2;
      EXPECT_FALSE(serves(m, gpu, less, profile, request)) << a.gpu;
    }
  }
}

}  // namespace
}  // namespace gpubudget
