// The shape of the overhead estimate: what grows with what, and when each term is charged.
#include "gpubudget/overheads.h"

#include "gpubudget/served_model.h"

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

// Qwen2.5-VL-7B (qwen2_vl.py Qwen2VLProcessingInfo, reused by qwen2_5_vl.py): the largest image is
// 12,845,056 // 28^2 = 16,384 tokens (128 x 128 merged tokens); the dummy video is that image over the
// most frames, at most 14, whose tokens fit max_model_len: 14 frames = 7 temporal patches = 114,688
// tokens at 128,000, more than the image, so the profile runs one video (a tie also goes to video).
// ViT d 1280, I 3420 gated: MLP 2*1280 + 3*3420 = 12,820 > attention 8*1280 elements per patch;
// 3*2*14*14 = 1176 pixel values per patch; outputs of out_hidden_size 3584.
TEST(Overheads, Qwen25VlProfilesTheDummyVideo) {
  const auto at = [](std::int64_t max_model_len) {
    return estimate("Qwen/Qwen2.5-VL-7B-Instruct", 1, 0, 1, "h100", "0.19", {8192, 1024, false, max_model_len});
  };
  const auto o = at(128000);
  EXPECT_TRUE(o.encoder.video);
  EXPECT_EQ(o.encoder.items, 1);
  EXPECT_EQ(o.encoder.tokens, 114688);
  EXPECT_EQ(o.encoder.patches, 458752);
  EXPECT_EQ(o.encoder.pass, Bytes(458752LL * 12820 * 2 + 458752LL * 1176 * 6 + 114688LL * 3584 * 2));
  // 32,768: 4 frames (2 temporal patches, 32,768 tokens; 5 frames pad to 6 = 49,152 > 32,768).
  EXPECT_EQ(at(32768).encoder.tokens, 32768);
  // 8192: one frame (padded to one temporal patch), 16,384 tokens even though it exceeds the length.
  EXPECT_EQ(at(8192).encoder.tokens, 16384);
  EXPECT_TRUE(at(8192).encoder.video);
}

TEST(Overheads, Qwen2VlLargestImageFromMaxPixels) {
  EXPECT_EQ(qwen2_vl_largest_image_tokens(12845056, 28), 16384);  // 128 x 128
  EXPECT_EQ(qwen2_vl_largest_image_tokens(1003520, 28), 1280);    // 32 x 40
  // 401 merged tokens: 401 is prime, 1 x 401 exceeds the aspect ratio 200, so 400 = 20 x 20.
  EXPECT_EQ(qwen2_vl_largest_image_tokens(28 * 28 * 401, 28), 400);
  EXPECT_EQ(qwen2_vl_largest_image_tokens(28 * 28 * 2 + 5, 28), 2);  // 1 x 2
}

// --mm-processor-kwargs max_pixels 1,003,520 and --limit-mm-per-prompt {"video": 0}: the profile runs
// images of 1280 tokens only, 8192 // 1280 = 6 of them (7680 tokens, 30,720 patches).
TEST(Overheads, Qwen25VlImagesOnlyAtTheProcessorsMaxPixels) {
  Deployment d;
  d.mm_max_pixels = 1003520;
  d.disabled_modalities = {"video"};
  const ModelSpec m = model_as_served(test::bundled("Qwen/Qwen2.5-VL-7B-Instruct"), d);
  const auto o = estimate_encoder_profile(m, make_parallel_layout(m, d, 0), {8192, 1024, false, 128000});
  EXPECT_FALSE(o.video);
  EXPECT_EQ(o.items, 6);
  EXPECT_EQ(o.tokens, 7680);
  EXPECT_EQ(o.pass, Bytes(30720LL * 12820 * 2 + 30720LL * 1176 * 6 + 7680LL * 3584 * 2));
  // With the video allowed: 14 frames of that image, 7 x 1280 = 8960 tokens, one video.
  d.disabled_modalities.clear();
  const ModelSpec with_video = model_as_served(test::bundled("Qwen/Qwen2.5-VL-7B-Instruct"), d);
  const auto v = estimate_encoder_profile(with_video, make_parallel_layout(with_video, d, 0), {8192, 1024, false, 128000});
  EXPECT_TRUE(v.video);
  EXPECT_EQ(v.items, 1);
  EXPECT_EQ(v.tokens, 8960);
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
  EXPECT_LT(pcie.non_torch, nvlink.non_torch);  // custom all-reduce off on PCIe
  // Pipeline stages without tensor parallelism hold no all-reduce buffers: observations vo-067/068
  // (TP 1, PP 2 and 4, vLLM 0.19) log 0.07 GiB, below the single-GPU class.
  EXPECT_EQ(estimate("meta-llama/Llama-3.1-70B", 1, 0, 2, "h100", "0.19", limits).non_torch, one.non_torch);
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
