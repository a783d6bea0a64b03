// The shape of the overhead estimate: what grows with what, and when each term is charged.
#include "gpubudget/overheads.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace gpubudget {
namespace {

OverheadEstimate estimate(const std::string& id, std::int64_t tp, std::int64_t pp_rank, std::int64_t pp,
                          const std::string& gpu, const std::string& version, SchedulerLimits limits,
                          bool eager = false) {
  const ModelSpec m = test::bundled(id);
  Deployment d;
  d.tensor_parallel_size = tp;
  d.pipeline_parallel_size = pp;
  return estimate_overheads(m, make_parallel_layout(m, d, pp_rank), load_gpu_preset(gpu, test::configs()),
                            load_vllm_profile(version, test::configs()), limits, eager);
}

TEST(Overheads, SamplerIsCoefficientTimesRowsTimesVocab) {
  const SchedulerLimits limits{8192, 1024, true};
  const auto o = estimate("nvidia/Kimi-K2.5-NVFP4", 8, 0, 1, "rtx-pro-6000", "0.15", limits);
  // The profile's bytes per logit (calibrated), 1024 rows (min(T, S)), vocabulary 163,840. The
  // sort-based top-k/top-p of vLLM <= 0.16 costs more than twice the Triton kernel of 0.17.
  const double old_coefficient = load_vllm_profile("0.15", test::configs()).overheads.sampler_bytes_per_logit;
  const double new_coefficient = load_vllm_profile("0.17", test::configs()).overheads.sampler_bytes_per_logit;
  EXPECT_GT(old_coefficient, 2 * new_coefficient);
  EXPECT_NEAR(static_cast<double>(o.sampler.count()), old_coefficient * 1024 * 163840, 1.0);
  const auto newer = estimate("nvidia/Kimi-K2.5-NVFP4", 8, 0, 1, "rtx-pro-6000", "0.17", limits);
  EXPECT_NEAR(static_cast<double>(newer.sampler.count()), new_coefficient * 1024 * 163840, 1.0);
  // Fewer sequences, fewer sampler rows.
  const auto few = estimate("nvidia/Kimi-K2.5-NVFP4", 8, 0, 1, "rtx-pro-6000", "0.17", {8192, 256, false});
  EXPECT_NEAR(static_cast<double>(few.sampler.count()), new_coefficient * 256 * 163840, 1.0);
  EXPECT_EQ(o.activation_peak, std::max(o.sampler, o.forward));
}

TEST(Overheads, ForwardGrowsWithBatchedTokens) {
  const auto small = estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.19", {2048, 256, false});
  const auto large = estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.19", {8192, 256, false});
  EXPECT_EQ(large.forward.count(), 4 * small.forward.count());
  // Llama-3.1-8B: widest activation = gate/up 2 x 14336 + activated 14336 = 43008 elements of 2 bytes.
  EXPECT_NEAR(static_cast<double>(small.forward.count()), 1.5 * 2048 * 43008 * 2, 1.0);
}

TEST(Overheads, SamplerOnlyOnTheLastPipelineStage) {
  const SchedulerLimits limits{8192, 1024, true};
  EXPECT_EQ(estimate("meta-llama/Llama-3.1-70B", 4, 0, 2, "h100", "0.19", limits).sampler, Bytes(0));
  EXPECT_GT(estimate("meta-llama/Llama-3.1-70B", 4, 1, 2, "h100", "0.19", limits).sampler, Bytes(0));
}

TEST(Overheads, NonTorchByGpuCountAndInterconnect) {
  const SchedulerLimits limits{8192, 1024, true};
  const auto one = estimate("meta-llama/Llama-3.1-70B", 1, 0, 1, "h100", "0.19", limits);
  const auto nvlink = estimate("meta-llama/Llama-3.1-70B", 4, 0, 1, "h100", "0.19", limits);
  const auto pcie = estimate("meta-llama/Llama-3.1-70B", 4, 0, 1, "rtx-pro-6000", "0.19", limits);
  EXPECT_LT(one.non_torch, nvlink.non_torch);
  EXPECT_EQ(pcie.non_torch, one.non_torch);
}

TEST(Overheads, CudaGraphsChargedFrom021AndNeverWhenEager) {
  const SchedulerLimits limits{8192, 1024, true};
  EXPECT_FALSE(estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.19", limits).cudagraph_charged);
  const auto charged = estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.21", limits);
  EXPECT_TRUE(charged.cudagraph_charged);
  EXPECT_GT(charged.cudagraph, Bytes(0));
  const auto eager = estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.21", limits, true);
  EXPECT_FALSE(eager.cudagraph_charged);
  EXPECT_EQ(eager.cudagraph, Bytes(0));
}

}  // namespace
}  // namespace gpubudget
