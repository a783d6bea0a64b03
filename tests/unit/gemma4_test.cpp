// Gemma 4 (src/model/families/gemma4.cpp) against the published checkpoints and vLLM's gemma4.py by hand.
#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

FitResult fit_on_h100(const std::string& id, std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  return fit(test::bundled(id), load_gpu_preset("h100", test::configs()), d, load_vllm_profile("", test::configs()));
}

// model.safetensors.index.json total_size of google/gemma-4-31B-it (revision 842da379...; 1188 tensors)
// and google/gemma-4-26B-A4B (the sum of both shard headers at revision 4d7ae49; 1013 tensors).
TEST(Gemma4, CheckpointBytesArePublishedTotals) {
  EXPECT_EQ(checkpoint_bytes(test::bundled("google/gemma-4-31B-it")).count(), 62'546'177'752LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("google/gemma-4-26B-A4B")).count(), 51'611'872'412LL);
}

// gemma-4-31B-it per GPU at TP 1 (gemma4.py, gemma4_mm.py), in parameters (bf16: x2):
//   embedding 262144 x 5376 (a multiple of 64, tied)                                   1,409,286,144
//   50 sliding layers: qkv (32 + 2x16) x 256 x 5376 + o 5376 x 8192 + q/k norms 2x256    132,121,088 each
//   10 full layers: qkv (32 + 2x4) x 512 x 5376 (k_eq_v: V allocated, loaded from k_proj)
//                   + o 5376 x 16384 + q/k norms 2x512                                   198,181,888 each
//   60 x (MLP 3 x 21504 x 5376 + four norms 4 x 5376 + layer_scalar 1)                   346,838,017 each
//   final norm 5,376; vision tower 569,550,384 (replicated); embed_vision 5376 x 1152 6,193,152
//   = 31,383,189,356 parameters = 62,766,378,712 B, plus the two RoPE caches in bf16,
//     262144 x (256 + 512) x 2 = 402,653,184 B                                          63,169,031,896 B
// The checkpoint lacks the 10 V slots (10 x 4 x 512 x 5376 = 110,100,480 parameters): 31,273,088,876
// parameters, the published 62,546,177,752 B.
TEST(Gemma4, WeightsPerGpuByHand) {
  EXPECT_EQ(fit_on_h100("google/gemma-4-31B-it", 1).binding_worker().weights.total.count(), 63'169'031'896LL);
  // TP 8: the text linears split (KV heads 16/8 = 2 sliding, 4 < 8 global: one replicated head), the
  // vision tower, norms and RoPE caches whole:
  //   embedding 1,409,286,144 / 8 = 176,160,768
  //   sliding: (4 + 2x2) x 256 x 5376 + 5376 x 1024 + 512 = 16,515,584 (x50 = 825,779,200)
  //   full: (4 + 2x1) x 512 x 5376 + 5376 x 2048 + 1024 = 27,526,144 (x10 = 275,261,440)
  //   60 x (3 x 2688 x 5376 + 21,505) = 60 x 43,373,569 = 2,602,414,140
  //   + 5,376 + 575,743,536 (vision and embed_vision) = 4,455,364,460 parameters = 8,910,728,920 B
  //   + 402,653,184 B of RoPE caches                                                  9,313,382,104 B
  EXPECT_EQ(fit_on_h100("google/gemma-4-31B-it", 8).binding_worker().weights.total.count(), 9'313'382'104LL);
}

// KV (vLLM Attention.get_kv_cache_spec; kv_cache_utils unify_kv_cache_spec_page_size and grouping):
//   TP 1, bf16: sliding 2 x 16 x 256 x 2 = 16,384 B/token (page 16 tokens = 262,144 B); full
//   2 x 4 x 512 x 2 = 8,192 B/token, its block doubled to 32 for the same page. 50 sliding + 10 full
//   layers -> 5 sliding groups + 1 full group of 10. One 262,144-token request with 8,192 batched
//   tokens: full cdiv(262144, 32) = 8,192 pages, each sliding group cdiv(min(1023 + 8192, 262144), 16)
//   + 1 = 577 pages: 10 x 262,144 x (8,192 + 5 x 577) = 29,037,690,880 B (vLLM's "27.04 GiB").
//   TP 8: both 2,048 B/token (global KV heads 4 < 8: one per rank), page 32,768 B at block 16:
//   10 x 32,768 x (16,384 + 5 x 577) = 6,314,065,920 B.
TEST(Gemma4, KvCacheByHand) {
  const FitResult tp1 = fit_on_h100("google/gemma-4-31B-it", 1);
  ASSERT_EQ(tp1.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(tp1.attention_backend, "TRITON_ATTN");  // Gemma4Config.verify_and_update_config
  EXPECT_EQ(tp1.binding_worker().kv.bytes_per_token().count(), 10 * 8192);
  EXPECT_EQ(tp1.binding_worker().kv.page_bytes.count(), 262'144);
  EXPECT_EQ(tp1.needed.count(), 29'037'690'880LL);
  const FitResult tp8 = fit_on_h100("google/gemma-4-31B-it", 8);
  EXPECT_EQ(tp8.binding_worker().kv.bytes_per_token().count(), 10 * 2048);
  EXPECT_EQ(tp8.needed.count(), 6'314'065'920LL);
  EXPECT_EQ(tp1.judged_max_model_len, 262'144);  // max_position_embeddings; no RoPE factor
  // The vision tower is whole on every rank (gemma4_mm.py builds it with transformers' AutoModel), so its
  // profile pass costs each rank the same at any TP.
  EXPECT_GT(tp1.binding_worker().overheads.encoder.pass.count(), 0);
  EXPECT_EQ(tp8.binding_worker().overheads.encoder.pass, tp1.binding_worker().overheads.encoder.pass);
}

// The NVFP4 checkpoint excludes every self_attn and the vision modules ("model.language_model.layers.N.
// self_attn*", transformers 5 names that vLLM maps to language_model.model.*): only the MLPs are
// NVFP4. Per layer MLP: 346,816,512 weights / 2 (packed) + / 16 (fp8 scales) + 3 fp32 global scales
// x (weight_scale_2, input_scale) = 173,408,256 + 21,676,032 + 24 = 195,084,312 B; the rest as bf16:
// 62,546,177,752 - 60 x 693,633,024 + 60 x 195,084,312 = 32,633,255,032 B.
TEST(Gemma4, Nvfp4QuantizesTheMlpsOnly) {
  EXPECT_EQ(checkpoint_bytes(test::bundled("nvidia/Gemma-4-31B-IT-NVFP4")).count(), 32'633'255'032LL);
}

}  // namespace
}  // namespace gpubudget
