// Reading vLLM logs: the corpus in tests/data/logs (each log beside the extraction expected from
// it, written from the observation row it reproduces, see tests/data/logs/README.md), hostile input,
// and diagnoses checked against figures vLLM itself printed.
#include "gpubudget/vllm_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpubudget/diagnosis.h"
#include "gpubudget/fit.h"
#include "test_support.h"

namespace gpubudget {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

fs::path logs_dir() { return fs::path(test::data_dir()) / "logs"; }

const VllmLogWordings& wordings() {
  static const VllmLogWordings loaded = load_vllm_log_wordings(test::configs());
  return loaded;
}

VllmLogFacts read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return read_vllm_log(in, path.string(), wordings());
}

VllmLogFacts read_text(const std::string& text) {
  std::istringstream in(text);
  return read_vllm_log(in, "text", wordings());
}

// Every fact by the name the expected files use; absent facts are null.
Json facts_json(const VllmLogFacts& f) {
  Json j;
  auto put = [&j](const char* key, const auto& v) { j[key] = v ? Json(*v) : Json(nullptr); };
  j["outcome"] = outcome_name(f.outcome);
  j["v0_engine"] = f.v0_engine;
  j["workers"] = f.workers;
  j["kv_check_in_traceback"] = f.kv_check_in_traceback;
  put("vllm_version", f.vllm_version);
  put("model", f.model);
  put("dtype", f.dtype);
  put("quantization", f.quantization);
  put("kv_cache_dtype", f.kv_cache_dtype);
  put("attention_backend", f.attention_backend);
  put("tensor_parallel_size", f.tensor_parallel_size);
  put("pipeline_parallel_size", f.pipeline_parallel_size);
  put("data_parallel_size", f.data_parallel_size);
  put("decode_context_parallel_size", f.decode_context_parallel_size);
  put("max_model_len", f.max_model_len);
  put("block_size", f.block_size);
  put("max_num_seqs", f.max_num_seqs);
  put("max_num_batched_tokens", f.max_num_batched_tokens);
  put("gpu_memory_utilization", f.gpu_memory_utilization);
  put("enforce_eager", f.enforce_eager);
  put("enable_expert_parallel", f.enable_expert_parallel);
  put("model_loading_gib", f.model_loading_gib);
  put("activation_peak_gib", f.activation_peak_gib);
  put("non_torch_gib", f.non_torch_gib);
  put("total_non_kv_gib", f.total_non_kv_gib);
  put("available_kv_cache_gib", f.available_kv_cache_gib);
  put("cudagraph_gib", f.cudagraph_gib);
  put("requested_gib", f.requested_gib);
  put("total_gpu_gib", f.total_gpu_gib);
  put("kv_cache_tokens", f.kv_cache_tokens);
  put("max_concurrency_tokens", f.max_concurrency_tokens);
  put("max_concurrency", f.max_concurrency);
  put("gpu_blocks", f.gpu_blocks);
  put("cpu_blocks", f.cpu_blocks);
  put("auto_fit_from", f.auto_fit_from);
  put("auto_fit_to", f.auto_fit_to);
  put("error_max_seq_len", f.error_max_seq_len);
  put("error_needed_gib", f.error_needed_gib);
  put("error_available_gib", f.error_available_gib);
  put("estimated_max_model_len", f.estimated_max_model_len);
  put("error_kv_token_capacity", f.error_kv_token_capacity);
  put("startup_free_gib", f.startup_free_gib);
  put("startup_total_gib", f.startup_total_gib);
  put("startup_requested_gib", f.startup_requested_gib);
  j["oom_phase"] = f.out_of_memory ? Json(f.out_of_memory->phase) : Json(nullptr);
  return j;
}

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(logs_dir())) {
    if (e.path().extension() == ".log") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class LogCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(LogCorpus, ExtractsWhatTheExpectedFileSays) {
  const fs::path log = logs_dir() / (GetParam() + ".log");
  std::ifstream expected_file(logs_dir() / (GetParam() + ".expected.json"));
  ASSERT_TRUE(expected_file) << "no expected extraction for " << log;
  const Json expected = Json::parse(expected_file);
  const Json got = facts_json(read_file(log));
  for (const auto& [key, want] : expected.items()) {
    ASSERT_TRUE(got.contains(key)) << "unknown key " << key << " in the expected file";
    const Json& have = got[key];
    if (want.is_number() && have.is_number()) {
      EXPECT_NEAR(have.get<double>(), want.get<double>(), 1e-9) << key;
    } else {
      EXPECT_EQ(have, want) << key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Logs, LogCorpus, ::testing::ValuesIn(corpus()),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(VllmLog, CorpusCoversVersionsAndOutcomes) {
  std::set<std::string> outcomes;
  for (const auto& name : corpus()) outcomes.insert(outcome_name(read_file(logs_dir() / (name + ".log")).outcome));
  EXPECT_GE(corpus().size(), 12u);
  for (const char* o : {"kv_allocated", "failed_kv_check", "failed_negative_kv", "failed_free_memory", "failed_oom",
                        "unknown"}) {
    EXPECT_TRUE(outcomes.count(o)) << o;
  }
}

TEST(VllmLog, PrefixesAreStripped) {
  std::string worker;
  EXPECT_EQ(strip_log_prefix("(EngineCore_DP0 pid=208987) ERROR 02-20 22:01:10 [core.py:1036] EngineCore failed",
                             &worker),
            "EngineCore failed");
  EXPECT_EQ(worker, "EngineCore_DP0");
  EXPECT_EQ(strip_log_prefix("\x1b[1;36m(VllmWorker TP3 pid=12)\x1b[0;0m INFO 01-02 03:04:05 [a.py:1] x", &worker), "x");
  EXPECT_EQ(worker, "VllmWorker TP3");
  EXPECT_EQ(strip_log_prefix("(RayWorkerWrapper pid=7, ip=10.0.0.2) INFO 01-02 03:04:05 worker.py:9] y", &worker), "y");
  EXPECT_EQ(worker, "RayWorkerWrapper");
  EXPECT_EQ(strip_log_prefix("vllm-1  | 2025-01-02T03:04:05.123Z INFO 01-02 03:04:05.678 [a.py:1] z"), "z");
  EXPECT_EQ(strip_log_prefix("no prefix at all"), "no prefix at all");
}

TEST(VllmLog, EmptyInputSaysThereIsNothing) {
  const VllmLogFacts f = read_text("");
  EXPECT_EQ(f.lines, 0);
  EXPECT_EQ(f.outcome, StartupOutcome::kUnknown);
  const Diagnosis d = diagnose_log(f, {});
  EXPECT_EQ(d.root_cause, "unknown");
  EXPECT_NE(d.sentence.find("no vLLM memory lines"), std::string::npos);
}

TEST(VllmLog, BinaryGarbageIsReadWithoutHarm) {
  std::mt19937 rng(7);
  std::string garbage(3 << 20, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() & 0xff);
  // A line far longer than the limit, then a real memory line.
  garbage += std::string(200000, 'x') + "\nAvailable KV cache memory: 1.5 GiB\n";
  const VllmLogFacts f = read_text(garbage);
  EXPECT_GT(f.lines, 1);
  EXPECT_GE(f.truncated_lines, 1);
  ASSERT_TRUE(f.available_kv_cache_gib);
  EXPECT_DOUBLE_EQ(*f.available_kv_cache_gib, 1.5);
  EXPECT_NO_THROW(diagnose_log(f, {}));
}

TEST(VllmLog, TwoHundredMegabytesAreStreamed) {
  // Interleaved workers, colours and the failure at the very end.
  const fs::path path = fs::temp_directory_path() / "gpubudget-200mb.log";
  {
    std::ofstream out(path, std::ios::binary);
    const std::string block =
        "(Worker_TP0 pid=1) INFO 01-01 00:00:00 [gpu_model_runner.py:1] Loading safetensors checkpoint shards: 50% "
        "Completed | 60/119\n"
        "\x1b[1;36m(Worker_TP1 pid=2)\x1b[0;0m DEBUG 01-01 00:00:00 [shm_broadcast.py:1] No available shared memory "
        "broadcast block found in 60 seconds\n"
        "(APIServer pid=3) INFO 01-01 00:00:00 [loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s\n";
    std::int64_t written = 0;
    while (written < 200LL * 1000 * 1000) {
      out << block;
      written += static_cast<std::int64_t>(block.size());
    }
    out << "(EngineCore_DP0 pid=4) ERROR 01-01 00:00:00 [core.py:1] ValueError: To serve at least one request with "
           "the model's max seq len (262144), (17.16 GiB KV cache is needed, which is larger than the available KV "
           "cache memory (11.7 GiB). Based on the available memory, the estimated maximum model length is 178779. "
           "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n";
  }
  const VllmLogFacts f = read_file(path);
  fs::remove(path);
  EXPECT_GT(f.lines, 1000000);
  EXPECT_EQ(f.workers, 2);
  EXPECT_EQ(f.outcome, StartupOutcome::kFailedKvCheck);
  EXPECT_EQ(f.estimated_max_model_len, 178779);
}

// A corpus log diagnosed with a bundled model on a GPU preset under a vLLM profile.
Diagnosis diagnose_with(const std::string& log, const ModelSpec& model, const std::string& gpu,
                        const std::string& version) {
  DiagnosisContext c;
  c.model = &model;
  c.gpu = load_gpu_preset(gpu, test::configs());
  c.profile = load_vllm_profile(version, test::configs());
  return diagnose_log(read_file(logs_dir() / log), c);
}

// The incident: only the traceback's ERROR lines survive (the ValueError text was cut off).
TEST(Diagnose, IncidentIsKvCacheTooSmallFor262144WithTheLengthThatFits) {
  const ModelSpec model = test::bundled("nvidia/Kimi-K2.5-NVFP4");
  const Diagnosis d = diagnose_with("incident-kimi-k25-tp8.log", model, "rtx-pro-6000", "0.15");
  EXPECT_EQ(d.root_cause, "kv_cache_too_small");
  EXPECT_NE(d.sentence.find("KV cache too small for max_model_len 262144"), std::string::npos) << d.sentence;
  // The log says kv_cache_dtype=auto and failed; the checkpoint's FP8 KV would have fitted, so the
  // run had a 16-bit cache: 61 layers x 576 x 2 B per token, 262144 tokens = 17.16 GiB.
  ASSERT_TRUE(d.deployment);
  EXPECT_EQ(d.deployment->kv_cache_dtype, KvCacheDtypeChoice::kBFloat16);
  ASSERT_TRUE(d.needed_gib);
  EXPECT_NEAR(*d.needed_gib, 61.0 * 576 * 2 * 262144 / 1073741824.0, 1e-9);
  EXPECT_EQ(d.deployment->tensor_parallel_size, 8);
  EXPECT_DOUBLE_EQ(*d.deployment->gpu_memory_utilization, 0.9);
  ASSERT_TRUE(d.fitting_max_model_len);
  EXPECT_GT(*d.fitting_max_model_len, 100000);
  EXPECT_LT(*d.fitting_max_model_len, 262144);
  ASSERT_FALSE(d.remedies.empty());
  EXPECT_EQ(d.remedies.front(), "--max-model-len " + std::to_string(*d.fitting_max_model_len));
  EXPECT_FALSE(d.model_remedies.empty());
}

// vLLM printed its own estimate (87,840) from the exact available bytes; gpubudget's KV arithmetic on
// the logged 8.04 GiB (rounded to 0.01 GiB, i.e. +/- 0.005 GiB = +/- 55 tokens) must agree.
TEST(Diagnose, LengthFromTheLoggedMemoryMatchesVllmsOwnEstimate) {
  const ModelSpec model = test::bundled("Qwen/Qwen3-VL-30B-A3B-Instruct");
  const Diagnosis d = diagnose_with("v0.11-qwen3-vl-a100-kv-check.log", model, "a100-80gb", "0.11");
  EXPECT_EQ(d.root_cause, "kv_cache_too_small");
  const auto it = std::find_if(d.comparison.begin(), d.comparison.end(),
                               [](const FigureComparison& x) { return x.figure == "estimated maximum model length"; });
  ASSERT_NE(it, d.comparison.end());
  EXPECT_DOUBLE_EQ(*it->logged, 87840);
  EXPECT_NEAR(*it->predicted, 87840, 64);
  const auto needed = std::find_if(d.comparison.begin(), d.comparison.end(),
                                   [](const FigureComparison& x) { return x.figure == "KV needed for max_model_len"; });
  ASSERT_NE(needed, d.comparison.end());
  EXPECT_NEAR(*needed->predicted, 24.0, 0.005);  // 48 x 2 x 4 x 128 x 2 B x 262144 = 24 GiB
  EXPECT_EQ(d.fitting_max_model_len, 87840);     // vLLM's own figure is the answer when the log has it
}

TEST(Diagnose, TokensFromTheLoggedMemoryMatchTheLoggedCacheSize) {
  // Kimi-Dev-72B is a Qwen2.5-72B fine-tune: the same KV geometry (tests/data/observations/model_aliases.json).
  const ModelSpec model = test::bundled("Qwen/Qwen2.5-72B-Instruct");
  const Diagnosis d = diagnose_with("v0.19-kimi-dev-72b-tp2-debug.log", model, "h100", "0.19");
  EXPECT_EQ(d.root_cause, "none");
  EXPECT_TRUE(d.remedies.empty());
  const auto it = std::find_if(d.comparison.begin(), d.comparison.end(),
                               [](const FigureComparison& x) { return x.figure == "GPU KV cache size"; });
  ASSERT_NE(it, d.comparison.end());
  EXPECT_DOUBLE_EQ(*it->logged, 19776);
  EXPECT_NEAR(*it->predicted, 19776, 19776 * 0.002);
}

TEST(Diagnose, WithoutAModelTheLogsOwnNumbersGiveTheAnswer) {
  const Diagnosis kv = diagnose_log(read_file(logs_dir() / "v0.22-deepseek-v4-flash-gh200-kv-check.log"), {});
  EXPECT_EQ(kv.root_cause, "kv_cache_too_small");
  EXPECT_EQ(kv.fitting_max_model_len, 13528);
  EXPECT_EQ(kv.remedies.front(), "--max-model-len 13528");
  const Diagnosis v0 = diagnose_log(read_file(logs_dir() / "v0-llama-3.1-8b-3090-capacity.log"), {});
  EXPECT_EQ(v0.fitting_max_model_len, 23648);
  const Diagnosis free = diagnose_log(read_file(logs_dir() / "v0.19-free-memory-on-startup.log"), {});
  EXPECT_EQ(free.root_cause, "startup_free_memory");
  // 70.12 of 79.19 GiB free is 88.5%: one point below, 0.87.
  EXPECT_EQ(free.remedies.front(), "--gpu-memory-utilization 0.87");
  const Diagnosis oom = diagnose_log(read_file(logs_dir() / "v0.19-gpt-oss-20b-sampler-oom.log"), {});
  EXPECT_EQ(oom.root_cause, "cuda_oom");
  EXPECT_NE(oom.sentence.find("sampler"), std::string::npos);
  EXPECT_EQ(oom.remedies.front(), "--max-num-seqs 256");
  const Diagnosis none = diagnose_log(read_file(logs_dir() / "v0.11-llama-3.3-70b-fp8-no-kv-memory.log"), {});
  EXPECT_EQ(none.root_cause, "no_kv_memory");
}

TEST(Diagnose, ObservationRowHasTheObservationFields) {
  const VllmLogFacts f = read_file(logs_dir() / "v0.19-kimi-dev-72b-tp2-debug.log");
  const Diagnosis d = diagnose_log(f, {});
  const Json row = Json::parse(observation_row(f, d, {}));
  EXPECT_EQ(row["id"], "log-v0.19-kimi-dev-72b-tp2-debug.log");
  EXPECT_EQ(row["tp"], 2);
  EXPECT_DOUBLE_EQ(row["available_kv_cache_gib"].get<double>(), 3.02);
  EXPECT_EQ(row["kv_cache_tokens"], 19776);
  EXPECT_EQ(row["startup_outcome"], "kv_allocated");
  // Same keys as the shipped observations.
  std::ifstream shipped(fs::path(test::data_dir()) / "observations" / "vllm-runs.jsonl");
  std::string first;
  std::getline(shipped, first);
  const Json shipped_row = Json::parse(first);
  for (const auto& [key, value] : shipped_row.items()) EXPECT_TRUE(row.contains(key)) << key;
}

}  // namespace
}  // namespace gpubudget
