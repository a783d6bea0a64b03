#include "gpubudget/quantization.h"

#include <gtest/gtest.h>

#include "gpubudget/error.h"

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

TEST(Exclusion, GlobsWithAWildcardInTheMiddleStillMatchAfterThePrefixTest) {
  // The prepared prefix is the text before the first '*': "model.layers." here.
  const ModuleNamePatterns patterns({"model.layers.*.self_attn.o_proj", "model.embed_tokens"});
  EXPECT_TRUE(patterns.matches("model.layers.17.self_attn.o_proj"));
  EXPECT_FALSE(patterns.matches("model.layers.17.self_attn.o_proj_extra"));
  EXPECT_FALSE(patterns.matches("mtp.layers.17.self_attn.o_proj"));
  EXPECT_TRUE(patterns.matches("model.embed_tokens"));
  EXPECT_FALSE(ModuleNamePatterns().matches("model.embed_tokens"));
}

TEST(Exclusion, AnUnreadableRegexIsBadInputNotASilentMiss) {
  try {
    const ModuleNamePatterns patterns({"re:model.layers.(0|1"});
    FAIL() << "an unbalanced group was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("re:model.layers.(0|1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpubudget
