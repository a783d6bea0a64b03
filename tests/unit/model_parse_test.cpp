// Parsing real configs into per-layer specs, and the errors bad configs produce.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpubudget/error.h"
#include "test_support.h"

namespace gpubudget {
namespace {

const LinearModule* find_linear(const LayerSpec& layer, const std::string& suffix) {
  for (const auto& m : layer.linears) {
    if (m.name.size() >= suffix.size() && m.name.compare(m.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return &m;
    }
  }
  return nullptr;
}

// get_rope reads partial_rotary_factor from rope_parameters (rotary_embedding/__init__.py), where
// Qwen3.5's config keeps it (0.25): head 256 rotates 64 columns. Its mrope cache is 4 x 262,144
// positions (mrope.py cache_max_position_num) in the model dtype (base.py: cache.to(dtype)):
// 1,048,576 x 64 x 2 B = 134,217,728 B; vo-252's "Model loading took 13.01 GiB" at TP 4 includes it.
TEST(ModelParse, PartialRotaryFactorInsideRopeParameters) {
  const ModelSpec m = test::bundled("Qwen/Qwen3.5-27B");
  ASSERT_EQ(m.buffers.size(), 1U);
  EXPECT_EQ(m.buffers[0].elements, 1'048'576LL * 64);
  EXPECT_EQ(m.buffers[0].elements * element_bytes(m.buffers[0].dtype), 134'217'728LL);
}

TEST(ModelParse, KimiK25WrapsADeepSeekV3TextModel) {
  const ModelSpec m = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  EXPECT_EQ(m.architecture, "KimiK25ForConditionalGeneration");
  EXPECT_EQ(m.model_type, "deepseek_v3");
  ASSERT_EQ(m.layers.size(), 61u);
  EXPECT_FALSE(m.layers[0].is_moe);  // first_k_dense_replace = 1
  EXPECT_TRUE(m.layers[1].is_moe);
  EXPECT_EQ(m.layers[60].experts.at(0).num_experts, 384);
  EXPECT_EQ(m.layers[60].experts.at(0).intermediate_size, 2048);
  EXPECT_EQ(m.layers[5].attention.kind, AttentionKind::kMla);
  EXPECT_EQ(m.layers[5].attention.head_dim, 512 + 64);
  EXPECT_EQ(m.vocab_size, 163840);
  EXPECT_TRUE(m.vision.has_value());
  // ModelOpt NVFP4 with the attention of every layer and the lm_head in `ignore`.
  EXPECT_EQ(m.quantization.method, "modelopt_fp4");
  // hf_quant_config.json kv_cache_quant_algo "FP8": what vLLM 0.14+ maps to fp8_e4m3.
  EXPECT_EQ(m.quantization.kv_cache_scheme, CheckpointKvScheme::kModelOpt);
  EXPECT_EQ(m.quantization.kv_cache_algo, "fp8");
  EXPECT_EQ(find_linear(m.layers[7], "self_attn.q_b_proj")->format.kind, QuantKind::kUnquantized);
  EXPECT_EQ(find_linear(m.layers[7], "shared_experts.gate_up_proj")->format.kind, QuantKind::kNvfp4);
  EXPECT_EQ(find_linear(m.layers[0], "mlp.down_proj")->format.kind, QuantKind::kNvfp4);
  EXPECT_EQ(m.layers[7].experts.at(0).format.kind, QuantKind::kNvfp4);
  EXPECT_EQ(find_linear(m.layers[7], "mlp.gate")->format.kind, QuantKind::kUnquantized);
  // kv_b_proj is bf16, so vLLM makes no absorbed copy.
  EXPECT_EQ(find_linear(m.layers[7], "kv_b_proj(bf16 W_UK_T/W_UV)"), nullptr);
}

TEST(ModelParse, KimiK25CompressedTensorsInt4) {
  const ModelSpec m = test::bundled("moonshotai/Kimi-K2.5");
  EXPECT_EQ(m.quantization.method, "compressed-tensors");
  const QuantFormat experts = m.layers[9].experts.at(0).format;
  EXPECT_EQ(experts.kind, QuantKind::kIntPacked);
  EXPECT_EQ(experts.bits, 4);
  EXPECT_EQ(experts.group_size, 32);
  EXPECT_TRUE(experts.symmetric);
  // ignore: re:.*self_attn.*, re:.*shared_experts.*, re:.*mlp\.(gate|up|gate_up|down)_proj.*
  EXPECT_EQ(find_linear(m.layers[9], "self_attn.o_proj")->format.kind, QuantKind::kUnquantized);
  EXPECT_EQ(find_linear(m.layers[9], "shared_experts.down_proj")->format.kind, QuantKind::kUnquantized);
  EXPECT_EQ(find_linear(m.layers[0], "mlp.gate_up_proj")->format.kind, QuantKind::kUnquantized);
  EXPECT_EQ(m.quantization.kv_cache_scheme, CheckpointKvScheme::kNone);  // kv_cache_scheme: null
}

TEST(ModelParse, CompressedTensorsKvSchemeMeansFp8) {
  const ModelSpec m = parse_model_config(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama",
    "hidden_size":64,"num_attention_heads":4,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100,
    "quantization_config":{"quant_method":"compressed-tensors","format":"pack-quantized",
      "config_groups":{"group_0":{"targets":["Linear"],"weights":{"type":"int","num_bits":4,"strategy":"group",
        "group_size":32,"symmetric":false}}},
      "kv_cache_scheme":{"type":"float","num_bits":8,"dynamic":false},"ignore":["lm_head"]}})",
                                         "", "inline/config.json");
  EXPECT_EQ(m.quantization.kv_cache_scheme, CheckpointKvScheme::kCompressedTensors);
  EXPECT_FALSE(m.layers[0].linears[0].format.symmetric);
}

TEST(ModelParse, DeepSeekV3Fp8BlockSkipsTheMtpLayer) {
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(m.layers.size(), 61u);
  EXPECT_EQ(m.skipped_mtp_layers, 1);
  EXPECT_FALSE(m.layers[2].is_moe);  // first_k_dense_replace = 3
  EXPECT_TRUE(m.layers[3].is_moe);
  const auto* q_b = find_linear(m.layers[3], "q_b_proj");
  ASSERT_NE(q_b, nullptr);
  EXPECT_EQ(q_b->format.kind, QuantKind::kFp8Block);
  EXPECT_EQ(q_b->format.block_n, 128);
  EXPECT_NE(find_linear(m.layers[3], "kv_b_proj(bf16 W_UK_T/W_UV)"), nullptr);
  EXPECT_EQ(m.quantization.kv_cache_scheme, CheckpointKvScheme::kNone);
}

TEST(ModelParse, DeepSeekV2LiteHasNoQLora) {
  const ModelSpec m = test::bundled("deepseek-ai/DeepSeek-V2-Lite-Chat");
  EXPECT_NE(find_linear(m.layers[0], "self_attn.q_proj"), nullptr);
  EXPECT_EQ(find_linear(m.layers[0], "fused_qkv_a_proj"), nullptr);
}

TEST(ModelParse, LlamaGqa) {
  const ModelSpec m = test::bundled("meta-llama/Llama-3.1-70B");
  ASSERT_EQ(m.layers.size(), 80u);
  EXPECT_EQ(m.layers[0].attention.num_key_value_heads, 8);
  EXPECT_EQ(m.layers[0].attention.head_dim, 128);  // 8192 / 64
  EXPECT_FALSE(m.tie_word_embeddings);
}

void expect_input_error(const std::string& json, const std::string& fragment) {
  try {
    parse_model_config(json, "", "bad/config.json");
    ADD_FAILURE() << "expected InputError containing " << fragment;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ModelParse, MultimodalWrapperWithoutVisionConfigIsRefused) {
  // The bundled Llama 4 config without its vision_config (as excerpts of it circulate): sizing it would
  // drop the tower.
  std::ifstream in(test::configs().root / "models/meta-llama__Llama-4-Scout-17B-16E-Instruct/config.json");
  auto config = nlohmann::json::parse(in);
  ASSERT_TRUE(config.contains("vision_config"));
  config.erase("vision_config");
  try {
    (void)parse_model_config(config.dump(), "", "Llama-4-Scout/config.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has no vision_config"), std::string::npos) << e.what();
  }
}

TEST(ModelParse, MultimodalWrappersNestTheirLanguageModels) {
  const ModelSpec llama4 = load_model(test::data_dir() + "/configs/llama4-scout-base/config.json", test::configs());
  EXPECT_EQ(llama4.model_type, "llama4_text");
  EXPECT_EQ(llama4.layers.size(), 48u);
  EXPECT_EQ(llama4.vocab_size, 202048);
  const ModelSpec kimi_vl = load_model(test::data_dir() + "/configs/kimi-vl-a3b/config.json", test::configs());
  EXPECT_EQ(kimi_vl.model_type, "deepseek_v3");
  EXPECT_EQ(attention_mix(kimi_vl), "mla");
  // A vision tower of a type gpubudget does not model is an error naming it, never a silent omission.
  std::string json = R"({"architectures":["Mistral3ForConditionalGeneration"],"model_type":"mistral3",
    "text_config":{"model_type":"mistral","hidden_size":64,"num_attention_heads":4,"intermediate_size":128,
    "num_hidden_layers":2,"vocab_size":100},"vision_config":{"model_type":"clip_vision_model"}})";
  try {
    parse_model_config(json, "", "kvl/config.json");  // vLLM's Mistral3 wrapper with a tower it does not build
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kvl/config.json:/vision_config/model_type"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("clip_vision_model"), std::string::npos) << e.what();
  }
}

TEST(ModelParse, PythonJsonInfinityIsAccepted) {
  // Nemotron-H-56B's config has "time_step_limit": [0.0, Infinity], which Python's json writes and reads.
  const ModelSpec m = test::bundled("nvidia/Nemotron-H-56B-Base-8K");
  EXPECT_EQ(m.model_type, "nemotron_h");
  // A string that merely contains the word is left alone; a bare word that is not a number is not.
  EXPECT_NO_THROW(parse_model_config(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","note":"NaN Infinity",
    "hidden_size":64,"num_attention_heads":4,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100})",
                                     "", "inline/config.json"));
  test::expect_input_error([&] { (void)(parse_model_config(R"({"architectures": Infinite})", "", "inline/config.json")); }, "inline/config.json: malformed JSON at byte 19");
}

TEST(ModelParseErrors, NameTheFileFieldAndValue) {
  expect_input_error("{\"architectures\": [", "bad/config.json: malformed JSON");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","num_attention_heads":64,
    "intermediate_size":128,"num_hidden_layers":2,"vocab_size":100})",
                     "bad/config.json:/hidden_size: expected an integer");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":"4096",
    "num_attention_heads":32,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100})",
                     "got \"4096\"");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096.5,
    "num_attention_heads":32,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100})",
                     "/hidden_size: expected an integer in [1, 1048576], got 4096.5");
  expect_input_error(R"({"architectures":["FalconForCausalLM"],"model_type":"falcon"})",
                     "unsupported architecture FalconForCausalLM");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
    "num_attention_heads":32,"num_key_value_heads":5,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100})",
                     "num_key_value_heads 5 does not divide num_attention_heads 32");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
    "num_attention_heads":32,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100,
    "quantization_config":{"quant_method":"hqq"}})",
                     "quantization method \"hqq\" is not supported yet");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
    "num_attention_heads":32,"intermediate_size":128,"num_hidden_layers":2,"vocab_size":100,
    "quantization_config":{"quant_method":"gptq"}})",
                     "/quantization_config/bits: expected an integer in [2, 8], got nothing (missing)");
}

TEST(ModelParseErrors, AbsurdSizesAreRefused) {
  // 4096 layers of a 2^20-wide MLP: ~10^16 parameters.
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":1048576,
    "num_attention_heads":16384,"intermediate_size":4194304,"num_hidden_layers":4096,"vocab_size":100})",
                     "refusing an absurd model size");
  expect_input_error(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
    "num_attention_heads":32,"intermediate_size":128,"num_hidden_layers":10000000,"vocab_size":100})",
                     "/num_hidden_layers: expected an integer in [1, 10000], got 10000000");
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// Phi-3 (phi3.py through llama.py): no layer_types, so the config is not interleaved and vLLM sets
// cache_config.sliding_window from it (engine/arg_utils.py); every layer, passing no window of its own,
// keeps only the last 2047 tokens (Phi-3-mini-4k-instruct's sliding_window).
TEST(ModelParse, Phi3SlidingWindowIsEveryLayers) {
  const ModelSpec m = parse_model_config(
      R"({"architectures":["Phi3ForCausalLM"],"model_type":"phi3","hidden_size":3072,"num_attention_heads":32,
          "num_key_value_heads":32,"intermediate_size":8192,"num_hidden_layers":32,"vocab_size":32064,
          "max_position_embeddings":4096,"sliding_window":2047,"torch_dtype":"bfloat16"})",
      "", "phi3/config.json");
  ASSERT_EQ(m.layers.size(), 32u);
  for (const auto& layer : m.layers) {
    EXPECT_EQ(layer.attention.kind, AttentionKind::kSlidingWindow);
    EXPECT_EQ(layer.attention.window, 2047);
  }
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// Cohere2 without layer_types (commandr.py via Cohere2Config): sliding_window_pattern 4, so every
// fourth layer (3, 7, 11, ...) is global and the others keep a 4096-token window; the head is tied.
TEST(ModelParse, Cohere2EveryFourthLayerIsGlobal) {
  const ModelSpec m = parse_model_config(
      R"({"architectures":["Cohere2ForCausalLM"],"model_type":"cohere2","hidden_size":4096,"num_attention_heads":32,
          "num_key_value_heads":8,"intermediate_size":14336,"num_hidden_layers":8,"vocab_size":256000,
          "max_position_embeddings":8192,"sliding_window":4096,"sliding_window_pattern":4,"torch_dtype":"bfloat16"})",
      "", "cohere2/config.json");
  ASSERT_EQ(m.layers.size(), 8u);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const bool global = (i + 1) % 4 == 0;
    EXPECT_EQ(m.layers[i].attention.kind, global ? AttentionKind::kFull : AttentionKind::kSlidingWindow) << i;
    EXPECT_EQ(m.layers[i].replicated.size(), 1u) << i;  // one LayerNorm for the parallel block
  }
  EXPECT_TRUE(m.tie_word_embeddings);
  // vLLM asserts the tie: a config saying otherwise is refused.
  test::expect_input_error(
      [] {
        (void)parse_model_config(R"({"architectures":["CohereForCausalLM"],"model_type":"cohere","hidden_size":256,
            "num_attention_heads":4,"intermediate_size":512,"num_hidden_layers":2,"vocab_size":1000,
            "tie_word_embeddings":false})",
                                 "", "cohere/config.json");
      },
      "tie_word_embeddings");
}

}  // namespace
}  // namespace gpubudget

namespace gpubudget {
namespace {

// Architectures no modelled vLLM serves are refused with that reason (vLLM's registry at its main of
// 2026-05: no Mllama since #24907, no Step-3.7, no MiniMax-M3).
TEST(ModelParseErrors, ArchitecturesVllmDoesNotServeSaySo) {
  test::expect_input_error([] { (void)test::bundled("meta-llama/Llama-3.2-90B-Vision-Instruct"); }, "#24907");
  test::expect_input_error([] { (void)test::bundled("stepfun-ai/Step-3.7-Flash"); }, "registers no Step-3.7");
  test::expect_input_error([] { (void)test::bundled("MiniMaxAI/MiniMax-M3"); }, "registers no MiniMax-M3");
}

}  // namespace
}  // namespace gpubudget
