#include "log/log_text.h"

#include <cctype>
#include <cmath>
#include <string>

#include "core/decimal_text.h"

namespace gpubudget::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Parses "[-]d[,ddd]*[.ddd][e[+-]dd]" at `pos`; `end` receives the position after the number. An
// exponent is read (vLLM never prints one, but a figure such as "1e30" must not read as 1).
std::optional<double> parse_number(std::string_view s, std::size_t pos, std::size_t* end) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '(')) ++pos;
  std::string digits;
  if (pos < s.size() && s[pos] == '-') digits.push_back(s[pos++]);
  bool any = false;
  bool dot = false;
  for (; pos < s.size() && digits.size() < 40; ++pos) {
    const char c = s[pos];
    if (is_digit(c)) {
      digits.push_back(c);
      any = true;
    } else if (c == ',' && any && !dot && pos + 3 < s.size() && is_digit(s[pos + 1]) && is_digit(s[pos + 2]) &&
               is_digit(s[pos + 3]) && (pos + 4 >= s.size() || !is_digit(s[pos + 4]))) {
      continue;  // thousands separator: a comma and exactly three digits
    } else if (c == '.' && !dot && pos + 1 < s.size() && is_digit(s[pos + 1])) {
      digits.push_back(c);
      dot = true;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  if (pos + 1 < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    std::size_t e = pos + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    if (e < s.size() && is_digit(s[e])) {
      digits.push_back('e');
      for (std::size_t i = pos + 1; i < s.size() && (i == pos + 1 || is_digit(s[i])) && digits.size() < 48; ++i) {
        digits.push_back(s[i]);
        pos = i + 1;
      }
    }
  }
  if (end) *end = pos;
  return parse_decimal(digits);
}

}  // namespace

std::optional<double> number_after(std::string_view line, std::string_view key, std::size_t from) {
  const auto at = line.find(key, from);
  if (at == std::string_view::npos) return std::nullopt;
  return parse_number(line, at + key.size(), nullptr);
}

std::optional<std::int64_t> integer_after(std::string_view line, std::string_view key, std::size_t from) {
  const auto v = number_after(line, key, from);
  // The range first: converting a double beyond int64 is undefined.
  if (!v || *v > 9.0e15 || *v < -9.0e15 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

std::optional<double> gib_after(std::string_view line, std::string_view key, std::size_t from) {
  const auto at = line.find(key, from);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t end = 0;
  const auto v = parse_number(line, at + key.size(), &end);
  if (!v) return std::nullopt;
  while (end < line.size() && line[end] == ' ') ++end;
  const std::string_view unit = line.substr(end, 3);
  if (unit == "MiB" || unit.substr(0, 2) == "MB") return *v / 1024.0;
  if (unit == "KiB" || unit.substr(0, 2) == "KB") return *v / (1024.0 * 1024.0);
  return *v;  // GiB, GB (V0 prints GiB figures as "GB"), or no unit
}

namespace {

std::optional<std::string> value_from(std::string_view line, std::size_t pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  std::string out;
  const bool quoted = pos < line.size() && (line[pos] == '\'' || line[pos] == '"');
  const char quote = quoted ? line[pos++] : '\0';
  for (; pos < line.size(); ++pos) {
    const char c = line[pos];
    if (quoted ? c == quote : (c == ',' || c == ')' || c == '}')) break;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.empty()) return std::nullopt;
  return out;
}

// `key` must start the line or follow a separator, so "max_model_len=" does not match
// "original_max_model_len=".
std::size_t find_key(std::string_view line, std::string_view key) {
  for (std::size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at == 0) return at;
    const char before = line[at - 1];
    if (before == ' ' || before == ',' || before == '{' || before == '(' || before == '\'' || before == '"') return at;
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<std::string> config_value(std::string_view line, std::string_view key) {
  std::string k(key);
  k.push_back('=');
  const auto at = find_key(line, k);
  if (at == std::string_view::npos) return std::nullopt;
  return value_from(line, at + k.size());
}

std::optional<std::string> dict_value(std::string_view line, std::string_view key) {
  std::string k;
  k.reserve(key.size() + 3);
  k.push_back('\'');
  k.append(key);
  k.append("':");
  const auto at = line.find(k);
  if (at == std::string_view::npos) return std::nullopt;
  return value_from(line, at + k.size());
}

}  // namespace gpubudget::detail
