// Fact extraction from vLLM startup logs (docs/diagnose.md lists every recognised line).
#include "gpubudget/vllm_log.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "log/log_text.h"
#include "log/log_wordings.h"

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
// A utilization from a settings line, or nothing when it is outside (0, 1].
std::optional<double> to_fraction(const std::optional<std::string>& s) {
  const auto v = to_double(s);
  if (!v || !(*v > 0.0 && *v <= 1.0)) return std::nullopt;
  return v;
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
std::optional<std::string> version_token(std::string_view line, std::string_view key, std::size_t from) {
  const auto at = line.find(key, from);
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

bool contains_any(std::string_view s, const std::vector<std::string>& texts) {
  return std::any_of(texts.begin(), texts.end(), [s](const std::string& t) { return contains(s, t); });
}

// Applies the wordings (configs/vllm-log-wordings.json) to each line of a log.
class FactReader {
 public:
  FactReader(VllmLogFacts& f, const detail::LogWordings& w) : f_(f), w_(w) {}

  void line(const std::string& raw) {
    const std::string_view s = detail::strip_log_prefix_view(raw, scratch_, &worker_);
    if (worker_.find("Worker") != std::string::npos) workers_.insert(worker_);  // GPU workers, not API/engine
    const std::size_t memory_before = figures_;
    // Cheap gates first: most lines of a long log (progress bars, request metrics) match nothing.
    const bool settings = contains_any(s, w_.settings_gate);
    const bool memory = contains_any(s, w_.memory_gate);
    const bool errors = contains_any(s, w_.errors_gate);
    if (settings) settings_lines(s);
    if (errors) traceback_frames(s);
    line_marks_ = {};
    for (const detail::LogRule& rule : w_.rules) {
      const bool gate = rule.stage == detail::LogStage::kSettings ? settings
                        : rule.stage == detail::LogStage::kMemory ? memory
                                                                   : errors;
      if (gate) apply(rule, s);
    }
    if (errors) first_error_line(s, raw);
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
  // The settings lines (engine config, V0 Namespace, V1 non-default args) and the backend lines.
  void settings_lines(std::string_view s) {
    for (const auto& l : w_.settings_lines) {
      if (!contains(s, l.marker)) continue;
      if (l.dict_syntax) {
        read_settings([s](const char* key) { return dict_value(s, key); }, l.length_key.c_str());
      } else {
        read_settings([s](const char* key) { return config_value(s, key); }, l.length_key.c_str());
      }
    }
    if (contains(s, w_.block_size_marker)) {
      if (auto b = backend_between(s)) f_.attention_backend = b;
    } else if (auto b = used_backend(s)) {
      f_.attention_backend = b;
    }
  }

  std::string without_prefixes(std::string name) const {
    for (const auto& prefix : w_.backend_prefixes_dropped) {
      if (name.rfind(prefix, 0) == 0) name.erase(0, prefix.size());
    }
    return name;
  }

  // "Setting kv cache block size to 64 for FLASHMLA backend."
  std::optional<std::string> backend_between(std::string_view s) const {
    const auto at = s.find(w_.backend_before);
    if (at == std::string_view::npos) return std::nullopt;
    const auto start = at + w_.backend_before.size();
    const auto end = s.find(w_.backend_after, start);
    if (end == std::string_view::npos || end - start > 60 || end == start) return std::nullopt;
    std::string name(s.substr(start, end - start));
    if (name.find(' ') != std::string::npos) return std::nullopt;
    return without_prefixes(std::move(name));
  }

  // "Using TRITON_MLA backend.", "Using AttentionBackendEnum.FLASHMLA backend", "Using FLASH_ATTN
  // attention backend out of potential backends: [...]".
  std::optional<std::string> used_backend(std::string_view s) const {
    const auto at = s.find(w_.used_marker);
    if (at == std::string_view::npos) return std::nullopt;
    const auto start = at + w_.used_marker.size();
    auto end = start;
    while (end < s.size() && s[end] != ' ' && end - start < 60) ++end;
    const std::string_view rest = s.substr(end);
    if (std::none_of(w_.used_suffixes.begin(), w_.used_suffixes.end(),
                     [rest](const std::string& suffix) { return rest.substr(0, suffix.size()) == suffix; })) {
      return std::nullopt;
    }
    std::string name = without_prefixes(std::string(s.substr(start, end - start)));
    if (name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos) {
      return std::nullopt;
    }
    return name;
  }

  // The engine-config line ("with config: model='…', max_seq_len=N, …"), V0's "args: Namespace(…)"
  // and V1's "non-default args: {'…': …}" name the same settings (vLLM's argument names); `get(key)`
  // reads one of them. `length_key` is max_seq_len in the engine config, max_model_len in the arguments.
  template <typename Lookup>
  void read_settings(const Lookup& get, const char* length_key) {
    keep(f_.model, text(get("model")));
    keep(f_.dtype, text(get("dtype")));
    keep(f_.max_model_len, to_integer(get(length_key)));
    keep(f_.tensor_parallel_size, to_integer(get("tensor_parallel_size")));
    keep(f_.pipeline_parallel_size, to_integer(get("pipeline_parallel_size")));
    keep(f_.data_parallel_size, to_integer(get("data_parallel_size")));
    keep(f_.decode_context_parallel_size, to_integer(get("decode_context_parallel_size")));
    keep(f_.gpu_memory_utilization, to_fraction(get("gpu_memory_utilization")));
    keep(f_.kv_cache_dtype, text(get("kv_cache_dtype")));
    keep(f_.block_size, to_integer(get("block_size")));
    keep(f_.max_num_seqs, to_integer(get("max_num_seqs")));
    keep(f_.max_num_batched_tokens, to_integer(get("max_num_batched_tokens")));
    keep(f_.enforce_eager, to_bool(get("enforce_eager")));
    keep(f_.enable_expert_parallel, to_bool(get("enable_expert_parallel")));
    keep(f_.quantization, text(get("quantization")));
  }

  // Where the search for a figure's text starts: where its `from` texts are found, in turn.
  static std::optional<std::size_t> start_of(std::string_view s, const std::vector<std::string>& from) {
    std::size_t at = 0;
    for (const auto& text : from) {
      at = s.find(text, at);
      if (at == std::string_view::npos) return std::nullopt;
    }
    return at;
  }

  // A figure a real startup can print (VllmLogFacts::implausible_figures).
  bool plausible(const detail::LogFigure& figure, double v) {
    bool ok = std::isfinite(v) && std::fabs(v) <= kMaxLoggedGib;
    if (const auto* field = std::get_if<std::optional<double> VllmLogFacts::*>(&figure.field)) {
      if (*field == &VllmLogFacts::gpu_memory_utilization) ok = v > 0.0 && v <= 1.0;
      if (*field == &VllmLogFacts::max_concurrency) ok = v >= 0.0 && v <= kMaxLoggedConcurrency;
    }
    if (!ok) ++f_.implausible_figures;
    return ok;
  }
  bool plausible(std::int64_t v) {
    const bool ok = v >= 0 && v <= kMaxLoggedCount;
    if (!ok) ++f_.implausible_figures;
    return ok;
  }

  // Reads one figure into its field; true when a value was read.
  bool read(const detail::LogFigure& figure, std::string_view s) {
    const auto at = start_of(s, figure.from);
    if (!at) return false;
    if (const auto* text_field = std::get_if<std::optional<std::string> VllmLogFacts::*>(&figure.field)) {
      auto v = version_token(s, figure.after, *at);
      if (v) f_.*(*text_field) = std::move(v);
      return v.has_value();
    }
    if (const auto* count_field = std::get_if<std::optional<std::int64_t> VllmLogFacts::*>(&figure.field)) {
      const auto v = integer_after(s, figure.after, *at);
      if (!v || !plausible(*v)) return false;
      f_.*(*count_field) = v;
      return true;
    }
    const std::optional<double> v = figure.kind == detail::FigureKind::kGib ? gib_after(s, figure.after, *at)
                                                                            : number_after(s, figure.after, *at);
    if (!v || !plausible(figure, *v)) return false;
    if (const auto* oom_field = std::get_if<std::optional<double> LoggedOutOfMemory::*>(&figure.field)) {
      if (!f_.out_of_memory) f_.out_of_memory = LoggedOutOfMemory{};
      (*f_.out_of_memory).*(*oom_field) = v;
      return true;
    }
    std::optional<double>& slot = f_.*std::get<std::optional<double> VllmLogFacts::*>(figure.field);
    switch (figure.keep) {
      case detail::Keep::kLast: slot = v; break;
      case detail::Keep::kMax: keep_max(slot, v); break;
      case detail::Keep::kMin: keep_min(slot, v); break;
    }
    return true;
  }

  void apply(const detail::LogRule& rule, std::string_view s) {
    for (const auto& t : rule.when) {
      if (!contains(s, t)) return;
    }
    if (!rule.when_any.empty() && !contains_any(s, rule.when_any)) return;
    if (contains_any(s, rule.unless)) return;
    const bool oom = std::find(rule.marks.begin(), rule.marks.end(), detail::LogMark::kOutOfMemory) != rule.marks.end();
    if (oom && !f_.out_of_memory) f_.out_of_memory = LoggedOutOfMemory{};
    bool any = false;
    for (const auto& figure : rule.figures) {
      const bool got = read(figure, s);
      any = any || got;
      if (got && figure.counts) ++figures_;
    }
    if (rule.marks_need_a_figure && !any) return;
    for (const detail::LogMark mark : rule.marks) this->mark(mark);
  }

  void mark(detail::LogMark mark) {
    switch (mark) {
      case detail::LogMark::kV0Engine: f_.v0_engine = true; break;
      case detail::LogMark::kKvAllocated: kv_allocated_ = true; break;
      case detail::LogMark::kCounts: ++figures_; break;
      case detail::LogMark::kError: line_marks_.error = true; break;
      case detail::LogMark::kKvCheckError: kv_check_error_ = true; break;
      case detail::LogMark::kKvCheckInTraceback: f_.kv_check_in_traceback = true; break;
      case detail::LogMark::kNoKvMemory: no_kv_memory_ = true; break;
      case detail::LogMark::kStartupFreeMemory:
        if (!f_.startup_free_gib) f_.startup_free_gib = 0.0;  // the error without its figures
        break;
      case detail::LogMark::kOutOfMemory: {
        LoggedOutOfMemory& oom = *f_.out_of_memory;
        if (oom.capacity_gib) f_.total_gpu_gib = oom.capacity_gib;
        if (oom.phase.empty()) oom.phase = phase_from_frames();
        break;
      }
      case detail::LogMark::kEngineFailed: engine_failed_ = true; break;
    }
  }

  // The frames of the latest traceback (for the phase of an out-of-memory error).
  void traceback_frames(std::string_view s) {
    if (contains(s, w_.traceback_start)) frames_.clear();
    if (contains(s, w_.traceback_frame) && frames_.size() < 400) frames_.emplace_back(s);
  }

  void first_error_line(std::string_view s, const std::string& raw) {
    const bool error_level = contains_any(raw, w_.error_levels);
    if ((line_marks_.error || (error_level && contains_any(s, w_.error_texts))) && !f_.first_error) {
      f_.first_error = std::string(s.substr(0, w_.first_error_bytes));
    }
  }

  // Which part of startup a traceback ran in, innermost recognised frame first.
  std::string phase_from_frames() const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      for (const auto& p : w_.phases) {
        if (contains(*it, p.function)) return p.phase;
      }
    }
    return "";
  }

  struct LineMarks {
    bool error = false;
  };
  VllmLogFacts& f_;
  const detail::LogWordings& w_;
  std::set<std::string> workers_;
  std::string worker_, scratch_;  // per-line buffers, reused
  std::vector<std::string> frames_;
  std::size_t figures_ = 0;
  LineMarks line_marks_;
  bool kv_allocated_ = false, kv_check_error_ = false, no_kv_memory_ = false, engine_failed_ = false;
};

}  // namespace

VllmLogFacts read_vllm_log(std::istream& in, const std::string& source, const VllmLogWordings& wordings) {
  VllmLogFacts facts;
  facts.source = source;
  FactReader reader(facts, wordings.rules());
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

VllmLogFacts read_vllm_log_file(const std::string& path, const VllmLogWordings& wordings) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(fmt::format("{}: cannot be read", path));
  if (std::filesystem::is_directory(status)) throw InputError(fmt::format("{}: is a directory, not a log", path));
  // A FIFO or a device could block or never end: only regular files (standard input is read_vllm_log's).
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError(fmt::format("{}: not a regular file (a FIFO, socket or device); pipe it to `diagnose -`", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot be read", path));
  return read_vllm_log(in, path, wordings);
}

}  // namespace gpubudget
