// Models from the Hugging Face Hub and the local caches, against a Hub stand-in on 127.0.0.1
// (tests/hub/fake_hub.py): resolution order, cache reuse offline, every error, the token's reach,
// header-derived weights equal to the local folder's.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "fixtures/safetensors_writer.h"
#include "gpubudget/error.h"
#include "gpubudget/hub.h"
#include "gpubudget/safetensors.h"
#include "hub/fake_hub.h"
#include "test_support.h"

namespace gpubudget {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = GPUBUDGET_TEST_CONFIG_DIR;

using test::CliRun;
CliRun run(const fs::path& config_dir, std::vector<std::string> args) {
  return test::run_cli_with(config_dir, std::move(args));
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); !from.empty() && at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A test's own folders and environment: the Hub's tree, both caches, and a config dir without the
// bundled models (so that an id can only come from a cache or the Hub).
class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = test::fresh_fixture_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(repos());
    fs::create_directories(configs_without_models());
    for (const char* entry : {"gpus", "vllm", "gpu-names.json", "vllm-log-wordings.json"}) {
      fs::create_symlink(kConfigs / entry, configs_without_models() / entry);
    }
    ::setenv("XDG_CACHE_HOME", (root_ / "xdg-cache").c_str(), 1);
    ::setenv("HF_HUB_CACHE", (root_ / "hf-cache").c_str(), 1);
    ::setenv("HF_HOME", (root_ / "hf-home").c_str(), 1);
    ::unsetenv("HF_HUB_OFFLINE");
    ::unsetenv("HF_TOKEN");
    ::unsetenv("HUGGING_FACE_HUB_TOKEN");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  [[nodiscard]] fs::path repos() const { return root_ / "repos"; }
  [[nodiscard]] fs::path configs_without_models() const { return root_ / "configs"; }
  [[nodiscard]] fs::path gpubudget_cache() const { return root_ / "xdg-cache" / "gpubudget"; }

  // The bundled model `id`'s files as a Hub repository.
  void publish_bundled(const std::string& id) {
    const fs::path from = kConfigs / "models" / (id.substr(0, id.find('/')) + "__" + id.substr(id.find('/') + 1));
    fs::create_directories(repos() / id);
    for (const auto& e : fs::directory_iterator(from)) fs::copy_file(e.path(), repos() / id / e.path().filename());
  }
  void behaviours(const std::string& id, const nlohmann::json& b) {
    fs::create_directories((repos() / id).parent_path());
    std::ofstream(repos() / (id + ".hub.json")) << b.dump();
  }
  void use_hub(const test::FakeHub& hub) { ::setenv("HF_ENDPOINT", hub.url().c_str(), 1); }

  fs::path root_;
};

// A small bf16 Llama checkpoint in `dir`: its config and `shards` safetensors files with every tensor.
void write_llama_checkpoint(const fs::path& dir, std::size_t shards) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"architectures":["LlamaForCausalLM"],"model_type":"llama",
    "hidden_size":256,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":512,
    "num_hidden_layers":2,"vocab_size":1000,"max_position_embeddings":2048,"torch_dtype":"bfloat16"})";
  std::vector<test::FixtureTensor> t = {{"model.embed_tokens.weight", "BF16", {1000, 256}}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    for (const auto& [name, rows, cols] : std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>{
             {"self_attn.q_proj", 256, 256}, {"self_attn.k_proj", 128, 256}, {"self_attn.v_proj", 128, 256},
             {"self_attn.o_proj", 256, 256}, {"mlp.gate_proj", 512, 256},    {"mlp.up_proj", 512, 256},
             {"mlp.down_proj", 256, 512}}) {
      t.push_back({p + name + ".weight", "BF16", {rows, cols}});
    }
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  }
  t.push_back({"model.norm.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  if (shards == 1) {
    test::write_safetensors(dir / "model.safetensors", test::in_safetensors_order(t));
  } else {
    test::write_sharded_checkpoint(dir, t, shards);
  }
}

std::int64_t count_requests(const test::FakeHub& hub) {
  std::int64_t n = 0;
  for (const auto& r : hub.requests()) n += r["path"] != "/__requests" ? 1 : 0;
  return n;
}

TEST(ModelReference, RepositoryNamesRevisionsAndPastedUrls) {
  const auto parse = [](const char* text) { return parse_model_reference(text); };
  EXPECT_EQ(parse("Qwen/Qwen3-8B")->repo, "Qwen/Qwen3-8B");
  EXPECT_EQ(parse("Qwen/Qwen3-8B")->revision, "");
  EXPECT_EQ(parse("Qwen/Qwen3-8B@v1.0")->revision, "v1.0");
  EXPECT_EQ(parse("https://huggingface.co/Qwen/Qwen3-8B")->repo, "Qwen/Qwen3-8B");
  EXPECT_EQ(parse("https://huggingface.co/Qwen/Qwen3-8B/")->revision, "");
  EXPECT_EQ(parse("https://huggingface.co/Qwen/Qwen3-8B/tree/dev")->revision, "dev");
  EXPECT_EQ(parse("https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json")->revision, "main");
  EXPECT_EQ(parse("https://hf.co/Qwen/Qwen3-8B/tree/refs%2Fpr%2F12")->revision, "refs/pr/12");
  EXPECT_EQ(parse("https://huggingface.co/Qwen/Qwen3-8B/tree/refs/pr/12")->revision, "refs/pr/12");
  EXPECT_EQ(parse("https://huggingface.co/Qwen/Qwen3-8B?library=vllm")->repo, "Qwen/Qwen3-8B");
  // Not repository names: paths and other sites.
  EXPECT_FALSE(parse("./models/x").has_value());
  EXPECT_FALSE(parse("/abs/path").has_value());
  EXPECT_FALSE(parse("a/b/c").has_value());
  EXPECT_FALSE(parse("org/na me").has_value());
  EXPECT_FALSE(parse("org/..").has_value());
  EXPECT_FALSE(parse("https://example.com/org/name").has_value());
  // Repository names with a malformed revision, and Hub URLs that are no model page.
  test::expect_input_error([&] { (void)parse("org/name@"); }, "is no revision");
  test::expect_input_error([&] { (void)parse("org/name@../x"); }, "is no revision");
  test::expect_input_error([&] { (void)parse("https://huggingface.co/datasets/org/name"); }, "not a model repository");
  test::expect_input_error([&] { (void)parse("https://huggingface.co/org"); }, "expected a model page");
}

TEST_F(HubTest, EveryBundledModelThroughTheHubReproducesTheBundledResult) {
  std::vector<std::string> ids;
  for (const auto& id : list_bundled_models(test::configs())) {
    const fs::path dir = kConfigs / "models" / (id.substr(0, id.find('/')) + "__" + id.substr(id.find('/') + 1));
    if (!fs::exists(dir / "config.json")) continue;  // an excerpt only: nothing to compare
    publish_bundled(id);
    ids.push_back(id);
  }
  ASSERT_GT(ids.size(), 70u);
  const test::FakeHub hub(repos());
  use_hub(hub);
  for (const auto& id : ids) {
    const CliRun bundled = run(kConfigs, {"fit", id, "--gpu", "h100", "--json"});
    const CliRun fetched = run(configs_without_models(), {"fit", id, "--gpu", "h100", "--json"});
    const std::string bundled_config =
        (kConfigs / "models" / (id.substr(0, id.find('/')) + "__" + id.substr(id.find('/') + 1)) / "config.json").string();
    const fs::path snapshots = gpubudget_cache() / "hub" / ("models--" + replace_all(id, "/", "--")) / "snapshots";
    ASSERT_TRUE(fs::is_directory(snapshots)) << id << ": " << fetched.err;
    const std::string fetched_config = (fs::directory_iterator(snapshots)->path() / "config.json").string();
    EXPECT_EQ(fetched.code, bundled.code) << id << ": " << fetched.err;
    // Byte for byte, but for the model's source: the config file it was read from.
    EXPECT_EQ(replace_all(fetched.out, fetched_config, "CONFIG"), replace_all(bundled.out, bundled_config, "CONFIG")) << id;
    if (bundled.code == 3) {  // refused alike (an architecture not modelled yet)
      // A draft's refusal names its folder (the --speculative-config "model" to give) rather than the file.
      const auto folder = [](const std::string& config) { return fs::path(config).parent_path().string(); };
      EXPECT_EQ(replace_all(replace_all(fetched.err.substr(fetched.err.find("\ngpubudget: ") + 1), fetched_config, "CONFIG"),
                            folder(fetched_config), "FOLDER"),
                replace_all(replace_all(bundled.err, bundled_config, "CONFIG"), folder(bundled_config), "FOLDER"))
          << id;
    }
    EXPECT_NE(fetched.err.find("fetched from the Hub"), std::string::npos) << id << ": " << fetched.err;
  }
}

TEST_F(HubTest, ResolutionOrderPathThenBundledThenHuggingFaceCacheThenHub) {
  publish_bundled("Qwen/Qwen3-8B");
  const test::FakeHub hub(repos());
  use_hub(hub);
  // A bundled id is answered from the bundled config: the Hub is not asked.
  EXPECT_EQ(run(kConfigs, {"fit", "Qwen/Qwen3-8B", "--gpu", "h100", "--json"}).code, 0);
  EXPECT_EQ(count_requests(hub), 0);
  // The Hugging Face cache comes before the Hub: a snapshot there with another config wins.
  const fs::path hf_repo = root_ / "hf-cache" / "models--Qwen--Qwen3-8B";
  const std::string commit(40, 'a');
  fs::create_directories(hf_repo / "refs");
  fs::create_directories(hf_repo / "snapshots" / commit);
  std::ofstream(hf_repo / "refs" / "main") << commit;  // huggingface_hub writes no newline
  fs::copy_file(kConfigs / "models" / "Qwen__Qwen3-14B" / "config.json", hf_repo / "snapshots" / commit / "config.json");
  const CliRun from_hf = run(configs_without_models(), {"fit", "Qwen/Qwen3-8B", "--gpu", "h100", "--json"});
  ASSERT_EQ(from_hf.code, 0) << from_hf.err;
  EXPECT_EQ(nlohmann::json::parse(from_hf.out)["model"]["source"], (hf_repo / "snapshots" / commit / "config.json").string());
  EXPECT_NE(from_hf.err.find("from the Hugging Face cache"), std::string::npos) << from_hf.err;
  EXPECT_EQ(count_requests(hub), 0);
  // A revision the Hugging Face cache does not have goes to the Hub (which has only main).
  const CliRun other = run(configs_without_models(), {"fit", "Qwen/Qwen3-8B@v9", "--gpu", "h100"});
  EXPECT_EQ(other.code, 3);
  EXPECT_NE(other.err.find("no revision \"v9\""), std::string::npos) << other.err;
  // A revision cannot leave the cache folders.
  const CliRun escape = run(configs_without_models(), {"fit", "Qwen/Qwen3-8B", "--revision", "../../etc", "--gpu", "h100"});
  EXPECT_EQ(escape.code, 3);
  EXPECT_NE(escape.err.find("--revision: \"../../etc\" is no revision"), std::string::npos) << escape.err;
  // An explicit revision bypasses the bundled config.
  const CliRun main_rev = run(kConfigs, {"fit", "Qwen/Qwen3-8B", "--revision", "main", "--gpu", "h100", "--json"});
  ASSERT_EQ(main_rev.code, 0) << main_rev.err;
  EXPECT_EQ(nlohmann::json::parse(main_rev.out)["model"]["source"], (hf_repo / "snapshots" / commit / "config.json").string());
  // An existing path beats everything.
  const fs::path folder = root_ / "Qwen" / "Qwen3-8B";
  fs::create_directories(folder);
  fs::copy_file(kConfigs / "models" / "Qwen__Qwen3-32B" / "config.json", folder / "config.json");
  const fs::path here = fs::current_path();
  fs::current_path(root_);
  const CliRun local = run(configs_without_models(), {"fit", "Qwen/Qwen3-8B", "--gpu", "h100", "--json"});
  fs::current_path(here);
  ASSERT_LE(local.code, 1) << local.err;
  EXPECT_EQ(nlohmann::json::parse(local.out)["model"]["source"], "Qwen/Qwen3-8B/config.json");
}

TEST_F(HubTest, ASecondRunAndAnOfflineRunNeedNoNetwork) {
  write_llama_checkpoint(repos() / "acme" / "tiny-llama", 3);
  std::string first;
  {
    const test::FakeHub hub(repos());
    use_hub(hub);
    const CliRun fetched = run(configs_without_models(), {"fit", "acme/tiny-llama", "--gpu", "h100", "--json"});
    ASSERT_EQ(fetched.code, 0) << fetched.err;
    first = fetched.out;
    const std::int64_t after_first = count_requests(hub);
    // model info + config.json (a relative redirect, then the file) + the index (the same) + 3 shards
    // (a redirect to the CDN, then the range)
    EXPECT_EQ(after_first, 1 + 2 + 2 + 3 * 2);
    const CliRun again = run(configs_without_models(), {"fit", "acme/tiny-llama", "--gpu", "h100", "--json"});
    EXPECT_EQ(again.out, first);
    EXPECT_EQ(count_requests(hub), after_first);
    EXPECT_NE(again.err.find("from gpubudget's cache"), std::string::npos) << again.err;
  }
  // The Hub is gone: offline, the cache answers; online, the failure says how to go offline.
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  EXPECT_EQ(run(configs_without_models(), {"fit", "acme/tiny-llama", "--gpu", "h100", "--json"}).out, first);
  const CliRun missing = run(configs_without_models(), {"fit", "acme/other", "--gpu", "h100"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find("HF_HUB_OFFLINE=1 forbids fetching it"), std::string::npos) << missing.err;
  ::unsetenv("HF_HUB_OFFLINE");
  const CliRun refresh = run(configs_without_models(), {"fit", "acme/tiny-llama", "--hub-refresh", "--gpu", "h100"});
  EXPECT_EQ(refresh.code, 3);
  EXPECT_NE(refresh.err.find("cannot reach"), std::string::npos) << refresh.err;
  EXPECT_NE(refresh.err.find("HF_HUB_OFFLINE=1 uses the cache"), std::string::npos) << refresh.err;
  // Nothing was written into the Hugging Face cache.
  EXPECT_FALSE(fs::exists(root_ / "hf-cache"));
}

TEST_F(HubTest, APastedServeLineResolvesItsModelTheSameWay) {
  write_llama_checkpoint(repos() / "acme" / "tiny-llama", 1);
  behaviours("acme/tiny-llama", {{"revisions", {{"v1.0", std::string(40, 'b')}}}});
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun pasted = run(configs_without_models(), {"fit", "--gpu", "h100", "--json", "--", "vllm", "serve",
                                                       "https://huggingface.co/acme/tiny-llama", "--revision", "v1.0"});
  ASSERT_EQ(pasted.code, 0) << pasted.err;
  EXPECT_NE(pasted.err.find("acme/tiny-llama at bbbbbbbbbbbb fetched from the Hub"), std::string::npos) << pasted.err;
  // vLLM's --download-dir is the Hugging Face cache it looks in.
  const fs::path download = root_ / "downloads" / "models--acme--tiny-llama";
  fs::create_directories(download / "refs");
  fs::create_directories(download / "snapshots" / std::string(40, 'c'));
  std::ofstream(download / "refs" / "main") << std::string(40, 'c');
  fs::copy_file(repos() / "acme" / "tiny-llama" / "config.json", download / "snapshots" / std::string(40, 'c') / "config.json");
  const CliRun downloaded = run(configs_without_models(), {"fit", "--gpu", "h100", "--", "vllm", "serve", "acme/tiny-llama",
                                                           "--download-dir", (root_ / "downloads").string()});
  ASSERT_EQ(downloaded.code, 0) << downloaded.err;
  EXPECT_NE(downloaded.err.find("from the Hugging Face cache"), std::string::npos) << downloaded.err;
}

TEST_F(HubTest, HeaderDerivedWeightsEqualTheLocalFolders) {
  const fs::path local = root_ / "local" / "tiny-llama";
  write_llama_checkpoint(local, 3);
  write_llama_checkpoint(repos() / "acme" / "tiny-llama", 3);
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun from_folder = run(configs_without_models(), {"weights", local.string(), "-tp", "2", "--json"});
  const CliRun from_hub = run(configs_without_models(), {"weights", "acme/tiny-llama", "-tp", "2", "--json"});
  ASSERT_EQ(from_folder.code, 0) << from_folder.err;
  ASSERT_EQ(from_hub.code, 0) << from_hub.err;
  nlohmann::json a = nlohmann::json::parse(from_folder.out), b = nlohmann::json::parse(from_hub.out);
  const auto& folder_headers = a["workers"][0]["headers"];
  ASSERT_TRUE(folder_headers.is_object()) << from_folder.out;
  EXPECT_EQ(folder_headers["difference_bytes"], 0);
  EXPECT_EQ(b["workers"][0]["headers"], folder_headers);
  a["model"].erase("source");
  b["model"].erase("source");
  a.erase("source");
  b.erase("source");
  EXPECT_EQ(b, a);
  // The header copies hold each shard's first 8 + N bytes exactly.
  const auto snapshot = *fs::directory_iterator(gpubudget_cache() / "hub" / "models--acme--tiny-llama" / "snapshots");
  const auto headers = read_checkpoint_headers(snapshot.path().string());
  const auto real = read_checkpoint_headers(local.string());
  ASSERT_TRUE(headers && real);
  EXPECT_EQ(headers->tensor_bytes(), real->tensor_bytes());
  for (std::size_t i = 0; i < real->files.size(); ++i) {
    EXPECT_EQ(headers->files[i].file_bytes, real->files[i].file_bytes);
    EXPECT_EQ(headers->files[i].header_bytes, real->files[i].header_bytes);
    EXPECT_NE(headers->files[i].path.find(hub.url() + "/acme/tiny-llama/resolve/"), std::string::npos);
  }
}

// An architecture no family knows, fetched from the Hub: the fetched headers size it (family
// "generic"), to the byte what the same checkpoint as a Llama gives, since the Transformers backend
// shards a Llama-shaped model as vLLM's Llama does when KV heads divide by TP.
TEST_F(HubTest, AnUnknownArchitectureIsSizedFromTheFetchedHeaders) {
  write_llama_checkpoint(repos() / "acme" / "tiny-llama", 2);
  write_llama_checkpoint(repos() / "acme" / "tiny-zeta", 2);
  {
    auto config = nlohmann::json::parse(std::ifstream(repos() / "acme" / "tiny-zeta" / "config.json"));
    config["architectures"] = {"ZetaForCausalLM"};
    config["model_type"] = "zeta";
    std::ofstream(repos() / "acme" / "tiny-zeta" / "config.json") << config.dump();
  }
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun llama = run(configs_without_models(), {"fit", "acme/tiny-llama", "--gpu", "h100", "-tp", "2", "--json"});
  const CliRun zeta = run(configs_without_models(), {"fit", "acme/tiny-zeta", "--gpu", "h100", "-tp", "2", "--json"});
  ASSERT_EQ(llama.code, 0) << llama.err;
  ASSERT_EQ(zeta.code, 0) << zeta.err;
  const auto a = nlohmann::json::parse(llama.out), b = nlohmann::json::parse(zeta.out);
  EXPECT_EQ(b["model"]["family"], "generic");
  // Llama's rotary cos/sin cache is a vLLM buffer the Transformers backend does not build.
  std::int64_t buffers = 0;
  for (const auto& c : a["per_gpu"]["weights_components"]) {
    if (c["name"] == "runtime_buffers") buffers = c["bytes"].get<std::int64_t>();
  }
  EXPECT_GT(buffers, 0);
  EXPECT_EQ(b["per_gpu"]["weights_bytes"].get<std::int64_t>(), a["per_gpu"]["weights_bytes"].get<std::int64_t>() - buffers);
  EXPECT_EQ(b["kv_cache"]["bytes_per_token"], a["kv_cache"]["bytes_per_token"]);
}

TEST_F(HubTest, FitChecksTheFetchedHeadersAgainstTheConfig) {
  write_llama_checkpoint(repos() / "acme" / "tiny-llama", 1);
  // The config says 4 layers, the checkpoint holds 2: the headers disagree and fit says so.
  std::ofstream(repos() / "acme" / "tiny-llama" / "config.json") << R"({"architectures":["LlamaForCausalLM"],
    "model_type":"llama","hidden_size":256,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":512,
    "num_hidden_layers":4,"vocab_size":1000,"max_position_embeddings":2048,"torch_dtype":"bfloat16"})";
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun r = run(configs_without_models(), {"fit", "acme/tiny-llama", "--gpu", "h100"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the safetensors headers imply"), std::string::npos) << r.err;
}

TEST_F(HubTest, AHundredAndNineteenShardCheckpoint) {
  // Kimi-K2.5's 119 shards, with a thousand tensors each (shrunk to 16 bytes).
  std::vector<test::FixtureTensor> tensors;
  for (int layer = 0; layer < 61; ++layer) {
    for (int expert = 0; expert < 650; ++expert) {
      tensors.push_back({fmt::format("model.layers.{}.mlp.experts.{}.w.weight", layer, expert), "U8", {4, 4}});
    }
  }
  const fs::path repo = repos() / "acme" / "many-shards";
  fs::create_directories(repo);
  fs::copy_file(kConfigs / "models" / "nvidia__Kimi-K2.5-NVFP4" / "config.json", repo / "config.json");
  test::write_sharded_checkpoint(repo, tensors, 119);
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun r = run(configs_without_models(), {"weights", "acme/many-shards", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& headers = j["workers"][0]["headers"];
  EXPECT_EQ(headers["checkpoint_bytes"], static_cast<std::int64_t>(tensors.size()) * 16) << r.out.substr(0, 2000);
  const fs::path snapshots = gpubudget_cache() / "hub" / "models--acme--many-shards" / "snapshots";
  const auto manifest = nlohmann::json::parse(std::ifstream(fs::directory_iterator(snapshots)->path() / kHeaderCopiesManifest));
  EXPECT_EQ(manifest["shards"].size(), 119u);
}

TEST_F(HubTest, TheLibraryReportsProgressAndWhereTheModelCameFrom) {
  write_llama_checkpoint(repos() / "acme" / "tiny-llama", 5);
  const test::FakeHub hub(repos());
  use_hub(hub);
  HubOptions options = hub_options_from_environment();
  std::vector<HubProgress> reports;
  options.progress = [&](const HubProgress& p) { reports.push_back(p); };
  const ModelLocation fetched = locate_model("acme/tiny-llama", test::configs(), options);
  EXPECT_EQ(fetched.origin, ModelOrigin::kHub);
  EXPECT_EQ(fetched.repo, "acme/tiny-llama");
  EXPECT_EQ(fetched.revision, "main");
  EXPECT_EQ(fetched.commit.size(), 40u);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.front().shards_done, 0);
  EXPECT_EQ(reports.back().shards_done, 5);
  EXPECT_EQ(reports.back().shards_total, 5);
  for (std::size_t i = 1; i < reports.size(); ++i) EXPECT_GE(reports[i].shards_done, reports[i - 1].shards_done);
  EXPECT_GT(reports.back().bytes_received, 0);
  const ModelLocation again = locate_model("acme/tiny-llama", test::configs(), options);
  EXPECT_EQ(again.origin, ModelOrigin::kGpubudgetCache);
  EXPECT_EQ(again.commit, fetched.commit);
  EXPECT_EQ(load_model(again).architecture, "LlamaForCausalLM");
}

TEST_F(HubTest, GatedRepositoryAndTheToken) {
  write_llama_checkpoint(repos() / "acme" / "gated", 1);
  behaviours("acme/gated", {{"gated", true}});
  const std::string token = "hf_secretSECRET0123456789";
  const test::FakeHub hub(repos(), 0, token);
  use_hub(hub);
  const CliRun anonymous = run(configs_without_models(), {"fit", "acme/gated", "--gpu", "h100"});
  EXPECT_EQ(anonymous.code, 3);
  EXPECT_NE(anonymous.err.find("acme/gated: no access (HTTP 401)"), std::string::npos) << anonymous.err;
  EXPECT_NE(anonymous.err.find("accept the license on the model page and set HF_TOKEN"), std::string::npos);
  EXPECT_NE(anonymous.err.find(hub.url() + "/acme/gated/resolve/"), std::string::npos) << anonymous.err;
  // A token without access: 403.
  ::setenv("HF_TOKEN", "hf_wrong", 1);
  const CliRun wrong = run(configs_without_models(), {"fit", "acme/gated", "--gpu", "h100"});
  EXPECT_EQ(wrong.code, 3);
  EXPECT_NE(wrong.err.find("no access (HTTP 403)"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("hf_wrong"), std::string::npos) << "the token is never printed";
  // The token file, read when HF_TOKEN is unset.
  ::unsetenv("HF_TOKEN");
  fs::create_directories(root_ / "hf-home");
  std::ofstream(root_ / "hf-home" / "token") << token << "\n";
  const CliRun allowed = run(configs_without_models(), {"fit", "acme/gated", "--gpu", "h100"});
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_EQ(allowed.err.find(token), std::string::npos);
  EXPECT_EQ(allowed.out.find(token), std::string::npos);
  // The token went to the Hub's host only, never to the CDN.
  bool hub_saw_token = false;
  for (const auto& request : hub.requests()) {
    if (request["server"] == "cdn") {
      EXPECT_FALSE(request["authorization"].get<bool>()) << request.dump();
    }
    if (request["server"] == "hub" && request["authorization"].get<bool>()) hub_saw_token = true;
  }
  EXPECT_TRUE(hub_saw_token);
}

struct ErrorCase {
  std::string name;
  nlohmann::json behaviours;
  std::vector<std::string> extra_args;
  std::string expected;  // in stderr, with exit 3
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class HubErrors : public HubTest, public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(HubErrors, ExitThreeWithTheRepositoryAndTheUrl) {
  const ErrorCase& c = GetParam();
  write_llama_checkpoint(repos() / "acme" / "model", 2);
  if (!c.behaviours.is_null()) behaviours("acme/model", c.behaviours);
  const test::FakeHub hub(repos(), c.name == "timeout" ? 2000 : 0);
  use_hub(hub);
  std::vector<std::string> args = {"fit", c.name == "no_repository" ? "acme/nothing" : "acme/model", "--gpu", "h100"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  const CliRun r = run(configs_without_models(), args);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("acme/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(hub.url()), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  // Nothing half-fetched is left to be mistaken for a snapshot.
  const fs::path snapshots = gpubudget_cache() / "hub" / "models--acme--model" / "snapshots";
  if (fs::exists(snapshots)) {
    EXPECT_TRUE(fs::is_empty(snapshots)) << snapshots;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HubErrors,
    ::testing::Values(
        ErrorCase{"no_repository", nullptr, {}, "no access (HTTP 401): the repository is gated or private, or does not exist"},
        ErrorCase{"no_revision", nullptr, {"--revision", "v2"}, "no revision \"v2\" on the Hub (HTTP 404"},
        ErrorCase{"timeout", nullptr, {"--hub-timeout", "0.3"}, "within 0.3 s (--hub-timeout)"},
        ErrorCase{"model_info_not_json", {{"api", "malformed"}}, {}, "the model info is not JSON"},
        ErrorCase{"model_info_oversized", {{"api", "huge"}}, {}, "larger than gpubudget accepts"},
        ErrorCase{"truncated_range", {{"range", "truncate"}}, {}, "cut off before its announced length"},
        ErrorCase{"lying_content_range", {{"range", "lie"}}, {}, "Content-Range"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST_F(HubTest, ShardNamesThatLeaveTheRepositoryAreRefused) {
  write_llama_checkpoint(repos() / "acme" / "evil", 1);
  std::ofstream(repos() / "acme" / "evil" / "model.safetensors.index.json")
      << R"({"weight_map": {"lm_head.weight": "../../../etc/passwd.safetensors"}})";
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun r = run(configs_without_models(), {"fit", "acme/evil", "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("outside the model folder"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model.safetensors.index.json"), std::string::npos) << r.err;
  for (const auto& request : hub.requests()) EXPECT_EQ(request["path"].get<std::string>().find("passwd"), std::string::npos);
}

TEST_F(HubTest, AServerThatIgnoresRangeStillGivesTheHeaders) {
  write_llama_checkpoint(repos() / "acme" / "model", 2);
  behaviours("acme/model", {{"range", "ignore"}});
  const test::FakeHub hub(repos());
  use_hub(hub);
  const CliRun r = run(configs_without_models(), {"weights", "acme/model", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["workers"][0]["headers"]["difference_bytes"], 0) << r.out;
}

TEST_F(HubTest, NoNetworkIsOneClearLine) {
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);  // nothing listens on port 1
  const CliRun r = run(configs_without_models(), {"fit", "acme/model", "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("acme/model: cannot reach http://127.0.0.1:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("HF_HUB_OFFLINE=1 uses the cache"), std::string::npos) << r.err;
}

TEST_F(HubTest, EnvironmentIsReadAsHuggingFaceHubReadsIt) {
  ::setenv("HF_ENDPOINT", "https://hub.example.org/", 1);
  ::setenv("HF_HUB_OFFLINE", "true", 1);
  ::setenv("HF_TOKEN", "  hf_abc \n", 1);
  HubOptions o = hub_options_from_environment();
  EXPECT_EQ(o.endpoint, "https://hub.example.org");
  EXPECT_TRUE(o.offline);
  EXPECT_EQ(o.token, "hf_abc");
  EXPECT_EQ(o.hf_cache_dir, root_ / "hf-cache");
  EXPECT_EQ(o.cache_dir, root_ / "xdg-cache" / "gpubudget");
  ::unsetenv("HF_HUB_CACHE");
  EXPECT_EQ(hub_options_from_environment().hf_cache_dir, root_ / "hf-home" / "hub");
  ::setenv("HF_HUB_OFFLINE", "maybe", 1);
  test::expect_input_error([] { (void)hub_options_from_environment(); }, "HF_HUB_OFFLINE=maybe");
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  ::setenv("HF_ENDPOINT", "ftp://x", 1);
  test::expect_input_error([] { (void)hub_options_from_environment(); }, "HF_ENDPOINT=ftp://x");
}

}  // namespace
}  // namespace gpubudget
