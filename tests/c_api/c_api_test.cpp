// The C ABI (include/gpubudget/gpubudget.h, docs/api.md "C ABI"), called as a C program would call
// libgpubudget_c.so: every operation answers the document the CLI prints with --json, and every
// malformed request is status 3 with a message, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "fixtures/safetensors_writer.h"
#include "gpubudget/gpubudget.h"

namespace {

struct Reply {
  int status = -1;
  std::string text;
};

Reply call(const char* request) {
  char* out = nullptr;
  Reply reply;
  reply.status = gpubudget_run_json(request, &out);
  EXPECT_NE(out, nullptr);
  if (out != nullptr) reply.text = out;
  gpubudget_free(out);
  return reply;
}

Reply call(const nlohmann::json& request) {
  nlohmann::json r = request;
  r["config_dir"] = GPUBUDGET_TEST_CONFIG_DIR;
  return call(r.dump().c_str());
}

// `gpubudget <args> --json` in process: status and stdout.
Reply cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  args.insert(args.begin(), {"--config-dir", GPUBUDGET_TEST_CONFIG_DIR});
  const int status = gpubudget::cli::run_cli(args, out, err);
  return {status, out.str()};
}

void expect_refused(const Reply& reply, const std::string& message) {
  EXPECT_EQ(reply.status, 3) << reply.text;
  const auto j = nlohmann::json::parse(reply.text);
  EXPECT_EQ(j["status"], 3);
  EXPECT_NE(j["error"].get<std::string>().find(message), std::string::npos) << j["error"];
}

TEST(CApi, FitAnswersTheDocumentOfFitJson) {
  const Reply c = call(nlohmann::json{{"operation", "fit"},
                                      {"model", "nvidia/Kimi-K2.5-NVFP4"},
                                      {"gpu", "rtx-pro-6000"},
                                      {"vllm_version", "0.15"},
                                      {"deployment",
                                       {{"tensor_parallel_size", 8},
                                        {"kv_cache_dtype", "bfloat16"},
                                        {"gpu_memory_utilization", 0.9}}}});
  const Reply line = cli({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--kv-cache-dtype",
                          "bfloat16", "--gpu-memory-utilization", "0.9", "--vllm-version", "0.15", "--json"});
  EXPECT_EQ(c.status, 1);  // 262,144 tokens do not fit (docs/methodology.md §7)
  EXPECT_EQ(c.status, line.status);
  EXPECT_EQ(c.text, line.text);
}

// An architecture no family knows, with its safetensors: the C ABI answers the generic estimate, labelled
// as the CLI labels it (tests/cli/generic_test.cpp checks the figures).
TEST(CApi, AnUnknownArchitectureWithHeadersIsTheLabelledGenericEstimate) {
  const auto dir = gpubudget::test::fresh_fixture_dir("c-api-generic");
  std::ofstream(dir / "config.json") << R"({"architectures": ["ZetaForCausalLM"], "model_type": "zeta",
    "hidden_size": 256, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
    "vocab_size": 1024, "max_position_embeddings": 2048, "torch_dtype": "bfloat16"})";
  gpubudget::test::write_safetensors(
      dir / "model.safetensors",
      {{"model.embed_tokens.weight", "BF16", {1024, 256}}, {"lm_head.weight", "BF16", {1024, 256}},
       {"model.layers.0.self_attn.q_proj.weight", "BF16", {256, 256}},
       {"model.layers.0.self_attn.k_proj.weight", "BF16", {128, 256}},
       {"model.layers.0.self_attn.v_proj.weight", "BF16", {128, 256}},
       {"model.layers.0.self_attn.o_proj.weight", "BF16", {256, 256}}});
  const Reply c = call(nlohmann::json{{"operation", "fit"}, {"model", dir.string()}, {"gpu", "h100"}});
  ASSERT_EQ(c.status, 0) << c.text;
  const auto j = nlohmann::json::parse(c.text);
  EXPECT_EQ(j["model"]["family"], "generic");
  // 2 x 1024 x 256 x 2 (embedding, head) + (256 + 128 + 128 + 256) x 256 x 2 = 1,441,792 B.
  EXPECT_EQ(j["per_gpu"]["weights_bytes"], 1'441'792);
  EXPECT_NE(j["warnings"].dump().find("generic estimate"), std::string::npos);
  // Each warning has its code beside it, in the same place of `warning_codes`.
  ASSERT_EQ(j["warning_codes"].size(), j["warnings"].size());
  for (std::size_t i = 0; i < j["warnings"].size(); ++i) {
    if (j["warnings"][i].get<std::string>().rfind("generic estimate", 0) == 0) {
      EXPECT_EQ(j["warning_codes"][i], "generic_estimate") << j["warnings"][i];
    }
  }
  EXPECT_EQ(c.text, cli({"fit", dir.string(), "--gpu", "h100", "--json"}).text);
  std::filesystem::remove_all(dir);
}

TEST(CApi, EveryOtherOperationAnswersTheCliDocument) {
  EXPECT_EQ(call(nlohmann::json{{"operation", "weights"},
                                {"model", "meta-llama/Llama-3.1-8B"},
                                {"deployment", {{"tensor_parallel_size", 2}}},
                                {"by", "layer"}})
                .text,
            cli({"weights", "meta-llama/Llama-3.1-8B", "-tp", "2", "--by", "layer", "--json"}).text);
  EXPECT_EQ(call(nlohmann::json{{"operation", "sweep"},
                                {"model", "meta-llama/Llama-3.1-8B"},
                                {"gpus", {"h100", "rtx-4090"}},
                                {"tensor_parallel_sizes", {1, 2}},
                                {"kv_cache_dtypes", {"auto", "fp8"}}})
                .text,
            cli({"sweep", "meta-llama/Llama-3.1-8B", "--gpu", "h100,rtx-4090", "-tp", "1,2", "--kv-cache-dtype",
                 "auto,fp8", "--format", "json"})
                .text);
  // (GPU, TP) pairs, as sweep --layout: 4 x H100 or 8 x RTX 4090, two rows.
  const Reply pairs = call(nlohmann::json{{"operation", "sweep"},
                                          {"model", "meta-llama/Llama-3.1-8B"},
                                          {"layouts", {{{"gpu", "h100"}, {"tensor_parallel_size", 4}},
                                                       {{"gpu", "rtx-4090"}, {"tensor_parallel_size", 8}}}}});
  EXPECT_EQ(pairs.text, cli({"sweep", "meta-llama/Llama-3.1-8B", "--layout", "h100:4,rtx-4090:8", "--format", "json"}).text);
  ASSERT_EQ(nlohmann::json::parse(pairs.text).size(), 2U) << pairs.text;
  EXPECT_EQ(nlohmann::json::parse(pairs.text)[1]["tensor_parallel_size"], 8) << pairs.text;
  const Reply plan = call(nlohmann::json{
      {"operation", "plan"}, {"model", "meta-llama/Llama-3.1-8B"}, {"max_model_len", 32768}, {"concurrency", 4},
      {"gpus", {"h100", "rtx-4090"}}});
  EXPECT_EQ(plan.status, 0);
  EXPECT_EQ(plan.text, cli({"plan", "meta-llama/Llama-3.1-8B", "--max-model-len", "32768", "--concurrency", "4",
                            "--gpu", "h100,rtx-4090", "--json"})
                           .text);
  const std::string log = std::string(GPUBUDGET_TEST_DATA_DIR) + "/logs/incident-kimi-k25-tp8.log";
  EXPECT_EQ(call(nlohmann::json{{"operation", "diagnose"}, {"log", log}, {"model", "nvidia/Kimi-K2.5-NVFP4"}}).text,
            cli({"diagnose", log, "--model", "nvidia/Kimi-K2.5-NVFP4", "--json"}).text);
  EXPECT_EQ(call(nlohmann::json{{"operation", "gpus"}}).text, cli({"gpus", "--json"}).text);
  EXPECT_EQ(call(nlohmann::json{{"operation", "models"}}).text, cli({"models", "--json"}).text);
  const Reply version = call(R"({"operation": "version"})");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(nlohmann::json::parse(version.text)["version"], gpubudget_version());
}

TEST(CApi, MalformedRequestsAreStatusThreeWithAMessage) {
  expect_refused(call(static_cast<const char*>(nullptr)), "request_json is NULL");
  expect_refused(call("{\"operation\": \"fit\""), "request is not JSON");
  expect_refused(call("[1, 2]"), "request: expected a JSON object");
  expect_refused(call(R"({"operation": 7})"), "request:/operation: expected a string, got 7");
  expect_refused(call(R"({"operation": "fly"})"), "request:/operation: expected one of version, fit");
  expect_refused(call(std::string(100, '[').c_str()), "request is nested deeper than 16");
  // Per operation: a missing field, a field of the wrong type, an unknown field, a bad value.
  expect_refused(call(nlohmann::json{{"operation", "fit"}, {"gpu", "h100"}}), "request:/model: expected a string");
  expect_refused(call(nlohmann::json{{"operation", "sweep"},
                                     {"model", "meta-llama/Llama-3.1-8B"},
                                     {"layouts", {{{"gpu", "h100"}, {"tensor_parallel_size", 0}}}}}),
                 "request:/layouts/0/tensor_parallel_size: expected an integer in [1, 1024], got 0");
  expect_refused(call(nlohmann::json{{"operation", "sweep"},
                                     {"model", "meta-llama/Llama-3.1-8B"},
                                     {"gpus", {"h100"}},
                                     {"layouts", {{{"gpu", "h100"}, {"tensor_parallel_size", 2}}}}}),
                 "request:/layouts: expected given instead of gpus");
  expect_refused(call(nlohmann::json{{"operation", "sweep"}, {"model", "meta-llama/Llama-3.1-8B"}, {"layouts", {"h100:4"}}}),
                 "request:/layouts: expected an array of objects");
  expect_refused(call(nlohmann::json{{"operation", "fit"}, {"model", "meta-llama/Llama-3.1-8B"}, {"gpu", 80}}),
                 "request:/gpu: expected an array of strings, got 80");
  expect_refused(call(nlohmann::json{{"operation", "fit"},
                                     {"model", "meta-llama/Llama-3.1-8B"},
                                     {"gpu", "h100"},
                                     {"deployment", {{"tensor_parallel_size", "8"}}}}),
                 "request:/deployment/tensor_parallel_size: expected an integer");
  expect_refused(call(nlohmann::json{{"operation", "fit"},
                                     {"model", "meta-llama/Llama-3.1-8B"},
                                     {"gpu", "h100"},
                                     {"deployment", {{"kv_cache_dtype", "fp7"}}}}),
                 "request:/deployment/kv_cache_dtype: unsupported value \"fp7\"");
  expect_refused(call(nlohmann::json{{"operation", "fit"},
                                     {"model", "meta-llama/Llama-3.1-8B"},
                                     {"gpu", "h100"},
                                     {"tensor_parallel_size", 2}}),
                 "request:/tensor_parallel_size: unknown key");
  expect_refused(call(nlohmann::json{{"operation", "weights"}, {"model", "meta-llama/Llama-3.1-8B"}, {"by", 3}}),
                 "request:/by: expected a string");
  expect_refused(call(nlohmann::json{{"operation", "sweep"}, {"model", "meta-llama/Llama-3.1-8B"}, {"gpus", {}}}),
                 "request:/gpus: expected a non-empty array");
  expect_refused(call(nlohmann::json{{"operation", "sweep"},
                                     {"model", "meta-llama/Llama-3.1-8B"},
                                     {"gpus", {"h100"}},
                                     {"gpu_memory_utilizations", {1.5}}}),
                 "request:/gpu_memory_utilizations: expected a non-empty array of numbers in (0, 1]");
  expect_refused(call(nlohmann::json{{"operation", "plan"}, {"model", "meta-llama/Llama-3.1-8B"}, {"concurrency", 0}}),
                 "request:/concurrency: expected an integer in [1,");
  expect_refused(call(nlohmann::json{{"operation", "diagnose"}, {"log", "/nonexistent.log"}}),
                 "/nonexistent.log: cannot be read");
  expect_refused(call(nlohmann::json{{"operation", "gpus"}, {"extra", true}}), "request:/extra: unknown key");
}

// The C ABI resolves a Hub id as the CLI does: the environment's caches and endpoint, with the request's
// "revision" and "hub" settings.
TEST(CApi, HubModelsResolveFromTheCachesAndFailClearly) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("gpubudget-c-api-hub-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path repo = root / "xdg" / "gpubudget" / "hub" / "models--acme--cached-llama";
  const std::string commit(40, 'd');
  fs::create_directories(repo / "refs");
  fs::create_directories(repo / "snapshots" / commit);
  std::ofstream(repo / "refs" / "main") << commit;
  fs::copy_file(fs::path(GPUBUDGET_TEST_CONFIG_DIR) / "models" / "meta-llama__Llama-3.1-8B" / "config.json",
                repo / "snapshots" / commit / "config.json");
  ::setenv("XDG_CACHE_HOME", (root / "xdg").c_str(), 1);
  ::setenv("HF_HUB_CACHE", (root / "hf").c_str(), 1);
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);  // nothing listens there
  ::unsetenv("HF_HUB_OFFLINE");
  const nlohmann::json fit_cached = {{"operation", "fit"}, {"model", "acme/cached-llama"}, {"gpu", "h100"}};
  const Reply cached = call(fit_cached);
  const Reply bundled = call(nlohmann::json{{"operation", "fit"}, {"model", "meta-llama/Llama-3.1-8B"}, {"gpu", "h100"}});
  ASSERT_EQ(cached.status, 0) << cached.text;
  auto a = nlohmann::json::parse(cached.text), b = nlohmann::json::parse(bundled.text);
  EXPECT_EQ(a["model"]["source"], (repo / "snapshots" / commit / "config.json").string());
  a["model"].erase("source");
  b["model"].erase("source");
  EXPECT_EQ(a, b);
  // A revision that is not cached needs the Hub, which cannot be reached; offline, it is refused.
  nlohmann::json other = fit_cached;
  other["revision"] = "v2";
  expect_refused(call(other), "acme/cached-llama: cannot reach http://127.0.0.1:1");
  other["hub"] = {{"offline", true}};
  expect_refused(call(other), "HF_HUB_OFFLINE=1 forbids fetching it");
  other["hub"] = {{"timeout_seconds", 0}};
  expect_refused(call(other), "request:/hub/timeout_seconds");
  other["hub"] = {{"token", "x"}};
  expect_refused(call(other), "request:/hub/token: unknown key");
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  fs::remove_all(root);
}

}  // namespace
