// Fact extraction from vLLM startup logs (docs/diagnose.md lists every recognised line).
#include "gpubudget/vllm_log.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "log_text.h"

namespace gpubudget {

using detail::config_value;
using detail::contains;
using detail::dict_value;
using detail::gib_after;
using detail::integer_after;
using detail::number_after;

const char* outcome_name(StartupOutcome o) {
  switch (o) {
    case StartupOutcome::kUnknown: return "unknown";
    case StartupOutcome::kKvAllocated: return "kv_allocated";
    case StartupOutcome::kFailedFreeMemory: return "failed_free_memory";
    case StartupOutcome::kFailedKvCheck: return "failed_kv_check";
    case StartupOutcome::kFailedNoKvMemory: return "failed_negative_kv";
    case StartupOutcome::kFailedOutOfMemory: return "failed_oom";
    case StartupOutcome::kFailedOther: return "failed";
  }
  return "unknown";
}

namespace {

// Splits a stream into lines of at most kMaxLogLineBytes without ever holding more than one line
// (plus one read chunk) in memory.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) { chunk_.resize(1 << 20); }

  // False at the end of the stream. `truncated` tells whether the line was cut.
  bool next(std::string& line, bool& truncated) {
    line.clear();
    truncated = false;
    bool any = false;
    while (true) {
      if (pos_ == end_) {
        if (!in_) return any;
        in_.read(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
        end_ = static_cast<std::size_t>(in_.gcount());
        pos_ = 0;
        if (end_ == 0) return any;
      }
      any = true;
      const char* start = chunk_.data() + pos_;
      const auto* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
      const std::size_t n = nl ? static_cast<std::size_t>(nl - start) : end_ - pos_;
      const std::size_t room = kMaxLogLineBytes - std::min(line.size(), kMaxLogLineBytes);
      if (n > room) truncated = true;
      line.append(start, std::min(n, room));
      pos_ += n;
      if (nl) {
        ++pos_;
        return true;
      }
    }
  }

 private:
  std::istream& in_;
  std::vector<char> chunk_;
  std::size_t pos_ = 0, end_ = 0;
};

void keep_min(std::optional<double>& slot, std::optional<double> v) {
  if (v && (!slot || *v < *slot)) slot = v;
}
void keep_max(std::optional<double>& slot, std::optional<double> v) {
  if (v && (!slot || *v > *slot)) slot = v;
}
template <typename T>
void keep(std::optional<T>& slot, std::optional<T> v) {
  if (v) slot = v;
}

std::optional<std::int64_t> to_integer(const std::optional<std::string>& s) {
  if (!s || s->empty() || s->size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : *s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}
std::optional<double> to_double(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return number_after(*s, "");
}
std::optional<bool> to_bool(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  if (*s == "True" || *s == "true") return true;
  if (*s == "False" || *s == "false") return false;
  return std::nullopt;
}
std::optional<std::string> text(std::optional<std::string> s) {
  if (!s || *s == "None" || *s == "none") return std::nullopt;
  if (s->rfind("torch.", 0) == 0) s->erase(0, 6);  // dtype=torch.bfloat16
  return s;
}

// "0.11.0" from "... version 0.11.0" or "(v0.11.0)".
std::optional<std::string> version_token(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  std::string out;
  while (i < line.size() && out.size() < 40) {
    const char c = line[i];
    if (c == ' ' || c == ')' || c == ',' || c == '\r') break;
    out.push_back(c);
    ++i;
  }
  if (out.empty() || out[0] < '0' || out[0] > '9') return std::nullopt;
  return out;
}

class FactReader {
 public:
  explicit FactReader(VllmLogFacts& f) : f_(f) {}

  void line(const std::string& raw) {
    const std::string_view s = detail::strip_log_prefix_view(raw, scratch_, &worker_);
    if (worker_.find("Worker") != std::string::npos) workers_.insert(worker_);  // GPU workers, not API/engine
    const std::size_t memory_before = figures_;
    // Cheap gates first: most lines of a long log (progress bars, request metrics) match nothing.
    if (contains(s, "version") || contains(s, "config") || contains(s, "args") || contains(s, "Using ") ||
        contains(s, "Chunked prefill") || contains(s, "block size")) {
      settings(s);
    }
    if (contains(s, "iB") || contains(s, "GB") || contains(s, " tokens") || contains(s, " blocks: ")) memory(s);
    if (contains(s, "rror") || contains(s, "xception") || contains(s, "memory") || contains(s, "File \"") ||
        contains(s, "Traceback") || contains(s, "Engine") || contains(s, "max seq len") || contains(s, "check_enough")) {
      errors(s, raw);
    }
    if (figures_ != memory_before) ++f_.memory_lines;
  }

  void finish() {
    f_.workers = static_cast<std::int64_t>(workers_.size());
    if (f_.startup_free_gib) {
      f_.outcome = StartupOutcome::kFailedFreeMemory;
    } else if (kv_check_error_) {
      f_.outcome = StartupOutcome::kFailedKvCheck;
    } else if (no_kv_memory_) {
      f_.outcome = StartupOutcome::kFailedNoKvMemory;
    } else if (f_.out_of_memory) {
      f_.outcome = StartupOutcome::kFailedOutOfMemory;
    } else if (f_.kv_check_in_traceback) {
      f_.outcome = StartupOutcome::kFailedKvCheck;  // the ValueError text itself was cut off
    } else if (engine_failed_) {
      f_.outcome = StartupOutcome::kFailedOther;
    } else if (kv_allocated_) {
      f_.outcome = StartupOutcome::kKvAllocated;
    }
  }

 private:
  void settings(std::string_view s) {
    if (auto v = version_token(s, "vLLM API server version ")) f_.vllm_version = v;
    if (auto v = version_token(s, "LLM engine (v")) f_.vllm_version = v;
    if (auto v = version_token(s, "vLLM version ")) f_.vllm_version = v;
    if (contains(s, "LLM engine (v0.")) f_.v0_engine = f_.v0_engine || !contains(s, "V1 LLM engine");
    auto key_value = [s](const char* key) { return config_value(s, key); };
    if (contains(s, "with config: ")) read_settings(key_value, "max_seq_len");
    if (contains(s, "args: Namespace(")) read_settings(key_value, "max_model_len");
    if (contains(s, "non-default args: {")) read_settings([s](const char* key) { return dict_value(s, key); }, "max_model_len");
    keep(f_.max_model_len, integer_after(s, "Using max model len "));
    keep(f_.max_num_batched_tokens, integer_after(s, "Chunked prefill is enabled with max_num_batched_tokens="));
    if (contains(s, "Setting kv cache block size to ")) {
      keep(f_.block_size, integer_after(s, "Setting kv cache block size to "));
      if (auto b = backend_name(s, " for ", " backend")) f_.attention_backend = b;
    } else if (auto b = used_backend(s)) {
      f_.attention_backend = b;
    }
  }

  static std::optional<std::string> backend_name(std::string_view s, std::string_view before, std::string_view after) {
    const auto at = s.find(before);
    if (at == std::string_view::npos) return std::nullopt;
    const auto start = at + before.size();
    const auto end = s.find(after, start);
    if (end == std::string_view::npos || end - start > 60 || end == start) return std::nullopt;
    std::string name(s.substr(start, end - start));
    if (name.find(' ') != std::string::npos) return std::nullopt;
    if (name.rfind("AttentionBackendEnum.", 0) == 0) name.erase(0, 21);
    if (name.rfind("_Backend.", 0) == 0) name.erase(0, 9);
    return name;
  }

  // "Using TRITON_MLA backend.", "Using AttentionBackendEnum.FLASHMLA backend", "Using FLASH_ATTN
  // attention backend out of potential backends: [...]".
  static std::optional<std::string> used_backend(std::string_view s) {
    const auto at = s.find("Using ");
    if (at == std::string_view::npos) return std::nullopt;
    const auto start = at + 6;
    auto end = start;
    while (end < s.size() && s[end] != ' ' && end - start < 60) ++end;
    const std::string_view rest = s.substr(end);
    if (rest.substr(0, 8) != " backend" && rest.substr(0, 18) != " attention backend") return std::nullopt;
    std::string name(s.substr(start, end - start));
    if (name.rfind("AttentionBackendEnum.", 0) == 0) name.erase(0, 21);
    if (name.rfind("_Backend.", 0) == 0) name.erase(0, 9);
    if (name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos) {
      return std::nullopt;
    }
    return name;
  }

  // The engine-config line ("with config: model='…', max_seq_len=N, …"), V0's "args: Namespace(…)"
  // and V1's "non-default args: {'…': …}" name the same settings; `get(key)` reads one of them.
  // `length_key` is max_seq_len in the engine config, max_model_len in the arguments.
  template <typename Lookup>
  void read_settings(const Lookup& get, const char* length_key) {
    keep(f_.model, text(get("model")));
    keep(f_.dtype, text(get("dtype")));
    keep(f_.max_model_len, to_integer(get(length_key)));
    keep(f_.tensor_parallel_size, to_integer(get("tensor_parallel_size")));
    keep(f_.pipeline_parallel_size, to_integer(get("pipeline_parallel_size")));
    keep(f_.data_parallel_size, to_integer(get("data_parallel_size")));
    keep(f_.decode_context_parallel_size, to_integer(get("decode_context_parallel_size")));
    keep(f_.gpu_memory_utilization, to_double(get("gpu_memory_utilization")));
    keep(f_.kv_cache_dtype, text(get("kv_cache_dtype")));
    keep(f_.block_size, to_integer(get("block_size")));
    keep(f_.max_num_seqs, to_integer(get("max_num_seqs")));
    keep(f_.max_num_batched_tokens, to_integer(get("max_num_batched_tokens")));
    keep(f_.enforce_eager, to_bool(get("enforce_eager")));
    keep(f_.enable_expert_parallel, to_bool(get("enable_expert_parallel")));
    keep(f_.quantization, text(get("quantization")));
  }

  void memory(std::string_view s) {
    auto take_max = [&](std::optional<double>& slot, std::optional<double> v) {
      if (!v) return;
      ++figures_;
      keep_max(slot, v);
    };
    auto take_min = [&](std::optional<double>& slot, std::optional<double> v) {
      if (!v) return;
      ++figures_;
      keep_min(slot, v);
    };
    take_max(f_.model_loading_gib, gib_after(s, "Model loading took "));
    if (contains(s, "Loading model weights took ")) {
      f_.v0_engine = true;
      take_max(f_.model_loading_gib, gib_after(s, "Loading model weights took "));
    }
    // V1 memory-profiling summary (DEBUG) and the 0.7–0.8 / V0 INFO wording.
    take_max(f_.total_non_kv_gib, gib_after(s, "Total non KV cache memory: "));
    take_max(f_.activation_peak_gib, gib_after(s, "torch peak memory increase: "));
    take_max(f_.non_torch_gib, gib_after(s, "non-torch forward increase memory: "));
    take_max(f_.activation_peak_gib, gib_after(s, "PyTorch activation peak memory takes "));
    take_max(f_.non_torch_gib, gib_after(s, "non_torch_memory takes "));
    take_min(f_.available_kv_cache_gib, gib_after(s, "the rest of the memory reserved for KV Cache is "));
    if (contains(s, "total_gpu_memory (")) {
      keep(f_.total_gpu_gib, gib_after(s, "total_gpu_memory ("));
      keep(f_.gpu_memory_utilization, number_after(s, "gpu_memory_utilization ("));
      const auto eq = s.find(") = ");
      if (eq != std::string_view::npos) keep(f_.requested_gib, gib_after(s, ") = ", eq));
    }
    take_min(f_.available_kv_cache_gib, gib_after(s, "Available KV cache memory: "));
    // V0 0.6.x one-line summary: "Memory profiling results: duration=…, total_gpu_memory=23.58GiB, …,
    // non_torch_memory=0.35GiB, kv_cache_size=3.81GiB, gpu_memory_utilization=0.90."
    if (contains(s, "Memory profiling results: ")) {
      keep(f_.total_gpu_gib, gib_after(s, "total_gpu_memory="));
      take_max(f_.non_torch_gib, gib_after(s, "non_torch_memory="));
      take_min(f_.available_kv_cache_gib, gib_after(s, "kv_cache_size="));
      keep(f_.gpu_memory_utilization, number_after(s, "gpu_memory_utilization="));
    }
    if (contains(s, "Requested memory: ")) {
      keep(f_.gpu_memory_utilization, number_after(s, "Requested memory: "));
      const auto util = s.find("(util), ");
      if (util != std::string_view::npos) keep(f_.requested_gib, gib_after(s, "(util), ", util));
    }
    if (auto t = integer_after(s, "GPU KV cache size: ")) {
      ++figures_;
      f_.kv_cache_tokens = t;
      kv_allocated_ = true;
    }
    if (contains(s, "Maximum concurrency for ")) {
      keep(f_.max_concurrency_tokens, integer_after(s, "Maximum concurrency for "));
      keep(f_.max_concurrency, number_after(s, "tokens per request: "));
    }
    if (contains(s, " blocks: ") && contains(s, "# CPU blocks: ")) {  // "# GPU blocks: N" / "# CUDA blocks: N"
      f_.v0_engine = true;
      kv_allocated_ = true;
      ++figures_;
      for (const char* key : {"# GPU blocks: ", "# CUDA blocks: ", "# cuda blocks: "}) keep(f_.gpu_blocks, integer_after(s, key));
      keep(f_.cpu_blocks, integer_after(s, "# CPU blocks: "));
    }
    if (contains(s, "Graph capturing finished in ")) {
      const auto took = s.find(", took ");
      if (took != std::string_view::npos) take_max(f_.cudagraph_gib, gib_after(s, ", took ", took));
    }
    take_max(f_.estimated_cudagraph_gib, gib_after(s, "Estimated CUDA graph memory: "));
    if (contains(s, "Auto-fit max_model_len: reduced from ")) {
      keep(f_.auto_fit_from, integer_after(s, "reduced from "));
      keep(f_.auto_fit_to, integer_after(s, " to ", s.find("reduced from ") + 13));
      take_min(f_.available_kv_cache_gib, gib_after(s, "GPU memory ("));
    }
  }

  void errors(std::string_view s, const std::string& raw) {
    const bool error_level = contains(raw, "ERROR") || contains(raw, "CRITICAL");
    if (contains(s, "Traceback (most recent call last)")) frames_.clear();
    if (contains(s, "File \"") && frames_.size() < 400) frames_.emplace_back(s);
    if (contains(s, "check_enough_kv_cache_memory")) f_.kv_check_in_traceback = true;
    if (contains(s, "EngineCore failed to start") || contains(s, "Engine core initialization failed") ||
        contains(s, "EngineCore encountered a fatal error")) {
      engine_failed_ = true;
    }
    bool is_error = false;
    // _check_enough_kv_cache_memory, every version's text.
    if (contains(s, "max seq len (") && contains(s, "KV cache is needed")) {
      is_error = true;
      kv_check_error_ = true;
      keep(f_.error_max_seq_len, integer_after(s, "max seq len ("));
      const auto needed = s.find("), (");
      if (needed != std::string_view::npos) keep(f_.error_needed_gib, gib_after(s, "), (", needed));
      keep(f_.error_available_gib, gib_after(s, "available KV cache memory ("));
      keep(f_.estimated_max_model_len, integer_after(s, "estimated maximum model length is "));
    } else if (contains(s, "max seq len (") && contains(s, "stored in KV cache (")) {
      is_error = true;  // V0
      kv_check_error_ = true;
      f_.v0_engine = true;
      keep(f_.error_max_seq_len, integer_after(s, "max seq len ("));
      keep(f_.error_kv_token_capacity, integer_after(s, "stored in KV cache ("));
    }
    if (contains(s, "No available memory for the cache blocks")) {
      is_error = true;
      no_kv_memory_ = true;
    }
    if (contains(s, "on startup is less than desired GPU memory utilization")) {
      is_error = true;
      const auto open = s.find(" (", s.find("Free memory on device"));
      if (open != std::string_view::npos) {
        keep(f_.startup_free_gib, number_after(s, " (", open));
        const auto slash = s.find('/', open);
        if (slash != std::string_view::npos) keep(f_.startup_total_gib, number_after(s, "/", slash));
      }
      const auto util = s.find("utilization (");
      if (util != std::string_view::npos) {
        keep(f_.gpu_memory_utilization, number_after(s, "utilization (", util));
        const auto comma = s.find(", ", util);
        if (comma != std::string_view::npos) keep(f_.startup_requested_gib, number_after(s, ", ", comma));
      }
      if (!f_.startup_free_gib) f_.startup_free_gib = 0.0;
    }
    if (contains(s, "CUDA out of memory") || contains(s, "OutOfMemoryError")) {
      is_error = true;
      if (!f_.out_of_memory) f_.out_of_memory = LoggedOutOfMemory{};
      LoggedOutOfMemory& oom = *f_.out_of_memory;
      keep(oom.tried_gib, gib_after(s, "Tried to allocate "));
      keep(oom.capacity_gib, gib_after(s, "total capacity of "));
      keep(oom.free_gib, gib_after(s, " of which "));
      if (oom.capacity_gib) f_.total_gpu_gib = oom.capacity_gib;
      if (oom.phase.empty()) oom.phase = phase_from_frames();
    }
    if ((is_error || (error_level && (contains(s, "Error: ") || contains(s, "Exception: ")))) && !f_.first_error) {
      f_.first_error = std::string(s.substr(0, 600));
    }
  }

  // Which part of startup a traceback ran in, innermost recognised frame first.
  std::string phase_from_frames() const {
    static const std::pair<const char*, const char*> kPhases[] = {
        {"_dummy_sampler_run", "sampler"},
        {"capture_model", "CUDA graph capture"},
        {"profile_cudagraph_memory", "CUDA graph capture"},
        {"_allocate_kv_cache", "KV cache allocation"},
        {"initialize_kv_cache", "KV cache allocation"},
        {"profile_run", "profile run"},
        {"_dummy_run", "profile run"},
        {"determine_available_memory", "profile run"},
        {"load_weights", "model loading"},
        {"load_model", "model loading"},
        {"compile_or_warm_up_model", "warm-up"},
        {"_warmup", "warm-up"},
    };
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      for (const auto& [function, phase] : kPhases) {
        if (contains(*it, function)) return phase;
      }
    }
    return "";
  }

  VllmLogFacts& f_;
  std::set<std::string> workers_;
  std::string worker_, scratch_;  // per-line buffers, reused
  std::vector<std::string> frames_;
  std::size_t figures_ = 0;
  bool kv_allocated_ = false, kv_check_error_ = false, no_kv_memory_ = false, engine_failed_ = false;
};

}  // namespace

VllmLogFacts read_vllm_log(std::istream& in, const std::string& source) {
  VllmLogFacts facts;
  facts.source = source;
  FactReader reader(facts);
  LineReader lines(in);
  std::string line;
  bool truncated = false;
  while (lines.next(line, truncated)) {
    ++facts.lines;
    if (truncated) ++facts.truncated_lines;
    reader.line(line);
  }
  reader.finish();
  return facts;
}

VllmLogFacts read_vllm_log_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not a log", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot be read", path));
  return read_vllm_log(in, path);
}

}  // namespace gpubudget
