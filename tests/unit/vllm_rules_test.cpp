// vLLM's deterministic rules per version, one test per rule: hybrid cache modes, state dtypes, block
// alignment, sparse-MLA blocks, Python rounding, auto-fit, the align-mode block limit, the KV dtypes,
// the hybrid manager, the block override, skip layers, MXFP4 padding and quantized-group alignment.
// Each expected figure is worked by hand in the comment from the vLLM function it cites, with the
// model's config.json numbers; none is gpubudget's output pasted back.
#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "solve/vllm_text.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

FitResult run(const std::string& model, const std::string& gpu, const Deployment& d, const std::string& version) {
  return fit(test::bundled(model), load_gpu_preset(gpu, test::configs()), d, load_vllm_profile(version, test::configs()));
}

Deployment tp(std::int64_t size) {
  Deployment d;
  d.tensor_parallel_size = size;
  return d;
}

// Qwen3-Next-80B at TP4 (48 layers, full attention every 4th: 12 full, 36 Gated DeltaNet).
//   GDN state per rank (mamba_utils.py gated_delta_net_state_shape, bf16): conv 3 x (16·128·2 + 32·128)/4
//   = 6144 elements, 12288 B; temporal 32/4 · 128 · 128 = 131072 elements, 262144 B; 274432 B.
//   Attention per token per layer: max(1, 2/4) head x 256 x (K+V) x 2 B = 1024 B.
//   _align_hybrid_block_size (FLASH_ATTN, kernel multiple 16): 16·cdiv(274432, 16·1024) = 272.
//   Groups (_get_kv_cache_groups_uniform_page_size): buckets 12 / 36, 36 ≥ 1.5·12 → size 12, GDN in 3
//   groups; one block = 12 x 272 x 1024 = 3342336 B.
//   Need at 262144 tokens (_max_memory_usage_bytes_from_groups): cdiv(262144, 272) = 964 pages for
//   the full group, plus 1 (mode none) or 2 (align) per GDN group.
TEST(HybridPrefixCaching, OffByDefaultSoOneStatePagePerRequest) {
  const FitResult none = run("Qwen/Qwen3-Next-80B-A3B-Instruct", "h100", tp(4), "0.22");
  EXPECT_TRUE(none.hybrid);
  EXPECT_FALSE(none.prefix_caching);  // ModelConfig.is_prefix_caching_supported: off for hybrid models
  EXPECT_EQ(none.mamba_cache_mode, MambaCacheMode::kNone);
  EXPECT_EQ(none.block_size, 272);
  EXPECT_EQ(none.binding_worker().kv.block_bytes().count(), 3342336);
  EXPECT_EQ(none.needed.count(), (964 + 3) * std::int64_t{3342336});

  Deployment on = tp(4);
  on.enable_prefix_caching = true;  // --enable-prefix-caching: mamba_cache_mode "align" (two pages)
  const FitResult align = run("Qwen/Qwen3-Next-80B-A3B-Instruct", "h100", on, "0.22");
  EXPECT_EQ(align.mamba_cache_mode, MambaCacheMode::kAlign);
  EXPECT_EQ(align.needed.count(), (964 + 6) * std::int64_t{3342336});
}

// Nemotron-H-56B at TP4: Mamba2 state (mamba2_state_shape): conv 3 x (16384 + 2·8·256)/4 = 15360
// elements x 2 B = 30720 B; SSM 256/4 heads x 64 x 256 = 1048576 elements. The config has no
// mamba_ssm_cache_dtype, so NemotronHForCausalLMConfig falls back to float16 (0.13-0.19, #29978) or
// float32 (0.20+, #39032); 0.11 has no override (model dtype). Attention: 8/4 KV heads x 128 x 2 x 2 B
// = 1024 B per token, so the block is 16·cdiv(state, 16384): fp16 16·cdiv(2127872, 16384) = 2080,
// fp32 16·cdiv(4225024, 16384) = 4128.
TEST(NemotronH, SsmStateDtypeFollowsTheVersionsFallback) {
  const FitResult v011 = run("nvidia/Nemotron-H-56B-Base-8K", "h100", tp(4), "0.11");
  EXPECT_EQ(v011.mamba_dtypes.ssm, Dtype::kBFloat16);
  EXPECT_EQ(v011.block_size, 2080);
  const FitResult v019 = run("nvidia/Nemotron-H-56B-Base-8K", "h100", tp(4), "0.19");
  EXPECT_EQ(v019.mamba_dtypes.ssm, Dtype::kFloat16);
  EXPECT_EQ(v019.block_size, 2080);
  const FitResult v020 = run("nvidia/Nemotron-H-56B-Base-8K", "h100", tp(4), "0.20");
  EXPECT_EQ(v020.mamba_dtypes.ssm, Dtype::kFloat32);
  EXPECT_EQ(v020.mamba_dtypes.conv, Dtype::kBFloat16);  // the conv state keeps the model dtype
  EXPECT_EQ(v020.block_size, 4128);
  // 10 attention + 54 Mamba2 layers: group size 10, Mamba in 6 groups; 8192 tokens need
  // cdiv(8192, 4128) = 2 attention pages + 6 state pages of 10 x 4128 x 1024 B.
  EXPECT_EQ(v020.needed.count(), 8 * std::int64_t{10} * 4128 * 1024);
}

// Kimi-Linear-48B (MLA + KDA). KDA state per rank (kda_state_shape): conv 3 x (32/tp · 128) x 3 caches
// in bf16, recurrent 32/tp x 128 x 128 in float32: TP1 73728 + 2097152 = 2170880 B, TP2 1085440 B.
// MLA token bytes: 576 x 2 B = 1152 (bf16), 576 (fp8). The block is K·cdiv(state, K·token_bytes) with
// K the chosen backend's alignment (_align_hybrid_block_size, 0.20+: the smallest kernel block size).
TEST(HybridBlockAlignment, FollowsTheChosenBackendsKernelBlockSizes) {
  // B200, FLASHINFER_MLA kernels [32, 64] → 32: 32·cdiv(2170880, 36864) = 32·59 = 1888. Under 0.17
  // the backend forced 64: 64·cdiv(2170880, 73728) = 64·30 = 1920.
  const FitResult b200 = run("moonshotai/Kimi-Linear-48B-A3B-Instruct", "b200", tp(1), "0.22");
  EXPECT_EQ(b200.attention_backend, "FLASHINFER_MLA");
  EXPECT_EQ(b200.block_size, 1888);
  EXPECT_EQ(run("moonshotai/Kimi-Linear-48B-A3B-Instruct", "b200", tp(1), "0.17").block_size, 1920);
  // H100 with an fp8 cache takes FLASHMLA (kernel 64): 64·cdiv(1085440, 64·576) = 64·30 = 1920, where a
  // 16-token unit would give 16·cdiv(1085440, 9216) = 1888.
  Deployment fp8 = tp(2);
  fp8.kv_cache_dtype = KvCacheDtypeChoice::kFp8;
  const FitResult flashmla = run("moonshotai/Kimi-Linear-48B-A3B-Instruct", "h100", fp8, "0.22");
  EXPECT_EQ(flashmla.attention_backend, "FLASHMLA");
  EXPECT_EQ(flashmla.block_size, 1920);
  // bf16 on H100: FLASH_ATTN_MLA, multiples of 16 from 0.18: 16·cdiv(1085440, 16·1152) = 944.
  // A --block-size below it is raised to it; one above is kept (cache_config.block_size < attn_block_size).
  Deployment small = tp(2);
  small.block_size = 16;
  EXPECT_EQ(run("moonshotai/Kimi-Linear-48B-A3B-Instruct", "h100", small, "0.22").block_size, 944);
  Deployment large = tp(2);
  large.block_size = 2048;
  EXPECT_EQ(run("moonshotai/Kimi-Linear-48B-A3B-Instruct", "h100", large, "0.22").block_size, 2048);
}

// DeepSeek-V3.2: the first non-SSM layer registered is the indexer cache, whose backend supports only
// 64 (update_block_size_for_backend / _find_non_ssm_backend, 0.18+). 61 layers x (1152 MLA + 132
// indexer) B = 78324 B per token; one block 64 x 78324 B.
TEST(SparseMla, BlockSizeComesFromTheIndexerBackend) {
  const FitResult r = run("deepseek-ai/DeepSeek-V3.2", "h200", tp(8), "0.22");
  EXPECT_EQ(r.block_size, 64);
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 61 * (1152 + 132));
  EXPECT_EQ(r.binding_worker().kv.block_bytes().count(), 64 * 78324);
  // A user block of 32 is not a multiple of the kernel's 64: no backend, vLLM does not start (0.18+);
  // 0.17 forced 64 whatever the flag.
  Deployment b32 = tp(8);
  b32.block_size = 32;
  EXPECT_FALSE(run("deepseek-ai/DeepSeek-V3.2", "h200", b32, "0.22").vllm_would_start);
  const FitResult v017 = run("deepseek-ai/DeepSeek-V3.2", "h200", b32, "0.17");
  EXPECT_TRUE(v017.vllm_would_start);
  EXPECT_EQ(v017.block_size, 64);
}

// Python's round(x, 2) / "%.2f" rounds the exact binary value, ties to even: 7.125 GiB is exactly
// representable, so it prints "7.12"; 7.135 GiB is not (its double is above the tie) and prints "7.14".
TEST(PythonRounding, GibTextsRoundTiesToEven) {
  EXPECT_EQ(format_vllm_gib(Bytes(7 * (std::int64_t{1} << 30) + (std::int64_t{1} << 27)), true), "7.12");
  EXPECT_EQ(format_vllm_gib(Bytes(7 * (std::int64_t{1} << 30) + 3 * (std::int64_t{1} << 27)), true), "7.38");  // 7.375
  EXPECT_EQ(format_two_decimals(0.125), "0.12");
  EXPECT_EQ(format_two_decimals(0.375), "0.38");
  EXPECT_EQ(format_two_decimals(2.675), "2.67");  // the double is 2.67499999...
  EXPECT_EQ(format_vllm_gib(Bytes(std::int64_t{123} << 27), false), "15.38");   // format_gib: 15.375 → 15.38
  EXPECT_EQ(format_vllm_gib(Bytes(std::int64_t{3} << 29), false), "1.5");     // trailing zero dropped
}

// --max-model-len auto (0.14+, _auto_fit_max_model_len): the incident's bf16 KV (70272 B per token, 61
// MLA layers x 1152 B, blocks of 16 = 1124352 B) does not hold 262144 tokens; vLLM lowers the length to
// the largest whose cdiv(L, 16) blocks fit and starts with it.
TEST(AutoFit, LowersTheLengthAndStarts) {
  Deployment d = tp(8);
  d.gpu_memory_utilization = 0.9;
  d.kv_cache_dtype = KvCacheDtypeChoice::kBFloat16;
  d.max_model_len_auto = true;
  const FitResult r = run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d, "0.22");
  EXPECT_TRUE(r.auto_fitted);
  EXPECT_TRUE(r.fits);
  const Bytes memory = r.binding_worker().check_memory;
  const std::int64_t blocks = memory.count() / 1124352;
  EXPECT_EQ(r.judged_max_model_len, blocks * 16);  // the largest multiple of 16 within the memory
  EXPECT_LT(r.judged_max_model_len, 262144);
  // 0.13 has no auto-fit: `auto` is an argparse error there.
  test::expect_input_error([&] { (void)(run("nvidia/Kimi-K2.5-NVFP4", "rtx-pro-6000", d, "0.13")); }, "--max-model-len auto: vLLM 0.13 has no auto-fit");
}

// VllmConfig validation (0.17+, #34445): in align mode the block may not exceed max_num_batched_tokens.
// Qwen3-Next at TP4 aligns its block to 272 (above); 256 batched tokens are fewer.
TEST(AlignMode, BlockAboveTheBatchStopsVllm) {
  Deployment d = tp(4);
  d.enable_prefix_caching = true;
  d.max_num_batched_tokens = 256;
  const FitResult r = run("Qwen/Qwen3-Next-80B-A3B-Instruct", "h100", d, "0.22");
  EXPECT_FALSE(r.vllm_would_start);
  EXPECT_NE(r.start_blocker.find("block_size (272) must be <= max_num_batched_tokens (256)"), std::string::npos)
      << r.start_blocker;
  EXPECT_FALSE(r.fits);
  d.enable_prefix_caching = false;  // mode none: no such limit
  EXPECT_TRUE(run("Qwen/Qwen3-Next-80B-A3B-Instruct", "h100", d, "0.22").vllm_would_start);
}

// NVFP4 KV (0.21+, FLASHINFER on compute capability 10): per head and token, 128 e2m1 values (64 B)
// plus one fp8 scale per 16 (8 B), for K and V: 144 B. Llama-3.1-8B: 32 layers x 8 KV heads x 144 B.
TEST(KvDtypes, Nvfp4PageHoldsValuesAndScales) {
  Deployment d;
  d.kv_cache_dtype = KvCacheDtypeChoice::kNvfp4;
  const FitResult r = run("meta-llama/Llama-3.1-8B", "b200", d, "0.22");
  EXPECT_TRUE(r.vllm_would_start);
  EXPECT_EQ(r.attention_backend, "FLASHINFER");
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 32 * 8 * 144);
  // Hopper has no NVFP4 attention kernel; 0.20 accepts the value (#37332) but FlashInfer only runs it
  // from 0.21 (#40177); 0.19 does not know it (CacheDType).
  EXPECT_FALSE(run("meta-llama/Llama-3.1-8B", "h100", d, "0.22").vllm_would_start);
  EXPECT_FALSE(run("meta-llama/Llama-3.1-8B", "b200", d, "0.20").vllm_would_start);
  test::expect_input_error([&] { (void)(run("meta-llama/Llama-3.1-8B", "b200", d, "0.19")); }, "--kv-cache-dtype: vLLM 0.19 does not accept \"nvfp4\"");
}

// int8_per_token_head (0.20+, TRITON_ATTN only): 128 int8 values + one fp32 scale per head and token,
// for K and V (AttentionSpec.real_page_size_bytes adds 2 x block x heads x 4 B): 264 B per head.
TEST(KvDtypes, PerTokenHeadAddsAScalePerVector) {
  Deployment d;
  d.kv_cache_dtype = KvCacheDtypeChoice::kInt8PerTokenHead;
  const FitResult r = run("meta-llama/Llama-3.1-8B", "h100", d, "0.22");
  EXPECT_EQ(r.attention_backend, "TRITON_ATTN");
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 32 * 8 * 2 * (128 + 4));
}

// gpt-oss-20b: 24 layers alternating sliding window 128 and full attention, 8 KV heads of 64, bf16:
// 2048 B per token per layer. With the hybrid manager only the 12 full layers grow with the length;
// --disable-hybrid-kv-cache-manager makes the sliding layers full (unify_hybrid_kv_cache_specs).
TEST(HybridManager, OffMakesSlidingLayersHoldTheWholeLength) {
  const FitResult on = run("openai/gpt-oss-20b", "h100", Deployment{}, "0.22");
  EXPECT_EQ(on.binding_worker().kv.bytes_per_token().count(), 12 * 2048);
  Deployment off;
  off.disable_hybrid_kv_cache_manager = true;
  const FitResult r = run("openai/gpt-oss-20b", "h100", off, "0.22");
  EXPECT_FALSE(r.hybrid_kv_cache_manager);
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 24 * 2048);
  // 131072 tokens: cdiv(131072, 16) = 8192 blocks of 16 x 24 x 2048 B.
  EXPECT_EQ(r.needed.count(), std::int64_t{8192} * 16 * 24 * 2048);
  // A connector without hybrid support turns it off too (0.21+: SupportsHMA connectors keep it).
  Deployment lmcache;
  lmcache.kv_connector = "LMCacheConnectorV1";
  EXPECT_FALSE(run("openai/gpt-oss-20b", "h100", lmcache, "0.22").hybrid_kv_cache_manager);
  Deployment nixl;
  nixl.kv_connector = "NixlConnector";
  EXPECT_TRUE(run("openai/gpt-oss-20b", "h100", nixl, "0.22").hybrid_kv_cache_manager);
  // Mamba layers cannot become full attention: vLLM refuses.
  Deployment mamba_off = tp(4);
  mamba_off.disable_hybrid_kv_cache_manager = true;
  test::expect_input_error([&] { (void)(run("Qwen/Qwen3-Next-80B-A3B-Instruct", "h100", mamba_off, "0.22")); }, "Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one unified type");
}

// --num-gpu-blocks-override: the allocation uses the count; from 0.21 the memory check and the length
// search use override x block bytes as the memory (#39726), before that the profiled memory.
// Llama-3.1-8B bf16: 131072 B per token, 2 MiB per block; 131072 tokens need 8192 blocks.
TEST(BlocksOverride, SetsTheMemoryFrom021) {
  Deployment d;
  d.num_gpu_blocks_override = 1000;
  const FitResult v020 = run("meta-llama/Llama-3.1-8B", "h100", d, "0.20");
  EXPECT_EQ(v020.num_blocks, 1000);
  EXPECT_TRUE(v020.kv_fits);  // the profiled ~55 GiB hold 8192 blocks
  const FitResult v021 = run("meta-llama/Llama-3.1-8B", "h100", d, "0.21");
  EXPECT_EQ(v021.num_blocks, 1000);
  EXPECT_FALSE(v021.kv_fits);                  // 1000 blocks < 8192
  EXPECT_EQ(v021.max_model_len, 1000 * 16);    // cdiv(L, 16) ≤ 1000
}

// --kv-cache-dtype-skip-layers (0.19+): the listed layers keep the model dtype. Llama-3.1-8B fp8 with
// layers 0 and 31 skipped: 30 x 8 x 128 x 2 x 1 B + 2 x 8 x 128 x 2 x 2 B = 61440 + 8192 B per token.
TEST(SkipLayers, ListedLayersKeepTheModelDtype) {
  Deployment d;
  d.kv_cache_dtype = KvCacheDtypeChoice::kFp8;
  d.kv_cache_dtype_skip_layers = {"0", "31"};
  const FitResult r = run("meta-llama/Llama-3.1-8B", "h100", d, "0.19");
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 61440 + 8192);
  test::expect_input_error([&] { (void)(run("meta-llama/Llama-3.1-8B", "h100", d, "0.18")); }, "--kv-cache-dtype-skip-layers: vLLM 0.18 has no such option");
}

// MXFP4 MoE weights follow the backend the version picks on the GPU. gpt-oss-20b on H100 under 0.19
// runs Triton with triton_kernels v3.6 padding; vLLM logged "Model loading took 13.64 GiB" (vo-080).
TEST(Mxfp4, TritonPaddingMatchesTheLoggedWeights) {
  const FitResult r = run("openai/gpt-oss-20b", "h100", Deployment{}, "0.19");
  EXPECT_NEAR(to_gib(r.binding_worker().weights.total), 13.64, 0.03);
}

// AWQ groups of 128 over Qwen2.5-72B's 29568-wide MLP: down_proj holds 14784, 7392, 3696 inputs per rank
// at TP 2, 4, 8, none a multiple of 128. AWQ-Marlin rejects the layer, the AWQ fallback raises
// (awq.py AWQLinearMethod.create_weights).
TEST(QuantizedGroups, RowParallelInputsMustHoldWholeGroups) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/qwen2.5-72b-awq", test::configs());
  const auto profile = load_vllm_profile("0.22", test::configs());
  const GpuSpec h100 = load_gpu_preset("h100", test::configs());
  EXPECT_NO_THROW(fit(m, h100, tp(1), profile));
  for (const std::int64_t size : {2, 4, 8}) {
    try {
      (void)fit(m, h100, tp(size), profile);
      ADD_FAILURE() << "TP " << size << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("The input size is not aligned with the quantized weight shape"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace gpubudget
