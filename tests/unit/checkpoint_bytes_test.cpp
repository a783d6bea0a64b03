// gpubudget's checkpoint bytes (all ranks, TP=1, MTP and vision included) against the checkpoint sizes
// recorded in each bundled model's source.json.
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

// Calls `each(id, source.json, model)` for every bundled model that loads (unsupported architectures,
// listed in docs/models.md, are skipped).
void for_each_loading_model(
    const std::function<void(const std::string&, const nlohmann::json&, const ModelSpec&)>& each) {
  for (const auto& dir : std::filesystem::directory_iterator(test::configs().root / "models")) {
    std::ifstream in(dir.path() / "source.json");
    const auto source = nlohmann::json::parse(in);
    std::string id = dir.path().filename().string();
    id.replace(id.find("__"), 2, "/");
    ModelSpec model;
    try {
      model = test::bundled(id);
    } catch (const InputError&) {
      continue;
    }
    each(id, source, model);
  }
}

TEST(CheckpointBytes, EverySupportedModelWithAKnownSizeWithinHalfAPercent) {
  int compared = 0;
  for_each_loading_model([&](const std::string& id, const nlohmann::json& source, const ModelSpec& model) {
    if (!source.contains("total_size_bytes") || source["total_size_bytes"].is_null()) return;
    ++compared;
    const auto total = source["total_size_bytes"].get<std::int64_t>();
    const auto computed = checkpoint_bytes(model).count();
    EXPECT_NEAR(static_cast<double>(computed), static_cast<double>(total), 0.005 * static_cast<double>(total))
        << id << " (" << source.value("total_size_kind", "") << ")";
  });
  EXPECT_GE(compared, 20);
}

TEST(CheckpointBytes, ExactWhereTheSourceSumsTheTensors) {
  // total_size_kind "sum_of_tensor_bytes": the computed figure must be the same to the byte.
  EXPECT_EQ(checkpoint_bytes(test::bundled("moonshotai/Kimi-K2.5")).count(), 595'148'192'736LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("openai/gpt-oss-20b")).count(), 13'761'264'768LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("deepseek-ai/DeepSeek-V2-Lite-Chat")).count(), 31'412'968'448LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("Qwen/Qwen3-32B")).count(), 65'524'246'528LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("MiniMaxAI/MiniMax-M2.7")).count(), 230'121'630'720LL);
  // Qwen3-Next: 36 Gated-DeltaNet + 12 attention layers and one MTP layer (mtp.*), all bf16.
  EXPECT_EQ(checkpoint_bytes(test::bundled("Qwen/Qwen3-Next-80B-A3B-Instruct")).count(), 162'649'725'440LL);
  // Qwen3.6-27B: GDN layers with split projections, dense MLP, an MTP layer and the Qwen3-VL vision
  // tower; Qwen3-VL-30B-A3B: Qwen3-MoE text with a ViT carrying three deepstack mergers.
  EXPECT_EQ(checkpoint_bytes(test::bundled("Qwen/Qwen3.6-27B")).count(), 55'562'855'904LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("Qwen/Qwen3-VL-30B-A3B-Instruct")).count(), 62'141'508'064LL);
  // Kimi-Linear: 20 KDA layers (A_log and dt_bias in fp32), 7 MLA layers, MoE.
  EXPECT_EQ(checkpoint_bytes(test::bundled("moonshotai/Kimi-Linear-48B-A3B-Instruct")).count(), 98'245'528'576LL);
  // Nemotron-3 Nano has no recorded size; NVIDIA states 31.6 B parameters, all bf16.
  EXPECT_NEAR(static_cast<double>(checkpoint_bytes(test::bundled("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")).count()),
              2 * 31.6e9, 2 * 0.05e9);
  // GLM-4.7-Flash: 62,442,983,168 tensor bytes (source.json: all bf16 but the fp32 correction biases,
  // MTP layer 47 included); vLLM holds each of the 47 routers [64, 2048] in fp32 (Glm4MoE's
  // nn.Linear(dtype=float32)), 2 bytes per element more than the checkpoint's bf16.
  EXPECT_EQ(checkpoint_bytes(test::bundled("zai-org/GLM-4.7-Flash")).count(), 62'442'983'168LL + 47LL * 64 * 2048 * 2);
  // GLM-4.7: 358,337,791,296 parameters (the published count, MTP layer 92 with its embedding and head
  // copies included), bf16 but for the fp32 correction biases (90 x 160) and vLLM's fp32 routers
  // (90 x [160, 5120]).
  EXPECT_EQ(checkpoint_bytes(test::bundled("zai-org/GLM-4.7")).count(),
            2 * 358'337'791'296LL + 2LL * 90 * 160 + 2LL * 90 * 160 * 5120);
  // Dense families, all bf16, no MTP. Command-R 08-2024 (commandr.py): 40 layers, tied embedding
  // 256000 x 8192, one LayerNorm weight per layer: 32,296,476,672 parameters (the model card: "32
  // billion"). OLMo-3.1-32B (olmo2.py): q_norm 5120 and k_norm 1024 per layer, post-norms only,
  // untied 100278-row embedding and head: 32,233,522,176. EXAONE-4.0-32B (exaone4.py): per-head-dim
  // q/k norms: 32,003,216,384, the card's 30.95 B without the two 102400 x 5120 embeddings (30,954,640,384).
  EXPECT_EQ(checkpoint_bytes(test::bundled("CohereLabs/c4ai-command-r-08-2024")).count(), 2 * 32'296'476'672LL);
  // Qwen3-0.6B ties its head yet stores lm_head.weight (bundled source.json: checkpoint_stores_tied_head):
  // model.safetensors holds 1,503,264,768 B of tensors, 151936 x 1024 x 2 = 311,164,928 of them the head.
  EXPECT_EQ(checkpoint_bytes(test::bundled("Qwen/Qwen3-0.6B")).count(), 1'503'264'768LL);
  // Llama 4 (bf16, vision tower included): the published parameter counts, 2 bytes each.
  EXPECT_EQ(checkpoint_bytes(test::bundled("meta-llama/Llama-4-Scout-17B-16E-Instruct")).count(), 2 * 108'641'793'536LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("meta-llama/Llama-4-Maverick-17B-128E-Instruct")).count(),
            2 * 401'583'781'376LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("allenai/Olmo-3.1-32B-Instruct")).count(), 2 * 32'233'522'176LL);
  EXPECT_EQ(checkpoint_bytes(test::bundled("LGAI-EXAONE/EXAONE-4.0-32B")).count(), 2 * 32'003'216'384LL);
  EXPECT_EQ(32'003'216'384LL - 2 * 102'400LL * 5120, 30'954'640'384LL);  // without the embedding and the head
  // Devstral-Small-2 (ministral3 text in a mistral3 wrapper; vLLM's MistralForCausalLM): FP8 per-tensor
  // language model (lm_head, vision tower and projector bf16, modules_to_not_convert). A text-only FP8
  // copy states 24,914,995,200 bytes; the Pixtral tower (403,305,472) and projector (35,652,608
  // parameters) in bf16 come on top.
  const ModelSpec devstral = test::bundled("mistralai/Devstral-Small-2-24B-Instruct-2512");
  EXPECT_NEAR(static_cast<double>(checkpoint_bytes(devstral).count() - 2 * (403'305'472LL + 35'652'608LL)),
              24'914'995'200.0, 24'914'995'200.0 * 0.0001);
  // Jamba-v0.1 (jamba.py): 51,570,323,328 parameters (the published "51.6B"; a Jamba checkpoint of the
  // same dimensions states total_size 103,140,646,656 = 2 bytes each), with vLLM's float32 A of the 28
  // Mamba1 layers ([8192, 16], bf16 in the file) 2 bytes per element above it.
  EXPECT_EQ(checkpoint_bytes(test::bundled("ai21labs/Jamba-v0.1")).count(), 103'140'646'656LL + 28LL * 8192 * 16 * 2);
  // MiMo-7B (mimo.py: Qwen2 with q/k/v biases, 36 layers): vLLM skips the next-n layer, the checkpoint
  // stores it: a Qwen2 decoder layer plus token/hidden/final norms (3 x 4096) and input_proj [4096, 8192].
  const ModelSpec mimo = test::bundled("XiaomiMiMo/MiMo-7B-Base");
  ASSERT_EQ(mimo.mtp_layers.size(), 1u);
  const std::int64_t H = 4096, kvd = 8 * 128, I = 11008, V = 151680;
  const std::int64_t layer = H * H + H + 2 * (kvd * H + kvd) + H * H + 3 * H * I + 2 * H;
  EXPECT_EQ(checkpoint_bytes(mimo).count(), 2 * (2 * V * H + 36 * layer + H + layer + 3 * H + 2 * H * H));
  // Llama-3.3-Nemotron-Super-49B (nemotron_nas.py): 49 attention blocks (8 KV heads) and 80 MLPs whose
  // widths are int(2 x ffn_mult x 8192 / 3) rounded up to 256 (the config's block_configs: 48 + 1 + 1 of
  // 5.25, 2.625 ... multipliers): 49,867,145,216 parameters by hand from those blocks, the card's "49B".
  {
    std::ifstream in(test::configs().root / "models" / "nvidia__Llama-3_3-Nemotron-Super-49B-v1" / "config.json");
    const auto config = nlohmann::json::parse(in);
    const std::int64_t h = 8192, vocab = 128256;
    std::int64_t params = 2 * vocab * h + h;
    for (const auto& block : config["block_configs"]) {
      if (!block["attention"]["no_op"].get<bool>()) params += 2 * h * h + 2 * h * (8 * 128) + h;
      if (!block["ffn"]["no_op"].get<bool>()) {
        std::int64_t width = static_cast<std::int64_t>(2 * block["ffn"]["ffn_mult"].get<double>() * h / 3);
        if (width % 256 != 0) width += 256 - width % 256;
        params += 3 * h * width + h;
      }
    }
    EXPECT_EQ(params, 49'867'145'216LL);
    EXPECT_EQ(checkpoint_bytes(test::bundled("nvidia/Llama-3_3-Nemotron-Super-49B-v1")).count(), 2 * params);
  }
  // DeepSeek-V3 includes its MTP layer 61 with its own embedding, head and eh_proj: without them the
  // total would be 14.4 GiB short of the 688.59 GB of weight files.
  const ModelSpec v3 = test::bundled("deepseek-ai/DeepSeek-V3");
  ASSERT_EQ(v3.mtp_layers.size(), 1u);
  EXPECT_NEAR(static_cast<double>(checkpoint_bytes(v3).count()), 688'586'727'753.0, 688'586'727'753.0 * 0.0001);
}

// Parameters against the counts recorded in source.json where they are exact (a tensor element count,
// logical parameters, the index's total_parameters), not a headline figure.
TEST(CheckpointParameters, EqualTheExactCountsOfTheSources) {
  int compared = 0;
  for_each_loading_model([&](const std::string& id, const nlohmann::json& source, const ModelSpec& model) {
    if (!source.contains("params") || !source["params"].is_number_integer()) return;
    const std::string kind = source.value("params_kind", "");
    if (kind.find("headline") != std::string::npos || kind.find("rounded") != std::string::npos) return;
    ++compared;
    auto expected = source["params"].get<std::int64_t>();
    if (kind.find("total_parameters") != std::string::npos && model.tie_word_embeddings) {
      // transformers' index metadata counts a tied embedding twice: medgemma-27b-it's 28,842,036,848
      // is 27,432,406,640 (its total_size 54,864,813,280 B / 2 B of bf16) + 262,208 x 5,376 = 1,409,630,208.
      expected -= model.vocab_size * model.hidden_size;
    }
    EXPECT_EQ(checkpoint_parameters(model), expected) << id << " (" << kind << ")";
  });
  EXPECT_GE(compared, 8);
}

TEST(CheckpointParameters, LlamaByHand) {
  // Llama-3.1-8B: embedding and untied head 2 x 128,256 x 4,096 = 1,050,673,152; per layer q and o
  // 2 x 4,096^2, k and v 2 x 1,024 x 4,096, gate/up/down 3 x 4,096 x 14,336, two norms 2 x 4,096:
  // 218,112,000; x 32 = 6,979,584,000; final norm 4,096. Total 8,030,261,248 (the Hub's "8.03B").
  EXPECT_EQ(checkpoint_parameters(test::bundled("meta-llama/Llama-3.1-8B")), 8'030'261'248);
  // Llama-3.1-70B the same way (hidden 8,192, 80 layers, intermediate 28,672): 70,553,706,496.
  EXPECT_EQ(checkpoint_parameters(test::bundled("meta-llama/Llama-3.1-70B")), 70'553'706'496);
}

}  // namespace
}  // namespace gpubudget
