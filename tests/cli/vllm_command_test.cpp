// Pasted vLLM command lines turned into gpubudget flags.
#include "vllm_command.h"

#include <gtest/gtest.h>

#include "cli_errors.h"
#include "gpubudget/error.h"

namespace gpubudget::cli {
namespace {

using Words = std::vector<std::string>;

TEST(VllmCommand, ServeLineBecomesFitFlags) {
  const VllmCommand c = translate_vllm_command(
      {"VLLM_PP_LAYER_PARTITION=31,30", "HF_HOME=/x", "vllm", "serve", "deepseek-ai/DeepSeek-V3", "-tp", "8",
       "--pipeline_parallel_size=2", "--max-model-len", "128k", "--trust-remote-code", "--port", "8000",
       "--enable-expert-parallel", "--speculative-config", "{\"method\": \"mtp\"}", "--enable-eplb", "--eplb-config",
       "{\"num_redundant_experts\": 32}"});
  EXPECT_EQ(c.flags, (Words{"deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2",
                            "--max-model-len", "128k", "--enable-expert-parallel", "--num-redundant-experts", "32",
                            "--vllm-env", "VLLM_PP_LAYER_PARTITION=31,30"}));
  EXPECT_EQ(c.ignored, (Words{"--trust-remote-code", "--port", "--enable-eplb"}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("--speculative-config"), std::string::npos);
}

// The model's revision and vLLM's download folder decide where the model is found.
TEST(VllmCommand, RevisionAndDownloadDirAreRead) {
  const VllmCommand c = translate_vllm_command({"vllm", "serve", "Qwen/Qwen3-8B", "--revision", "v1.0",
                                                "--download_dir=/models", "--tokenizer-revision", "x"});
  EXPECT_EQ(c.flags, (Words{"Qwen/Qwen3-8B", "--revision", "v1.0", "--download-dir", "/models"}));
  EXPECT_EQ(c.ignored, (Words{"--tokenizer-revision"}));
}

TEST(VllmCommand, ApiServerModuleWithModelFlag) {
  const VllmCommand c = translate_vllm_command({"python", "-m", "vllm.entrypoints.openai.api_server", "--model",
                                                "meta-llama/Llama-3.1-8B", "--kv-cache-dtype=fp8", "--enforce-eager",
                                                "--skip_mm_profiling"});
  EXPECT_EQ(c.flags, (Words{"meta-llama/Llama-3.1-8B", "--kv-cache-dtype", "fp8", "--enforce-eager",
                            "--skip-mm-profiling"}));
}

// The cache flags that change memory are read; --kv-cache-dtype-skip-layers is vLLM's list flag (nargs "+").
TEST(VllmCommand, CacheFlagsAreModelled) {
  const VllmCommand c = translate_vllm_command(
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
  EXPECT_THROW(translate_vllm_command({"vllm", "serve", "m", "--eplb-config", "{\"num_redundant_experts\": 2e52}"}),
               cli::UsageError);
  EXPECT_THROW(translate_vllm_command({"vllm", "serve", "m", "--eplb-config", "{\"num_redundant_experts\": -1}"}),
               cli::UsageError);
  EXPECT_NO_THROW(translate_vllm_command({"vllm", "serve", "m", "--eplb-config", "[1, 2]"}));
}

TEST(VllmCommand, NotAServerCommandIsAUsageError) {
  EXPECT_THROW(translate_vllm_command({"sglang", "serve", "x"}), cli::UsageError);
  EXPECT_THROW(translate_vllm_command({"vllm", "serve"}), cli::UsageError);
  EXPECT_THROW(translate_vllm_command({"vllm", "serve", "m", "--max-model-len"}), cli::UsageError);
}

}  // namespace
}  // namespace gpubudget::cli
