// Step-3.5 (src/model/families/step3p5.cpp) by hand from vLLM's step3p5.py and its config class, on the bundled
// Step-3.5-Flash config (configs/models/stepfun-ai__Step-3.5-Flash/source.json: no safetensors index total
// was found; the Hub page lists 199B parameters).
#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

ModelSpec flash() { return test::bundled("stepfun-ai/Step-3.5-Flash"); }

FitResult fit_on_b300(std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  return fit(flash(), load_gpu_preset("b300", test::configs()), d, load_vllm_profile("", test::configs()));
}

// H 4096, 45 layers, head_dim 128, 8 KV groups; full layers (i % 4 == 0, 12 of them) 64 query heads,
// sliding ones (33) 96 (attention_other_setting); every layer q/k norms [128] and a head-wise gate
// g_proj [heads, H]. Parameters (bf16 unless said):
//   full attention (64 + 16) x 128 x 4096 + 4096 x 8192 + 64 x 4096 + 256 = 75,759,872
//   sliding attention (96 + 16) x 128 x 4096 + 4096 x 12288 + 96 x 4096 + 256 = 109,445,376
//   dense MLP (layers 0-2) 3 x 11264 x 4096 = 138,412,032; two norms 8,192 per layer
//   MoE (layers 3-44): 288 experts x 3 x 1280 x 4096 = 4,529,848,320, shared expert 3 x 1280 x 4096 =
//   15,728,640, router float32 288 x 4096 (+ bias 288)
//   embedding and head 2 x 128,896 x 4096, final norm 4096: 196,956,130,368 parameters in all.
// Bytes at TP 1 (router and bias 4 B, the rest 2 B): 394,011,375,360; at TP 8 (router replicated, experts
// split by their intermediate size): 49,425,544,960. RoPE: full layers theta 5e6, rotary 64 (factor 0.5,
// llama3 scaling), sliding layers theta 1e4, rotary 128: 262,144 x (64 + 128) x 2 = 100,663,296 B.
// The checkpoint adds the 3 MTP layers (sliding attention, dense MLP, eh_proj [4096, 8192], three norms,
// an output head [128896, 4096]): 809,390,336 parameters each; 199,384,301,376 parameters (the Hub's
// "199B"), 398,867,717,376 B with the routers counted in float32 as vLLM holds them.
TEST(Step3p5, WeightsByHand) {
  EXPECT_EQ(fit_on_b300(1).binding_worker().weights.total.count(), 394'011'375'360LL + 100'663'296LL);
  EXPECT_EQ(fit_on_b300(8).binding_worker().weights.total.count(), 49'425'544'960LL + 100'663'296LL);
  EXPECT_EQ(checkpoint_bytes(flash()).count(), 398'867'717'376LL);
  EXPECT_TRUE(flash().unmodelled_config_keys.empty());
}

// KV (Step3p5Attention: max(1, 8 / tp) KV heads of 128, K and V, bf16): 4096 B/token per layer at TP 1,
// 512 at TP 8; the 12 full layers grow with length, the 33 sliding ones keep 512 tokens. Same page for
// all: groups of 12 (33 >= 1.5 x 12), the sliding layers in 3 -> 4 groups. Need at TP 8 for
// L = 262,144, T = 8192: 12 x 16 x 512 x (cdiv(L, 16) + 3 x (cdiv(511 + T, 16) + 1)) =
// 98,304 x (16,384 + 1,635) = 1,771,339,776 B.
TEST(Step3p5, KvByHand) {
  EXPECT_EQ(fit_on_b300(1).binding_worker().kv.bytes_per_token().count(), 12 * 4096);
  const FitResult r = fit_on_b300(8);
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 12 * 512);
  EXPECT_EQ(r.binding_worker().kv.groups.size(), 4u);
  EXPECT_EQ(r.judged_max_model_len, 262'144);
  EXPECT_EQ(r.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(r.needed.count(), 1'771'339'776LL);
}

}  // namespace
}  // namespace gpubudget
