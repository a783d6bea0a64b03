// KV bytes per token and per block, the need of one request, blocks, and the length search.
#include "gpubudget/kv_cache.h"

#include <random>

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "test_support.h"

namespace gpubudget {
namespace {

KvCacheDtype dtype_of(std::int64_t bytes) { return kv_cache_dtype_named(bytes == 1 ? "fp8" : "bfloat16", "test"); }

KvCacheSettings settings_of(std::int64_t dtype_bytes, std::int64_t block, std::int64_t batched_tokens = 8192) {
  KvCacheSettings s;
  s.dtype = dtype_of(dtype_bytes);
  s.block_size = block;
  s.max_num_batched_tokens = batched_tokens;
  return s;
}

KvCacheLayout layout_of(const std::string& id, std::int64_t tp, std::int64_t dtype_bytes, std::int64_t block,
                        std::int64_t dcp = 1) {
  const ModelSpec m = test::bundled(id);
  Deployment d;
  d.tensor_parallel_size = tp;
  d.decode_context_parallel_size = dcp;
  return make_kv_cache_layout(m, make_parallel_layout(m, d, 0), settings_of(dtype_bytes, block));
}

// A hybrid model's worker layout as fit() builds it on an H100 with the newest profile.
KvCacheLayout hybrid_layout(const std::string& id, const Deployment& d) {
  return worker_kv_cache_layout(test::bundled(id), load_gpu_preset("h100", test::configs()), d,
                                load_vllm_profile("", test::configs()));
}

TEST(KvBytesPerToken, Llama31_8B) {
  // 32 layers x (K + V) x 8 KV heads x 128 x 2 bytes.
  EXPECT_EQ(layout_of("meta-llama/Llama-3.1-8B", 1, 2, 16).bytes_per_token().count(), 32 * 2 * 8 * 128 * 2);
}

TEST(KvBytesPerToken, Llama31_70BReplicatesKvHeadsBeyondTheirCount) {
  // 8 KV heads: TP8 → 1 per rank; TP16 → still 1 (replicated), not 0.5.
  EXPECT_EQ(layout_of("meta-llama/Llama-3.1-70B", 8, 2, 16).bytes_per_token().count(), 80 * 2 * 1 * 128 * 2);
  EXPECT_EQ(layout_of("meta-llama/Llama-3.1-70B", 16, 2, 16).bytes_per_token().count(), 40960);
  EXPECT_EQ(layout_of("meta-llama/Llama-3.1-70B", 2, 2, 16).bytes_per_token().count(), 80 * 2 * 4 * 128 * 2);
}

TEST(KvBytesPerToken, MlaLatentIsNotSplitByTp) {
  // 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes, on every rank.
  EXPECT_EQ(layout_of("nvidia/Kimi-K2.5-NVFP4", 1, 2, 16).bytes_per_token().count(), 70272);
  EXPECT_EQ(layout_of("nvidia/Kimi-K2.5-NVFP4", 8, 2, 16).bytes_per_token().count(), 70272);
  EXPECT_EQ(layout_of("nvidia/Kimi-K2.5-NVFP4", 8, 1, 16).bytes_per_token().count(), 35136);
}

TEST(KvNeeded, IncidentFullContext) {
  // 262144 tokens = 16384 blocks of 16; 61 layers x 16 x 1152 B per block: 18,421,383,168 B (17.16 GiB).
  const auto kv = layout_of("nvidia/Kimi-K2.5-NVFP4", 8, 2, 16);
  EXPECT_EQ(kv.needed(262144).count(), 18'421'383'168LL);
  // One token more needs one block more.
  EXPECT_EQ(kv.needed(262145).count() - kv.needed(262144).count(), 61 * 16 * 1152);
}

TEST(KvNeeded, DecodeContextParallelDividesTheRequest) {
  // -dcp 8: each rank holds cdiv(262144, 8) = 32768 tokens = 2048 blocks.
  const auto kv = layout_of("nvidia/Kimi-K2.5-NVFP4", 8, 2, 16, 8);
  EXPECT_EQ(kv.needed(262144).count(), 2048LL * 61 * 16 * 1152);
}

TEST(KvBlocks, FloorOfBudgetOverPageOverLayers) {
  const auto kv = layout_of("nvidia/Kimi-K2.5-NVFP4", 8, 2, 16);
  const std::int64_t page = 16 * 1152;
  EXPECT_EQ(kv.num_blocks(Bytes(61 * page * 100 + 5)), 100);
  EXPECT_EQ(kv.num_blocks(Bytes(61 * page * 100 - 1)), 99);
  EXPECT_EQ(kv.num_blocks(Bytes(-5)), 0);
}

TEST(KvDtype, ResolutionFollowsVllm) {
  const ModelSpec kimi = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  EXPECT_EQ(resolve_kv_cache_dtype(kimi, KvCacheDtypeChoice::kAuto).name, "fp8_e4m3");  // checkpoint kv_cache_quant_algo
  EXPECT_EQ(resolve_kv_cache_dtype(kimi, KvCacheDtypeChoice::kBFloat16).name, "bfloat16");  // explicit wins
  const ModelSpec llama = test::bundled("meta-llama/Llama-3.1-8B");
  EXPECT_EQ(resolve_kv_cache_dtype(llama, KvCacheDtypeChoice::kAuto).name, "bfloat16");
  EXPECT_EQ(resolve_kv_cache_dtype(llama, KvCacheDtypeChoice::kFp8).element_bytes, 1);
  test::expect_input_error([&] { (void)(parse_kv_cache_dtype_choice("int3")); }, "--kv-cache-dtype: unsupported value \"int3\"");
  // compressed-tensors kv_cache_scheme → vLLM's Attention turns auto into fp8.
  ModelSpec ct = llama;
  ct.quantization.method = "compressed-tensors";
  ct.quantization.kv_cache_scheme = CheckpointKvScheme::kCompressedTensors;
  EXPECT_EQ(resolve_kv_cache_dtype(ct, KvCacheDtypeChoice::kAuto).name, "fp8");
  EXPECT_EQ(resolve_kv_cache_dtype(ct, KvCacheDtypeChoice::kAuto).element_bytes, 1);
  // A ModelOpt hf_quant_config.json with kv_cache_quant_algo FP8.
  const ModelSpec k26 = test::bundled("nvidia/Kimi-K2.6-NVFP4");
  EXPECT_EQ(resolve_kv_cache_dtype(k26, KvCacheDtypeChoice::kAuto).name, "fp8_e4m3");
}

// Oracle: the largest M in [1, upper] whose need fits, by scanning every length.
std::int64_t brute_force(const KvCacheLayout& kv, Bytes available, std::int64_t upper) {
  std::int64_t best = 0;
  for (std::int64_t m = 1; m <= upper; ++m) {
    if (kv.needed(m) <= available) best = m;
  }
  return best;
}

TEST(LargestFittingLength, EqualsABruteForceScan) {
  std::mt19937_64 rng(20260220);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    // A random stack of full-attention layers of one size: a single KV group.
    KvCacheLayout kv;
    kv.grouping = KvGrouping::kSingleGroup;
    kv.dcp = 1 + static_cast<std::int64_t>(rng() % 4);
    KvLayer layer;
    layer.block_size = std::int64_t{1} << (rng() % 8);  // 1..128
    layer.token_bytes = Bytes(1 + static_cast<std::int64_t>(rng() % 4096));
    kv.group_size = 1 + static_cast<std::int64_t>(rng() % 6);
    kv.layers.assign(static_cast<std::size_t>(kv.group_size), layer);
    kv.groups = {{layer, kv.group_size, kv.group_size, {}}};
    kv.page_bytes = layer.page_bytes();
    const std::int64_t upper = 1 + static_cast<std::int64_t>(rng() % 3000);
    const Bytes available(static_cast<std::int64_t>(rng() % (kv.needed(upper).count() * 2 + 1)));
    EXPECT_EQ(largest_fitting_length(kv, available, upper), brute_force(kv, available, upper));
  }
}

TEST(LargestFittingLength, ZeroWhenNotOneTokenFits) {
  const auto kv = layout_of("meta-llama/Llama-3.1-8B", 1, 2, 16);
  EXPECT_EQ(largest_fitting_length(kv, kv.block_bytes() - Bytes(1), 131072), 0);
  EXPECT_EQ(largest_fitting_length(kv, kv.block_bytes(), 131072), 16);
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// gpt-oss-20b: 24 layers alternating sliding (window 128) and full attention, 8 KV heads of 64.
KvCacheLayout gpt_oss_20b(std::int64_t batched_tokens) {
  const ModelSpec m = test::bundled("openai/gpt-oss-20b");
  return make_kv_cache_layout(m, make_parallel_layout(m, Deployment{}, 0), settings_of(2, 16, batched_tokens));
}

TEST(KvHybrid, GptOssGroupsTwelveSlidingAndTwelveFullLayers) {
  const KvCacheLayout kv = gpt_oss_20b(8192);
  EXPECT_EQ(kv.grouping, KvGrouping::kHybrid);
  ASSERT_EQ(kv.groups.size(), 2u);
  EXPECT_EQ(kv.group_size, 12);
  // Per layer and token: K and V x 8 heads x 64 x 2 bytes = 2048; only the 12 full layers grow.
  EXPECT_EQ(kv.page_bytes.count(), 16 * 2048);
  EXPECT_EQ(kv.bytes_per_token().count(), 12 * 2048);
}

TEST(KvHybrid, SlidingLayersStopGrowingPastTheWindow) {
  const KvCacheLayout kv = gpt_oss_20b(8192);
  const std::int64_t page = 16 * 2048;
  for (const std::int64_t m : {1, 100, 8000, 8319, 8320, 20000, 131072}) {
    SCOPED_TRACE(m);
    // Sliding group: cdiv(min(128 - 1 + 8192, M), 16) + 1 blocks; full group: cdiv(M, 16) blocks;
    // 12 layers per group, one page each per block.
    const std::int64_t sliding_blocks = cdiv(std::min<std::int64_t>(127 + 8192, m), 16) + 1;
    const std::int64_t full_blocks = cdiv(m, 16);
    EXPECT_EQ(kv.needed(m).count(), 12 * page * (sliding_blocks + full_blocks));
  }
  // Past W - 1 + T tokens the sliding layers' share is constant.
  const auto sliding_share = [&](std::int64_t m) { return kv.needed(m).count() - 12 * page * cdiv(m, 16); };
  EXPECT_EQ(sliding_share(20000), sliding_share(131072));
}

TEST(KvHybrid, GptOssLargestLengthMatchesABruteForceScanOnATightBudget) {
  const KvCacheLayout kv = gpt_oss_20b(8192);
  for (const std::int64_t budget_blocks : {530, 531, 600, 777}) {
    const Bytes available(budget_blocks * 12 * 16 * 2048 + 5);
    EXPECT_EQ(largest_fitting_length(kv, available, 20000), brute_force(kv, available, 20000)) << budget_blocks;
  }
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

FitResult v32(const std::string& gpu, const std::string& kv_dtype) {
  Deployment d;
  d.tensor_parallel_size = 8;
  d.kv_cache_dtype = parse_kv_cache_dtype_choice(kv_dtype);
  return fit(test::bundled("deepseek-ai/DeepSeek-V3.2"), load_gpu_preset(gpu, test::configs()), d,
             load_vllm_profile("", test::configs()));
}

TEST(KvSparseMla, DeepSeekV32MainCachePlusIndexerPerLayer) {
  // Per decoder layer: the MLA latent (512 + 64 values) and the indexer's keys (128 uint8 values
  // + 128/128 fp32 scales = 132 B, whatever the KV dtype); 61 layers.
  const FitResult bf16 = v32("h200", "auto");
  EXPECT_EQ(bf16.binding_worker().kv.bytes_per_token().count(), 61 * (576 * 2 + 132));
  EXPECT_EQ(bf16.attention_backend, "FLASHMLA_SPARSE");
  EXPECT_EQ(bf16.block_size, 64);
  EXPECT_EQ(bf16.binding_worker().kv.grouping, KvGrouping::kUniformType);
  // FLASHMLA_SPARSE stores an fp8 request as fp8_ds_mla: 512 fp8 + 4 fp32 scales + 64 bf16 = 656 B.
  const FitResult ds_mla = v32("h200", "fp8");
  EXPECT_EQ(ds_mla.kv_cache_dtype.name, "fp8_ds_mla");
  EXPECT_EQ(ds_mla.binding_worker().kv.bytes_per_token().count(), 61 * (656 + 132));
  // On Blackwell an fp8 cache goes to FLASHINFER_MLA_SPARSE (block 32), plain fp8: 576 B.
  const FitResult blackwell = v32("b200", "fp8");
  EXPECT_EQ(blackwell.attention_backend, "FLASHINFER_MLA_SPARSE");
  EXPECT_EQ(blackwell.binding_worker().kv.bytes_per_token().count(), 61 * (576 + 132));
  // One request of M tokens: every KV layer cdiv(M, 64) blocks of its own page.
  const auto& kv = bf16.binding_worker().kv;
  EXPECT_EQ(kv.needed(163840).count(), 61LL * 2560 * 64 * (1152 + 132));
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

KvCacheLayout qwen3_next(std::int64_t tp, MambaCacheMode mode) {
  Deployment d;
  d.tensor_parallel_size = tp;
  d.max_num_batched_tokens = 8192;
  d.enable_prefix_caching = mode != MambaCacheMode::kNone;  // prefix caching on: `align` for Qwen3-Next
  return hybrid_layout("Qwen/Qwen3-Next-80B-A3B-Instruct", d);
}

TEST(KvHybridMamba, Qwen3NextRaisesTheAttentionBlockToHoldAState) {
  // Gated-DeltaNet state per layer (TP1, bf16): conv (2*16*128 + 32*128) channels x (4 - 1) x 2 B = 49,152
  // plus temporal 32 heads x 128 x 128 x 2 B = 1,048,576 → 1,097,728 B. One full-attention token:
  // K,V x 2 KV heads x 256 x 2 B = 2048 B. Block = 16 * cdiv(1,097,728, 16 * 2048) = 544 tokens.
  const KvCacheLayout kv = qwen3_next(1, MambaCacheMode::kNone);
  EXPECT_EQ(kv.attention_block_size(), 544);
  EXPECT_EQ(kv.grouping, KvGrouping::kHybrid);
  EXPECT_EQ(kv.group_size, 12);  // 12 attention + 36 linear layers → 4 groups of 12
  EXPECT_EQ(kv.groups.size(), 4u);
  const std::int64_t page = 544 * 2048;
  EXPECT_EQ(kv.page_bytes.count(), page);
  EXPECT_EQ(kv.bytes_per_token().count(), 12 * 2048);
  // One request: cdiv(M, 544) attention blocks plus one state page in each of the 3 linear groups.
  EXPECT_EQ(kv.needed(100000).count(), 12 * page * (cdiv(100000, 544) + 3));
  // `align` mode (prefix caching) keeps two state pages per request.
  EXPECT_EQ(qwen3_next(1, MambaCacheMode::kAlign).needed(100000).count(), 12 * page * (cdiv(100000, 544) + 6));
  // TP4: one replicated KV head (1024 B/token), state / 4 = 274,432 B → 16 * cdiv(274432, 16384) = 272.
  EXPECT_EQ(qwen3_next(4, MambaCacheMode::kNone).attention_block_size(), 272);
}

TEST(KvHybridMamba, Qwen36BlockSizeIsWhatVllmSets) {
  // Qwen3.6-27B, TP1, bf16 KV: state = 3 x (2*16*128 + 48*128) x 2 B + 48 x 128 x 128 x 4 B (fp32,
  // config mamba_ssm_dtype) = 3,207,168 B; token = K,V x 4 heads x 256 x 2 B = 4096 B → vLLM's
  // "Setting attention block size to 784 tokens" (16 x cdiv(3,207,168, 65,536) = 16 x 49).
  const KvCacheLayout kv = hybrid_layout("Qwen/Qwen3.6-27B", Deployment{});
  EXPECT_EQ(kv.attention_block_size(), 784);
}

TEST(KvHybridMamba, NemotronMamba2StateSetsTheBlock) {
  // Nemotron-3 Nano, TP1: Mamba2 conv (64 x 64 + 2 x 8 x 128 = 6144 channels) x 3 x 2 B + temporal
  // 64 heads x 64 x 128 x 4 B (mamba_ssm_cache_dtype float32) = 2,134,016 B; attention token 1024 B
  // → block 16 x cdiv(2,134,016, 16,384) = 2096. 6 attention + 23 Mamba layers → groups of 6.
  const KvCacheLayout kv = hybrid_layout("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", Deployment{});
  EXPECT_EQ(kv.attention_block_size(), 2096);
  EXPECT_EQ(kv.group_size, 6);
  EXPECT_EQ(kv.groups.size(), 1u + 4u);  // attention, and 23 Mamba layers in cdiv(23, 6) = 4 groups
}

TEST(KvHybridMamba, KimiLinearPadsTheLinearGroups) {
  // 7 MLA + 20 KDA layers: groups of 7, the KDA layers in cdiv(20, 7) = 3 groups (one padding layer,
  // as vLLM warns "Add 1 padding layers"). KDA state at TP2: 3 x 2048 x 3 x 2 B + 16 x 128 x 128 x 4 B
  // = 1,085,440 B; MLA token 1152 B → block 16 x cdiv(1,085,440, 18,432) = 944.
  Deployment d;
  d.tensor_parallel_size = 2;
  const KvCacheLayout kv = hybrid_layout("moonshotai/Kimi-Linear-48B-A3B-Instruct", d);
  EXPECT_EQ(kv.attention_block_size(), 944);
  EXPECT_EQ(kv.group_size, 7);
  EXPECT_EQ(kv.groups.size(), 4u);
  std::int64_t layers_in_groups = 0;
  for (const auto& g : kv.groups) layers_in_groups += g.num_layers;
  EXPECT_EQ(kv.groups.size() * 7 - static_cast<std::size_t>(layers_in_groups), 1u);
}

TEST(KvChunkedLocal, Llama4ScoutHoldsOneChunkInItsLocalLayers) {
  // Llama 4 Scout text, TP8: 36 chunked-local layers (chunk 8192) and 12 global NoPE layers, 8 KV heads
  // of 128 → one per rank: 512 B per token and layer. Local layer need: cdiv(min(8192 + T, M), 16) blocks.
  const ModelSpec m = load_model(test::data_dir() + "/configs/llama4-scout-text.json", test::configs());
  Deployment d;
  d.tensor_parallel_size = 8;
  const KvCacheLayout kv = make_kv_cache_layout(m, make_parallel_layout(m, d, 0), settings_of(2, 16));
  EXPECT_EQ(kv.bytes_per_token().count(), 12 * 512);
  EXPECT_EQ(kv.grouping, KvGrouping::kHybrid);
  const std::int64_t page = 16 * 512;
  EXPECT_EQ(kv.needed(1'000'000).count(), 12 * page * (3 * cdiv(8192 + 8192, 16) + cdiv(1'000'000, 16)));
  EXPECT_EQ(kv.needed(4000).count(), 12 * page * (3 * cdiv(4000, 16) + cdiv(4000, 16)));
}

TEST(KvHybridMamba, LargestLengthMatchesABruteForceScan) {
  const KvCacheLayout kv = qwen3_next(1, MambaCacheMode::kAlign);
  for (const std::int64_t pages : {10, 11, 37}) {
    const Bytes available(pages * 12 * 544 * 2048 + 77);
    EXPECT_EQ(largest_fitting_length(kv, available, 20000), brute_force(kv, available, 20000)) << pages;
  }
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// GLM-4.7 (glm4_moe.py): 92 full-attention layers (the MTP layer has no KV cache without speculative
// decoding), 8 KV heads of head_dim 128 (the config's, not 5120 / 96), replicated beyond TP 8.
// GLM-4.7-Flash (glm4_moe_lite.py, DeepSeek's MLA): 47 layers x one 512 + 64 latent, never split.
// Command-R (commandr.py): 40 full layers, 8 KV heads of 8192 / 64. OLMo 3 and EXAONE 4: 64 layers of
// which 16 are full attention (layer_types); the 48 sliding layers (window 4096) hold at most the window,
// so a token of a long request costs the full layers' bytes. KV heads replicate beyond TP 8.
TEST(KvCacheDense, CommandROlmo3Exaone4) {
  EXPECT_EQ(layout_of("CohereLabs/c4ai-command-r-08-2024", 1, 2, 16).bytes_per_token().count(), 40 * 2 * 8 * 128 * 2);
  EXPECT_EQ(layout_of("CohereLabs/c4ai-command-r-08-2024", 8, 2, 16).bytes_per_token().count(), 40 * 2 * 1 * 128 * 2);
  for (const char* id : {"allenai/Olmo-3.1-32B-Instruct", "LGAI-EXAONE/EXAONE-4.0-32B"}) {
    EXPECT_EQ(layout_of(id, 1, 2, 16).bytes_per_token().count(), 16 * 2 * 8 * 128 * 2) << id;
    EXPECT_EQ(layout_of(id, 8, 2, 16).bytes_per_token().count(), 16 * 2 * 1 * 128 * 2) << id;
    const ModelSpec m = test::bundled(id);
    EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::kSlidingWindow) << id;
    EXPECT_EQ(m.layers[0].attention.window, 4096) << id;
    EXPECT_EQ(m.layers[3].attention.kind, AttentionKind::kFull) << id;
  }
}

TEST(KvCacheDense, Qwen25Vl) {
  // Qwen2.5-VL-7B's language model: 28 layers, 4 KV heads of 3584 / 28, no sliding window.
  EXPECT_EQ(layout_of("Qwen/Qwen2.5-VL-7B-Instruct", 1, 2, 16).bytes_per_token().count(), 28 * 2 * 4 * 128 * 2);
  EXPECT_EQ(layout_of("Qwen/Qwen2.5-VL-7B-Instruct", 4, 2, 16).bytes_per_token().count(), 28 * 2 * 1 * 128 * 2);
}

// Jamba-v0.1: 4 attention layers (i % 8 == 4) of 8 KV heads x 128 hold KV per token; the 28 Mamba1
// layers a state per request: conv [8192 / tp, 3] + SSM [8192 / tp, 16], bf16.
TEST(KvCacheHybrid, Jamba) {
  const ModelSpec m = test::bundled("ai21labs/Jamba-v0.1");
  const GpuSpec gpu = load_gpu_preset("h200", test::configs());
  const VllmProfile profile = load_vllm_profile("", test::configs());
  for (const std::int64_t tp : {1, 8}) {
    Deployment d;
    d.tensor_parallel_size = tp;
    const KvCacheLayout kv = worker_kv_cache_layout(m, gpu, d, profile, 0);
    EXPECT_EQ(kv.bytes_per_token().count(), 4 * 2 * (8 / tp) * 128 * 2) << tp;
    // One Mamba1 state per request and layer, (8192 / tp) x (3 + 16) bf16 values (TP 1: 311,296 B): the
    // attention block is raised to the smallest multiple of 16 tokens whose page holds it, 80, and the
    // unified page is 80 tokens of one attention layer.
    EXPECT_EQ(kv.page_bytes.count(), 80 * 2 * (8 / tp) * 128 * 2) << tp;
  }
  int mamba = 0;
  for (const auto& layer : m.layers) mamba += layer.attention.kind == AttentionKind::kMamba ? 1 : 0;
  EXPECT_EQ(mamba, 28);
  EXPECT_EQ(m.layers[4].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(m.derived_max_model_len, 262144);  // JambaConfig's default max_position_embeddings
}

TEST(KvCacheDense, MiMo) {
  // 36 layers, 8 KV heads x 128; the next-n layer has no KV cache without speculative decoding.
  EXPECT_EQ(layout_of("XiaomiMiMo/MiMo-7B-Base", 1, 2, 16).bytes_per_token().count(), 36 * 2 * 8 * 128 * 2);
}

TEST(KvCacheDense, NemotronSuper49B) {
  // Only the 49 blocks with attention have a KV layer: 8 KV heads x 128 (64 heads / n_heads_in_group 8).
  EXPECT_EQ(layout_of("nvidia/Llama-3_3-Nemotron-Super-49B-v1", 1, 2, 16).bytes_per_token().count(),
            49 * 2 * 8 * 128 * 2);
  EXPECT_EQ(layout_of("nvidia/Llama-3_3-Nemotron-Super-49B-v1", 8, 2, 16).bytes_per_token().count(),
            49 * 2 * 1 * 128 * 2);
}

TEST(KvCacheDense, Devstral2) {
  // 40 layers, 8 KV heads of head_dim 128 (the config's), no sliding window.
  EXPECT_EQ(layout_of("mistralai/Devstral-Small-2-24B-Instruct-2512", 1, 2, 16).bytes_per_token().count(),
            40 * 2 * 8 * 128 * 2);  // 163,840
  EXPECT_EQ(layout_of("mistralai/Devstral-Small-2-24B-Instruct-2512", 8, 2, 16).bytes_per_token().count(),
            40 * 2 * 1 * 128 * 2);
}

TEST(KvCacheGlm, Glm47AndFlash) {
  EXPECT_EQ(layout_of("zai-org/GLM-4.7", 1, 2, 16).bytes_per_token().count(), 92 * 2 * 8 * 128 * 2);  // 376,832
  EXPECT_EQ(layout_of("zai-org/GLM-4.7", 8, 2, 16).bytes_per_token().count(), 92 * 2 * 1 * 128 * 2);  // 47,104
  EXPECT_EQ(layout_of("zai-org/GLM-4.7", 16, 2, 16).bytes_per_token().count(), 92 * 2 * 1 * 128 * 2);
  EXPECT_EQ(layout_of("zai-org/GLM-4.7-Flash", 1, 2, 16).bytes_per_token().count(), 47 * 576 * 2);  // 54,144
  EXPECT_EQ(layout_of("zai-org/GLM-4.7-Flash", 4, 2, 16).bytes_per_token().count(), 47 * 576 * 2);
}

}  // namespace
}  // namespace gpubudget
