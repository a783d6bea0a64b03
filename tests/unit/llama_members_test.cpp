// Llama-family members whose attention differs in one detail (src/model/families/llama.cpp traits), by hand from
// their vLLM model files. Their configs are assembled from recorded copies (tests/data/configs/*/
// source.json says from where); no verbatim config.json of either was found.
#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

FitResult fit_on_h100(const std::string& dir, std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  return fit(load_model(test::data_dir() + "/configs/" + dir, test::configs()), load_gpu_preset("h100", test::configs()),
             d, load_vllm_profile("", test::configs()));
}

// Seed-OSS-36B (seed_oss.py: q/k/v biased, o_proj not; head_dim 128 from the config): H 5120, 64 layers,
// 80 heads / 8 KV heads, I 27648, vocabulary 155136 (a multiple of 64), untied. Per layer:
// qkv (80 + 16) x 128 x 5120 + bias 12,288 + o 5120 x 10240 + MLP 3 x 27648 x 5120 + norms 2 x 5120 =
// 540,039,168; with embedding and head 2 x 794,296,320 and the final norm: 36,151,104,512 parameters
// (the "params/index" a snapshot of the repository records): 72,302,209,024 B. Per GPU add the RoPE
// cache 524,288 x 128 x 2 = 134,217,728 B. TP 8: per layer (10 + 2) x 128 x 5120 + 1,536 + 5120 x 1280
// + 3 x 3456 x 5120 + 10,240 = 67,513,856; embedding and head 2 x 19,392 x 5120; 4,519,465,984
// parameters = 9,038,931,968 B + the RoPE cache.
TEST(LlamaMembers, SeedOss) {
  const FitResult tp1 = fit_on_h100("seed-oss-36b-instruct", 1);
  EXPECT_EQ(checkpoint_bytes(load_model(test::data_dir() + "/configs/seed-oss-36b-instruct", test::configs())).count(),
            72'302'209'024LL);
  EXPECT_EQ(tp1.binding_worker().weights.total.count(), 72'302'209'024LL + 134'217'728LL);
  EXPECT_EQ(fit_on_h100("seed-oss-36b-instruct", 8).binding_worker().weights.total.count(),
            9'038'931'968LL + 134'217'728LL);
  // KV: 2 x 8 x 128 x 2 = 4,096 B/token/layer at TP 1, x 64 layers; 512 at TP 8.
  EXPECT_EQ(tp1.binding_worker().kv.bytes_per_token().count(), 64 * 4096);
  EXPECT_EQ(fit_on_h100("seed-oss-36b-instruct", 8).binding_worker().kv.bytes_per_token().count(), 64 * 512);
  EXPECT_EQ(tp1.judged_max_model_len, 524'288);
}

// Hunyuan-7B (hunyuan_v1.py: per-head query_layernorm / key_layernorm [128] with use_qk_norm, tied):
// H 4096, 32 layers, 32 / 8 heads of 128, I 14336, vocabulary 128167 (padded to 128192 per GPU). Per
// layer: attention 41,943,040 + MLP 176,160,768 + norms 8,192 + q/k norms 256 = 218,112,256; with the
// embedding 128167 x 4096 and the final norm: 7,504,568,320 parameters = 15,009,136,640 B (the shards
// of revision 01f52507 total about 15.02 GB). Per GPU the padded rows add 25 x 4096 x 2 = 204,800 B
// and the RoPE cache 262,144 x 128 x 2 = 67,108,864 B. TP 8: per layer 5,242,880 + 22,020,096 + 8,448
// = 27,271,424; embedding 16,024 x 4096; 938,323,968 parameters = 1,876,647,936 B + the RoPE cache.
TEST(LlamaMembers, HunyuanDense) {
  EXPECT_EQ(checkpoint_bytes(load_model(test::data_dir() + "/configs/hunyuan-7b-instruct", test::configs())).count(),
            15'009'136'640LL);
  const FitResult tp1 = fit_on_h100("hunyuan-7b-instruct", 1);
  EXPECT_EQ(tp1.binding_worker().weights.total.count(), 15'009'136'640LL + 204'800LL + 67'108'864LL);
  EXPECT_EQ(fit_on_h100("hunyuan-7b-instruct", 8).binding_worker().weights.total.count(),
            1'876'647'936LL + 67'108'864LL);
  EXPECT_EQ(tp1.binding_worker().kv.bytes_per_token().count(), 32 * 4096);
}

// Hunyuan-A13B (hunyuan_v1.py HunYuanSparseMoeBlock): every layer MoE, 64 experts of 3072 (per-layer
// lists), router mlp.gate.wg [64, 4096] in the model dtype, a shared MLP of intermediate_size 3072 x
// num_shared_expert 1. Per layer: attention 41,943,040 + experts 64 x 3 x 3072 x 4096 = 2,415,919,104
// + shared 37,748,736 + router 262,144 + norms 8,448 = 2,495,881,472; x 32 + the embedding
// 524,972,032 + 4,096 = 80,393,183,232 parameters ("80B total"): 160,786,366,464 B in bf16 (the
// checkpoint may keep wg in float32, as transformers builds it: then 16,777,216 B more on disk). Per
// GPU + 204,800 B of padded vocabulary rows (this assembled config has no max_position_embeddings, so
// no RoPE cache). TP 8: per layer 5,242,880 + 301,989,888 + 4,718,592 + 262,144 + 8,448 = 312,221,952;
// x 32 + 16,024 x 4096 + 4,096 = 10,056,740,864 parameters = 20,113,481,728 B.
TEST(LlamaMembers, HunyuanMoe) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/hunyuan-a13b-instruct", test::configs());
  EXPECT_EQ(m.num_experts_per_token, 8);
  EXPECT_EQ(checkpoint_bytes(m).count(), 160'786'366'464LL);
  EXPECT_EQ(fit_on_h100("hunyuan-a13b-instruct", 1).binding_worker().weights.total.count(), 160'786'366'464LL + 204'800LL);
  EXPECT_EQ(fit_on_h100("hunyuan-a13b-instruct", 8).binding_worker().weights.total.count(), 20'113'481'728LL);
}

// Phi-3.5-MoE (phimoe.py): q/k/v and o_proj biased whatever attention_bias says, LayerNorms with a
// bias, 16 experts of 6400 in every layer (w1/w2/w3), a biased untied head; H 4096, 32 layers, 32 / 8
// heads of 128, vocabulary 32064 (a multiple of 64). Per layer: qkv 25,165,824 + bias 6,144 + o
// 16,777,216 + bias 4,096 + router 65,536 + experts 16 x 3 x 6400 x 4096 = 1,258,291,200 + four norm
// vectors 16,384 = 1,300,326,400; x 32 + embedding and head 2 x 131,334,144 + head bias 32,064 + final
// LayerNorm 8,192 = 41,873,153,344 parameters ("41.9B"): 83,746,306,688 B. Per GPU the longrope cache
// holds the short and long tables: (4096 + 131072) x 128 x 2 = 34,603,008 B. TP 8: per layer qkv
// 3,145,728 + 768 + o 2,097,152 + 4,096 (row bias, whole) + 65,536 + 157,286,400 + 16,384 = 162,616,064;
// x 32 + 2 x 4008 x 4096 + 4008 + 8,192 = 5,236,559,784 parameters = 10,473,119,568 B.
// KV: no per-layer window, so every layer takes cache_config.sliding_window 131072 (not interleaved).
TEST(LlamaMembers, PhiMoe) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/phi-3.5-moe-instruct", test::configs());
  EXPECT_TRUE(m.unmodelled_config_keys.empty());
  EXPECT_EQ(checkpoint_bytes(m).count(), 83'746'306'688LL);
  EXPECT_EQ(fit_on_h100("phi-3.5-moe-instruct", 1).binding_worker().weights.total.count(),
            83'746'306'688LL + 34'603'008LL);
  EXPECT_EQ(fit_on_h100("phi-3.5-moe-instruct", 8).binding_worker().weights.total.count(),
            10'473'119'568LL + 34'603'008LL);
  for (const auto& layer : m.layers) {
    EXPECT_EQ(layer.attention.kind, AttentionKind::kSlidingWindow);
    EXPECT_EQ(layer.attention.window, 131'072);
  }
}

// ERNIE-4.5-21B-A3B (ernie45_moe.py): H 2560, 28 layers, 20 / 4 heads of 128, tied vocabulary 103424;
// layer 0 dense (12288), layers 1-27 MoE: 64 experts of 1536, shared experts 2 x 1536, router [64, 2560]
// and its correction bias [64] in float32 (vLLM's params_dtype). Per GPU at TP 1, parameters:
// attention (20 + 8) x 128 x 2560 + 2560 x 2560 = 15,728,640 x 28; dense MLP 94,371,840; per MoE layer
// experts 754,974,720 + shared 23,592,960; norms 5,120 x 28 + 2,560; embedding 264,765,440: 21,821,012,480
// in bf16 plus 27 x (163,840 + 64) in float32 = 43,659,726,592 B, + the RoPE cache 131072 x 128 x 2 =
// 33,554,432 B. The checkpoint (its routers assumed in bf16, the [1, 64] statics in float32) also holds
// one MTP layer vLLM skips: a dense decoder layer 110,105,600 + two norms 5,120 + mtp_linear_proj
// 2560 x 5120 = 123,217,920 parameters: 2 x (21,821,012,480 + 27 x 163,840 + 123,217,920) + 27 x 64 x 4
// = 43,897,315,072 B. TP 8 is refused (20 heads); TP 4 per GPU: 10,928,426,752 B + the RoPE cache.
TEST(LlamaMembers, ErnieMoe) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/ernie-4.5-21b-a3b-pt", test::configs());
  EXPECT_EQ(m.skipped_mtp_layers, 1);
  EXPECT_FALSE(m.layers[0].is_moe);
  EXPECT_TRUE(m.layers[1].is_moe);
  EXPECT_EQ(checkpoint_bytes(m).count(), 43'897'315'072LL);
  EXPECT_EQ(fit_on_h100("ernie-4.5-21b-a3b-pt", 1).binding_worker().weights.total.count(),
            43'659'726'592LL + 33'554'432LL);
  EXPECT_EQ(fit_on_h100("ernie-4.5-21b-a3b-pt", 4).binding_worker().weights.total.count(),
            10'928'426'752LL + 33'554'432LL);
  test::expect_input_error([] { (void)fit_on_h100("ernie-4.5-21b-a3b-pt", 8); }, "num_attention_heads 20");
}

// ERNIE-4.5-0.3B (vLLM's Llama): H 1024, 18 layers, 16 / 2 heads of 128, I 3072, tied vocabulary 103424.
// Per layer (16 + 4) x 128 x 1024 + 1024 x 2048 + 3 x 3072 x 1024 + 2,048 = 14,157,824; x 18 +
// 105,906,176 + 1,024 = 360,748,032 parameters ("0.36B") = 721,496,064 B. TP 4 (2 KV heads: one,
// replicated, per rank): per layer (4 + 2) x 128 x 1024 + 1024 x 512 + 3 x 768 x 1024 + 2,048 =
// 3,672,064; x 18 + 25,856 x 1024 + 1,024 = 92,574,720 parameters = 185,149,440 B (+ the RoPE cache).
TEST(LlamaMembers, ErnieDense) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/ernie-4.5-0.3b-pt", test::configs());
  EXPECT_EQ(checkpoint_bytes(m).count(), 721'496'064LL);
  EXPECT_EQ(fit_on_h100("ernie-4.5-0.3b-pt", 4).binding_worker().weights.total.count(), 185'149'440LL + 33'554'432LL);
}

}  // namespace
}  // namespace gpubudget
