// Log-line normalisation: ANSI escapes, container and timestamp prefixes, worker tags, level,
// timestamp and source location, in the forms vLLM and common runtimes print them.
#include <cctype>
#include <string>
#include <string_view>

#include "gpubudget/vllm_log.h"
#include "log/log_text.h"

namespace gpubudget {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

std::string without_ansi(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
      continue;
    }
    out.push_back(line[i]);
  }
  return out;
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
}

// "2025-11-30T10:00:00.123456Z", "2025-11-30 10:00:00,123" style leading timestamps.
bool strip_iso_timestamp(std::string_view& s) {
  if (s.size() < 10 || !digit(s[0]) || !digit(s[3]) || s[4] != '-' || s[7] != '-') return false;
  std::size_t i = 10;
  if (i < s.size() && (s[i] == 'T' || s[i] == ' ') && i + 1 < s.size() && digit(s[i + 1])) {
    ++i;
    while (i < s.size() && (digit(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == ',' || s[i] == 'Z' || s[i] == '+')) ++i;
  }
  s.remove_prefix(i);
  return true;
}

// "vllm-1  | " (docker compose): a short name, spaces, a bar.
bool strip_container_name(std::string_view& s) {
  const auto bar = s.find(" | ");
  if (bar == std::string_view::npos || bar > 40) return false;
  for (std::size_t i = 0; i < bar; ++i) {
    const char c = s[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ' ')) return false;
  }
  s.remove_prefix(bar + 3);
  return true;
}

// "(EngineCore_DP0 pid=208987)", "(VllmWorker TP3 pid=1)", "(RayWorkerWrapper pid=1, ip=10.0.0.1)".
bool strip_worker(std::string_view& s, std::string* worker) {
  if (s.empty() || s.front() != '(') return false;
  const auto close = s.find(')');
  if (close == std::string_view::npos || close > 120) return false;
  const std::string_view inside = s.substr(1, close - 1);
  const auto pid = inside.find("pid=");
  if (pid == std::string_view::npos) return false;
  std::string_view name = inside.substr(0, pid);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  if (worker) *worker = std::string(name);
  s.remove_prefix(close + 1);
  return true;
}

bool strip_level(std::string_view& s) {
  for (const std::string_view level : {"INFO", "DEBUG", "WARNING", "WARN", "ERROR", "CRITICAL"}) {
    if (s.substr(0, level.size()) == level && s.size() > level.size() &&
        (s[level.size()] == ' ' || s[level.size()] == ':')) {
      s.remove_prefix(level.size() + 1);
      return true;
    }
  }
  return false;
}

// "02-20 22:01:10" or "02-20 22:01:10.123".
bool strip_short_timestamp(std::string_view& s) {
  if (s.size() < 14 || !digit(s[0]) || !digit(s[1]) || s[2] != '-' || s[5] != ' ' || s[8] != ':') return false;
  std::size_t i = 14;
  while (i < s.size() && (digit(s[i]) || s[i] == '.')) ++i;
  s.remove_prefix(i);
  return true;
}

// "[core.py:1036]" or V0's "core.py:1036]".
bool strip_location(std::string_view& s) {
  const auto close = s.find("] ");
  if (close == std::string_view::npos || close > 80) return false;
  const std::string_view loc = s.substr(0, close);
  const auto py = loc.find(".py:");
  if (py == std::string_view::npos) return false;
  for (const char c : loc) {
    if (c == ' ') return false;
  }
  s.remove_prefix(close + 2);
  return true;
}

}  // namespace

std::string strip_log_prefix(const std::string& raw, std::string* worker) {
  std::string scratch;
  return std::string(detail::strip_log_prefix_view(raw, scratch, worker));
}

namespace detail {

std::string_view strip_log_prefix_view(const std::string& raw, std::string& scratch, std::string* worker) {
  std::string_view s = raw;
  if (raw.find('\x1b') != std::string::npos) {
    scratch = without_ansi(raw);
    s = scratch;
  }
  if (worker) worker->clear();
  for (int guard = 0; guard < 8; ++guard) {
    skip_spaces(s);
    if (strip_iso_timestamp(s) || strip_container_name(s) || strip_worker(s, worker) || strip_level(s) ||
        strip_short_timestamp(s) || strip_location(s)) {
      continue;
    }
    break;
  }
  return s;
}

}  // namespace detail

}  // namespace gpubudget
