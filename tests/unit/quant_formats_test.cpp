// Storage formats beyond bf16: bytes of one module from its shapes, derived by hand from the format's
// tensors (docs/methodology.md §Weights), and vLLM's published "Model loading took" figures.
#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "gpubudget/fit.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using test::layout_for;

const LinearModule& linear(const ModelSpec& m, std::size_t layer, const std::string& suffix) {
  for (const auto& l : m.layers.at(layer).linears) {
    if (l.name.size() >= suffix.size() && l.name.compare(l.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return l;
    }
  }
  throw std::runtime_error("no linear " + suffix);
}

// A one-layer Llama: hidden 256, 4 query heads and 2 KV heads of 64, MLP 512, fp16.
std::string tiny_llama(const std::string& quantization_config) {
  return R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":256,"num_attention_heads":4,
    "num_key_value_heads":2,"intermediate_size":512,"num_hidden_layers":1,"vocab_size":1000,
    "max_position_embeddings":4096,"torch_dtype":"float16","quantization_config":)" +
         quantization_config + "}";
}

TEST(QuantFormats, GptqMarlinKeepsScalesAndDropsSymmetricZeros) {
  const ModelSpec m = parse_model_config(
      tiny_llama(R"({"quant_method":"gptq","bits":4,"group_size":128,"desc_act":false,"sym":true})"), "", "t/config.json");
  const auto tp1 = layout_for(m, 1);
  // qkv [512, 256]: 4-bit weight 512·256/2 + fp16 scales [256/128, 512].
  EXPECT_EQ(linear_bytes(linear(m, 0, "qkv_proj"), tp1).count(), 512 * 256 / 2 + 2 * 512 * 2);
  // down [256, 512]: 256·512/2 + scales [4, 256].
  EXPECT_EQ(linear_bytes(linear(m, 0, "down_proj"), tp1).count(), 256 * 512 / 2 + 4 * 256 * 2);
  // The checkpoint also holds qzeros [groups, n/8] int32 and g_idx int32 [k] per shard:
  // q [256, 256]: 32768 + 2·32·4 + 2·256·2 + 4·256; k and v [128, 256]: 16384 + 2·16·4 + 2·128·2 + 4·256.
  const std::int64_t q = 32768 + 256 + 1024 + 1024;
  const std::int64_t kv = 16384 + 128 + 512 + 1024;
  const std::int64_t o = 32768 + 256 + 1024 + 1024;
  const std::int64_t gate_up = 2 * (65536 + 2 * 64 * 4 + 2 * 512 * 2 + 4 * 256);
  const std::int64_t down = 65536 + 4 * 32 * 4 + 4 * 256 * 2 + 4 * 512;
  const std::int64_t table = 1000 * 256 * 2;
  const std::int64_t norms = 3 * 256 * 2;
  EXPECT_EQ(checkpoint_bytes(m).count(), q + 2 * kv + o + gate_up + down + 2 * table + norms);
}

TEST(QuantFormats, GptqActOrderKeepsEveryScaleGroupOnRowParallelRanks) {
  const ModelSpec m = parse_model_config(
      tiny_llama(R"({"quant_method":"gptq","bits":4,"group_size":128,"desc_act":true,"sym":true})"), "", "t/config.json");
  // TP2 down [256, 512/2]: 256·256/2 packed, scales for all 512/128 = 4 groups, g_idx and its sort
  // order int32 [256] each.
  EXPECT_EQ(linear_bytes(linear(m, 0, "down_proj"), layout_for(m, 2)).count(), 32768 + 4 * 256 * 2 + 2 * 4 * 256);
  // Column-parallel gate_up [1024/2, 256]: its own 2 groups only.
  EXPECT_EQ(linear_bytes(linear(m, 0, "gate_up_proj"), layout_for(m, 2)).count(), 512 * 256 / 2 + 2 * 512 * 2 + 8 * 256);
}

TEST(QuantFormats, AwqCarriesZeroPoints) {
  const ModelSpec m = parse_model_config(
      tiny_llama(R"({"quant_method":"awq","bits":4,"group_size":128,"zero_point":true,"version":"gemm"})"), "",
      "t/config.json");
  // qkv [512, 256]: packed 65536, fp16 scales [2, 512], int32 zeros [2, 512·4/32].
  EXPECT_EQ(linear_bytes(linear(m, 0, "qkv_proj"), layout_for(m, 1)).count(), 65536 + 2 * 512 * 2 + 2 * 64 * 4);
}

TEST(QuantFormats, CompressedTensorsW8A8AndFp8Channel) {
  const std::string w8a8 = R"({"quant_method":"compressed-tensors","format":"int-quantized","ignore":["lm_head"],
    "config_groups":{"group_0":{"targets":["Linear"],
      "weights":{"type":"int","num_bits":8,"strategy":"channel","symmetric":true,"dynamic":false},
      "input_activations":{"type":"int","num_bits":8,"strategy":"token","dynamic":true}}}})";
  const ModelSpec m = parse_model_config(tiny_llama(w8a8), "", "t/config.json");
  const auto& qkv = linear(m, 0, "qkv_proj");
  EXPECT_EQ(qkv.format.kind, QuantKind::kChannel8);
  EXPECT_TRUE(qkv.format.integer);
  // int8 weight + fp32 scale per output channel: 512·256 + 4·512; at TP2 half the rows.
  EXPECT_EQ(linear_bytes(qkv, layout_for(m, 1)).count(), 512 * 256 + 4 * 512);
  EXPECT_EQ(linear_bytes(qkv, layout_for(m, 2)).count(), 256 * 256 + 4 * 256);
}

TEST(QuantFormats, ModelOptFp8IsPerTensorWithAStaticInputScale) {
  // nvidia/Llama-3.1-70B-Instruct-FP8 (hf_quant_config.json quant_algo FP8, lm_head excluded).
  const ModelSpec m = test::bundled("nvidia/Llama-3.1-70B-Instruct-FP8");
  const auto& qkv = linear(m, 0, "qkv_proj");
  EXPECT_EQ(qkv.format.kind, QuantKind::kFp8Tensor);
  // TP8: (64/8 + 2·8/8)·128 = 1280 rows x 8192 fp8, one fp32 weight scale (max of q, k, v), one input scale.
  EXPECT_EQ(linear_bytes(qkv, layout_for(m, 8)).count(), 1280LL * 8192 + 4 + 4);
  EXPECT_EQ(m.quantization.kv_cache_algo, "fp8");  // kv_cache_quant_algo FP8 → fp8_e4m3 from vLLM 0.14
  EXPECT_EQ(m.lm_head_format.kind, QuantKind::kUnquantized);
}

TEST(QuantFormats, ModelOptMixedPrecisionFollowsEachListedLayer) {
  // nvidia/Qwen3.6-27B-NVFP4: linear attention and attention FP8, MLPs W4A16 NVFP4, the rest unlisted.
  const ModelSpec m = test::bundled("nvidia/Qwen3.6-27B-NVFP4");
  EXPECT_EQ(linear(m, 0, "linear_attn.out_proj").format.kind, QuantKind::kFp8Tensor);
  EXPECT_EQ(linear(m, 0, "mlp.gate_up_proj").format.kind, QuantKind::kNvfp4);
  EXPECT_EQ(linear(m, 3, "self_attn.o_proj").format.kind, QuantKind::kFp8Tensor);
  // The 35B-A3B lists its FusedMoE blocks whole ("...mlp.experts").
  const ModelSpec moe = test::bundled("nvidia/Qwen3.6-35B-A3B-NVFP4");
  ASSERT_FALSE(moe.layers.at(0).experts.empty());
  EXPECT_EQ(moe.layers.at(0).experts.front().format.kind, QuantKind::kNvfp4);
}

TEST(QuantFormats, UnsupportedSchemesNameTheField) {
  try {
    parse_model_config(tiny_llama(R"({"quant_method":"bitsandbytes"})"), "", "t/config.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t/config.json:/quantization_config/quant_method"), std::string::npos)
        << e.what();
  }
  try {
    parse_model_config(tiny_llama(R"({"quant_method":"gptq","bits":3,"group_size":128})"), "", "t/config.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/quantization_config/bits"), std::string::npos) << e.what();
  }
}

struct Published {
  const char* model;
  const char* gpu;
  std::int64_t tp;
  double gib;  // vLLM "Model loading took"
  const char* source;
};

void PrintTo(const Published& p, std::ostream* os) { *os << p.model << " tp" << p.tp; }

class PublishedModelLoading : public ::testing::TestWithParam<Published> {};

TEST_P(PublishedModelLoading, WithinOnePercent) {
  const Published p = GetParam();
  Deployment d;
  d.tensor_parallel_size = p.tp;
  const std::string model = p.model;
  const ModelSpec m = model.rfind("tests:", 0) == 0
                          ? load_model(test::data_dir() + "/configs/" + model.substr(6), test::configs())
                          : test::bundled(model);
  const FitResult r =
      fit(m, load_gpu_preset(p.gpu, test::configs()), d, load_vllm_profile("", test::configs()));
  const double gib = to_gib(r.binding_worker().weights.total);
  EXPECT_NEAR(gib, p.gib, p.gib * 0.01) << p.source;
}

// The reference figures of the weights notes (§6), each a real vLLM log line.
INSTANTIATE_TEST_SUITE_P(
    Logs, PublishedModelLoading,
    ::testing::Values(
        Published{"deepseek-ai/DeepSeek-R1", "h200", 8, 79.739, "DeepSeek-R1-0528 FP8 block, vLLM 0.11.2"},
        Published{"openai/gpt-oss-120b", "a100-80gb", 1, 65.965, "gpt-oss-120b MXFP4 (Marlin padding), vLLM 0.11.2"},
        Published{"openai/gpt-oss-20b", "a100-80gb", 1, 13.72, "gpt-oss-20b MXFP4 on A100, vLLM 0.19.0"},
        Published{"Qwen/Qwen3-235B-A22B-FP8", "h100", 4, 55.19, "Qwen3-235B-A22B-Instruct-2507-FP8, block 128"},
        Published{"mistralai/Mixtral-8x22B-v0.1", "h100", 8, 32.764, "Mixtral-8x22B bf16"},
        Published{"tests:llama-3.3-70b-fp8-dynamic", "h100", 4, 16.962,
                  "Llama-3.3-70B-Instruct-FP8-dynamic (compressed-tensors per-channel), vLLM 0.11.2rc1"}));

}  // namespace
}  // namespace gpubudget
