// The CUDA graphs vLLM captures (src/memory/cuda_graph_choice.cpp): capture sizes per version, the speculative
// rounding, the graphs per mode, and the graph estimate scaled by their count. The counts are checked
// against vLLM's own startup lines ("Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35
// (largest=256)" for the default capture with max_num_seqs 256; "PIECEWISE=15 (largest=112), FULL=8
// (largest=56)" with 6 speculative tokens and max_num_seqs 8) and worked from VllmConfig._set_cudagraph_sizes
// and CompilationConfig.adjust_cudagraph_sizes_for_spec_decode.
#include <cmath>

#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "memory/cuda_graph_choice.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using detail::cuda_graph_choice;

VllmProfile profile(const std::string& version) { return load_vllm_profile(version, test::configs()); }

SchedulerLimits limits(std::int64_t seqs, std::int64_t tokens) {
  SchedulerLimits l;
  l.max_num_seqs = seqs;
  l.max_num_batched_tokens = tokens;
  l.max_model_len = 8192;
  return l;
}

// 0.11.1+: [1, 2, 4] + range(8, 256, 8) (31 sizes) + range(256, 513, 16) (17) = 51 piecewise graphs;
// full decode graphs for the sizes up to max_num_seqs 256: 3 + 31 + 1 = 35.
TEST(CudaGraphs, DefaultCaptureMatchesVllmsProfilingLine) {
  const auto g = cuda_graph_choice(Deployment{}, profile("0.22"), limits(256, 8192), 0);
  ASSERT_TRUE(g.captured);
  EXPECT_EQ(g.piecewise_graphs, 51);
  EXPECT_EQ(g.capture_sizes.back(), 512);
  EXPECT_EQ(g.full_graphs, 35);
  EXPECT_EQ(g.extra_graphs(), 50 + 34);
  // max_num_seqs 1024 (>= 70 GiB GPUs): every size is a decode size, the calibrated reference.
  EXPECT_EQ(cuda_graph_choice(Deployment{}, profile("0.22"), limits(1024, 8192), 0).extra_graphs(),
            kReferenceExtraCudaGraphs);
}

// 0.11.0 strides by 8 to the largest: [1, 2, 4] + range(8, 513, 8) = 3 + 64 = 67 sizes.
TEST(CudaGraphs, Version011StridesBy8) {
  const auto g = cuda_graph_choice(Deployment{}, profile("0.11"), limits(256, 8192), 0);
  EXPECT_EQ(g.piecewise_graphs, 67);
  EXPECT_EQ(g.capture_sizes.back(), 512);
}

// k = 6, S = 8: largest min(2 x 8 x 7, 512) = 112; [1, 2, 4] + 8..112 by 8 = 17 sizes, rounded up to
// multiples of 7: 7, 14, 21, 28, 35, 42, 49, 56, 70, 77, 84, 91, 98, 105, 112 = 15 (largest 112); the
// full decode graphs are those from 7 to 7 x 8 = 56: 8 (largest 56).
TEST(CudaGraphs, SpeculativeTokensRoundTheSizes) {
  const auto g = cuda_graph_choice(Deployment{}, profile("0.22"), limits(8, 8192), 6);
  EXPECT_EQ(g.piecewise_graphs, 15);
  EXPECT_EQ(g.capture_sizes.back(), 112);
  EXPECT_EQ(g.full_graphs, 8);
}

// max_num_batched_tokens 300 caps the largest size; the grid stops at 288, and from 0.21 (#40734) 300
// itself is captured: 3 + 31 + 3 (256, 272, 288) = 37 sizes, 38 with it.
TEST(CudaGraphs, MaxNumBatchedTokensCapturedFrom021) {
  EXPECT_EQ(cuda_graph_choice(Deployment{}, profile("0.20"), limits(256, 300), 0).piecewise_graphs, 37);
  const auto g = cuda_graph_choice(Deployment{}, profile("0.21"), limits(256, 300), 0);
  EXPECT_EQ(g.piecewise_graphs, 38);
  EXPECT_EQ(g.capture_sizes.back(), 300);
}

TEST(CudaGraphs, ExplicitSizesAndModes) {
  Deployment d;
  d.cudagraph_capture_sizes = {8, 1, 4, 2, 8, 16000};  // deduplicated; 16000 > 8192 tokens is dropped
  auto g = cuda_graph_choice(d, profile("0.22"), limits(256, 8192), 0);
  EXPECT_EQ(g.capture_sizes, (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(g.piecewise_graphs, 4);
  EXPECT_EQ(g.full_graphs, 4);
  ASSERT_TRUE(g.caveat);
  EXPECT_EQ(g.caveat->code, NoticeCode::kCudaGraphsExtrapolated);
  d.cudagraph_mode = "PIECEWISE";
  g = cuda_graph_choice(d, profile("0.22"), limits(256, 8192), 0);
  EXPECT_EQ(g.full_graphs, 0);
  d.cudagraph_mode = "FULL_DECODE_ONLY";
  g = cuda_graph_choice(d, profile("0.22"), limits(2, 8192), 0);
  EXPECT_EQ(g.piecewise_graphs, 0);
  EXPECT_EQ(g.full_graphs, 2);  // 1 and 2 <= max_num_seqs 2
  // A largest size that is not the list's largest is vLLM's ValueError.
  d.cudagraph_mode.clear();
  d.max_cudagraph_capture_size = 16;
  test::expect_input_error([&] { (void)cuda_graph_choice(d, profile("0.22"), limits(256, 8192), 0); },
                           "should be consistent");
  // Off the grid, the largest size is truncated to it: 42 -> [1, 2, 4, 8, ..., 40] = 8 sizes.
  d.cudagraph_capture_sizes.clear();
  d.max_cudagraph_capture_size = 42;
  g = cuda_graph_choice(d, profile("0.22"), limits(256, 8192), 0);
  EXPECT_EQ(g.capture_sizes.back(), 40);
  EXPECT_EQ(g.piecewise_graphs, 8);
  d.max_cudagraph_capture_size = 0;
  test::expect_input_error([&] { (void)cuda_graph_choice(d, profile("0.22"), limits(256, 8192), 0); }, "outside 1..");
}

// The estimate: base + per-layer x layers x extra graphs / 100. Qwen3-32B (64 layers) on an H100 at 0.22
// with --max-cudagraph-capture-size 8: sizes 1, 2, 4, 8, so 3 + 3 extra graphs against the calibrated 100.
TEST(CudaGraphs, EstimateScalesWithTheGraphCount) {
  const ModelSpec m = test::bundled("Qwen/Qwen3-32B");
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  const VllmProfile p = profile("0.22");
  Deployment d;
  d.max_model_len = 8192;
  d.max_num_seqs = 1024;
  const FitResult full = fit(m, h100, d, p);
  const Bytes base = p.overheads.cudagraph_base;
  const Bytes per_layer = p.overheads.cudagraph_per_layer;
  EXPECT_EQ(full.binding_worker().overheads.cudagraph.count(), (base + per_layer * 64).count());
  EXPECT_EQ(full.cuda_graphs_piecewise, 51);
  EXPECT_EQ(full.cuda_graphs_full, 51);
  d.max_cudagraph_capture_size = 8;
  const FitResult few = fit(m, h100, d, p);
  EXPECT_EQ(few.cuda_graphs_piecewise, 4);
  EXPECT_EQ(few.binding_worker().overheads.cudagraph.count(),
            base.count() + static_cast<std::int64_t>(std::llround(static_cast<double>(per_layer.count()) * 64 * 6 / 100)));
  // Charged from 0.20, so the KV budget gains exactly the difference.
  EXPECT_EQ((few.binding_worker().kv_cache - full.binding_worker().kv_cache).count(),
            (full.binding_worker().overheads.cudagraph - few.binding_worker().overheads.cudagraph).count());
  d.enforce_eager = true;
  EXPECT_EQ(fit(m, h100, d, p).cuda_graphs_piecewise, 0);
}

}  // namespace
}  // namespace gpubudget
