// Falcon-H1 (src/model/families/falcon_h1.cpp) by hand from vLLM's falcon_h1.py and MambaMixer2. The config is
// assembled from recorded copies (tests/data/configs/falcon-h1-7b-base/source.json): no verbatim
// config.json or safetensors index of Falcon-H1 was found.
#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/mamba_state.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

ModelSpec falcon_h1_7b() { return load_model(test::data_dir() + "/configs/falcon-h1-7b-base", test::configs()); }

FitResult fit_on_h100(std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  return fit(falcon_h1_7b(), load_gpu_preset("h100", test::configs()), d, load_vllm_profile("", test::configs()));
}

// Falcon-H1-7B-Base: H 3072, 44 layers, each with attention (12 / 2 heads of 128, no bias), a Mamba2 mixer
// (d_ssm 3072, 24 heads of 128, 1 group, d_state 256, kernel 4, gated norm) and an MLP of 12288;
// vocabulary 130048 (a multiple of 64), untied. Per layer at TP 1, bytes (bf16):
//   qkv (12 + 4) x 128 x 3072 x 2 = 12,582,912; o 3072 x 1536 x 2 = 9,437,184
//   in_proj (2 x 3072 + 2 x 256 + 24) x 3072 x 2 = 41,041,920; conv1d (3072 + 512) x (4 + 1) x 2 = 35,840
//   A 24 x 4 (float32) = 96; D, dt_bias 2 x 48; norm 3072 x 2 = 6,144; out_proj 3072 x 3072 x 2 = 18,874,368
//   MLP 3 x 12288 x 3072 x 2 = 226,492,416; two norms 12,288; mup_vector 6680 x 2 = 13,360 (a buffer)
// Embedding and head 2 x 799,408,128, final norm 6,144, RoPE cache 262,144 x 128 x 2 = 67,108,864:
//   15,238,996,288 B per GPU. The checkpoint (A_log in bf16, no buffers): 15,171,297,472 B.
// TP 4, one group kept whole on every rank: in_proj (1536 + 512 + 6) x 3072 x 2 = 12,619,776; conv1d
// (768 + 512) x 5 x 2 = 12,800; mup_vector 2054 x 2 = 4,108; the rest split by 4: 3,999,105,616 B.
TEST(FalconH1, WeightsByHand) {
  EXPECT_EQ(checkpoint_bytes(falcon_h1_7b()).count(), 15'171'297'472LL);
  EXPECT_EQ(fit_on_h100(1).binding_worker().weights.total.count(), 15'238'996'288LL);
  EXPECT_EQ(fit_on_h100(4).binding_worker().weights.total.count(), 3'999'105'616LL);
  EXPECT_TRUE(falcon_h1_7b().unmodelled_config_keys.empty());
}

// Every layer registers an attention cache and a Mamba2 state: 44 + 44 KV layers, two groups of 44.
// State at TP 1: conv 3 x 3584 x 2 = 21,504 + SSM 24 x 128 x 256 x 2 = 1,572,864 = 1,594,368 B; attention
// 2 x 2 x 128 x 2 = 1,024 B/token; block 16 x cdiv(1,594,368, 16 x 1,024) = 1,568 tokens, page
// 1,568 x 1,024 = 1,605,632 B.
TEST(FalconH1, EveryLayerHoldsACacheAndAState) {
  const FitResult r = fit_on_h100(1);
  ASSERT_NE(r.mamba_cache_mode, MambaCacheMode::kAll);
  EXPECT_EQ(r.binding_worker().kv.layers.size(), 88u);
  EXPECT_EQ(r.binding_worker().kv.groups.size(), 2u);
  EXPECT_EQ(r.block_size, 1568);
  EXPECT_EQ(r.binding_worker().kv.page_bytes.count(), 1'605'632);
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), 44 * 1024);
  const MambaStateDtypes bf16{Dtype::kBFloat16, Dtype::kBFloat16, ""};
  EXPECT_EQ(mamba_state_bytes(falcon_h1_7b().layers[0].parallel_state->state, 1, bf16).count(), 1'594'368);
}

}  // namespace
}  // namespace gpubudget
