// vLLM's derived maximum length, checked against each config's own numbers.
#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "test_support.h"

namespace gpubudget {
namespace {

ModelSpec parse(const std::string& json) { return parse_model_config(json, "", "inline/config.json"); }

const char* kTinyLlama = R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":64,
  "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128,"num_hidden_layers":2,
  "vocab_size":1000%s})";

std::string tiny(const std::string& extra) {
  std::string s = kTinyLlama;
  return s.replace(s.find("%s"), 2, extra);
}

TEST(MaxModelLen, YarnStartsFromTheOriginalLengthTimesFactor) {
  // Kimi-K2.5: original_max_position_embeddings 4096 x factor 64 = 262144.
  EXPECT_EQ(test::bundled("nvidia/Kimi-K2.5-NVFP4").derived_max_model_len, 4096 * 64);
  // DeepSeek-V3: 4096 x 40 = 163840.
  EXPECT_EQ(test::bundled("deepseek-ai/DeepSeek-V3").derived_max_model_len, 4096 * 40);
}

TEST(MaxModelLen, Llama3RopeIsNotMultiplied) {
  // max_position_embeddings 131072, rope_type llama3 with factor 8: stays 131072.
  EXPECT_EQ(test::bundled("meta-llama/Llama-3.1-8B").derived_max_model_len, 131072);
}

TEST(MaxModelLen, LinearScalingMultiplies) {
  EXPECT_EQ(parse(tiny(R"(,"max_position_embeddings":4096,"rope_scaling":{"type":"linear","factor":2.0})"))
                .derived_max_model_len,
            8192);
}

TEST(MaxModelLen, MinimumOverLengthKeys) {
  EXPECT_EQ(parse(tiny(R"(,"max_position_embeddings":4096,"seq_length":2048)")).derived_max_model_len, 2048);
}

TEST(MaxModelLen, NoKeyMeans2048) {
  EXPECT_EQ(parse(tiny("")).derived_max_model_len, 2048);
}

}  // namespace
}  // namespace gpubudget
