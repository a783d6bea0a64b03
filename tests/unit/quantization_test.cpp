#include "gpubudget/quantization.h"

#include <gtest/gtest.h>

namespace gpubudget {
namespace {

TEST(Exclusion, ModelOptGlobMatchesTheWholeName) {
  const std::vector<std::string> patterns = {"language_model.model.layers.0.self_attn*", "language_model.lm_head"};
  EXPECT_TRUE(is_excluded(patterns, {"language_model.model.layers.0.self_attn.q_a_proj"}));
  EXPECT_TRUE(is_excluded(patterns, {"language_model.lm_head"}));
  // layers.0 must not match layers.10 (the '.' after the index is literal, the match is full).
  EXPECT_FALSE(is_excluded(patterns, {"language_model.model.layers.10.self_attn.q_a_proj"}));
  EXPECT_FALSE(is_excluded(patterns, {"language_model.model.layers.0.mlp.gate_proj"}));
}

TEST(Exclusion, FusedModuleNeedsEveryShardExcluded) {
  const std::vector<std::string> patterns = {"model.layers.3.self_attn.q_a_proj"};
  EXPECT_FALSE(is_excluded(patterns, {"model.layers.3.self_attn.q_a_proj", "model.layers.3.self_attn.kv_a_proj_with_mqa"}));
  const std::vector<std::string> both = {"model.layers.3.self_attn*"};
  EXPECT_TRUE(is_excluded(both, {"model.layers.3.self_attn.q_a_proj", "model.layers.3.self_attn.kv_a_proj_with_mqa"}));
}

TEST(Exclusion, BareWordsAndRegexes) {
  EXPECT_TRUE(is_excluded({"lm_head"}, {"lm_head"}));
  EXPECT_TRUE(is_excluded({"re:.*mlp\\.gate$"}, {"model.layers.5.mlp.gate"}));
  EXPECT_FALSE(is_excluded({"re:.*mlp\\.gate$"}, {"model.layers.5.mlp.gate_proj"}));
  EXPECT_FALSE(is_excluded({}, {"anything"}));
  // compressed-tensors `re:` follows Python's re.match: anchored at the start only.
  EXPECT_FALSE(is_excluded({"re:mlp"}, {"model.layers.0.mlp"}));
  EXPECT_TRUE(is_excluded({"re:model"}, {"model.layers.0.mlp"}));
}

}  // namespace
}  // namespace gpubudget
