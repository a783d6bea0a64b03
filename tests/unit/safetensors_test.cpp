// The safetensors header reader on hostile files, and header-derived per-GPU weights on genuine
// fixture checkpoints written here for tiny configs of each family and storage format. Fixture tensor
// names, dtypes and shapes follow each format's published checkpoint layout, written out below
// independently of the config-side enumeration (weight_units.h): header-derived and config-derived
// bytes agree only if both are right.
#include "gpubudget/safetensors.h"

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli.h"
#include "fixtures/safetensors_writer.h"
#include "gpubudget/error.h"
#include "gpubudget/header_weights.h"
#include "gpubudget/weights.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using test::FixtureTensor;

void expect_invalid(const std::filesystem::path& file, const std::string& fragment) {
  try {
    read_safetensors_header(file.string());
    ADD_FAILURE() << "expected an InputError containing " << fragment;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.string()), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

void write_raw(const std::filesystem::path& file, std::uint64_t declared_length, const std::string& body) {
  std::ofstream out(file, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((declared_length >> (8 * i)) & 0xff));
  out << body;
}

TEST(SafetensorsHeader, HostileFilesAreRefusedWithTheReason) {
  const auto dir = test::fresh_fixture_dir("hostile");
  std::ofstream(dir / "short.safetensors", std::ios::binary) << "1234567";
  expect_invalid(dir / "short.safetensors", "7 bytes, shorter than the 8-byte header length");
  write_raw(dir / "huge.safetensors", 2'000'000'000ULL, "{}");
  expect_invalid(dir / "huge.safetensors", "header length 2000000000 exceeds the 100000000-byte limit");
  write_raw(dir / "past_end.safetensors", 4096, "{}");
  expect_invalid(dir / "past_end.safetensors", "header length 4096 is past the end of the 10-byte file");
  write_raw(dir / "not_json.safetensors", 9, "not json!");
  expect_invalid(dir / "not_json.safetensors", "the header is not JSON");
  const std::string unknown = R"({"a":{"dtype":"F7","shape":[2],"data_offsets":[0,2]}})";
  write_raw(dir / "dtype.safetensors", unknown.size(), unknown + "xx");
  expect_invalid(dir / "dtype.safetensors", "tensor \"a\" has unknown dtype \"F7\"");
  const std::string overlap =
      R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
  write_raw(dir / "overlap.safetensors", overlap.size(), overlap + "123456");
  expect_invalid(dir / "overlap.safetensors", "tensors \"a\" and \"b\" overlap");
  const std::string truncated = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  write_raw(dir / "truncated.safetensors", truncated.size(), truncated + "12345678");
  expect_invalid(dir / "truncated.safetensors", "past the 8 data bytes (truncated file?)");
  const std::string mismatch = R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  write_raw(dir / "mismatch.safetensors", mismatch.size(), mismatch + "12345678");
  expect_invalid(dir / "mismatch.safetensors", "holds 8 bytes but dtype F32 and shape need 12");
  const std::string gap = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  write_raw(dir / "gap.safetensors", gap.size(), gap + "1234");
  expect_invalid(dir / "gap.safetensors", "2 bytes before tensor \"a\" belong to no tensor");
  const std::string negative = R"({"a":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})";
  write_raw(dir / "negative.safetensors", negative.size(), negative + "12");
  expect_invalid(dir / "negative.safetensors", "shape dimension is negative");
}

TEST(SafetensorsHeader, TheCliExitsThreeOnABrokenCheckpoint) {
  const auto dir = test::fresh_fixture_dir("cli-broken");
  std::ofstream(dir / "config.json") << R"({"architectures":["LlamaForCausalLM"],"model_type":"llama",
    "hidden_size":64,"num_attention_heads":4,"intermediate_size":128,"num_hidden_layers":1,"vocab_size":128})";
  std::ofstream(dir / "model.safetensors", std::ios::binary) << "1234567";
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_cli({"weights", dir.string()}, out, err, GPUBUDGET_TEST_SOURCE_DIR "/build/x"), 3);
  EXPECT_NE(err.str().find("model.safetensors: invalid safetensors file: 7 bytes"), std::string::npos) << err.str();
  // A 2 GB header length and a header that is not JSON, through the CLI too.
  for (const auto& [length, body, reason] :
       {std::tuple<std::uint64_t, std::string, std::string>{2'000'000'000ULL, "{}", "exceeds the 100000000-byte limit"},
        {9, "not json!", "the header is not JSON"}}) {
    write_raw(dir / "model.safetensors", length, body);
    std::ostringstream o, e;
    EXPECT_EQ(cli::run_cli({"weights", dir.string()}, o, e, GPUBUDGET_TEST_SOURCE_DIR "/build/x"), 3) << reason;
    EXPECT_NE(e.str().find(reason), std::string::npos) << e.str();
  }
  // The index names a tensor its file does not hold.
  std::filesystem::remove(dir / "model.safetensors");
  test::write_safetensors(dir / "model-00001-of-00001.safetensors", {{"model.norm.weight", "BF16", {64}}});
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"weight_map":{"model.norm.weight":"model-00001-of-00001.safetensors","lm_head.weight":"model-00001-of-00001.safetensors"}})";
  std::ostringstream out2, err2;
  EXPECT_EQ(cli::run_cli({"weights", dir.string()}, out2, err2, GPUBUDGET_TEST_SOURCE_DIR "/build/x"), 3);
  EXPECT_NE(err2.str().find("maps tensor \"lm_head.weight\""), std::string::npos) << err2.str();
}

// The index and the headers are compared by name: a tensor listed twice, a tensor of another file, a
// file that is no .safetensors in the folder, each named in the error.
TEST(SafetensorsIndex, ShardsAreMatchedByNameNotByDigestOrPosition) {
  const auto dir = test::fresh_fixture_dir("index-names");
  test::write_safetensors(dir / "a.safetensors", {{"x.weight", "BF16", {4}}, {"y.weight", "BF16", {4}}});
  test::write_safetensors(dir / "b.safetensors", {{"z.weight", "BF16", {4}}});
  const auto index = [&](const std::string& weight_map) {
    std::ofstream(dir / "model.safetensors.index.json") << R"({"metadata": {}, "weight_map": )" << weight_map << "}";
  };
  index(R"({"x.weight": "a.safetensors", "y.weight": "a.safetensors", "z.weight": "b.safetensors"})");
  const auto headers = read_checkpoint_headers(dir.string());
  ASSERT_TRUE(headers);
  EXPECT_EQ(headers->tensor_count(), 3);
  // y.weight listed twice (JSON allows a repeated key).
  index(R"({"x.weight": "a.safetensors", "y.weight": "a.safetensors", "y.weight": "a.safetensors", "z.weight": "b.safetensors"})");
  test::expect_input_error([&] { (void)read_checkpoint_headers(dir.string()); },
                           "the index lists tensor \"y.weight\" more than once");
  // z.weight mapped to a, which does not hold it: the file and the tensor are named.
  index(R"({"x.weight": "a.safetensors", "y.weight": "a.safetensors", "z.weight": "a.safetensors"})");
  test::expect_input_error([&] { (void)read_checkpoint_headers(dir.string()); },
                           "the index maps tensor \"z.weight\" to a.safetensors, which does not hold it");
  // Swapped names with the same count per file: digests of counts could not tell, names do.
  index(R"({"x.weight": "a.safetensors", "z.weight": "a.safetensors", "y.weight": "b.safetensors"})");
  test::expect_input_error([&] { (void)read_checkpoint_headers(dir.string()); }, "which the index does not map to it");
  // A file the index names that is no .safetensors of the folder is read by its own name, never looked up
  // by a position among the folder's files.
  std::filesystem::copy_file(dir / "b.safetensors", dir / "b.bin");
  index(R"({"x.weight": "a.safetensors", "y.weight": "a.safetensors", "z.weight": "b.bin"})");
  const auto by_name = read_checkpoint_headers(dir.string());
  ASSERT_TRUE(by_name);
  ASSERT_EQ(by_name->files.size(), 2u);
  EXPECT_EQ(std::filesystem::path(by_name->files[1].path).filename(), "b.bin");
  index(R"({"x.weight": "a.safetensors", "y.weight": "a.safetensors", "z.weight": "c.safetensors"})");
  test::expect_input_error([&] { (void)read_checkpoint_headers(dir.string()); }, "c.safetensors: cannot open the file");
  // A file name that leaves the folder.
  index(R"({"x.weight": "../a.safetensors"})");
  test::expect_input_error([&] { (void)read_checkpoint_headers(dir.string()); }, "is outside the model folder");
}

// The reference implementation multiplies the dimensions in turn: [2^40, 2^40, 0] overflows before the 0.
TEST(SafetensorsHeader, ShapesThatOverflowBeforeAZeroAreRefused) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[1099511627776,1099511627776,0],"data_offsets":[0,0]}})";
  test::expect_input_error([&] { (void)parse_safetensors_header(header, 0, "h.safetensors"); },
                           "tensor \"a\" shape overflows 64-bit element counts");
  EXPECT_EQ(parse_safetensors_header(R"({"a":{"dtype":"U8","shape":[7,0],"data_offsets":[0,0]}})", 0, "h").tensors.size(), 1u);
  test::expect_input_error(
      [&] {
        (void)parse_safetensors_header(
            R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
            2, "h.safetensors");
      },
      "tensor \"a\" appears twice");
}

// ---- Fixture checkpoints -------------------------------------------------------------------------

struct Fixture {
  std::string name;
  std::string config;                   // config.json
  std::string hf_quant_config;          // hf_quant_config.json ("" = none)
  std::vector<FixtureTensor> tensors;
};

void PrintTo(const Fixture& f, std::ostream* os) { *os << f.name; }

// A [n, k] linear stored as `format` names it; `prefix` without the trailing ".weight".
void add_linear(std::vector<FixtureTensor>& t, const std::string& format, const std::string& prefix, std::int64_t n,
                std::int64_t k, const std::string& dtype = "BF16") {
  if (format == "bf16" || format == "fp16") {
    t.push_back({prefix + ".weight", dtype, {n, k}});
  } else if (format == "gptq") {  // 4-bit, group 128, act-order
    t.push_back({prefix + ".qweight", "I32", {k / 8, n}});
    t.push_back({prefix + ".qzeros", "I32", {k / 128, n / 8}});
    t.push_back({prefix + ".scales", "F16", {k / 128, n}});
    t.push_back({prefix + ".g_idx", "I32", {k}});
  } else if (format == "awq") {  // 4-bit, group 128
    t.push_back({prefix + ".qweight", "I32", {k, n / 8}});
    t.push_back({prefix + ".qzeros", "I32", {k / 128, n / 8}});
    t.push_back({prefix + ".scales", "F16", {k / 128, n}});
  } else if (format == "nvfp4") {  // ModelOpt
    t.push_back({prefix + ".weight", "U8", {n, k / 2}});
    t.push_back({prefix + ".weight_scale", "F8_E4M3", {n, k / 16}});
    t.push_back({prefix + ".weight_scale_2", "F32", {}});
    t.push_back({prefix + ".input_scale", "F32", {}});
  } else if (format == "fp8_block") {  // DeepSeek weight_block_size [128, 128]
    t.push_back({prefix + ".weight", "F8_E4M3", {n, k}});
    t.push_back({prefix + ".weight_scale_inv", "F32", {(n + 127) / 128, (k + 127) / 128}});
  } else if (format == "int4_g32") {  // compressed-tensors pack-quantized
    t.push_back({prefix + ".weight_packed", "I32", {n, k / 8}});
    t.push_back({prefix + ".weight_scale", "BF16", {n, k / 32}});
    t.push_back({prefix + ".weight_shape", "I32", {2}});
  } else {
    throw std::runtime_error("fixture format " + format);
  }
}

// Llama layout: embed, per layer q/k/v/o, gate/up/down, two norms; final norm, untied head.
Fixture llama_fixture(const std::string& name, const std::string& format, const std::string& dtype,
                      const std::string& quantization_config, const std::string& hf_quant_config) {
  Fixture f;
  f.name = name;
  const std::string torch_dtype = dtype == "F16" ? "float16" : "bfloat16";
  f.config = fmt::format(R"({{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":256,
    "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":512,"num_hidden_layers":2,"vocab_size":1000,
    "max_position_embeddings":2048,"torch_dtype":"{}"{}}})",
                         torch_dtype, quantization_config.empty() ? "" : ",\"quantization_config\":" + quantization_config);
  f.hf_quant_config = hf_quant_config;
  auto& t = f.tensors;
  t.push_back({"model.embed_tokens.weight", dtype, {1000, 256}});
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    add_linear(t, format, p + "self_attn.q_proj", 256, 256, dtype);
    add_linear(t, format, p + "self_attn.k_proj", 128, 256, dtype);
    add_linear(t, format, p + "self_attn.v_proj", 128, 256, dtype);
    add_linear(t, format, p + "self_attn.o_proj", 256, 256, dtype);
    add_linear(t, format, p + "mlp.gate_proj", 512, 256, dtype);
    add_linear(t, format, p + "mlp.up_proj", 512, 256, dtype);
    add_linear(t, format, p + "mlp.down_proj", 256, 512, dtype);
    t.push_back({p + "input_layernorm.weight", dtype, {256}});
    t.push_back({p + "post_attention_layernorm.weight", dtype, {256}});
  }
  t.push_back({"model.norm.weight", dtype, {256}});
  t.push_back({"lm_head.weight", dtype, {1000, 256}});
  return f;
}

// Qwen3-MoE with DeepSeek-style FP8 block weights: q/k norms, a bf16 router, 4 experts per layer.
Fixture qwen3_moe_fp8_block() {
  Fixture f;
  f.name = "qwen3_moe_fp8_block";
  f.config = R"({"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe","hidden_size":256,
    "num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,"intermediate_size":512,"moe_intermediate_size":256,
    "num_experts":4,"num_experts_per_tok":2,"decoder_sparse_step":1,"mlp_only_layers":[],"num_hidden_layers":2,
    "vocab_size":1000,"max_position_embeddings":2048,"torch_dtype":"bfloat16","tie_word_embeddings":false,
    "quantization_config":{"quant_method":"fp8","weight_block_size":[128,128],"activation_scheme":"dynamic"}})";
  auto& t = f.tensors;
  t.push_back({"model.embed_tokens.weight", "BF16", {1000, 256}});
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    add_linear(t, "fp8_block", p + "self_attn.q_proj", 256, 256);
    add_linear(t, "fp8_block", p + "self_attn.k_proj", 128, 256);
    add_linear(t, "fp8_block", p + "self_attn.v_proj", 128, 256);
    add_linear(t, "fp8_block", p + "self_attn.o_proj", 256, 256);
    t.push_back({p + "self_attn.q_norm.weight", "BF16", {64}});
    t.push_back({p + "self_attn.k_norm.weight", "BF16", {64}});
    t.push_back({p + "mlp.gate.weight", "BF16", {4, 256}});
    for (int e = 0; e < 4; ++e) {
      const std::string x = fmt::format("{}mlp.experts.{}.", p, e);
      add_linear(t, "fp8_block", x + "gate_proj", 256, 256);
      add_linear(t, "fp8_block", x + "up_proj", 256, 256);
      add_linear(t, "fp8_block", x + "down_proj", 256, 256);
    }
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  }
  t.push_back({"model.norm.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  return f;
}

// DeepSeek-V3 layout (MLA with q_lora, first layer dense, noaux_tc router with its fp32 correction
// bias, shared expert, one MTP layer) with Kimi-style INT4 experts: compressed-tensors group 32, every
// non-expert linear ignored.
Fixture deepseek_v3_int4_experts() {
  Fixture f;
  f.name = "deepseek_v3_int4_experts";
  f.config = R"({"architectures":["DeepseekV3ForCausalLM"],"model_type":"deepseek_v3","hidden_size":256,
    "num_attention_heads":4,"num_key_value_heads":4,"q_lora_rank":128,"kv_lora_rank":64,"qk_nope_head_dim":32,
    "qk_rope_head_dim":16,"v_head_dim":32,"intermediate_size":512,"moe_intermediate_size":128,"n_routed_experts":4,
    "n_shared_experts":1,"num_experts_per_tok":2,"first_k_dense_replace":1,"moe_layer_freq":1,"topk_method":"noaux_tc",
    "num_hidden_layers":2,"num_nextn_predict_layers":1,"vocab_size":1000,"max_position_embeddings":4096,
    "torch_dtype":"bfloat16","tie_word_embeddings":false,
    "quantization_config":{"quant_method":"compressed-tensors","format":"pack-quantized",
      "config_groups":{"group_0":{"targets":["Linear"],"weights":{"type":"int","num_bits":4,"strategy":"group",
        "group_size":32,"symmetric":true,"dynamic":false}}},
      "ignore":["lm_head","re:.*self_attn.*","re:.*shared_experts.*","re:.*mlp\\.(gate|up|gate_up|down)_proj.*",
                "re:.*eh_proj.*"]}})";
  auto& t = f.tensors;
  t.push_back({"model.embed_tokens.weight", "BF16", {1000, 256}});
  auto layer = [&](int i, bool moe) {
    const std::string p = fmt::format("model.layers.{}.", i);
    add_linear(t, "bf16", p + "self_attn.q_a_proj", 128, 256);
    t.push_back({p + "self_attn.q_a_layernorm.weight", "BF16", {128}});
    add_linear(t, "bf16", p + "self_attn.q_b_proj", 4 * (32 + 16), 128);
    add_linear(t, "bf16", p + "self_attn.kv_a_proj_with_mqa", 64 + 16, 256);
    t.push_back({p + "self_attn.kv_a_layernorm.weight", "BF16", {64}});
    add_linear(t, "bf16", p + "self_attn.kv_b_proj", 4 * (32 + 32), 64);
    add_linear(t, "bf16", p + "self_attn.o_proj", 256, 4 * 32);
    if (!moe) {
      add_linear(t, "bf16", p + "mlp.gate_proj", 512, 256);
      add_linear(t, "bf16", p + "mlp.up_proj", 512, 256);
      add_linear(t, "bf16", p + "mlp.down_proj", 256, 512);
    } else {
      t.push_back({p + "mlp.gate.weight", "BF16", {4, 256}});
      t.push_back({p + "mlp.gate.e_score_correction_bias", "F32", {4}});
      for (int e = 0; e < 4; ++e) {
        const std::string x = fmt::format("{}mlp.experts.{}.", p, e);
        add_linear(t, "int4_g32", x + "gate_proj", 128, 256);
        add_linear(t, "int4_g32", x + "up_proj", 128, 256);
        add_linear(t, "int4_g32", x + "down_proj", 256, 128);
      }
      add_linear(t, "bf16", p + "mlp.shared_experts.gate_proj", 128, 256);
      add_linear(t, "bf16", p + "mlp.shared_experts.up_proj", 128, 256);
      add_linear(t, "bf16", p + "mlp.shared_experts.down_proj", 256, 128);
    }
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  };
  layer(0, false);
  layer(1, true);
  layer(2, true);  // the MTP layer, with its own extras
  t.push_back({"model.layers.2.enorm.weight", "BF16", {256}});
  t.push_back({"model.layers.2.hnorm.weight", "BF16", {256}});
  t.push_back({"model.layers.2.eh_proj.weight", "BF16", {256, 512}});
  t.push_back({"model.layers.2.embed_tokens.weight", "BF16", {1000, 256}});
  t.push_back({"model.layers.2.shared_head.norm.weight", "BF16", {256}});
  t.push_back({"model.layers.2.shared_head.head.weight", "BF16", {1000, 256}});
  t.push_back({"model.norm.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  return f;
}

// gpt-oss: biased attention with sinks, biased router, MXFP4 experts stored fused as blocks and
// e8m0 scales with bf16 biases.
Fixture gpt_oss_mxfp4() {
  Fixture f;
  f.name = "gpt_oss_mxfp4";
  f.config = R"({"architectures":["GptOssForCausalLM"],"model_type":"gpt_oss","hidden_size":256,
    "num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,"intermediate_size":128,"num_local_experts":4,
    "num_experts_per_tok":2,"num_hidden_layers":2,"sliding_window":128,
    "layer_types":["sliding_attention","full_attention"],"vocab_size":1000,"max_position_embeddings":4096,
    "torch_dtype":"bfloat16","tie_word_embeddings":false,
    "quantization_config":{"quant_method":"mxfp4","modules_to_not_convert":["model.layers.*.self_attn",
      "model.layers.*.mlp.router","model.embed_tokens","lm_head"]}})";
  auto& t = f.tensors;
  t.push_back({"model.embed_tokens.weight", "BF16", {1000, 256}});
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    for (const auto& [proj, n, k] : {std::tuple{"q_proj", 256, 256}, std::tuple{"k_proj", 128, 256},
                                     std::tuple{"v_proj", 128, 256}, std::tuple{"o_proj", 256, 256}}) {
      t.push_back({p + "self_attn." + proj + ".weight", "BF16", {n, k}});
      t.push_back({p + "self_attn." + proj + ".bias", "BF16", {n}});
    }
    t.push_back({p + "self_attn.sinks", "BF16", {4}});
    t.push_back({p + "mlp.router.weight", "BF16", {4, 256}});
    t.push_back({p + "mlp.router.bias", "BF16", {4}});
    t.push_back({p + "mlp.experts.gate_up_proj_blocks", "U8", {4, 256, 256 / 32, 16}});
    t.push_back({p + "mlp.experts.gate_up_proj_scales", "U8", {4, 256, 256 / 32}});
    t.push_back({p + "mlp.experts.gate_up_proj_bias", "BF16", {4, 256}});
    t.push_back({p + "mlp.experts.down_proj_blocks", "U8", {4, 256, 128 / 32, 16}});
    t.push_back({p + "mlp.experts.down_proj_scales", "U8", {4, 256, 128 / 32}});
    t.push_back({p + "mlp.experts.down_proj_bias", "BF16", {4, 256}});
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  }
  t.push_back({"model.norm.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  return f;
}

// Qwen3-Next: Gated-DeltaNet layer (fused in_proj_qkvz / in_proj_ba, conv1d, dt_bias, A_log, norm),
// then a gated full-attention layer (q_proj doubles as the output gate), MoE with a gated shared
// expert in both, and the mtp.* module of the checkpoint.
Fixture qwen3_next_hybrid() {
  Fixture f;
  f.name = "qwen3_next_hybrid";
  f.config = R"({"architectures":["Qwen3NextForCausalLM"],"model_type":"qwen3_next","hidden_size":256,
    "num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,"linear_num_key_heads":2,"linear_num_value_heads":4,
    "linear_key_head_dim":32,"linear_value_head_dim":32,"linear_conv_kernel_dim":4,"full_attention_interval":2,
    "num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":128,"shared_expert_intermediate_size":128,
    "decoder_sparse_step":1,"mlp_only_layers":[],"num_hidden_layers":2,"vocab_size":1000,
    "max_position_embeddings":4096,"partial_rotary_factor":0.25,"torch_dtype":"bfloat16","tie_word_embeddings":false})";
  auto& t = f.tensors;
  t.push_back({"model.embed_tokens.weight", "BF16", {1000, 256}});
  auto moe = [&](const std::string& p) {
    t.push_back({p + "mlp.gate.weight", "BF16", {4, 256}});
    for (int e = 0; e < 4; ++e) {
      const std::string x = fmt::format("{}mlp.experts.{}.", p, e);
      t.push_back({x + "gate_proj.weight", "BF16", {128, 256}});
      t.push_back({x + "up_proj.weight", "BF16", {128, 256}});
      t.push_back({x + "down_proj.weight", "BF16", {256, 128}});
    }
    t.push_back({p + "mlp.shared_expert.gate_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "mlp.shared_expert.up_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "mlp.shared_expert.down_proj.weight", "BF16", {256, 128}});
    t.push_back({p + "mlp.shared_expert_gate.weight", "BF16", {1, 256}});
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  };
  auto attention = [&](const std::string& p) {
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {2 * 4 * 64, 256}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {2 * 64, 256}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {2 * 64, 256}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {256, 4 * 64}});
    t.push_back({p + "self_attn.q_norm.weight", "BF16", {64}});
    t.push_back({p + "self_attn.k_norm.weight", "BF16", {64}});
  };
  // Key dim 2 x 32 = 64, value dim 4 x 32 = 128: qkvz = 2·64 + 2·128, ba = 2·4, conv over 2·64 + 128.
  t.push_back({"model.layers.0.linear_attn.in_proj_qkvz.weight", "BF16", {384, 256}});
  t.push_back({"model.layers.0.linear_attn.in_proj_ba.weight", "BF16", {8, 256}});
  t.push_back({"model.layers.0.linear_attn.conv1d.weight", "BF16", {256, 1, 4}});
  t.push_back({"model.layers.0.linear_attn.dt_bias", "BF16", {4}});
  t.push_back({"model.layers.0.linear_attn.A_log", "BF16", {4}});
  t.push_back({"model.layers.0.linear_attn.norm.weight", "BF16", {32}});
  t.push_back({"model.layers.0.linear_attn.out_proj.weight", "BF16", {256, 128}});
  moe("model.layers.0.");
  attention("model.layers.1.");
  moe("model.layers.1.");
  t.push_back({"model.norm.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  t.push_back({"mtp.fc.weight", "BF16", {256, 512}});
  attention("mtp.layers.0.");
  moe("mtp.layers.0.");
  t.push_back({"mtp.norm.weight", "BF16", {256}});
  t.push_back({"mtp.pre_fc_norm_embedding.weight", "BF16", {256}});
  t.push_back({"mtp.pre_fc_norm_hidden.weight", "BF16", {256}});
  return f;
}

// Nemotron-3 style hybrid: a Mamba2 mixer (one in_proj for z, xBC and dt; biased conv1d; A_log, D,
// dt_bias; gated norm), an attention mixer and a MoE mixer of non-gated experts with an fp32 router
// and correction bias; backbone.* names.
Fixture nemotron_h_hybrid() {
  Fixture f;
  f.name = "nemotron_h_hybrid";
  f.config = R"({"architectures":["NemotronHForCausalLM"],"model_type":"nemotron_h","hidden_size":256,
    "num_hidden_layers":3,"hybrid_override_pattern":"M*E","num_attention_heads":4,"num_key_value_heads":2,"head_dim":64,
    "intermediate_size":512,"mamba_num_heads":8,"mamba_head_dim":32,"n_groups":2,"ssm_state_size":16,"conv_kernel":4,
    "use_conv_bias":true,"mamba_proj_bias":false,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":128,
    "moe_shared_expert_intermediate_size":128,"vocab_size":1000,"max_position_embeddings":4096,
    "torch_dtype":"bfloat16","tie_word_embeddings":false})";
  auto& t = f.tensors;
  t.push_back({"backbone.embeddings.weight", "BF16", {1000, 256}});
  // inner 8 x 32 = 256, conv dim 256 + 2·2·16 = 320; in_proj = inner + conv dim + heads.
  t.push_back({"backbone.layers.0.mixer.in_proj.weight", "BF16", {256 + 320 + 8, 256}});
  t.push_back({"backbone.layers.0.mixer.conv1d.weight", "BF16", {320, 1, 4}});
  t.push_back({"backbone.layers.0.mixer.conv1d.bias", "BF16", {320}});
  t.push_back({"backbone.layers.0.mixer.A_log", "BF16", {8}});
  t.push_back({"backbone.layers.0.mixer.D", "BF16", {8}});
  t.push_back({"backbone.layers.0.mixer.dt_bias", "BF16", {8}});
  t.push_back({"backbone.layers.0.mixer.norm.weight", "BF16", {256}});
  t.push_back({"backbone.layers.0.mixer.out_proj.weight", "BF16", {256, 256}});
  t.push_back({"backbone.layers.1.mixer.q_proj.weight", "BF16", {256, 256}});
  t.push_back({"backbone.layers.1.mixer.k_proj.weight", "BF16", {128, 256}});
  t.push_back({"backbone.layers.1.mixer.v_proj.weight", "BF16", {128, 256}});
  t.push_back({"backbone.layers.1.mixer.o_proj.weight", "BF16", {256, 256}});
  t.push_back({"backbone.layers.2.mixer.gate.weight", "F32", {4, 256}});
  t.push_back({"backbone.layers.2.mixer.gate.e_score_correction_bias", "F32", {4}});
  for (int e = 0; e < 4; ++e) {
    t.push_back({fmt::format("backbone.layers.2.mixer.experts.{}.up_proj.weight", e), "BF16", {128, 256}});
    t.push_back({fmt::format("backbone.layers.2.mixer.experts.{}.down_proj.weight", e), "BF16", {256, 128}});
  }
  t.push_back({"backbone.layers.2.mixer.shared_experts.up_proj.weight", "BF16", {128, 256}});
  t.push_back({"backbone.layers.2.mixer.shared_experts.down_proj.weight", "BF16", {256, 128}});
  for (int i = 0; i < 3; ++i) t.push_back({fmt::format("backbone.layers.{}.norm.weight", i), "BF16", {256}});
  t.push_back({"backbone.norm_f.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  return f;
}

// Llama 4 wrapper: language_model.* text with fused expert tensors (no .weight suffix) and a shared
// expert, plus the vision model (class token, positions, unfold linear, biased ViT layers, pixel-shuffle
// adapter) and the projector.
Fixture llama4_multimodal() {
  Fixture f;
  f.name = "llama4_multimodal";
  f.config = R"({"architectures":["Llama4ForConditionalGeneration"],"model_type":"llama4","tie_word_embeddings":false,
    "text_config":{"model_type":"llama4_text","hidden_size":256,"num_attention_heads":4,"num_key_value_heads":2,
      "head_dim":64,"num_local_experts":4,"num_experts_per_tok":1,"intermediate_size":128,"intermediate_size_mlp":512,
      "interleave_moe_layer_step":1,"num_hidden_layers":2,"no_rope_layers":[1,0],"attention_chunk_size":128,
      "vocab_size":1000,"max_position_embeddings":4096,"torch_dtype":"bfloat16"},
    "vision_config":{"model_type":"llama4_vision_model","hidden_size":64,"intermediate_size":256,"num_hidden_layers":2,
      "num_attention_heads":4,"image_size":28,"patch_size":14,"num_channels":3,"pixel_shuffle_ratio":0.5,
      "projector_input_dim":64,"projector_output_dim":64,"vision_output_dim":64,"multi_modal_projector_bias":false}})";
  auto& t = f.tensors;
  t.push_back({"language_model.model.embed_tokens.weight", "BF16", {1000, 256}});
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("language_model.model.layers.{}.", i);
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "feed_forward.router.weight", "BF16", {4, 256}});
    t.push_back({p + "feed_forward.experts.gate_up_proj", "BF16", {4, 256, 256}});
    t.push_back({p + "feed_forward.experts.down_proj", "BF16", {4, 128, 256}});
    t.push_back({p + "feed_forward.shared_expert.gate_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "feed_forward.shared_expert.up_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "feed_forward.shared_expert.down_proj.weight", "BF16", {256, 128}});
    t.push_back({p + "input_layernorm.weight", "BF16", {256}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {256}});
  }
  t.push_back({"language_model.model.norm.weight", "BF16", {256}});
  t.push_back({"language_model.lm_head.weight", "BF16", {1000, 256}});
  t.push_back({"vision_model.class_embedding", "BF16", {64}});
  t.push_back({"vision_model.positional_embedding_vlm", "BF16", {5, 64}});
  t.push_back({"vision_model.patch_embedding.linear.weight", "BF16", {64, 3 * 14 * 14}});
  for (const char* norm : {"vision_model.layernorm_pre", "vision_model.layernorm_post"}) {
    t.push_back({std::string(norm) + ".weight", "BF16", {64}});
    t.push_back({std::string(norm) + ".bias", "BF16", {64}});
  }
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("vision_model.model.layers.{}.", i);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      t.push_back({p + "self_attn." + proj + ".weight", "BF16", {64, 64}});
      t.push_back({p + "self_attn." + proj + ".bias", "BF16", {64}});
    }
    t.push_back({p + "mlp.fc1.weight", "BF16", {256, 64}});
    t.push_back({p + "mlp.fc1.bias", "BF16", {256}});
    t.push_back({p + "mlp.fc2.weight", "BF16", {64, 256}});
    t.push_back({p + "mlp.fc2.bias", "BF16", {64}});
    for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) {
      t.push_back({p + norm + ".weight", "BF16", {64}});
      t.push_back({p + norm + ".bias", "BF16", {64}});
    }
  }
  t.push_back({"vision_model.vision_adapter.mlp.fc1.weight", "BF16", {64, 256}});
  t.push_back({"vision_model.vision_adapter.mlp.fc2.weight", "BF16", {64, 64}});
  t.push_back({"multi_modal_projector.linear_1.weight", "BF16", {256, 64}});
  return f;
}

std::vector<Fixture> fixtures() {
  return {
      llama_fixture("llama_bf16", "bf16", "BF16", "", ""),
      llama_fixture("llama_gptq_act_order", "gptq", "F16",
                    R"({"quant_method":"gptq","bits":4,"group_size":128,"desc_act":true,"sym":true})", ""),
      llama_fixture("llama_awq", "awq", "F16",
                    R"({"quant_method":"awq","bits":4,"group_size":128,"zero_point":true,"version":"gemm"})", ""),
      llama_fixture("llama_modelopt_nvfp4", "nvfp4", "BF16", "",
                    R"({"producer":{"name":"modelopt","version":"0.29.0"},
                        "quantization":{"quant_algo":"NVFP4","group_size":16,"exclude_modules":["lm_head"]}})"),
      qwen3_moe_fp8_block(),
      deepseek_v3_int4_experts(),
      gpt_oss_mxfp4(),
      qwen3_next_hybrid(),
      nemotron_h_hybrid(),
      llama4_multimodal(),
  };
}

class FixtureCheckpoint : public ::testing::TestWithParam<Fixture> {};

TEST_P(FixtureCheckpoint, HeaderDerivedEqualsConfigDerived) {
  const Fixture& f = GetParam();
  // The nvfp4 fixture keeps lm_head, embedding and norms in bf16 with the ModelOpt layout.
  auto tensors = f.tensors;
  if (f.name == "llama_modelopt_nvfp4") {
    tensors.pop_back();
    tensors.push_back({"lm_head.weight", "BF16", {1000, 256}});
  }
  const auto dir = test::fresh_fixture_dir(f.name);
  std::ofstream(dir / "config.json") << f.config;
  if (!f.hf_quant_config.empty()) std::ofstream(dir / "hf_quant_config.json") << f.hf_quant_config;
  test::write_sharded_checkpoint(dir, tensors, 3);

  const ModelSpec model = load_model(dir.string(), test::configs());
  const auto headers = read_checkpoint_headers(dir.string());
  ASSERT_TRUE(headers.has_value());
  EXPECT_EQ(headers->files.size(), 3u);
  EXPECT_EQ(headers->tensor_count(), static_cast<std::int64_t>(tensors.size()));
  EXPECT_EQ(headers->tensor_bytes(), checkpoint_bytes(model));
  for (const std::int64_t tp : {1, 2}) {
    Deployment d;
    d.tensor_parallel_size = tp;
    const auto units = weight_units(model, make_parallel_layout(model, d, 0));
    const HeaderComparison cmp = compare_with_headers(units, *headers);
    EXPECT_TRUE(cmp.unmatched_tensors.empty()) << tp << ": " << fmt::format("{}", fmt::join(cmp.unmatched_tensors, ", "));
    EXPECT_TRUE(cmp.missing_units.empty()) << tp << ": " << fmt::format("{}", fmt::join(cmp.missing_units, ", "));
    for (const auto& diff : cmp.differences) {
      ADD_FAILURE() << tp << ": " << diff.unit << " config " << diff.config_checkpoint.count() << " headers "
                    << diff.header_checkpoint.count();
    }
    EXPECT_EQ(cmp.header_per_gpu.count(), cmp.config_per_gpu.count()) << "tp " << tp;
    EXPECT_EQ(cmp.config_per_gpu.count(), weights_per_gpu(model, make_parallel_layout(model, d, 0)).total.count());
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, FixtureCheckpoint, ::testing::ValuesIn(fixtures()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(FixtureCheckpointDiff, ADifferentTensorIsReportedAndCounted) {
  // The bf16 Llama with one MLP matrix doubled in the checkpoint: the comparison names the module and
  // the header-derived figure grows by that module's per-GPU share.
  Fixture f = llama_fixture("llama_bf16_changed", "bf16", "BF16", "", "");
  for (auto& t : f.tensors) {
    if (t.name == "model.layers.1.mlp.down_proj.weight") t.shape = {256, 1024};
  }
  f.tensors.push_back({"model.layers.1.mystery.weight", "BF16", {8}});
  const auto dir = test::fresh_fixture_dir(f.name);
  std::ofstream(dir / "config.json") << f.config;
  test::write_safetensors(dir / "model.safetensors", f.tensors);
  const ModelSpec model = load_model(dir.string(), test::configs());
  Deployment d;
  d.tensor_parallel_size = 2;
  const auto units = weight_units(model, make_parallel_layout(model, d, 0));
  const HeaderComparison cmp = compare_with_headers(units, *read_checkpoint_headers(dir.string()));
  ASSERT_EQ(cmp.differences.size(), 1u);
  EXPECT_EQ(cmp.differences[0].unit, "model.layers.1.mlp.down_proj");
  EXPECT_EQ(cmp.differences[0].config_checkpoint.count(), 256 * 512 * 2);
  EXPECT_EQ(cmp.differences[0].header_checkpoint.count(), 256 * 1024 * 2);
  ASSERT_EQ(cmp.unmatched_tensors.size(), 1u);
  // Row-parallel down_proj at TP2: config 256 x 256 x 2 B per GPU; the headers' matrix is twice that;
  // the unmatched 16 bytes are counted whole.
  EXPECT_EQ((cmp.header_per_gpu - cmp.config_per_gpu).count(), 256 * 256 * 2 + 16);
}

}  // namespace
}  // namespace gpubudget
