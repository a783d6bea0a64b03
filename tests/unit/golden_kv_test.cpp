// One hand-derived KV figure per family, from each config's own numbers.
#include <gtest/gtest.h>

#include "gpubudget/fit.h"
#include "gpubudget/load.h"
#include "test_support.h"

namespace gpubudget {
namespace {

struct Golden {
  const char* model;
  std::int64_t tp;
  std::int64_t bytes_per_token;  // layers whose cache grows with length, bf16 unless noted
  const char* formula;
};

void PrintTo(const Golden& g, std::ostream* os) { *os << g.model << " tp" << g.tp; }

class GoldenKv : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenKv, BytesPerTokenPerGpu) {
  const Golden g = GetParam();
  Deployment d;
  d.tensor_parallel_size = g.tp;
  const FitResult r = fit(test::bundled(g.model), load_gpu_preset("h200", test::configs()), d,
                          load_vllm_profile("", test::configs()));
  EXPECT_EQ(r.binding_worker().kv.bytes_per_token().count(), g.bytes_per_token) << g.formula;
}

INSTANTIATE_TEST_SUITE_P(
    Families, GoldenKv,
    ::testing::Values(
        Golden{"meta-llama/Llama-3.1-8B", 1, 32 * 2 * 8 * 128 * 2, "32 layers x K,V x 8 KV heads x 128 x 2 B"},
        Golden{"Qwen/Qwen2-7B-Instruct", 4, 28 * 2 * 1 * 128 * 2, "28 layers x K,V x (4 KV heads / TP4) x 128 x 2 B"},
        Golden{"Qwen/Qwen3-30B-A3B", 1, 48 * 2 * 4 * 128 * 2, "Qwen3-MoE: 48 x K,V x 4 x head_dim 128 x 2 B"},
        Golden{"Qwen/Qwen1.5-MoE-A2.7B-Chat", 1, 24 * 2 * 16 * 128 * 2, "Qwen2-MoE: 24 x K,V x 16 x 2048/16 x 2 B"},
        Golden{"mistralai/Mixtral-8x7B-v0.1", 2, 32 * 2 * 4 * 128 * 2, "Mixtral: 32 x K,V x (8 / TP2) x 128 x 2 B"},
        Golden{"MiniMaxAI/MiniMax-M2.7", 1, 62 * 2 * 8 * 128 * 2, "MiniMax-M2: 62 x K,V x 8 x 128 x 2 B"},
        Golden{"microsoft/phi-4", 1, 40 * 2 * 10 * 128 * 2, "Phi-4: 40 x K,V x 10 x 5120/40 x 2 B"},
        Golden{"mistralai/Mistral-Small-3.1-24B-Instruct-2503", 1, 40 * 2 * 8 * 128 * 2,
               "Mistral 3 (nested text_config): 40 x K,V x 8 x 128 x 2 B"},
        Golden{"google/gemma-7b", 1, 28 * 2 * 16 * 256 * 2, "Gemma: 28 x K,V x 16 x 256 x 2 B"},
        Golden{"google/gemma-2-9b-it", 1, 21 * 2 * 8 * 256 * 2,
               "Gemma 2: only the 21 global (odd) of 42 layers grow: 21 x K,V x 8 x 256 x 2 B"},
        Golden{"google/gemma-3-4b-it", 1, 5 * 2 * 4 * 256 * 2,
               "Gemma 3: layers 5, 11, 17, 23, 29 of 34 are global; defaults 4 KV heads of 256"},
        Golden{"openai/gpt-oss-20b", 1, 12 * 2 * 8 * 64 * 2, "gpt-oss: 12 full of 24 layers x K,V x 8 x 64 x 2 B"},
        Golden{"deepseek-ai/DeepSeek-V2-Lite-Chat", 1, 27 * (512 + 64) * 2, "MLA: 27 x (kv_lora 512 + rope 64) x 2 B"},
        Golden{"moonshotai/Kimi-K2-Instruct", 8, 61 * (512 + 64) * 2, "MLA, not split by TP: 61 x 576 x 2 B"},
        Golden{"Qwen/Qwen3-Next-80B-A3B-Instruct", 1, 12 * 2 * 2 * 256 * 2,
               "Qwen3-Next: only the 12 full-attention of 48 layers grow: 12 x K,V x 2 x 256 x 2 B"},
        Golden{"Qwen/Qwen3.6-27B", 1, 16 * 2 * 4 * 256 * 2,
               "Qwen3.6 (Qwen3.5 layout): 16 full-attention of 64 layers x K,V x 4 x 256 x 2 B"},
        Golden{"Qwen/Qwen3-VL-30B-A3B-Instruct", 1, 48 * 2 * 4 * 128 * 2, "Qwen3-VL-MoE text: 48 x K,V x 4 x 128 x 2 B"},
        Golden{"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 1, 6 * 2 * 2 * 128 * 2,
               "Nemotron-3 Nano: the 6 attention (*) of 52 layers x K,V x 2 x 128 x 2 B; M/E/- layers hold none"},
        Golden{"moonshotai/Kimi-Linear-48B-A3B-Instruct", 2, 7 * (512 + 64) * 2,
               "Kimi-Linear: only the 7 MLA layers grow, 576 x 2 B each on every TP rank"},
        Golden{"zai-org/GLM-5-FP8", 8, 78 * ((512 + 64) * 2 + 128 + 4),
               "GLM-5 (MLA + DSA indexer): 78 x (576 x 2 B + 128 uint8 + 1 fp32 scale)"}));

TEST(GoldenKvFixed, Gemma2SlidingLayersHoldAFixedWindow) {
  // gemma-2-9b-it, M = 8192, T = 8192 (H200 defaults), block 16, window 4096:
  //   sliding layer: (cdiv(min(4095 + 8192, 8192), 16) + 1) = 513 blocks of 16 x 8192 B;
  //   global layer: cdiv(8192, 16) = 512 blocks. 21 + 21 layers form 2 groups of 21.
  Deployment d;
  const FitResult r = fit(test::bundled("google/gemma-2-9b-it"), load_gpu_preset("h200", test::configs()), d,
                          load_vllm_profile("", test::configs()));
  const std::int64_t page = 16 * 2 * 8 * 256 * 2;
  EXPECT_EQ(r.needed.count(), 21 * page * (513 + 512));
}

TEST(GoldenKvFixed, MultimodalWrappersCacheOnlyTheirLanguageModel) {
  Deployment d;
  d.tensor_parallel_size = 8;
  const auto gpu = load_gpu_preset("h200", test::configs());
  const auto profile = load_vllm_profile("", test::configs());
  // Kimi-VL (Moonlight text): MLA, 27 layers x (kv_lora 512 + rope 64) x 2 B, not split by TP.
  const FitResult kimi_vl =
      fit(load_model(test::data_dir() + "/configs/kimi-vl-a3b/config.json", test::configs()), gpu, d, profile);
  EXPECT_EQ(kimi_vl.binding_worker().kv.bytes_per_token().count(), 27 * 576 * 2);
  // Llama 4 Scout: only the 12 global NoPE layers (every 4th) grow; 8 KV heads / TP8 x K,V x 128 x 2 B.
  const FitResult scout =
      fit(load_model(test::data_dir() + "/configs/llama4-scout-base/config.json", test::configs()), gpu, d, profile);
  EXPECT_EQ(scout.binding_worker().kv.bytes_per_token().count(), 12 * 1 * 2 * 128 * 2);
}

}  // namespace
}  // namespace gpubudget
