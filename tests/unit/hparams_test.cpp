// The common hyperparameter reader (src/model/hparams.h) and the family table (src/model/families.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "model/families.h"
#include "model/hparams.h"
#include "core/json_reader.h"
#include "test_support.h"

namespace gpubudget::detail {
namespace {

CommonHparams read(const std::string& text, const HparamsDefaults& defaults = {}) {
  const auto json = parse_json(text, "config.json");
  return read_common_hparams(JsonReader(json, "config.json"), defaults);
}

TEST(Hparams, StatedDefaultsApplyWhenTheConfigIsSilent) {
  // num_key_value_heads defaults to num_attention_heads; head_dim to hidden_size / heads (vLLM get_head_size).
  const auto h = read(R"({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                          "intermediate_size": 14336})");
  EXPECT_EQ(h.num_key_value_heads, 32);
  EXPECT_EQ(h.head_dim, 128);
  // A family's config class defaults (Gemma3TextConfig: 8 heads, 4 KV heads, head_dim 256).
  const auto g = read(R"({"hidden_size": 2560, "num_hidden_layers": 34, "intermediate_size": 10240})", {8, 4, 256, true, true, std::nullopt});
  EXPECT_EQ(g.num_attention_heads, 8);
  EXPECT_EQ(g.num_key_value_heads, 4);
  EXPECT_EQ(g.head_dim, 256);
  // An explicit head_dim wins over the quotient (Qwen3: 4096 / 32 = 128, head_dim 128 anyway; Gemma: 256).
  EXPECT_EQ(read(R"({"hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "head_dim": 256,
                     "intermediate_size": 24576})")
                .head_dim,
            256);
}

TEST(Hparams, InvariantsAreCheckedOnceWithTheKeyAndValue) {
  test::expect_input_error([] { read(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 6,
                                          "num_key_value_heads": 4, "intermediate_size": 8})"); },
                           "config.json:/num_key_value_heads: num_key_value_heads 4 does not divide num_attention_heads 6");
  test::expect_input_error([] { read(R"({"hidden_size": 100, "num_hidden_layers": 2, "num_attention_heads": 3,
                                          "intermediate_size": 8})"); },
                           "config.json:/hidden_size: hidden_size 100 is not a multiple of num_attention_heads 3");
  test::expect_input_error([] { read(R"({"hidden_size": 0, "num_hidden_layers": 2, "num_attention_heads": 2,
                                          "intermediate_size": 8})"); },
                           "config.json:/hidden_size: expected an integer in [1,");
  test::expect_input_error([] { read(R"({"hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 8})"); },
                           "config.json:/num_hidden_layers: expected an integer in [1, 10000], got nothing (missing)");
}

TEST(Families, EachModelTypeAndArchitectureBelongsToOneFamily) {
  // The table is the folder's files in name order: which family reads a type must not depend on it.
  std::map<std::string_view, std::string_view> type_owner, architecture_owner;
  for (const Family* family : families()) {
    for (const ModelType& type : family->model_types) {
      const auto [it, added] = type_owner.emplace(type.name, family->name);
      EXPECT_TRUE(added) << type.name << " is read by " << it->second << " and " << family->name;
    }
    for (const auto arch : family->architectures) {
      const auto [it, added] = architecture_owner.emplace(arch, family->name);
      EXPECT_TRUE(added) << arch << " is registered by " << it->second << " and " << family->name;
    }
  }
  // One family per file of src/model/families/.
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(GPUBUDGET_TEST_SOURCE_DIR) + "/src/model/families")) {
    files += entry.path().extension() == ".cpp" ? 1 : 0;
  }
  EXPECT_EQ(families().size(), files);
  EXPECT_GE(files, 15u);
}

TEST(Families, EveryRegisteredModelTypeParsesAMinimalConfigOfItsFamily) {
  // Every model type the llama family lists has its traits (a missing row would be an internal error).
  for (const Family* family : families()) {
    if (family->name != "llama") continue;
    for (const ModelType& type : family->model_types) {
      const std::string json = fmt::format(
          R"({{"architectures": ["{}"], "model_type": "{}", "hidden_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "num_experts": 4,
              "num_local_experts": 4, "moe_intermediate_size": 32, "num_experts_per_tok": 2, "moe_topk": 2,
              "moe_num_experts": 4, "moe_k": 2,
              "sliding_window": 4096}})",
          family->architectures.front(), type.name);
      const ModelSpec m = parse_model_config(json, "", "config.json");
      EXPECT_EQ(m.family, "llama") << type.name;
      EXPECT_EQ(m.layers.size(), 2u) << type.name;
    }
  }
}

TEST(Families, AnArchitectureMustBeRegisteredForItsModelType) {
  // vLLM picks the implementation by `architectures`: Llama's class cannot run a DeepSeek config.
  test::expect_input_error(
      [] {
        parse_model_config(R"({"architectures": ["LlamaForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 64,
                               "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100})",
                           "", "config.json");
      },
      "config.json:/architectures: unknown architecture \"LlamaForCausalLM\" (model_type \"deepseek_v3\")");
}

}  // namespace
}  // namespace gpubudget::detail
