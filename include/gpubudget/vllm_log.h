// Reading a vLLM startup log: the settings and memory figures it states, and how the startup ended.
//
// The reader streams (one line in memory at a time, lines cut at kMaxLogLineBytes), strips ANSI
// colours and worker prefixes ("(EngineCore_DP0 pid=…)", "(Worker_TP3 pid=…)", "(VllmWorker TP3
// pid=…)", "(RayWorkerWrapper pid=…, ip=…)"), and recognises the wordings of vLLM's V0 engine through
// today's V1 (docs/diagnose.md lists each line and the versions that print it). It never throws on
// content: binary data, truncated lines and missing sections just leave fields empty.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpubudget/config_dir.h"

namespace gpubudget {

inline constexpr std::size_t kMaxLogLineBytes = 64 * 1024;
// The largest memory figure a log can mean, in GiB (no GPU holds 16 TiB), and the largest count
// (tokens, blocks, lengths): beyond them a figure is ignored and counted as implausible.
inline constexpr double kMaxLoggedGib = 16384;
inline constexpr std::int64_t kMaxLoggedCount = std::int64_t{1} << 40;
inline constexpr double kMaxLoggedConcurrency = 1e9;

// How the startup ended, most specific first.
enum class StartupOutcome {
  kUnknown,             // no memory lines and no recognised error
  kKvAllocated,         // "GPU KV cache size" / "# GPU blocks" and no error after it
  kFailedFreeMemory,    // "Free memory on device … on startup is less than desired …"
  kFailedKvCheck,       // _check_enough_kv_cache_memory: the KV cache cannot hold one max_model_len request
  kFailedNoKvMemory,    // "No available memory for the cache blocks" (nothing left after the overheads)
  kFailedOutOfMemory,   // torch.OutOfMemoryError / "CUDA out of memory"
  kFailedOther,         // an engine-core failure that is none of the above
};
// The outcome's name in JSON ("failed_kv_check", ...); static storage.
const char* outcome_name(StartupOutcome o);

struct LoggedOutOfMemory {
  std::optional<double> tried_gib, capacity_gib, free_gib;
  std::string phase;  // "model loading", "profile run", "sampler", "CUDA graph capture", "KV cache allocation", "warm-up", ""
};

// What a vLLM log states. Memory figures are per GPU worker, in GiB as printed (vLLM's GiB = 2^30 B;
// V0's "GB" lines are the same unit). Where several workers print a figure, the one vLLM fails on
// first is kept: the smallest available KV memory, the largest weights.
struct VllmLogFacts {
  std::string source;  // file name, or "-" for standard input
  std::int64_t lines = 0;
  std::int64_t truncated_lines = 0;  // longer than kMaxLogLineBytes, cut
  std::int64_t memory_lines = 0;     // lines that carried a memory figure
  std::int64_t workers = 0;          // distinct GPU-worker prefixes seen (Worker_TP3, VllmWorker TP3, ...)
  // Figures no real startup prints, ignored: memory beyond kMaxLoggedGib (positive or negative), a
  // utilization outside (0, 1], a count beyond kMaxLoggedCount or negative.
  std::int64_t implausible_figures = 0;

  // Settings (engine-config line, "non-default args", "Using max model len", backend lines).
  std::optional<std::string> vllm_version, model, dtype, quantization, kv_cache_dtype, attention_backend;
  std::optional<std::int64_t> tensor_parallel_size, pipeline_parallel_size, data_parallel_size,
      decode_context_parallel_size, max_model_len, block_size, max_num_seqs, max_num_batched_tokens;
  std::optional<double> gpu_memory_utilization;
  std::optional<bool> enforce_eager, enable_expert_parallel;
  bool v0_engine = false;  // V0-era wording seen ("# GPU blocks", "Loading model weights took")

  // Memory figures.
  std::optional<double> model_loading_gib, activation_peak_gib, non_torch_gib, total_non_kv_gib,
      available_kv_cache_gib, cudagraph_gib, estimated_cudagraph_gib, requested_gib, total_gpu_gib;
  std::optional<std::int64_t> kv_cache_tokens, max_concurrency_tokens, gpu_blocks, cpu_blocks;
  std::optional<double> max_concurrency;
  std::optional<std::int64_t> auto_fit_from, auto_fit_to;  // "Auto-fit max_model_len: reduced from A to B"

  // The KV-cache check error (any version's wording; fields absent when the text was cut off).
  std::optional<std::int64_t> error_max_seq_len, estimated_max_model_len, error_kv_token_capacity;
  std::optional<double> error_needed_gib, error_available_gib;
  bool kv_check_in_traceback = false;  // "(_)check_enough_kv_cache_memory" seen in a traceback

  // The free-memory-on-startup error.
  std::optional<double> startup_free_gib, startup_total_gib, startup_requested_gib;

  std::optional<LoggedOutOfMemory> out_of_memory;
  std::optional<std::string> first_error;  // the first ERROR / exception line, prefix stripped
  StartupOutcome outcome = StartupOutcome::kUnknown;
};

namespace detail {
struct LogWordings;
}

// The wordings vLLM's logs use, loaded once from `<configs>/vllm-log-wordings.json` (data, so that a
// new vLLM wording is a data change). Cheap to copy (shared, immutable).
class VllmLogWordings {
 public:
  explicit VllmLogWordings(std::shared_ptr<const detail::LogWordings> wordings) : wordings_(std::move(wordings)) {}
  [[nodiscard]] const detail::LogWordings& rules() const { return *wordings_; }

 private:
  std::shared_ptr<const detail::LogWordings> wordings_;
};

// Throws InputError naming the file, field and value when the wordings file is missing or malformed.
VllmLogWordings load_vllm_log_wordings(const ConfigDir& configs);

// Reads a whole log, one line in memory at a time. `source` names it in messages. Does not throw on
// content; a stream that fails mid-way ends the read (the facts so far are returned).
VllmLogFacts read_vllm_log(std::istream& in, const std::string& source, const VllmLogWordings& wordings);

// Reads the log file at `path`. Throws InputError when it is not a readable regular file.
VllmLogFacts read_vllm_log_file(const std::string& path, const VllmLogWordings& wordings);

// One line without ANSI escapes, worker prefix, level, timestamp and "[file.py:123]" location.
// `worker` receives the prefix's name ("EngineCore_DP0", "Worker_TP3"), or "" when there is none.
std::string strip_log_prefix(const std::string& line, std::string* worker = nullptr);

}  // namespace gpubudget
