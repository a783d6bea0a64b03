// Expert-parallel all-to-all backends (--all2all-backend) with data parallelism: the buffers vLLM's
// DeepEP managers allocate per GPU (vllm/distributed/device_communicators/all2all.py, main 2026-05) and
// DeepEP's own sizes (csrc/config.hpp LowLatencyLayout and deep_ep.cpp Buffer at 73b6ea4, the commit
// vLLM installs), worked by hand for DeepSeek-V3: hidden 7168, 256 routed experts.
#include <algorithm>

#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "memory/all2all_buffers.h"
#include "test_support.h"

namespace gpubudget {
namespace {

constexpr std::int64_t kMiB = 1 << 20;
// deep_ep.cpp: the NVLink buffer (VLLM_DEEPEP_BUFFER_SIZE_MB, 1024) with 8 x (int + 2 pointers) of
// barrier signals and peer pointers, and the 32 MiB workspace.
constexpr std::int64_t kNvlAndWorkspace = 1024 * kMiB + 8 * (4 + 8 + 8) + 32 * kMiB;

FitResult expert_parallel(const std::string& model, const std::string& gpu, const std::string& backend,
                          const std::string& version, std::int64_t dp,
                          std::optional<std::int64_t> batched_tokens = std::nullopt) {
  Deployment d;
  d.data_parallel_size = dp;
  d.enable_expert_parallel = true;
  d.max_model_len = 8192;
  d.max_num_batched_tokens = batched_tokens;
  d.all2all_backend = parse_all2all_backend(backend);
  return fit(test::bundled(model), load_gpu_preset(gpu, test::configs()), d, load_vllm_profile(version, test::configs()));
}

FitResult deepseek_v3(const std::string& backend, const std::string& version, std::int64_t dp,
                      std::optional<std::int64_t> batched_tokens = std::nullopt) {
  return expert_parallel("deepseek-ai/DeepSeek-V3", "b200", backend, version, dp, batched_tokens);
}

Bytes non_torch(const FitResult& r) { return r.binding_worker().overheads.non_torch; }

// MoRI's heap is made before vLLM's first snapshot, outside the budget: the KV figures are those of no
// all-to-all buffers, and the warning names the heap and where it must fit.
TEST(All2All, MoriHeapIsOutsideTheBudgetAndWarned) {
  const FitResult plain = deepseek_v3("allgather_reducescatter", "0.22", 8);
  const FitResult mori = deepseek_v3("mori", "0.22", 8);
  EXPECT_EQ(mori.binding_worker().kv_cache, plain.binding_worker().kv_cache);
  EXPECT_TRUE(std::any_of(mori.warnings.begin(), mori.warnings.end(), [](const Notice& w) {
    return w.code == NoticeCode::kAll2allMemoryNotCounted && w.text.find("MORI_SHMEM_HEAP_SIZE") != std::string::npos &&
           w.text.find("unrequested") != std::string::npos;
  }));
}

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

// pplx-kernels at 12cecfd (the commit vLLM's installer pins), DeepSeek-V3's FP8 block-128 experts at
// VLLM_MOE_DP_CHUNK_SIZE = 256 tokens per rank, TP 1 (pplx's "dp_size" is vLLM's TP size):
// pplx_hidden_dim_scale_bytes: 7168 fp8 bytes + 56 x 4 = 224 B of scales, each a multiple of 16 already.
// Intranode (intranode.cpp): L = 256 / 8 = 32 local experts, header 16 + roundUp16(4 x 32) = 144 B;
// dispatch 256 x 32 x roundUp16(7392 + 4 = 7396 -> 7408) = 60,686,336 B < combine 256 x 32 x 4 x 7168 =
// 234,881,024 B, so one peer's buffer is 234,881,168 B and the rank holds 8 of them (1,879,049,344 B)
// plus six int32 [L x T x world] tracking arrays, 6 x 32 x 256 x 8 x 4 = 1,572,864 B.
TEST(All2All, PplxIntranodeBuffersForDeepSeekV3) {
  EXPECT_EQ(detail::pplx_intranode_bytes(256, 7168, 256, 8, 7392), 8LL * 234881168 + 1572864);
  const FitResult pplx = deepseek_v3("pplx", "0.15", 8);
  EXPECT_EQ(non_torch(pplx) - non_torch(deepseek_v3("allgather_reducescatter", "0.15", 8)),
            Bytes(1879049344LL + 1572864));
}

// Internode (internode.cpp), DP 16 over two nodes: L = 16 local experts, G = 16 / TP 1 = 16 groups:
// send T x p = 256 x 7408 = 1,896,448; receive L x G x T x p = 256 x 256 x 7408 = 485,490,688; combine
// receive L x G x T x 4H = 1,879,048,192 and combine send T x E x 4H = 1,879,048,192 B.
TEST(All2All, PplxInternodeBuffersForDeepSeekV3) {
  EXPECT_EQ(detail::pplx_internode_bytes(256, 7168, 256, 16, 1, 7392), 4245483520LL);
  const FitResult pplx = deepseek_v3("pplx", "0.15", 16);
  EXPECT_EQ(non_torch(pplx) - non_torch(deepseek_v3("allgather_reducescatter", "0.15", 16)), Bytes(4245483520LL));
  bool nvshmem_warned = false;
  for (const auto& w : pplx.warnings) {
    nvshmem_warned = nvshmem_warned || (w.code == NoticeCode::kAll2allMemoryNotCounted &&
                                        w.text.find("nvshmem_init") != std::string::npos);
  }
  EXPECT_TRUE(nvshmem_warned);
}

// #33724 (2026-02-26) removed pplx; from 0.17 the name is accepted and replaced by allgather_reducescatter.
TEST(All2All, PplxFallsBackFromVllm017) {
  const FitResult pplx = deepseek_v3("pplx", "0.17", 8);
  EXPECT_EQ(non_torch(pplx), non_torch(deepseek_v3("allgather_reducescatter", "0.17", 8)));
  ASSERT_FALSE(pplx.warnings.empty());
  bool said = false;
  for (const auto& w : pplx.warnings) {
    said = said || (w.code == NoticeCode::kAll2allBackendRemoved &&
                    w.text.find("falls back to allgather_reducescatter") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

// NIXL EP (all2all.py NixlEPAll2AllManager, nixl csrc/config.hpp EPLayout): the buffer is sized for
// VLLM_NIXL_EP_MAX_NUM_RANKS (32) x 32 local experts = 1024 experts at the batched DP default of 256
// tokens (0.20+). Dispatch message 14,352 B, combine message 14,560 B (as DeepEP's), so send = receive =
// 1024 x 256 x 14,560 = 3,816,816,640 B; signalling 8 x 1024 = 8192 B; 2 x (send + receive + 8192) =
// 15,267,282,944, rounded as ((b + 128) / 128) x 128 = 15,267,283,072 B; plus the 32 MiB workspace.
TEST(All2All, NixlEpBufferIsSizedForItsMaximumRanks) {
  EXPECT_EQ(detail::nixl_ep_buffer_bytes(256, 7168, 1024), 15267283072LL);
  const FitResult nixl = deepseek_v3("nixl_ep", "0.22", 8);
  EXPECT_EQ(nixl.scheduler.max_num_batched_tokens, 256);
  EXPECT_EQ(non_torch(nixl) - non_torch(deepseek_v3("allgather_reducescatter", "0.22", 8, 256)),
            Bytes(15267283072LL + 32 * kMiB));
  // VLLM_NIXL_EP_MAX_NUM_RANKS=8: 256 experts, 4 x 256 x 256 x 14,560 + 2 x 2048 = 3,816,820,736 -> 3,816,820,864.
  EXPECT_EQ(detail::nixl_ep_buffer_bytes(256, 7168, 256), 3816820864LL);
  // nixl_ep came with #35627 (2026-03-13): vLLM 0.15 rejects the name.
  const FitResult old = deepseek_v3("nixl_ep", "0.15", 8);
  EXPECT_FALSE(old.vllm_would_start);
  EXPECT_NE(old.start_blocker.find("has no --all2all-backend nixl_ep"), std::string::npos) << old.start_blocker;
}

// FlashInfer v0.6.11.post2 (vLLM's pin), one-sided MoeAlltoAll for nvidia/DeepSeek-V3-0324-FP4 (NVFP4
// experts, hidden 7168, top-k 8) at EP 8 and 8192 tokens (max_num_batched_tokens, all2all_utils.py):
// aux (calculateOffsets) = pad128(8 + 8 x 8) + 2 x pad128(4 x 8) + 2 x pad128(8192 x 22 x 4) = 128 + 256 +
// 1,441,792 = 1,442,176 B; dispatch per token 7168 / 2 + 7168 / 16 + 8 x 4 + 8 x 4 = 4096 B, so 8 x 8192 x
// 4096 = 268,435,456 B; combine bf16 8 x 8192 x 14,336 = 939,524,096 B; 1,209,401,728 B, rounded up to
// 2 MiB: 577 x 2,097,152 = 1,210,056,704 B.
TEST(All2All, FlashInferOneSidedWorkspaceForNvfp4Experts) {
  EXPECT_EQ(detail::flashinfer_one_sided_bytes(8, 8192, 4096, 14336), 1210056704LL);
  const std::string fp4 = "nvidia/DeepSeek-V3-0324-FP4";
  const FitResult one_sided = expert_parallel(fp4, "b200", "flashinfer_nvlink_one_sided", "0.22", 8, 8192);
  EXPECT_EQ(non_torch(one_sided) - non_torch(expert_parallel(fp4, "b200", "allgather_reducescatter", "0.22", 8, 8192)),
            Bytes(1210056704LL));
  // FP8 block experts: vLLM's prepare/finalize raises NotImplementedError (nvfp4, mxfp8 and bf16 only).
  const FitResult fp8 = deepseek_v3("flashinfer_nvlink_one_sided", "0.22", 8, 8192);
  EXPECT_FALSE(fp8.vllm_would_start);
  EXPECT_NE(fp8.start_blocker.find("NotImplementedError"), std::string::npos) << fp8.start_blocker;
}

// Two-sided MnnvlMoe at EP 8: 2 x ceil(8 / 8) = 2 blocks per channel; B200's 148 multiprocessors give
// 148 / 2 / 2 = 37 channels: (2 MiB + 256) x 8 x 37 = 620,832,768 -> 622,854,144 B (2 MiB granules), and
// the prepare FIFO (1 MiB + 256) x 8 = 8,390,656 -> 10,485,760 B; H100's 132 give 33 channels:
// 553,715,712 -> 555,745,280 B.
TEST(All2All, FlashInferTwoSidedWorkspaceFollowsTheMultiprocessors) {
  EXPECT_EQ(detail::flashinfer_two_sided_bytes(8, 148), 622854144LL + 10485760);
  EXPECT_EQ(detail::flashinfer_two_sided_bytes(8, 132), 555745280LL + 10485760);
  const FitResult b200 = deepseek_v3("flashinfer_nvlink_two_sided", "0.22", 8);
  EXPECT_EQ(non_torch(b200) - non_torch(deepseek_v3("allgather_reducescatter", "0.22", 8)), Bytes(633339904LL));
  // A preset without a multiprocessor count: warned, nothing guessed.
  const FitResult l40s = expert_parallel("deepseek-ai/DeepSeek-V3", "l40s", "flashinfer_all2allv", "0.22", 8);
  EXPECT_EQ(non_torch(l40s),
            non_torch(expert_parallel("deepseek-ai/DeepSeek-V3", "l40s", "allgather_reducescatter", "0.22", 8)));
  bool warned = false;
  for (const auto& w : l40s.warnings) {
    warned = warned ||
             (w.code == NoticeCode::kAll2allNotModelled && w.text.find("multiprocessor count") != std::string::npos);
  }
  EXPECT_TRUE(warned);
}

// Settings within the input limits whose buffers would overflow 64-bit arithmetic are refused as a start
// blocker, not computed (UBSan runs the suite): NIXL EP sized for 4096 ranks at 2^34 tokens per dispatch.
TEST(All2All, BuffersBeyondAnyGpuAreRefusedNotComputed) {
  Deployment d;
  d.data_parallel_size = 2;
  d.enable_expert_parallel = true;
  d.max_model_len = 8192;
  d.max_num_batched_tokens = std::int64_t{1} << 34;
  d.all2all_backend = All2AllBackend::kNixlEp;
  d.nixl_ep_max_num_ranks = 4096;
  const FitResult r = fit(test::bundled("deepseek-ai/DeepSeek-V3"), load_gpu_preset("b200", test::configs()), d,
                          load_vllm_profile("0.22", test::configs()));
  EXPECT_FALSE(r.vllm_would_start);
  EXPECT_NE(r.start_blocker.find("beyond 2^60 bytes"), std::string::npos) << r.start_blocker;
}

TEST(All2All, NoManagerWithoutDataParallelism) {
  const FitResult tp_only = deepseek_v3("deepep_low_latency", "0.22", 1);
  EXPECT_EQ(non_torch(tp_only), non_torch(deepseek_v3("allgather_reducescatter", "0.22", 1)));
  bool noted = false;
  for (const auto& n : tp_only.notes) {
    noted =
        noted || (n.code == NoticeCode::kAll2allNoManager && n.text.find("no all-to-all manager") != std::string::npos);
  }
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace gpubudget
