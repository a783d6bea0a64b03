// Bad input never crashes and never lies: each case builds its files in a fresh directory, runs the
// command line in process and asserts the exit code (2 usage, 3 bad or unsupported input, 1 a normal
// "does not fit") and a substring that names the file, field, flag or value (docs/cli.md §Errors).
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "cli.h"
#include "test_support.h"
#include "cli_errors.h"

namespace gpubudget::cli {
namespace {

namespace fs = std::filesystem;

// A small valid Llama config; cases replace one field.
const char* const kLlama = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
 "intermediate_size": 14336, "max_position_embeddings": 8192, "num_attention_heads": 32, "num_hidden_layers": 32,
 "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "torch_dtype": "bfloat16", "vocab_size": 128256,
 "tie_word_embeddings": false})";

std::string llama_with(const std::string& key, const std::string& json_value) {
  std::string text = kLlama;
  const std::string quoted = "\"" + key + "\":";
  const auto at = text.find(quoted);
  if (at == std::string::npos) {
    text.insert(1, quoted + " " + json_value + ", ");
  } else {
    const auto start = at + quoted.size();
    auto end = text.find_first_of(",}", start);
    if (text[start + 1] == '[') end = text.find(']', start) + 1;
    text.replace(start, end - start, " " + json_value);
  }
  return text;
}

std::string llama_without(const std::string& key) {
  std::string text = kLlama;
  const auto at = text.find("\"" + key + "\":");
  const auto end = text.find(',', at);
  text.erase(at, end - at + 1);
  return text;
}

struct Case {
  std::string name;
  std::map<std::string, std::string> files;     // relative path -> content
  std::vector<std::pair<std::string, std::string>> symlinks;  // link -> target (relative or absolute)
  std::vector<std::string> args;               // "{dir}" is replaced by the case directory
  int exit_code;
  std::string message;                         // must appear on stdout or stderr
  std::vector<std::string> fifos = {};         // named pipes to create (relative paths)
};

std::vector<std::string> fit_dir(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"fit", "{dir}", "--gpu", "h100"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
std::vector<std::string> fit_llama(std::vector<std::string> extra) {
  std::vector<std::string> a = {"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
Case config_case(std::string name, std::string config, std::string message) {
  return {std::move(name), {{"config.json", std::move(config)}}, {}, fit_dir(), 3, std::move(message)};
}

std::string safetensors_file(std::uint64_t header_length, const std::string& header) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((header_length >> (8 * i)) & 0xff);
  return out + header;
}

std::vector<Case> cases() {
  std::vector<Case> c;
  // Malformed or truncated JSON.
  c.push_back(config_case("malformed_json", R"({"architectures": [)", "malformed JSON"));
  c.push_back(config_case("truncated_json", std::string(kLlama).substr(0, 120), "malformed JSON"));
  c.push_back(config_case("empty_config", "", "malformed JSON"));
  c.push_back(config_case("config_not_an_object", "[1, 2, 3]", "config.json"));
  c.push_back(config_case("binary_config", std::string("\x00\xff\xfe{", 4), "malformed JSON"));
  // Missing and wrong-typed fields.
  c.push_back(config_case("missing_hidden_size", llama_without("hidden_size"), "/hidden_size"));
  c.push_back(config_case("hidden_size_string", llama_with("hidden_size", "\"4096\""), "/hidden_size"));
  c.push_back(config_case("hidden_size_float", llama_with("hidden_size", "4096.5"), "/hidden_size"));
  c.push_back(config_case("hidden_size_negative", llama_with("hidden_size", "-4096"), "/hidden_size"));
  c.push_back(config_case("hidden_size_zero", llama_with("hidden_size", "0"), "/hidden_size"));
  c.push_back(config_case("hidden_size_null", llama_with("hidden_size", "null"), "/hidden_size"));
  c.push_back(config_case("layers_string", llama_with("num_hidden_layers", "\"32\""), "/num_hidden_layers"));
  c.push_back(config_case("heads_negative", llama_with("num_attention_heads", "-32"), "/num_attention_heads"));
  c.push_back(config_case("architectures_not_a_list", llama_with("architectures", "\"LlamaForCausalLM\""),
                          "/architectures"));
  c.push_back(config_case("architectures_empty", llama_with("architectures", "[]"), "/architectures"));
  // Sizes whose products would overflow 64 bits.
  c.push_back(config_case("vocab_1e15", llama_with("vocab_size", "1000000000000000"), "/vocab_size"));
  c.push_back(config_case("layers_1e7", llama_with("num_hidden_layers", "10000000"), "/num_hidden_layers"));
  c.push_back(config_case("hidden_1e12", llama_with("hidden_size", "1000000000000"), "/hidden_size"));
  c.push_back(config_case("intermediate_1e15", llama_with("intermediate_size", "1000000000000000"),
                          "/intermediate_size"));
  c.push_back(config_case("max_position_1e30", llama_with("max_position_embeddings", "1e30"),
                          "/max_position_embeddings"));
  // Inconsistent configs.
  c.push_back(config_case("heads_not_dividing_hidden", llama_with("num_attention_heads", "31"), "num_attention_heads"));
  c.push_back(config_case("kv_heads_not_dividing_heads", llama_with("num_key_value_heads", "5"), "num_key_value_heads"));
  c.push_back(config_case("kv_heads_above_heads", llama_with("num_key_value_heads", "64"), "num_key_value_heads"));
  {
    std::string moe = llama_with("architectures", "[\"Qwen3MoeForCausalLM\"]");
    moe = llama_with("model_type", "\"qwen3_moe\"");
    moe.replace(moe.find("LlamaForCausalLM"), 16, "Qwen3MoeForCausalLM");
    c.push_back(config_case("moe_without_expert_count", moe, "num_experts"));
  }
  // Unknown architecture, quantization, dtypes.
  c.push_back(config_case("unknown_architecture", llama_with("architectures", "[\"FancyNewForCausalLM\"]"),
                          "FancyNewForCausalLM"));
  c.push_back(config_case("unknown_quant_method",
                          llama_with("quantization_config", R"({"quant_method": "quantum_magic", "bits": 3})"),
                          "quantum_magic"));
  c.push_back(config_case("unknown_torch_dtype", llama_with("torch_dtype", "\"float99\""), "float99"));
  c.push_back({"unknown_kv_cache_dtype", {}, {}, fit_llama({"--kv-cache-dtype", "fp7"}), 3, "fp7"});
  c.push_back({"unknown_dtype_flag", {}, {}, fit_llama({"--dtype", "int3"}), 3, "int3"});
  // Parallelism vLLM would reject.
  c.push_back({"tp_not_dividing_heads", {}, {}, fit_llama({"-tp", "3"}), 3, "--tensor-parallel-size 3"});
  c.push_back({"tp_zero", {}, {}, fit_llama({"-tp", "0"}), 2, "--tensor-parallel-size"});
  c.push_back({"pp_above_layers", {}, {}, fit_llama({"-pp", "64"}), 3, "--pipeline-parallel-size"});
  c.push_back({"dcp_not_dividing_tp", {}, {}, fit_llama({"-tp", "2", "-dcp", "4"}), 3, "decode"});
  c.push_back({"redundant_experts_without_ep", {}, {}, {"fit", "Qwen/Qwen3-235B-A22B", "--gpu", "h100", "-tp", "8",
                                                         "--num-redundant-experts", "16"}, 3, "expert"});
  c.push_back({"pp_partition_wrong_sum", {}, {}, fit_llama({"-pp", "2", "--pp-layer-partition", "10,10"}), 3,
               "--pp-layer-partition"});
  // Other flag values.
  c.push_back({"utilization_above_one", {}, {}, fit_llama({"--gpu-memory-utilization", "1.5"}), 3,
               "--gpu-memory-utilization"});
  c.push_back({"utilization_zero", {}, {}, fit_llama({"--gpu-memory-utilization", "0"}), 3, "--gpu-memory-utilization"});
  c.push_back({"max_model_len_above_derived", {}, {}, fit_llama({"--max-model-len", "10000000"}), 3,
               "greater than the derived"});
  c.push_back({"max_model_len_garbage", {}, {}, fit_llama({"--max-model-len", "12q"}), 2, "12q"});
  c.push_back({"unknown_gpu_preset", {}, {}, {"fit", "meta-llama/Llama-3.1-8B", "--gpu", "tpu-v9"}, 3, "tpu-v9"});
  c.push_back({"gpu_memory_garbage", {}, {}, {"fit", "meta-llama/Llama-3.1-8B", "--gpu-memory", "12XB"}, 2, "12XB"});
  c.push_back({"unknown_vllm_version", {}, {}, fit_llama({"--vllm-version", "0.1"}), 3, "older than 0.10"});
  c.push_back({"unknown_flag", {}, {}, fit_llama({"--no-such-flag"}), 2, "--no-such-flag"});
  c.push_back({"missing_model_argument", {}, {}, {"fit", "--gpu", "h100"}, 2, "MODEL"});
  c.push_back({"unknown_vllm_env", {}, {}, fit_llama({"--vllm-env", "VLLM_FOO=1"}), 2, "VLLM_FOO"});
  // A GPU too small is an answer, not an error.
  c.push_back({"gpu_too_small_for_weights", {}, {}, {"fit", "meta-llama/Llama-3.1-70B", "--gpu", "rtx-3090"}, 1,
               "DOES NOT FIT"});
  // Files that are not what they should be.
  c.push_back({"model_path_missing", {}, {}, {"fit", "{dir}/nowhere", "--gpu", "h100"}, 3, "nowhere"});
  c.push_back({"directory_without_config", {{"README.md", "no config here"}}, {}, fit_dir(), 3, "config.json"});
  c.push_back({"config_json_is_a_directory", {{"config.json/x", "{}"}}, {}, fit_dir(), 3, "config.json"});
  c.push_back({"config_symlink_loop", {}, {{"config.json", "config.json"}}, fit_dir(), 3, "config.json"});
  c.push_back({"config_dangling_symlink", {}, {{"config.json", "missing.json"}}, fit_dir(), 3, "config.json"});
  c.push_back({"malformed_hf_quant_config", {{"config.json", kLlama}, {"hf_quant_config.json", "{oops"}}, {},
               fit_dir(), 3, "hf_quant_config.json"});
  // Hostile safetensors headers beside a valid config.
  c.push_back({"safetensors_seven_bytes", {{"config.json", kLlama}, {"model.safetensors", "1234567"}}, {},
               {"weights", "{dir}"}, 3, "model.safetensors"});
  c.push_back({"safetensors_header_length_huge",
               {{"config.json", kLlama}, {"model.safetensors", safetensors_file(2000000000ULL, "{}")}}, {},
               {"weights", "{dir}"}, 3, "model.safetensors"});
  c.push_back({"safetensors_header_not_json",
               {{"config.json", kLlama}, {"model.safetensors", safetensors_file(5, "nope!")}}, {},
               {"weights", "{dir}"}, 3, "model.safetensors"});
  c.push_back({"safetensors_index_names_missing_file",
               {{"config.json", kLlama},
                {"model.safetensors.index.json", R"({"weight_map": {"lm_head.weight": "model-00001.safetensors"}})"}},
               {}, {"weights", "{dir}"}, 3, "model-00001.safetensors"});
  // Logs, profiles, observations.
  c.push_back({"diagnose_missing_log", {}, {}, {"diagnose", "{dir}/vllm.log"}, 3, "vllm.log"});
  c.push_back({"diagnose_log_is_a_directory", {{"vllm.log/x", ""}}, {}, {"diagnose", "{dir}/vllm.log"}, 3, "vllm.log"});
  c.push_back({"diagnose_garbage_log", {{"vllm.log", std::string("\x00\x01\x02garbage\xff", 11)}}, {},
               {"diagnose", "{dir}/vllm.log"}, 0, "nothing to diagnose"});
  c.push_back({"diagnose_unknown_model", {{"vllm.log", "INFO hello\n"}}, {}, {"diagnose", "{dir}/vllm.log", "--model",
                                                                                 "{dir}/nomodel"}, 3, "nomodel"});
  c.push_back({"profile_file_missing", {}, {}, fit_llama({"--profile", "{dir}/p.json"}), 3, "p.json"});
  c.push_back({"profile_file_malformed", {{"p.json", "{\"version\": "}}, {}, fit_llama({"--profile", "{dir}/p.json"}), 3,
               "p.json"});
  c.push_back({"observations_malformed_line", {{"obs.jsonl", "{\"id\": \"x\"\n"}, {"p.json", "{}"}}, {},
               {"calibrate", "{dir}/obs.jsonl", "--profile", "{dir}/p.json"}, 3, "obs.jsonl"});
  c.push_back({"observations_missing", {}, {}, {"calibrate", "{dir}/none.jsonl", "--profile", "{dir}/p.json"}, 3,
               "none.jsonl"});
  // ---- Hostile input, round two: one case per class (docs/testing.md "Limits per input") ----
  // Integer overflow: products of user sizes are bounded at the edge, never wrapped.
  c.push_back({"dp_wraps_tp_times_dp", {}, {}, fit_llama({"-tp", "8", "-dp", "4611686018427387904"}), 2,
               "--data-parallel-size: expected an integer from 1 to 65536"});
  c.push_back({"block_size_huge", {}, {}, fit_llama({"--block-size", "1099511627776"}), 2,
               "--block-size: expected an integer from 1 to 1048576"});
  c.push_back({"max_num_seqs_huge", {}, {}, fit_llama({"--max-num-seqs", "99999999999"}), 2,
               "--max-num-seqs: expected an integer from 1 to 1048576"});
  c.push_back({"redundant_experts_huge", {}, {},
               {"fit", "Qwen/Qwen3-235B-A22B", "--gpu", "h100", "-tp", "8", "--enable-expert-parallel",
                "--num-redundant-experts", "9223372036854775807"},
               2, "--num-redundant-experts: expected an integer from 0 to 65536"});
  c.push_back({"kv_cache_memory_huge", {}, {}, fit_llama({"--kv-cache-memory-bytes", "8000000000000000"}), 3,
               "--kv-cache-memory-bytes 8000000000000000: expected a value from 0 to 1125899906842624"});
  c.push_back({"max_num_batched_tokens_huge", {}, {}, fit_llama({"--max-num-batched-tokens", "9000000000000000"}), 3,
               "--max-num-batched-tokens 9000000000000000: expected a value from 1 to 17179869184"});
  c.push_back(config_case("rope_factor_huge",
                          llama_with("rope_scaling", R"({"rope_type": "linear", "factor": 900000})"),
                          "/rope_scaling/factor: expected a number in [1e-06, 1024], got 900000"));
  c.push_back({"log_settings_overflow", {{"vllm.log", "INFO non-default args: {'tensor_parallel_size': 8, "
                                                      "'data_parallel_size': 100000000000000000}\n"
                                                      "INFO Available KV cache memory: 10.00 GiB\n"}},
               {}, {"diagnose", "{dir}/vllm.log", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100"}, 0,
               "--data-parallel-size 100000000000000000: expected a value from 1 to 65536"});
  // Unbounded reads and special files: refused before any read, never a hang.
  c.push_back({"config_is_a_fifo", {}, {}, fit_dir(), 3, "config.json: not a regular file", {"config.json"}});
  c.push_back({"config_is_dev_zero", {}, {{"config.json", "/dev/zero"}}, fit_dir(), 3,
               "config.json: not a regular file"});
  c.push_back({"hf_quant_config_is_a_fifo", {{"config.json", kLlama}}, {}, fit_dir(), 3,
               "hf_quant_config.json: not a regular file", {"hf_quant_config.json"}});
  c.push_back({"shard_is_a_fifo", {{"config.json", kLlama}}, {}, {"weights", "{dir}"}, 3,
               "model.safetensors: not a regular file", {"model.safetensors"}});
  c.push_back({"index_is_a_fifo", {{"config.json", kLlama}}, {},
               {"weights", "{dir}"}, 3, "model.safetensors.index.json: not a regular file", {"model.safetensors.index.json"}});
  c.push_back({"log_is_a_fifo", {}, {}, {"diagnose", "{dir}/vllm.log"}, 3, "vllm.log: not a regular file", {"vllm.log"}});
  c.push_back({"log_is_dev_zero", {}, {}, {"diagnose", "/dev/zero"}, 3, "/dev/zero: not a regular file"});
  c.push_back({"observations_are_a_fifo", {}, {}, {"calibrate", "{dir}/obs.jsonl"}, 3,
               "obs.jsonl: not a regular file", {"obs.jsonl"}});
  c.push_back({"profile_is_dev_zero", {}, {}, fit_llama({"--profile", "/dev/zero"}), 3, "/dev/zero"});
  c.push_back({"config_too_large", {{"config.json", "@spaces:68157440"}}, {}, fit_dir(), 3,
               "above the 67108864-byte limit"});
  // Recursion: deep JSON and hostile regular expressions.
  c.push_back({"profile_nested_200000", {{"p.json", std::string(200000, '[') + std::string(200000, ']')}}, {},
               fit_llama({"--profile", "{dir}/p.json"}), 3, "p.json: JSON nested 200000 levels deep (limit 128)"});
  c.push_back({"observation_row_nested_200000",
               {{"obs.jsonl", "{\"id\": \"x\", \"model\": \"m\", \"extra\": " + std::string(200000, '[') +
                                 std::string(200000, ']') + "}\n"}},
               {}, {"calibrate", "{dir}/obs.jsonl"}, 3, "obs.jsonl:1: not an observation row"});
  {
    std::string groups;
    for (int i = 0; i < 16000; ++i) groups += "(";
    groups += "a";
    for (int i = 0; i < 16000; ++i) groups += ")";
    c.push_back(config_case("regex_16000_groups",
                            llama_with("quantization_config", R"({"quant_method": "compressed-tensors", "ignore": ["re:)" +
                                                                  groups + R"("], "config_groups": {"group_0": {)"
                                                                  R"("targets": ["Linear"], "weights": {"num_bits": 8,)"
                                                                  R"( "type": "int", "symmetric": true, "strategy": "channel"}}},)"
                                                                  R"( "format": "pack-quantized"})"),
                            "is 32001 bytes long (limit 4096)"));
  }
  // RE2 matches in linear time: a pattern that backtracks exponentially in std::regex answers at once.
  c.push_back({"regex_catastrophic",
               {{"config.json", llama_with("quantization_config",
                                           R"({"quant_method": "compressed-tensors", "ignore": ["re:(.*)*X(.*)*(.*)*Y"],)"
                                           R"( "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8,)"
                                           R"( "type": "int", "symmetric": true, "strategy": "channel"}}},)"
                                           R"( "format": "pack-quantized"})")}},
               {}, fit_dir(), 0, "FITS"});
  // Number parsing: the flag and the text are named, never an escaped exception.
  c.push_back({"gpu_memory_dot", {}, {}, {"fit", "meta-llama/Llama-3.1-8B", "--gpu-memory", "."}, 2,
               "--gpu-memory: invalid value \".\""});
  c.push_back({"max_model_len_dot", {}, {}, fit_llama({"--max-model-len", "."}), 2, "--max-model-len: invalid value"});
  c.push_back({"max_model_len_400_digits", {}, {}, fit_llama({"--max-model-len", std::string(400, '9')}), 2,
               "--max-model-len: invalid value"});
  c.push_back({"partition_dot", {}, {}, fit_llama({"-pp", "2", "--pp-layer-partition", "16,."}), 2,
               "--pp-layer-partition: invalid value \".\""});
  c.push_back({"env_assignment_dot", {}, {}, fit_llama({"-pp", "2", "--vllm-env", "VLLM_PP_LAYER_PARTITION=.,16"}), 2,
               "VLLM_PP_LAYER_PARTITION: invalid value \".\""});
  c.push_back({"observation_version_malformed",
               {{"obs.jsonl", R"({"id": "x", "model": "meta-llama/Llama-3.1-8B", "vllm_version": "0.99999999999999.1"})"
                              "\n"}},
               {}, {"calibrate", "{dir}/obs.jsonl"}, 0, ""});
  // Search and output bounds.
  c.push_back({"plan_unbounded_search", {}, {},
               {"plan", "meta-llama/Llama-3.1-8B", "--concurrency", "100000000", "--max-pipeline-parallel-size",
                "10000000"},
               2, "--concurrency: expected an integer from 1 to 1048576"});
  {
    std::string many;
    for (int i = 1; i <= 3000; ++i) many += (i > 1 ? "," : "") + std::to_string(i % 8 + 1);
    c.push_back({"sweep_9_million_scenarios", {}, {},
                 {"sweep", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "-tp", many, "--max-num-seqs", many}, 3,
                 "sweep: more than 100000 combinations"});
  }
  // Calibration that would write nonsense.
  c.push_back({"observation_figure_huge",
               {{"obs.jsonl", R"({"id": "x", "model": "meta-llama/Llama-3.1-8B", "model_loading_gib": 1e300})"
                              "\n"}},
               {}, {"calibrate", "{dir}/obs.jsonl"}, 3, "obs.jsonl:1:/model_loading_gib: expected a number in [0, 16384]"});
  c.push_back({"observation_gpu_memory_negative",
               {{"obs.jsonl", R"({"id": "x", "model": "meta-llama/Llama-3.1-8B", "gpu_total_memory_gib": -80})"
                              "\n"}},
               {}, {"calibrate", "{dir}/obs.jsonl"}, 3, "obs.jsonl:1:/gpu_total_memory_gib"});
  // Logs with absurd figures are ignored, with a note, never turned into bytes or remedies.
  c.push_back({"log_figures_1e30_gib",
               {{"vllm.log", "INFO Available KV cache memory: 1e30 GiB\nINFO GPU KV cache size: -5 tokens\n"}}, {},
               {"diagnose", "{dir}/vllm.log", "--json"}, 0, "2 figure(s) in the log are beyond what any GPU"});
  // Conflicting model arguments: vLLM serves the positional model.
  c.push_back({"pasted_line_two_models", {}, {},
               {"fit", "--gpu", "h100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B", "--model", "Qwen/Qwen3-8B"}, 0,
               "vLLM serves the positional meta-llama/Llama-3.1-8B"});
  // Output and contract.
  c.push_back({"plan_without_max_model_len", {}, {}, {"plan", "meta-llama/Llama-3.1-8B", "--gpu", "h100"}, 0,
               "131072 tokens"});
  c.push_back({"weights_folder_not_utf8", {{"m\xff\xfe/config.json", kLlama}}, {}, {"weights", "{dir}/m\xff\xfe", "--json"},
               0, "\"source\": \"config\""});
  return c;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExitCodeAndMessage) {
  const Case& k = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("gpubudget-bad-input-" + k.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [path, content] : k.files) {
    fs::create_directories((dir / path).parent_path());
    // "@spaces:N": N spaces, written here rather than built for every case at start-up.
    const std::string generated = content.rfind("@spaces:", 0) == 0 ? std::string(std::stoul(content.substr(8)), ' ')
                                                                     : std::string();
    std::ofstream(dir / path, std::ios::binary) << (generated.empty() ? content : generated);
  }
  for (const auto& [link, target] : k.symlinks) fs::create_symlink(target, dir / link);
  for (const auto& fifo : k.fifos) ASSERT_EQ(::mkfifo((dir / fifo).c_str(), 0600), 0) << fifo;
  std::vector<std::string> args = {"--config-dir", GPUBUDGET_TEST_CONFIG_DIR};
  for (std::string a : k.args) {
    if (const auto at = a.find("{dir}"); at != std::string::npos) a.replace(at, 5, dir.string());
    args.push_back(a);
  }
  std::ostringstream out, err;
  const auto start = std::chrono::steady_clock::now();
  const int code = run_cli(args, out, err);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::remove_all(dir);
  EXPECT_LT(seconds, 2.0) << "hostile input must be answered within 2 s";
  EXPECT_EQ(code, k.exit_code) << "stdout: " << out.str() << "\nstderr: " << err.str();
  EXPECT_NE(code, 4) << err.str();
  // Reports are wrapped to 80 columns: the message is looked for with each line break and its
  // continuation indent read as one space.
  std::string all;
  for (const char ch : out.str() + err.str()) {
    if (ch == '\n' || (ch == ' ' && !all.empty() && all.back() == ' ')) {
      if (all.empty() || all.back() != ' ') all.push_back(' ');
    } else {
      all.push_back(ch);
    }
  }
  EXPECT_NE(all.find(k.message), std::string::npos) << "expected \"" << k.message << "\" in:\n" << out.str() << err.str();
}

INSTANTIATE_TEST_SUITE_P(Matrix, BadInput, ::testing::ValuesIn(cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(BadInputMatrix, HasAtLeastFortyCases) { EXPECT_GE(cases().size(), 40u); }

}  // namespace
}  // namespace gpubudget::cli
