// The generic path: an architecture no family parser knows, sized from its safetensors headers as
// vLLM's Transformers backend builds it (src/model/generic.cpp). The checkpoint is generated here, so
// every expected byte count below is worked by hand from its tensor shapes.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "fixtures/safetensors_writer.h"

namespace gpubudget {
namespace {

namespace fs = std::filesystem;
using test::FixtureTensor;

// "Zeta": hidden 256, 2 layers, 4 query heads and 2 KV heads of 64, vocabulary 1000 (padded to 1024
// by VocabParallelEmbedding), layer 0 sliding (window 128) with a dense MLP of 512, layer 1 full with
// 4 experts of 128 and a router; one attention tensor (rel_bias) no tp_plan rule names.
nlohmann::json zeta_config(bool tied) {
  return {{"architectures", {"ZetaForCausalLM"}},
          {"model_type", "zeta"},
          {"hidden_size", 256},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"head_dim", 64},
          {"intermediate_size", 512},
          {"vocab_size", 1000},
          {"max_position_embeddings", 4096},
          {"layer_types", {"sliding_attention", "full_attention"}},
          {"sliding_window", 128},
          {"num_experts_per_tok", 2},
          {"tie_word_embeddings", tied},
          {"torch_dtype", "bfloat16"}};
}

std::vector<FixtureTensor> zeta_tensors(bool store_head) {
  std::vector<FixtureTensor> t = {{"model.embed_tokens.weight", "BF16", {1000, 256}},
                                  {"model.norm.weight", "BF16", {256}}};
  if (store_head) t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "self_attn.q_norm.weight", "BF16", {64}});
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  }
  t.push_back({"model.layers.0.self_attn.rel_bias.weight", "BF16", {64, 64}});
  t.push_back({"model.layers.0.mlp.gate_proj.weight", "BF16", {512, 256}});
  t.push_back({"model.layers.0.mlp.up_proj.weight", "BF16", {512, 256}});
  t.push_back({"model.layers.0.mlp.down_proj.weight", "BF16", {256, 512}});
  t.push_back({"model.layers.1.mlp.gate.weight", "BF16", {4, 256}});
  for (int e = 0; e < 4; ++e) {
    const std::string p = "model.layers.1.mlp.experts." + std::to_string(e) + ".";
    t.push_back({p + "gate_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "up_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "down_proj.weight", "BF16", {256, 128}});
  }
  return t;
}

fs::path write_zeta(const std::string& name, bool tied, bool store_head, bool with_headers = true) {
  const fs::path dir = test::fresh_fixture_dir(name);
  std::ofstream(dir / "config.json") << zeta_config(tied).dump(2);
  if (with_headers) test::write_sharded_checkpoint(dir, zeta_tensors(store_head), 2);
  return dir;
}

nlohmann::json fit_json(const fs::path& dir, const std::string& tp) {
  const auto r = test::run_cli({"fit", dir.string(), "--gpu", "h100", "--tensor-parallel-size", tp, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Per-GPU weights by hand (bf16, 2 bytes an element):
//   embedding and lm_head: 1024 padded rows / TP x 256 each                 TP1 524,288 B each, TP2 262,144
//   attention per layer: q 256x256 + k 128x256 + v 128x256 (column) + o 256x256 (row) = 196,608 el / TP
//                                                                            TP1 393,216 B, TP2 196,608
//   rel_bias 64x64, replicated (no tp_plan rule): 8,192 B
//   norms per layer: 256 + 256 + q_norm 64 = 576 el: 1,152 B; final norm 512 B
//   layer 0 MLP: gate, up 512x256 (column) + down 256x512 (row) = 393,216 el / TP   TP1 786,432, TP2 393,216
//   layer 1 FusedMoE: 4 x (2 x 128x256 + 256x128) = 393,216 el, I split over TP    TP1 786,432, TP2 393,216
//   router 4x256, replicated: 2,048 B
// TP1: 2 x 524,288 + 2 x 393,216 + 8,192 + 2 x 1,152 + 512 + 786,432 + 786,432 + 2,048 = 3,420,928
// TP2: 2 x 262,144 + 2 x 196,608 + 8,192 + 2 x 1,152 + 512 + 393,216 + 393,216 + 2,048 = 1,716,992
TEST(GenericPath, HeaderDerivedWeightsAndKvAreExact) {
  const fs::path dir = write_zeta("generic-zeta", false, true);
  const auto tp1 = fit_json(dir, "1");
  EXPECT_EQ(tp1["model"]["family"], "generic");
  EXPECT_EQ(tp1["per_gpu"]["weights_bytes"].get<std::int64_t>(), 3'420'928);
  // KV per token of the layers whose cache grows with length (kv_cache.bytes_per_token): the full
  // layer 1, 2 (K and V) x 2 KV heads x 64 x 2 B = 512 B; sliding layer 0 keeps only its 128 tokens.
  EXPECT_EQ(tp1["kv_cache"]["bytes_per_token"].get<std::int64_t>(), 512);
  const auto tp2 = fit_json(dir, "2");
  EXPECT_EQ(tp2["per_gpu"]["weights_bytes"].get<std::int64_t>(), 1'716'992);
  EXPECT_EQ(tp2["kv_cache"]["bytes_per_token"].get<std::int64_t>(), 256);  // one KV head per rank

  // The label: family, warnings naming the assumptions, a widened range.
  bool backend = false, replicated = false;
  for (const auto& w : tp1["warnings"]) {
    const std::string text = w.get<std::string>();
    backend = backend || (text.find("generic estimate") != std::string::npos &&
                          text.find("Transformers backend") != std::string::npos);
    replicated = replicated || text.find("rel_bias") != std::string::npos;
  }
  EXPECT_TRUE(backend) << tp1["warnings"].dump();
  EXPECT_TRUE(replicated) << tp1["warnings"].dump();
  const auto text = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("GENERIC ESTIMATE"), std::string::npos) << text.out;

  // The header comparison agrees with itself: the checkpoint is what the headers hold (vocab unpadded):
  // 3,420,928 - 2 x 524,288 + 2 x 1000 x 256 x 2 = 3,396,352.
  const auto weights = test::run_cli({"weights", dir.string(), "--json"});
  ASSERT_EQ(weights.code, 0) << weights.err;
  const auto wj = nlohmann::json::parse(weights.out);
  EXPECT_EQ(wj["model"]["family"], "generic");
  EXPECT_EQ(wj["checkpoint_bytes"].get<std::int64_t>(), 3'396'352);
  EXPECT_NE(weights.err.find("generic estimate"), std::string::npos);
  fs::remove_all(dir);
}

TEST(GenericPath, StrictRefuses) {
  const fs::path dir = write_zeta("generic-strict", false, true);
  for (const char* command : {"fit", "weights"}) {
    std::vector<std::string> args = {command, dir.string(), "--strict"};
    if (std::string(command) == "fit") args.insert(args.end(), {"--gpu", "h100"});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 3) << command << ": " << r.out;
    EXPECT_NE(r.err.find("--strict"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("generic"), std::string::npos) << r.err;
  }
  fs::remove_all(dir);
}

TEST(GenericPath, WithoutHeadersStaysARefusal) {
  const fs::path dir = write_zeta("generic-config-only", false, true, false);
  const auto r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("unsupported architecture ZetaForCausalLM"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("supported model types"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("safetensors"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// A tied model whose file still stores lm_head.weight (as Qwen3-0.6B's does): vLLM skips the tensor,
// so per-GPU weights drop the head (TP1: 3,420,928 - 524,288 = 2,896,640) while the checkpoint keeps
// it (3,396,352).
TEST(GenericPath, StoredTiedHeadCountsInTheCheckpointOnly) {
  const fs::path dir = write_zeta("generic-tied", true, true);
  EXPECT_EQ(fit_json(dir, "1")["per_gpu"]["weights_bytes"].get<std::int64_t>(), 2'896'640);
  const auto weights = test::run_cli({"weights", dir.string(), "--json"});
  ASSERT_EQ(weights.code, 0) << weights.err;
  const auto wj = nlohmann::json::parse(weights.out);
  EXPECT_EQ(wj["checkpoint_bytes"].get<std::int64_t>(), 3'396'352);
  EXPECT_EQ(wj["workers"][0]["headers"]["unmatched_tensors"].size(), 0u) << weights.out;
  fs::remove_all(dir);
}

// The same rule for a modelled family: a tied Llama whose file stores lm_head.weight. Per GPU (TP1):
// embedding 1024 x 256 x 2 = 524,288; per layer attention 393,216 + MLP 786,432 + norms 1,024; final norm
// 512: 524,288 + 2 x 1,180,672 + 512 = 2,886,144, plus the rotary cache. Checkpoint: 1000-row embedding
// 512,000 + the stored head 512,000 + 2 x 1,180,672 + 512 = 3,385,856.
TEST(GenericPath, StoredTiedHeadOfAModelledFamily) {
  const fs::path dir = test::fresh_fixture_dir("tied-llama");
  auto config = zeta_config(true);
  config["architectures"] = {"LlamaForCausalLM"};
  config["model_type"] = "llama";
  config.erase("layer_types");
  config.erase("sliding_window");
  config.erase("num_experts_per_tok");
  std::ofstream(dir / "config.json") << config.dump();
  std::vector<FixtureTensor> tensors;
  for (const auto& t : zeta_tensors(true)) {
    if (t.name.find("layers.1.mlp") != std::string::npos || t.name.find("q_norm") != std::string::npos ||
        t.name.find("rel_bias") != std::string::npos) {
      continue;
    }
    tensors.push_back(t);
  }
  for (const auto* name : {"gate_proj", "up_proj"}) {
    tensors.push_back({std::string("model.layers.1.mlp.") + name + ".weight", "BF16", {512, 256}});
  }
  tensors.push_back({"model.layers.1.mlp.down_proj.weight", "BF16", {256, 512}});
  test::write_sharded_checkpoint(dir, tensors, 1);
  const auto weights = test::run_cli({"weights", dir.string(), "--json"});
  ASSERT_EQ(weights.code, 0) << weights.err;
  const auto wj = nlohmann::json::parse(weights.out);
  EXPECT_EQ(wj["model"]["family"], "llama");
  EXPECT_EQ(wj["checkpoint_bytes"].get<std::int64_t>(), 3'385'856);
  const auto& headers = wj["workers"][0]["headers"];
  EXPECT_EQ(headers["unmatched_tensors"].size(), 0u) << weights.out;
  EXPECT_EQ(headers["difference_bytes"], 0) << weights.out;
  std::int64_t without_buffers = 0;
  for (const auto& row : wj["workers"][0]["rows"]) {
    if (row["name"] != "runtime_buffers") without_buffers += row["bytes"].get<std::int64_t>();
  }
  EXPECT_EQ(without_buffers, 2'886'144) << weights.out;
  fs::remove_all(dir);
}

TEST(GenericPath, RefusesWhatItCannotSize) {
  // Headers whose layer stack disagrees with num_hidden_layers.
  const fs::path dir = test::fresh_fixture_dir("generic-mismatch");
  auto config = zeta_config(false);
  config["num_hidden_layers"] = 3;
  config["layer_types"] = {"sliding_attention", "full_attention", "full_attention"};
  std::ofstream(dir / "config.json") << config.dump();
  test::write_sharded_checkpoint(dir, zeta_tensors(true), 1);
  auto r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("holds 2 layers but num_hidden_layers is 3"), std::string::npos) << r.err;

  // A quantized checkpoint.
  config = zeta_config(false);
  config["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}};
  std::ofstream(dir / "config.json") << config.dump();
  r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("unquantized checkpoints only"), std::string::npos) << r.err;

  // A recurrent mixer (Falcon-H1's parallel Mamba2): its state is no attention cache.
  config = zeta_config(false);
  std::ofstream(dir / "config.json") << config.dump();
  auto tensors = zeta_tensors(true);
  tensors.push_back({"model.layers.0.mamba.A_log", "F32", {16}});
  tensors.push_back({"model.layers.0.mamba.in_proj.weight", "BF16", {64, 256}});
  fs::remove(dir / "model-00001-of-00001.safetensors");
  test::write_sharded_checkpoint(dir, tensors, 1);
  r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("recurrent mixer"), std::string::npos) << r.err;

  // Latent attention, and a layer type that is not attention.
  config = zeta_config(false);
  config["kv_lora_rank"] = 512;
  std::ofstream(dir / "config.json") << config.dump();
  r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("latent attention"), std::string::npos) << r.err;
  config = zeta_config(false);
  config["layer_types"] = {"linear_attention", "full_attention"};
  std::ofstream(dir / "config.json") << config.dump();
  r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("\"linear_attention\" is not one"), std::string::npos) << r.err;

  // A modelled family's model type under an architecture vLLM does not register for it is refused even
  // with headers (vLLM picks the implementation by the architecture).
  config = zeta_config(false);
  config["model_type"] = "deepseek_v4";
  std::ofstream(dir / "config.json") << config.dump();
  r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("registers no such model for the deepseek_v4 family"), std::string::npos) << r.err;
  // A type vLLM serves with nothing the generic layout would get right (MiniMax-M3) likewise.
  config["model_type"] = "minimax_m3";
  std::ofstream(dir / "config.json") << config.dump();
  r = test::run_cli({"fit", dir.string(), "--gpu", "h100"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("MiniMax-M3"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpubudget
