// Expert-parallel all-to-all backends (--all2all-backend) with data parallelism: the buffers vLLM's
// DeepEP managers allocate per GPU (vllm/distributed/device_communicators/all2all.py, main 2026-05) and
// DeepEP's own sizes (csrc/config.hpp LowLatencyLayout and deep_ep.cpp Buffer at 73b6ea4, the commit
// vLLM installs), worked by hand for DeepSeek-V3: hidden 7168, 256 routed experts.
#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "all2all_buffers.h"
#include "test_support.h"

namespace gpubudget {
namespace {

constexpr std::int64_t kMiB = 1 << 20;
// deep_ep.cpp: the NVLink buffer (VLLM_DEEPEP_BUFFER_SIZE_MB, 1024) with 8 x (int + 2 pointers) of
// barrier signals and peer pointers, and the 32 MiB workspace.
constexpr std::int64_t kNvlAndWorkspace = 1024 * kMiB + 8 * (4 + 8 + 8) + 32 * kMiB;

FitResult deepseek_v3(const std::string& backend, const std::string& version, std::int64_t dp,
                      std::optional<std::int64_t> batched_tokens = std::nullopt) {
  Deployment d;
  d.data_parallel_size = dp;
  d.enable_expert_parallel = true;
  d.max_model_len = 8192;
  d.max_num_batched_tokens = batched_tokens;
  d.all2all_backend = parse_all2all_backend(backend);
  return fit(test::bundled("deepseek-ai/DeepSeek-V3"), load_gpu_preset("b200", test::configs()), d,
             load_vllm_profile(version, test::configs()));
}

Bytes non_torch(const FitResult& r) { return r.binding_worker().overheads.non_torch; }

// LowLatencyLayout for T tokens per dispatch, hidden 7168 (its own size in SUPPORTED_HIDDEN_SIZES),
// 256 experts: dispatch message 16 + max(2 x 7168, 7168 + 56 x 4) = 14,352 B; combine message
// 56 x 4 + 2 x 7168 = 14,560 B. Send = max(T x 14,352, 256 x T x 14,560), receive = max(256 x T x
// 14,352, 256 x T x 14,560) = 256 x T x 14,560 both; signalling 256 x 4 = 1024 B (128-aligned); twice
// each, then get_low_latency_rdma_size_hint's ((bytes + 128) / 128) x 128.
TEST(All2All, DeepEpLowLatencyRdmaBufferForDeepSeekV3) {
  EXPECT_EQ(detail::deepep_low_latency_rdma_bytes(256, 7168, 256), 4LL * 256 * 256 * 14560 + 2 * 1024 + 128);
  EXPECT_EQ(detail::deepep_low_latency_rdma_bytes(256, 7168, 256), 3816818816LL);  // 3.555 GiB
  EXPECT_EQ(detail::deepep_low_latency_rdma_bytes(8192, 7168, 256), 122138134656LL);  // 113.75 GiB
}

TEST(All2All, DeepEpLowLatencyBuffersAreNonTorchMemoryAtTheBatchedDefault) {
  // vLLM 0.22: deepep_low_latency with EP and DP > 1 sets max_num_batched_tokens to 256
  // (DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP) and dispatches that many tokens per rank.
  const FitResult plain = deepseek_v3("allgather_reducescatter", "0.22", 8, 256);
  const FitResult ll = deepseek_v3("deepep_low_latency", "0.22", 8);
  EXPECT_EQ(ll.scheduler.max_num_batched_tokens, 256);
  EXPECT_EQ(non_torch(ll) - non_torch(plain), Bytes(kNvlAndWorkspace + 3816818816LL));
  EXPECT_TRUE(ll.vllm_would_start);
  // Before 0.20 the dispatch is VLLM_MOE_DP_CHUNK_SIZE (256) tokens whatever the batch.
  const FitResult old = deepseek_v3("deepep_low_latency", "0.19", 8);
  EXPECT_EQ(non_torch(old) - non_torch(deepseek_v3("allgather_reducescatter", "0.19", 8)),
            Bytes(kNvlAndWorkspace + 3816818816LL));
  // 8192 tokens per dispatch: 122,138,134,656 B, past DeepEP's num_rdma_bytes / 16 < INT_MAX.
  const FitResult too_many = deepseek_v3("deepep_low_latency", "0.22", 8, 8192);
  EXPECT_FALSE(too_many.vllm_would_start);
  EXPECT_NE(too_many.start_blocker.find("INT_MAX"), std::string::npos) << too_many.start_blocker;
}

TEST(All2All, DeepEpHighThroughputHoldsItsNvlinkBufferAndTurnsGraphsOff) {
  const FitResult plain = deepseek_v3("allgather_reducescatter", "0.22", 8);
  const FitResult ht = deepseek_v3("deepep_high_throughput", "0.22", 8);
  EXPECT_EQ(non_torch(ht) - non_torch(plain), Bytes(kNvlAndWorkspace));
  // compilation.py: cudagraph_mode NONE with DP > 1, so 0.22 charges no graph memory.
  EXPECT_GT(plain.binding_worker().overheads.cudagraph, Bytes(0));
  EXPECT_EQ(ht.binding_worker().overheads.cudagraph, Bytes(0));
  // 0.13 (#29558) kept graphs with DeepEP high-throughput.
  EXPECT_GT(deepseek_v3("deepep_high_throughput", "0.13", 8).binding_worker().overheads.cudagraph, Bytes(0));
}

TEST(All2All, NoManagerWithoutDataParallelism) {
  const FitResult tp_only = deepseek_v3("deepep_low_latency", "0.22", 1);
  EXPECT_EQ(non_torch(tp_only), non_torch(deepseek_v3("allgather_reducescatter", "0.22", 1)));
  bool noted = false;
  for (const auto& n : tp_only.notes) noted = noted || n.find("no all-to-all manager") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gpubudget
