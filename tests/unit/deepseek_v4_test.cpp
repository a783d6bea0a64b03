// DeepSeek-V4 (src/model/families/deepseek_v4.cpp, KvGrouping::kUniformGroups) by hand from vLLM's
// vllm/models/deepseek_v4/ and vllm/v1/core/kv_cache_utils.py (group_and_unify_kv_cache_specs,
// _get_kv_cache_groups_uniform_groups, _get_kv_cache_config_deepseek_v4, _max_memory_usage_bytes_from_groups),
// against the published checkpoint totals of DeepSeek-V4-Flash and DeepSeek-V4-Pro.
#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

ModelSpec flash() { return test::bundled("deepseek-ai/DeepSeek-V4-Flash"); }
ModelSpec pro() { return test::bundled("deepseek-ai/DeepSeek-V4-Pro"); }

Deployment fp8_kv(std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  d.kv_cache_dtype = KvCacheDtypeChoice::kFp8;
  return d;
}

FitResult fit_on(const ModelSpec& m, const std::string& gpu, const Deployment& d, const std::string& version = "") {
  return fit(m, load_gpu_preset(gpu, test::configs()), d, load_vllm_profile(version, test::configs()));
}

// The safetensors index of deepseek-ai/DeepSeek-V4-Flash (revision 60d8d707...) gives metadata.total_size
// 159,609,485,896 B; DeepSeek-V4-Pro (b5968e91...) 864,704,792,696 B (configs/models/*/source.json).
// Per tensor (Flash: H 4096, 43 layers, 64 heads of 512, q_lora 1024, o_lora 1024 x 8 groups, 256 experts
// of 2048, hc 4): fp8(o, i) = o·i + cdiv(o,128)·cdiv(i,128) (e8m0 scales, 1 B); wq_a fp8(1024, 4096), wkv
// fp8(512, 4096), wq_b fp8(32768, 1024), wo_a fp8(8192, 4096), wo_b fp8(4096, 8192); a ratio-r compressor
// ape 4·r·coff·512, wkv + wgate 2·2·coff·512·4096 (coff 2 for r 4); the C4 indexer; hc 2 x (4·24·16384 +
// 4·24 + 12); gate 2·256·4096; tid2eid int64 129280 x 6 on layers 0-2, bias 4·256 elsewhere; experts
// 256 x (2·(2048·2048 + 2048·128) + 4096·1024 + 4096·64); embed and head 2 x 129280 x 4096 x 2; the MTP
// layer with e_proj, h_proj fp8(4096, 4096), three norms and hc_head.
TEST(DeepseekV4, CheckpointBytesArePublishedTotals) {
  EXPECT_EQ(checkpoint_bytes(flash()).count(), 159'609'485'896LL);
  EXPECT_EQ(checkpoint_bytes(pro()).count(), 864'704'792'696LL);
  EXPECT_TRUE(flash().unmodelled_config_keys.empty());
  EXPECT_TRUE(pro().unmodelled_config_keys.empty());
}

// vLLM per rank (nvidia/model.py): tid2eid as int32 (−9,308,160 B at TP 1), attn_sink padded to 64 heads,
// fused_wqa_wkv, the compressors, indexers, gate and hc replicated; wq_b, wo_a, shared experts column-,
// wo_b row-parallel; MXFP4 experts 256 x 3·I/t·H·17/32 (no padding for Flash at TP <= 8: I/t >= 256).
//   TP 1: 156,006,389,980; TP 8: 20,644,900,892 B of parameters.
// Buffers: two fp32 RoPE caches (rope_theta and compress_rope_theta) of 1,048,576 x 64 = 536,870,912 B;
// per batched token (B = 8192 on an H100) topk_indices 512 x 4 and the MTP hidden buffer 16384 x 2 =
// 285,212,672 B.
TEST(DeepseekV4, WeightsPerGpuByHand) {
  const Bytes buffers(536'870'912LL + 285'212'672LL);
  EXPECT_EQ(fit_on(flash(), "h200", fp8_kv(1)).binding_worker().weights.total, Bytes(156'006'389'980LL) + buffers);
  EXPECT_EQ(fit_on(flash(), "h100", fp8_kv(8)).binding_worker().weights.total, Bytes(20'644'900'892LL) + buffers);
  // Expert parallel over 8: 32 whole experts per rank, the same bytes.
  Deployment ep = fp8_kv(8);
  ep.enable_expert_parallel = true;
  EXPECT_EQ(fit_on(flash(), "h100", ep).binding_worker().weights.total, Bytes(20'644'900'892LL) + buffers);
}

// Pro at TP 8 (H 7168, 61 layers all compressed: one RoPE cache of 268,435,456 B; B 8192 x (1024 x 4 +
// 28672 x 2) = 503,316,480 B): 109,447,720,100 B of parameters on an H100, whose Marlin MXFP4 backend
// keeps I/t = 384 (a multiple of 128) and H (a multiple of 256). A B200's TRT-LLM backend rounds I/t up
// to 512 (oracle/mxfp4.py): the routed experts grow by 512/384, 102,756,777,984 -> 137,009,037,312 B.
TEST(DeepseekV4, ProExpertsArePaddedPerBackend) {
  const FitResult h100 = fit_on(pro(), "h100", fp8_kv(8));
  EXPECT_EQ(h100.binding_worker().weights.total.count(), 109'447'720'100LL + 268'435'456LL + 503'316'480LL);
  const FitResult b200 = fit_on(pro(), "b200", fp8_kv(8));
  EXPECT_EQ(b200.binding_worker().weights.total - h100.binding_worker().weights.total,
            Bytes(137'009'037'312LL - 102'756'777'984LL));
}

// KV specs (all independent of TP): every layer's sliding window, 584-byte entries, 64-token blocks,
// window 128: page 64 x 584 = 37,376 -> 37,440 (576-aligned). Ratio 4: the compressed cache 256/4 x 584 ->
// 37,440, the indexer keys 64 x 132 = 8,448 -> 8,640, two compressor states (fp32, 4-token blocks, window
// 8) of 4 x 8192 -> 32,832 and 4 x 2048 -> 8,640. Ratio 128: 2 x 584 -> 1,728 and a state of 8 x 4096 ->
// 32,832 (8-token blocks, window 128).
// Groups: full MLA (21 + 21 + 20 layers), SWA (43), C4 states (21 + 21), C128 states (20); tuples per group
// [21, 43, 21, 20], _approximate_gcd(lower 21) = 22; 32,832 pages padded to 37,440; SWA split 22 + 21.
// A block: 22 x (1,728 + 8,640 + 37,440) = 1,051,776 B.
// Need for L = 1,048,576, B = 8192: [cdiv(L, 256) = 4096, cdiv(127 + B, 64) + 1 = 131 (x 2),
// cdiv(7 + B, 4) + 1 = 2051, cdiv(127 + B, 8) + 1 = 1041] = 7450 blocks = 7,835,731,200 B.
TEST(DeepseekV4, KvGroupsAndNeedByHand) {
  const FitResult r = fit_on(flash(), "h100", fp8_kv(8));
  const KvCacheLayout& kv = r.binding_worker().kv;
  ASSERT_EQ(kv.grouping, KvGrouping::kUniformGroups);
  EXPECT_EQ(kv.groups.size(), 5u);
  EXPECT_EQ(kv.layer_tuples, 22);
  EXPECT_EQ(kv.layer_tuple_bytes.count(), 47'808);
  EXPECT_EQ(kv.block_bytes().count(), 1'051'776);
  EXPECT_EQ(kv.bytes_per_token().count(), 4'109);  // 1,051,776 / 256, rounded up
  EXPECT_EQ(r.block_size, 256);
  EXPECT_EQ(r.judged_max_model_len, 1'048'576);
  EXPECT_EQ(r.needed.count(), 7'835'731'200LL);
  EXPECT_EQ(kv.needed(131'072).count(), 3'866LL * 1'051'776);  // [512, 131, 131, 2051, 1041]
  EXPECT_EQ(r.num_blocks, r.binding_worker().kv_cache / Bytes(1'051'776));
  // Concurrency: cdiv(Σ_g pages_g x Σ pages of g, Σ pages of the full-MLA group 1,002,240) = 7065 blocks.
  EXPECT_EQ(kv.blocks_per_request(1'048'576), 7'065);
  EXPECT_TRUE(r.fits);
  // Pro: [31, 61, 30, 31] tuples -> 31; block 31 x 47,808 = 1,482,048 B.
  EXPECT_EQ(fit_on(pro(), "b200", fp8_kv(8)).binding_worker().kv.block_bytes().count(), 1'482'048);
}

// attention.py asserts an fp8 cache dtype: `auto` does not resolve to one for this checkpoint (no
// kv_cache_quant_algo), so vLLM stops; FlashMLA sparse runs on SM90 and SM100 only.
TEST(DeepseekV4, WhatVllmRefuses) {
  Deployment autodtype = fp8_kv(8);
  autodtype.kv_cache_dtype = KvCacheDtypeChoice::kAuto;
  const FitResult a = fit_on(flash(), "h100", autodtype);
  EXPECT_FALSE(a.vllm_would_start);
  EXPECT_NE(a.start_blocker.find("DeepseekV4 only supports fp8 kv-cache format for now, got auto"), std::string::npos);
  EXPECT_EQ(a.needed.count(), 7'835'731'200LL);  // the budget is still computed
  const FitResult sm120 = fit_on(flash(), "rtx-pro-6000", fp8_kv(8));
  EXPECT_FALSE(sm120.vllm_would_start);
  EXPECT_NE(sm120.start_blocker.find("DEEPSEEK_V4_FLASHMLA_SPARSE"), std::string::npos);
  // o_groups 8: TP 16 leaves a rank no whole output group.
  test::expect_input_error([&] { (void)(fit_on(flash(), "h100", fp8_kv(16))); }, "--tensor-parallel-size 16 does not divide them");
  // Before vLLM 0.20 there is no DeepSeek-V4.
  test::expect_input_error([&] { (void)(fit_on(flash(), "h100", fp8_kv(8), "0.19")); }, "DeepseekV4ForCausalLM: vLLM 0.19 has no implementation of it");
  EXPECT_NO_THROW(fit_on(flash(), "h100", fp8_kv(8), "0.20"));
  // Not modelled: other block sizes, pipeline stages, DCP (SlidingWindowSpec asserts dcp == 1).
  Deployment block = fp8_kv(8);
  block.block_size = 64;
  test::expect_input_error([&] { (void)(fit_on(flash(), "h100", block)); }, "--block-size 64: DeepseekV4ForCausalLM's caches are laid out for 256-token blocks");
  Deployment pp = fp8_kv(4);
  pp.pipeline_parallel_size = 2;
  test::expect_input_error([&] { (void)(fit_on(flash(), "h100", pp)); }, "DeepseekV4ForCausalLM with --pipeline-parallel-size 2");
  Deployment dcp = fp8_kv(8);
  dcp.decode_context_parallel_size = 2;
  test::expect_input_error([&] { (void)(fit_on(flash(), "h100", dcp)); }, "--decode-context-parallel-size 2: layer 0 has sliding-window attention");
}

// The profile run reserves the largest of the prefill gather 4096 x (cdiv(L, 4) + 128 + B) and the
// indexer gather 1320 x L + 1 MiB (at L = 1,048,576: 1,385,168,896 B), plus 512 MiB of logits beside it.
TEST(DeepseekV4, ProfileWorkspaceIsPartOfTheActivationPeak) {
  const FitResult r = fit_on(flash(), "h100", fp8_kv(8));
  const auto& o = r.binding_worker().overheads;
  EXPECT_EQ(o.workspace.count(), 1'385'168'896LL);
  EXPECT_EQ(o.workspace_transient.count(), 536'870'912LL);
  EXPECT_GE(o.activation_peak, o.workspace + o.workspace_transient);
  Deployment shorter = fp8_kv(8);
  shorter.max_model_len = 131'072;
  EXPECT_EQ(fit_on(flash(), "h100", shorter).binding_worker().overheads.workspace.count(), 174'063'616LL);
  EXPECT_FALSE(r.warnings.empty());
}

}  // namespace
}  // namespace gpubudget
