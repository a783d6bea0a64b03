// Deterministic parts of vLLM's accounting against real startup logs (tests/data/observations):
// given the logged "Available KV cache memory", the "GPU KV cache size" must follow exactly, up to
// the log's rounding of the available memory to 0.01 GiB; weights must match "Model loading took".
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpubudget/fit.h"
#include "test_support.h"

namespace gpubudget {
namespace {

nlohmann::json observation(const std::string& id) {
  std::ifstream in(test::data_dir() + "/observations/vllm-runs.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto row = nlohmann::json::parse(line);
    if (row["id"] == id) return row;
  }
  ADD_FAILURE() << "no observation " << id;
  return {};
}

struct Case {
  const char* id;
  const char* model;  // bundled config of the same architecture
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.id << " " << c.model; }

class KvTokensFromLoggedMemory : public ::testing::TestWithParam<Case> {};

TEST_P(KvTokensFromLoggedMemory, ReproducesGpuKvCacheSize) {
  const Case c = GetParam();
  const auto row = observation(c.id);
  const ModelSpec model = test::bundled(c.model);
  const GpuSpec gpu = load_gpu_preset("h100", test::configs());
  const VllmProfile profile = load_vllm_profile(row["vllm_version"].get<std::string>(), test::configs());
  Deployment d;
  d.tensor_parallel_size = row["tp"].get<std::int64_t>();
  d.max_model_len = row["max_model_len"].get<std::int64_t>();
  const double logged_gib = row["available_kv_cache_gib"].get<double>();
  const std::int64_t logged_tokens = row["kv_cache_tokens"].get<std::int64_t>();
  // The logged GiB is rounded to 0.01: the true value lies within ±0.005 GiB.
  std::int64_t lo = 0, hi = 0;
  for (const double delta : {-0.005, 0.005}) {
    d.kv_cache_memory = Bytes(static_cast<std::int64_t>((logged_gib + delta) * 1073741824.0));
    const auto tokens = fit(model, gpu, d, profile).kv_cache_tokens;
    (delta < 0 ? lo : hi) = tokens;
  }
  EXPECT_LE(lo, logged_tokens) << c.id;
  EXPECT_GE(hi, logged_tokens) << c.id;
}

INSTANTIATE_TEST_SUITE_P(
    H100Logs, KvTokensFromLoggedMemory,
    ::testing::Values(Case{"vo-066", "meta-llama/Llama-3.1-8B-Instruct"},  // 58.11 GiB → 476,016
                      Case{"vo-070", "meta-llama/Llama-3.1-8B-Instruct"},  // TP4: 2 KV heads per rank
                      Case{"vo-086", "Qwen/Qwen2.5-7B-Instruct"},          // 58.53 GiB → 1,096,000
                      Case{"vo-088", "Qwen/Qwen2.5-7B-Instruct"},          // TP4: 1 KV head per rank
                      Case{"vo-049", "deepseek-ai/DeepSeek-V2-Lite-Chat"},  // MLA, FLASH_ATTN_MLA block 16
                      Case{"vo-095", "Qwen/Qwen3-14B"},                    // vLLM 0.15
                      Case{"vo-048", "codellama/CodeLlama-7b-hf"}),        // MHA, 32 KV heads
    [](const auto& param_info) {
      std::string name = param_info.param.id;
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      return name;
    });

struct WeightsCase {
  const char* id;
  const char* model;
};

void PrintTo(const WeightsCase& c, std::ostream* os) { *os << c.id << " " << c.model; }

class WeightsFromLogs : public ::testing::TestWithParam<WeightsCase> {};

TEST_P(WeightsFromLogs, WithinOnePercentOfModelLoading) {
  const auto c = GetParam();
  const auto row = observation(c.id);
  const ModelSpec model = test::bundled(c.model);
  Deployment d;
  d.tensor_parallel_size = row["tp"].get<std::int64_t>();
  const auto w = weights_per_gpu(model, make_parallel_layout(model, d, 0));
  const double logged = row["model_loading_gib"].get<double>();
  EXPECT_NEAR(to_gib(w.total), logged, logged * 0.01) << c.id;
}

INSTANTIATE_TEST_SUITE_P(
    H100Logs, WeightsFromLogs,
    ::testing::Values(WeightsCase{"vo-066", "meta-llama/Llama-3.1-8B-Instruct"},
                      WeightsCase{"vo-069", "meta-llama/Llama-3.1-8B-Instruct"},
                      WeightsCase{"vo-086", "Qwen/Qwen2.5-7B-Instruct"},
                      WeightsCase{"vo-087", "Qwen/Qwen2.5-7B-Instruct"},
                      WeightsCase{"vo-049", "deepseek-ai/DeepSeek-V2-Lite-Chat"},
                      WeightsCase{"vo-095", "Qwen/Qwen3-14B"},
                      WeightsCase{"vo-048", "codellama/CodeLlama-7b-hf"}),
    [](const auto& param_info) {
      std::string name = param_info.param.id;
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      return name;
    });

// Rows from vo-201 on carry the quoted lines they were copied from (`extra.evidence`) and a public
// address; every figure of such a row appears in its quote, as printed there (e.g. 45.32, 2,640,144),
// so that a figure derived rather than copied fails here.
std::set<std::string> printed_forms(const nlohmann::json& value) {
  std::set<std::string> forms = {value.dump()};
  if (value.is_number_integer()) {
    std::string digits = std::to_string(value.get<std::int64_t>()), grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') grouped += ',';
      grouped += digits[i];
    }
    forms.insert(grouped);
  } else if (value.is_number_float()) {
    char buffer[64];
    for (const char* format : {"%.2f", "%.4f", "%g"}) {
      std::snprintf(buffer, sizeof buffer, format, value.get<double>());
      forms.insert(buffer);
    }
  }
  return forms;
}

TEST(ObservationRows, EveryNewRowQuotesItsSourceAndEveryFigureIsInTheQuote) {
  std::ifstream in(test::data_dir() + "/observations/vllm-runs.jsonl");
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    ASSERT_TRUE(row.contains("source_url") && row["source_url"].is_string()) << line.substr(0, 80);
    const std::string id = row["id"].get<std::string>();
    if (id < "vo-201") continue;
    ++checked;
    EXPECT_EQ(row["source_url"].get<std::string>().rfind("https://", 0), 0u) << id;
    ASSERT_TRUE(row["extra"].contains("evidence") && row["extra"]["evidence"].is_string()) << id;
    const std::string evidence = row["extra"]["evidence"].get<std::string>();
    for (const char* field : {"model_loading_gib", "activation_peak_gib", "non_torch_gib", "cudagraph_gib",
                              "available_kv_cache_gib", "kv_cache_tokens", "max_concurrency", "error_needed_gib",
                              "error_available_gib", "estimated_max_model_len", "max_model_len",
                              "max_num_batched_tokens", "max_num_seqs"}) {
      if (row[field].is_null()) continue;
      bool quoted = false;
      for (const auto& form : printed_forms(row[field])) quoted = quoted || evidence.find(form) != std::string::npos;
      EXPECT_TRUE(quoted) << id << ": " << field << " = " << row[field].dump() << " is not in extra.evidence";
    }
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace gpubudget
