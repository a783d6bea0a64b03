// Granite 4.0 H (src/model/families/granite_hybrid.cpp) by hand from vLLM's granitemoehybrid.py and MambaMixer2.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "gpubudget/mamba_state.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

constexpr const char* kHSmall = "ibm-granite/granite-4.0-h-small";

FitResult fit_on_h100(const ModelSpec& model, std::int64_t tp) {
  Deployment d;
  d.tensor_parallel_size = tp;
  return fit(model, load_gpu_preset("h100", test::configs()), d, load_vllm_profile("", test::configs()));
}

// granite-4.0-h-small: H 4096, 40 layers (attention at 5, 15, 25, 35), vocab 100352 (a multiple of 64,
// tied), 32 heads / 8 KV heads of 4096/32 = 128; Mamba2 of 128 heads x 64 (inner 8192), 1 group,
// d_state 128, kernel 4; 72 experts of 768 and a shared MLP of 1536 in every layer. Parameters:
//   embedding 100352 x 4096                                                        411,041,792
//   attention: qkv (32 + 2x8) x 128 x 4096 + o 4096 x 4096                   41,943,040 x 4
//   mamba: in_proj (2x8192 + 2x128 + 128) x 4096 = 68,681,728; conv1d (8192 + 256) x (4 + bias)
//          = 42,240; A, D, dt_bias 3 x 128; norm 8192; out_proj 4096 x 8192     102,286,976 x 36
//   ffn: router 72 x 4096 + experts 72 x 3 x 768 x 4096 + shared 3 x 1536 x 4096 698,646,528 x 40
//   norms 2 x 4096 per layer + final 4096                                          331,776
//   = 32,207,337,984 parameters (the card's "32.2B"): 64,414,675,968 B in bf16. vLLM holds A in
//   float32: + 36 x 128 x 2 B = 64,414,685,184 B at TP 1.
// TP 8: embedding / 8, attention (4 + 2x1) x 128 x 4096 + 4096 x 512 = 5,242,880; one Mamba2 group
// is whole on every rank (extra_groups_for_head_shards): in_proj (2x8192 + 128) / 8 + 2 x 128 = 2,320
// rows x 4096, conv1d (1024 + 256) x 5, D/dt_bias 2 x 16, norm 1024, out_proj 4096 x 1024 =
// 13,704,480; A 16 in float32; ffn 294,912 + 72 x 3 x 96 x 4096 + 3 x 192 x 4096 = 87,588,864:
//   51,380,224 + 4 x 5,242,880 + 36 x 13,704,480 + 40 x 87,588,864 + 331,776 = 4,069,599,360
//   parameters x 2 B + 36 x 16 x 4 B = 8,139,201,024 B.
TEST(GraniteHybrid, WeightsByHand) {
  const ModelSpec m = test::bundled(kHSmall);
  EXPECT_EQ(m.family, "granitemoehybrid");
  EXPECT_TRUE(m.unmodelled_config_keys.empty());
  EXPECT_EQ(checkpoint_bytes(m).count(), 64'414'675'968LL);
  EXPECT_EQ(fit_on_h100(m, 1).binding_worker().weights.total.count(), 64'414'685'184LL);  // no RoPE: "nope"
  EXPECT_EQ(fit_on_h100(m, 8).binding_worker().weights.total.count(), 8'139'201'024LL);
}

// KV: attention 2 x 8 x 128 x 2 = 4,096 B/token at TP 1 (512 at TP 8). Mamba2 state per request and
// layer: conv (4 - 1) x (8192 + 2 x 128) x 2 + SSM 128 x 64 x 128 x 2 = 2,147,840 B at TP 1; at TP 8
// 3 x (1024 + 256) x 2 + 16 x 64 x 128 x 2 = 269,824 B. Block alignment without "all" caching:
// 16 x cdiv(state, 16 x bytes per token) = 16 x cdiv(2,147,840, 65,536) = 528 tokens (TP 8:
// 16 x cdiv(269,824, 8,192) = 528); the Mamba page is padded to 528 x 4,096 = 2,162,688 B.
TEST(GraniteHybrid, StateAndBlockByHand) {
  const ModelSpec m = test::bundled(kHSmall);
  const FitResult tp1 = fit_on_h100(m, 1);
  ASSERT_NE(tp1.mamba_cache_mode, MambaCacheMode::kAll);
  EXPECT_EQ(tp1.block_size, 528);
  EXPECT_EQ(tp1.binding_worker().kv.bytes_per_token().count(), 4 * 4096);
  EXPECT_EQ(tp1.binding_worker().kv.page_bytes.count(), 2'162'688);
  const FitResult tp8 = fit_on_h100(m, 8);
  EXPECT_EQ(tp8.block_size, 528);
  EXPECT_EQ(tp8.binding_worker().kv.page_bytes.count(), 528 * 512);
  const MambaStateDtypes bf16{Dtype::kBFloat16, Dtype::kBFloat16, ""};
  EXPECT_EQ(mamba_state_bytes(m.layers[0].attention.state, 1, bf16).count(), 2'147'840);
  EXPECT_EQ(mamba_state_bytes(m.layers[0].attention.state, 8, bf16).count(), 269'824);
}

TEST(GraniteHybrid, TwoGroupsNeedATpThatDividesThem) {
  std::ifstream in(test::configs().root / "models/ibm-granite__granite-4.0-h-small/config.json");
  auto config = nlohmann::json::parse(in);
  config["mamba_n_groups"] = 2;
  const ModelSpec m = parse_model_config(config.dump(), "", "granite-two-groups/config.json");
  EXPECT_NO_THROW((void)fit_on_h100(m, 2));
  test::expect_input_error([&] { (void)fit_on_h100(m, 4); }, "2 Mamba2 groups and --tensor-parallel-size 4");
}

}  // namespace
}  // namespace gpubudget
