// Never silently wrong: the config keys no parser models are named (fit's warnings, --strict).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_run.h"
#include "fixtures/safetensors_writer.h"
#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/model_config.h"
#include "test_support.h"

namespace gpubudget {
namespace {

namespace fs = std::filesystem;

// Every bundled config's unmodelled keys are exactly the reviewed list: a key that appears is a
// decision to make (model it, or add it to src/model/config_keys.cpp with its reason), one that goes
// away is a list to update.
TEST(ConfigKeys, EveryBundledConfigLeavesOnlyTheListedKeysUnmodelled) {
  std::ifstream in(test::data_dir() + "/unmodelled-config-keys.json");
  const auto expected = nlohmann::json::parse(in)["unmodelled"];
  for (const auto& id : list_bundled_models(test::configs())) {
    ModelSpec m;
    try {
      m = test::bundled(id);
    } catch (const InputError&) {
      continue;  // refused architectures and excerpts: docs/models.md
    }
    const std::vector<std::string> listed =
        expected.contains(id) ? expected[id].get<std::vector<std::string>>() : std::vector<std::string>{};
    EXPECT_EQ(m.unmodelled_config_keys, listed) << id;
  }
}

// The same unknown size-like key added to every bundled config that loads is reported by its family's
// parser: no family reads keys it was not written for.
TEST(ConfigKeys, AnUnknownKeyIsReportedForEveryBundledConfig) {
  const fs::path dir = test::fresh_fixture_dir("unknown-key-every-config");
  std::size_t edited_configs = 0;
  for (const auto& id : list_bundled_models(test::configs())) {
    std::string folder = id;
    std::replace(folder.begin(), folder.end(), '/', '_');
    const fs::path source = fs::path(GPUBUDGET_TEST_CONFIG_DIR) / "models" / (id.substr(0, id.find('/')) + "__" +
                                                                             id.substr(id.find('/') + 1));
    if (!fs::exists(source / "config.json")) continue;  // excerpts
    try {
      (void)test::bundled(id);
    } catch (const InputError&) {
      continue;  // refused architectures: docs/models.md
    }
    const fs::path copy = dir / folder;
    fs::create_directories(copy);
    for (const auto& file : fs::directory_iterator(source)) fs::copy_file(file.path(), copy / file.path().filename());
    // Inserted as text: some real configs hold literals (Infinity) that strict JSON parsers refuse.
    std::ifstream in(source / "config.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.insert(text.find('{') + 1, "\"expert_hidden_width\": 4096, ");
    std::ofstream(copy / "config.json") << text;
    const ModelSpec edited = load_model(copy.string(), test::configs());
    EXPECT_NE(std::find(edited.unmodelled_config_keys.begin(), edited.unmodelled_config_keys.end(),
                        "expert_hidden_width"),
              edited.unmodelled_config_keys.end())
        << id;
    ++edited_configs;
  }
  EXPECT_GE(edited_configs, 80u);  // every bundled config that loads (docs/models.md)
  fs::remove_all(dir);
}

// A size-like key no parser knows, added to a real config: fit warns (text and JSON), --strict refuses.
TEST(ConfigKeys, AnUnknownKeyIsAWarningAndStrictRefusesIt) {
  const fs::path dir = test::fresh_fixture_dir("unknown-config-key");
  nlohmann::json config;
  std::ifstream(fs::path(GPUBUDGET_TEST_CONFIG_DIR) / "models" / "Qwen__Qwen3-8B" / "config.json") >> config;
  config["moe_latent_width"] = 1024;
  std::ofstream(dir / "config.json") << config.dump();
  const auto plain = test::run_cli({"fit", dir.string(), "--gpu", "h100", "--json"});
  ASSERT_LE(plain.code, 1) << plain.err;
  const std::string warning =
      "config key `moe_latent_width` is not modelled by the llama parser; the figures may be wrong";
  EXPECT_NE(plain.err.find("warning: " + warning), std::string::npos) << plain.err;
  const auto warnings = nlohmann::json::parse(plain.out)["warnings"];
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), warning), warnings.end()) << warnings.dump();
  const auto strict = test::run_cli({"fit", dir.string(), "--gpu", "h100", "--strict"});
  EXPECT_EQ(strict.code, 3);
  EXPECT_NE(strict.err.find("--strict: config keys not modelled by the llama parser: moe_latent_width"), std::string::npos)
      << strict.err;
  EXPECT_EQ(test::run_cli({"weights", dir.string(), "--strict"}).code, 3);
  // The bundled config itself: no warning, and --strict passes.
  EXPECT_EQ(test::run_cli({"fit", "Qwen/Qwen3-8B", "--gpu", "h100", "--strict"}).code, 0);
}

// Nemotron-3's latent MoE was the key that used to be ignored: the parser now reads moe_latent_size
// (and every other key of the real Ultra config is modelled or reviewed).
TEST(ConfigKeys, NemotronUltrasConfigIsModelledKeyByKey) {
  const ModelSpec m = load_model(test::data_dir() + "/configs/nemotron-3-ultra-bf16", test::configs());
  EXPECT_TRUE(m.unmodelled_config_keys.empty()) << m.unmodelled_config_keys.front();
  // Without the latent support this key would be reported: a copy of the config with a key of the same
  // kind the parser does not know shows the mechanism on this family too.
  const fs::path dir = test::fresh_fixture_dir("nemotron-extra-key");
  nlohmann::json config;
  std::ifstream(test::data_dir() + "/configs/nemotron-3-ultra-bf16/config.json") >> config;
  config["moe_latent_expansion"] = 2;
  std::ofstream(dir / "config.json") << config.dump();
  const ModelSpec edited = load_model(dir.string(), test::configs());
  EXPECT_EQ(edited.unmodelled_config_keys, std::vector<std::string>{"moe_latent_expansion"});
}

// Token ids are named as such (`*_id`, `*_ids`, `*_token_index` holding integers: Hunyuan's eod_token_id,
// pad_id, im_start_id, mask_init_id), and no layer is sized by them: no warning. The same names holding
// something else, and a size-like name, still are.
TEST(ConfigKeys, TokenIdsByNameAndValueAreNoWarning) {
  std::ifstream in(std::string(GPUBUDGET_TEST_CONFIG_DIR) + "/models/meta-llama__Llama-3.1-8B/config.json");
  auto config = nlohmann::json::parse(in);
  config["eod_token_id"] = 127960;
  config["pad_id"] = 127961;
  config["im_start_id"] = 127962;
  config["stop_token_ids"] = {1, 2};
  config["mask_token_index"] = 3;
  config["text_start_id"] = "<text>";    // not an integer: a doubt to say
  config["expert_group_size"] = 4;       // size-like
  const ModelSpec m = parse_model_config(config.dump(), "", "token-ids");
  EXPECT_EQ(m.unmodelled_config_keys, (std::vector<std::string>{"expert_group_size", "text_start_id"}));
}

}  // namespace
}  // namespace gpubudget
