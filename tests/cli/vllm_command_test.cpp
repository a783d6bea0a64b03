// Pasted vLLM command lines turned into gpubudget flags.
#include "gpubudget/vllm_command.h"

#include <gtest/gtest.h>

#include "cli_errors.h"
#include "gpubudget/engine_args.h"
#include "gpubudget/error.h"
#include "test_support.h"

namespace gpubudget::cli {
namespace {

using Words = std::vector<std::string>;

const EngineArgs& engine_args() {
  static const EngineArgs args = load_engine_args(test::configs());
  return args;
}

VllmCommand translate(const std::vector<std::string>& tokens) { return translate_vllm_command(tokens, engine_args()); }

TEST(VllmCommand, ServeLineBecomesFitFlags) {
  const VllmCommand c = translate(
      {"VLLM_PP_LAYER_PARTITION=31,30", "HF_HOME=/x", "vllm", "serve", "deepseek-ai/DeepSeek-V3", "-tp", "8",
       "--pipeline_parallel_size=2", "--max-model-len", "128k", "--trust-remote-code", "--port", "8000",
       "--enable-expert-parallel", "--speculative-config", "{\"method\": \"mtp\"}", "--enable-eplb", "--eplb-config",
       "{\"num_redundant_experts\": 32}"});
  EXPECT_EQ(c.flags, (Words{"deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2",
                            "--max-model-len", "128k", "--enable-expert-parallel", "--num-redundant-experts", "32",
                            "--speculative-config", "{\"method\":\"mtp\"}", "--vllm-env",
                            "VLLM_PP_LAYER_PARTITION=31,30"}));
  EXPECT_EQ(c.ignored, (Words{"--trust-remote-code", "--port"}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].text.find("--enable-eplb"), std::string::npos);
}

// Every flag of configs/vllm-engine-args.json is classified, and the parser and the list agree: the
// list's "read" flags are exactly those the parser turns into gpubudget flags.
TEST(VllmCommand, EveryEngineArgumentIsClassifiedAndTheParserFollowsTheList) {
  const EngineArgs& list = engine_args();
  EXPECT_GE(list.flags.size(), 250u);  // vLLM's main branch of 2026-05: 255 flags
  std::size_t read = 0;
  for (const auto& f : list.flags) {
    EXPECT_FALSE(f.effect.empty()) << f.flag;
    const bool reads = f.flag == "model_tag" || vllm_command_reads(f.flag);
    EXPECT_EQ(f.status == EngineFlagStatus::kRead, reads) << f.flag;
    read += f.status == EngineFlagStatus::kRead ? 1 : 0;
  }
  EXPECT_EQ(read, 56u);  // 51, then the capture sizes (2) and the prefetch offloader (3)
  for (const char* flag : {"--tensor-parallel-size", "--enable-prefix-caching", "--no-enable-prefix-caching",
                           "--disable-hybrid-kv-cache-manager", "--kv-cache-dtype-skip-layers", "--eplb-config"}) {
    EXPECT_TRUE(vllm_command_reads(flag)) << flag;
    EXPECT_NE(list.find(flag), nullptr) << flag;
  }
}

// What the list says decides what happens to a flag the parser does not read: ignored, warned, or (not a
// vLLM flag at all) warned as unknown; short aliases come from the list (-ep), -O3 is --optimization-level 3.
TEST(VllmCommand, FlagsFollowTheirClassification) {
  const VllmCommand c = translate({"vllm", "serve", "m", "-ep", "--enable-lora", "--max-lora-rank", "64",
                                   "--performance-mode", "throughput", "-O3", "--tool-call-parser", "hermes",
                                   "--no-enforce-eager", "--frobnicate", "7"});
  EXPECT_EQ(c.flags, (Words{"m", "--enable-expert-parallel", "--enable-lora", "--max-lora-rank", "64",
                             "--optimization-level", "3"}));
  EXPECT_EQ(c.ignored, (Words{"--tool-call-parser", "--no-enforce-eager"}));
  ASSERT_EQ(c.notes.size(), 2u);
  EXPECT_NE(c.notes[0].text.find("--performance-mode changes GPU memory"), std::string::npos) << c.notes[0].text;
  EXPECT_NE(c.notes[1].text.find("--frobnicate is not one of vLLM's engine arguments"), std::string::npos)
      << c.notes[1].text;
}

// --spec-method / --spec-model / --spec-tokens and dotted -sc.KEY=VALUE are --speculative-config keys
// (EngineArgs.create_speculative_config): merged into one JSON object, a key given twice is vLLM's error.
TEST(VllmCommand, SpeculativeShorthandsAreSpeculativeConfigKeys) {
  EXPECT_EQ(translate({"vllm", "serve", "m", "--spec-method", "eagle3", "--spec-model", "h", "--spec-tokens", "3"}).flags,
            (Words{"m", "--speculative-config", R"({"method":"eagle3","model":"h","num_speculative_tokens":3})"}));
  EXPECT_EQ(translate({"vllm", "serve", "m", "-sc.method=mtp", "-sc.num_speculative_tokens=2"}).flags,
            (Words{"m", "--speculative-config", R"({"method":"mtp","num_speculative_tokens":2})"}));
  EXPECT_EQ(translate({"vllm", "serve", "m", "-sc", R"({"method": "ngram"})", "--spec-tokens=4"}).flags,
            (Words{"m", "--speculative-config", R"({"method":"ngram","num_speculative_tokens":4})"}));
  test::expect_argument_error([&] { (void)(translate({"vllm", "serve", "m", "-sc", R"({"method": "mtp"})", "--spec-method", "ngram"})); }, "--spec-method and --speculative-config['method'] are mutually exclusive");
}

// Environment variables: the ones gpubudget models are passed on (--vllm-env), those that change memory
// otherwise are warned about, other VLLM_* are ignored.
TEST(VllmCommand, EnvironmentVariablesFollowWhatTheyDo) {
  const VllmCommand c = translate({"VLLM_ATTENTION_BACKEND=TRITON_ATTN", "VLLM_MLA_DISABLE=1", "VLLM_LOGGING_LEVEL=DEBUG",
                                   "VLLM_USE_FLASHINFER_SAMPLER=1", "vllm", "serve", "m"});
  EXPECT_EQ(c.flags, (Words{"m", "--vllm-env", "VLLM_ATTENTION_BACKEND=TRITON_ATTN", "--vllm-env", "VLLM_MLA_DISABLE=1"}));
  EXPECT_EQ(c.ignored, (Words{"VLLM_LOGGING_LEVEL"}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].text.find("VLLM_USE_FLASHINFER_SAMPLER changes GPU memory"), std::string::npos)
      << c.notes[0].text;
}

// The model's revision and vLLM's download folder decide where the model is found.
TEST(VllmCommand, RevisionAndDownloadDirAreRead) {
  const VllmCommand c = translate({"vllm", "serve", "Qwen/Qwen3-8B", "--revision", "v1.0",
                                                "--download_dir=/models", "--tokenizer-revision", "x"});
  EXPECT_EQ(c.flags, (Words{"Qwen/Qwen3-8B", "--revision", "v1.0", "--download-dir", "/models"}));
  EXPECT_EQ(c.ignored, (Words{"--tokenizer-revision"}));
}

TEST(VllmCommand, ApiServerModuleWithModelFlag) {
  const VllmCommand c = translate({"python", "-m", "vllm.entrypoints.openai.api_server", "--model",
                                                "meta-llama/Llama-3.1-8B", "--kv-cache-dtype=fp8", "--enforce-eager",
                                                "--skip_mm_profiling"});
  EXPECT_EQ(c.flags, (Words{"meta-llama/Llama-3.1-8B", "--kv-cache-dtype", "fp8", "--enforce-eager",
                            "--skip-mm-profiling"}));
}

// The cache flags that change memory are read; --kv-cache-dtype-skip-layers is vLLM's list flag (nargs "+").
TEST(VllmCommand, CacheFlagsAreModelled) {
  const VllmCommand c = translate(
      {"VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0", "vllm", "serve", "m", "--enable-prefix-caching",
       "--mamba-ssm-cache-dtype", "float32", "--kv-cache-dtype-skip-layers", "0", "5", "--num-gpu-blocks-override",
       "100", "--kv-transfer-config", "{\"kv_connector\": \"NixlConnector\"}", "--disable-hybrid-kv-cache-manager"});
  EXPECT_EQ(c.flags, (Words{"m", "--enable-prefix-caching", "--mamba-ssm-cache-dtype", "float32",
                            "--kv-cache-dtype-skip-layers", "0,5", "--num-gpu-blocks-override", "100",
                            "--kv-transfer-config", "{\"kv_connector\": \"NixlConnector\"}",
                            "--disable-hybrid-kv-cache-manager", "--vllm-env",
                            "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0"}));
  EXPECT_TRUE(c.ignored.empty());
  EXPECT_TRUE(c.notes.empty());
}

// Found by fuzzing: a float here was converted to an integer (undefined behaviour).
TEST(VllmCommand, EplbRedundantExpertsMustBeAnInteger) {
  test::expect_argument_error([&] { (void)(translate({"vllm", "serve", "m", "--eplb-config", "{\"num_redundant_experts\": 2e52}"})); }, "num_redundant_experts must be an integer in [0, 1000000], got 2e+52");
  test::expect_argument_error([&] { (void)(translate({"vllm", "serve", "m", "--eplb-config", "{\"num_redundant_experts\": -1}"})); }, "num_redundant_experts must be an integer in [0, 1000000], got -1");
  EXPECT_NO_THROW(translate({"vllm", "serve", "m", "--eplb-config", "[1, 2]"}));
}

TEST(VllmCommand, NotAServerCommandIsAUsageError) {
  test::expect_argument_error([&] { (void)(translate({"sglang", "serve", "x"})); }, "expected `vllm serve MODEL ...`");
  test::expect_argument_error([&] { (void)(translate({"vllm", "serve"})); }, "no model (vllm serve MODEL or --model MODEL)");
  test::expect_argument_error([&] { (void)(translate({"vllm", "serve", "m", "--max-model-len"})); }, "--max-model-len needs a value");
}

}  // namespace
}  // namespace gpubudget::cli
