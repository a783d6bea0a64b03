// The command line in process: exit codes, the fixed JSON fields, error messages.
#include "cli.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_support.h"
#include "cli_errors.h"

namespace gpubudget::cli {
namespace {

using test::CliRun;
CliRun run(std::vector<std::string> args) { return test::run_cli(std::move(args)); }

const std::vector<std::string> kIncident = {"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8",
                                            "--gpu-memory-utilization", "0.9", "--vllm-version", "0.15"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void collect_keys(const nlohmann::json& j, std::set<std::string>& keys) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      keys.insert(key);
      collect_keys(value, keys);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) collect_keys(value, keys);
  }
}

TEST(CliDocs, CliMdNamesEveryFlagOfEveryCommand) {
  // The completion script lists each command's long flags straight from the parser.
  const std::string doc = read_text(std::filesystem::path(GPUBUDGET_TEST_SOURCE_DIR) / "docs" / "cli.md");
  const CliRun completion = run({"completion", "bash"});
  ASSERT_EQ(completion.code, 0);
  std::istringstream lines(completion.out);
  std::size_t flags = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto close = line.find(") COMPREPLY=($(compgen -W \"");
    if (close == std::string::npos) continue;
    const std::string command = line.substr(line.find_first_not_of(' '), close - line.find_first_not_of(' '));
    const auto from = close + std::string(") COMPREPLY=($(compgen -W \"").size();
    std::istringstream words(line.substr(from, line.find('"', from) - from));
    for (std::string flag; words >> flag;) {
      ++flags;
      EXPECT_NE(doc.find(flag), std::string::npos) << command << " " << flag << " is not in docs/cli.md";
    }
  }
  EXPECT_GT(flags, 60u);  // 84 today: the parse found the flags
}

TEST(CliDocs, CliMdNamesEveryJsonField) {
  const std::string doc = read_text(std::filesystem::path(GPUBUDGET_TEST_SOURCE_DIR) / "docs" / "cli.md");
  const std::vector<std::vector<std::string>> commands = {
      with(kIncident, {"--json"}),
      {"sweep", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "-dcp", "1,8", "--format", "json"},
      {"diagnose", std::string(GPUBUDGET_TEST_DATA_DIR) + "/logs/incident-kimi-k25-tp8.log", "--model",
       "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "--json"}};
  for (const auto& command : commands) {
    const CliRun r = run(command);
    ASSERT_LE(r.code, 1) << r.err;
    const auto json = nlohmann::json::parse(r.out);
    std::set<std::string> keys;
    collect_keys(json, keys);
    for (const auto& key : keys) {
      // diagnose's `logged` holds the log's own settings under vLLM's names (documented as a whole).
      if (json.is_object() && json.contains("logged") && json["logged"].contains(key)) continue;
      EXPECT_NE(doc.find(key), std::string::npos) << command.front() << ": JSON field " << key << " is not in docs/cli.md";
    }
  }
}

TEST(CliWeights, JsonRowsAddUpToFitsWeights) {
  // Kimi-K2.5-NVFP4 at TP8 on the incident's GPU: per component, per layer and per tensor, the rows sum
  // to the weights `fit` charges (70.71 GiB), and the routed experts are the hand formula's 66.45 GiB.
  const CliRun fitted = run({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--json"});
  const auto expected = nlohmann::json::parse(fitted.out)["per_gpu"]["weights_bytes"].get<std::int64_t>();
  for (const char* by : {"component", "layer", "tensor"}) {
    const CliRun r = run({"weights", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--by", by, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    std::int64_t sum = 0;
    for (const auto& row : j["workers"][0]["rows"]) sum += row["bytes"].get<std::int64_t>();
    EXPECT_EQ(sum, expected) << by;
    EXPECT_EQ(j["workers"][0]["weights_bytes"].get<std::int64_t>(), expected) << by;
    if (std::string(by) == "component") {
      for (const auto& row : j["workers"][0]["rows"]) {
        if (row["name"] == "routed_experts") {
          EXPECT_EQ(row["bytes"].get<std::int64_t>(),
                    60LL * 384 * (512LL * 7168 / 2 + 512LL * 448 + 7168LL * 256 / 2 + 7168LL * 16 + 24));
        }
      }
    }
  }
  EXPECT_EQ(run({"weights", "nvidia/Kimi-K2.5-NVFP4", "--by", "expert"}).code, 2);
}

// Every launch option gpubudget models, pasted as vLLM spells it (underscores, -q, an environment
// variable, the list flag), gives the same document as gpubudget's own flags; the document shows them.
// --limit-mm-per-prompt leaves the tower out only when every modality it serves is 0
// (_mark_tower_model; Qwen3-VL serves images and videos, so {"image": 0} still profiles videos).
TEST(CliFit, MultimodalLimitsDropTheTowerOnlyWhenEveryModalityIsZero) {
  const auto vision_bytes = [](const CliRun& r) {
    std::int64_t bytes = 0;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& c : j["per_gpu"]["weights_components"]) {
      if (c["name"] == "vision") bytes = c["bytes"].get<std::int64_t>();
    }
    return bytes;
  };
  const std::vector<std::string> base = {"fit", "Qwen/Qwen3-VL-30B-A3B-Instruct", "--gpu", "h200", "--max-model-len", "32768", "--json"};
  auto with = [&](const std::string& limits) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--limit-mm-per-prompt", limits});
    return run(args);
  };
  const CliRun images_only = with(R"({"image": 0})");
  const CliRun none = with(R"({"image": 0, "video": 0})");
  ASSERT_EQ(images_only.code, 0) << images_only.err;
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(vision_bytes(images_only), vision_bytes(run(base)));
  EXPECT_GT(vision_bytes(images_only), 0);
  EXPECT_GT(nlohmann::json::parse(images_only.out)["per_gpu"]["encoder_profile_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(vision_bytes(none), 0);
  EXPECT_EQ(nlohmann::json::parse(none.out)["per_gpu"]["encoder_profile_bytes"], 0);
  EXPECT_EQ(nlohmann::json::parse(none.out)["deployment"]["language_model_only"], true);
  EXPECT_EQ(with(R"({"image": -1})").code, 2);
}

// An EAGLE-3 head named in --speculative-config is read like the model (a bundled id here), and a
// pasted line gives the same JSON; its weights are the draft_model row (850,159,616 B at TP 1, worked in
// tests/unit/launch_options_test.cpp) and its layer one more KV layer.
TEST(CliFit, Eagle3DraftFromFlagsAndFromAPastedLine) {
  const std::string spec =
      R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})";
  const CliRun flags = run({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--speculative-config", spec,
                            "--json"});
  const CliRun pasted = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
                             "--speculative-config", spec});
  ASSERT_EQ(flags.code, 0) << flags.err;
  EXPECT_EQ(flags.out, pasted.out);
  const auto j = nlohmann::json::parse(flags.out);
  std::int64_t draft = 0;
  for (const auto& c : j["per_gpu"]["weights_components"]) {
    if (c["name"] == "draft_model") draft = c["bytes"].get<std::int64_t>();
  }
  EXPECT_EQ(draft, 850'159'616LL);
  EXPECT_EQ(j["kv_cache"]["draft_bytes_per_token"], 4096);
  EXPECT_NE(j["warnings"].dump().find("taken to hold no embed_tokens"), std::string::npos) << j["warnings"].dump();
  // A draft that cannot be read is the draft's error, exit 3.
  const CliRun missing = run({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--speculative-config",
                              R"({"method": "eagle3", "model": "/nonexistent/head", "num_speculative_tokens": 3})"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find("/nonexistent/head"), std::string::npos) << missing.err;
}

// -O0, -O 0, -cc.cudagraph_mode=NONE and --compilation-config in a pasted line are the flags; the
// printed launch line keeps the launch options (a drafter left off the copied line would be a wrong
// launch).
TEST(CliFit, CompilationFlagsAndTheLaunchLineKeepsLaunchOptions) {
  const std::vector<std::string> base = {"fit", "Qwen/Qwen3-32B", "--gpu", "h100", "--max-model-len", "32768", "--json"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  const CliRun flag = with({"-O", "0"});
  ASSERT_EQ(flag.code, 0) << flag.err;
  EXPECT_EQ(nlohmann::json::parse(flag.out)["per_gpu"]["cudagraph_bytes"], 0);
  EXPECT_EQ(nlohmann::json::parse(flag.out)["deployment"]["optimization_level"], 0);
  const std::vector<std::string> line = {"--", "vllm", "serve", "Qwen/Qwen3-32B", "--max-model-len", "32768"};
  std::vector<std::string> pasted = {"fit", "--gpu", "h100", "--json"};
  pasted.insert(pasted.end(), line.begin(), line.end());
  pasted.push_back("-O0");
  EXPECT_EQ(run(pasted).out, flag.out);
  const CliRun dotted = with({"--compilation-config", R"({"cudagraph_mode": "none"})"});
  std::vector<std::string> pasted_dotted = {"fit", "--gpu", "h100", "--json"};
  pasted_dotted.insert(pasted_dotted.end(), line.begin(), line.end());
  pasted_dotted.push_back("-cc.cudagraph_mode=NONE");
  EXPECT_EQ(nlohmann::json::parse(run(pasted_dotted).out)["deployment"]["cudagraph_mode"], "NONE");
  EXPECT_EQ(nlohmann::json::parse(dotted.out)["per_gpu"]["cudagraph_bytes"], 0);
  EXPECT_EQ(with({"--compilation-config", R"({"cudagraph_mode": "sometimes"})"}).code, 2);
  EXPECT_EQ(with({"-O", "4"}).code, 2);
  const CliRun launch = run({"fit", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--vllm-args",
                             "--speculative-config",
                             R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})",
                             "--enable-lora", "--max-loras", "2", "-O", "3"});
  EXPECT_NE(launch.out.find(R"(--speculative-config '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}')"),
            std::string::npos)
      << launch.out;
  EXPECT_NE(launch.out.find("--enable-lora --max-loras 2 --max-lora-rank 16"), std::string::npos) << launch.out;
  EXPECT_NE(launch.out.find(" -O3"), std::string::npos) << launch.out;
}

TEST(CliFit, PastedLaunchOptionsGiveTheSameJsonAsTheFlags) {
  const std::string spec = R"({"method": "mtp", "num_speculative_tokens": 2})";
  const CliRun flags = run({"fit", "deepseek-ai/DeepSeek-V3", "--gpu", "b200", "--tensor-parallel-size", "8",
                            "--max-model-len", "65536", "--speculative-config", spec, "--enable-lora", "--max-loras",
                            "2", "--max-lora-rank", "32", "--lora-dtype", "bfloat16", "--fully-sharded-loras",
                            "--lora-target-modules", "o_proj,down_proj", "--cpu-offload-gb", "4",
                            "--attention-backend", "TRITON_MLA", "--mm-encoder-tp-mode", "data",
                            "--limit-mm-per-prompt", R"({"image": 0})", "--json"});
  const CliRun pasted = run({"fit", "--gpu", "b200", "--json", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3",
                             "-tp", "8", "--max_model_len", "65536", "-sc", spec, "--attention_backend=TRITON_MLA",
                             "--enable-lora", "--max-loras", "2", "--max-lora-rank=32", "--lora-dtype", "bfloat16",
                             "--fully-sharded-loras", "--lora-target-modules", "o_proj", "down_proj",
                             "--cpu-offload-gb", "4", "--mm-encoder-tp-mode", "data", "--limit-mm-per-prompt",
                             R"({"image": 0})"});
  ASSERT_EQ(flags.code, pasted.code) << flags.err << pasted.err;
  EXPECT_EQ(flags.out, pasted.out);
  const auto j = nlohmann::json::parse(flags.out);
  EXPECT_EQ(j["deployment"]["speculative_method"], "mtp");
  EXPECT_EQ(j["deployment"]["num_speculative_tokens"], 2);
  EXPECT_EQ(j["deployment"]["lora"]["max_loras"], 2);
  EXPECT_EQ(j["deployment"]["attention_backend"], "TRITON_MLA");
  EXPECT_GT(j["per_gpu"]["cpu_offloaded_bytes"].get<std::int64_t>(), 4LL << 30);
  EXPECT_EQ(j["kv_cache"]["draft_bytes_per_token"], 576 * 2);
  bool draft = false, lora = false;
  for (const auto& c : j["per_gpu"]["weights_components"]) {
    draft = draft || c["name"] == "draft_model";
    lora = lora || c["name"] == "lora_adapters";
  }
  EXPECT_TRUE(draft && lora) << j["per_gpu"]["weights_components"].dump();
  // VLLM_ATTENTION_BACKEND forces the backend before vLLM 0.15; from 0.15 vLLM ignores it, and so does the budget.
  const std::vector<std::string> env_line = {"--", "VLLM_ATTENTION_BACKEND=TRITON_MLA", "vllm", "serve",
                                             "deepseek-ai/DeepSeek-V3", "-tp", "8", "--max-model-len", "65536"};
  std::vector<std::string> old_vllm = {"fit", "--gpu", "b200", "--vllm-version", "0.14", "--json"};
  old_vllm.insert(old_vllm.end(), env_line.begin(), env_line.end());
  EXPECT_EQ(nlohmann::json::parse(run(old_vllm).out)["deployment"]["attention_backend"], "TRITON_MLA");
  std::vector<std::string> new_vllm = {"fit", "--gpu", "b200", "--json"};
  new_vllm.insert(new_vllm.end(), env_line.begin(), env_line.end());
  const CliRun ignored = run(new_vllm);
  EXPECT_NE(nlohmann::json::parse(ignored.out)["deployment"]["attention_backend"], "TRITON_MLA");
  EXPECT_NE(ignored.err.find("ignores VLLM_ATTENTION_BACKEND"), std::string::npos) << ignored.err;
  // The same with -q fp8 on a bf16 checkpoint.
  const CliRun fp8 = run({"fit", "meta-llama/Llama-3.1-70B", "--gpu", "h100", "-tp", "4", "--quantization", "fp8",
                          "--max-model-len", "8192", "--json"});
  const CliRun fp8_pasted = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "meta-llama/Llama-3.1-70B",
                                 "-tp", "4", "-q", "fp8", "--max-model-len", "8192"});
  EXPECT_EQ(fp8.out, fp8_pasted.out);
  EXPECT_EQ(nlohmann::json::parse(fp8.out)["deployment"]["quantization"], "fp8");
}

// The launch options of the capture sizes, online bitsandbytes and the prefetch offloader: the pasted line
// (vLLM's nargs list, -cc keys) gives the same document as the flags. Llama-3.1-8B on an H100 at 0.22:
// sizes 1, 2, 4, 8 are 4 piecewise and 4 full graphs; groups of 8 with 2 offloaded and 2 slots take 8 of
// the 32 layers to CPU memory (PrefetchOffload.Llama8bGroupsOf8 works the bytes). A largest size that is
// not the list's largest is a configuration vLLM refuses (exit 3); a setting given twice (flag and -cc key)
// a usage error (exit 2), as vLLM raises for both.
TEST(CliFit, PastedCaptureSizesBitsAndBytesAndPrefetchOffloadGiveTheSameJson) {
  const CliRun flags = run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "8192",
                            "--cudagraph-capture-sizes", "1,2,4,8", "-q", "bitsandbytes", "--offload-group-size", "8",
                            "--offload-num-in-group", "2", "--offload-prefetch-step", "2", "--json"});
  const CliRun pasted = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B",
                             "--max-model-len", "8192", "--cudagraph-capture-sizes", "1", "2", "4", "8",
                             "--quantization", "bitsandbytes", "--offload-group-size", "8", "--offload-num-in-group",
                             "2", "--offload_prefetch_step=2"});
  ASSERT_EQ(flags.code, pasted.code) << flags.err << pasted.err;
  EXPECT_EQ(flags.out, pasted.out);
  const auto j = nlohmann::json::parse(flags.out);
  EXPECT_EQ(j["cuda_graphs"]["piecewise"], 4);
  EXPECT_EQ(j["cuda_graphs"]["full"], 4);
  EXPECT_EQ(j["deployment"]["quantization"], "bitsandbytes");
  EXPECT_GT(j["per_gpu"]["prefetch_buffer_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(j["per_gpu"]["dequantized_weights_bytes"], 14336LL * 4096 * 2);
  const CliRun cc = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B",
                         "--max-model-len", "8192", "-cc.cudagraph_capture_sizes=[1,2,4,8]", "-q", "bitsandbytes",
                         "--offload-group-size", "8", "--offload-num-in-group", "2", "--offload-prefetch-step", "2"});
  EXPECT_EQ(nlohmann::json::parse(cc.out)["cuda_graphs"], j["cuda_graphs"]) << cc.err;
  // -O.KEY is the compilation config's dotted form (as launch scripts write it), not an optimization level.
  const CliRun o_dotted = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B",
                               "--max-model-len", "8192", "-O.cudagraph_capture_sizes=[1,2,4,8]", "-q", "bitsandbytes",
                               "--offload-group-size", "8", "--offload-num-in-group", "2", "--offload-prefetch-step",
                               "2"});
  EXPECT_EQ(o_dotted.out, cc.out) << o_dotted.err;
  EXPECT_EQ(run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--cudagraph-capture-sizes", "1,2,4",
                 "--max-cudagraph-capture-size", "8"}).code, 3);  // a configuration vLLM refuses
  EXPECT_EQ(run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-cudagraph-capture-size", "8",
                 "--compilation-config", R"({"max_cudagraph_capture_size": 8})"}).code, 2);
}

// Qwen2.5-VL-7B on an H100 (T 8192), --mm-processor-kwargs max_pixels 1,003,520 and no video: six images
// of 1280 tokens (30,720 patches) in the encoder profile, worked in Overheads.Qwen25VlImagesOnlyAtThe...;
// the pasted line gives the same document, and keys the profile does not read are warned.
TEST(CliFit, MmProcessorKwargsResizeTheQwenVlEncoderProfile) {
  const std::string kwargs = R"({"max_pixels": 1003520, "fps": 2})";
  const CliRun flags = run({"fit", "Qwen/Qwen2.5-VL-7B-Instruct", "--gpu", "h100", "--mm-processor-kwargs", kwargs,
                            "--limit-mm-per-prompt", R"({"video": 0})", "--json"});
  const CliRun pasted = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct",
                             "--mm-processor-kwargs", kwargs, "--limit-mm-per-prompt", R"({"video": 0})"});
  ASSERT_EQ(flags.code, pasted.code) << flags.err << pasted.err;
  EXPECT_EQ(flags.out, pasted.out);
  const auto j = nlohmann::json::parse(flags.out);
  EXPECT_EQ(j["per_gpu"]["encoder_profile_bytes"], 30720LL * 12820 * 2 + 30720LL * 1176 * 6 + 7680LL * 3584 * 2);
  EXPECT_EQ(flags.err.find("not modelled"), std::string::npos) << flags.err;  // fps samples real videos only
  const CliRun unknown = run({"fit", "Qwen/Qwen2.5-VL-7B-Instruct", "--gpu", "h100", "--mm-processor-kwargs",
                              R"({"max_pixels": 1003520, "do_rescale": false})", "--json"});
  EXPECT_NE(unknown.err.find("--mm-processor-kwargs do_rescale: not modelled"), std::string::npos) << unknown.err;
  const CliRun other = run({"fit", "google/gemma-3-4b-it", "--gpu", "h100", "--mm-processor-kwargs",
                            R"({"do_pan_and_scan": true})", "--json"});
  EXPECT_NE(other.err.find("not modelled for this model's processor"), std::string::npos) << other.err;
  EXPECT_EQ(run({"fit", "Qwen/Qwen2.5-VL-7B-Instruct", "--gpu", "h100", "--mm-processor-kwargs",
                 R"({"max_pixels": -1})"}).code, 2);
}

TEST(CliFit, PastedVllmServeLineGivesTheSameJsonAsTheFlags) {
  const CliRun flags = run(with(kIncident, {"--kv-cache-dtype", "bfloat16", "--json"}));
  const CliRun pasted = run({"fit", "--gpu", "rtx-pro-6000", "--vllm-version", "0.15", "--json", "--", "vllm", "serve",
                             "nvidia/Kimi-K2.5-NVFP4", "--tensor-parallel-size", "8", "--gpu-memory-utilization", "0.9",
                             "--kv-cache-dtype", "bfloat16", "--trust-remote-code", "--served-model-name", "kimi"});
  EXPECT_EQ(pasted.code, flags.code);
  EXPECT_EQ(pasted.out, flags.out);
  EXPECT_NE(pasted.err.find("ignored: --trust-remote-code --served-model-name"), std::string::npos) << pasted.err;
  const auto j = nlohmann::json::parse(pasted.out);
  bool fp8 = false, dcp = false, as_is = false;
  for (const auto& r : j["remedies"]) {
    const auto change = r["change"].get<std::string>();
    fp8 = fp8 || (change == "FP8 KV cache" && !r["vllm_would_start"].get<bool>());
    dcp = dcp || change.rfind("decode context parallel", 0) == 0;
    as_is = as_is || change.rfind("the length that fits as is", 0) == 0;
  }
  EXPECT_TRUE(fp8 && dcp && as_is) << j["remedies"].dump(1);
  // --vllm-args: the launch line with the length that fits.
  const CliRun args = run(with(kIncident, {"--kv-cache-dtype", "bfloat16", "--vllm-args", "--safety-margin", "0"}));
  EXPECT_EQ(args.out, "vllm serve nvidia/Kimi-K2.5-NVFP4 --tensor-parallel-size 8 --kv-cache-dtype bfloat16 "
                      "--max-model-len " + std::to_string(j["max_model_len"].get<std::int64_t>()) +
                      " --gpu-memory-utilization 0.9\n");
}

TEST(CliSweep, FormatsAgree) {
  const std::vector<std::string> base = {"sweep", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8",
                                         "-dcp", "1,8", "--kv-cache-dtype", "bfloat16,fp8",
                                         "--gpu-memory-utilization", "0.9,0.95"};
  const CliRun json = run(with(base, {"--format", "json"}));
  ASSERT_EQ(json.code, 0) << json.err;
  const auto rows = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 8u);
  const CliRun csv = run(with(base, {"--format", "csv"}));
  std::istringstream lines(csv.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("gpu,tp,pp,dcp,kv_cache_dtype,", 0), 0u);
  for (const auto& row : rows) {
    std::getline(lines, line);
    EXPECT_NE(line.find("," + std::to_string(row["max_model_len"].get<std::int64_t>()) + ","), std::string::npos) << line;
  }
  const CliRun svg = run(with(base, {"--format", "svg"}));
  EXPECT_EQ(svg.out.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  // Well-formed: every element this writer emits is closed.
  for (const std::string tag : {"text", "svg"}) {
    std::size_t opened = 0, closed = 0;
    for (auto at = svg.out.find("<" + tag); at != std::string::npos; at = svg.out.find("<" + tag, at + 1)) ++opened;
    for (auto at = svg.out.find("</" + tag + ">"); at != std::string::npos; at = svg.out.find("</" + tag + ">", at + 1)) {
      ++closed;
    }
    EXPECT_EQ(opened, closed) << tag;
  }
  EXPECT_EQ(run(with(base, {"--format", "pdf"})).code, 2);
}

TEST(CliFit, IncidentBf16JsonHasTheFixedFields) {
  const CliRun r = run(with(kIncident, {"--kv-cache-dtype", "bfloat16", "--json"}));
  ASSERT_EQ(r.code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["model"]["architecture"], "KimiK25ForConditionalGeneration");
  EXPECT_EQ(j["model"]["num_layers"], 61);
  EXPECT_EQ(j["model"]["derived_max_model_len"], 262144);
  EXPECT_EQ(j["deployment"]["gpu"], "rtx-pro-6000");
  EXPECT_EQ(j["deployment"]["tensor_parallel_size"], 8);
  EXPECT_EQ(j["deployment"]["kv_cache_dtype"], "bfloat16");
  EXPECT_EQ(j["deployment"]["block_size"], 16);
  EXPECT_EQ(j["deployment"]["vllm_version"], "0.15");
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 70272);
  EXPECT_EQ(j["request"]["max_model_len"], 262144);
  EXPECT_EQ(j["request"]["needed_bytes"], 18421383168LL);
  EXPECT_EQ(j["request"]["fits"], false);
  const double weights_gib = j["per_gpu"]["weights_bytes"].get<double>() / 1073741824.0;
  EXPECT_GT(weights_gib, 69.5);
  EXPECT_LT(weights_gib, 72.5);
  for (const char* key : {"requested_bytes", "activation_peak_bytes", "non_torch_bytes", "cudagraph_bytes",
                          "kv_cache_bytes"}) {
    EXPECT_TRUE(j["per_gpu"].contains(key)) << key;
  }
  for (const char* key : {"num_blocks", "tokens", "max_concurrency"}) EXPECT_TRUE(j["kv_cache"].contains(key)) << key;
  EXPECT_GT(j["max_model_len"].get<std::int64_t>(), 0);
  EXPECT_LT(j["max_model_len"].get<std::int64_t>(), 262144);
}

// The checkpoint's own fp8 KV cache would fit (35136 B/token = 61 layers x 576 B, 8.58 GiB for 262,144
// tokens) but no MLA backend of 0.15 takes fp8 on compute capability 12.0 (TRITON_MLA gains fp8 only in
// 0.18, #34597): the memory verdict and the start verdict are reported apart, and the exit is 1.
TEST(CliFit, IncidentCheckpointFp8WouldFitButVllmWouldNotStart) {
  const CliRun r = run(with(kIncident, {"--json"}));
  ASSERT_EQ(r.code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["deployment"]["kv_cache_dtype"], "fp8_e4m3");
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 35136);
  EXPECT_EQ(j["request"]["fits"], false);
  EXPECT_EQ(j["vllm_would_start"], false);
  EXPECT_EQ(j["max_model_len"], 262144);
  EXPECT_NE(r.err.find("warning: no MLA attention backend"), std::string::npos);
  const CliRun text = run(kIncident);
  EXPECT_NE(text.out.find("fits in memory, but vLLM WOULD NOT START"), std::string::npos) << text.out;
  // From 0.18 TRITON_MLA accepts fp8 and the same launch starts.
  const CliRun v018 = run({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8",
                           "--gpu-memory-utilization", "0.9", "--vllm-version", "0.18", "--json"});
  EXPECT_EQ(v018.code, 0) << v018.err;
}

// --max-model-len auto is vLLM's auto-fit (0.14+): the bf16 incident lowers its length and starts (exit 0);
// before 0.14 the value is refused (exit 3).
TEST(CliFit, MaxModelLenAutoFitsTheLengthLikeVllm) {
  const CliRun r = run({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--gpu-memory-utilization",
                        "0.9", "--kv-cache-dtype", "bfloat16", "--max-model-len", "auto", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["deployment"]["max_model_len_auto"], true);
  EXPECT_EQ(j["request"]["auto_fitted"], true);
  EXPECT_EQ(j["request"]["fits"], true);
  EXPECT_LT(j["request"]["max_model_len"].get<std::int64_t>(), 262144);
  EXPECT_EQ(run({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--max-model-len", "-1",
                 "--vllm-version", "0.13"}).code, 3);
}

TEST(CliFit, ContradictoryPairedFlagsAreAUsageError) {
  const CliRun r = run({"fit", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu", "h100", "-tp", "4", "--enable-prefix-caching",
                        "--no-enable-prefix-caching"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--enable-prefix-caching and --no-enable-prefix-caching"), std::string::npos) << r.err;
  EXPECT_EQ(run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--kv-transfer-config", "not json"}).code, 2);
}

// --kv-offloading-size builds a connector (VllmConfig._post_init_kv_transfer_config): native is
// OffloadingConnector, which vLLM 0.21+ lets keep the hybrid KV manager (#39949's SupportsHMA list in
// the profile), so Gemma 3's sliding layers still need only their window; LMCache turns the manager off
// and every layer is held at full length; up to 0.20 any connector turns it off.
TEST(CliFit, KvOffloadingPicksTheConnectorThatDecidesTheHybridManager) {
  const std::vector<std::string> base = {"fit", "google/gemma-3-4b-it", "--gpu", "h100", "--max-model-len", "32768",
                                         "--json"};
  const auto with_flags = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  const auto plain = nlohmann::json::parse(with_flags({}).out);
  const CliRun native_run = with_flags({"--kv-offloading-size", "64"});
  const auto native = nlohmann::json::parse(native_run.out);
  EXPECT_TRUE(native["deployment"]["hybrid_kv_cache_manager"].get<bool>());
  EXPECT_EQ(native["request"]["needed_bytes"], plain["request"]["needed_bytes"]);
  EXPECT_EQ(native["kv_cache"]["num_blocks"], plain["kv_cache"]["num_blocks"]);
  const CliRun lmcache_run = with_flags({"--kv-offloading-size", "64", "--kv-offloading-backend", "lmcache"});
  const auto lmcache = nlohmann::json::parse(lmcache_run.out);
  EXPECT_FALSE(lmcache["deployment"]["hybrid_kv_cache_manager"].get<bool>());
  EXPECT_GT(lmcache["request"]["needed_bytes"].get<std::int64_t>(), plain["request"]["needed_bytes"].get<std::int64_t>());
  EXPECT_NE(lmcache_run.err.find("LMCache's GPU staging buffer"), std::string::npos) << lmcache_run.err;
  EXPECT_FALSE(nlohmann::json::parse(with_flags({"--kv-offloading-size", "64", "--vllm-version", "0.20"}).out)
                   ["deployment"]["hybrid_kv_cache_manager"].get<bool>());
  const CliRun pasted = run({"fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "google/gemma-3-4b-it",
                             "--max-model-len", "32768", "--kv_offloading_size", "64"});
  EXPECT_EQ(pasted.out, native_run.out);
  EXPECT_EQ(with_flags({"--kv-offloading-backend", "lmcache"}).code, 2);
  EXPECT_EQ(with_flags({"--kv-offloading-size", "-1"}).code, 2);
}

// DeepEP high-throughput from a pasted line with VLLM_DEEPEP_BUFFER_SIZE_MB: the same document as the
// flags, and the NVLink buffer's extra 1024 MiB in non-torch memory (docs/methodology.md §5.2).
TEST(CliFit, PastedAll2AllBackendAndDeepEpBufferSize) {
  const CliRun flags = run({"fit", "deepseek-ai/DeepSeek-V3", "--gpu", "b200", "-dp", "8", "--enable-expert-parallel",
                            "--max-model-len", "8192", "--all2all-backend", "deepep_high_throughput", "--vllm-env",
                            "VLLM_DEEPEP_BUFFER_SIZE_MB=2048", "--json"});
  const CliRun pasted = run({"fit", "--gpu", "b200", "--json", "--", "VLLM_DEEPEP_BUFFER_SIZE_MB=2048", "vllm", "serve",
                             "deepseek-ai/DeepSeek-V3", "-dp", "8", "--enable-expert-parallel", "--max-model-len",
                             "8192", "--all2all-backend", "deepep_high_throughput"});
  ASSERT_EQ(flags.code, pasted.code) << flags.err << pasted.err;
  EXPECT_EQ(flags.out, pasted.out);
  const CliRun default_size = run({"fit", "deepseek-ai/DeepSeek-V3", "--gpu", "b200", "-dp", "8",
                                   "--enable-expert-parallel", "--max-model-len", "8192", "--all2all-backend",
                                   "deepep_high_throughput", "--json"});
  EXPECT_EQ(nlohmann::json::parse(flags.out)["per_gpu"]["non_torch_bytes"].get<std::int64_t>() -
                nlohmann::json::parse(default_size.out)["per_gpu"]["non_torch_bytes"].get<std::int64_t>(),
            1024LL << 20);
  EXPECT_EQ(run({"fit", "deepseek-ai/DeepSeek-V3", "--gpu", "b200", "--all2all-backend", "deepep"}).code, 3);
}

// VLLM_MLA_DISABLE in a pasted line is --vllm-env: the same document, DeepSeek-V2-Lite's 27 layers at
// 16 heads x (128 + 64) for K and V, 2 x 16 x 192 x 2 B = 12,288 B per token each, instead of MLA's
// 576 x 2 B; vLLM reads bool(int(value)).
TEST(CliFit, PastedMlaDisable) {
  const CliRun flags = run({"fit", "deepseek-ai/DeepSeek-V2-Lite-Chat", "--gpu", "h100", "--max-model-len", "8192",
                            "--vllm-env", "VLLM_MLA_DISABLE=1", "--json"});
  const CliRun pasted = run({"fit", "--gpu", "h100", "--json", "--", "VLLM_MLA_DISABLE=1", "vllm", "serve",
                             "deepseek-ai/DeepSeek-V2-Lite-Chat", "--max-model-len", "8192"});
  ASSERT_EQ(flags.code, 0) << flags.err;
  EXPECT_EQ(flags.out, pasted.out);
  const auto j = nlohmann::json::parse(flags.out);
  EXPECT_EQ(j["deployment"]["mla_disabled"], true);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"].get<std::int64_t>(), 27 * 12'288);
  EXPECT_EQ(run({"fit", "deepseek-ai/DeepSeek-V2-Lite-Chat", "--gpu", "h100", "--vllm-env", "VLLM_MLA_DISABLE=yes"}).code, 2);
}

// Hybrid models report how vLLM resolved prefix caching and the state dtypes.
TEST(CliFit, HybridJsonNamesTheCacheMode) {
  const CliRun r = run({"fit", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu", "h100", "-tp", "4", "--enable-prefix-caching",
                        "--json"});
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["deployment"]["enable_prefix_caching"], true);
  EXPECT_EQ(j["deployment"]["mamba_cache_mode"], "align");
  EXPECT_EQ(j["deployment"]["block_size"], 272);
}

TEST(CliFit, HumanOutputReadsLikeABudgetAndQuotesVllmsError) {
  const CliRun r = run(with(kIncident, {"--kv-cache-dtype", "bfloat16", "--explain"}));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("70272 bytes per token"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(17.16 GiB KV cache is needed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Largest --max-model-len that fits:"), std::string::npos);
  EXPECT_NE(r.out.find("ceil(total 101972967424 B x gpu_memory_utilization 0.9)"), std::string::npos) << r.out;
}

TEST(CliFit, LlamaKvBytesPerToken) {
  auto j = nlohmann::json::parse(run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "-tp", "1", "--json"}).out);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 131072);
  j = nlohmann::json::parse(run({"fit", "meta-llama/Llama-3.1-70B", "--gpu", "h100", "-tp", "8", "--json"}).out);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 40960);
}

TEST(CliFit, MaxModelLenSyntax) {
  auto j = nlohmann::json::parse(
      run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "32K", "--json"}).out);
  EXPECT_EQ(j["request"]["max_model_len"], 32768);
  j = nlohmann::json::parse(
      run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "32k", "--json"}).out);
  EXPECT_EQ(j["request"]["max_model_len"], 32000);
  j = nlohmann::json::parse(
      run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "-1", "--json"}).out);
  EXPECT_EQ(j["request"]["max_model_len"], 131072);
}

TEST(CliFit, GpuMemoryForAnyOtherGpu) {
  const auto j = nlohmann::json::parse(
      run({"fit", "meta-llama/Llama-3.1-8B", "--gpu-memory", "97887MiB", "--json"}).out);
  EXPECT_EQ(j["deployment"]["gpu"], "custom");
  EXPECT_EQ(j["deployment"]["gpu_memory_bytes"], 97887LL * 1048576);
}

TEST(CliErrors, ExitCodesAndMessages) {
  CliRun r = run({"fit", "/no/such/model", "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("/no/such/model"), std::string::npos) << r.err;

  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gpubudget_cli_test";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << "{\"architectures\": [\"LlamaForCausalLM\", ";
  r = run({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find((dir / "config.json").string() + ": malformed JSON"), std::string::npos) << r.err;

  std::ofstream(dir / "config.json", std::ios::trunc)
      << R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","num_attention_heads":32,
             "intermediate_size":128,"num_hidden_layers":2,"vocab_size":100})";
  r = run({"fit", (dir / "config.json").string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("config.json:/hidden_size: expected an integer"), std::string::npos) << r.err;
  fs::remove_all(dir);

  r = run({"fit", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "3"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("num_attention_heads 64 is not divisible by --tensor-parallel-size 3"), std::string::npos)
      << r.err;

  r = run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--no-such-flag"});
  EXPECT_EQ(r.code, 2);
  r = run({"fit", "meta-llama/Llama-3.1-8B"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--gpu"), std::string::npos);
  r = run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "12x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--max-model-len: invalid value \"12x\""), std::string::npos) << r.err;
  r = run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--kv-cache-dtype", "int3"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("int3"), std::string::npos);
  r = run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--gpu-memory-utilization", "1.5"});
  EXPECT_EQ(r.code, 3);
  r = run({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--max-model-len", "200000"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("User-specified max_model_len (200000)"), std::string::npos) << r.err;
}

TEST(CliOther, GpusAndHelp) {
  CliRun r = run({"gpus", "--json"});
  ASSERT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  EXPECT_GE(j.size(), 10u);
  EXPECT_TRUE(j[0].contains("name"));
  EXPECT_TRUE(j[0].contains("memory_bytes"));
  r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("fit"), std::string::npos);
  r = run({"models"});
  EXPECT_NE(r.out.find("nvidia/Kimi-K2.5-NVFP4"), std::string::npos);
}

}  // namespace
}  // namespace gpubudget::cli

namespace gpubudget::cli {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus_logs() {
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(fs::path(test::data_dir()) / "logs")) {
    if (e.path().extension() == ".log") logs.push_back(e.path());
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

TEST(CliDiagnose, IncidentJsonHasTheFixedFields) {
  const CliRun r = run({"diagnose", (fs::path(test::data_dir()) / "logs" / "incident-kimi-k25-tp8.log").string(),
                        "--model", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["root_cause"], "kv_cache_too_small");
  EXPECT_EQ(j["max_model_len"], 262144);
  EXPECT_EQ(j["needed_kv_cache_bytes"], 18421383168LL);  // 61 x 576 x 2 B x 262144
  EXPECT_TRUE(j["available_kv_cache_bytes"].is_number());
  EXPECT_LT(j["estimated_max_model_len"].get<std::int64_t>(), 262144);
  ASSERT_TRUE(j["remedies"].is_array());
  EXPECT_FALSE(j["remedies"].empty());
}

TEST(CliDiagnose, EveryCorpusLogEmitsAnObservationThatCalibrateAccepts) {
  const fs::path dir = fs::temp_directory_path() / "gpubudget-diagnose-observations";
  fs::create_directories(dir);
  const fs::path all = dir / "all.jsonl";
  std::ofstream combined(all);
  for (const auto& log : corpus_logs()) {
    const fs::path row = dir / (log.stem().string() + ".jsonl");
    const CliRun r = run({"diagnose", log.string(), "--emit-observation", row.string()});
    ASSERT_EQ(r.code, 0) << log << ": " << r.err;
    std::ifstream in(row);
    std::string line;
    ASSERT_TRUE(std::getline(in, line)) << log;
    EXPECT_TRUE(nlohmann::json::accept(line)) << log;
    combined << line << "\n";
  }
  combined.close();
  const CliRun c = run({"calibrate", all.string(), "--profile", std::string(GPUBUDGET_TEST_CONFIG_DIR) + "/vllm/0.17.json",
                        "-o", (dir / "profile.json").string()});
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_TRUE(fs::exists(dir / "profile.json"));
  fs::remove_all(dir);
}

// Without --profile, calibrate starts from the profile the rows ran under: 0.19.0 rows → the 0.19 profile
// (the newest ≤ 0.19.0); rows of several profiles → the newest.
TEST(CliCalibrate, WithoutAProfileTakesTheOneTheRowsRanUnder) {
  const fs::path dir = fs::temp_directory_path() / "gpubudget-calibrate-default";
  fs::create_directories(dir);
  std::ifstream all(fs::path(test::data_dir()) / "observations" / "vllm-runs.jsonl");
  std::ofstream only_019(dir / "v019.jsonl");
  std::string line;
  while (std::getline(all, line)) {
    if (line.find("\"vllm_version\": \"0.19.0\"") != std::string::npos) only_019 << line << "\n";
  }
  only_019.close();
  const std::string aliases = (fs::path(test::data_dir()) / "observations" / "model_aliases.json").string();
  const CliRun chosen = run({"calibrate", (dir / "v019.jsonl").string(), "--aliases", aliases});
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_NE(chosen.err.find("vllm/0.19.json"), std::string::npos) << chosen.err;
  const CliRun named = run({"calibrate", (dir / "v019.jsonl").string(), "--aliases", aliases, "--profile",
                            std::string(GPUBUDGET_TEST_CONFIG_DIR) + "/vllm/0.19.json"});
  EXPECT_EQ(chosen.out, named.out);
  const CliRun mixed = run({"calibrate", (fs::path(test::data_dir()) / "observations" / "vllm-runs.jsonl").string()});
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  EXPECT_NE(mixed.err.find("vllm/0.22.json"), std::string::npos) << mixed.err;  // the newest
  fs::remove_all(dir);
}

TEST(CliDiagnose, EmitObservationToStdoutKeepsStdoutForTheRow) {
  const CliRun r = run({"diagnose", (fs::path(test::data_dir()) / "logs" / "v0.19-kimi-dev-72b-tp2-debug.log").string(),
                        "--emit-observation", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out);  // one JSON line and nothing else
  EXPECT_EQ(row["kv_cache_tokens"], 19776);
  EXPECT_NE(r.err.find("Root cause (none)"), std::string::npos);
}

TEST(CliDiagnose, UnreadableLogIsBadInputAndGarbageIsDiagnosed) {
  EXPECT_EQ(run({"diagnose", "/nonexistent/vllm.log"}).code, 3);
  const fs::path garbage = fs::temp_directory_path() / "gpubudget-garbage.log";
  {
    std::ofstream out(garbage, std::ios::binary);
    for (int i = 0; i < 100000; ++i) out.put(static_cast<char>((i * 7919) & 0xff));
  }
  const CliRun r = run({"diagnose", garbage.string(), "--json"});
  fs::remove(garbage);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["root_cause"], "unknown");
}

}  // namespace
}  // namespace gpubudget::cli

namespace gpubudget::cli {
namespace {

TEST(CliCompletion, BashScriptListsSubcommandsAndFlags) {
  const CliRun r = run({"completion", "bash"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("complete -o filenames -F _gpubudget gpubudget"), std::string::npos);
  EXPECT_NE(r.out.find("fit weights sweep plan calibrate diagnose"), std::string::npos);
  EXPECT_NE(r.out.find("--kv-cache-dtype"), std::string::npos);
  EXPECT_NE(r.out.find("--emit-observation"), std::string::npos);
  EXPECT_EQ(run({"completion", "fish"}).code, 2);
}

}  // namespace
}  // namespace gpubudget::cli
