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
  // Kimi-K2.5 is multimodal: its encoder outputs for 8192 tokens (2 images of 4096) stay cached
  // during the text run, 8192 x text hidden 7168 x 2 B.
  EXPECT_EQ(o.activation_peak, std::max(o.sampler, o.forward) + Bytes(8192LL * 7168 * 2));
}

TEST(Overheads, ForwardGrowsWithBatchedTokens) {
  const auto small = estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.19", {2048, 256, false});
  const auto large = estimate("meta-llama/Llama-3.1-8B", 1, 0, 1, "h100", "0.19", {8192, 256, false});
  EXPECT_NEAR(static_cast<double>(large.forward.count()), 4.0 * static_cast<double>(small.forward.count()), 4.0);
  // Llama-3.1-8B: widest activation = gate/up 2 x 14336 + activated 14336 = 43008 elements of 2 bytes.
  const double factor = load_vllm_profile("0.19", test::configs()).overheads.forward_activation_factor;
  EXPECT_NEAR(static_cast<double>(small.forward.count()), factor * 2048 * 43008 * 2, 1.0);
  EXPECT_EQ(small.encoder.pass, Bytes(0));  // no vision tower
}

// The multimodal encoder pass, by hand from the vision configs (docs/methodology.md §Multimodal
// encoder profiling): patches x max(attention 2d + 6d/tp, MLP 2d + 2I/tp) x 2 B, plus pixel values
// (fp32 + bf16 copy, 6 B each) and the outputs.
TEST(Overheads, EncoderPassOfQwen3VlOnOneGpu) {
  const auto o = estimate("Qwen/Qwen3-VL-30B-A3B-Instruct", 1, 0, 1, "a100-80gb", "0.11", {2048, 256, false});
  // One 16,777,216-pixel image: 16384 tokens of 32x32 pixels, 65536 patches of 16x16.
  EXPECT_EQ(o.encoder.items, 1);
  EXPECT_EQ(o.encoder.tokens, 16384);
  EXPECT_EQ(o.encoder.patches, 65536);
  const std::int64_t outputs = 16384LL * 2048 * (1 + 3) * 2;  // merger + 3 deepstack mergers, width 2048
  EXPECT_EQ(o.encoder.cached_outputs, Bytes(outputs));
  // d 1152, I 4304: MLP 2*1152 + 2*4304 = 10912 > attention 8*1152 = 9216; 1536 values per patch.
  EXPECT_EQ(o.encoder.pass, Bytes(65536LL * 10912 * 2 + 65536LL * 1536 * 6 + outputs));
  EXPECT_EQ(o.activation_peak, std::max(o.encoder.pass, std::max(o.sampler, o.forward) + Bytes(outputs)));
}

TEST(Overheads, EncoderPassFillsTheBudgetWithSmallImages) {
  // Gemma 3: 256 tokens per 896x896 image of 4096 patches; a budget of 8192 tokens holds 32 images.
  const auto o = estimate("google/gemma-3-4b-it", 1, 0, 1, "h100", "0.19", {8192, 1024, false});
  EXPECT_EQ(o.encoder.items, 32);
  EXPECT_EQ(o.encoder.patches, 32LL * 4096);
  // ... but never more images than sequences.
  EXPECT_EQ(estimate("google/gemma-3-4b-it", 1, 0, 1, "h100", "0.19", {8192, 4, false}).encoder.items, 4);
}

TEST(Overheads, EncoderPassIsShardedOverTensorParallel) {
  // Kimi-K2.5 MoonViT at TP8: 2 images of 16384 patches; MLP 2*1152 + 2*4304/8 = 3380 elements.
  const auto o = estimate("nvidia/Kimi-K2.5-NVFP4", 8, 0, 1, "rtx-pro-6000", "0.17", {8192, 1024, false});
  EXPECT_EQ(o.encoder.patches, 32768);
  EXPECT_EQ(o.encoder.pass, Bytes(32768LL * 3380 * 2 + 32768LL * 588 * 6 + 8192LL * 7168 * 2));
}

TEST(Overheads, EncoderPassOnlyOnTheFirstStageAndNotWhenSkipped) {
  const SchedulerLimits limits{8192, 1024, true};
  EXPECT_EQ(estimate("google/gemma-3-4b-it", 1, 1, 2, "h100", "0.19", limits).encoder.pass, Bytes(0));
  EXPECT_GT(estimate("google/gemma-3-4b-it", 1, 0, 2, "h100", "0.19", limits).encoder.pass, Bytes(0));
  const ModelSpec m = test::bundled("google/gemma-3-4b-it");
  const auto skipped = estimate_overheads(m, make_parallel_layout(m, Deployment{}, 0), load_gpu_preset("h100", test::configs()),
                                          load_vllm_profile("0.19", test::configs()), limits, false, false);
  EXPECT_EQ(skipped.encoder.pass, Bytes(0));
  EXPECT_EQ(skipped.activation_peak, std::max(skipped.sampler, skipped.forward));
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
