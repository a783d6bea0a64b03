// The wordings of vLLM's startup logs as loaded from configs/vllm-log-wordings.json (internal to
// src/log): the rules the fact reader applies to each line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gpubudget/vllm_log.h"

namespace gpubudget::detail {

enum class LogStage { kSettings, kMemory, kErrors };
enum class FigureKind { kGib, kNumber, kInteger, kVersion };
enum class Keep { kLast, kMax, kMin };

// Where a figure goes: a number, a count or a text of VllmLogFacts, or a number of its
// LoggedOutOfMemory.
using LogField = std::variant<std::optional<double> VllmLogFacts::*, std::optional<std::int64_t> VllmLogFacts::*,
                              std::optional<std::string> VllmLogFacts::*, std::optional<double> LoggedOutOfMemory::*>;

struct LogFigure {
  LogField field;
  std::vector<std::string> from;  // texts found in turn; the search for `after` starts at the last
  std::string after;
  FigureKind kind = FigureKind::kNumber;
  Keep keep = Keep::kLast;
  bool counts = false;  // a memory figure (VllmLogFacts::memory_lines)
};

// What a line says when it matches.
enum class LogMark { kV0Engine, kKvAllocated, kCounts, kError, kKvCheckError, kKvCheckInTraceback, kNoKvMemory,
                     kStartupFreeMemory, kOutOfMemory, kEngineFailed };

struct LogRule {
  LogStage stage = LogStage::kSettings;
  std::vector<std::string> when, when_any, unless;
  std::vector<LogMark> marks;
  bool marks_need_a_figure = false;  // the marks apply only when a figure was read
  std::vector<LogFigure> figures;
};

struct SettingsLine {
  std::string marker;
  bool dict_syntax = false;  // Python dict ('key': value) rather than key=value
  std::string length_key;
};

struct TracebackPhase {
  std::string function, phase;
};

struct LogWordings {
  std::vector<std::string> settings_gate, memory_gate, errors_gate;
  std::vector<SettingsLine> settings_lines;
  std::string block_size_marker, backend_before, backend_after, used_marker;
  std::vector<std::string> used_suffixes, backend_prefixes_dropped;
  std::vector<LogRule> rules;
  std::vector<std::string> error_levels, error_texts;
  std::size_t first_error_bytes = 600;
  std::string traceback_start, traceback_frame;
  std::vector<TracebackPhase> phases;
};

// Parses the wordings file; InputError naming the file, field and value when it is malformed.
LogWordings parse_log_wordings(const std::string& text, const std::string& path);

}  // namespace gpubudget::detail
